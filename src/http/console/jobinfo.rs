//! The job manager's endpoints (spec console 1.3), with the group permission checked everywhere.

use super::error::ConsoleError;
use super::params::Params;
use super::views::{JobView, Page};
use super::{changes_state, JsonResult, LoginUser, OrJson};
use crate::app::AppState;
use crate::domain::routing::RouteStrategy;
use crate::domain::schedule::{next_time, MisfireStrategy, ScheduleType};
use crate::domain::{is_blank, java_split, ReturnT, TriggerRequest, TriggerType, BLOCK_STRATEGIES, GLUE_TYPES};
use crate::storage::{JobFilter, JobInfo};
use axum::extract::State;
use axum::routing::any;
use axum::{Json, Router};

/// A started or rescheduled job fires no sooner than this, outside the current pre-read window.
const START_DELAY_MS: i64 = 5000;

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

async fn page_list(State(state): State<AppState>, user: LoginUser, params: Params) -> Result<Json<Page<JobView>>, super::error::JsonError> {
    let job_group: i32 = params.required("jobGroup").or_json(&state)?;
    let trigger_status: i32 = params.required("triggerStatus").or_json(&state)?;
    let start: i64 = params.number_or("start", 0).or_json(&state)?;
    let length: i64 = params.number_or("length", 10).or_json(&state)?;
    // 2.4.2 lists every group's jobs to anyone; here a user sees only the groups granted to him.
    if job_group > 0 {
        user.ensure_access(&state, job_group).or_json(&state)?;
    }
    let filter = JobFilter {
        job_group,
        trigger_status,
        job_desc: params.string("jobDesc"),
        executor_handler: params.string("executorHandler"),
        author: params.string("author"),
        permitted_groups: if job_group > 0 { None } else { user.permitted_groups() },
    };
    let (jobs, total) = state.db.page_jobs(&filter, start.max(0), length.max(0)).await.or_json(&state)?;
    let zone = state.db.zone();
    Ok(Json(Page::new(jobs.into_iter().map(|j| JobView::new(j, zone)).collect(), total)))
}

/// The fields of the job form.
struct JobForm {
    id: i32,
    job_group: i32,
    job_desc: Option<String>,
    author: Option<String>,
    alarm_email: Option<String>,
    schedule_type: Option<String>,
    schedule_conf: Option<String>,
    misfire_strategy: Option<String>,
    executor_route_strategy: Option<String>,
    executor_handler: Option<String>,
    executor_param: Option<String>,
    executor_block_strategy: Option<String>,
    executor_timeout: i32,
    executor_fail_retry_count: i32,
    child_job_id: Option<String>,
    glue_type: Option<String>,
    glue_source: Option<String>,
    glue_remark: Option<String>,
}

impl JobForm {
    fn read(params: &Params) -> Result<JobForm, ConsoleError> {
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
}

/// The checks add and update share (spec rows 1–6 of update, 2–5 and 8–11 of add), in 2.4.2's order.
struct Checks<'a> {
    state: &'a AppState,
    user: &'a LoginUser,
}

impl Checks<'_> {
    fn t(&self, key: &str) -> String {
        self.state.i18n.get(key).to_string()
    }

    fn fail(&self, keys: &[&str]) -> ConsoleError {
        ConsoleError::msg(keys.iter().map(|k| self.t(k)).collect::<String>())
    }

    fn desc_and_author(&self, form: &JobForm) -> Result<(), ConsoleError> {
        if is_blank(form.job_desc.as_deref()) {
            return Err(self.fail(&["system_please_input", "jobinfo_field_jobdesc"]));
        }
        if is_blank(form.author.as_deref()) {
            return Err(self.fail(&["system_please_input", "jobinfo_field_author"]));
        }
        Ok(())
    }

    /// The schedule type and its configuration; `fix_rate_missing_key` differs between add and update.
    fn schedule(&self, form: &JobForm, fix_rate_missing: &[&str]) -> Result<(), ConsoleError> {
        let schedule_type = form.schedule_type.as_deref().and_then(ScheduleType::from_name);
        let conf = form.schedule_conf.as_deref();
        match schedule_type {
            None => Err(self.fail(&["schedule_type", "system_unvalid"])),
            Some(ScheduleType::Cron) => match conf {
                Some(expr) if crate::cron::CronExpression::parse(expr).is_ok() => Ok(()),
                _ => Err(ConsoleError::msg(format!("Cron{}", self.t("system_unvalid")))),
            },
            Some(ScheduleType::FixRate) => match conf {
                None => Err(self.fail(fix_rate_missing)),
                Some(seconds) if seconds.parse::<i32>().is_ok_and(|s| s >= 1) => Ok(()),
                Some(_) => Err(self.fail(&["schedule_type", "system_unvalid"])),
            },
            Some(ScheduleType::None) => Ok(()),
        }
    }

    fn strategies(&self, form: &JobForm) -> Result<(), ConsoleError> {
        if form.executor_route_strategy.as_deref().and_then(RouteStrategy::from_name).is_none() {
            return Err(self.fail(&["jobinfo_field_executorRouteStrategy", "system_unvalid"]));
        }
        if form.misfire_strategy.as_deref().and_then(MisfireStrategy::from_name).is_none() {
            return Err(self.fail(&["misfire_strategy", "system_unvalid"]));
        }
        if !form.executor_block_strategy.as_deref().is_some_and(|b| BLOCK_STRATEGIES.contains(&b)) {
            return Err(self.fail(&["jobinfo_field_executorBlockStrategy", "system_unvalid"]));
        }
        Ok(())
    }

    /// Child job ids: each an existing job the user may access; returns the list re-joined.
    async fn children(&self, form: &JobForm) -> Result<Option<String>, ConsoleError> {
        let Some(list) = form.child_job_id.as_deref().filter(|c| !is_blank(Some(c))) else {
            return Ok(form.child_job_id.clone());
        };
        let items = java_split(list);
        for item in &items {
            let label = format!("{}({item})", self.t("jobinfo_field_childJobId"));
            let Some(id) = item.parse::<i32>().ok().filter(|_| !is_blank(Some(item))) else {
                return Err(ConsoleError::msg(format!("{label}{}", self.t("system_unvalid"))));
            };
            let Some(child) = self.state.db.load_job(id).await? else {
                return Err(ConsoleError::msg(format!("{label}{}", self.t("system_not_found"))));
            };
            if !self.user.can_access(child.job_group) {
                return Err(ConsoleError::msg(format!("{label}{}", self.t("system_permission_limit"))));
            }
        }
        Ok(Some(items.join(",")))
    }
}

async fn add(State(state): State<AppState>, user: LoginUser, params: Params) -> JsonResult<String> {
    let form = JobForm::read(&params).or_json(&state)?;
    user.ensure_access(&state, form.job_group).or_json(&state)?;
    let checks = Checks { state: &state, user: &user };
    if state.db.load_group(form.job_group).await.or_json(&state)?.is_none() {
        return Err(checks.fail(&["system_please_choose", "jobinfo_field_jobgroup"])).or_json(&state);
    }
    checks.desc_and_author(&form).or_json(&state)?;
    checks.schedule(&form, &["schedule_type"]).or_json(&state)?;
    let glue_type = form.glue_type.clone().filter(|g| GLUE_TYPES.iter().any(|(name, _)| name == g));
    let Some(glue_type) = glue_type else {
        return Err(checks.fail(&["jobinfo_field_gluetype", "system_unvalid"])).or_json(&state);
    };
    if glue_type == "BEAN" && is_blank(form.executor_handler.as_deref()) {
        return Err(ConsoleError::msg(format!("{}JobHandler", checks.t("system_please_input")))).or_json(&state);
    }
    let glue_source = match glue_type.as_str() {
        "GLUE_SHELL" => form.glue_source.as_ref().map(|s| s.replace('\r', "")),
        _ => form.glue_source.clone(),
    };
    checks.strategies(&form).or_json(&state)?;
    let child_jobid = checks.children(&form).await.or_json(&state)?;

    let now = state.db.datetime(state.clock.now_ms());
    let job = JobInfo {
        id: 0,
        job_group: form.job_group,
        job_desc: form.job_desc.unwrap_or_default(),
        add_time: Some(now),
        update_time: Some(now),
        author: form.author,
        alarm_email: form.alarm_email,
        schedule_type: form.schedule_type.unwrap_or_default(),
        schedule_conf: form.schedule_conf,
        misfire_strategy: form.misfire_strategy.unwrap_or_default(),
        executor_route_strategy: form.executor_route_strategy,
        executor_handler: form.executor_handler,
        executor_param: form.executor_param,
        executor_block_strategy: form.executor_block_strategy,
        executor_timeout: form.executor_timeout,
        executor_fail_retry_count: form.executor_fail_retry_count,
        glue_type,
        glue_source,
        glue_remark: form.glue_remark,
        glue_updatetime: Some(now),
        child_jobid,
        // A new job is stopped; 2.4.2 would bind these from the request, which lets a script schedule
        // a job without the start checks.
        trigger_status: 0,
        trigger_last_time: 0,
        trigger_next_time: 0,
    };
    let id = state.db.insert_job(&job).await.or_json(&state)?;
    if id < 1 {
        return Err(checks.fail(&["jobinfo_field_add", "system_fail"])).or_json(&state);
    }
    Ok(Json(ReturnT::with_content(id.to_string())))
}

async fn update(State(state): State<AppState>, user: LoginUser, params: Params) -> JsonResult<()> {
    let form = JobForm::read(&params).or_json(&state)?;
    user.ensure_access(&state, form.job_group).or_json(&state)?;
    let checks = Checks { state: &state, user: &user };
    checks.desc_and_author(&form).or_json(&state)?;
    checks.schedule(&form, &["schedule_type", "system_unvalid"]).or_json(&state)?;
    checks.strategies(&form).or_json(&state)?;
    let child_jobid = checks.children(&form).await.or_json(&state)?;
    if state.db.load_group(form.job_group).await.or_json(&state)?.is_none() {
        return Err(checks.fail(&["jobinfo_field_jobgroup", "system_unvalid"])).or_json(&state);
    }
    let Some(mut job) = state.db.load_job(form.id).await.or_json(&state)? else {
        return Err(checks.fail(&["jobinfo_field_id", "system_not_found"])).or_json(&state);
    };
    // 2.4.2 checks only the target group, so a job could be pulled out of a group one may not touch.
    user.ensure_access(&state, job.job_group).or_json(&state)?;
    let schedule_type = form.schedule_type.clone().unwrap_or_default();
    let changed = job.schedule_type != schedule_type || job.schedule_conf != form.schedule_conf;
    let now_ms = state.clock.now_ms();
    if job.trigger_status == 1 && changed {
        match next_time(&schedule_type, form.schedule_conf.as_deref(), now_ms + START_DELAY_MS, state.cron_zone()) {
            Ok(Some(next)) => job.trigger_next_time = next,
            _ => return Err(checks.fail(&["schedule_type", "system_unvalid"])).or_json(&state),
        }
    }
    job.job_group = form.job_group;
    job.job_desc = form.job_desc.unwrap_or_default();
    job.author = form.author;
    job.alarm_email = form.alarm_email;
    job.schedule_type = schedule_type;
    job.schedule_conf = form.schedule_conf;
    job.misfire_strategy = form.misfire_strategy.unwrap_or_default();
    job.executor_route_strategy = form.executor_route_strategy;
    job.executor_handler = form.executor_handler;
    job.executor_param = form.executor_param;
    job.executor_block_strategy = form.executor_block_strategy;
    job.executor_timeout = form.executor_timeout;
    job.executor_fail_retry_count = form.executor_fail_retry_count;
    job.child_jobid = child_jobid;
    job.update_time = Some(state.db.datetime(now_ms));
    state.db.update_job(&job).await.or_json(&state)?;
    Ok(Json(ReturnT::success()))
}

/// The job of `id` if the user may act on its group; a clear failure for unknown ids.
async fn permitted_job(state: &AppState, user: &LoginUser, params: &Params) -> Result<Option<JobInfo>, ConsoleError> {
    let id: i32 = params.required("id")?;
    let Some(job) = state.db.load_job(id).await? else { return Ok(None) };
    user.ensure_access(state, job.job_group)?;
    Ok(Some(job))
}

fn unknown_job(state: &AppState) -> ConsoleError {
    ConsoleError::msg(format!("{}{}", state.i18n.get("jobinfo_field_id"), state.i18n.get("system_not_found")))
}

async fn remove(State(state): State<AppState>, user: LoginUser, params: Params) -> JsonResult<()> {
    if let Some(job) = permitted_job(&state, &user, &params).await.or_json(&state)? {
        state.db.delete_job(job.id).await.or_json(&state)?;
        state.db.delete_logs_of_job(job.id).await.or_json(&state)?;
        state.db.delete_glues_of_job(job.id).await.or_json(&state)?;
    }
    Ok(Json(ReturnT::success()))
}

async fn stop(State(state): State<AppState>, user: LoginUser, params: Params) -> JsonResult<()> {
    let Some(mut job) = permitted_job(&state, &user, &params).await.or_json(&state)? else {
        return Err(unknown_job(&state)).or_json(&state);
    };
    job.trigger_status = 0;
    job.trigger_last_time = 0;
    job.trigger_next_time = 0;
    job.update_time = Some(state.db.datetime(state.clock.now_ms()));
    state.db.update_job(&job).await.or_json(&state)?;
    Ok(Json(ReturnT::success()))
}

async fn start(State(state): State<AppState>, user: LoginUser, params: Params) -> JsonResult<()> {
    let Some(mut job) = permitted_job(&state, &user, &params).await.or_json(&state)? else {
        return Err(unknown_job(&state)).or_json(&state);
    };
    let i18n = &state.i18n;
    if matches!(ScheduleType::from_name(&job.schedule_type), None | Some(ScheduleType::None)) {
        return Err(ConsoleError::msg(i18n.get("schedule_type_none_limit_start"))).or_json(&state);
    }
    let now = state.clock.now_ms();
    let Ok(Some(next)) = next_time(&job.schedule_type, job.schedule_conf.as_deref(), now + START_DELAY_MS, state.cron_zone()) else {
        return Err(ConsoleError::msg(format!("{}{}", i18n.get("schedule_type"), i18n.get("system_unvalid")))).or_json(&state);
    };
    job.trigger_status = 1;
    job.trigger_last_time = 0;
    job.trigger_next_time = next;
    job.update_time = Some(state.db.datetime(now));
    state.db.update_job(&job).await.or_json(&state)?;
    Ok(Json(ReturnT::success()))
}

async fn trigger(State(state): State<AppState>, user: LoginUser, params: Params) -> JsonResult<()> {
    let i18n = &state.i18n;
    let id: i32 = params.required("id").or_json(&state)?;
    let Some(job) = state.db.load_job(id).await.or_json(&state)? else {
        return Ok(Json(ReturnT::fail(i18n.get("jobinfo_glue_jobid_unvalid"))));
    };
    if !user.can_access(job.job_group) {
        return Ok(Json(ReturnT::fail(i18n.get("system_permission_limit"))));
    }
    let address_list = params.string("addressList").filter(|a| !a.trim().is_empty());
    if let Some(list) = &address_list {
        // 2.4.2 sends /run, with the access token, to any host named here; only the group's own
        // executors are accepted.
        let group = state.db.load_group(job.job_group).await.or_json(&state)?;
        let known: Vec<String> = group
            .and_then(|g| g.address_list)
            .map(|l| java_split(&l).iter().map(|a| a.trim().to_string()).collect())
            .unwrap_or_default();
        if let Some(stranger) = java_split(list.trim()).into_iter().find(|a| !known.contains(&a.trim().to_string())) {
            let label = format!("{}{}", i18n.get("jobgroup_field_registryList"), i18n.get("system_unvalid"));
            return Ok(Json(ReturnT::fail(format!("{label}: {stranger}"))));
        }
    }
    state.triggers.submit(TriggerRequest {
        job_id: job.id,
        trigger_type: TriggerType::Manual,
        fail_retry_count: -1,
        sharding_param: None,
        executor_param: Some(params.string("executorParam").unwrap_or_default()),
        address_list,
    });
    Ok(Json(ReturnT::success()))
}

async fn next_trigger_time(State(state): State<AppState>, params: Params) -> JsonResult<Vec<String>> {
    let schedule_type = params.string("scheduleType").unwrap_or_default();
    let conf = params.string("scheduleConf");
    let zone = state.cron_zone();
    let mut times = Vec::new();
    let mut from = state.clock.now_ms();
    for _ in 0..5 {
        match next_time(&schedule_type, conf.as_deref(), from, zone) {
            Ok(Some(next)) => {
                times.push(zone.to_naive_exact(next).format("%Y-%m-%d %H:%M:%S").to_string());
                from = next;
            }
            Ok(None) => break,
            Err(e) => {
                let i18n = &state.i18n;
                return Ok(Json(ReturnT::fail(format!("{}{}{e}", i18n.get("schedule_type"), i18n.get("system_unvalid")))));
            }
        }
    }
    Ok(Json(ReturnT::with_content(times)))
}
