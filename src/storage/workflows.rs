//! The workflow tables' statements (`xxl_job_ext_workflow*`, see [`super::extensions`]): definitions and
//! their versions, runs, node attempts, and the xxl_job_log ids of the triggers a node attempt sent.
//!
//! The storage knows no domain types: a definition is its JSON text, states are the words the engine
//! writes. Rows that several admins may change at once (a workflow's current version, a run's or a node
//! attempt's state) change by compare-and-set: the statement names the value it expects, and the rows it
//! matched say whether it won. Every method expects [`Db::ensure_extension_tables`] to have run.

use super::sql::{self, Dialect, On, Tx};
use super::ScheduleLock;
use super::{contains, restrict_groups, Arg, Db, Result, StorageError};

/// Run states during which a workflow may not be deleted.
pub const ACTIVE_RUN_STATES: [&str; 4] = ["queued", "running", "paused", "stopping"];

/// `xxl_job_ext_workflow`: what the schedule scan and the lists read; the definition is in its versions.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Workflow {
    pub id: i64,
    pub name: String,
    pub job_group: i32,
    pub current_version: i32,
    pub trigger_status: i16,
    pub schedule_type: String,
    pub schedule_conf: Option<String>,
    pub misfire_strategy: String,
    pub trigger_next_time: i64,
    pub trigger_last_time: i64,
    pub author: Option<String>,
    pub add_time: i64,
    pub update_time: i64,
}

/// The columns of a workflow that mirror its current definition; each new version writes them again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowHead {
    pub name: String,
    pub job_group: i32,
    pub schedule_type: String,
    pub schedule_conf: Option<String>,
    pub misfire_strategy: String,
}

/// What the scheduler sets of a workflow: whether it is scheduled, how, and its fire times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowSchedule {
    pub trigger_status: i16,
    pub schedule_type: String,
    pub schedule_conf: Option<String>,
    pub misfire_strategy: String,
    pub trigger_next_time: i64,
    pub trigger_last_time: i64,
}

/// The filters of the workflow list; `None` filters nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkflowFilter {
    /// Only workflows of these executor groups (none matches an empty list): the user's permissions.
    pub groups: Option<Vec<i32>>,
    /// Only names containing this, in any case (ASCII case on SQLite).
    pub name: Option<String>,
    /// Only workflows whose latest run is in this state, or that never ran.
    pub last_run: Option<LastRun>,
}

/// The latest run a workflow list may filter on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LastRun {
    Never,
    /// A run state as the engine writes it.
    In(String),
}

/// The id of each workflow's latest run.
const LATEST_RUN_IDS: &str = "SELECT MAX(id) FROM xxl_job_ext_workflow_run GROUP BY workflow_id";

/// `xxl_job_ext_workflow_version`
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct WorkflowVersion {
    pub workflow_id: i64,
    pub version: i32,
    /// The definition document, JSON.
    pub definition: String,
    pub author: Option<String>,
    pub add_time: i64,
}

/// A version without its definition, for the version list.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct VersionInfo {
    pub version: i32,
    pub author: Option<String>,
    pub add_time: i64,
}

/// `xxl_job_ext_workflow_run`
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct WorkflowRun {
    pub id: i64,
    pub workflow_id: i64,
    pub version: i32,
    pub state: String,
    /// Counts the state changes; a change names the value it read.
    pub seq: i32,
    pub trigger_type: String,
    pub logical_time: i64,
    /// The run's parameters, a JSON object.
    pub params: String,
    pub started_by: Option<String>,
    pub parent_run_id: Option<i64>,
    pub parent_node: Option<String>,
    pub backfill_id: Option<i64>,
    pub add_time: i64,
    pub start_time: Option<i64>,
    pub end_time: Option<i64>,
    pub deadline_time: Option<i64>,
    pub message: Option<String>,
}

/// A run to insert (its state's counter starts at 0; start and end come with state changes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRun {
    pub workflow_id: i64,
    pub version: i32,
    pub state: String,
    pub trigger_type: String,
    pub logical_time: i64,
    pub params: String,
    pub started_by: Option<String>,
    pub parent_run_id: Option<i64>,
    pub parent_node: Option<String>,
    pub backfill_id: Option<i64>,
    pub add_time: i64,
    pub deadline_time: Option<i64>,
}

/// A run's new state; the times and message given replace the stored ones, `None` keeps them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunChange {
    pub state: String,
    pub start_time: Option<i64>,
    pub end_time: Option<i64>,
    pub message: Option<String>,
}

/// The filters of the run list; `None` and empty filter nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFilter {
    pub workflow_id: Option<i64>,
    /// Only runs in one of these states.
    pub states: Vec<String>,
    /// Only runs of workflows of these executor groups (none matches an empty list): the user's
    /// permissions.
    pub groups: Option<Vec<i32>>,
    /// Only runs started this way (schedule, misfire, manual, api, subworkflow, backfill).
    pub trigger_type: Option<String>,
    /// Only runs whose logical time is in this range, epoch ms, inclusive.
    pub logical_from: Option<i64>,
    pub logical_to: Option<i64>,
}

/// `xxl_job_ext_workflow_node`: one attempt of one node of a run.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct NodeAttempt {
    pub run_id: i64,
    pub node: String,
    pub attempt: i32,
    pub state: String,
    pub seq: i32,
    pub ready_time: Option<i64>,
    pub retry_time: Option<i64>,
    pub send_time: Option<i64>,
    pub end_time: Option<i64>,
    /// The rendered parameter sent to the job.
    pub param: Option<String>,
    pub output: Option<String>,
    pub message: Option<String>,
    /// Who approved, skipped or stopped it by hand.
    pub acted_by: Option<String>,
}

/// A node attempt's new state; the fields given replace the stored ones, `None` keeps them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeChange {
    pub state: String,
    pub ready_time: Option<i64>,
    pub retry_time: Option<i64>,
    pub send_time: Option<i64>,
    pub end_time: Option<i64>,
    pub param: Option<String>,
    pub output: Option<String>,
    pub message: Option<String>,
    pub acted_by: Option<String>,
}

/// `xxl_job_ext_workflow_trigger`: the node attempt an xxl_job_log row (a trigger, one shard of it) belongs to.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct NodeTrigger {
    pub log_id: i64,
    pub run_id: i64,
    pub node: String,
    pub attempt: i32,
    pub shard_index: i32,
    pub shard_total: i32,
}

const INSERT_WORKFLOW: &str = "INSERT INTO xxl_job_ext_workflow (name, job_group, current_version, \
     schedule_type, schedule_conf, misfire_strategy, author, add_time, update_time) \
     VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?)";
const INSERT_VERSION: &str = "INSERT INTO xxl_job_ext_workflow_version (workflow_id, version, definition, \
     author, add_time) VALUES (?, ?, ?, ?, ?)";
const NEW_VERSION: &str = "UPDATE xxl_job_ext_workflow SET current_version = ?, name = ?, job_group = ?, \
     schedule_type = ?, schedule_conf = ?, misfire_strategy = ?, author = ?, update_time = ? \
     WHERE id = ? AND current_version = ?";
const SET_SCHEDULE: &str = "UPDATE xxl_job_ext_workflow SET trigger_status = ?, schedule_type = ?, \
     schedule_conf = ?, misfire_strategy = ?, trigger_next_time = ?, trigger_last_time = ?, update_time = ? \
     WHERE id = ?";
const CHANGE_RUN: &str = "UPDATE xxl_job_ext_workflow_run SET state = ?, seq = seq + 1, \
     start_time = COALESCE(?, start_time), end_time = COALESCE(?, end_time), message = COALESCE(?, message) \
     WHERE id = ? AND seq = ?";
const INSERT_NODE: &str = "INSERT INTO xxl_job_ext_workflow_node (run_id, node, attempt, state, ready_time, \
     retry_time, send_time, end_time, param, output, message, acted_by) \
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
const CHANGE_NODE: &str = "UPDATE xxl_job_ext_workflow_node SET state = ?, seq = seq + 1, \
     ready_time = COALESCE(?, ready_time), retry_time = COALESCE(?, retry_time), \
     send_time = COALESCE(?, send_time), end_time = COALESCE(?, end_time), param = COALESCE(?, param), \
     output = COALESCE(?, output), message = COALESCE(?, message), acted_by = COALESCE(?, acted_by) \
     WHERE run_id = ? AND node = ? AND attempt = ? AND seq = ?";
const INSERT_TRIGGER: &str = "INSERT INTO xxl_job_ext_workflow_trigger (log_id, run_id, node, attempt, \
     shard_index, shard_total) VALUES (?, ?, ?, ?, ?, ?)";
/// What deleting a workflow removes, children first; each takes the workflow id.
const DELETE_WORKFLOW: [&str; 5] = [
    "DELETE FROM xxl_job_ext_workflow_trigger WHERE run_id IN \
     (SELECT id FROM xxl_job_ext_workflow_run WHERE workflow_id = ?)",
    "DELETE FROM xxl_job_ext_workflow_node WHERE run_id IN \
     (SELECT id FROM xxl_job_ext_workflow_run WHERE workflow_id = ?)",
    "DELETE FROM xxl_job_ext_workflow_run WHERE workflow_id = ?",
    "DELETE FROM xxl_job_ext_workflow_version WHERE workflow_id = ?",
    "DELETE FROM xxl_job_ext_workflow WHERE id = ?",
];

fn head_args(head: &WorkflowHead) -> [Arg; 5] {
    [
        Arg::Text(head.name.clone()),
        Arg::Int(head.job_group.into()),
        Arg::Text(head.schedule_type.clone()),
        Arg::OptText(head.schedule_conf.clone()),
        Arg::Text(head.misfire_strategy.clone()),
    ]
}

fn version_args(id: i64, version: i32, definition: &str, author: Option<&str>, now_ms: i64) -> Vec<Arg> {
    vec![
        Arg::Int(id),
        Arg::Int(version.into()),
        Arg::Text(definition.to_string()),
        Arg::OptText(author.map(str::to_string)),
        Arg::Int(now_ms),
    ]
}

/// Every workflow with the definition of its current version.
const WITH_DEFINITIONS: &str = "SELECT w.*, v.definition FROM xxl_job_ext_workflow w \
     JOIN xxl_job_ext_workflow_version v ON v.workflow_id = w.id AND v.version = w.current_version \
     ORDER BY w.name, w.id";

#[derive(sqlx::FromRow)]
struct WithDefinition {
    #[sqlx(flatten)]
    workflow: Workflow,
    definition: String,
}

/// A name another workflow has is [`StorageError::WorkflowNameTaken`].
fn name_taken(name: &str) -> impl FnOnce(StorageError) -> StorageError + '_ {
    move |e| match e {
        StorageError::Database(sqlx::Error::Database(d)) if d.is_unique_violation() => {
            StorageError::WorkflowNameTaken(name.to_string())
        }
        other => other,
    }
}

/// Inserts a workflow with its version 1 (`definition`) inside `tx`; its id.
async fn insert_workflow_in(
    tx: &mut Tx,
    dialect: &Dialect,
    head: &WorkflowHead,
    definition: &str,
    author: Option<&str>,
    now_ms: i64,
) -> Result<i64> {
    let mut args = head_args(head).to_vec();
    args.extend([Arg::OptText(author.map(str::to_string)), Arg::Int(now_ms), Arg::Int(now_ms)]);
    let id = sql::insert_ids(On::Tx(tx), dialect, INSERT_WORKFLOW, &args, 1)
        .await
        .map_err(name_taken(&head.name))?[0];
    let version = version_args(id, 1, definition, author, now_ms);
    sql::execute(On::Tx(tx), dialect, INSERT_VERSION, &version).await?;
    Ok(id)
}

/// Saves version `expected + 1` inside `tx` if the current version is still `expected`; whether it was.
async fn save_version_in(
    tx: &mut Tx,
    dialect: &Dialect,
    (id, expected): (i64, i32),
    head: &WorkflowHead,
    definition: &str,
    author: Option<&str>,
    now_ms: i64,
) -> Result<bool> {
    let mut args = vec![Arg::Int(i64::from(expected) + 1)];
    args.extend(head_args(head));
    args.extend([
        Arg::OptText(author.map(str::to_string)),
        Arg::Int(now_ms),
        Arg::Int(id),
        Arg::Int(expected.into()),
    ]);
    let won = sql::execute(On::Tx(tx), dialect, NEW_VERSION, &args).await.map_err(name_taken(&head.name))?;
    if won == 0 {
        return Ok(false);
    }
    let version = version_args(id, expected + 1, definition, author, now_ms);
    sql::execute(On::Tx(tx), dialect, INSERT_VERSION, &version).await?;
    Ok(true)
}

/// How many runs of a workflow are not over.
async fn active_runs_in(tx: &mut Tx, dialect: &Dialect, id: i64) -> Result<i64> {
    let active = format!(
        "SELECT COUNT(*) FROM xxl_job_ext_workflow_run WHERE workflow_id = ? AND state IN ({})",
        super::placeholders(ACTIVE_RUN_STATES.len())
    );
    let mut args = vec![Arg::Int(id)];
    args.extend(ACTIVE_RUN_STATES.map(|s| Arg::Text(s.to_string())));
    sql::scalar(On::Tx(tx), dialect, &active, &args).await
}

/// Locks a workflow's row for the transaction `tx` (against a delete, or runs counted meanwhile);
/// whether it exists.
pub(super) async fn lock_workflow_in(tx: &mut Tx, dialect: &Dialect, id: i64) -> Result<bool> {
    let lock = format!("SELECT id FROM xxl_job_ext_workflow WHERE id = ?{}", dialect.for_update);
    let found: Option<(i64,)> = sql::fetch_optional(On::Tx(tx), dialect, &lock, &[Arg::Int(id)]).await?;
    Ok(found.is_some())
}

/// Deletes a workflow and all it has inside `tx`, its row locked first; whether it existed.
/// [`StorageError::WorkflowBusy`] while a run is not over.
async fn delete_workflow_in(tx: &mut Tx, dialect: &Dialect, id: i64) -> Result<bool> {
    if !lock_workflow_in(tx, dialect, id).await? {
        return Ok(false);
    }
    let runs = active_runs_in(tx, dialect, id).await?;
    if runs > 0 {
        return Err(StorageError::WorkflowBusy { id, runs });
    }
    for statement in DELETE_WORKFLOW {
        sql::execute(On::Tx(tx), dialect, statement, &[Arg::Int(id)]).await?;
    }
    Ok(true)
}

fn schedule_args(id: i64, schedule: &WorkflowSchedule, now_ms: i64) -> [Arg; 8] {
    [
        Arg::Int(schedule.trigger_status.into()),
        Arg::Text(schedule.schedule_type.clone()),
        Arg::OptText(schedule.schedule_conf.clone()),
        Arg::Text(schedule.misfire_strategy.clone()),
        Arg::Int(schedule.trigger_next_time),
        Arg::Int(schedule.trigger_last_time),
        Arg::Int(now_ms),
        Arg::Int(id),
    ]
}

impl Db {
    /// Inserts a workflow with its version 1 (`definition`), in one transaction; its id.
    /// [`StorageError::WorkflowNameTaken`] when another workflow has the name.
    pub async fn insert_workflow(
        &self,
        head: &WorkflowHead,
        definition: &str,
        author: Option<&str>,
        now_ms: i64,
    ) -> Result<i64> {
        let mut tx = sql::begin(&self.pool, &self.dialect).await?;
        let id = insert_workflow_in(&mut tx, &self.dialect, head, definition, author, now_ms).await?;
        sql::commit(tx).await?;
        Ok(id)
    }

    /// Saves `definition` as version `expected + 1` and makes it current, with the columns it mirrors,
    /// if the current version is still `expected`; whether it was (`false`: another save came first,
    /// nothing written). [`StorageError::WorkflowNameTaken`] for a name another workflow has.
    pub async fn save_workflow_version(
        &self,
        id: i64,
        expected: i32,
        head: &WorkflowHead,
        definition: &str,
        author: Option<&str>,
        now_ms: i64,
    ) -> Result<bool> {
        let mut tx = sql::begin(&self.pool, &self.dialect).await?;
        if !save_version_in(&mut tx, &self.dialect, (id, expected), head, definition, author, now_ms).await? {
            // Dropping the transaction rolls it back.
            return Ok(false);
        }
        sql::commit(tx).await?;
        Ok(true)
    }

    /// Every workflow with its current version's definition, by name.
    pub async fn workflows_with_definitions(&self) -> Result<Vec<(Workflow, String)>> {
        let rows: Vec<WithDefinition> = self.fetch_all(WITH_DEFINITIONS, &[]).await?;
        Ok(rows.into_iter().map(|r| (r.workflow, r.definition)).collect())
    }

    pub async fn load_workflow(&self, id: i64) -> Result<Option<Workflow>> {
        self.fetch_optional("SELECT * FROM xxl_job_ext_workflow WHERE id = ?", &[Arg::Int(id)]).await
    }

    /// The workflow of exactly this name (MySQL's collation alone would also match other cases).
    pub async fn load_workflow_by_name(&self, name: &str) -> Result<Option<Workflow>> {
        let sql = "SELECT * FROM xxl_job_ext_workflow WHERE name = ?";
        let found: Vec<Workflow> = self.fetch_all(sql, &[Arg::Text(name.to_string())]).await?;
        Ok(found.into_iter().find(|w| w.name == name))
    }

    /// One page of the workflows `filter` matches, by name, and how many it matches.
    pub async fn workflow_page(
        &self,
        filter: &WorkflowFilter,
        offset: i64,
        limit: i64,
    ) -> Result<(Vec<Workflow>, i64)> {
        let mut clause = " WHERE 1 = 1".to_string();
        let mut args = Vec::new();
        restrict_groups(&mut clause, &mut args, filter.groups.as_deref());
        if let Some(pattern) = contains(&filter.name) {
            clause.push_str(&self.like("name"));
            args.push(Arg::Text(pattern));
        }
        match &filter.last_run {
            None => {}
            Some(LastRun::Never) => {
                clause.push_str(" AND id NOT IN (SELECT workflow_id FROM xxl_job_ext_workflow_run)");
            }
            Some(LastRun::In(state)) => {
                clause.push_str(&format!(
                    " AND id IN (SELECT workflow_id FROM xxl_job_ext_workflow_run WHERE state = ? \
                     AND id IN ({LATEST_RUN_IDS}))"
                ));
                args.push(Arg::Text(state.clone()));
            }
        }
        self.page("xxl_job_ext_workflow", &clause, &args, "ORDER BY name, id", offset, limit).await
    }

    /// The latest run of each of these workflows that has one.
    pub async fn latest_runs(&self, workflow_ids: &[i64]) -> Result<Vec<WorkflowRun>> {
        if workflow_ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT * FROM xxl_job_ext_workflow_run WHERE id IN (SELECT MAX(id) FROM xxl_job_ext_workflow_run \
             WHERE workflow_id IN ({}) GROUP BY workflow_id)",
            super::placeholders(workflow_ids.len())
        );
        let args: Vec<Arg> = workflow_ids.iter().map(|&id| Arg::Int(id)).collect();
        self.fetch_all(&sql, &args).await
    }

    pub async fn load_workflow_version(&self, id: i64, version: i32) -> Result<Option<WorkflowVersion>> {
        let sql = "SELECT * FROM xxl_job_ext_workflow_version WHERE workflow_id = ? AND version = ?";
        self.fetch_optional(sql, &[Arg::Int(id), Arg::Int(version.into())]).await
    }

    /// A workflow's versions without their definitions, newest first.
    pub async fn workflow_versions(&self, id: i64) -> Result<Vec<VersionInfo>> {
        let sql = "SELECT version, author, add_time FROM xxl_job_ext_workflow_version \
                   WHERE workflow_id = ? ORDER BY version DESC";
        self.fetch_all(sql, &[Arg::Int(id)]).await
    }

    /// Deletes a workflow with its versions, runs, node attempts and trigger ids; whether it existed.
    /// Refused with [`StorageError::WorkflowBusy`] while a run is queued, running or paused. The workflow
    /// row stays locked meanwhile, so a run inserted by [`Db::insert_run`] cannot slip in between.
    pub async fn delete_workflow(&self, id: i64) -> Result<bool> {
        let mut tx = sql::begin(&self.pool, &self.dialect).await?;
        let deleted = delete_workflow_in(&mut tx, &self.dialect, id).await?;
        if deleted {
            sql::commit(tx).await?;
        }
        Ok(deleted)
    }

    /// Sets whether a workflow is scheduled, how, and its fire times; whether it exists.
    pub async fn set_workflow_schedule(
        &self,
        id: i64,
        schedule: &WorkflowSchedule,
        now_ms: i64,
    ) -> Result<bool> {
        Ok(self.execute(SET_SCHEDULE, &schedule_args(id, schedule, now_ms)).await? > 0)
    }

    /// Inserts a run of an existing workflow; its id, or `None` when the workflow is gone (the workflow
    /// row is locked meanwhile, against [`Db::delete_workflow`]).
    pub async fn insert_run(&self, run: &NewRun) -> Result<Option<i64>> {
        let mut tx = sql::begin(&self.pool, &self.dialect).await?;
        if !lock_workflow_in(&mut tx, &self.dialect, run.workflow_id).await? {
            return Ok(None);
        }
        let id = self.insert_run_in(&mut tx, run, &run.state, None, None, None).await?;
        sql::commit(tx).await?;
        Ok(Some(id))
    }

    /// Changes a run's state if its counter is still `seq` (and counts the change); whether it was.
    pub async fn change_run_state(&self, id: i64, seq: i32, change: &RunChange) -> Result<bool> {
        let args = [
            Arg::Text(change.state.clone()),
            Arg::OptInt(change.start_time),
            Arg::OptInt(change.end_time),
            Arg::OptText(change.message.clone()),
            Arg::Int(id),
            Arg::Int(seq.into()),
        ];
        Ok(self.execute(CHANGE_RUN, &args).await? > 0)
    }

    pub async fn load_run(&self, id: i64) -> Result<Option<WorkflowRun>> {
        self.fetch_optional("SELECT * FROM xxl_job_ext_workflow_run WHERE id = ?", &[Arg::Int(id)]).await
    }

    /// One page of the runs `filter` matches, newest first, and how many it matches.
    pub async fn run_page(
        &self,
        filter: &RunFilter,
        offset: i64,
        limit: i64,
    ) -> Result<(Vec<WorkflowRun>, i64)> {
        let mut clause = " WHERE 1 = 1".to_string();
        let mut args = Vec::new();
        if let Some(workflow_id) = filter.workflow_id {
            clause.push_str(" AND workflow_id = ?");
            args.push(Arg::Int(workflow_id));
        }
        if !filter.states.is_empty() {
            clause.push_str(&format!(" AND state IN ({})", super::placeholders(filter.states.len())));
            args.extend(filter.states.iter().map(|s| Arg::Text(s.clone())));
        }
        if filter.groups.is_some() {
            let mut of_groups = String::new();
            restrict_groups(&mut of_groups, &mut args, filter.groups.as_deref());
            clause.push_str(&format!(
                " AND workflow_id IN (SELECT id FROM xxl_job_ext_workflow WHERE 1 = 1{of_groups})"
            ));
        }
        if let Some(trigger_type) = &filter.trigger_type {
            clause.push_str(" AND trigger_type = ?");
            args.push(Arg::Text(trigger_type.clone()));
        }
        for (bound, value) in [(">=", filter.logical_from), ("<=", filter.logical_to)] {
            if let Some(value) = value {
                clause.push_str(&format!(" AND logical_time {bound} ?"));
                args.push(Arg::Int(value));
            }
        }
        self.page("xxl_job_ext_workflow_run", &clause, &args, "ORDER BY id DESC", offset, limit).await
    }

    /// Inserts a node attempt in `change.state` with its fields (counter 0); `false` when that attempt
    /// exists already (another admin inserted it first).
    pub async fn insert_node_attempt(
        &self,
        run_id: i64,
        node: &str,
        attempt: i32,
        change: &NodeChange,
    ) -> Result<bool> {
        let args = [
            Arg::Int(run_id),
            Arg::Text(node.to_string()),
            Arg::Int(attempt.into()),
            Arg::Text(change.state.clone()),
            Arg::OptInt(change.ready_time),
            Arg::OptInt(change.retry_time),
            Arg::OptInt(change.send_time),
            Arg::OptInt(change.end_time),
            Arg::OptText(change.param.clone()),
            Arg::OptText(change.output.clone()),
            Arg::OptText(change.message.clone()),
            Arg::OptText(change.acted_by.clone()),
        ];
        match self.execute(INSERT_NODE, &args).await {
            Ok(_) => Ok(true),
            Err(StorageError::Database(sqlx::Error::Database(e))) if e.is_unique_violation() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Changes a node attempt's state and fields if its counter is still `seq` (and counts the change);
    /// whether it was.
    pub async fn change_node_state(
        &self,
        run_id: i64,
        node: &str,
        attempt: i32,
        seq: i32,
        change: &NodeChange,
    ) -> Result<bool> {
        let args = [
            Arg::Text(change.state.clone()),
            Arg::OptInt(change.ready_time),
            Arg::OptInt(change.retry_time),
            Arg::OptInt(change.send_time),
            Arg::OptInt(change.end_time),
            Arg::OptText(change.param.clone()),
            Arg::OptText(change.output.clone()),
            Arg::OptText(change.message.clone()),
            Arg::OptText(change.acted_by.clone()),
            Arg::Int(run_id),
            Arg::Text(node.to_string()),
            Arg::Int(attempt.into()),
            Arg::Int(seq.into()),
        ];
        Ok(self.execute(CHANGE_NODE, &args).await? > 0)
    }

    /// The latest attempt of each node of a run, by node name.
    pub async fn latest_node_attempts(&self, run_id: i64) -> Result<Vec<NodeAttempt>> {
        let sql = "SELECT * FROM xxl_job_ext_workflow_node n WHERE run_id = ? AND attempt = \
                   (SELECT MAX(attempt) FROM xxl_job_ext_workflow_node m WHERE m.run_id = n.run_id AND m.node = n.node) \
                   ORDER BY node";
        self.fetch_all(sql, &[Arg::Int(run_id)]).await
    }

    /// Every attempt of every node of a run, by node name and attempt.
    pub async fn node_attempts(&self, run_id: i64) -> Result<Vec<NodeAttempt>> {
        let sql = "SELECT * FROM xxl_job_ext_workflow_node WHERE run_id = ? ORDER BY node, attempt";
        self.fetch_all(sql, &[Arg::Int(run_id)]).await
    }

    /// Records which node attempt an xxl_job_log row was triggered for.
    pub async fn insert_node_trigger(&self, trigger: &NodeTrigger) -> Result<()> {
        let args = [
            Arg::Int(trigger.log_id),
            Arg::Int(trigger.run_id),
            Arg::Text(trigger.node.clone()),
            Arg::Int(trigger.attempt.into()),
            Arg::Int(trigger.shard_index.into()),
            Arg::Int(trigger.shard_total.into()),
        ];
        self.execute(INSERT_TRIGGER, &args).await.map(drop)
    }

    /// The node attempt an xxl_job_log row belongs to, if a workflow triggered it.
    pub async fn node_trigger(&self, log_id: i64) -> Result<Option<NodeTrigger>> {
        let sql = "SELECT * FROM xxl_job_ext_workflow_trigger WHERE log_id = ?";
        self.fetch_optional(sql, &[Arg::Int(log_id)]).await
    }

    /// The triggers (one per shard) of a node attempt, by shard.
    pub async fn node_triggers(&self, run_id: i64, node: &str, attempt: i32) -> Result<Vec<NodeTrigger>> {
        let sql = "SELECT * FROM xxl_job_ext_workflow_trigger WHERE run_id = ? AND node = ? AND attempt = ? \
                   ORDER BY shard_index, log_id";
        self.fetch_all(sql, &[Arg::Int(run_id), Arg::Text(node.to_string()), Arg::Int(attempt.into())]).await
    }
}

/// The statements of a declarative apply on workflows, inside the schedule lock's transaction (one
/// transaction for a whole apply: all of it or nothing). The workflow tables must exist.
impl ScheduleLock {
    /// Every workflow with its current version's definition, by name.
    pub async fn workflows_with_definitions(&mut self) -> Result<Vec<(Workflow, String)>> {
        let (tx, dialect) = self.parts();
        let rows: Vec<WithDefinition> = sql::fetch_all(On::Tx(tx), dialect, WITH_DEFINITIONS, &[]).await?;
        Ok(rows.into_iter().map(|r| (r.workflow, r.definition)).collect())
    }

    /// How many runs of a workflow are not over (queued, running, paused or stopping).
    pub async fn active_runs(&mut self, id: i64) -> Result<i64> {
        let (tx, dialect) = self.parts();
        active_runs_in(tx, dialect, id).await
    }

    /// [`Db::insert_workflow`] inside the lock's transaction.
    pub async fn insert_workflow(
        &mut self,
        head: &WorkflowHead,
        definition: &str,
        author: Option<&str>,
        now_ms: i64,
    ) -> Result<i64> {
        let (tx, dialect) = self.parts();
        insert_workflow_in(tx, dialect, head, definition, author, now_ms).await
    }

    /// [`Db::save_workflow_version`] inside the lock's transaction.
    pub async fn save_workflow_version(
        &mut self,
        id: i64,
        expected: i32,
        head: &WorkflowHead,
        definition: &str,
        author: Option<&str>,
        now_ms: i64,
    ) -> Result<bool> {
        let (tx, dialect) = self.parts();
        save_version_in(tx, dialect, (id, expected), head, definition, author, now_ms).await
    }

    /// [`Db::set_workflow_schedule`] inside the lock's transaction.
    pub async fn set_workflow_schedule(
        &mut self,
        id: i64,
        schedule: &WorkflowSchedule,
        now_ms: i64,
    ) -> Result<bool> {
        let (tx, dialect) = self.parts();
        Ok(sql::execute(On::Tx(tx), dialect, SET_SCHEDULE, &schedule_args(id, schedule, now_ms)).await? > 0)
    }

    /// [`Db::delete_workflow`] inside the lock's transaction.
    pub async fn delete_workflow(&mut self, id: i64) -> Result<bool> {
        let (tx, dialect) = self.parts();
        delete_workflow_in(tx, dialect, id).await
    }
}
