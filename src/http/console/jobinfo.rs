//! The job manager's endpoints (2.4.2: JobInfoController): parameters bound as 2.4.2 binds them, the rules in
//! [`crate::service::jobs`], shared with the REST API.

use super::error::ConsoleError;
use super::params::Params;
use super::views::{JobView, Page};
use super::{changes_state, JsonResult, LoginUser};
use crate::domain::{ReturnT, TriggerType};
use crate::http::state::AppState;
use crate::service::jobs::{self, JobForm, JobQuery};
use crate::service::ServiceContext;
use axum::extract::State;
use axum::routing::any;
use axum::{Json, Router};

/// The console previews this many fire times.
const PREVIEW_COUNT: usize = 5;

pub fn routes() -> Router<AppState> {
    let mut router = Router::new();
    for (path, handler) in [
        ("/jobinfo/pageList", any(page_list)),
        ("/jobinfo/add", changes_state(add)),
        ("/jobinfo/update", changes_state(update)),
        ("/jobinfo/remove", changes_state(remove)),
        ("/jobinfo/stop", changes_state(stop)),
        ("/jobinfo/start", changes_state(start)),
        ("/jobinfo/trigger", changes_state(trigger)),
        ("/jobinfo/nextTriggerTime", any(next_trigger_time)),
    ] {
        router = router.route(path, handler.clone()).route(&format!("{path}/"), handler);
    }
    router
}

async fn page_list(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> Result<Json<Page<JobView>>, ConsoleError> {
    let query = JobQuery {
        job_group: params.required("jobGroup")?,
        trigger_status: params.required("triggerStatus")?,
        job_desc: params.string("jobDesc"),
        executor_handler: params.string("executorHandler"),
        author: params.string("author"),
    };
    let start: i64 = params.number_or("start", 0)?;
    let length: i64 = params.number_or("length", 10)?;
    let (jobs, total) = jobs::list(&services, &user, query, start, length).await?;
    let zone = services.db.zone();
    Ok(Json(Page::new(jobs.into_iter().map(|j| JobView::new(j, zone)).collect(), total)))
}

/// The job form as the console posts it.
fn job_form(params: &Params) -> Result<JobForm, ConsoleError> {
    Ok(JobForm {
        id: params.number_or("id", 0)?,
        job_group: params.number_or("jobGroup", 0)?,
        job_desc: params.string("jobDesc"),
        author: params.string("author"),
        alarm_email: params.string("alarmEmail"),
        schedule_type: params.string("scheduleType"),
        schedule_conf: params.string("scheduleConf"),
        misfire_strategy: params.string("misfireStrategy"),
        executor_route_strategy: params.string("executorRouteStrategy"),
        executor_handler: params.string("executorHandler"),
        executor_param: params.string("executorParam"),
        executor_block_strategy: params.string("executorBlockStrategy"),
        executor_timeout: params.number_or("executorTimeout", 0)?,
        executor_fail_retry_count: params.number_or("executorFailRetryCount", 0)?,
        child_job_id: params.string("childJobId"),
        glue_type: params.string("glueType"),
        glue_source: params.string("glueSource"),
        glue_remark: params.string("glueRemark"),
    })
}

async fn add(State(services): State<ServiceContext>, user: LoginUser, params: Params) -> JsonResult<String> {
    let form = job_form(&params)?;
    let id = jobs::add(&services, &user, form).await?;
    Ok(Json(ReturnT::with_content(id.to_string())))
}

async fn update(State(services): State<ServiceContext>, user: LoginUser, params: Params) -> JsonResult<()> {
    let form = job_form(&params)?;
    jobs::update(&services, &user, form).await?;
    Ok(Json(ReturnT::success()))
}

/// 2.4.2 answers success for an unknown id.
async fn remove(State(services): State<ServiceContext>, user: LoginUser, params: Params) -> JsonResult<()> {
    let id: i32 = params.required("id")?;
    jobs::remove(&services, &user, id).await?;
    Ok(Json(ReturnT::success()))
}

async fn stop(State(services): State<ServiceContext>, user: LoginUser, params: Params) -> JsonResult<()> {
    let id: i32 = params.required("id")?;
    jobs::stop(&services, &user, id).await?;
    Ok(Json(ReturnT::success()))
}

async fn start(State(services): State<ServiceContext>, user: LoginUser, params: Params) -> JsonResult<()> {
    let id: i32 = params.required("id")?;
    jobs::start(&services, &user, id).await?;
    Ok(Json(ReturnT::success()))
}

/// An absent parameter runs the job with an empty one, as 2.4.2's form always sends it.
async fn trigger(State(services): State<ServiceContext>, user: LoginUser, params: Params) -> JsonResult<()> {
    let id: i32 = params.required("id")?;
    let executor_param = Some(params.string("executorParam").unwrap_or_default());
    jobs::trigger(
        &services,
        &user,
        id,
        executor_param,
        params.string("addressList"),
        TriggerType::Manual,
        None,
    )
    .await?;
    Ok(Json(ReturnT::success()))
}

async fn next_trigger_time(
    State(services): State<ServiceContext>,
    params: Params,
) -> JsonResult<Vec<String>> {
    let schedule_type = params.string("scheduleType").unwrap_or_default();
    let times = jobs::next_fire_times(
        &services,
        &schedule_type,
        params.string("scheduleConf").as_deref(),
        PREVIEW_COUNT,
    )?;
    Ok(Json(ReturnT::with_content(times)))
}
