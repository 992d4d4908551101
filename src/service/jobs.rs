//! Job operations (2.4.2: XxlJobServiceImpl): list, add, update, remove, start, stop, run once and schedule
//! previews, with 2.4.2's checks in 2.4.2's order and the group permission on every one.

use super::audit::{changes, EventKind, Target};
use super::{LoginUser, ServiceContext, ServiceError};
use crate::alarm::Targets;
use crate::domain::codes::TriggerStatus;
use crate::domain::glue::{BlockStrategy, GlueType};
use crate::domain::routing::RouteStrategy;
use crate::domain::schedule::{next_time, MisfireStrategy, ScheduleError, ScheduleType};
use crate::domain::{is_blank, java_split, LogIdSink, TriggerRequest, TriggerType};
use crate::i18n::I18n;
use crate::storage::{Db, JobFilter, JobInfo};
use crate::time::Zone;
use chrono::NaiveDateTime;
use serde::Deserialize;

/// A started or rescheduled job fires no sooner than this, outside the current pre-read window.
pub(super) const START_DELAY_MS: i64 = 5000;

/// The job list's filters; `job_group` 0 and `trigger_status` -1 mean "any".
#[derive(Debug, Clone, Default)]
pub struct JobQuery {
    pub job_group: i32,
    pub trigger_status: i32,
    pub job_desc: Option<String>,
    pub executor_handler: Option<String>,
    pub author: Option<String>,
}

/// The jobs of one page and the total, within the groups the user may see.
pub async fn list(
    state: &ServiceContext,
    user: &LoginUser,
    query: JobQuery,
    offset: i64,
    limit: i64,
) -> Result<(Vec<JobInfo>, i64), ServiceError> {
    // 2.4.2 lists every group's jobs to anyone; here a user sees only the groups granted to him.
    if query.job_group > 0 {
        user.ensure_access(state, query.job_group)?;
    }
    let filter = JobFilter {
        job_group: query.job_group,
        trigger_status: query.trigger_status,
        job_desc: query.job_desc,
        executor_handler: query.executor_handler,
        author: query.author,
        permitted_groups: if query.job_group > 0 { None } else { user.permitted_groups() },
    };
    Ok(state.db.page_jobs(&filter, offset.max(0), limit.max(0)).await?)
}

/// The fields of the job form: what a user may set on a job. Absent numbers are 0, absent strings
/// absent, as the console binds them; other fields (those of a job as read) are ignored, so a job read
/// can be sent back changed.
// Defaults are per field: a container's `#[serde(default)]` would make the document declare each field's
// `Default` value, `null` for the texts it says are strings and 0 for a group it says starts at 1.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobForm {
    /// Taken from the URL (API) or the form's `id` (console), never from a JSON body.
    #[serde(skip)]
    #[schema(ignore)]
    pub id: i32,
    /// The executor group (its id).
    #[serde(default)]
    #[schema(required = true, minimum = 1)]
    pub job_group: i32,
    #[schema(
        required = true,
        nullable = false,
        pattern = r"^[^\x00]*[^\x00\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^\x00]*$"
    )]
    pub job_desc: Option<String>,
    #[schema(
        required = true,
        nullable = false,
        pattern = r"^[^\x00]*[^\x00\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^\x00]*$"
    )]
    pub author: Option<String>,
    /// E-mail addresses, comma-separated.
    pub alarm_email: Option<String>,
    /// `NONE`, `CRON` or `FIX_RATE`.
    #[schema(required = true, nullable = false, schema_with = super::schema::schedule_type)]
    pub schedule_type: Option<String>,
    /// A Quartz cron expression, or the FIX_RATE interval in seconds.
    pub schedule_conf: Option<String>,
    /// `DO_NOTHING` or `FIRE_ONCE_NOW`.
    #[schema(required = true, nullable = false, schema_with = super::schema::misfire_strategy)]
    pub misfire_strategy: Option<String>,
    /// `FIRST`, `LAST`, `ROUND`, `RANDOM`, `CONSISTENT_HASH`, `LEAST_FREQUENTLY_USED`,
    /// `LEAST_RECENTLY_USED`, `FAILOVER`, `BUSYOVER` or `SHARDING_BROADCAST`.
    #[schema(required = true, nullable = false, schema_with = super::schema::route_strategy)]
    pub executor_route_strategy: Option<String>,
    pub executor_handler: Option<String>,
    pub executor_param: Option<String>,
    /// `SERIAL_EXECUTION`, `DISCARD_LATER` or `COVER_EARLY`.
    #[schema(required = true, nullable = false, schema_with = super::schema::block_strategy)]
    pub executor_block_strategy: Option<String>,
    /// Seconds; 0 = none.
    #[serde(default)]
    #[schema(default = 0)]
    pub executor_timeout: i32,
    #[serde(default)]
    #[schema(default = 0)]
    pub executor_fail_retry_count: i32,
    /// Ids of jobs to run after a success, comma-separated.
    #[schema(
        pattern = r"^(?:[\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*|\+?[0-9]{1,9}(?:,\+?[0-9]{1,9})*,*)$"
    )]
    pub child_job_id: Option<String>,
    /// `BEAN`, `GLUE_GROOVY`, `GLUE_SHELL`, `GLUE_PYTHON`, `GLUE_PHP`, `GLUE_NODEJS` or `GLUE_POWERSHELL`;
    /// fixed once the job exists.
    #[schema(schema_with = super::schema::glue_type)]
    pub glue_type: Option<String>,
    pub glue_source: Option<String>,
    pub glue_remark: Option<String>,
}

/// The checks add and update share (2.4.2: XxlJobServiceImpl.add and update, from the description to the
/// child job ids), in 2.4.2's order; a declarative apply runs the same ones.
pub(super) struct Checks<'a> {
    pub i18n: &'a I18n,
    /// The configured alarm channel names.
    pub alarm_channels: &'a [String],
    pub db: &'a Db,
    pub user: &'a LoginUser,
}

impl<'a> Checks<'a> {
    fn of(state: &'a ServiceContext, user: &'a LoginUser) -> Checks<'a> {
        Checks { i18n: &state.i18n, alarm_channels: state.alarms.webhook_names(), db: &state.db, user }
    }

    fn t(&self, key: &str) -> String {
        self.i18n.get(key).to_string()
    }

    pub(super) fn fail(&self, keys: &[&str]) -> ServiceError {
        ServiceError::Invalid(keys.iter().map(|k| self.t(k)).collect::<String>())
    }

    pub(super) fn desc_and_author(&self, form: &JobForm) -> Result<(), ServiceError> {
        if is_blank(form.job_desc.as_deref()) {
            return Err(self.fail(&["system_please_input", "jobinfo_field_jobdesc"]));
        }
        if is_blank(form.author.as_deref()) {
            return Err(self.fail(&["system_please_input", "jobinfo_field_author"]));
        }
        Ok(())
    }

    /// The schedule type and its configuration: 2.4.2's message, then the reason (the parser's, in the
    /// console's language, for a cron expression); a missing FIX_RATE interval is a bad one.
    pub(super) fn schedule(&self, form: &JobForm) -> Result<(), ServiceError> {
        let conf = form.schedule_conf.as_deref();
        let problem = match form.schedule_type.as_deref().and_then(ScheduleType::from_name) {
            None => return Err(self.fail(&["schedule_type", "system_unvalid"])),
            Some(ScheduleType::Cron) => {
                crate::cron::CronExpression::parse(conf.unwrap_or("")).err().map(ScheduleError::Cron)
            }
            Some(ScheduleType::FixRate) => conf
                .filter(|seconds| seconds.parse::<i32>().is_ok_and(|s| s >= 1))
                .is_none()
                .then(|| ScheduleError::FixRate(conf.unwrap_or_default().to_string())),
            Some(ScheduleType::None) => None,
        };
        match problem {
            Some(problem) => Err(ServiceError::Invalid(problem.message(self.i18n))),
            None => Ok(()),
        }
    }

    /// A BEAN job runs the executor's handler of that name: none, and every run fails.
    fn handler(&self, glue_type: GlueType, handler: Option<&str>) -> Result<(), ServiceError> {
        if glue_type == GlueType::Bean && is_blank(handler) {
            return Err(ServiceError::Invalid(format!("{}JobHandler", self.t("system_please_input"))));
        }
        Ok(())
    }

    pub(super) fn strategies(&self, form: &JobForm) -> Result<(), ServiceError> {
        if form.executor_route_strategy.as_deref().and_then(RouteStrategy::from_name).is_none() {
            return Err(self.fail(&["jobinfo_field_executorRouteStrategy", "system_unvalid"]));
        }
        if form.misfire_strategy.as_deref().and_then(MisfireStrategy::from_name).is_none() {
            return Err(self.fail(&["misfire_strategy", "system_unvalid"]));
        }
        if form.executor_block_strategy.as_deref().and_then(BlockStrategy::from_name).is_none() {
            return Err(self.fail(&["jobinfo_field_executorBlockStrategy", "system_unvalid"]));
        }
        Ok(())
    }

    /// A `webhook:<name>` no channel has would fail every alarm unseen: refused with the configured names.
    pub(super) fn alarm_channels(&self, form: &JobForm) -> Result<(), ServiceError> {
        let configured: Vec<&str> = self.alarm_channels.iter().map(String::as_str).collect();
        let targets = Targets::parse(form.alarm_email.as_deref());
        match targets.webhooks.iter().find(|name| !configured.contains(&name.as_str())) {
            Some(unknown) => {
                let known = if configured.is_empty() { "-".to_string() } else { configured.join(", ") };
                Err(ServiceError::Invalid(
                    self.i18n.format("jobinfo_alarm_unknown_channel", &[unknown, &known]),
                ))
            }
            None => Ok(()),
        }
    }

    /// The checks of a new job's own fields, in add's order; returns its GLUE type and the GLUE source to
    /// store.
    pub(super) fn new_job_fields(&self, form: &JobForm) -> Result<(String, String), ServiceError> {
        self.desc_and_author(form)?;
        self.schedule(form)?;
        let Some(glue_type) = form.glue_type.as_deref().and_then(GlueType::from_name) else {
            return Err(self.fail(&["jobinfo_field_gluetype", "system_unvalid"]));
        };
        self.handler(glue_type, form.executor_handler.as_deref())?;
        self.strategies(form)?;
        self.alarm_channels(form)?;
        Ok((glue_type.name().to_string(), stored_glue_source(&form.glue_type, form.glue_source.as_deref())))
    }

    /// The checks of a changed job's own fields, in update's order.
    pub(super) fn changed_job_fields(&self, form: &JobForm) -> Result<(), ServiceError> {
        self.desc_and_author(form)?;
        self.schedule(form)?;
        self.strategies(form)?;
        self.alarm_channels(form)
    }

    /// Child job ids: each an existing job the user may access; returns the list re-joined.
    async fn children(&self, form: &JobForm) -> Result<Option<String>, ServiceError> {
        let Some(list) = form.child_job_id.as_deref().filter(|c| !is_blank(Some(c))) else {
            return Ok(form.child_job_id.clone());
        };
        let items = java_split(list);
        for item in &items {
            let label = format!("{}({item})", self.t("jobinfo_field_childJobId"));
            let Some(id) = item.parse::<i32>().ok().filter(|_| !is_blank(Some(item))) else {
                return Err(ServiceError::Invalid(format!("{label}{}", self.t("system_unvalid"))));
            };
            let Some(child) = self.db.load_job(id).await? else {
                return Err(ServiceError::NotFound(format!("{label}{}", self.t("system_not_found"))));
            };
            if !self.user.can_access(child.job_group) {
                return Err(ServiceError::Forbidden(format!("{label}{}", self.t("system_permission_limit"))));
            }
        }
        Ok(Some(items.join(",")))
    }
}

/// The GLUE source as the console stores it: never NULL (the console always sends the field, and a Java
/// admin's GLUE IDE, the `/jobcode` page, breaks on NULL); a shell script without carriage returns.
pub(super) fn stored_glue_source(glue_type: &Option<String>, source: Option<&str>) -> String {
    match glue_type.as_deref().and_then(GlueType::from_name) {
        Some(GlueType::Shell) => source.unwrap_or_default().replace('\r', ""),
        _ => source.unwrap_or_default().to_string(),
    }
}

/// A new, stopped job of the add form, as the console stores it.
pub(super) fn new_job(
    form: JobForm,
    glue_type: String,
    glue_source: String,
    child_jobid: Option<String>,
    now: NaiveDateTime,
) -> JobInfo {
    JobInfo {
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
        glue_source: Some(glue_source),
        glue_remark: Some(form.glue_remark.unwrap_or_default()),
        glue_updatetime: Some(now),
        child_jobid,
        // A new job is stopped; 2.4.2 would bind these from the request, which lets a script schedule
        // a job without the start checks.
        trigger_status: TriggerStatus::Stopped,
        trigger_last_time: 0,
        trigger_next_time: 0,
    }
}

/// A job as the audit trail names it.
fn job_target(id: i32, desc: Option<&str>) -> Target {
    Target::new("job", id, desc.map(str::to_string))
}

/// Creates a stopped job; returns its id.
pub async fn add(state: &ServiceContext, user: &LoginUser, form: JobForm) -> Result<i32, ServiceError> {
    let desc = form.job_desc.clone();
    let result = insert(state, user, form).await;
    let target = job_target(result.as_ref().map_or(0, |job| job.id), desc.as_deref());
    state
        .audit
        .done(user, EventKind::JobAdd, target, |job| changes(None, Some(job)), result)
        .map(|job| job.id)
}

async fn insert(state: &ServiceContext, user: &LoginUser, form: JobForm) -> Result<JobInfo, ServiceError> {
    user.ensure_access(state, form.job_group)?;
    let checks = Checks::of(state, user);
    // Not found, not invalid: the form is well made and names a group that is not (or no longer) there.
    if state.db.load_group(form.job_group).await?.is_none() {
        return Err(ServiceError::NotFound(
            checks.t("system_please_choose") + &checks.t("jobinfo_field_jobgroup"),
        ));
    }
    let (glue_type, glue_source) = checks.new_job_fields(&form)?;
    let child_jobid = checks.children(&form).await?;

    let mut job = new_job(form, glue_type, glue_source, child_jobid, state.db.datetime(state.clock.now_ms()));
    job.id = state.db.insert_job(&job).await?;
    if job.id < 1 {
        return Err(checks.fail(&["jobinfo_field_add", "system_fail"]));
    }
    Ok(job)
}

/// Changes job `form.id`; the GLUE type and source stay. Returns the job as written.
pub async fn update(
    state: &ServiceContext,
    user: &LoginUser,
    form: JobForm,
) -> Result<JobInfo, ServiceError> {
    let target = job_target(form.id, form.job_desc.as_deref());
    let before = state.db.load_job(form.id).await;
    let result = change(state, user, form).await;
    let before = before.ok().flatten();
    state.audit.done(user, EventKind::JobUpdate, target, |job| changes(before.as_ref(), Some(job)), result)
}

async fn change(state: &ServiceContext, user: &LoginUser, form: JobForm) -> Result<JobInfo, ServiceError> {
    user.ensure_access(state, form.job_group)?;
    let checks = Checks::of(state, user);
    checks.changed_job_fields(&form)?;
    let child_jobid = checks.children(&form).await?;
    if state.db.load_group(form.job_group).await?.is_none() {
        return Err(ServiceError::NotFound(checks.t("jobinfo_field_jobgroup") + &checks.t("system_unvalid")));
    }
    let Some(mut job) = state.db.load_job(form.id).await? else {
        return Err(unknown_job(state));
    };
    // 2.4.2 checks only the target group, so a job could be pulled out of a group one may not touch.
    user.ensure_access(state, job.job_group)?;
    // The update form has no GLUE type (it cannot change): the stored one decides, as add's form does. The
    // body alone cannot show the rule, so the REST API answers it as a conflict with the stored job (409).
    if let Some(glue_type) = GlueType::from_name(&job.glue_type) {
        checks.handler(glue_type, form.executor_handler.as_deref()).map_err(|error| match error {
            ServiceError::Invalid(message) => ServiceError::Conflict(message),
            other => other,
        })?;
    }
    let now_ms = state.clock.now_ms();
    write_form(&mut job, form, child_jobid, now_ms, state.db.datetime(now_ms), state.cron_zone())
        .map_err(|()| checks.fail(&["schedule_type", "system_unvalid"]))?;
    state.db.update_job(&job).await?;
    Ok(job)
}

/// Writes the update form's fields onto `job`, as the console's update does; a running job whose schedule
/// changed is rescheduled from `now_ms`. `Err` when the new schedule has no next fire time.
pub(super) fn write_form(
    job: &mut JobInfo,
    form: JobForm,
    child_jobid: Option<String>,
    now_ms: i64,
    now: NaiveDateTime,
    zone: Zone,
) -> Result<(), ()> {
    let schedule_type = form.schedule_type.clone().unwrap_or_default();
    let changed = job.schedule_type != schedule_type || job.schedule_conf != form.schedule_conf;
    if job.trigger_status == TriggerStatus::Running && changed {
        match next_time(&schedule_type, form.schedule_conf.as_deref(), now_ms + START_DELAY_MS, zone) {
            Ok(Some(next)) => job.trigger_next_time = next,
            _ => return Err(()),
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
    job.update_time = Some(now);
    Ok(())
}

/// The job of `id` if the user may act on its group; `None` for an unknown id.
pub async fn find(
    state: &ServiceContext,
    user: &LoginUser,
    id: i32,
) -> Result<Option<JobInfo>, ServiceError> {
    let Some(job) = state.db.load_job(id).await? else { return Ok(None) };
    user.ensure_access(state, job.job_group)?;
    Ok(Some(job))
}

/// The job of `id` if the user may act on its group; unknown ids are refused.
pub async fn get(state: &ServiceContext, user: &LoginUser, id: i32) -> Result<JobInfo, ServiceError> {
    find(state, user, id).await?.ok_or_else(|| unknown_job(state))
}

/// The refusal of an id that names no job.
pub fn unknown_job(state: &ServiceContext) -> ServiceError {
    ServiceError::NotFound(format!(
        "{}{}",
        state.i18n.get("jobinfo_field_id"),
        state.i18n.get("system_not_found")
    ))
}

/// Deletes the job with its logs and GLUE history; returns whether it existed.
pub async fn remove(state: &ServiceContext, user: &LoginUser, id: i32) -> Result<bool, ServiceError> {
    let before = state.db.load_job(id).await.ok().flatten();
    let result = delete(state, user, id).await;
    let target = job_target(id, before.as_ref().map(|job| job.job_desc.as_str()));
    state.audit.done(user, EventKind::JobRemove, target, |_| changes(before.as_ref(), None), result)
}

async fn delete(state: &ServiceContext, user: &LoginUser, id: i32) -> Result<bool, ServiceError> {
    let Some(job) = find(state, user, id).await? else { return Ok(false) };
    state.db.delete_job(job.id).await?;
    state.db.delete_logs_of_job(job.id).await?;
    state.db.delete_glues_of_job(job.id).await?;
    Ok(true)
}

pub async fn stop(state: &ServiceContext, user: &LoginUser, id: i32) -> Result<JobInfo, ServiceError> {
    let before = state.db.load_job(id).await.ok().flatten();
    let result = unschedule(state, user, id).await;
    audit_schedule(state, user, EventKind::JobStop, id, before, result)
}

async fn unschedule(state: &ServiceContext, user: &LoginUser, id: i32) -> Result<JobInfo, ServiceError> {
    let mut job = get(state, user, id).await?;
    job.trigger_status = TriggerStatus::Stopped;
    job.trigger_last_time = 0;
    job.trigger_next_time = 0;
    job.update_time = Some(state.db.datetime(state.clock.now_ms()));
    state.db.update_job(&job).await?;
    Ok(job)
}

pub async fn start(state: &ServiceContext, user: &LoginUser, id: i32) -> Result<JobInfo, ServiceError> {
    let before = state.db.load_job(id).await.ok().flatten();
    let result = schedule(state, user, id).await;
    audit_schedule(state, user, EventKind::JobStart, id, before, result)
}

/// A start or stop as an audit event: the schedule fields before and after.
fn audit_schedule(
    state: &ServiceContext,
    user: &LoginUser,
    kind: EventKind,
    id: i32,
    before: Option<JobInfo>,
    result: Result<JobInfo, ServiceError>,
) -> Result<JobInfo, ServiceError> {
    let target = job_target(id, before.as_ref().map(|job| job.job_desc.as_str()));
    state.audit.done(user, kind, target, |job| changes(before.as_ref(), Some(job)), result)
}

async fn schedule(state: &ServiceContext, user: &LoginUser, id: i32) -> Result<JobInfo, ServiceError> {
    let mut job = get(state, user, id).await?;
    let i18n = &state.i18n;
    if matches!(ScheduleType::from_name(&job.schedule_type), None | Some(ScheduleType::None)) {
        return Err(ServiceError::Conflict(i18n.get("schedule_type_none_limit_start").to_string()));
    }
    let now = state.clock.now_ms();
    let next =
        next_time(&job.schedule_type, job.schedule_conf.as_deref(), now + START_DELAY_MS, state.cron_zone())
            .map_err(|e| ServiceError::Invalid(e.message(i18n)))?;
    let Some(next) = next else {
        return Err(ServiceError::Invalid(format!(
            "{}{}",
            i18n.get("schedule_type"),
            i18n.get("system_unvalid")
        )));
    };
    job.trigger_status = TriggerStatus::Running;
    job.trigger_last_time = 0;
    job.trigger_next_time = next;
    job.update_time = Some(state.db.datetime(now));
    state.db.update_job(&job).await?;
    Ok(job)
}

/// Runs job `id` once: with `executor_param` instead of the job's parameter when given, on
/// `address_list` instead of the group's addresses when non-blank (only addresses of the job's group).
pub async fn trigger(
    state: &ServiceContext,
    user: &LoginUser,
    id: i32,
    executor_param: Option<String>,
    address_list: Option<String>,
    trigger_type: TriggerType,
    on_log_id: Option<LogIdSink>,
) -> Result<(), ServiceError> {
    // What the run was asked with: the parameter and addresses are the request's, not the job's.
    let asked = serde_json::json!({ "executorParam": executor_param, "addressList": address_list, "triggerType": trigger_type.name() });
    let result: Result<JobInfo, ServiceError> = async {
        let i18n = &state.i18n;
        let Some(job) = state.db.load_job(id).await? else {
            return Err(ServiceError::NotFound(i18n.get("jobinfo_glue_jobid_unvalid").to_string()));
        };
        if !user.can_access(job.job_group) {
            return Err(ServiceError::Forbidden(i18n.get("system_permission_limit").to_string()));
        }
        let address_list = address_list.filter(|a| !a.trim().is_empty());
        if let Some(list) = &address_list {
            // 2.4.2 sends /run, with the access token, to any host named here; only the group's own
            // executors are accepted.
            let group = state.db.load_group(job.job_group).await?;
            let known: Vec<String> = group
                .and_then(|g| g.address_list)
                .map(|l| java_split(&l).iter().map(|a| a.trim().to_string()).collect())
                .unwrap_or_default();
            if let Some(stranger) =
                java_split(list.trim()).into_iter().find(|a| !known.contains(&a.trim().to_string()))
            {
                let label =
                    format!("{}{}", i18n.get("jobgroup_field_registryList"), i18n.get("system_unvalid"));
                // Not found, as a group or a child job named in a form: no executor of the group has it.
                return Err(ServiceError::NotFound(format!("{label}: {stranger}")));
            }
        }
        state.triggers.submit(TriggerRequest {
            executor_param,
            address_list,
            on_log_id,
            ..TriggerRequest::of_job(job.id, trigger_type)
        });
        Ok(job)
    }
    .await;
    let desc = result.as_ref().ok().map(|job| job.job_desc.clone());
    let target = job_target(id, desc.as_deref());
    state.audit.done(user, EventKind::JobTrigger, target, |_| changes(None, Some(&asked)), result).map(drop)
}

/// The next `count` fire times of a schedule after now, as `yyyy-MM-dd HH:mm:ss` in the cron zone;
/// fewer when the schedule ends.
pub fn next_fire_times(
    state: &ServiceContext,
    schedule_type: &str,
    conf: Option<&str>,
    count: usize,
) -> Result<Vec<String>, ServiceError> {
    let zone = state.cron_zone();
    let mut times = Vec::new();
    let mut from = state.clock.now_ms();
    for _ in 0..count {
        match next_time(schedule_type, conf, from, zone) {
            Ok(Some(next)) => {
                times.push(zone.to_naive_exact(next).format("%Y-%m-%d %H:%M:%S").to_string());
                from = next;
            }
            Ok(None) => break,
            Err(e) => return Err(ServiceError::Invalid(e.message(&state.i18n))),
        }
    }
    Ok(times)
}
