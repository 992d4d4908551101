//! The trigger log's endpoints (2.4.2: JobLogController), with the group permission checked everywhere; the
//! rules of list, detail and kill in [`crate::service::logs`], shared with the REST API.

use super::error::ConsoleError;
use super::params::Params;
use super::views::{JobView, LogView, Page};
use super::{changes_state, JsonResult, LoginUser};
use crate::domain::html::escape;
use crate::domain::ReturnT;
use crate::http::state::AppState;
use crate::service::audit::{EventKind, Target};
use crate::service::logs::{self, LogLines, LogQuery};
use crate::service::ServiceContext;
use crate::service::ServiceError;
use axum::extract::State;
use axum::routing::any;
use axum::{Json, Router};
use chrono::{Months, NaiveDateTime};
use serde_json::json;

/// Deletion batches, so the log table is never locked for long.
const CLEAR_BATCH: i64 = 1000;

pub fn routes() -> Router<AppState> {
    let mut router = Router::new();
    for (path, handler) in [
        ("/joblog/getJobsByGroup", any(jobs_by_group)),
        ("/joblog/pageList", any(page_list)),
        ("/joblog/logDetailCat", any(log_detail_cat)),
        ("/joblog/logKill", changes_state(log_kill)),
        ("/joblog/clearLog", changes_state(clear_log)),
    ] {
        router = router.route(path, handler.clone()).route(&format!("{path}/"), handler);
    }
    router
}

async fn jobs_by_group(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> JsonResult<Vec<JobView>> {
    let group: i32 = params.required("jobGroup")?;
    user.ensure_access(&services, group)?;
    let zone = services.db.zone();
    let jobs = services.db.jobs_by_group(group).await?;
    Ok(Json(ReturnT::with_content(jobs.into_iter().map(|j| JobView::new(j, zone)).collect())))
}

/// `yyyy-MM-dd HH:mm:ss - yyyy-MM-dd HH:mm:ss`; an unparsable side is not applied.
pub(super) fn parse_filter_time(filter_time: Option<&str>) -> (Option<NaiveDateTime>, Option<NaiveDateTime>) {
    let Some((from, to)) =
        filter_time.and_then(|f| f.split_once(" - ")).filter(|(_, to)| !to.contains(" - "))
    else {
        return (None, None);
    };
    let parse = |s: &str| NaiveDateTime::parse_from_str(s.trim(), "%Y-%m-%d %H:%M:%S").ok();
    (parse(from), parse(to))
}

async fn page_list(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> Result<Json<Page<LogView>>, ConsoleError> {
    let job_group: i32 = params.required("jobGroup")?;
    let job_id: i32 = params.required("jobId")?;
    let status: i32 = params.required("logStatus")?;
    let start: i64 = params.number_or("start", 0)?;
    let length: i64 = params.number_or("length", 10)?;
    let (trigger_time_from, trigger_time_to) = parse_filter_time(params.string("filterTime").as_deref());
    let query = LogQuery { job_group, job_id, status, trigger_time_from, trigger_time_to };
    let (logs, total) = logs::list(&services, &user, query, start, length).await?;
    let zone = services.db.zone();
    Ok(Json(Page::new(logs.into_iter().map(|l| LogView::new(l, zone)).collect(), total)))
}

/// The log page inserts the lines as HTML: they are escaped here.
async fn log_detail_cat(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> JsonResult<LogLines> {
    let log_id: i64 = params.required("logId")?;
    let from_line: i32 = params.required("fromLineNum")?;
    let mut result = logs::rolling(&services, &user, log_id, from_line).await?;
    if let Some(lines) = &mut result.content {
        lines.log_content = lines.log_content.as_deref().map(escape);
    }
    Ok(Json(result))
}

/// The executor's message is the content.
async fn log_kill(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> JsonResult<String> {
    let msg = logs::kill(&services, &user, params.required("id")?).await?;
    Ok(Json(ReturnT { code: 200, msg: None, content: msg }))
}

async fn clear_log(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> JsonResult<()> {
    let job_group: i32 = params.required("jobGroup")?;
    let job_id: i32 = params.required("jobId")?;
    let kind: i32 = params.required("type")?;
    let target = Target::new("logs", json!({ "jobGroup": job_group, "jobId": job_id }), None);
    let result = clear(&services, &user, job_group, job_id, kind).await;
    let deleted = |count: &u64| {
        Some(
            json!({ "type": { "before": null, "after": kind }, "deleted": { "before": null, "after": count } }),
        )
    };
    services.audit.done(&user, EventKind::LogClear, target, deleted, result)?;
    Ok(Json(ReturnT::success()))
}

/// Deletes the logs `kind` names; returns how many.
async fn clear(
    services: &ServiceContext,
    user: &LoginUser,
    job_group: i32,
    job_id: i32,
    kind: i32,
) -> Result<u64, ServiceError> {
    logs::ensure_scope(services, user, job_group, job_id).await?;
    let now = services.db.zone().to_naive_exact(services.clock.now_ms());
    let months_ago = |m: u32| now.checked_sub_months(Months::new(m));
    let (before, keep) = match kind {
        1 => (months_ago(1), 0),
        2 => (months_ago(3), 0),
        3 => (months_ago(6), 0),
        4 => (months_ago(12), 0),
        5 => (None, 1_000),
        6 => (None, 10_000),
        7 => (None, 30_000),
        8 => (None, 100_000),
        9 => (None, 0),
        _ => return Err(ServiceError::Invalid(services.i18n.get("joblog_clean_type_unvalid").to_string())),
    };
    // Non-admins asking for every group (0) clear only their own groups' logs.
    let groups: Vec<i32> = match (job_group, user.permitted_groups()) {
        (0, Some(groups)) => groups,
        _ => vec![job_group],
    };
    let mut deleted = 0;
    for group in groups {
        loop {
            let ids = services.db.find_clear_log_ids(group, job_id, before, keep, CLEAR_BATCH).await?;
            if ids.is_empty() {
                break;
            }
            deleted += services.db.delete_logs(&ids).await?;
        }
    }
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_time_needs_both_sides_separated_exactly() {
        let (from, to) = parse_filter_time(Some("2024-01-01 00:00:00 - 2024-01-01 23:59:59"));
        assert_eq!(from.unwrap().to_string(), "2024-01-01 00:00:00");
        assert_eq!(to.unwrap().to_string(), "2024-01-01 23:59:59");
        assert_eq!(parse_filter_time(Some("2024-01-01 00:00:00")), (None, None));
        let (from, to) = parse_filter_time(Some("junk - 2024-01-01 23:59:59"));
        assert!(from.is_none() && to.is_some());
    }
}
