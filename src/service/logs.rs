//! Trigger-log operations (2.4.2: JobLogController): list, read, the executor's rolling log, and kill, with
//! the group permission checked on each.

use super::audit::{EventKind, Target};
use super::{LoginUser, ServiceContext, ServiceError};
use crate::domain::callback::{truncate_utf16, MAX_HANDLE_MSG_UTF16};
use crate::domain::ReturnT;
use crate::storage::{JobLog, LogFilter, LogStatusFilter};
use chrono::NaiveDateTime;
use serde::Serialize;

/// The log list's filters; `job_id` 0 means every job of `job_group`, `status` as the console's
/// `logStatus` (0 all, 1 success, 2 failure, 3 running). Times are wall-clock in the cron zone.
#[derive(Debug, Clone, Default)]
pub struct LogQuery {
    pub job_group: i32,
    pub job_id: i32,
    pub status: i32,
    pub trigger_time_from: Option<NaiveDateTime>,
    pub trigger_time_to: Option<NaiveDateTime>,
}

/// The logs of one page and the total. The group must be permitted, and so must the job's own group
/// when a job is named.
pub async fn list(
    state: &ServiceContext,
    user: &LoginUser,
    query: LogQuery,
    offset: i64,
    limit: i64,
) -> Result<(Vec<JobLog>, i64), ServiceError> {
    ensure_scope(state, user, query.job_group, query.job_id).await?;
    let filter = LogFilter {
        job_group: query.job_group,
        job_id: query.job_id,
        permitted_groups: user.permitted_groups(),
        trigger_time_from: query.trigger_time_from.map(|t| state.stored_time(t)),
        trigger_time_to: query.trigger_time_to.map(|t| state.stored_time(t)),
        status: LogStatusFilter::from_code(query.status),
    };
    Ok(state.db.page_logs(&filter, offset.max(0), limit.max(0)).await?)
}

/// The logs of a group, or of one job, are the user's to see or clear.
pub async fn ensure_scope(
    state: &ServiceContext,
    user: &LoginUser,
    job_group: i32,
    job_id: i32,
) -> Result<(), ServiceError> {
    user.ensure_access(state, job_group)?;
    if job_id > 0 {
        // 2.4.2 drops the group filter for a job id: the job's own group must be permitted as well.
        if let Some(job) = state.db.load_job(job_id).await? {
            user.ensure_access(state, job.job_group)?;
        }
    }
    Ok(())
}

/// The log of `id` if the user may see its group.
pub async fn get(state: &ServiceContext, user: &LoginUser, id: i64) -> Result<JobLog, ServiceError> {
    let Some(log) = state.db.load_log(id).await? else {
        return Err(ServiceError::NotFound(state.i18n.get("joblog_logid_unvalid").to_string()));
    };
    user.ensure_access(state, log.job_group)?;
    Ok(log)
}

/// Lines of the executor's log of one trigger, as the executor sent them.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogLines {
    pub from_line_num: i32,
    pub to_line_num: i32,
    pub log_content: Option<String>,
    /// No more lines will come: the executor says so, or the run is over and nothing new came.
    pub end: bool,
}

/// The executor's log of trigger `id` from line `from_line`, with the executor's own code and message.
pub async fn rolling(
    state: &ServiceContext,
    user: &LoginUser,
    id: i64,
    from_line: i32,
) -> Result<ReturnT<LogLines>, ServiceError> {
    let log = get(state, user, id).await?;
    let trigger_time = log.trigger_time.map(|t| state.db.zone().to_epoch_ms(t)).unwrap_or(0);
    let address = log.executor_address.clone().unwrap_or_default();
    let result = state.executors.log(&address, trigger_time, log.id, from_line).await;
    let content = result.content.map(|c| LogLines {
        end: c.is_end || (c.from_line_num > c.to_line_num && log.handle_code > 0),
        from_line_num: c.from_line_num,
        to_line_num: c.to_line_num,
        log_content: c.log_content,
    });
    Ok(ReturnT { code: result.code, msg: result.msg, content })
}

/// Asks the executor to kill the run of log `id` and records the kill as its result; returns the
/// executor's message.
pub async fn kill(state: &ServiceContext, user: &LoginUser, id: i64) -> Result<Option<String>, ServiceError> {
    let result = stop_run(state, user, id).await;
    let target = Target::new("log", id, None);
    state.audit.done(
        user,
        EventKind::LogKill,
        target,
        |msg| Some(serde_json::json!({ "executorMessage": { "before": null, "after": msg } })),
        result,
    )
}

async fn stop_run(state: &ServiceContext, user: &LoginUser, id: i64) -> Result<Option<String>, ServiceError> {
    let i18n = &state.i18n;
    let log = get(state, user, id).await?;
    if state.db.load_job(log.job_id).await?.is_none() {
        return Err(ServiceError::NotFound(i18n.get("jobinfo_glue_jobid_unvalid").to_string()));
    }
    if log.trigger_code != 200 {
        return Err(ServiceError::Conflict(i18n.get("joblog_kill_log_limit").to_string()));
    }
    let address = log.executor_address.clone().unwrap_or_default();
    let result = state.executors.kill(&address, log.job_id).await;
    if !result.is_success() {
        return Err(ServiceError::Executor(result.msg));
    }
    let msg = format!("{}:{}", i18n.get("joblog_kill_log_byman"), result.msg.clone().unwrap_or_default());
    let msg = truncate_utf16(msg, MAX_HANDLE_MSG_UTF16);
    state.completer.finish(&log, 500, msg, false).await?;
    Ok(result.msg)
}
