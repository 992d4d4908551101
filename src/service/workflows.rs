//! Workflow definitions (issue 46): list, read, create, change, compare, restore, schedule and delete them.
//! A definition is checked by its own rules ([`validate`]), then against the database: its executor group,
//! the jobs and sub-workflows it names, and how workflows nest. A user acts on the workflows of his
//! executor groups, and may name only jobs and sub-workflows of his groups, as he may only touch their jobs.
//!
//! Reads never create the workflow tables: on a database without them there is no workflow. The first
//! write does ([`crate::storage::Db::ensure_extension_tables`]).

use super::audit::{changes, EventKind, Target};
use super::jobs::START_DELAY_MS;
use super::{LoginUser, ServiceContext, ServiceError};
use crate::domain::codes::TriggerStatus;
use crate::domain::schedule::{next_time, ScheduleType};
use crate::domain::workflow::nesting::{self, Nesting};
use crate::domain::workflow::{
    diff, validate, Definition, DefinitionDiff, DefinitionError, NodeKind, Problem,
};
use crate::i18n::I18n;
use crate::storage::{
    LastRun, StorageError, VersionInfo, Workflow, WorkflowFilter, WorkflowHead, WorkflowSchedule,
    WorkflowVersion,
};
use crate::time::Zone;
use serde::Serialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet, VecDeque};

/// The workflow list's filters; `job_group` 0 means every permitted group.
#[derive(Debug, Clone, Default)]
pub struct WorkflowQuery {
    pub job_group: i32,
    /// Names containing this.
    pub name: Option<String>,
    /// Whose latest run is in this state, or that never ran.
    pub last_run: Option<LastRun>,
}

/// What a save answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Saved {
    /// The workflow.
    pub id: i64,
    /// Its current version after the save.
    pub version: i32,
    /// Whether the save made that version: false when the document was the current version's already.
    pub changed: bool,
}

/// One page of the workflows the user may see, and how many match.
pub async fn list(
    state: &ServiceContext,
    user: &LoginUser,
    query: WorkflowQuery,
    offset: i64,
    limit: i64,
) -> Result<(Vec<Workflow>, i64), ServiceError> {
    let groups = if query.job_group > 0 {
        user.ensure_access(state, query.job_group)?;
        Some(vec![query.job_group])
    } else {
        user.permitted_groups()
    };
    if !state.db.extension_tables_present().await? {
        return Ok((Vec::new(), 0));
    }
    let filter = WorkflowFilter { groups, name: query.name, last_run: query.last_run };
    Ok(state.db.workflow_page(&filter, offset.max(0), limit.max(0)).await?)
}

/// The workflow of `id` if the user may act on its group; unknown ids are refused.
pub async fn get(state: &ServiceContext, user: &LoginUser, id: i64) -> Result<Workflow, ServiceError> {
    let found = match state.db.extension_tables_present().await? {
        true => state.db.load_workflow(id).await?,
        false => None,
    };
    let workflow = found.ok_or_else(unknown_workflow)?;
    user.ensure_access(state, workflow.job_group)?;
    Ok(workflow)
}

/// A workflow with the definition of its current version.
pub async fn get_current(
    state: &ServiceContext,
    user: &LoginUser,
    id: i64,
) -> Result<(Workflow, Definition), ServiceError> {
    let workflow = get(state, user, id).await?;
    let current = load_version(state, &workflow, workflow.current_version).await?;
    Ok((workflow, stored_definition(&current)?))
}

/// The refusal of an id that names no workflow.
pub fn unknown_workflow() -> ServiceError {
    ServiceError::NotFound("no workflow has this id".to_string())
}

/// A workflow's versions, newest first.
pub async fn versions(
    state: &ServiceContext,
    user: &LoginUser,
    id: i64,
) -> Result<(Workflow, Vec<VersionInfo>), ServiceError> {
    let workflow = get(state, user, id).await?;
    let versions = state.db.workflow_versions(id).await?;
    Ok((workflow, versions))
}

/// One version of a workflow, with its definition; and the workflow.
pub async fn version(
    state: &ServiceContext,
    user: &LoginUser,
    id: i64,
    version: i32,
) -> Result<(Workflow, WorkflowVersion, Definition), ServiceError> {
    let workflow = get(state, user, id).await?;
    let found = load_version(state, &workflow, version).await?;
    let definition = stored_definition(&found)?;
    Ok((workflow, found, definition))
}

/// What changed from version `from` to version `to`: by default from the one before `to`, to the current.
/// Answers the two versions compared and their differences.
pub async fn compare(
    state: &ServiceContext,
    user: &LoginUser,
    id: i64,
    from: Option<i32>,
    to: Option<i32>,
) -> Result<(i32, i32, DefinitionDiff), ServiceError> {
    let workflow = get(state, user, id).await?;
    let to = to.unwrap_or(workflow.current_version);
    let from = from.unwrap_or(to.saturating_sub(1));
    let old = stored_definition(&load_version(state, &workflow, from).await?)?;
    let new = stored_definition(&load_version(state, &workflow, to).await?)?;
    Ok((from, to, diff(&old, &new)))
}

async fn load_version(
    state: &ServiceContext,
    workflow: &Workflow,
    version: i32,
) -> Result<WorkflowVersion, ServiceError> {
    state
        .db
        .load_workflow_version(workflow.id, version)
        .await?
        .ok_or_else(|| ServiceError::NotFound(format!("workflow {} has no version {version}", workflow.id)))
}

/// A stored version's definition.
fn stored_definition(version: &WorkflowVersion) -> Result<Definition, ServiceError> {
    read_stored(version.workflow_id, version.version, &version.definition)
}

/// The stored text of version `version` of workflow `id`: one that does not read (written by another
/// program) is the server's fault.
pub fn read_stored(id: i64, version: i32, text: &str) -> Result<Definition, ServiceError> {
    serde_json::from_str(text).map_err(|e| {
        tracing::error!("workflow {id}, version {version}: the stored definition does not read: {e}");
        ServiceError::Failed
    })
}

/// The document sent as a definition. A fault names where it is as a path (`nodes[2].retry.count`) and,
/// inside a node, the node.
fn parse(document: &Value) -> Result<Definition, ServiceError> {
    serde_path_to_error::deserialize(document).map_err(|e| {
        // The path leads to the object a missing field is missing from (`.` for the document): the field
        // itself is named in serde's message only.
        let at = Some(e.path().to_string()).filter(|path| path != ".");
        let missing = e
            .inner()
            .to_string()
            .strip_prefix("missing field `")
            .and_then(|m| m.strip_suffix('`'))
            .map(str::to_string);
        let field = match (at, missing) {
            (Some(at), Some(missing)) => format!("{at}.{missing}"),
            (at, missing) => at.or(missing).unwrap_or_default(),
        };
        let node = field
            .strip_prefix("nodes[")
            .and_then(|rest| rest.split(']').next())
            .and_then(|i| i.parse::<usize>().ok())
            .and_then(|i| document["nodes"][i]["name"].as_str())
            .map(str::to_string);
        let problem = Problem::Unreadable(e.into_inner().to_string());
        ServiceError::Definition(vec![DefinitionError { node, field, problem }])
    })
}

/// The checks a save makes of `document` (as workflow `id` when it exists), without saving it: the
/// editor's validation as the user types. Its definition when it passes.
pub async fn check_document(
    state: &ServiceContext,
    user: &LoginUser,
    document: &Value,
    id: Option<i64>,
) -> Result<Definition, ServiceError> {
    if let Some(id) = id {
        get(state, user, id).await?;
    }
    let def = parse(document)?;
    check(state, user, &def, id).await?;
    Ok(def)
}

/// A save's answer, and the versions it went between, for the audit trail.
struct Saving {
    saved: Saved,
    name: String,
    before: Option<(i32, Definition)>,
    after: (i32, Definition),
    restored_from: Option<i32>,
}

/// A version as the audit trail records it: its number and its document's fields.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Audited<'a> {
    version: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    restored_from: Option<i32>,
    #[serde(flatten)]
    definition: &'a Definition,
}

/// Records a save (or its refusal) on the workflow `id` named `name`, and hands its answer back.
fn audit_save(
    state: &ServiceContext,
    user: &LoginUser,
    kind: EventKind,
    (id, name): (i64, Option<String>),
    result: Result<Saving, ServiceError>,
) -> Result<Saved, ServiceError> {
    let target = match &result {
        Ok(saving) => Target::new("workflow", saving.saved.id, Some(saving.name.clone())),
        Err(_) => Target::new("workflow", id, name),
    };
    let audited = |s: &Saving| {
        let before = s.before.as_ref().map(|(version, definition)| Audited {
            version: *version,
            restored_from: None,
            definition,
        });
        let (version, definition) = (s.after.0, &s.after.1);
        changes(before.as_ref(), Some(&Audited { version, restored_from: s.restored_from, definition }))
    };
    state.audit.done(user, kind, target, audited, result).map(|saving| saving.saved)
}

/// The name a document gives itself, for the audit of a refusal.
fn named(document: &Value) -> Option<String> {
    document.get("name").and_then(Value::as_str).map(str::to_string)
}

/// Creates a workflow from a definition document, stopped, as its version 1.
pub async fn create(
    state: &ServiceContext,
    user: &LoginUser,
    document: Value,
) -> Result<Saved, ServiceError> {
    let result = insert(state, user, &document).await;
    audit_save(state, user, EventKind::WorkflowAdd, (0, named(&document)), result)
}

async fn insert(state: &ServiceContext, user: &LoginUser, document: &Value) -> Result<Saving, ServiceError> {
    let def = parse(document)?;
    check(state, user, &def, None).await?;
    state.db.ensure_extension_tables().await.map_err(tables_refused)?;
    let text = stored_text(&def)?;
    let now = state.clock.now_ms();
    let id = state
        .db
        .insert_workflow(&head(&def), &text, Some(&user.0.username), now)
        .await
        .map_err(name_taken)?;
    let saved = Saved { id, version: 1, changed: true };
    Ok(Saving { saved, name: def.name.clone(), before: None, after: (1, def), restored_from: None })
}

/// Saves a document as the next version of workflow `id`, unless it is the current version's already.
/// With `base_version`, only over that version: another one is current when someone saved meanwhile.
pub async fn update(
    state: &ServiceContext,
    user: &LoginUser,
    id: i64,
    document: Value,
    base_version: Option<i32>,
) -> Result<Saved, ServiceError> {
    let result = async {
        let (workflow, current) = get_current(state, user, id).await?;
        let def = parse(&document)?;
        save_over(state, user, workflow, current, def, base_version).await
    }
    .await;
    audit_save(state, user, EventKind::WorkflowUpdate, (id, named(&document)), result)
}

/// Saves the definition of an older version as the next version (when it differs from the current one),
/// after the checks of any save: what it names must still be there.
pub async fn restore(
    state: &ServiceContext,
    user: &LoginUser,
    id: i64,
    version: i32,
) -> Result<Saved, ServiceError> {
    let result = async {
        let (workflow, current) = get_current(state, user, id).await?;
        let old = stored_definition(&load_version(state, &workflow, version).await?)?;
        let saving = save_over(state, user, workflow, current, old, None).await?;
        Ok(Saving { restored_from: saving.saved.changed.then_some(version), ..saving })
    }
    .await;
    audit_save(state, user, EventKind::WorkflowRestore, (id, None), result)
}

/// Saves `def` as the version after `workflow`'s current one (whose definition is `current`), unless it
/// is the same; refused when `base` is given and is not the current version.
async fn save_over(
    state: &ServiceContext,
    user: &LoginUser,
    workflow: Workflow,
    current: Definition,
    def: Definition,
    base: Option<i32>,
) -> Result<Saving, ServiceError> {
    let version = workflow.current_version;
    if let Some(base) = base.filter(|&base| base != version) {
        return Err(ServiceError::Conflict(format!(
            "the workflow's current version is {version}, not the baseVersion {base}: read it again and \
             apply your change to it"
        )));
    }
    if def == current {
        let saved = Saved { id: workflow.id, version, changed: false };
        let before = Some((version, current.clone()));
        return Ok(Saving {
            saved,
            name: workflow.name,
            before,
            after: (version, current),
            restored_from: None,
        });
    }
    check(state, user, &def, Some(workflow.id)).await?;
    let rescheduled = rescheduled(&Starting::of(state), &workflow, &def)?;
    let now = state.clock.now_ms();
    let text = stored_text(&def)?;
    let author = Some(user.0.username.as_str());
    let won = state
        .db
        .save_workflow_version(workflow.id, version, &head(&def), &text, author, now)
        .await
        .map_err(name_taken)?;
    if !won {
        return Err(ServiceError::Conflict(
            "another save made a new version of the workflow meanwhile: read it again and apply your \
             change to it"
                .to_string(),
        ));
    }
    if let Some(schedule) = rescheduled {
        state.db.set_workflow_schedule(workflow.id, &schedule, now).await?;
    }
    let saved = Saved { id: workflow.id, version: version + 1, changed: true };
    let name = def.name.clone();
    Ok(Saving {
        saved,
        name,
        before: Some((version, current)),
        after: (version + 1, def),
        restored_from: None,
    })
}

/// The columns of a workflow that mirror its definition.
pub fn head(def: &Definition) -> WorkflowHead {
    WorkflowHead {
        name: def.name.clone(),
        job_group: def.job_group,
        schedule_type: def.schedule.kind.name().to_string(),
        schedule_conf: def.schedule.conf.clone(),
        misfire_strategy: def.schedule.misfire.name().to_string(),
    }
}

/// The definition as stored: the document with every default written out, so that versions compare alike.
pub fn stored_text(def: &Definition) -> Result<String, ServiceError> {
    serde_json::to_string(def).map_err(|e| {
        tracing::error!("a workflow definition did not serialize: {e}");
        ServiceError::Failed
    })
}

/// The workflow tables could not be created: the answer says which and what to do, the log also gets the
/// statements to run.
pub fn tables_refused(error: StorageError) -> ServiceError {
    match error {
        StorageError::ExtensionTablesDenied { ref missing, ref reason, .. } => {
            tracing::error!("{error}");
            ServiceError::Unavailable(format!(
                "the workflow tables are missing ({missing}) and the database account may not create them \
                 ({reason}): have them created with the statements `xxl-job-admin ddl` prints"
            ))
        }
        other => other.into(),
    }
}

pub fn name_taken(error: StorageError) -> ServiceError {
    match error {
        taken @ StorageError::WorkflowNameTaken(_) => ServiceError::Conflict(taken.to_string()),
        other => other.into(),
    }
}

/// The checks of a definition about to be saved (as workflow `id` when it exists), against the database.
async fn check(
    state: &ServiceContext,
    user: &LoginUser,
    def: &Definition,
    id: Option<i64>,
) -> Result<(), ServiceError> {
    validate(def).map_err(ServiceError::Definition)?;
    let mut known = references(state, def, id).await?;
    if nesting::sub_workflows(def).next().is_some() && state.db.extension_tables_present().await? {
        let mut refs = stored_sub_workflows(state).await?;
        refs.retain(|name, _| *name != def.name);
        known.above = nesting::ancestors(&def.name, &refs);
    }
    check_against(def, id, &known, &mut |group| user.ensure_access(state, group))
}

/// The sub-workflows each stored workflow's current version names, by workflow name.
async fn stored_sub_workflows(state: &ServiceContext) -> Result<HashMap<String, Vec<String>>, ServiceError> {
    let mut refs = HashMap::new();
    for (workflow, text) in state.db.workflows_with_definitions().await? {
        let def = read_stored(workflow.id, workflow.current_version, &text)?;
        refs.insert(workflow.name, nesting::sub_workflows(&def).map(|(_, name)| name.to_string()).collect());
    }
    Ok(refs)
}

/// What a definition's references are checked against: the executor groups, jobs and workflows that
/// exist, as the database holds them (or as an apply will leave them).
#[derive(Debug, Clone, Default)]
pub struct References {
    pub groups: HashSet<i32>,
    /// Each job's executor group, by job id.
    pub jobs: HashMap<i32, i32>,
    /// The workflows by name.
    pub workflows: HashMap<String, NamedWorkflow>,
    /// The longest chain of stored workflows that run the one checked, the top first: its sub-workflows'
    /// levels count from there.
    pub above: Vec<String>,
}

/// A workflow as a sub-workflow node names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedWorkflow {
    /// `None` for one not stored yet.
    pub id: Option<i64>,
    pub job_group: i32,
    /// The sub-workflows its current version names.
    pub sub_workflows: Vec<String>,
}

/// The jobs `def`'s job nodes run, each once, by id.
pub fn job_ids(def: &Definition) -> Vec<i32> {
    let mut ids: Vec<i32> = def
        .nodes
        .iter()
        .filter_map(|node| match node.kind {
            NodeKind::Job { job_id, .. } => Some(job_id),
            _ => None,
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// What the database holds of the group, the jobs and the sub-workflows `def` names, and of every
/// workflow reachable through them (by their current versions); the workflow saved (`id`) is not read.
async fn references(
    state: &ServiceContext,
    def: &Definition,
    id: Option<i64>,
) -> Result<References, ServiceError> {
    let mut known = References::default();
    if state.db.load_group(def.job_group).await?.is_some() {
        known.groups.insert(def.job_group);
    }
    known.jobs =
        state.db.load_jobs(&job_ids(def)).await?.into_iter().map(|job| (job.id, job.job_group)).collect();
    let mut queue: VecDeque<String> = nesting::sub_workflows(def).map(|(_, name)| name.to_string()).collect();
    if queue.is_empty() || !state.db.extension_tables_present().await? {
        return Ok(known);
    }
    while let Some(name) = queue.pop_front() {
        if name == def.name || known.workflows.contains_key(&name) {
            continue;
        }
        let Some(workflow) = state.db.load_workflow_by_name(&name).await? else { continue };
        let sub_workflows = if Some(workflow.id) == id {
            Vec::new()
        } else {
            let stored = stored_definition(&load_version(state, &workflow, workflow.current_version).await?)?;
            nesting::sub_workflows(&stored).map(|(_, name)| name.to_string()).collect()
        };
        queue.extend(sub_workflows.iter().cloned());
        let named = NamedWorkflow { id: Some(workflow.id), job_group: workflow.job_group, sub_workflows };
        known.workflows.insert(name, named);
    }
    Ok(known)
}

/// The checks of a definition about to be saved (as workflow `id` when it exists) that its own rules
/// ([`validate`]) passed: the right to its group (`access`), then what it names in `known`: its executor group, the job of each job
/// node (in a group `access` allows), the workflow of each sub-workflow node (likewise), and how
/// workflows nest from it. Every problem of the document at once; a group `access` refuses is refused
/// when met.
pub fn check_against(
    def: &Definition,
    id: Option<i64>,
    known: &References,
    access: &mut dyn FnMut(i32) -> Result<(), ServiceError>,
) -> Result<(), ServiceError> {
    access(def.job_group)?;
    let mut errors = Vec::new();
    if !known.groups.contains(&def.job_group) {
        let problem = Problem::UnknownGroup(def.job_group);
        errors.push(DefinitionError { node: None, field: "jobGroup".to_string(), problem });
    }
    for (i, node) in def.nodes.iter().enumerate() {
        let NodeKind::Job { job_id, .. } = node.kind else { continue };
        match known.jobs.get(&job_id) {
            Some(&group) => access(group)?,
            None => errors.push(in_kind(def, i, "jobId", Problem::UnknownJob(job_id))),
        }
    }
    let named: Vec<(usize, &str)> = nesting::sub_workflows(def).collect();
    for &(i, name) in &named {
        match known.workflows.get(name) {
            Some(found) => access(found.job_group)?,
            None => errors.push(in_kind(def, i, "workflow", Problem::UnknownWorkflow(name.to_string()))),
        }
    }
    // Under its stored name, the workflow saved leads to `def`: a chain that reaches it by that name
    // comes back to it.
    let mut refs: HashMap<String, Vec<String>> = known
        .workflows
        .iter()
        .map(|(name, w)| {
            let subs =
                if w.id.is_some() && w.id == id { vec![def.name.clone()] } else { w.sub_workflows.clone() };
            (name.clone(), subs)
        })
        .collect();
    refs.insert(def.name.clone(), named.iter().map(|(_, name)| name.to_string()).collect());
    for &(i, name) in &named {
        let problem = match nesting::check_under(&known.above, &def.name, name, &refs) {
            Ok(()) => continue,
            Err(Nesting::Cycle(cycle)) => Problem::WorkflowCycle(cycle),
            Err(Nesting::TooDeep(chain)) => Problem::NestingTooDeep(chain),
        };
        errors.push(in_kind(def, i, "workflow", problem));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ServiceError::Definition(errors))
    }
}

/// The problem of node `i` of `def` in field `field` of its kind.
fn in_kind(def: &Definition, i: usize, field: &str, problem: Problem) -> DefinitionError {
    DefinitionError {
        node: Some(def.nodes[i].name.clone()),
        field: format!("nodes[{i}].kind.{field}"),
        problem,
    }
}

/// The schedule a running workflow takes on when a new version changes it: from five seconds on, as a
/// started job's. A running workflow keeps a schedule: it is stopped first.
pub fn rescheduled(
    starting: &Starting<'_>,
    workflow: &Workflow,
    def: &Definition,
) -> Result<Option<WorkflowSchedule>, ServiceError> {
    let head = head(def);
    let running = TriggerStatus::from(workflow.trigger_status) == TriggerStatus::Running;
    if !running
        || (workflow.schedule_type == head.schedule_type && workflow.schedule_conf == head.schedule_conf)
    {
        return Ok(None);
    }
    let next = starting.next_fire(&head.schedule_type, head.schedule_conf.as_deref()).map_err(|e| {
        ServiceError::Conflict(format!(
            "the workflow is running, and with this schedule it could not be started ({e}): stop it first"
        ))
    })?;
    Ok(Some(WorkflowSchedule {
        trigger_status: TriggerStatus::Running.code(),
        schedule_type: head.schedule_type,
        schedule_conf: head.schedule_conf,
        misfire_strategy: head.misfire_strategy,
        trigger_next_time: next,
        trigger_last_time: workflow.trigger_last_time,
    }))
}

/// When a schedule is started (now, in the zone cron expressions are evaluated in), and the words of a
/// refusal.
pub struct Starting<'a> {
    pub i18n: &'a I18n,
    pub now_ms: i64,
    pub zone: Zone,
}

impl Starting<'_> {
    fn of(state: &ServiceContext) -> Starting<'_> {
        Starting { i18n: &state.i18n, now_ms: state.clock.now_ms(), zone: state.cron_zone() }
    }

    /// The first fire of a schedule started now: five seconds on at the earliest, outside the current
    /// pre-read window, as a job's. A schedule of type NONE, or that never fires again, cannot be started.
    pub fn next_fire(&self, schedule_type: &str, conf: Option<&str>) -> Result<i64, ServiceError> {
        if matches!(ScheduleType::from_name(schedule_type), None | Some(ScheduleType::None)) {
            return Err(ServiceError::Conflict(
                "a workflow whose schedule type is NONE cannot be started".into(),
            ));
        }
        match next_time(schedule_type, conf, self.now_ms + START_DELAY_MS, self.zone) {
            Ok(Some(next)) => Ok(next),
            Ok(None) => {
                Err(ServiceError::Conflict("the workflow's schedule has no fire time after now".into()))
            }
            Err(e) => Err(ServiceError::Invalid(e.message(self.i18n))),
        }
    }
}

/// Whether a workflow is scheduled and when it fires next, as the audit trail shows a start or a stop.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Scheduling {
    trigger_status: i16,
    trigger_next_time: i64,
}

impl Scheduling {
    fn of(workflow: &Workflow) -> Scheduling {
        Scheduling { trigger_status: workflow.trigger_status, trigger_next_time: workflow.trigger_next_time }
    }
}

/// Schedules a workflow: its first run from five seconds on.
pub async fn start(state: &ServiceContext, user: &LoginUser, id: i64) -> Result<Workflow, ServiceError> {
    let result = async {
        let workflow = get(state, user, id).await?;
        let next =
            Starting::of(state).next_fire(&workflow.schedule_type, workflow.schedule_conf.as_deref())?;
        set_schedule(state, workflow, TriggerStatus::Running, next).await
    }
    .await;
    audit_schedule(state, user, EventKind::WorkflowStart, id, result)
}

/// Unschedules a workflow; its runs go on.
pub async fn stop(state: &ServiceContext, user: &LoginUser, id: i64) -> Result<Workflow, ServiceError> {
    let result = async {
        let workflow = get(state, user, id).await?;
        set_schedule(state, workflow, TriggerStatus::Stopped, 0).await
    }
    .await;
    audit_schedule(state, user, EventKind::WorkflowStop, id, result)
}

/// Writes a workflow's schedule state; the workflow before and after.
async fn set_schedule(
    state: &ServiceContext,
    workflow: Workflow,
    status: TriggerStatus,
    next: i64,
) -> Result<(Workflow, Workflow), ServiceError> {
    let schedule = WorkflowSchedule {
        trigger_status: status.code(),
        schedule_type: workflow.schedule_type.clone(),
        schedule_conf: workflow.schedule_conf.clone(),
        misfire_strategy: workflow.misfire_strategy.clone(),
        trigger_next_time: next,
        trigger_last_time: 0,
    };
    let now = state.clock.now_ms();
    if !state.db.set_workflow_schedule(workflow.id, &schedule, now).await? {
        return Err(unknown_workflow());
    }
    let after = Workflow {
        trigger_status: schedule.trigger_status,
        trigger_next_time: next,
        trigger_last_time: 0,
        update_time: now,
        ..workflow.clone()
    };
    Ok((workflow, after))
}

/// The workflows whose current version names `workflow` in a sub-workflow node, by name.
async fn parents_of(state: &ServiceContext, workflow: &Workflow) -> Result<Vec<String>, ServiceError> {
    let mut parents: Vec<String> = stored_sub_workflows(state)
        .await?
        .into_iter()
        .filter(|(name, subs)| *name != workflow.name && subs.contains(&workflow.name))
        .map(|(name, _)| name)
        .collect();
    parents.sort();
    Ok(parents)
}

fn audit_schedule(
    state: &ServiceContext,
    user: &LoginUser,
    kind: EventKind,
    id: i64,
    result: Result<(Workflow, Workflow), ServiceError>,
) -> Result<Workflow, ServiceError> {
    let name = result.as_ref().ok().map(|(before, _)| before.name.clone());
    let audited = |(before, after): &(Workflow, Workflow)| {
        changes(Some(&Scheduling::of(before)), Some(&Scheduling::of(after)))
    };
    state.audit.done(user, kind, Target::new("workflow", id, name), audited, result).map(|(_, after)| after)
}

/// Deletes a workflow with its versions and finished runs; refused while a run is not over, and while
/// another workflow runs it as a sub-workflow (that node would fail at its next run).
pub async fn remove(state: &ServiceContext, user: &LoginUser, id: i64) -> Result<(), ServiceError> {
    let result = async {
        let (workflow, current) = get_current(state, user, id).await?;
        let parents = parents_of(state, &workflow).await?;
        if !parents.is_empty() {
            return Err(ServiceError::Conflict(format!(
                "workflow {} is a sub-workflow of {}: change or delete those first",
                workflow.name,
                parents.join(", ")
            )));
        }
        match state.db.delete_workflow(id).await {
            Ok(true) => Ok((workflow, current)),
            Ok(false) => Err(unknown_workflow()),
            Err(busy @ StorageError::WorkflowBusy { .. }) => Err(ServiceError::Conflict(busy.to_string())),
            Err(e) => Err(e.into()),
        }
    }
    .await;
    let name = result.as_ref().ok().map(|(workflow, _)| workflow.name.clone());
    let audited = |(workflow, definition): &(Workflow, Definition)| {
        let version = workflow.current_version;
        changes(Some(&Audited { version, restored_from: None, definition }), None)
    };
    state
        .audit
        .done(user, EventKind::WorkflowRemove, Target::new("workflow", id, name), audited, result)
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fault(document: Value) -> (Option<String>, String, String) {
        match parse(&document) {
            Err(ServiceError::Definition(errors)) if errors.len() == 1 => {
                let e = &errors[0];
                (e.node.clone(), e.field.clone(), e.problem.to_string())
            }
            other => panic!("one problem expected: {other:?}"),
        }
    }

    #[test]
    fn a_document_that_does_not_read_is_refused_where_it_fails() {
        let (node, field, problem) = fault(json!({"name": "wf", "jobGroup": 1}));
        assert_eq!((node, field.as_str()), (None, "nodes"));
        assert_eq!(problem, "does not read as a definition: missing field `nodes`");
        let nodes =
            json!([{"name": "a", "kind": {"type": "job", "jobId": 1}}, {"name": "b", "upstream": ["a"]}]);
        let (node, field, _) = fault(json!({"name": "wf", "jobGroup": 1, "nodes": nodes}));
        assert_eq!((node.as_deref(), field.as_str()), (Some("b"), "nodes[1].kind"));
        let nodes = json!([{"name": "a", "retry": {"count": -1}, "kind": {"type": "job", "jobId": 1}}]);
        let (node, field, _) = fault(json!({"name": "wf", "jobGroup": 1, "nodes": nodes}));
        assert_eq!((node.as_deref(), field.as_str()), (Some("a"), "nodes[0].retry.count"));
        let (node, field, problem) = fault(json!({"name": "wf", "jobGroup": 1, "nodes": [], "bogus": 1}));
        assert_eq!((node, field.as_str()), (None, "bogus"));
        assert!(problem.contains("unknown field `bogus`"), "{problem}");
    }

    #[test]
    fn an_account_that_may_not_create_the_tables_is_told_what_to_do() {
        let denied = StorageError::ExtensionTablesDenied {
            missing: "xxl_job_ext_workflow".into(),
            reason: "CREATE command denied".into(),
            ddl: "CREATE TABLE IF NOT EXISTS xxl_job_ext_workflow (…);",
        };
        let ServiceError::Unavailable(message) = tables_refused(denied) else { panic!("not unavailable") };
        for part in ["(xxl_job_ext_workflow)", "(CREATE command denied)", "`xxl-job-admin ddl`"] {
            assert!(message.contains(part), "{part} in {message}");
        }
        assert!(!message.contains("CREATE TABLE"), "the statements go to the log: {message}");
        assert!(matches!(tables_refused(StorageError::Unwritten), ServiceError::Storage(_)));
    }
}
