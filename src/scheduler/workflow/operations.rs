//! What users and tokens do to workflow runs: start one, stop, pause and resume it, retry its failed
//! nodes, rerun from a node, mark a node succeeded or failed, skip a node, approve or reject an approval.
//!
//! Each operation writes its change by compare-and-set and wakes the run; the reconciler does the rest
//! (kills, sends, skips), so an operation racing the run's own progress is decided by the database.

use super::schedule::{limits, new_run, RunStart};
use super::snapshot::RunSnapshot;
use super::{EngineError, Workflows};
use crate::domain::schedule::{next_time, ScheduleType};
use crate::domain::workflow::graph::Graph;
use crate::domain::workflow::model::{Definition, NodeState, RunState};
use crate::storage::{
    Admitted, NewBackfill, NodeAttempt, NodeChange, RunChange, StorageError, Workflow, WorkflowRun,
};
use crate::time::CRON_ZONE;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum OperationError {
    #[error("workflow {0} does not exist")]
    NoWorkflow(i64),
    #[error("workflow run {0} does not exist")]
    NoRun(i64),
    #[error("workflow backfill {0} does not exist")]
    NoBackfill(i64),
    #[error("run {run} has no node named {node}")]
    NoNode { run: i64, node: String },
    /// The run or node is not in a state the operation applies to.
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl From<StorageError> for OperationError {
    fn from(e: StorageError) -> OperationError {
        OperationError::Engine(e.into())
    }
}

pub(super) type Result<T> = std::result::Result<T, OperationError>;

/// Who starts a run, how, and with what.
pub struct StartRequest {
    /// `manual` (console), `api` (a token).
    pub trigger_type: &'static str,
    pub params: Map<String, Value>,
    pub started_by: Option<String>,
    /// The instant the run stands for; now when absent.
    pub logical_time: Option<i64>,
}

/// Most runs one backfill makes.
pub const MAX_BACKFILL_RUNS: usize = 1_000;

/// A backfill to start: a run for every schedule instant from `from` to `to` (epoch ms, inclusive),
/// `parallel` at a time.
pub struct BackfillRequest {
    pub from: i64,
    pub to: i64,
    pub parallel: u32,
    pub params: Map<String, Value>,
    pub started_by: Option<String>,
}

/// Who acts, for the attempt's record.
pub struct Actor<'a> {
    pub name: &'a str,
    /// An administrator may approve any approval node.
    pub admin: bool,
}

/// A run with what operations look at.
pub(super) struct Loaded {
    pub(super) run: WorkflowRun,
    pub(super) state: RunState,
    pub(super) def: Arc<Definition>,
    pub(super) attempts: Vec<NodeAttempt>,
}

impl Loaded {
    pub(super) fn snapshot(&self) -> RunSnapshot<'_> {
        let mut attempts: HashMap<&str, Vec<&NodeAttempt>> = HashMap::new();
        for attempt in &self.attempts {
            attempts.entry(attempt.node.as_str()).or_default().push(attempt);
        }
        RunSnapshot { run: &self.run, state: self.state, def: &self.def, attempts }
    }

    pub(super) fn latest_state(&self, node: &str) -> Option<NodeState> {
        self.attempts.iter().rev().find(|a| a.node == node).and_then(|a| NodeState::parse(&a.state))
    }

    pub(super) fn check_node(&self, node: &str) -> Result<()> {
        if self.def.nodes.iter().any(|n| n.name == node) {
            Ok(())
        } else {
            Err(OperationError::NoNode { run: self.run.id, node: node.to_string() })
        }
    }

    /// `node` and every node after it.
    pub(super) fn node_and_after(&self, node: &str) -> Vec<String> {
        let graph = Graph::new(&self.def);
        let Some(&start) = graph.index.get(node) else { return Vec::new() };
        let mut seen = vec![false; graph.len()];
        let mut stack = vec![start];
        while let Some(v) = stack.pop() {
            if !std::mem::replace(&mut seen[v], true) {
                stack.extend(graph.downstream[v].iter().copied());
            }
        }
        self.def.nodes.iter().enumerate().filter(|(i, _)| seen[*i]).map(|(_, n)| n.name.clone()).collect()
    }
}

impl Workflows {
    pub(super) async fn load(&self, run_id: i64) -> Result<Loaded> {
        let db = &self.services().db;
        if !self.tables_exist_now().await? {
            return Err(OperationError::NoRun(run_id));
        }
        let run = db.load_run(run_id).await?.ok_or(OperationError::NoRun(run_id))?;
        let state = RunState::parse(&run.state).ok_or_else(|| {
            OperationError::Refused(format!("run {run_id} is in an unknown state {}", run.state))
        })?;
        let def = self.definition(run.workflow_id, run.version).await?;
        let attempts = db.node_attempts(run_id).await?;
        Ok(Loaded { run, state, def, attempts })
    }

    /// Starts a run of a workflow's current version, admitted under its concurrency policy.
    pub async fn start_run(&self, workflow_id: i64, request: StartRequest) -> Result<Admitted> {
        let db = &self.services().db;
        if !self.tables_exist_now().await? {
            return Err(OperationError::NoWorkflow(workflow_id));
        }
        let workflow = db.load_workflow(workflow_id).await?.ok_or(OperationError::NoWorkflow(workflow_id))?;
        let def = self.definition(workflow_id, workflow.current_version).await?;
        let now = self.services().clock.now_ms();
        let start = RunStart {
            trigger_type: request.trigger_type,
            logical_time: request.logical_time.unwrap_or(now),
            params: request.params,
            started_by: request.started_by,
            backfill_id: None,
        };
        let run = new_run(workflow_id, workflow.current_version, &def, start, now);
        let admitted =
            db.admit_run(&run, limits(&def), now).await?.ok_or(OperationError::NoWorkflow(workflow_id))?;
        self.services().metrics.workflow_run_started(admitted.state);
        if let Some(replaced) = admitted.replaced {
            self.wake(replaced);
        }
        if admitted.state == RunState::Running.as_str() {
            self.wake(admitted.id);
        }
        Ok(admitted)
    }

    /// Starts a backfill of a workflow's current version; its id and how many runs it makes.
    pub async fn backfill(&self, workflow_id: i64, request: BackfillRequest) -> Result<(i64, usize)> {
        let db = &self.services().db;
        if !self.tables_exist_now().await? {
            return Err(OperationError::NoWorkflow(workflow_id));
        }
        let workflow = db.load_workflow(workflow_id).await?.ok_or(OperationError::NoWorkflow(workflow_id))?;
        if request.from > request.to {
            return Err(OperationError::Refused("a backfill's range must not end before it begins".into()));
        }
        if request.parallel == 0 {
            return Err(OperationError::Refused("a backfill runs at least one run at a time".into()));
        }
        let instants = schedule_instants(&workflow, request.from, request.to)?;
        if instants.is_empty() {
            return Err(OperationError::Refused("the schedule has no instant in that range".into()));
        }
        let def = self.definition(workflow_id, workflow.current_version).await?;
        let now = self.services().clock.now_ms();
        let runs: Vec<_> = instants
            .iter()
            .map(|&instant| {
                let start = RunStart {
                    trigger_type: "backfill",
                    logical_time: instant,
                    params: request.params.clone(),
                    started_by: request.started_by.clone(),
                    backfill_id: None,
                };
                new_run(workflow_id, workflow.current_version, &def, start, now)
            })
            .collect();
        let backfill = NewBackfill {
            workflow_id,
            from_time: request.from,
            to_time: request.to,
            parallel: request.parallel,
            author: request.started_by.as_deref(),
            runs: &runs,
        };
        let id = db.insert_backfill(&backfill, now).await?.ok_or(OperationError::NoWorkflow(workflow_id))?;
        for _ in &runs {
            self.services().metrics.workflow_run_started(RunState::Queued.as_str());
        }
        for run in db.promote_backfill(id, now).await? {
            self.wake(run);
        }
        Ok((id, runs.len()))
    }

    /// Stops a backfill: its waiting runs end, its going runs are stopped.
    pub async fn stop_backfill(&self, id: i64, actor: &Actor<'_>) -> Result<()> {
        let db = &self.services().db;
        let message = format!("stopped with its backfill by {}", actor.name);
        let now = self.services().clock.now_ms();
        match db.stop_backfill(id, &message, now).await? {
            Some(stopping) => {
                for run in stopping {
                    self.wake(run);
                }
                Ok(())
            }
            None => match db.load_backfill(id).await? {
                Some(b) => Err(OperationError::Refused(format!("backfill {id} is {}", b.state))),
                None => Err(OperationError::NoBackfill(id)),
            },
        }
    }

    /// Changes a run's state by compare-and-set from one of `from`, reading it again when another change
    /// came first; the state it had.
    async fn change_run(
        &self,
        run_id: i64,
        from: &[RunState],
        to: RunState,
        message: String,
        what: &str,
    ) -> Result<RunState> {
        let db = &self.services().db;
        for _ in 0..5 {
            let run = db.load_run(run_id).await?.ok_or(OperationError::NoRun(run_id))?;
            let state = RunState::parse(&run.state).unwrap_or(RunState::Failed);
            if !from.contains(&state) {
                return Err(OperationError::Refused(format!(
                    "run {run_id} is {}: it cannot be {what}",
                    run.state
                )));
            }
            let now = self.services().clock.now_ms();
            let end_time = (to == RunState::Stopped).then_some(now);
            let change = RunChange {
                state: to.as_str().into(),
                end_time,
                message: Some(message.clone()),
                ..RunChange::default()
            };
            if db.change_run_state(run_id, run.seq, &change).await? {
                self.wake(run_id);
                return Ok(state);
            }
        }
        Err(OperationError::Refused(format!("run {run_id} kept changing; try again")))
    }

    /// Stops a run: nothing starts any more and running nodes are killed. A queued run ends at once.
    pub async fn stop_run(&self, run_id: i64, actor: &Actor<'_>) -> Result<()> {
        let message = format!("stopped by {}", actor.name);
        let going = [RunState::Running, RunState::Paused];
        match self.change_run(run_id, &going, RunState::Stopping, message.clone(), "stopped").await {
            Err(OperationError::Refused(_)) => {
                self.change_run(run_id, &[RunState::Queued], RunState::Stopped, message, "stopped").await?;
            }
            other => {
                other?;
            }
        }
        Ok(())
    }

    /// Pauses a run: no node starts until it is resumed; running nodes finish.
    pub async fn pause_run(&self, run_id: i64, actor: &Actor<'_>) -> Result<()> {
        let message = format!("paused by {}", actor.name);
        self.change_run(run_id, &[RunState::Running], RunState::Paused, message, "paused").await.map(drop)
    }

    pub async fn resume_run(&self, run_id: i64, actor: &Actor<'_>) -> Result<()> {
        let message = format!("resumed by {}", actor.name);
        self.change_run(run_id, &[RunState::Paused], RunState::Running, message, "resumed").await.map(drop)
    }

    /// Runs again every node that did not succeed (failed, cut off by a failure, stopped); what
    /// succeeded keeps its output. A finished run goes on.
    pub async fn retry_failed(&self, run_id: i64, actor: &Actor<'_>) -> Result<Vec<String>> {
        let loaded = self.load(run_id).await?;
        let again = [NodeState::Failed, NodeState::UpstreamFailed, NodeState::Stopped];
        let nodes: Vec<String> = loaded
            .def
            .nodes
            .iter()
            .filter(|n| loaded.latest_state(&n.name).is_some_and(|s| again.contains(&s)))
            .map(|n| n.name.clone())
            .collect();
        if nodes.is_empty() {
            return Err(OperationError::Refused(format!("run {run_id} has no failed or stopped node")));
        }
        self.reset(&loaded, &nodes, actor, "retry of the failed nodes").await?;
        Ok(nodes)
    }

    /// Runs `node` and every node after it again.
    pub async fn rerun_from(&self, run_id: i64, node: &str, actor: &Actor<'_>) -> Result<Vec<String>> {
        let loaded = self.load(run_id).await?;
        loaded.check_node(node)?;
        let nodes = loaded.node_and_after(node);
        let busy: Vec<&str> = nodes
            .iter()
            .filter(|n| matches!(loaded.latest_state(n), Some(NodeState::Running | NodeState::Queued)))
            .map(String::as_str)
            .collect();
        if !busy.is_empty() {
            return Err(OperationError::Refused(format!(
                "node(s) {} of run {run_id} are running; wait for them or stop the run first",
                busy.join(", ")
            )));
        }
        let finished: Vec<String> = nodes
            .into_iter()
            .filter(|n| loaded.latest_state(n).is_some_and(NodeState::is_terminal))
            .collect();
        self.reset(&loaded, &finished, actor, &format!("rerun from {node}")).await?;
        Ok(finished)
    }

    /// Gives each of `nodes` a new attempt, pending, recorded as asked by `actor`; a finished run goes on.
    async fn reset(&self, loaded: &Loaded, nodes: &[String], actor: &Actor<'_>, why: &str) -> Result<()> {
        if loaded.state == RunState::Stopping || loaded.state == RunState::Queued {
            return Err(OperationError::Refused(format!("run {} is {}", loaded.run.id, loaded.run.state)));
        }
        let db = &self.services().db;
        let snapshot = loaded.snapshot();
        for node in nodes {
            let next = snapshot.latest(node).map_or(1, |a| a.attempt + 1);
            let change = NodeChange {
                state: NodeState::Pending.as_str().into(),
                message: Some(format!("{why}, asked by {}", actor.name)),
                acted_by: Some(actor.name.to_string()),
                ..NodeChange::default()
            };
            db.insert_node_attempt(loaded.run.id, node, next, &change).await?;
        }
        self.revive(loaded, &format!("{why}, asked by {}", actor.name)).await
    }

    /// A finished run whose nodes were given new attempts goes on running.
    pub(super) async fn revive(&self, loaded: &Loaded, why: &str) -> Result<()> {
        if loaded.state.is_terminal() {
            let from = [loaded.state];
            self.change_run(loaded.run.id, &from, RunState::Running, why.to_string(), "run again").await?;
        } else {
            self.wake(loaded.run.id);
        }
        Ok(())
    }
}

/// The instants of a workflow's schedule from `from` to `to`, inclusive; refused past
/// [`MAX_BACKFILL_RUNS`] or without a schedule.
fn schedule_instants(workflow: &Workflow, from: i64, to: i64) -> Result<Vec<i64>> {
    let refused = |why: String| OperationError::Refused(why);
    if ScheduleType::from_name(&workflow.schedule_type).is_none_or(|t| t == ScheduleType::None) {
        return Err(refused(format!(
            "workflow {} has no schedule: a backfill runs the instants of its schedule",
            workflow.name
        )));
    }
    let mut instants = Vec::new();
    let mut after = from - 1;
    loop {
        let next = next_time(&workflow.schedule_type, workflow.schedule_conf.as_deref(), after, CRON_ZONE)
            .map_err(|e| refused(format!("the workflow's schedule does not parse: {e}")))?;
        let Some(next) = next.filter(|n| *n <= to) else { return Ok(instants) };
        if instants.len() == MAX_BACKFILL_RUNS {
            return Err(refused(format!("the range holds more than {MAX_BACKFILL_RUNS} schedule instants")));
        }
        instants.push(next);
        after = next;
    }
}
