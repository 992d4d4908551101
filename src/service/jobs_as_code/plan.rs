//! What an apply would do: the document matched against the rows read, by natural keys and workflow
//! names, as a list of steps (create, update with the fields that differ, delete, unchanged). Pure: no
//! database, no clock.

use super::document::{natural_key, Document, Executor, GlueVersion, Job, Workflow};
use super::reason::Reason;
use super::workflows;
use crate::domain::codes::AddressType;
use crate::domain::java_split;
use crate::domain::workflow::Definition;
use crate::i18n::I18n;
use crate::service::jobs::stored_glue_source;
use crate::storage::{JobGroup, JobInfo};
use serde::Serialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Create,
    Update,
    Delete,
    Unchanged,
}

/// One field that differs: its name in the document, the stored value and the document's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct FieldDiff {
    pub field: String,
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct ExecutorStep {
    pub app_name: String,
    pub action: Action,
    pub diffs: Vec<FieldDiff>,
    /// The group as stored; `None` when it is to be created.
    #[serde(skip)]
    pub group_id: Option<i32>,
    /// Its position in the document.
    #[serde(skip)]
    pub executor: usize,
}

/// A job's child, as the apply will write it: a stored job's id, or a job this apply creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Child {
    Stored(i32),
    /// Index in [`Plan::jobs`].
    Created(usize),
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct JobStep {
    /// The natural key, `app/description/handler`.
    pub job: String,
    pub action: Action,
    pub diffs: Vec<FieldDiff>,
    /// The stored job; `None` when it is to be created.
    #[serde(skip)]
    pub id: Option<i32>,
    /// (executor, job) positions in the document; `None` for a deletion.
    #[serde(skip)]
    pub source: Option<(usize, usize)>,
    #[serde(skip)]
    pub children: Vec<Child>,
}

/// A workflow's executor group, as the apply will write it: a stored group's id, or a group this apply
/// creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupRef {
    Stored(i32),
    /// Index in [`Document::executors`].
    Created(usize),
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct WorkflowStep {
    /// The workflow's name.
    pub workflow: String,
    pub action: Action,
    /// The fields that differ; a node's as `node.<name>.<field>`, a whole node as `node.<name>`.
    pub diffs: Vec<FieldDiff>,
    /// The stored workflow; `None` when it is to be created.
    #[serde(skip)]
    pub id: Option<i64>,
    /// Its position in the document; `None` for a deletion.
    #[serde(skip)]
    pub source: Option<usize>,
    /// Its executor group (the stored one, for a deletion).
    #[serde(skip)]
    pub group: GroupRef,
    /// Each job node's job, by the name the document gives it.
    #[serde(skip)]
    pub jobs: HashMap<String, Child>,
}

impl WorkflowStep {
    /// The definition the step writes for `workflow` (the document's, at [`WorkflowStep::source`]), its
    /// references as `ids` give them.
    pub fn definition(&self, workflow: &Workflow, ids: &Ids) -> Result<Definition, Reason> {
        let job_id = |name: &str| self.jobs.get(name).map_or(0, |child| ids.job(*child));
        workflows::definition(workflow, ids.group(self.group), &job_id)
    }
}

/// The ids a plan's references stand for: stored rows' as they are; created rows' as the apply wrote them
/// or, before anything is written, ids beyond every stored one, which only the checks see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ids {
    /// By document executor.
    groups: Vec<i32>,
    /// By index in [`Plan::jobs`].
    jobs: Vec<i32>,
}

impl Ids {
    pub fn written(groups: Vec<i32>, jobs: Vec<i32>) -> Ids {
        Ids { groups, jobs }
    }

    /// Before anything is written: ids no stored row has for the rows the plan creates.
    pub fn planned(plan: &Plan, groups: &[JobGroup], jobs: &[JobInfo]) -> Ids {
        let beyond = |max: Option<i32>, index: usize| {
            max.unwrap_or(0).saturating_add(1).saturating_add(i32::try_from(index).unwrap_or(i32::MAX))
        };
        let (max_group, max_job) = (groups.iter().map(|g| g.id).max(), jobs.iter().map(|j| j.id).max());
        let mut group_ids = vec![0; plan.executors.len()];
        for step in &plan.executors {
            group_ids[step.executor] = step.group_id.unwrap_or_else(|| beyond(max_group, step.executor));
        }
        let job_ids = plan.jobs.iter().enumerate().map(|(k, s)| s.id.unwrap_or_else(|| beyond(max_job, k)));
        Ids { groups: group_ids, jobs: job_ids.collect() }
    }

    pub fn group(&self, group: GroupRef) -> i32 {
        match group {
            GroupRef::Stored(id) => id,
            GroupRef::Created(e) => self.executor(e),
        }
    }

    /// The group of document executor `e`, stored or created.
    pub fn executor(&self, e: usize) -> i32 {
        self.groups[e]
    }

    pub fn job(&self, job: Child) -> i32 {
        match job {
            Child::Stored(id) => id,
            Child::Created(index) => self.jobs[index],
        }
    }
}

/// A stored workflow with the definition of its current version.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredWorkflow {
    pub row: crate::storage::Workflow,
    pub definition: Definition,
}

/// Every step of an apply, executors first, then jobs, then workflows, each in the document's order,
/// deletions last.
#[derive(Debug, Clone, Default, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Plan {
    pub executors: Vec<ExecutorStep>,
    pub jobs: Vec<JobStep>,
    pub workflows: Vec<WorkflowStep>,
}

impl Plan {
    /// Steps that write something.
    pub fn changes(&self) -> usize {
        let actions = self.executors.iter().map(|s| s.action);
        let actions = actions.chain(self.jobs.iter().map(|s| s.action));
        actions.chain(self.workflows.iter().map(|s| s.action)).filter(|a| *a != Action::Unchanged).count()
    }
}

impl Plan {
    /// The plan in `i18n`'s language: one line per step (`+` create, `~` update, `-` delete, `=`
    /// unchanged), each differing field below its update under the document's name for it.
    pub fn render(&self, i18n: &I18n) -> String {
        let mut text = String::new();
        let lines = self.executors.iter().map(|s| ("code_plan_executor", &s.app_name, s.action, &s.diffs));
        let lines = lines.chain(self.jobs.iter().map(|s| ("code_plan_job", &s.job, s.action, &s.diffs)));
        let workflows =
            self.workflows.iter().map(|s| ("code_plan_workflow", &s.workflow, s.action, &s.diffs));
        for (what, name, action, diffs) in lines.chain(workflows) {
            let (sign, verb) = match action {
                Action::Create => ('+', "code_plan_create"),
                Action::Update => ('~', "code_plan_update"),
                Action::Delete => ('-', "code_plan_delete"),
                Action::Unchanged => ('=', "code_plan_unchanged"),
            };
            text += &i18n.format("code_plan_step", &[&sign, &i18n.get(what), name, &i18n.get(verb)]);
            text.push('\n');
            for diff in diffs {
                text += &format!("    {}: {:?} -> {:?}\n", diff.field, diff.from, diff.to);
            }
        }
        text + &i18n.format("code_plan_changes", &[&self.changes()]) + "\n"
    }
}

impl fmt::Display for Plan {
    /// The plan in English, as the command line prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&I18n::new("en")))
    }
}

/// A document entry the rows or the rest of the document contradict; the message names the entry and field.
/// Each entry passed the console's checks already: what is left is a name that finds nothing, or two that
/// collide (the REST API's 404 and 409, as for a form naming a missing child or a job changed meanwhile).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// A workflow node whose fields do not say one kind.
    #[error("{0}")]
    Invalid(Reason),
    /// A child job, a workflow node's job or a workflow's executor named by nothing of the file or the
    /// database.
    #[error("{0}")]
    NotFound(Reason),
    /// Two entries of the file, or of the database, under one name; a stored job whose GLUE type differs;
    /// a child, or a workflow node's job or sub-workflow, that prune would delete.
    #[error("{0}")]
    Conflict(Reason),
}

/// The natural key of a document job.
pub fn key_of(executor: &Executor, job: &Job) -> String {
    natural_key(&executor.app_name, &job.description, &job.handler)
}

/// Matches the document against `groups`, the `jobs` of every group and the stored `workflows`; with
/// `prune`, the stored jobs and workflows of the named executors that the document does not list are
/// deleted.
pub fn make(
    doc: &Document,
    groups: &[JobGroup],
    jobs: &[JobInfo],
    workflows: &[StoredWorkflow],
    prune: bool,
) -> Result<Plan, PlanError> {
    let stored = Stored::index(groups, jobs);
    let mut plan = Plan { executors: executor_steps(doc, groups)?, jobs: vec![], workflows: vec![] };
    let declared = Declared::read(doc, &stored)?;
    for entry in &declared.entries {
        plan.jobs.push(job_step(doc, &stored, &declared, entry)?);
    }
    if prune {
        prune_steps(&mut plan, &stored, &declared);
        no_pruned_child(&plan)?;
    }
    plan.workflows = workflow_steps(doc, &stored, &declared, &plan, workflows)?;
    if prune {
        prune_workflows(&mut plan, doc, workflows);
        no_pruned_reference(&plan, doc)?;
    }
    Ok(plan)
}

/// The stored jobs by natural key (several when two rows collide) and each one's key by id.
struct Stored<'a> {
    groups: &'a [JobGroup],
    jobs: &'a [JobInfo],
    app_of: HashMap<i32, &'a str>,
    by_key: HashMap<String, Vec<&'a JobInfo>>,
    key_of_id: HashMap<i32, String>,
}

impl<'a> Stored<'a> {
    fn index(groups: &'a [JobGroup], jobs: &'a [JobInfo]) -> Stored<'a> {
        let app_of = groups.iter().map(|g| (g.id, g.app_name.as_str())).collect();
        let mut stored = Stored {
            groups,
            jobs,
            app_of,
            by_key: HashMap::new(),
            key_of_id: HashMap::with_capacity(jobs.len()),
        };
        for job in jobs {
            let key = stored.key(job);
            stored.by_key.entry(key.clone()).or_default().push(job);
            stored.key_of_id.insert(job.id, key);
        }
        stored
    }

    fn key(&self, job: &JobInfo) -> String {
        natural_key(
            self.app_of.get(&job.job_group).copied().unwrap_or(""),
            &job.job_desc,
            job.executor_handler.as_deref().unwrap_or(""),
        )
    }

    /// The stored children of a job as natural keys (`#id` for an id that names no stored job).
    fn children_of(&self, job: &JobInfo) -> Vec<String> {
        let ids = job.child_jobid.as_deref().map(java_split).unwrap_or_default();
        ids.iter()
            .map(|id| {
                id.trim()
                    .parse()
                    .ok()
                    .and_then(|id: i32| self.key_of_id.get(&id).cloned())
                    .unwrap_or_else(|| format!("#{id}"))
            })
            .collect()
    }
}

/// One step per document executor: a group to create, or the one stored group of its app name.
fn executor_steps(doc: &Document, groups: &[JobGroup]) -> Result<Vec<ExecutorStep>, PlanError> {
    let mut steps = Vec::with_capacity(doc.executors.len());
    let mut seen_apps = HashMap::new();
    for (e, executor) in doc.executors.iter().enumerate() {
        if seen_apps.insert(executor.app_name.as_str(), e).is_some() {
            return Err(PlanError::Conflict(Reason::new("code_error_executor_twice", &[&executor.name()])));
        }
        let matching: Vec<&JobGroup> = groups.iter().filter(|g| g.app_name == executor.app_name).collect();
        let (action, diffs, group_id) = match matching.as_slice() {
            [] => (Action::Create, vec![], None),
            [group] => {
                let diffs = executor_diffs(group, executor);
                let action = if diffs.is_empty() { Action::Unchanged } else { Action::Update };
                (action, diffs, Some(group.id))
            }
            _ => {
                return Err(PlanError::Conflict(Reason::new(
                    "code_error_groups_share_app",
                    &[&executor.name(), &matching.len()],
                )))
            }
        };
        steps.push(ExecutorStep {
            app_name: executor.app_name.clone(),
            action,
            diffs,
            group_id,
            executor: e,
        });
    }
    Ok(steps)
}

/// A document job: its natural key, (executor, job) position and the stored job it matches.
struct Entry<'a> {
    key: String,
    executor: usize,
    job: usize,
    found: Option<&'a JobInfo>,
}

/// Every document job, read before any step so that children can name jobs declared after them.
struct Declared<'a> {
    entries: Vec<Entry<'a>>,
    /// Index in `entries` by natural key and by alias (`key`).
    by_name: HashMap<String, usize>,
}

impl<'a> Declared<'a> {
    fn read(doc: &Document, stored: &Stored<'a>) -> Result<Declared<'a>, PlanError> {
        let mut declared = Declared { entries: vec![], by_name: HashMap::new() };
        for (e, executor) in doc.executors.iter().enumerate() {
            for (j, job) in executor.jobs.iter().enumerate() {
                let key = key_of(executor, job);
                let index = declared.entries.len();
                let name = executor.job_name(job);
                if declared.by_name.insert(key.clone(), index).is_some() {
                    return Err(PlanError::Conflict(Reason::new("code_error_job_twice", &[&name])));
                }
                if let Some(alias) = &job.key {
                    if declared.by_name.insert(alias.clone(), index).is_some() {
                        return Err(PlanError::Conflict(Reason::new(
                            "code_error_key_taken",
                            &[&name, &format!("{alias:?}")],
                        )));
                    }
                }
                let found = match stored.by_key.get(&key).map(Vec::as_slice) {
                    None | Some([]) => None,
                    Some([one]) => Some(*one),
                    Some(many) => {
                        return Err(PlanError::Conflict(Reason::new(
                            "code_error_jobs_share_key",
                            &[&name, &many.len()],
                        )))
                    }
                };
                declared.entries.push(Entry { key, executor: e, job: j, found });
            }
        }
        Ok(declared)
    }

    /// The job a `key` of the file or a natural key names, as the apply writes it, with its natural key;
    /// `None` when it names none (or two stored jobs).
    fn resolve(&self, stored: &Stored, name: &str) -> Option<(Child, String)> {
        match self.by_name.get(name) {
            Some(&index) => {
                let entry = &self.entries[index];
                match entry.found {
                    Some(stored) => Some((Child::Stored(stored.id), entry.key.clone())),
                    None => Some((Child::Created(index), entry.key.clone())),
                }
            }
            None => match stored.by_key.get(name).map(Vec::as_slice) {
                Some([one]) => Some((Child::Stored(one.id), name.to_string())),
                _ => None,
            },
        }
    }

    /// A job's children as the apply writes them, and as natural keys for the diff.
    fn children(
        &self,
        stored: &Stored,
        name: &str,
        job: &Job,
    ) -> Result<(Vec<Child>, Vec<String>), PlanError> {
        let mut children = Vec::with_capacity(job.child_jobs.len());
        let mut child_keys = Vec::with_capacity(job.child_jobs.len());
        for child in &job.child_jobs {
            let Some((child_ref, child_key)) = self.resolve(stored, child) else {
                return Err(PlanError::NotFound(Reason::new(
                    "code_error_child_unknown",
                    &[&name, &format!("{child:?}")],
                )));
            };
            children.push(child_ref);
            child_keys.push(child_key);
        }
        Ok((children, child_keys))
    }
}

/// The step of one document job: a creation, or its stored job's differences.
fn job_step(
    doc: &Document,
    stored: &Stored,
    declared: &Declared,
    entry: &Entry,
) -> Result<JobStep, PlanError> {
    let job = &doc.executors[entry.executor].jobs[entry.job];
    let name = doc.executors[entry.executor].job_name(job);
    let (children, child_keys) = declared.children(stored, &name, job)?;
    let source = Some((entry.executor, entry.job));
    let Some(stored_job) = entry.found else {
        return Ok(JobStep {
            job: entry.key.clone(),
            action: Action::Create,
            diffs: vec![],
            id: None,
            source,
            children,
        });
    };
    if stored_job.glue_type != job.glue_type {
        return Err(PlanError::Conflict(Reason::new(
            "code_error_glue_type_fixed",
            &[&name, &format!("{:?}", stored_job.glue_type)],
        )));
    }
    let stored_children = stored.children_of(stored_job);
    let mut diffs = job_diffs(stored_job, job);
    if stored_children != child_keys {
        diffs.push(FieldDiff {
            field: "child_jobs".into(),
            from: stored_children.join(", "),
            to: child_keys.join(", "),
        });
    }
    let action = if diffs.is_empty() { Action::Unchanged } else { Action::Update };
    Ok(JobStep { job: entry.key.clone(), action, diffs, id: Some(stored_job.id), source, children })
}

/// Deletes the stored jobs of the document's stored groups that the document does not list.
fn prune_steps(plan: &mut Plan, stored: &Stored, declared: &Declared) {
    for group_id in plan.executors.iter().filter_map(|s| s.group_id).collect::<Vec<_>>() {
        for job in stored.jobs.iter().filter(|j| j.job_group == group_id) {
            let key = stored.key(job);
            if !declared.entries.iter().any(|entry| entry.key == key) {
                plan.jobs.push(JobStep {
                    job: key,
                    action: Action::Delete,
                    diffs: vec![],
                    id: Some(job.id),
                    source: None,
                    children: vec![],
                });
            }
        }
    }
}

/// A child pruned away would leave its parent naming a job that no longer exists.
fn no_pruned_child(plan: &Plan) -> Result<(), PlanError> {
    let deleted: HashMap<i32, &str> = plan
        .jobs
        .iter()
        .filter(|s| s.action == Action::Delete)
        .filter_map(|s| Some((s.id?, s.job.as_str())))
        .collect();
    for step in &plan.jobs {
        if let Some(child) = step.children.iter().find_map(|c| match c {
            Child::Stored(id) => deleted.get(id),
            Child::Created(_) => None,
        }) {
            return Err(PlanError::Conflict(Reason::new(
                "code_error_child_pruned",
                &[&format!("{:?}", step.job), &format!("{child:?}")],
            )));
        }
    }
    Ok(())
}

/// One step per document workflow: a workflow to create, or the stored one of its name, updated when its
/// definition (compared parsed, its references as ids) or its schedule state differs.
fn workflow_steps(
    doc: &Document,
    stored: &Stored,
    declared: &Declared,
    plan: &Plan,
    workflows: &[StoredWorkflow],
) -> Result<Vec<WorkflowStep>, PlanError> {
    let ids = Ids::planned(plan, stored.groups, stored.jobs);
    // Every job's natural key by id, those this apply creates included, for the differences.
    let mut key_of_id = stored.key_of_id.clone();
    for (k, step) in plan.jobs.iter().enumerate().filter(|(_, s)| s.id.is_none()) {
        key_of_id.insert(ids.jobs[k], step.job.clone());
    }
    let key_of = |id: i32| key_of_id.get(&id).cloned();
    let mut seen = HashSet::new();
    let mut steps = Vec::with_capacity(doc.workflows.len());
    for (w, workflow) in doc.workflows.iter().enumerate() {
        if !seen.insert(workflow.name.as_str()) {
            return Err(PlanError::Conflict(Reason::new("code_error_workflow_twice", &[&workflow.label()])));
        }
        let group = workflow_group(stored, plan, workflow)?;
        let mut jobs = HashMap::new();
        for node in &workflow.nodes {
            let Some(name) = &node.job else { continue };
            let Some((job, _)) = declared.resolve(stored, name) else {
                return Err(PlanError::NotFound(Reason::new(
                    "code_error_node_job_unknown",
                    &[&workflow.label(), &format!("{:?}", node.name), &format!("{name:?}")],
                )));
            };
            jobs.insert(name.clone(), job);
        }
        let found = workflows.iter().find(|s| s.row.name == workflow.name);
        let mut step = WorkflowStep {
            workflow: workflow.name.clone(),
            action: Action::Create,
            diffs: vec![],
            id: found.map(|s| s.row.id),
            source: Some(w),
            group,
            jobs,
        };
        let def = step.definition(workflow, &ids).map_err(PlanError::Invalid)?;
        if let Some(current) = found {
            // What this apply creates has no id yet that a stored version could hold.
            let creates = matches!(group, GroupRef::Created(_))
                || step.jobs.values().any(|job| matches!(job, Child::Created(_)));
            if creates || def != current.definition {
                let app = stored.app_of.get(&current.definition.job_group).copied().unwrap_or("");
                let before = workflows::exported(&current.definition, app, &key_of, None);
                step.diffs =
                    workflow_diffs(&before, &workflows::exported(&def, &workflow.executor, &key_of, None));
            }
            if let Some(status) = workflow.trigger_status.filter(|s| *s != current.row.trigger_status) {
                step.diffs.push(FieldDiff {
                    field: "trigger_status".into(),
                    from: current.row.trigger_status.to_string(),
                    to: status.to_string(),
                });
            }
            step.action = if step.diffs.is_empty() { Action::Unchanged } else { Action::Update };
        }
        steps.push(step);
    }
    Ok(steps)
}

/// A workflow's executor: one of the document (the group it has or will have), else the one stored group
/// of that AppName.
fn workflow_group(stored: &Stored, plan: &Plan, workflow: &Workflow) -> Result<GroupRef, PlanError> {
    if let Some(step) = plan.executors.iter().find(|s| s.app_name == workflow.executor) {
        return Ok(step.group_id.map_or(GroupRef::Created(step.executor), GroupRef::Stored));
    }
    match stored.groups.iter().filter(|g| g.app_name == workflow.executor).collect::<Vec<_>>().as_slice() {
        [one] => Ok(GroupRef::Stored(one.id)),
        [] => Err(PlanError::NotFound(Reason::new(
            "code_error_workflow_executor",
            &[&workflow.label(), &format!("{:?}", workflow.executor)],
        ))),
        many => Err(PlanError::Conflict(Reason::new(
            "code_error_groups_share_app",
            &[&workflow.label(), &many.len()],
        ))),
    }
}

/// The fields of two workflows (as an export writes them) that differ: the top-level ones, then the
/// nodes by name (whole nodes added or removed, fields of the others); only an order of nodes when
/// nothing else differs.
fn workflow_diffs(before: &Workflow, after: &Workflow) -> Vec<FieldDiff> {
    let object = |workflow: &Workflow| match serde_json::to_value(workflow) {
        Ok(Value::Object(fields)) => fields,
        _ => serde_json::Map::new(),
    };
    let (old, new) = (object(before), object(after));
    let mut diffs = Vec::new();
    changed_fields(&mut diffs, "", &old, &new, &["name", "node"]);
    let nodes = |fields: &serde_json::Map<String, Value>| -> Vec<serde_json::Map<String, Value>> {
        let list = fields.get("node").and_then(Value::as_array).cloned().unwrap_or_default();
        list.into_iter().filter_map(|n| n.as_object().cloned()).collect()
    };
    let (old_nodes, new_nodes) = (nodes(&old), nodes(&new));
    let name = |node: &serde_json::Map<String, Value>| {
        node.get("name").and_then(Value::as_str).unwrap_or("").to_string()
    };
    for node in &new_nodes {
        let field = format!("node.{}", name(node));
        match old_nodes.iter().find(|o| name(o) == name(node)) {
            None => diffs.push(FieldDiff {
                field,
                from: String::new(),
                to: Value::Object(node.clone()).to_string(),
            }),
            Some(was) => changed_fields(&mut diffs, &format!("{field}."), was, node, &["name"]),
        }
    }
    for node in old_nodes.iter().filter(|o| !new_nodes.iter().any(|n| name(n) == name(o))) {
        let from = Value::Object(node.clone()).to_string();
        diffs.push(FieldDiff { field: format!("node.{}", name(node)), from, to: String::new() });
    }
    if diffs.is_empty() && old != new {
        let order =
            |list: &[serde_json::Map<String, Value>]| list.iter().map(name).collect::<Vec<_>>().join(", ");
        diffs.push(FieldDiff { field: "node".into(), from: order(&old_nodes), to: order(&new_nodes) });
    }
    diffs
}

/// Adds the fields of `old` and `new` (but `skip`) whose values differ, each named `prefix` + its name; a
/// text as it is, any other value as JSON, a field one side leaves out as ''.
fn changed_fields(
    diffs: &mut Vec<FieldDiff>,
    prefix: &str,
    old: &serde_json::Map<String, Value>,
    new: &serde_json::Map<String, Value>,
    skip: &[&str],
) {
    let text = |value: Option<&Value>| match value {
        None => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    };
    let mut names: Vec<&String> =
        new.keys().chain(old.keys()).filter(|k| !skip.contains(&k.as_str())).collect();
    let mut seen = HashSet::new();
    names.retain(|name| seen.insert(*name));
    for name in names {
        let (from, to) = (old.get(name), new.get(name));
        if from != to {
            diffs.push(FieldDiff { field: format!("{prefix}{name}"), from: text(from), to: text(to) });
        }
    }
}

/// Deletes the stored workflows of the document's stored groups that the document does not list.
fn prune_workflows(plan: &mut Plan, doc: &Document, workflows: &[StoredWorkflow]) {
    let groups: HashSet<i32> = plan.executors.iter().filter_map(|s| s.group_id).collect();
    for stored in workflows.iter().filter(|s| groups.contains(&s.row.job_group)) {
        if !doc.workflows.iter().any(|w| w.name == stored.row.name) {
            plan.workflows.push(WorkflowStep {
                workflow: stored.row.name.clone(),
                action: Action::Delete,
                diffs: vec![],
                id: Some(stored.row.id),
                source: None,
                group: GroupRef::Stored(stored.row.job_group),
                jobs: HashMap::new(),
            });
        }
    }
}

/// A job or sub-workflow pruned away would leave a workflow's node naming what no longer exists.
fn no_pruned_reference(plan: &Plan, doc: &Document) -> Result<(), PlanError> {
    let deleted_jobs: HashSet<i32> =
        plan.jobs.iter().filter(|s| s.action == Action::Delete).filter_map(|s| s.id).collect();
    let deleted_workflows: HashSet<&str> =
        plan.workflows.iter().filter(|s| s.action == Action::Delete).map(|s| s.workflow.as_str()).collect();
    for step in &plan.workflows {
        let Some(w) = step.source else { continue };
        let workflow = &doc.workflows[w];
        for node in &workflow.nodes {
            let pruned = |field: &str, name: &str| {
                PlanError::Conflict(Reason::new(
                    "code_error_node_pruned",
                    &[&workflow.label(), &format!("{:?}", node.name), &field, &format!("{name:?}")],
                ))
            };
            if let Some(name) = &node.job {
                if let Some(Child::Stored(id)) = step.jobs.get(name) {
                    if deleted_jobs.contains(id) {
                        return Err(pruned("job", name));
                    }
                }
            }
            if let Some(name) = node.workflow.as_deref().filter(|name| deleted_workflows.contains(name)) {
                return Err(pruned("workflow", name));
            }
        }
    }
    Ok(())
}

/// The field of a GLUE history difference.
pub const GLUE_HISTORY_FIELD: &str = "glue_history";

/// Adds to the plan the stored jobs whose GLUE history differs from the document's (`stored`: each such
/// job's versions, newest first, by id); a job the document gives no history keeps its own.
pub fn history_diffs(plan: &mut Plan, doc: &Document, stored: &HashMap<i32, Vec<GlueVersion>>) {
    for step in &mut plan.jobs {
        let (Some(id), Some((e, j))) = (step.id, step.source) else { continue };
        let (Some(declared), Some(current)) = (&doc.executors[e].jobs[j].glue_history, stored.get(&id))
        else {
            continue;
        };
        if declared == current {
            continue;
        }
        let (from, mut to) = (history_summary(current), history_summary(declared));
        if from == to {
            to.push_str(" (other sources, types or add times)");
        }
        step.diffs.push(FieldDiff { field: GLUE_HISTORY_FIELD.into(), from, to });
        step.action = Action::Update;
    }
}

/// A history in one line: each version's remark and update time, newest first.
fn history_summary(versions: &[GlueVersion]) -> String {
    let each =
        versions.iter().map(|v| format!("{:?} {}", v.glue_remark, v.update_time.as_deref().unwrap_or("-")));
    format!("{} version(s): {}", versions.len(), each.collect::<Vec<_>>().join(", "))
}

/// The manual addresses as the column holds them.
pub fn address_list(executor: &Executor) -> String {
    executor.addresses.join(",")
}

fn executor_diffs(group: &JobGroup, executor: &Executor) -> Vec<FieldDiff> {
    let mut diffs = Vec::new();
    let mut differ = |field: &str, from: String, to: String| {
        if from != to {
            diffs.push(FieldDiff { field: field.into(), from, to });
        }
    };
    differ("title", group.title.clone(), executor.title.clone());
    let word = |address_type: AddressType| match address_type.declared() {
        AddressType::Auto => "auto".to_string(),
        _ => "manual".to_string(),
    };
    differ("address_type", word(group.address_type), word(executor.address_type));
    if executor.address_type == AddressType::Manual {
        differ("addresses", group.address_list.clone().unwrap_or_default(), address_list(executor));
    }
    diffs
}

/// The fields of the job dialog that differ, NULL and '' alike (the console writes '' where a Java
/// admin's rows may hold NULL); the key fields (description, handler) match by construction.
fn job_diffs(stored: &JobInfo, job: &Job) -> Vec<FieldDiff> {
    let text = |value: &Option<String>| value.clone().unwrap_or_default();
    let glue_source = stored_glue_source(&Some(job.glue_type.clone()), Some(&job.glue_source));
    let pairs = [
        ("author", text(&stored.author), job.author.clone()),
        ("alarm_email", text(&stored.alarm_email), job.alarm_email.clone()),
        ("schedule_type", stored.schedule_type.clone(), job.schedule_type.clone()),
        ("schedule_conf", text(&stored.schedule_conf), job.schedule_conf.clone()),
        ("misfire_strategy", stored.misfire_strategy.clone(), job.misfire_strategy.clone()),
        ("route_strategy", text(&stored.executor_route_strategy), job.route_strategy.clone()),
        ("param", text(&stored.executor_param), job.param.clone()),
        ("block_strategy", text(&stored.executor_block_strategy), job.block_strategy.clone()),
        ("timeout", stored.executor_timeout.to_string(), job.timeout.to_string()),
        ("fail_retry_count", stored.executor_fail_retry_count.to_string(), job.fail_retry_count.to_string()),
        ("glue_source", text(&stored.glue_source), glue_source),
        ("glue_remark", text(&stored.glue_remark), job.glue_remark.clone()),
    ];
    let mut diffs: Vec<FieldDiff> = pairs
        .into_iter()
        .filter(|(_, from, to)| from != to)
        .map(|(field, from, to)| FieldDiff { field: field.into(), from, to })
        .collect();
    if let Some(status) = job.trigger_status.filter(|s| *s != stored.trigger_status.code()) {
        diffs.push(FieldDiff {
            field: "trigger_status".into(),
            from: stored.trigger_status.code().to_string(),
            to: status.to_string(),
        });
    }
    diffs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::codes::TriggerStatus;
    use crate::domain::workflow::NodeKind;

    fn group(id: i32, app: &str) -> JobGroup {
        JobGroup {
            id,
            app_name: app.into(),
            title: "T".into(),
            address_type: AddressType::Auto,
            address_list: None,
            update_time: None,
        }
    }

    fn stored(id: i32, group: i32, desc: &str, handler: &str) -> JobInfo {
        JobInfo {
            job_group: group,
            job_desc: desc.into(),
            author: Some("me".into()),
            alarm_email: Some(String::new()),
            executor_route_strategy: Some("FIRST".into()),
            executor_handler: Some(handler.into()),
            executor_param: Some(String::new()),
            executor_block_strategy: Some("SERIAL_EXECUTION".into()),
            glue_source: Some(String::new()),
            glue_remark: Some(String::new()),
            child_jobid: Some(String::new()),
            ..JobInfo::sample(id)
        }
    }

    fn job(desc: &str, handler: &str) -> Job {
        Job {
            description: desc.into(),
            author: "me".into(),
            schedule_type: "NONE".into(),
            misfire_strategy: "DO_NOTHING".into(),
            route_strategy: "FIRST".into(),
            handler: handler.into(),
            block_strategy: "SERIAL_EXECUTION".into(),
            glue_type: "BEAN".into(),
            ..Job::default()
        }
    }

    fn doc(app: &str, jobs: Vec<Job>) -> Document {
        Document {
            executors: vec![Executor {
                app_name: app.into(),
                title: "T".into(),
                jobs,
                ..Executor::default()
            }],
            workflows: vec![],
        }
    }

    #[test]
    fn equal_rows_are_unchanged_and_null_equals_empty() {
        let mut row = stored(5, 1, "d", "h");
        row.alarm_email = None;
        let plan = make(&doc("app", vec![job("d", "h")]), &[group(1, "app")], &[row], &[], false).unwrap();
        assert_eq!(plan.executors[0].action, Action::Unchanged);
        assert_eq!((plan.jobs[0].action, plan.jobs[0].id), (Action::Unchanged, Some(5)));
        assert_eq!(plan.changes(), 0);
    }

    /// Codes 2.4 never writes, as a Java admin may have left them: a group of address type 2 reads as
    /// manual, as the trigger and the export take it; a job of status 2 differs from both 0 and 1.
    #[test]
    fn odd_stored_codes_compare_as_before() {
        let odd_group = JobGroup {
            address_type: AddressType::from(2),
            address_list: Some("http://a:9999".into()),
            ..group(1, "app")
        };
        let odd_job = JobInfo { trigger_status: TriggerStatus::from(2), ..stored(5, 1, "d", "h") };
        let mut d = doc("app", vec![Job { trigger_status: Some(0), ..job("d", "h") }]);
        (d.executors[0].address_type, d.executors[0].addresses) =
            (AddressType::Manual, vec!["http://a:9999".into()]);
        let plan = make(&d, &[odd_group], &[odd_job], &[], false).unwrap();
        assert_eq!(plan.executors[0].action, Action::Unchanged);
        assert_eq!(
            plan.jobs[0].diffs,
            vec![FieldDiff { field: "trigger_status".into(), from: "2".into(), to: "0".into() }]
        );
    }

    #[test]
    fn differing_fields_are_listed_with_both_values() {
        let changed = Job {
            schedule_type: "CRON".into(),
            schedule_conf: "0 0 * * * ?".into(),
            timeout: 7,
            trigger_status: Some(1),
            ..job("d", "h")
        };
        let mut d = doc("app", vec![changed]);
        d.executors[0].title = "New".into();
        let plan = make(&d, &[group(1, "app")], &[stored(5, 1, "d", "h")], &[], false).unwrap();
        assert_eq!(
            plan.executors[0].diffs,
            vec![FieldDiff { field: "title".into(), from: "T".into(), to: "New".into() }]
        );
        let fields: Vec<&str> = plan.jobs[0].diffs.iter().map(|d| d.field.as_str()).collect();
        assert_eq!(fields, ["schedule_type", "schedule_conf", "timeout", "trigger_status"]);
        assert_eq!(plan.jobs[0].action, Action::Update);
        let text = plan.to_string();
        assert!(text.contains("~ job app/d/h: update\n    schedule_type: \"NONE\" -> \"CRON\""), "{text}");
        assert!(text.ends_with("2 change(s)\n"), "{text}");
    }

    #[test]
    fn new_executors_and_jobs_are_created_and_prune_deletes_only_in_named_executors() {
        let groups = [group(1, "app"), group(2, "other")];
        let rows = [stored(5, 1, "old", "h"), stored(6, 2, "elsewhere", "h")];
        let mut d = doc("app", vec![job("new", "h")]);
        d.executors.push(Executor {
            app_name: "fresh".into(),
            title: "F".into(),
            jobs: vec![job("x", "y")],
            ..Executor::default()
        });
        let kept = make(&d, &groups, &rows, &[], false).unwrap();
        assert_eq!(kept.jobs.iter().map(|s| s.action).collect::<Vec<_>>(), [Action::Create, Action::Create]);
        assert_eq!(kept.executors[1].action, Action::Create);
        let pruned = make(&d, &groups, &rows, &[], true).unwrap();
        let deleted: Vec<_> = pruned
            .jobs
            .iter()
            .filter(|s| s.action == Action::Delete)
            .map(|s| (s.job.as_str(), s.id))
            .collect();
        assert_eq!(deleted, [("app/old/h", Some(5))]);
        d.executors[0].jobs[0].child_jobs = vec!["app/old/h".into()];
        let e = make(&d, &groups, &rows, &[], true).unwrap_err();
        assert!(matches!(e, PlanError::Conflict(_)));
        assert_eq!(
            e.to_string(),
            "job \"app/new/h\": child_jobs: \"app/old/h\" is not in the file, so prune would delete it"
        );
        assert!(make(&d, &groups, &rows, &[], false).is_ok(), "without prune the child stays");
    }

    #[test]
    fn children_resolve_by_key_natural_key_or_stored_row() {
        let parent = Job {
            child_jobs: vec!["second".into(), "app/first/h".into(), "other/elsewhere/h".into()],
            ..job("parent", "p")
        };
        let second = Job { key: Some("second".into()), ..job("second", "s") };
        let d = doc("app", vec![parent, job("first", "h"), second]);
        let groups = [group(1, "app"), group(2, "other")];
        let plan =
            make(&d, &groups, &[stored(5, 1, "first", "h"), stored(6, 2, "elsewhere", "h")], &[], false)
                .unwrap();
        assert_eq!(plan.jobs[0].children, [Child::Created(2), Child::Stored(5), Child::Stored(6)]);
        let bad = doc("app", vec![Job { child_jobs: vec!["nobody".into()], ..job("a", "b") }]);
        let e = make(&bad, &groups, &[], &[], false).unwrap_err();
        assert!(matches!(e, PlanError::NotFound(_)));
        assert_eq!(
            e.to_string(),
            "job \"app/a/b\": child_jobs: \"nobody\" names no job of the file or the database"
        );
    }

    #[test]
    fn stored_children_are_compared_by_key() {
        let mut parent = stored(5, 1, "parent", "p");
        parent.child_jobid = Some("6".into());
        let rows = [parent, stored(6, 1, "child", "c")];
        let same = doc(
            "app",
            vec![Job { child_jobs: vec!["app/child/c".into()], ..job("parent", "p") }, job("child", "c")],
        );
        assert_eq!(make(&same, &[group(1, "app")], &rows, &[], false).unwrap().changes(), 0);
        let none = doc("app", vec![job("parent", "p"), job("child", "c")]);
        let plan = make(&none, &[group(1, "app")], &rows, &[], false).unwrap();
        assert_eq!(
            plan.jobs[0].diffs,
            vec![FieldDiff { field: "child_jobs".into(), from: "app/child/c".into(), to: String::new() }]
        );
    }

    #[test]
    fn the_documented_example_plans_on_an_empty_database() {
        let docs = include_str!("../../../docs/jobs-as-code.md");
        let example = docs.split("```toml\n").nth(1).and_then(|rest| rest.split("```").next()).unwrap();
        let doc = super::super::Document::parse(example, super::super::Format::Toml).unwrap();
        let plan = make(&doc, &[], &[], &[], false).unwrap();
        assert_eq!(plan.changes(), 5);
        assert_eq!(plan.jobs[0].children, [Child::Created(1)]);
    }

    #[test]
    fn a_differing_glue_history_is_an_update_and_an_absent_one_no_change() {
        let version = |remark: &str, time: &str| GlueVersion {
            glue_type: Some("GLUE_SHELL".into()),
            glue_source: Some("echo".into()),
            glue_remark: remark.into(),
            add_time: Some(time.into()),
            update_time: Some(time.into()),
        };
        let stored_history = HashMap::from([(5, vec![version("second", "2024-01-02 03:04:05")])]);
        let with = |history: Option<Vec<GlueVersion>>| {
            doc("app", vec![Job { glue_history: history, ..job("d", "h") }])
        };
        let rows = [stored(5, 1, "d", "h")];
        for (history, changes) in
            [(None, 0), (Some(vec![version("second", "2024-01-02 03:04:05")]), 0), (Some(vec![]), 1)]
        {
            let d = with(history);
            let mut plan = make(&d, &[group(1, "app")], &rows, &[], false).unwrap();
            history_diffs(&mut plan, &d, &stored_history);
            assert_eq!(plan.changes(), changes, "{plan}");
        }
        let d = with(Some(vec![
            version("second", "2024-01-02 03:04:05"),
            version("first", "2024-01-01 00:00:00"),
        ]));
        let mut plan = make(&d, &[group(1, "app")], &rows, &[], false).unwrap();
        history_diffs(&mut plan, &d, &stored_history);
        let diff = &plan.jobs[0].diffs[0];
        assert_eq!(diff.from, "1 version(s): \"second\" 2024-01-02 03:04:05");
        assert_eq!(diff.to, "2 version(s): \"second\" 2024-01-02 03:04:05, \"first\" 2024-01-01 00:00:00");
        let mut other_source = version("second", "2024-01-02 03:04:05");
        other_source.glue_source = Some("echo 2".into());
        let d = with(Some(vec![other_source]));
        let mut plan = make(&d, &[group(1, "app")], &rows, &[], false).unwrap();
        history_diffs(&mut plan, &d, &stored_history);
        assert!(plan.jobs[0].diffs[0].to.ends_with("(other sources, types or add times)"), "{plan}");
    }

    #[test]
    fn contradictions_name_the_entry_and_field() {
        let groups = [group(1, "app")];
        let twice = doc("app", vec![job("d", "h"), job("d", "h")]);
        assert!(make(&twice, &groups, &[], &[], false)
            .unwrap_err()
            .to_string()
            .starts_with("job \"app/d/h\": declared twice"));
        let glue = doc("app", vec![Job { glue_type: "GLUE_SHELL".into(), ..job("d", "h") }]);
        let e = make(&glue, &groups, &[stored(5, 1, "d", "h")], &[], false).unwrap_err();
        assert!(
            matches!(&e, PlanError::Conflict(m) if m.to_string().starts_with("job \"app/d/h\": glue_type:")),
            "{e}"
        );
        let ambiguous =
            make(&doc("app", vec![]), &[group(1, "app"), group(2, "app")], &[], &[], false).unwrap_err();
        assert!(
            ambiguous.to_string().starts_with("executor \"app\": app_name: 2 stored groups"),
            "{ambiguous}"
        );
    }

    fn stored_workflow(id: i64, group: i32, definition: serde_json::Value) -> StoredWorkflow {
        let definition: Definition = serde_json::from_value(definition).unwrap();
        StoredWorkflow {
            row: crate::storage::Workflow {
                id,
                name: definition.name.clone(),
                job_group: group,
                current_version: 1,
                trigger_status: 0,
                schedule_type: "NONE".into(),
                schedule_conf: None,
                misfire_strategy: "DO_NOTHING".into(),
                trigger_next_time: 0,
                trigger_last_time: 0,
                author: None,
                add_time: 0,
                update_time: 0,
            },
            definition,
        }
    }

    /// A document workflow `name` of executor `app` whose one node `a` runs `job`.
    fn workflow(name: &str, app: &str, job: &str) -> Workflow {
        serde_json::from_value(
            serde_json::json!({"name": name, "executor": app, "node": [{"name": "a", "job": job}]}),
        )
        .unwrap()
    }

    #[test]
    fn a_workflow_is_unchanged_while_its_parsed_definition_is_and_updated_when_it_differs() {
        let (groups, rows) = ([group(1, "app")], [stored(5, 1, "d", "h")]);
        let saved = [stored_workflow(
            9,
            1,
            serde_json::json!({"name": "w", "jobGroup": 1, "nodes": [{"name": "a", "kind": {"type": "job", "jobId": 5}}]}),
        )];
        let mut d = doc("app", vec![Job { key: Some("k".into()), ..job("d", "h") }]);
        for name in ["app/d/h", "k"] {
            d.workflows = vec![workflow("w", "app", name)];
            let plan = make(&d, &groups, &rows, &saved, false).unwrap();
            assert_eq!(
                (plan.workflows[0].action, plan.workflows[0].id),
                (Action::Unchanged, Some(9)),
                "{name}"
            );
            assert_eq!(plan.workflows[0].jobs[name], Child::Stored(5), "{name}");
        }
        d.workflows[0].nodes[0].param = Some("{{ ds }}".into());
        d.workflows[0].trigger_status = Some(1);
        let plan = make(&d, &groups, &rows, &saved, false).unwrap();
        assert_eq!(plan.workflows[0].action, Action::Update);
        let diff = |field: &str, from: &str, to: &str| FieldDiff {
            field: field.into(),
            from: from.into(),
            to: to.into(),
        };
        assert_eq!(
            plan.workflows[0].diffs,
            [diff("node.a.param", "", "{{ ds }}"), diff("trigger_status", "0", "1")]
        );
        assert!(
            plan.to_string().contains("~ workflow w: update\n    node.a.param: \"\" -> \"{{ ds }}\"\n"),
            "{plan}"
        );
        // A job this apply creates has no id a stored version could hold: an update, whatever the ids.
        d.executors[0].jobs.push(Job { key: Some("new".into()), ..job("e", "h") });
        d.workflows[0].nodes[0].job = Some("new".into());
        let plan = make(&d, &groups, &rows, &saved, false).unwrap();
        assert_eq!(plan.workflows[0].jobs["new"], Child::Created(1));
        let ids = Ids::planned(&plan, &groups, &rows);
        assert_eq!(
            plan.workflows[0].definition(&d.workflows[0], &ids).unwrap().nodes[0].kind,
            NodeKind::Job { job_id: 7, param: "{{ ds }}".into() }
        );
        assert_eq!(plan.workflows[0].diffs[0], diff("node.a.job", "app/d/h", "app/e/h"));
    }

    #[test]
    fn names_a_workflow_gives_that_find_nothing_or_collide_are_refused() {
        let (groups, rows) = ([group(1, "app")], [stored(5, 1, "d", "h")]);
        let mut d = doc("app", vec![job("d", "h")]);
        d.workflows = vec![workflow("w", "app", "app/x/y")];
        let e = make(&d, &groups, &rows, &[], false).unwrap_err();
        assert_eq!(
            e,
            PlanError::NotFound(Reason::new(
                "code_error_node_job_unknown",
                &[&"workflow \"w\"", &"\"a\"", &"\"app/x/y\""]
            ))
        );
        assert_eq!(
            e.to_string(),
            "workflow \"w\": node \"a\": job: \"app/x/y\" names no job of the file or the database"
        );
        d.workflows = vec![workflow("w", "elsewhere-app", "app/d/h")];
        let e = make(&d, &groups, &rows, &[], false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "workflow \"w\": executor: \"elsewhere-app\" names no executor of the file or the database"
        );
        d.workflows = vec![workflow("w", "app", "app/d/h"), workflow("w", "app", "app/d/h")];
        let e = make(&d, &groups, &rows, &[], false).unwrap_err();
        assert!(
            matches!(&e, PlanError::Conflict(_)) && e.to_string() == "workflow \"w\": name: declared twice",
            "{e}"
        );
        d.workflows.truncate(1);
        d.workflows[0].nodes[0].approvers = Some(vec![]);
        let e = make(&d, &groups, &rows, &[], false).unwrap_err();
        assert!(matches!(&e, PlanError::Invalid(_)), "{e}");
    }

    #[test]
    fn prune_deletes_the_named_executors_workflows_the_document_leaves_out_unless_one_names_them() {
        let groups = [group(1, "app"), group(2, "other")];
        let rows = [stored(5, 1, "d", "h"), stored(6, 1, "old", "h")];
        let one_node = |name: &str, kind: serde_json::Value| serde_json::json!({"name": name, "jobGroup": 1, "nodes": [{"name": "a", "kind": kind}]});
        let saved = [
            stored_workflow(1, 1, one_node("kept", serde_json::json!({"type": "job", "jobId": 5}))),
            stored_workflow(2, 1, one_node("gone", serde_json::json!({"type": "job", "jobId": 5}))),
            stored_workflow(3, 2, one_node("elsewhere", serde_json::json!({"type": "job", "jobId": 5}))),
        ];
        let mut d = doc("app", vec![job("d", "h"), job("old", "h")]);
        d.workflows = vec![workflow("kept", "app", "app/d/h")];
        let plan = make(&d, &groups, &rows, &saved, true).unwrap();
        let deleted: Vec<_> = plan
            .workflows
            .iter()
            .filter(|s| s.action == Action::Delete)
            .map(|s| (s.workflow.as_str(), s.id))
            .collect();
        assert_eq!(deleted, [("gone", Some(2))], "{plan}");
        assert!(plan.to_string().contains("- workflow gone: delete\n"), "{plan}");
        assert!(
            make(&d, &groups, &rows, &saved, false).unwrap().workflows.len() == 1,
            "without prune nothing goes"
        );
        // A node naming what prune deletes.
        d.workflows[0]
            .nodes
            .push(serde_json::from_value(serde_json::json!({"name": "b", "workflow": "gone"})).unwrap());
        let e = make(&d, &groups, &rows, &saved, true).unwrap_err();
        assert_eq!(
            e.to_string(),
            "workflow \"kept\": node \"b\": workflow: \"gone\" is not in the file, so prune would delete it"
        );
        d.workflows[0].nodes.pop();
        d.executors[0].jobs.pop();
        d.workflows[0].nodes[0].job = Some("app/old/h".into());
        let e = make(&d, &groups, &rows, &saved, true).unwrap_err();
        assert!(
            matches!(&e, PlanError::Conflict(_))
                && e.to_string().contains("node \"a\": job: \"app/old/h\" is not in the file"),
            "{e}"
        );
    }

    #[test]
    fn the_example_workflow_document_plans_on_an_empty_database_and_passes_validation() {
        let example = include_str!("../../../docs/examples/workflow.toml");
        let doc = super::super::Document::parse(example, super::super::Format::Toml).unwrap();
        let plan = make(&doc, &[], &[], &[], false).unwrap();
        assert_eq!(plan.changes(), 7);
        let step = &plan.workflows[0];
        assert_eq!((step.action, step.group), (Action::Create, GroupRef::Created(0)));
        assert!(step.jobs.values().all(|job| matches!(job, Child::Created(_))));
        let def = step.definition(&doc.workflows[0], &Ids::planned(&plan, &[], &[])).unwrap();
        assert_eq!(crate::domain::workflow::validate(&def), Ok(()));
        assert_eq!(def.nodes.len(), 8);
    }
}
