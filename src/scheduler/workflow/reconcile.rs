//! One run reconciled: what its stored state implies is done, one compare-and-set at a time.

use super::snapshot::{node_change, RunSnapshot};
use super::{Result, Workflows, MAX_PASSES};
use crate::alarm::WorkflowCause;
use crate::domain::workflow::model::{Node, NodeKind, NodeState, RunState};
use crate::domain::workflow::readiness::{decide, NodeStatus, RunOutcome, RunView};
use crate::domain::workflow::retry::backoff_ms;
use crate::domain::workflow::template::{self, Context};
use crate::storage::{NodeAttempt, NodeChange, RunChange, WorkflowRun};
use serde_json::Value;
use std::collections::HashMap;

impl Workflows {
    pub(super) async fn reconcile(&self, run_id: i64) -> Result<()> {
        let mut kept = None;
        for _ in 0..MAX_PASSES {
            let run = match kept.take() {
                Some(run) => run,
                None => match self.services().db.load_run(run_id).await? {
                    Some(run) => run,
                    None => return Ok(()),
                },
            };
            match self.pass(&run).await? {
                Next::Done => break,
                // Only node rows changed: the run's row is read again only when it changed (or another
                // admin's change of it made a compare-and-set fail). One changed meanwhile by an operation
                // elsewhere is safe to act on for a pass: a node is only sent under the run's row lock,
                // in the state it has then, and the operation wakes the run again.
                Next::Again => kept = Some(run),
                Next::ReadRun => {}
            }
        }
        Ok(())
    }

    /// One pass over a run: its running attempts progressed, else what is due sent, else the next
    /// decisions applied; what comes next.
    async fn pass(&self, run: &WorkflowRun) -> Result<Next> {
        let db = &self.services().db;
        let run_id = run.id;
        let Some(state) = RunState::parse(&run.state) else {
            tracing::warn!(run_id, state = run.state, "workflow run in an unknown state left alone");
            return Ok(Next::Done);
        };
        if state.is_terminal() || state == RunState::Queued {
            return Ok(Next::Done);
        }
        let def = self.definition(run.workflow_id, run.version).await?;
        let stored = db.node_attempts(run_id).await?;
        let mut attempts: HashMap<&str, Vec<&NodeAttempt>> = HashMap::new();
        for attempt in &stored {
            attempts.entry(attempt.node.as_str()).or_default().push(attempt);
        }
        let view = RunSnapshot { run, state, def: &def, attempts };
        let now = self.services().clock.now_ms();
        if self.deadline(&view, now).await? {
            return Ok(Next::ReadRun);
        }
        if self.progress_running(&view, now).await? {
            return Ok(Next::Again);
        }
        if self.send_due(&view, now).await? {
            return Ok(Next::Again);
        }
        // What was queued went out (if anything): the decisions over this reading (the sent nodes still
        // queued in it, which they treat as started) say whether anything else is to do, with no reading more.
        self.apply_decisions(&view, now).await
    }

    /// Alarms, once, when a run passes its deadline, and stops it if the definition says so.
    async fn deadline(&self, view: &RunSnapshot<'_>, now: i64) -> Result<bool> {
        let run = view.run;
        let Some(deadline) = run.deadline_time else { return Ok(false) };
        if now < deadline {
            self.wake_at_deadline(run.id, deadline);
            return Ok(false);
        }
        if run.message.as_deref().is_some_and(|m| m.starts_with(DEADLINE_PASSED)) {
            return Ok(false);
        }
        let stop = view.def.deadline.as_ref().is_some_and(|d| d.stop);
        let state = if stop && view.state != RunState::Stopping { RunState::Stopping } else { view.state };
        let message =
            format!("{DEADLINE_PASSED} at {deadline}{}", if stop { "; the run is stopped" } else { "" });
        let change = RunChange {
            state: state.as_str().into(),
            message: Some(message.clone()),
            ..RunChange::default()
        };
        if self.services().db.change_run_state(run.id, run.seq, &change).await? {
            tracing::warn!(run_id = run.id, workflow = view.def.name, "{message}");
            let deadline_at = self.local_time(deadline);
            self.alarm(
                view,
                WorkflowCause::DeadlinePassed { deadline_ms: deadline, deadline_at, stopped: stop },
            );
        }
        Ok(true)
    }

    /// Sends what is due: retries whose time came, and attempts queued (by this pass's predecessor, or
    /// by an admin that stopped before sending them). Whether attempts changed otherwise than by being
    /// sent (a retry came due, a send failed its attempt or lost to another admin): then the run is read
    /// again.
    async fn send_due(&self, view: &RunSnapshot<'_>, now: i64) -> Result<bool> {
        if view.state != RunState::Running {
            return Ok(false);
        }
        let db = &self.services().db;
        let mut changed = false;
        let mut queued = Vec::new();
        for node in &view.def.nodes {
            let Some(attempt) = view.latest(&node.name) else { continue };
            if attempt.state == NodeState::WaitingRetry.as_str()
                && attempt.retry_time.is_none_or(|t| t <= now)
            {
                let change = NodeChange { ready_time: Some(now), ..node_change(NodeState::Queued) };
                db.change_node_state(view.run.id, &node.name, attempt.attempt, attempt.seq, &change).await?;
                changed = true;
            } else if attempt.state == NodeState::Queued.as_str() {
                queued.push((node, attempt));
            }
        }
        if queued.is_empty() {
            return Ok(changed);
        }
        let nodes: Vec<&Node> = queued.iter().map(|(node, _)| *node).collect();
        let jobs = self.send_jobs(&nodes).await?;
        let context = view.context();
        for (node, attempt) in queued {
            // One that failed instead (or that another admin sent) changes what the next reading holds.
            if !self.send(view, node, attempt, (&context, &jobs), now).await? {
                changed = true;
            }
        }
        Ok(changed)
    }

    /// Applies the readiness decisions (and failed attempts' retries); finishes the run when every node
    /// is done.
    async fn apply_decisions(&self, view: &RunSnapshot<'_>, now: i64) -> Result<Next> {
        let db = &self.services().db;
        let mut statuses = HashMap::new();
        let mut choices = HashMap::new();
        let mut changed = false;
        for node in &view.def.nodes {
            let Some(latest) = view.latest(&node.name) else { continue };
            let Some(mut state) = NodeState::parse(&latest.state) else { continue };
            if view.retries_left(node) {
                if view.state == RunState::Running || view.state == RunState::Paused {
                    let n = view.attempts[node.name.as_str()].len() as u32;
                    let first = view.attempts[node.name.as_str()].iter().rposition(|a| a.acted_by.is_some());
                    let retry_number = n - first.unwrap_or(0) as u32;
                    let delay = backoff_ms(&node.retry, retry_number, rand::random::<f64>());
                    let change = NodeChange {
                        retry_time: Some(now + delay as i64),
                        message: Some(format!("retry {retry_number} of {} in {delay} ms", node.retry.count)),
                        ..node_change(NodeState::WaitingRetry)
                    };
                    if db.insert_node_attempt(view.run.id, &node.name, latest.attempt + 1, &change).await? {
                        self.wake_at(view.run.id, now + delay as i64);
                        changed = true;
                    }
                }
                state = NodeState::WaitingRetry;
            }
            if state == NodeState::Succeeded {
                if let NodeKind::Branch { .. } = node.kind {
                    let chosen: Vec<String> =
                        serde_json::from_str(latest.output.as_deref().unwrap_or("[]")).unwrap_or_default();
                    choices.insert(node.name.clone(), chosen);
                }
            }
            statuses.insert(node.name.clone(), NodeStatus { state, allow_failure: node.allow_failure });
        }
        if changed {
            return Ok(Next::Again);
        }
        let decisions = decide(
            view.def,
            &RunView {
                nodes: &statuses,
                branch_choices: &choices,
                failure_strategy: view.def.failure_strategy,
                paused: view.state == RunState::Paused,
                stopping: view.state == RunState::Stopping,
            },
        );
        let settled = [
            (&decisions.skip, NodeState::Skipped),
            (&decisions.upstream_failed, NodeState::UpstreamFailed),
            (&decisions.stop, NodeState::Stopped),
        ];
        for (names, state) in settled {
            for name in names {
                changed |= self.settle_node(view, name, state, now).await?;
            }
        }
        let mut context = None;
        for name in &decisions.start {
            let Some(node) = view.def.nodes.iter().find(|n| &n.name == name) else { continue };
            let context = context.get_or_insert_with(|| view.context());
            changed |= self.begin(view, node, context, now).await?;
        }
        if changed || !decisions.is_idle() {
            return Ok(Next::Again);
        }
        match decisions.finished {
            Some(outcome) => self.finish_run(view, outcome, now).await,
            None => Ok(Next::Done),
        }
    }

    /// Gives a node that has not started (or waits) a final state.
    async fn settle_node(
        &self,
        view: &RunSnapshot<'_>,
        name: &str,
        state: NodeState,
        now: i64,
    ) -> Result<bool> {
        let change = NodeChange { end_time: Some(now), ..node_change(state) };
        self.put_attempt(view, name, &change).await
    }

    /// Starts a node that became ready: a job or sub-workflow is queued (and sent by the next pass), a
    /// branch chooses its ways, an approval waits.
    async fn begin(&self, view: &RunSnapshot<'_>, node: &Node, context: &Context, now: i64) -> Result<bool> {
        let change = match &node.kind {
            NodeKind::Job { .. } | NodeKind::SubWorkflow { .. } => {
                NodeChange { ready_time: Some(now), ..node_change(NodeState::Queued) }
            }
            NodeKind::Approval { .. } => {
                NodeChange { ready_time: Some(now), ..node_change(NodeState::WaitingApproval) }
            }
            NodeKind::Branch { ways, default } => {
                let mut chosen = None;
                let mut failure = None;
                for (i, way) in ways.iter().enumerate() {
                    match template::evaluate(&way.when, context) {
                        Ok(true) => {
                            chosen = Some(way.to.clone());
                            break;
                        }
                        Ok(false) => {}
                        Err(e) => {
                            failure = Some(format!("way {i} (`{}`) {e}", way.when));
                            break;
                        }
                    }
                }
                match failure {
                    Some(message) => NodeChange {
                        ready_time: Some(now),
                        end_time: Some(now),
                        message: Some(message),
                        ..node_change(NodeState::Failed)
                    },
                    None => {
                        let chosen = chosen.unwrap_or_else(|| default.clone());
                        NodeChange {
                            ready_time: Some(now),
                            end_time: Some(now),
                            output: Some(Value::from(chosen.clone()).to_string()),
                            message: Some(format!("chose {}", chosen.join(", "))),
                            ..node_change(NodeState::Succeeded)
                        }
                    }
                }
            }
        };
        self.put_attempt(view, &node.name, &change).await
    }

    /// Writes `change` as the node's latest attempt: over a pending or waiting one (compare-and-set),
    /// else as a new attempt.
    pub(super) async fn put_attempt(
        &self,
        view: &RunSnapshot<'_>,
        name: &str,
        change: &NodeChange,
    ) -> Result<bool> {
        let db = &self.services().db;
        match view.latest(name) {
            Some(latest) if !is_final(&latest.state) && latest.state != NodeState::Running.as_str() => {
                db.change_node_state(view.run.id, name, latest.attempt, latest.seq, change).await
            }
            Some(latest) => db.insert_node_attempt(view.run.id, name, latest.attempt + 1, change).await,
            None => db.insert_node_attempt(view.run.id, name, 1, change).await,
        }
        .map_err(Into::into)
    }

    /// Ends a run whose nodes are all done; starts what its end makes room for and tells its parent.
    async fn finish_run(&self, view: &RunSnapshot<'_>, outcome: RunOutcome, now: i64) -> Result<Next> {
        let state = match (view.state, outcome) {
            (RunState::Stopping, _) => RunState::Stopped,
            (_, RunOutcome::Succeeded) => RunState::Succeeded,
            (_, RunOutcome::Failed) => RunState::Failed,
        };
        let change = RunChange { state: state.as_str().into(), end_time: Some(now), ..RunChange::default() };
        let db = &self.services().db;
        if !db.change_run_state(view.run.id, view.run.seq, &change).await? {
            return Ok(Next::ReadRun);
        }
        self.services().metrics.workflow_run_ended(state.as_str());
        if state == RunState::Failed {
            let failed: Vec<&str> = view
                .def
                .nodes
                .iter()
                .filter(|n| view.latest(&n.name).is_some_and(|a| a.state == NodeState::Failed.as_str()))
                .map(|n| n.name.as_str())
                .collect();
            tracing::warn!(
                run_id = view.run.id,
                workflow = view.def.name,
                "workflow run failed; failed nodes: {}",
                failed.join(", ")
            );
            let failed_nodes = failed.into_iter().map(str::to_string).collect();
            self.alarm(view, WorkflowCause::Failed { failed_nodes });
        }
        match view.run.backfill_id {
            Some(backfill) => self.promote_backfill(backfill).await?,
            None => {
                let max_runs = view.def.concurrency.max_runs;
                for id in db.promote_queued_runs(view.run.workflow_id, max_runs, now).await? {
                    self.wake(id);
                }
            }
        }
        if let Some(parent) = view.run.parent_run_id {
            self.wake(parent);
        }
        Ok(Next::Done)
    }
}

/// What follows a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    Done,
    /// Another pass, over the run's row as it was read.
    Again,
    /// Another pass, over the run's row read again.
    ReadRun,
}

/// The text a run's message starts with once its deadline passed (so it alarms once).
const DEADLINE_PASSED: &str = "deadline passed";

fn is_final(state: &str) -> bool {
    NodeState::parse(state).is_some_and(NodeState::is_terminal)
}
