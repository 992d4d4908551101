//! `/jobs`: list, read, create, change, delete, start, stop, run once, and preview fire times.

use super::shapes::JobView;
use super::{
    etag, location, paging, within, ApiError, ApiResult, ApiUser, ErrorBody, Id, JsonBody, Listing,
    QueryParams,
};
use crate::config::Config;
use crate::domain::{LogIdSink, TriggerType};
use crate::service::jobs::{self, JobForm, JobQuery};
use crate::service::ServiceContext;
use axum::extract::State;
use axum::http::header::{ETAG, IF_MATCH};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Longest fire-time preview.
const MAX_PREVIEW: usize = 100;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct JobListQuery {
    /// Executor group id; 0 or absent = every permitted group.
    #[param(minimum = 0)]
    job_group: Option<i32>,
    /// 0 stopped, 1 running; -1 or absent = both.
    #[param(minimum = -1, maximum = 1)]
    trigger_status: Option<i32>,
    /// Description contains this.
    job_desc: Option<String>,
    /// JobHandler contains this.
    executor_handler: Option<String>,
    /// Author contains this.
    author: Option<String>,
    /// Rows to skip (default 0).
    #[param(minimum = 0)]
    offset: Option<i64>,
    /// Rows to answer, 1 to 1000 (default 20).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<i64>,
}

/// Lists jobs of the permitted groups.
#[utoipa::path(operation_id = "listJobs", get, path = "/jobs", tag = "jobs", params(JobListQuery),
    responses((status = 200, body = Listing<JobView>), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn list(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    QueryParams(query): QueryParams<JobListQuery>,
) -> ApiResult<Json<Listing<JobView>>> {
    let (offset, limit) = paging(query.offset, query.limit)?;
    within(&services, "jobGroup", query.job_group, 0..=i32::MAX)?;
    within(&services, "triggerStatus", query.trigger_status, -1..=1)?;
    let filter = JobQuery {
        job_group: query.job_group.unwrap_or(0),
        trigger_status: query.trigger_status.unwrap_or(-1),
        job_desc: query.job_desc,
        executor_handler: query.executor_handler,
        author: query.author,
    };
    let (found, total) = jobs::list(&services, &user, filter, offset, limit).await?;
    let zone = services.db.zone();
    Ok(Json(Listing { total, items: found.into_iter().map(|j| JobView::of(j, zone)).collect() }))
}

/// Creates a job, stopped. Same rules and messages as the console's job form.
#[utoipa::path(operation_id = "createJob", post, path = "/jobs", tag = "jobs", request_body = JobForm,
    responses((status = 201, body = JobView, headers(("Location" = String, description = "the new job's URL"), ("ETag" = String))), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "the executor group or a child job named does not exist"), (status = 415, body = ErrorBody)))]
pub async fn create(
    State(services): State<ServiceContext>,
    State(config): State<Arc<Config>>,
    ApiUser(user): ApiUser,
    JsonBody(form): JsonBody<JobForm>,
) -> ApiResult<impl IntoResponse> {
    let id = jobs::add(&services, &user, form).await?;
    let job = JobView::of(jobs::get(&services, &user, id).await?, services.db.zone());
    Ok((StatusCode::CREATED, location(&config, &format!("/jobs/{id}")), [(ETAG, etag(&job))], Json(job)))
}

/// One job.
#[utoipa::path(operation_id = "getJob", get, path = "/jobs/{id}", tag = "jobs", params(("id" = i32, Path, description = "job id", minimum = 1)),
    responses((status = 200, body = JobView, headers(("ETag" = String, description = "send it back in If-Match to update only this version"))), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i32>,
) -> ApiResult<impl IntoResponse> {
    let job = JobView::of(jobs::get(&services, &user, id).await?, services.db.zone());
    Ok(([(ETAG, etag(&job))], Json(job)))
}

/// Replaces a job's settings (all of the form's fields; the GLUE type and source stay as they are).
/// A running job whose schedule changes is rescheduled.
#[utoipa::path(operation_id = "updateJob", put, path = "/jobs/{id}", tag = "jobs", request_body = JobForm,
    params(("id" = i32, Path, description = "job id", minimum = 1), ("If-Match" = Option<String>, Header, description = "the ETag of the job as read; another one is a 412")),
    responses((status = 200, body = JobView, headers(("ETag" = String))), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "the stored job is a BEAN job and the form names no JobHandler"),
        (status = 412, body = ErrorBody, description = "the job changed since it was read"), (status = 415, body = ErrorBody)))]
pub async fn update(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i32>,
    headers: HeaderMap,
    JsonBody(form): JsonBody<JobForm>,
) -> ApiResult<impl IntoResponse> {
    // Two people editing one job: the second save, made on a stale read, is refused instead of undoing the
    // first. Checked just before the write, which leaves only the moment between the two.
    if let Some(expected) = headers.get(IF_MATCH).map(|v| v.to_str().unwrap_or_default()) {
        let current = etag(&JobView::of(jobs::get(&services, &user, id).await?, services.db.zone()));
        if expected.trim() != "*" && !expected.split(',').any(|tag| tag.trim() == current) {
            return Err(ApiError::PreconditionFailed);
        }
    }
    let job = JobView::of(jobs::update(&services, &user, JobForm { id, ..form }).await?, services.db.zone());
    Ok(([(ETAG, etag(&job))], Json(job)))
}

/// Deletes a job with its trigger logs and GLUE history.
#[utoipa::path(operation_id = "deleteJob", delete, path = "/jobs/{id}", tag = "jobs", params(("id" = i32, Path, description = "job id", minimum = 1)),
    responses((status = 204, description = "deleted"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn delete(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i32>,
) -> ApiResult<StatusCode> {
    if jobs::remove(&services, &user, id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(jobs::unknown_job(&services).into())
    }
}

/// Schedules a job: it fires from five seconds on.
#[utoipa::path(operation_id = "startJob", post, path = "/jobs/{id}/start", tag = "jobs", params(("id" = i32, Path, description = "job id", minimum = 1)),
    responses((status = 200, body = JobView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody, description = "the job has no schedule")))]
pub async fn start(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i32>,
) -> ApiResult<Json<JobView>> {
    let job = jobs::start(&services, &user, id).await?;
    Ok(Json(JobView::of(job, services.db.zone())))
}

/// Unschedules a job.
#[utoipa::path(operation_id = "stopJob", post, path = "/jobs/{id}/stop", tag = "jobs", params(("id" = i32, Path, description = "job id", minimum = 1)),
    responses((status = 200, body = JobView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn stop(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i32>,
) -> ApiResult<Json<JobView>> {
    let job = jobs::stop(&services, &user, id).await?;
    Ok(Json(JobView::of(job, services.db.zone())))
}

/// A manual run's options.
// Both fields are optional as Options are: a container's `#[serde(default)]` would only add `default: null`.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TriggerBody {
    /// The parameter of this run; absent = the job's own.
    executor_param: Option<String>,
    /// Comma-separated executor addresses of the job's group to run on; absent = the group's routing.
    address_list: Option<String>,
}

/// How long a trigger's answer waits for its log row (written first thing in the trigger pipeline).
const LOG_ID_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The run a trigger queued.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Triggered {
    /// Its trigger log (`GET /logs/{logId}`); null when the run was not queued in time (the trigger queue
    /// is full, or the job was deleted meanwhile).
    pub log_id: Option<i64>,
}

/// Runs a job once, now, with the trigger type API. The run is queued; its log is at `Location`.
#[utoipa::path(operation_id = "triggerJob", post, path = "/jobs/{id}/trigger", tag = "jobs", request_body = TriggerBody, params(("id" = i32, Path, description = "job id", minimum = 1)),
    responses((status = 202, body = Triggered, description = "queued", headers(("Location" = String, description = "the run's trigger log"))), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)))]
pub async fn trigger(
    State(services): State<ServiceContext>,
    State(config): State<Arc<Config>>,
    ApiUser(user): ApiUser,
    Id(id): Id<i32>,
    JsonBody(body): JsonBody<TriggerBody>,
) -> ApiResult<Response> {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let sender = std::sync::Mutex::new(Some(sender));
    // A broadcast writes one row per shard: the first one answers.
    let sink = LogIdSink(std::sync::Arc::new(move |log_id| {
        if let Some(sender) = sender.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = sender.send(log_id);
        }
    }));
    jobs::trigger(&services, &user, id, body.executor_param, body.address_list, TriggerType::Api, Some(sink))
        .await?;
    let log_id = tokio::time::timeout(LOG_ID_WAIT, receiver).await.ok().and_then(Result::ok);
    let answer = (StatusCode::ACCEPTED, Json(Triggered { log_id }));
    Ok(match log_id {
        Some(log_id) => (location(&config, &format!("/logs/{log_id}")), answer).into_response(),
        None => answer.into_response(),
    })
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PreviewQuery {
    /// How many, 1 to 100 (default 5).
    #[param(minimum = 1, maximum = 100)]
    count: Option<usize>,
}

/// Upcoming fire times.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct FireTimes {
    /// `yyyy-MM-dd HH:mm:ss` in the admin's time zone; fewer than asked when the schedule ends.
    pub times: Vec<String>,
}

/// The next fire times of a job's schedule, from now (whether or not the job is running).
#[utoipa::path(operation_id = "nextFireTimes", get, path = "/jobs/{id}/next-fire-times", tag = "jobs", params(("id" = i32, Path, description = "job id", minimum = 1), PreviewQuery),
    responses((status = 200, body = FireTimes), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn next_fire_times(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i32>,
    QueryParams(query): QueryParams<PreviewQuery>,
) -> ApiResult<Json<FireTimes>> {
    let count = query.count.unwrap_or(5);
    if !(1..=MAX_PREVIEW).contains(&count) {
        return Err(ApiError::BadRequest(format!("count must be between 1 and {MAX_PREVIEW}")));
    }
    let job = jobs::get(&services, &user, id).await?;
    let times = jobs::next_fire_times(&services, &job.schedule_type, job.schedule_conf.as_deref(), count)?;
    Ok(Json(FireTimes { times }))
}
