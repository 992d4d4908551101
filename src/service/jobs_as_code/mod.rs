//! Jobs as code (docs/jobs-as-code.md): executors, jobs and workflows exported to a document keyed by
//! natural keys and names, and a document applied declaratively: what is missing is created, what differs
//! updated, the rest left alone (or, with prune, the named executors' other jobs and workflows deleted).
//! Every entry passes the console's own checks (a workflow, those of a workflow's save) and group
//! permissions; the whole apply is one transaction, taken under the schedule lock so that admins sharing
//! a database apply one at a time and each sees what the previous one wrote.

mod document;
mod plan;
mod reason;
mod workflows;

pub use document::{
    natural_key, read_documents, Document, Executor, Format, FormatError, GlueVersion, Job, Workflow,
    WorkflowNode,
};
pub use plan::{Action, FieldDiff, Plan, PlanError};
/// One workflow of a document into a definition and back, for the console's editor.
pub use workflows::{definition as definition_of, exported as exported_workflow};

use super::audit::{Audit, EventKind, Target};
use super::groups::{ensure_admin, live_address_lists, GroupForm};
use super::jobs::{new_job, write_form, Checks, JobForm, START_DELAY_MS};
use super::workflows::{self as saving, NamedWorkflow, References, Starting};
use super::{LoginUser, Origin, ServiceContext, ServiceError};
use crate::domain::codes::{AddressType, TriggerStatus};
use crate::domain::glue::GlueType;
use crate::domain::schedule::{next_time, ScheduleType};
use crate::domain::workflow::{nesting, validate, Definition, NodeKind};
use crate::domain::GLUE_HISTORY;
use crate::i18n::I18n;
use crate::storage::{
    Db, JobGroup, JobInfo, JobUser, LogGlue, ScheduleLock, StorageError, WorkflowHead, WorkflowSchedule,
};
use crate::time::CRON_ZONE;
use plan::{Child, Ids, JobStep, StoredWorkflow, WorkflowStep};
use reason::Reason;
use std::collections::HashMap;

/// What an export or an apply reads and checks with: the database, the console's messages and the
/// configured alarm channels (the command line has them without a running admin).
pub struct Setting<'a> {
    pub db: &'a Db,
    pub i18n: &'a I18n,
    pub alarm_channels: &'a [String],
    /// The instant the apply writes as `update_time`.
    pub now_ms: i64,
}

impl<'a> Setting<'a> {
    pub fn of(state: &'a ServiceContext) -> Setting<'a> {
        Setting {
            db: &state.db,
            i18n: &state.i18n,
            alarm_channels: state.alarms.webhook_names(),
            now_ms: state.clock.now_ms(),
        }
    }
}

/// Who acts for the command line and `xxl.job.apply.file`: whoever holds the database's configuration
/// already holds every row, so an administrator.
pub fn operator() -> LoginUser {
    LoginUser(
        JobUser {
            id: 0,
            username: "(configuration)".into(),
            password: String::new(),
            role: crate::storage::Role::Admin,
            permission: None,
        },
        Origin::default(),
    )
}

#[derive(Debug, Clone, Copy, Default)]
pub struct ApplyOptions {
    /// Plan only: nothing is written.
    pub dry_run: bool,
    /// Delete the jobs of the document's executors that the document does not list.
    pub prune: bool,
}

/// The executors named `apps` (every one when empty) that the user may see, with their jobs and
/// workflows; with `glue_history`, each GLUE job's history too (and a BEAN job's, should it have one).
pub async fn export(
    setting: &Setting<'_>,
    user: &LoginUser,
    apps: &[String],
    glue_history: bool,
) -> Result<Document, ServiceError> {
    let db = setting.db;
    let groups = db.all_groups().await?;
    let chosen = exported_groups(setting, user, &groups, apps)?;
    let mut jobs_of = Vec::with_capacity(chosen.len());
    for group in &chosen {
        jobs_of.push(db.jobs_by_group(group.id).await?);
    }
    let chosen_ids: Vec<i32> = chosen.iter().map(|g| g.id).collect();
    let mut stored_workflows = match db.extension_tables_present().await? {
        true => stored_workflows(db.workflows_with_definitions().await?)?,
        // Reading creates no table: without them there is no workflow.
        false => Vec::new(),
    };
    stored_workflows.retain(|s| chosen_ids.contains(&s.row.job_group));
    // In the order of their names' bytes, as every database would give it.
    stored_workflows.sort_by(|a, b| a.row.name.cmp(&b.row.name));
    let node_jobs: Vec<i32> = stored_workflows.iter().flat_map(|s| node_jobs(&s.definition)).collect();
    let key_of = child_keys(db, &groups, &jobs_of, node_jobs).await?;
    let mut histories = if glue_history { glue_histories(db, &jobs_of).await? } else { HashMap::new() };
    let executors = chosen
        .iter()
        .zip(jobs_of)
        .map(|(group, jobs)| Executor {
            jobs: jobs
                .iter()
                .map(|j| Job { glue_history: histories.remove(&j.id), ..exported_job(j, &key_of) })
                .collect(),
            ..exported_executor(group)
        })
        .collect();
    let app_of: HashMap<i32, &str> = groups.iter().map(|g| (g.id, g.app_name.as_str())).collect();
    let workflows = stored_workflows
        .iter()
        .map(|s| {
            let app = app_of.get(&s.row.job_group).copied().unwrap_or("");
            let status = Some(s.row.trigger_status);
            workflows::exported(&s.definition, app, &|id| key_of.get(&id).cloned(), status)
        })
        .collect();
    Ok(Document { executors, workflows })
}

/// The stored workflows with their current definitions parsed.
fn stored_workflows(
    rows: Vec<(crate::storage::Workflow, String)>,
) -> Result<Vec<StoredWorkflow>, ServiceError> {
    rows.into_iter()
        .map(|(row, text)| {
            let definition = saving::read_stored(row.id, row.current_version, &text)?;
            Ok(StoredWorkflow { row, definition })
        })
        .collect()
}

/// The jobs a definition's job nodes run.
fn node_jobs(def: &Definition) -> impl Iterator<Item = i32> + '_ {
    def.nodes.iter().filter_map(|node| match node.kind {
        NodeKind::Job { job_id, .. } => Some(job_id),
        _ => None,
    })
}

/// The groups an export covers: those named (each must exist and be the user's) or all the user's.
fn exported_groups<'a>(
    setting: &Setting<'_>,
    user: &LoginUser,
    groups: &'a [JobGroup],
    apps: &[String],
) -> Result<Vec<&'a JobGroup>, ServiceError> {
    for app in apps {
        let Some(group) = groups.iter().find(|g| &g.app_name == app) else {
            return Err(ServiceError::NotFound(format!("executor {app:?}: no executor has this app_name")));
        };
        user.ensure_access_with(setting.i18n, group.id)?;
    }
    Ok(groups
        .iter()
        .filter(|g| user.can_access(g.id) && (apps.is_empty() || apps.contains(&g.app_name)))
        .collect())
}

/// The natural key of every exported job, of every child they name and of every job of `node_jobs` (the
/// exported workflows' job nodes), by id. These may live in groups not exported: named by their natural
/// keys all the same.
async fn child_keys(
    db: &Db,
    groups: &[JobGroup],
    jobs_of: &[Vec<JobInfo>],
    node_jobs: Vec<i32>,
) -> Result<HashMap<i32, String>, ServiceError> {
    let exported: HashMap<i32, &JobInfo> = jobs_of.iter().flatten().map(|j| (j.id, j)).collect();
    let mut child_ids: Vec<i32> = jobs_of
        .iter()
        .flatten()
        .flat_map(child_ids)
        .chain(node_jobs)
        .filter(|id| !exported.contains_key(id))
        .collect();
    child_ids.sort_unstable();
    child_ids.dedup();
    let outside = db.load_jobs(&child_ids).await?;
    let app_of: HashMap<i32, &str> = groups.iter().map(|g| (g.id, g.app_name.as_str())).collect();
    Ok(exported
        .values()
        .copied()
        .chain(outside.iter())
        .map(|j| {
            (
                j.id,
                natural_key(
                    app_of.get(&j.job_group).copied().unwrap_or(""),
                    &j.job_desc,
                    j.executor_handler.as_deref().unwrap_or(""),
                ),
            )
        })
        .collect())
}

/// The GLUE history of every GLUE job, and of a BEAN job that has one, by job id.
async fn glue_histories(
    db: &Db,
    jobs_of: &[Vec<JobInfo>],
) -> Result<HashMap<i32, Vec<GlueVersion>>, ServiceError> {
    let mut histories = HashMap::new();
    for job in jobs_of.iter().flatten() {
        let versions: Vec<GlueVersion> = db.glues_of_job(job.id).await?.iter().map(version_of).collect();
        if job.glue_type != GlueType::Bean.name() || !versions.is_empty() {
            histories.insert(job.id, versions);
        }
    }
    Ok(histories)
}

/// A group as the document holds it, without its jobs.
fn exported_executor(group: &JobGroup) -> Executor {
    let address_type = group.address_type.declared();
    Executor {
        app_name: group.app_name.clone(),
        title: group.title.clone(),
        address_type,
        addresses: match address_type {
            AddressType::Auto => vec![],
            _ => group
                .address_list
                .as_deref()
                .map(crate::domain::java_split)
                .unwrap_or_default()
                .into_iter()
                .map(str::to_string)
                .collect(),
        },
        jobs: vec![],
        line: None,
    }
}

fn child_ids(job: &JobInfo) -> Vec<i32> {
    job.child_jobid
        .as_deref()
        .map(crate::domain::java_split)
        .unwrap_or_default()
        .iter()
        .filter_map(|id| id.trim().parse().ok())
        .collect()
}

fn exported_job(job: &JobInfo, key_of: &HashMap<i32, String>) -> Job {
    let text = |value: &Option<String>| value.clone().unwrap_or_default();
    Job {
        key: None,
        description: job.job_desc.clone(),
        author: text(&job.author),
        alarm_email: text(&job.alarm_email),
        schedule_type: job.schedule_type.clone(),
        schedule_conf: text(&job.schedule_conf),
        misfire_strategy: job.misfire_strategy.clone(),
        route_strategy: text(&job.executor_route_strategy),
        handler: text(&job.executor_handler),
        param: text(&job.executor_param),
        block_strategy: text(&job.executor_block_strategy),
        timeout: job.executor_timeout,
        fail_retry_count: job.executor_fail_retry_count,
        // A child deleted since is left out: it could not be applied anywhere.
        child_jobs: child_ids(job).iter().filter_map(|id| key_of.get(id).cloned()).collect(),
        glue_type: job.glue_type.clone(),
        glue_source: text(&job.glue_source),
        glue_remark: text(&job.glue_remark),
        trigger_status: Some(job.trigger_status.code()),
        glue_history: None,
        line: None,
    }
}

/// A stored GLUE history row as the document holds it.
fn version_of(row: &LogGlue) -> GlueVersion {
    let time = |t: Option<chrono::NaiveDateTime>| t.map(|t| t.format(document::TIME_FORMAT).to_string());
    GlueVersion {
        glue_type: row.glue_type.clone(),
        glue_source: row.glue_source.clone(),
        glue_remark: row.glue_remark.clone(),
        add_time: time(row.add_time),
        update_time: time(row.update_time),
    }
}

/// A document's version as the GLUE IDE's save writes its row.
fn row_of(job_id: i32, version: &GlueVersion) -> LogGlue {
    let time = |t: &Option<String>| t.as_deref().and_then(document::parse_time);
    LogGlue {
        id: 0,
        job_id,
        glue_type: version.glue_type.clone(),
        glue_source: version.glue_source.clone(),
        glue_remark: version.glue_remark.clone(),
        add_time: time(&version.add_time),
        update_time: time(&version.update_time),
    }
}

/// [`apply`] for a console or API request (see [`apply_audited`]).
pub async fn apply_for(
    state: &ServiceContext,
    user: &LoginUser,
    doc: &Document,
    options: ApplyOptions,
) -> Result<Plan, ServiceError> {
    apply_audited(&Setting::of(state), &state.audit, user, doc, options).await
}

/// [`apply`]; unless a dry run, an audit event names the document's executors, then its workflows, and
/// carries the plan.
pub async fn apply_audited(
    setting: &Setting<'_>,
    audit: &Audit,
    user: &LoginUser,
    doc: &Document,
    options: ApplyOptions,
) -> Result<Plan, ServiceError> {
    let result = apply(setting, user, doc, options).await;
    if options.dry_run {
        return result;
    }
    let names = doc.executors.iter().map(|e| e.app_name.as_str());
    let names: Vec<&str> = names.chain(doc.workflows.iter().map(|w| w.name.as_str())).collect();
    let target = Target::named("document", names.join(","));
    let plan = |plan: &Plan| {
        Some(
            serde_json::json!({ "plan": { "before": null, "after": plan }, "prune": { "before": null, "after": options.prune } }),
        )
    };
    audit.done(user, EventKind::CodeApply, target, plan, result)
}

/// Plans the document against the database and, unless `dry_run`, carries the plan out; one transaction
/// under the schedule lock either way, so a refused document changes nothing.
pub async fn apply(
    setting: &Setting<'_>,
    user: &LoginUser,
    doc: &Document,
    options: ApplyOptions,
) -> Result<Plan, ServiceError> {
    check_entries(setting, user, doc)?;
    let db = setting.db;
    // Read before the lock: SQLite's pool has no second connection while the lock's transaction writes.
    let live = live_address_lists(db, setting.now_ms).await?;
    loop {
        let tables = db.extension_tables_present().await?;
        let mut lock = db.lock_schedule().await?;
        let groups = lock.all_groups().await?;
        let mut jobs = Vec::new();
        for group in &groups {
            jobs.extend(lock.jobs_by_group(group.id).await?);
        }
        let workflows = match tables {
            true => stored_workflows(lock.workflows_with_definitions().await?)?,
            false => Vec::new(),
        };
        let i18n = setting.i18n;
        let mut plan = plan::make(doc, &groups, &jobs, &workflows, options.prune).map_err(|e| match e {
            PlanError::Invalid(reason) => ServiceError::Invalid(reason.render(i18n)),
            PlanError::NotFound(reason) => ServiceError::NotFound(reason.render(i18n)),
            PlanError::Conflict(reason) => ServiceError::Conflict(reason.render(i18n)),
        })?;
        let mut histories = HashMap::new();
        for step in &plan.jobs {
            let (Some(id), Some((e, j))) = (step.id, step.source) else { continue };
            if doc.executors[e].jobs[j].glue_history.is_some() {
                histories.insert(id, lock.glues_of_job(id).await?.iter().map(version_of).collect());
            }
        }
        plan::history_diffs(&mut plan, doc, &histories);
        check_permissions(i18n, user, &plan, &jobs, &workflows)?;
        check_workflows(i18n, user, doc, &plan, (&groups, &jobs), &workflows)?;
        for step in plan.workflows.iter().filter(|s| s.action == Action::Delete) {
            let runs = lock.active_runs(step.id.unwrap_or_default()).await?;
            if runs > 0 {
                let name = format!("workflow {:?}", step.workflow);
                let reason = Reason::new("code_error_workflow_busy", &[&name, &runs]);
                return Err(ServiceError::Conflict(reason.render(i18n)));
            }
        }
        if options.dry_run || plan.changes() == 0 {
            // Dropping the lock rolls back: nothing was written.
            return Ok(plan);
        }
        if !tables && !plan.workflows.is_empty() {
            // The workflow tables are made outside the lock's transaction (MySQL commits around a CREATE
            // TABLE), only for a document that passed every check; then the plan is made again on them.
            drop(lock);
            db.ensure_extension_tables().await.map_err(saving::tables_refused)?;
            continue;
        }
        let jobs_by_id: HashMap<i32, &JobInfo> = jobs.iter().map(|j| (j.id, j)).collect();
        let author = user.0.username.as_str();
        let mut writer = Writer { setting, doc, live: &live, workflows: &workflows, author, lock: &mut lock };
        writer.carry_out(&plan, &jobs_by_id).await?;
        lock.commit().await?;
        return Ok(plan);
    }
}

/// The console's checks of every entry, before anything is read: the executor form's, the job form's
/// (add's, which include update's), and the start's refusal of a job without a schedule.
fn check_entries(setting: &Setting<'_>, user: &LoginUser, doc: &Document) -> Result<(), ServiceError> {
    let checks = Checks { i18n: setting.i18n, alarm_channels: setting.alarm_channels, db: setting.db, user };
    for executor in &doc.executors {
        let at = |e: ServiceError| ServiceError::Invalid(format!("{}: {e}", executor.name()));
        group_form(executor).validate(setting.i18n).map_err(at)?;
        // Joined with commas into one column, a blank address or one holding a comma would come back as
        // other addresses than the file's.
        if executor.address_type == AddressType::Manual {
            if let Some(bad) =
                executor.addresses.iter().find(|a| crate::domain::is_blank(Some(a)) || a.contains(','))
            {
                return Err(at(ServiceError::Invalid(format!(
                    "addresses: {bad:?}: {}",
                    setting.i18n.get("jobgroup_field_registryList_unvalid")
                ))));
            }
        }
        for job in &executor.jobs {
            let at = |e: ServiceError| ServiceError::Invalid(format!("{}: {e}", executor.job_name(job)));
            checks.new_job_fields(&job_form(0, job)).map_err(at)?;
            let refuse = |reason: Reason| at(ServiceError::Invalid(reason.render(setting.i18n)));
            if let Some((field, width)) = too_wide(job) {
                return Err(refuse(Reason::new("code_error_too_long", &[&field, &width])));
            }
            check_history(job).map_err(refuse)?;
            match job.trigger_status {
                None | Some(0) => {}
                Some(1) if job.schedule_type == ScheduleType::None.name() => {
                    return Err(at(ServiceError::Invalid(format!(
                        "trigger_status: {}",
                        setting.i18n.get("schedule_type_none_limit_start")
                    ))));
                }
                Some(1) => {}
                Some(other) => return Err(refuse(Reason::new("code_error_trigger_status", &[&other]))),
            }
        }
    }
    for workflow in &doc.workflows {
        let refused = |text: String| Err(ServiceError::Invalid(format!("{}: {text}", workflow.label())));
        match workflow.trigger_status {
            None | Some(0) => {}
            Some(1) if workflow.schedule.kind == ScheduleType::None => {
                return refused(format!(
                    "trigger_status: {}",
                    setting.i18n.get("schedule_type_none_limit_start")
                ));
            }
            Some(1) => {}
            Some(other) => {
                return refused(Reason::new("code_error_trigger_status", &[&other]).render(setting.i18n))
            }
        }
    }
    Ok(())
}

/// The width of `xxl_job_logglue.glue_remark`.
pub const GLUE_REMARK_WIDTH: usize = 128;

/// A document's GLUE history: no more versions than the GLUE IDE keeps, known GLUE types, remarks that
/// fit their column, times as an export writes them.
fn check_history(job: &Job) -> Result<(), Reason> {
    let Some(versions) = &job.glue_history else { return Ok(()) };
    if versions.len() > GLUE_HISTORY as usize {
        return Err(Reason::new("code_error_history_too_long", &[&versions.len(), &GLUE_HISTORY]));
    }
    for (i, version) in versions.iter().enumerate() {
        let field = |name: &str| format!("glue_history[{i}].{name}");
        if let Some(kind) = version.glue_type.as_deref().filter(|t| GlueType::from_name(t).is_none()) {
            return Err(Reason::new(
                "code_error_not_glue_type",
                &[&field("glue_type"), &format!("{kind:?}")],
            ));
        }
        if version.glue_remark.chars().count() > GLUE_REMARK_WIDTH {
            return Err(Reason::new("code_error_too_long", &[&field("glue_remark"), &GLUE_REMARK_WIDTH]));
        }
        for (name, time) in [("add_time", &version.add_time), ("update_time", &version.update_time)] {
            if let Some(text) = time.as_deref().filter(|t| document::parse_time(t).is_none()) {
                return Err(Reason::new("code_error_bad_time", &[&field(name), &format!("{text:?}")]));
            }
        }
    }
    Ok(())
}

/// The widths of the job columns a document fills with free text (characters, as MySQL's utf8mb4 and
/// PostgreSQL count them): a longer value would fail the insert with a database error instead of a message
/// naming the field. The REST API's document states the same limits.
pub const JOB_TEXT_WIDTHS: [(&str, usize); 7] = [
    ("description", 255),
    ("author", 64),
    ("alarm_email", 255),
    ("schedule_conf", 128),
    ("handler", 255),
    ("param", 512),
    ("glue_remark", 128),
];

/// The first field of `job` wider than its column, with that width.
fn too_wide(job: &Job) -> Option<(&'static str, usize)> {
    let values = [
        &job.description,
        &job.author,
        &job.alarm_email,
        &job.schedule_conf,
        &job.handler,
        &job.param,
        &job.glue_remark,
    ];
    JOB_TEXT_WIDTHS
        .into_iter()
        .zip(values)
        .find(|((_, width), value)| value.chars().count() > *width)
        .map(|(field, _)| field)
}

/// Executors are managed by administrators only; everyone acts only within the groups granted to them,
/// children included (as the console checks a child job id).
fn check_permissions(
    i18n: &I18n,
    user: &LoginUser,
    plan: &Plan,
    jobs: &[JobInfo],
    workflows: &[StoredWorkflow],
) -> Result<(), ServiceError> {
    for step in &plan.executors {
        let at = |e: ServiceError| ServiceError::Forbidden(format!("executor {:?}: {e}", step.app_name));
        if step.action != Action::Unchanged {
            ensure_admin(i18n, user).map_err(at)?;
        }
        if let Some(id) = step.group_id {
            user.ensure_access_with(i18n, id).map_err(at)?;
        }
    }
    let group_of: HashMap<i32, i32> = jobs.iter().map(|j| (j.id, j.job_group)).collect();
    for step in &plan.jobs {
        for child in &step.children {
            let Child::Stored(id) = child else { continue };
            if let Some(group) = group_of.get(id) {
                let at =
                    |e: ServiceError| ServiceError::Forbidden(format!("job {:?}: child_jobs: {e}", step.job));
                user.ensure_access_with(i18n, *group).map_err(at)?;
            }
        }
    }
    // A stored workflow changed or deleted is in a group of the user's; where it goes is the save's check.
    for step in &plan.workflows {
        let Some(stored) = workflows.iter().find(|s| Some(s.row.id) == step.id) else { continue };
        if step.action != Action::Unchanged {
            let at = |e: ServiceError| ServiceError::Forbidden(format!("workflow {:?}: {e}", step.workflow));
            user.ensure_access_with(i18n, stored.row.job_group).map_err(at)?;
        }
    }
    Ok(())
}

/// A workflow save's checks ([`saving::check_against`]) of every workflow the plan creates or changes:
/// its own rules, then what it names, against what the apply leaves behind (the executors, jobs and
/// workflows it creates included, under ids no stored row has). Every problem of every workflow at once,
/// each naming its workflow, node and field.
fn check_workflows(
    i18n: &I18n,
    user: &LoginUser,
    doc: &Document,
    plan: &Plan,
    (groups, jobs): (&[JobGroup], &[JobInfo]),
    stored: &[StoredWorkflow],
) -> Result<(), ServiceError> {
    let ids = Ids::planned(plan, groups, jobs);
    let mut saved = Vec::new();
    for step in plan.workflows.iter().filter(|s| s.action != Action::Unchanged) {
        let Some(w) = step.source else { continue };
        let def =
            step.definition(&doc.workflows[w], &ids).map_err(|r| ServiceError::Invalid(r.render(i18n)))?;
        saved.push((step, &doc.workflows[w], def));
    }
    if saved.is_empty() {
        return Ok(());
    }
    let mut known = references(plan, &ids, (groups, jobs), stored, &saved);
    // What runs each workflow, as the apply leaves them: a parent left as it was still counts its levels.
    let refs: HashMap<String, Vec<String>> =
        known.workflows.iter().map(|(name, w)| (name.clone(), w.sub_workflows.clone())).collect();
    let mut problems = Vec::new();
    for (step, workflow, def) in &saved {
        let mut access = |group| user.ensure_access_with(i18n, group);
        known.above = nesting::ancestors(&def.name, &refs);
        let checked = validate(def)
            .map_err(ServiceError::Definition)
            .and_then(|()| saving::check_against(def, step.id, &known, &mut access));
        match checked {
            Ok(()) => {}
            Err(ServiceError::Definition(errors)) => problems.extend(workflows::problems(workflow, &errors)),
            Err(ServiceError::Forbidden(e)) => {
                return Err(ServiceError::Forbidden(format!("{}: {e}", workflow.label())));
            }
            Err(other) => return Err(other),
        }
    }
    const SHOWN: usize = 5;
    match problems.len() {
        0 => Ok(()),
        n => {
            let more = if n > SHOWN { format!("; and {} more", n - SHOWN) } else { String::new() };
            Err(ServiceError::Invalid(format!("{}{more}", problems[..n.min(SHOWN)].join("; "))))
        }
    }
}

/// What the workflows `saved` may name once the apply is done: the stored groups, jobs and workflows, less
/// what prune deletes, with what the plan creates (under `ids`), the workflows as `saved` defines them.
fn references(
    plan: &Plan,
    ids: &Ids,
    (groups, jobs): (&[JobGroup], &[JobInfo]),
    stored: &[StoredWorkflow],
    saved: &[(&WorkflowStep, &Workflow, Definition)],
) -> References {
    let deleted_jobs: Vec<i32> =
        plan.jobs.iter().filter(|s| s.action == Action::Delete).filter_map(|s| s.id).collect();
    let mut known = References::default();
    known.groups.extend(groups.iter().map(|g| g.id));
    known.groups.extend(plan.executors.iter().map(|s| ids.executor(s.executor)));
    known.jobs.extend(jobs.iter().filter(|j| !deleted_jobs.contains(&j.id)).map(|j| (j.id, j.job_group)));
    for (k, step) in plan.jobs.iter().enumerate().filter(|(_, s)| s.action == Action::Create) {
        let Some((e, _)) = step.source else { continue };
        known.jobs.insert(ids.job(Child::Created(k)), ids.executor(e));
    }
    let named = |id: Option<i64>, def: &Definition| NamedWorkflow {
        id,
        job_group: def.job_group,
        sub_workflows: nesting::sub_workflows(def).map(|(_, name)| name.to_string()).collect(),
    };
    for workflow in stored {
        let deleted =
            plan.workflows.iter().any(|s| s.action == Action::Delete && s.id == Some(workflow.row.id));
        if !deleted {
            known
                .workflows
                .insert(workflow.row.name.clone(), named(Some(workflow.row.id), &workflow.definition));
        }
    }
    for (step, _, def) in saved {
        known.workflows.insert(def.name.clone(), named(step.id, def));
    }
    known
}

fn group_form(executor: &Executor) -> GroupForm {
    GroupForm {
        id: 0,
        appname: Some(executor.app_name.clone()),
        title: Some(executor.title.clone()),
        // 0 or 1: a document's type is auto or manual.
        address_type: executor.address_type.declared().code() as i8,
        address_list: Some(plan::address_list(executor)),
    }
}

/// The job dialog's form for a document job, every field sent as the console's dialog sends it.
fn job_form(job_group: i32, job: &Job) -> JobForm {
    JobForm {
        id: 0,
        job_group,
        job_desc: Some(job.description.clone()),
        author: Some(job.author.clone()),
        alarm_email: Some(job.alarm_email.clone()),
        schedule_type: Some(job.schedule_type.clone()),
        schedule_conf: Some(job.schedule_conf.clone()),
        misfire_strategy: Some(job.misfire_strategy.clone()),
        executor_route_strategy: Some(job.route_strategy.clone()),
        executor_handler: Some(job.handler.clone()),
        executor_param: Some(job.param.clone()),
        executor_block_strategy: Some(job.block_strategy.clone()),
        executor_timeout: job.timeout,
        executor_fail_retry_count: job.fail_retry_count,
        child_job_id: None,
        glue_type: Some(job.glue_type.clone()),
        glue_source: Some(job.glue_source.clone()),
        glue_remark: Some(job.glue_remark.clone()),
    }
}

/// Carries a plan out inside the lock's transaction.
struct Writer<'a, 'b> {
    setting: &'a Setting<'b>,
    doc: &'a Document,
    /// The live addresses of automatic executors, by AppName.
    live: &'a HashMap<String, String>,
    /// The stored workflows the plan was made with.
    workflows: &'a [StoredWorkflow],
    /// Who saves the workflow versions written.
    author: &'a str,
    lock: &'a mut ScheduleLock,
}

impl Writer<'_, '_> {
    async fn carry_out(&mut self, plan: &Plan, stored: &HashMap<i32, &JobInfo>) -> Result<(), ServiceError> {
        let group_ids = self.write_groups(plan).await?;
        // Jobs first without the children this apply creates; their ids are known once all are written.
        let mut ids = vec![0; plan.jobs.len()];
        let mut written = Vec::with_capacity(plan.jobs.len());
        for (index, step) in plan.jobs.iter().enumerate() {
            let row = self.write_job(step, &group_ids, &ids, stored).await?;
            if let Some(row) = &row {
                ids[index] = row.id;
            }
            written.push(row);
        }
        for (step, row) in plan.jobs.iter().zip(written) {
            let Some(mut row) = row else { continue };
            let children = Some(child_list(&step.children, &ids, &step.job)?);
            if step.children.iter().any(|c| matches!(c, Child::Created(_))) && row.child_jobid != children {
                row.child_jobid = children;
                self.lock.update_job(&row).await?;
            }
        }
        let ids = Ids::written(group_ids, ids);
        for step in &plan.workflows {
            self.write_workflow(step, &ids).await?;
        }
        Ok(())
    }

    /// Deletes, creates or updates the workflow of one step as a workflow's delete and save do, then sets
    /// its schedule state as its start and stop do.
    async fn write_workflow(&mut self, step: &WorkflowStep, ids: &Ids) -> Result<(), ServiceError> {
        let Some(w) = step.source else {
            return match (step.action, step.id) {
                (Action::Delete, Some(id)) => match self.lock.delete_workflow(id).await {
                    Ok(_) => Ok(()),
                    Err(busy @ StorageError::WorkflowBusy { .. }) => {
                        Err(ServiceError::Conflict(format!("workflow {:?}: {busy}", step.workflow)))
                    }
                    Err(e) => Err(e.into()),
                },
                _ => Ok(()),
            };
        };
        let workflow = &self.doc.workflows[w];
        let at = |e: ServiceError| at_entry(&workflow.label(), e);
        let i18n = self.setting.i18n;
        let def = step.definition(workflow, ids).map_err(|r| ServiceError::Invalid(r.render(i18n)))?;
        let stored = step.id.and_then(|id| self.workflows.iter().find(|s| s.row.id == id));
        let (id, status) = match (step.action, stored) {
            (Action::Create, _) => {
                (self.save_workflow(None, &def, false).await.map_err(at)?, TriggerStatus::Stopped.code())
            }
            (Action::Update, Some(current)) => {
                if def != current.definition {
                    // A workflow the file stops need not keep a schedule meanwhile.
                    let keeps_running = workflow.trigger_status != Some(TriggerStatus::Stopped.code());
                    self.save_workflow(Some(current), &def, keeps_running).await.map_err(at)?;
                }
                (current.row.id, current.row.trigger_status)
            }
            // Unchanged: nothing to write.
            _ => return Ok(()),
        };
        self.set_workflow_status(id, status, &saving::head(&def), workflow.trigger_status).await.map_err(at)
    }

    /// Saves `def` as a new workflow's version 1, or as the version after `current`'s, as a save does
    /// (with `reschedule`, a running workflow whose schedule it changes is rescheduled); the workflow's id.
    async fn save_workflow(
        &mut self,
        current: Option<&StoredWorkflow>,
        def: &Definition,
        reschedule: bool,
    ) -> Result<i64, ServiceError> {
        let (now, author) = (self.setting.now_ms, Some(self.author));
        let (head, text) = (saving::head(def), saving::stored_text(def)?);
        let Some(current) = current else {
            return self.lock.insert_workflow(&head, &text, author, now).await.map_err(saving::name_taken);
        };
        let row = &current.row;
        let rescheduled = match reschedule {
            true => saving::rescheduled(&self.starting(), row, def)?,
            false => None,
        };
        let saved = self.lock.save_workflow_version(row.id, row.current_version, &head, &text, author, now);
        if !saved.await.map_err(saving::name_taken)? {
            return Err(ServiceError::Conflict(
                "another save made a new version of the workflow meanwhile: apply the file again".into(),
            ));
        }
        if let Some(schedule) = rescheduled {
            self.lock.set_workflow_schedule(row.id, &schedule, now).await?;
        }
        Ok(row.id)
    }

    /// Schedules or stops workflow `id`, whose state is `status` and schedule `head`'s, as `wanted` says
    /// (`None` leaves it), as a start and a stop do.
    async fn set_workflow_status(
        &mut self,
        id: i64,
        status: i16,
        head: &WorkflowHead,
        wanted: Option<i16>,
    ) -> Result<(), ServiceError> {
        let (status, next) = match wanted {
            Some(wanted) if wanted == status => return Ok(()),
            Some(1) => {
                let next = self.starting().next_fire(&head.schedule_type, head.schedule_conf.as_deref())?;
                (TriggerStatus::Running, next)
            }
            Some(0) => (TriggerStatus::Stopped, 0),
            _ => return Ok(()),
        };
        let schedule = WorkflowSchedule {
            trigger_status: status.code(),
            schedule_type: head.schedule_type.clone(),
            schedule_conf: head.schedule_conf.clone(),
            misfire_strategy: head.misfire_strategy.clone(),
            trigger_next_time: next,
            trigger_last_time: 0,
        };
        self.lock.set_workflow_schedule(id, &schedule, self.setting.now_ms).await?;
        Ok(())
    }

    /// When the apply starts a schedule.
    fn starting(&self) -> Starting<'_> {
        Starting { i18n: self.setting.i18n, now_ms: self.setting.now_ms, zone: CRON_ZONE }
    }

    /// Creates and updates the executors' groups; their ids, by position in the document.
    async fn write_groups(&mut self, plan: &Plan) -> Result<Vec<i32>, ServiceError> {
        let now = self.setting.db.datetime(self.setting.now_ms);
        let mut group_ids = vec![0; self.doc.executors.len()];
        for step in &plan.executors {
            let executor = &self.doc.executors[step.executor];
            // An automatic group's addresses are its live registrations, as the console's update takes them.
            let address_list = match executor.address_type {
                AddressType::Auto => self.live.get(&executor.app_name).cloned(),
                _ => Some(plan::address_list(executor)),
            };
            let group = JobGroup {
                id: step.group_id.unwrap_or(0),
                app_name: executor.app_name.clone(),
                title: executor.title.clone(),
                address_type: executor.address_type,
                address_list,
                update_time: Some(now),
            };
            group_ids[step.executor] = match step.action {
                Action::Create => self.lock.insert_group(&group).await?,
                Action::Update => {
                    self.lock.update_group(&group).await?;
                    group.id
                }
                Action::Unchanged | Action::Delete => group.id,
            };
        }
        Ok(group_ids)
    }

    /// Deletes, creates or updates the job of one step, with the children whose ids are known so far
    /// (`ids`, by step); the row written, `None` when nothing was.
    async fn write_job(
        &mut self,
        step: &JobStep,
        group_ids: &[i32],
        ids: &[i32],
        stored: &HashMap<i32, &JobInfo>,
    ) -> Result<Option<JobInfo>, ServiceError> {
        let Some((e, j)) = step.source else {
            if let Some(id) = step.id {
                self.lock.delete_job(id).await?;
            }
            return Ok(None);
        };
        let job = &self.doc.executors[e].jobs[j];
        let form = job_form(group_ids[e], job);
        let children = child_list(&step.children, ids, &step.job)?;
        match (step.action, step.id.and_then(|id| stored.get(&id))) {
            (Action::Create, _) => {
                let now = self.setting.db.datetime(self.setting.now_ms);
                let glue_source =
                    super::jobs::stored_glue_source(&form.glue_type, form.glue_source.as_deref());
                let mut row = new_job(form, job.glue_type.clone(), glue_source, Some(children), now);
                self.set_status(&mut row, job.trigger_status, &step.job)?;
                row.id = self.lock.insert_job(&row).await?;
                self.write_history(row.id, job).await?;
                Ok(Some(row))
            }
            (Action::Update, Some(current)) => {
                let mut row = (*current).clone();
                let history_only = step.diffs.iter().all(|d| d.field == plan::GLUE_HISTORY_FIELD);
                if !history_only {
                    self.update_row(&mut row, job, form, children, &step.job).await?;
                    self.lock.update_job(&row).await?;
                }
                if step.diffs.iter().any(|d| d.field == plan::GLUE_HISTORY_FIELD) {
                    self.lock.delete_glues_of_job(row.id).await?;
                    self.write_history(row.id, job).await?;
                }
                Ok(Some(row))
            }
            // Unchanged: nothing to write, and no child refers to it as created.
            _ => Ok(None),
        }
    }

    /// The document's GLUE history of a job that has none (any longer), oldest first, so that the ids
    /// order the versions as the document does.
    async fn write_history(&mut self, job_id: i32, job: &Job) -> Result<(), ServiceError> {
        for version in job.glue_history.iter().flatten().rev() {
            self.lock.save_glue(&row_of(job_id, version), GLUE_HISTORY).await?;
        }
        Ok(())
    }

    /// The update form's fields, then the GLUE source as the GLUE IDE saves it (with a history version,
    /// unless the document declares the history), then the running state as start and stop set it.
    async fn update_row(
        &mut self,
        row: &mut JobInfo,
        job: &Job,
        form: JobForm,
        children: String,
        key: &str,
    ) -> Result<(), ServiceError> {
        let (now_ms, now) = (self.setting.now_ms, self.setting.db.datetime(self.setting.now_ms));
        let glue_source = super::jobs::stored_glue_source(&form.glue_type, form.glue_source.as_deref());
        let glue_remark = form.glue_remark.clone();
        write_form(row, form, Some(children), now_ms, now, CRON_ZONE)
            .map_err(|()| self.invalid_schedule(key, "schedule_conf"))?;
        let stored_remark = row.glue_remark.as_deref().unwrap_or_default();
        if row.glue_source.as_deref().unwrap_or_default() != glue_source
            || stored_remark != glue_remark.as_deref().unwrap_or_default()
        {
            row.glue_source = Some(glue_source);
            row.glue_remark = glue_remark;
            row.glue_updatetime = Some(now);
            if row.glue_type != GlueType::Bean.name() && job.glue_history.is_none() {
                self.lock.save_glue(&LogGlue::of_job(row, now), GLUE_HISTORY).await?;
            }
        }
        self.set_status(row, job.trigger_status, key)
    }

    fn set_status(&self, row: &mut JobInfo, status: Option<i16>, key: &str) -> Result<(), ServiceError> {
        match status.map(TriggerStatus::from) {
            Some(TriggerStatus::Running) if row.trigger_status != TriggerStatus::Running => {
                let from = self.setting.now_ms + START_DELAY_MS;
                let Ok(Some(next)) =
                    next_time(&row.schedule_type, row.schedule_conf.as_deref(), from, CRON_ZONE)
                else {
                    return Err(self.invalid_schedule(key, "trigger_status"));
                };
                (row.trigger_status, row.trigger_last_time, row.trigger_next_time) =
                    (TriggerStatus::Running, 0, next);
            }
            Some(TriggerStatus::Stopped) if row.trigger_status != TriggerStatus::Stopped => {
                (row.trigger_status, row.trigger_last_time, row.trigger_next_time) =
                    (TriggerStatus::Stopped, 0, 0)
            }
            _ => {}
        }
        Ok(())
    }

    /// A schedule with no next fire time, as start and update refuse it.
    fn invalid_schedule(&self, key: &str, field: &str) -> ServiceError {
        let i18n = self.setting.i18n;
        ServiceError::Invalid(format!(
            "job {key:?}: {field}: {}{}",
            i18n.get("schedule_type"),
            i18n.get("system_unvalid")
        ))
    }
}

/// A refusal of the entry `entry` names it first.
fn at_entry(entry: &str, error: ServiceError) -> ServiceError {
    match error {
        ServiceError::Invalid(e) => ServiceError::Invalid(format!("{entry}: {e}")),
        ServiceError::Conflict(e) => ServiceError::Conflict(format!("{entry}: {e}")),
        ServiceError::Unavailable(e) => ServiceError::Unavailable(format!("{entry}: {e}")),
        other => other,
    }
}

/// The width of `xxl_job_info.child_jobid`.
const CHILD_LIST_WIDTH: usize = 255;

/// `child_jobid` as the console stores it: ids joined by commas, with the ids of jobs created so far;
/// refused, naming the job, when the ids do not fit the column.
fn child_list(children: &[Child], ids: &[i32], key: &str) -> Result<String, ServiceError> {
    let list = children
        .iter()
        .map(|c| match c {
            Child::Stored(id) => *id,
            Child::Created(index) => ids[*index],
        })
        .filter(|id| *id > 0)
        .map(|id| id.to_string())
        .collect::<Vec<_>>()
        .join(",");
    if list.len() > CHILD_LIST_WIDTH {
        return Err(ServiceError::Invalid(format!(
            "job {key:?}: child_jobs: too many; their ids take more than {CHILD_LIST_WIDTH} characters"
        )));
    }
    Ok(list)
}
