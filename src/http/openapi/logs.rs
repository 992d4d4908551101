//! `/logs`: trigger logs, the executor's log of a run, and killing a run.

use super::shapes::LogView;
use super::{paging, within, ApiError, ApiResult, ApiUser, ErrorBody, Id, Listing, QueryParams};
use crate::domain::protocol::SUCCESS_CODE;
use crate::service::logs::{self, LogLines, LogQuery};
use crate::service::ServiceContext;
use crate::service::ServiceError;
use axum::extract::State;
use axum::Json;
use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

/// A log's state, as the console's status filter names them.
#[derive(Debug, Clone, Copy, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum LogStatus {
    #[default]
    All,
    /// Triggered and handled successfully.
    Success,
    /// Trigger or handling failed.
    Failure,
    /// Triggered, no result yet.
    Running,
}

impl LogStatus {
    /// The console's `logStatus` code.
    fn code(self) -> i32 {
        match self {
            LogStatus::All => 0,
            LogStatus::Success => 1,
            LogStatus::Failure => 2,
            LogStatus::Running => 3,
        }
    }
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LogListQuery {
    /// Executor group id; 0 or absent = every group (administrators only, like the console).
    #[param(minimum = 0)]
    job_group: Option<i32>,
    /// Only this job's logs (its group must be permitted too).
    #[param(minimum = 0)]
    job_id: Option<i32>,
    status: Option<LogStatus>,
    /// Triggered at or after: `yyyy-MM-dd HH:mm:ss` in the admin's time zone, or ISO 8601 with an offset.
    #[param(
        pattern = r"^(?:\d{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)|(?:\d{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)(?: (?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d|T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d))$"
    )]
    from: Option<String>,
    /// Triggered at or before: `yyyy-MM-dd HH:mm:ss` in the admin's time zone, or ISO 8601 with an offset.
    #[param(
        pattern = r"^(?:\d{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)|(?:\d{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)(?: (?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d|T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d))$"
    )]
    to: Option<String>,
    /// Rows to skip (default 0).
    #[param(minimum = 0)]
    offset: Option<i64>,
    /// Rows to answer, 1 to 1000 (default 20).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<i64>,
}

/// `yyyy-MM-dd HH:mm:ss` in the admin's time zone, or an ISO 8601 date-time with its offset (as the API
/// writes times), taken to the admin's zone.
fn wall_clock(
    services: &ServiceContext,
    name: &str,
    value: Option<String>,
) -> ApiResult<Option<NaiveDateTime>> {
    value
        .map(|text| {
            let text = text.trim();
            NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S")
                .ok()
                .or_else(|| {
                    chrono::DateTime::parse_from_rfc3339(text)
                        .ok()
                        .map(|t| services.db.datetime(t.timestamp_millis()))
                })
                .ok_or_else(|| {
                    ApiError::BadRequest(format!(
                        "{name} must be yyyy-MM-dd HH:mm:ss or ISO 8601 with an offset, not {text:?}"
                    ))
                })
        })
        .transpose()
}

/// Lists trigger logs, newest first.
#[utoipa::path(operation_id = "listLogs", get, path = "/logs", tag = "logs", params(LogListQuery),
    responses((status = 200, body = Listing<LogView>), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn list(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    QueryParams(query): QueryParams<LogListQuery>,
) -> ApiResult<Json<Listing<LogView>>> {
    let (offset, limit) = paging(query.offset, query.limit)?;
    within(&services, "jobGroup", query.job_group, 0..=i32::MAX)?;
    within(&services, "jobId", query.job_id, 0..=i32::MAX)?;
    let filter = LogQuery {
        job_group: query.job_group.unwrap_or(0),
        job_id: query.job_id.unwrap_or(0),
        status: query.status.unwrap_or_default().code(),
        trigger_time_from: wall_clock(&services, "from", query.from)?,
        trigger_time_to: wall_clock(&services, "to", query.to)?,
    };
    let (found, total) = logs::list(&services, &user, filter, offset, limit).await?;
    let zone = services.db.zone();
    Ok(Json(Listing { total, items: found.into_iter().map(|l| LogView::of(l, zone)).collect() }))
}

/// One trigger log.
#[utoipa::path(operation_id = "getLog", get, path = "/logs/{id}", tag = "logs", params(("id" = i64, Path, description = "log id", minimum = 1)),
    responses((status = 200, body = LogView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i64>,
) -> ApiResult<Json<LogView>> {
    let log = logs::get(&services, &user, id).await?;
    Ok(Json(LogView::of(log, services.db.zone())))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RollingQuery {
    /// First line to read (default 1); ask again from `toLineNum + 1` until `end`.
    #[param(minimum = 1)]
    from_line: Option<i32>,
}

/// The executor's log of a run, read from the executor that ran it (plain text, not HTML). A run that never
/// reached an executor, or whose trigger failed, has an empty, ended log; one not triggered yet an empty log
/// that goes on.
#[utoipa::path(operation_id = "rollingLog", get, path = "/logs/{id}/rolling", tag = "logs", params(("id" = i64, Path, description = "log id", minimum = 1), RollingQuery),
    responses((status = 200, body = LogLines), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 502, body = ErrorBody, description = "the executor failed or is unreachable")))]
pub async fn rolling(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i64>,
    QueryParams(query): QueryParams<RollingQuery>,
) -> ApiResult<Json<LogLines>> {
    let from_line = query.from_line.unwrap_or(1);
    if from_line < 1 {
        return Err(ApiError::BadRequest(services.i18n.format("system_param_invalid", &[&"fromLine"])));
    }
    let log = logs::get(&services, &user, id).await?;
    if crate::domain::is_blank(log.executor_address.as_deref()) || log.trigger_code != SUCCESS_CODE {
        // Not triggered yet (code 0): nothing to read so far, ask again. A trigger that failed, or found no
        // executor: there is no log, and none will come.
        let end = log.trigger_code != 0;
        return Ok(Json(LogLines {
            from_line_num: from_line,
            to_line_num: from_line - 1,
            log_content: None,
            end,
        }));
    }
    let result = logs::rolling(&services, &user, id, from_line).await?;
    match result.content {
        Some(lines) if result.is_success() => Ok(Json(lines)),
        _ => Err(ServiceError::Executor(result.msg).into()),
    }
}

/// The executor's answer to a kill.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Killed {
    pub message: Option<String>,
}

/// Kills a run on its executor and records it as failed by hand.
#[utoipa::path(operation_id = "killLog", post, path = "/logs/{id}/kill", tag = "logs", params(("id" = i64, Path, description = "log id", minimum = 1)),
    responses((status = 200, body = Killed), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody, description = "the trigger failed: nothing runs"), (status = 502, body = ErrorBody, description = "the executor refused or is unreachable")))]
pub async fn kill(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i64>,
) -> ApiResult<Json<Killed>> {
    let message = logs::kill(&services, &user, id).await?;
    Ok(Json(Killed { message }))
}
