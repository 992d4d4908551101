//! The trigger log's endpoints (spec console 1.4), with the group permission checked everywhere.

use super::error::{ConsoleError, JsonError};
use super::params::Params;
use super::views::{JobView, LogView, Page};
use super::{changes_state, JsonResult, LoginUser, OrJson};
use crate::app::AppState;
use crate::domain::callback::{truncate_utf16, MAX_HANDLE_MSG_UTF16};
use crate::domain::html::escape;
use crate::domain::ReturnT;
use crate::executor::LogResult;
use crate::storage::{JobLog, LogFilter, LogStatusFilter};
use axum::extract::State;
use axum::routing::any;
use axum::{Json, Router};
use chrono::{Months, NaiveDateTime};
use serde::Serialize;

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

async fn jobs_by_group(State(state): State<AppState>, user: LoginUser, params: Params) -> JsonResult<Vec<JobView>> {
    let group: i32 = params.required("jobGroup").or_json(&state)?;
    user.ensure_access(&state, group).or_json(&state)?;
    let zone = state.db.zone();
    let jobs = state.db.jobs_by_group(group).await.or_json(&state)?;
    Ok(Json(ReturnT::with_content(jobs.into_iter().map(|j| JobView::new(j, zone)).collect())))
}

/// `yyyy-MM-dd HH:mm:ss - yyyy-MM-dd HH:mm:ss`; an unparsable side is not applied.
fn parse_filter_time(filter_time: Option<&str>) -> (Option<NaiveDateTime>, Option<NaiveDateTime>) {
    let Some((from, to)) = filter_time.and_then(|f| f.split_once(" - ")).filter(|(_, to)| !to.contains(" - ")) else {
        return (None, None);
    };
    let parse = |s: &str| NaiveDateTime::parse_from_str(s.trim(), "%Y-%m-%d %H:%M:%S").ok();
    (parse(from), parse(to))
}

async fn page_list(State(state): State<AppState>, user: LoginUser, params: Params) -> Result<Json<Page<LogView>>, JsonError> {
    let job_group: i32 = params.required("jobGroup").or_json(&state)?;
    let job_id: i32 = params.required("jobId").or_json(&state)?;
    let log_status: i32 = params.required("logStatus").or_json(&state)?;
    let start: i64 = params.number_or("start", 0).or_json(&state)?;
    let length: i64 = params.number_or("length", 10).or_json(&state)?;
    user.ensure_access(&state, job_group).or_json(&state)?;
    if job_id > 0 {
        // 2.4.2 drops the group filter for a job id: the job's own group must be permitted as well.
        if let Some(job) = state.db.load_job(job_id).await.or_json(&state)? {
            user.ensure_access(&state, job.job_group).or_json(&state)?;
        }
    }
    let (from, to) = parse_filter_time(params.string("filterTime").as_deref());
    let (from, to) = (from.map(|t| state.stored_time(t)), to.map(|t| state.stored_time(t)));
    let filter = LogFilter {
        job_group,
        job_id,
        permitted_groups: user.permitted_groups(),
        trigger_time_from: from,
        trigger_time_to: to,
        status: LogStatusFilter::from_code(log_status),
    };
    let (logs, total) = state.db.page_logs(&filter, start.max(0), length.max(0)).await.or_json(&state)?;
    let zone = state.db.zone();
    Ok(Json(Page::new(logs.into_iter().map(|l| LogView::new(l, zone)).collect(), total)))
}

/// The log of `param` if the user may see its group.
async fn permitted_log(state: &AppState, user: &LoginUser, id: i64) -> Result<Option<JobLog>, ConsoleError> {
    let Some(log) = state.db.load_log(id).await? else { return Ok(None) };
    user.ensure_access(state, log.job_group)?;
    Ok(Some(log))
}

/// The rolling log's answer: the executor's `isEnd` is sent to the page as `end`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct LogLines {
    from_line_num: i32,
    to_line_num: i32,
    log_content: Option<String>,
    end: bool,
}

async fn log_detail_cat(State(state): State<AppState>, user: LoginUser, params: Params) -> JsonResult<LogLines> {
    let log_id: i64 = params.required("logId").or_json(&state)?;
    let from_line: i32 = params.required("fromLineNum").or_json(&state)?;
    let Some(log) = permitted_log(&state, &user, log_id).await.or_json(&state)? else {
        return Ok(Json(ReturnT::fail(state.i18n.get("joblog_logid_unvalid"))));
    };
    let trigger_time = log.trigger_time.map(|t| state.db.zone().to_epoch_ms(t)).unwrap_or(0);
    let address = log.executor_address.clone().unwrap_or_default();
    let result = state.executors.log(&address, trigger_time, log.id, from_line).await;
    let content = result.content.map(|c: LogResult| LogLines {
        end: c.is_end || (c.from_line_num > c.to_line_num && log.handle_code > 0),
        from_line_num: c.from_line_num,
        to_line_num: c.to_line_num,
        log_content: c.log_content.map(|text| escape(&text)),
    });
    Ok(Json(ReturnT { code: result.code, msg: result.msg, content }))
}

async fn log_kill(State(state): State<AppState>, user: LoginUser, params: Params) -> JsonResult<String> {
    let i18n = &state.i18n;
    let id: i64 = params.required("id").or_json(&state)?;
    let Some(log) = permitted_log(&state, &user, id).await.or_json(&state)? else {
        return Ok(Json(ReturnT::fail(i18n.get("joblog_logid_unvalid"))));
    };
    if state.db.load_job(log.job_id).await.or_json(&state)?.is_none() {
        return Ok(Json(ReturnT::fail(i18n.get("jobinfo_glue_jobid_unvalid"))));
    }
    if log.trigger_code != 200 {
        return Ok(Json(ReturnT::fail(i18n.get("joblog_kill_log_limit"))));
    }
    let address = log.executor_address.clone().unwrap_or_default();
    let result = state.executors.kill(&address, log.job_id).await;
    if !result.is_success() {
        return Ok(Json(ReturnT { code: 500, msg: result.msg, content: None }));
    }
    let msg = format!("{}:{}", i18n.get("joblog_kill_log_byman"), result.msg.clone().unwrap_or_default());
    let msg = truncate_utf16(msg, MAX_HANDLE_MSG_UTF16);
    state.completer.finish(&log, 500, msg, false).await.or_json(&state)?;
    Ok(Json(ReturnT { code: 200, msg: None, content: result.msg }))
}

async fn clear_log(State(state): State<AppState>, user: LoginUser, params: Params) -> JsonResult<()> {
    let job_group: i32 = params.required("jobGroup").or_json(&state)?;
    let job_id: i32 = params.required("jobId").or_json(&state)?;
    let kind: i32 = params.required("type").or_json(&state)?;
    user.ensure_access(&state, job_group).or_json(&state)?;
    if job_id > 0 {
        if let Some(job) = state.db.load_job(job_id).await.or_json(&state)? {
            user.ensure_access(&state, job.job_group).or_json(&state)?;
        }
    }
    let now = state.db.zone().to_naive_exact(state.clock.now_ms());
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
        _ => return Ok(Json(ReturnT::fail(state.i18n.get("joblog_clean_type_unvalid")))),
    };
    // Non-admins asking for every group (0) clear only their own groups' logs.
    let groups: Vec<i32> = match (job_group, user.permitted_groups()) {
        (0, Some(groups)) => groups,
        _ => vec![job_group],
    };
    for group in groups {
        loop {
            let ids = state.db.find_clear_log_ids(group, job_id, before, keep, CLEAR_BATCH).await.or_json(&state)?;
            if ids.is_empty() {
                break;
            }
            state.db.delete_logs(&ids).await.or_json(&state)?;
        }
    }
    Ok(Json(ReturnT::success()))
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
