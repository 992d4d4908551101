//! One run reconciled: what its stored state implies is done, one compare-and-set at a time.

use super::{Result, Workflows, MAX_PASSES};
use crate::domain::callback::MAX_HANDLE_MSG_UTF16;
use crate::domain::workflow::model::{Definition, Node, NodeKind, NodeState, RunState};
use crate::domain::workflow::readiness::{decide, NodeStatus, RunOutcome, RunView};
use crate::domain::workflow::retry::backoff_ms;
use crate::domain::workflow::template::{self, Context, NodeResult};
use crate::storage::{NodeAttempt, NodeChange, NodeLogResult, RunChange, WorkflowRun};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};

/// A run as read for one pass: its definition and each node's attempts.
pub(super) struct RunSnapshot<'a> {
    pub run: &'a WorkflowRun,
    pub state: RunState,
    pub def: &'a Definition,
    /// Each node's attempts, oldest first.
    pub attempts: HashMap<&'a str, Vec<&'a NodeAttempt>>,
}

impl<'a> RunSnapshot<'a> {
    pub fn latest(&self, node: &str) -> Option<&'a NodeAttempt> {
        self.attempts.get(node).and_then(|a| a.last().copied())
    }

    /// Whether the node's latest attempt failed and its retries allow another.
    fn retries_left(&self, node: &Node) -> bool {
        let Some(attempts) = self.attempts.get(node.name.as_str()) else { return false };
        let Some(latest) = attempts.last() else { return false };
        if latest.state != NodeState::Failed.as_str() || marked(latest) {
            return false;
        }
        // Attempts count from the last one a person asked for (a retry or rerun operation).
        let first = attempts.iter().rposition(|a| a.acted_by.is_some()).unwrap_or(0);
        attempts.len() - first <= node.retry.count as usize
    }

    /// What templates and expressions see: the run's parameters and the results of finished nodes.
    pub fn context(&self) -> Context {
        let params = serde_json::from_str::<Map<String, Value>>(&self.run.params).unwrap_or_default();
        let mut nodes = BTreeMap::new();
        for node in &self.def.nodes {
            let Some(latest) = self.latest(&node.name) else { continue };
            let Some(state) = NodeState::parse(&latest.state).filter(|s| s.is_terminal()) else { continue };
            nodes.insert(
                node.name.clone(),
                NodeResult { output: output_value(latest.output.as_deref()), state },
            );
        }
        Context {
            params,
            logical_time: self.run.logical_time,
            ds: super::send::logical_date(self.run.logical_time),
            run_id: self.run.id,
            nodes,
        }
    }
}

/// A node's stored output as a value: JSON where it is JSON, else the text; null when there is none.
pub(super) fn output_value(output: Option<&str>) -> Value {
    match output {
        None => Value::Null,
        Some(text) => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string())),
    }
}

/// Whether a failed attempt was set failed by a person (never retried), not by its run.
fn marked(attempt: &NodeAttempt) -> bool {
    attempt.acted_by.is_some() && attempt.send_time.is_none()
}

fn node_change(state: NodeState) -> NodeChange {
    NodeChange { state: state.as_str().to_string(), ..NodeChange::default() }
}

impl Workflows {
    pub(super) async fn reconcile(&self, run_id: i64) -> Result<()> {
        for _ in 0..MAX_PASSES {
            if !self.pass(run_id).await? {
                break;
            }
        }
        Ok(())
    }

    /// One pass over a run: its running attempts progressed, else what is due sent, else the next
    /// decisions applied; whether it changed anything (then the caller reads the run again).
    async fn pass(&self, run_id: i64) -> Result<bool> {
        let db = &self.services().db;
        let Some(run) = db.load_run(run_id).await? else { return Ok(false) };
        let Some(state) = RunState::parse(&run.state) else {
            tracing::warn!(run_id, state = run.state, "workflow run in an unknown state left alone");
            return Ok(false);
        };
        if state.is_terminal() || state == RunState::Queued {
            return Ok(false);
        }
        let def = self.definition(run.workflow_id, run.version).await?;
        let stored = db.node_attempts(run_id).await?;
        let mut attempts: HashMap<&str, Vec<&NodeAttempt>> = HashMap::new();
        for attempt in &stored {
            attempts.entry(attempt.node.as_str()).or_default().push(attempt);
        }
        let view = RunSnapshot { run: &run, state, def: &def, attempts };
        let now = self.services().clock.now_ms();
        if self.deadline(&view, now).await? {
            return Ok(true);
        }
        if self.progress_running(&view, now).await? {
            return Ok(true);
        }
        if self.send_due(&view, now).await? {
            return Ok(true);
        }
        self.apply_decisions(&view, now).await
    }

    /// Alarms, once, when a run passes its deadline, and stops it if the definition says so.
    async fn deadline(&self, view: &RunSnapshot<'_>, now: i64) -> Result<bool> {
        let run = view.run;
        let Some(deadline) = run.deadline_time.filter(|d| now >= *d) else { return Ok(false) };
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
        }
        Ok(true)
    }

    /// Finishes the running attempts whose results are in, times out those past their timeout, and
    /// stops them all when the run is stopping.
    async fn progress_running(&self, view: &RunSnapshot<'_>, now: i64) -> Result<bool> {
        let running: Vec<(&Node, &NodeAttempt)> = view
            .def
            .nodes
            .iter()
            .filter_map(|n| view.latest(&n.name).map(|a| (n, a)))
            .filter(|(_, a)| a.state == NodeState::Running.as_str())
            .collect();
        if running.is_empty() {
            return Ok(false);
        }
        let results = if running.iter().any(|(n, _)| matches!(n.kind, NodeKind::Job { .. })) {
            self.services().db.run_trigger_results(view.run.id).await?
        } else {
            Vec::new()
        };
        let mut changed = false;
        for (node, attempt) in running {
            changed |= match node.kind {
                NodeKind::Job { .. } => {
                    let logs: Vec<&NodeLogResult> = results
                        .iter()
                        .filter(|l| l.node == node.name && l.attempt == attempt.attempt)
                        .collect();
                    self.progress_job(view, node, attempt, &logs, now).await?
                }
                NodeKind::SubWorkflow { .. } => self.progress_child(view, node, attempt, now).await?,
                NodeKind::Branch { .. } | NodeKind::Approval { .. } => false,
            };
        }
        Ok(changed)
    }

    async fn progress_job(
        &self,
        view: &RunSnapshot<'_>,
        node: &Node,
        attempt: &NodeAttempt,
        logs: &[&NodeLogResult],
        now: i64,
    ) -> Result<bool> {
        if view.state == RunState::Stopping {
            let message = "stopped with its run".to_string();
            return self.end_attempt(view, attempt, NodeState::Stopped, None, message, logs, now).await;
        }
        if logs.is_empty() {
            return Ok(false);
        }
        if logs.iter().all(|l| finished(l)) {
            let (state, output, message) = job_outcome(logs);
            return self.end_attempt(view, attempt, state, output, message, &[], now).await;
        }
        let sent = attempt.send_time.unwrap_or(now);
        if node.timeout_seconds > 0 && now - sent >= i64::from(node.timeout_seconds) * 1000 {
            let message = format!("timed out after {} s; its runs were killed", node.timeout_seconds);
            return self.end_attempt(view, attempt, NodeState::Failed, None, message, logs, now).await;
        }
        Ok(false)
    }

    async fn progress_child(
        &self,
        view: &RunSnapshot<'_>,
        node: &Node,
        attempt: &NodeAttempt,
        now: i64,
    ) -> Result<bool> {
        let db = &self.services().db;
        let children = db.child_runs(view.run.id).await?;
        let Some(child) =
            children.iter().rev().find(|c| c.parent_node.as_deref() == Some(node.name.as_str()))
        else {
            return Ok(false);
        };
        let child_state = RunState::parse(&child.state).unwrap_or(RunState::Failed);
        if view.state == RunState::Stopping && !child_state.is_terminal() {
            if child_state != RunState::Stopping {
                let change = RunChange { state: RunState::Stopping.as_str().into(), ..RunChange::default() };
                db.change_run_state(child.id, child.seq, &change).await?;
                self.wake(child.id);
            }
            return Ok(false);
        }
        if !child_state.is_terminal() {
            return Ok(false);
        }
        let state = if child_state == RunState::Succeeded { NodeState::Succeeded } else { NodeState::Failed };
        let output = serde_json::json!({"runId": child.id, "state": child.state}).to_string();
        let message = format!("run {} of workflow {} {}", child.id, child.workflow_id, child.state);
        self.end_attempt(view, attempt, state, Some(output), message, &[], now).await
    }

    /// Ends a running attempt (compare-and-set), then kills the runs of `kill` that have no result yet.
    #[allow(clippy::too_many_arguments)]
    async fn end_attempt(
        &self,
        view: &RunSnapshot<'_>,
        attempt: &NodeAttempt,
        state: NodeState,
        output: Option<String>,
        message: String,
        kill: &[&NodeLogResult],
        now: i64,
    ) -> Result<bool> {
        let change =
            NodeChange { end_time: Some(now), output, message: Some(message.clone()), ..node_change(state) };
        let db = &self.services().db;
        if db.change_node_state(view.run.id, &attempt.node, attempt.attempt, attempt.seq, &change).await? {
            for log in kill.iter().filter(|l| !finished(l)) {
                self.kill(log, &message).await;
            }
        }
        Ok(true)
    }

    /// Kills a node's run on its executor and finishes its log row as failed. A run whose trigger result
    /// is not written yet (its address unknown) is killed once it is, in the background.
    pub(super) async fn kill(&self, log: &NodeLogResult, why: &str) {
        let now = self.services().clock.now_ms();
        let msg = format!("{}: {why}", self.services().i18n.get("joblog_kill_log_byman"));
        if let Err(e) = self.services().db.update_handle_info(log.log_id, now, 500, &msg, true).await {
            tracing::warn!(log_id = log.log_id, "killed workflow node's log row not finished: {e}");
        }
        let (this, log_id, job_id) = (self.clone(), log.log_id, log.job_id);
        let mut address = log.executor_address.clone().filter(|a| !a.is_empty());
        tokio::spawn(async move {
            for _ in 0..KILL_ADDRESS_WAITS {
                if address.is_some() {
                    break;
                }
                tokio::time::sleep(KILL_ADDRESS_PAUSE).await;
                address = match this.services().db.load_log(log_id).await {
                    Ok(Some(row)) if row.trigger_code != 0 && row.trigger_code != 200 => return,
                    Ok(Some(row)) => row.executor_address.filter(|a| !a.is_empty()),
                    _ => None,
                };
            }
            let Some(address) = address else {
                return tracing::warn!(
                    log_id,
                    "workflow node's run not killed: its executor never became known"
                );
            };
            let answer = this.services().executors.kill(&address, job_id).await;
            if answer.code != 200 {
                tracing::warn!(log_id, address, "kill of a workflow node's run refused: {:?}", answer.msg);
            }
        });
    }

    /// Sends what is due: retries whose time came, and attempts queued (by this pass's predecessor, or
    /// by an admin that stopped before sending them).
    async fn send_due(&self, view: &RunSnapshot<'_>, now: i64) -> Result<bool> {
        if view.state != RunState::Running {
            return Ok(false);
        }
        let db = &self.services().db;
        let mut changed = false;
        let mut context = None;
        for node in &view.def.nodes {
            let Some(attempt) = view.latest(&node.name) else { continue };
            if attempt.state == NodeState::WaitingRetry.as_str()
                && attempt.retry_time.is_none_or(|t| t <= now)
            {
                let change = NodeChange { ready_time: Some(now), ..node_change(NodeState::Queued) };
                db.change_node_state(view.run.id, &node.name, attempt.attempt, attempt.seq, &change).await?;
                changed = true;
            } else if attempt.state == NodeState::Queued.as_str() {
                let context = context.get_or_insert_with(|| view.context());
                self.send(view, node, attempt, context, now).await?;
                changed = true;
            }
        }
        Ok(changed)
    }

    /// Applies the readiness decisions (and failed attempts' retries); finishes the run when every node
    /// is done.
    async fn apply_decisions(&self, view: &RunSnapshot<'_>, now: i64) -> Result<bool> {
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
            return Ok(true);
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
            return Ok(true);
        }
        match decisions.finished {
            Some(outcome) => self.finish_run(view, outcome, now).await,
            None => Ok(false),
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
    async fn finish_run(&self, view: &RunSnapshot<'_>, outcome: RunOutcome, now: i64) -> Result<bool> {
        let state = match (view.state, outcome) {
            (RunState::Stopping, _) => RunState::Stopped,
            (_, RunOutcome::Succeeded) => RunState::Succeeded,
            (_, RunOutcome::Failed) => RunState::Failed,
        };
        let change = RunChange { state: state.as_str().into(), end_time: Some(now), ..RunChange::default() };
        let db = &self.services().db;
        if !db.change_run_state(view.run.id, view.run.seq, &change).await? {
            return Ok(true);
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
        Ok(false)
    }
}

/// How long a kill waits for the address of a run whose trigger result is not written yet.
const KILL_ADDRESS_WAITS: u32 = 50;
const KILL_ADDRESS_PAUSE: std::time::Duration = std::time::Duration::from_millis(200);

/// The text a run's message starts with once its deadline passed (so it alarms once).
const DEADLINE_PASSED: &str = "deadline passed";

fn is_final(state: &str) -> bool {
    NodeState::parse(state).is_some_and(NodeState::is_terminal)
}

/// Whether a log row has its result: the executor's, or a failed trigger's.
fn finished(log: &NodeLogResult) -> bool {
    log.handle_code != 0 || (log.trigger_code != 0 && log.trigger_code != 200)
}

/// A finished job attempt's state, output and message from its log rows (one per shard): succeeded
/// when every row succeeded; the output is the executor's message (JSON where it is JSON), a list in
/// shard order for a sharded node. An output the log table could not hold whole fails the node.
fn job_outcome(logs: &[&NodeLogResult]) -> (NodeState, Option<String>, String) {
    let too_long = logs
        .iter()
        .find(|l| l.handle_msg.as_deref().is_some_and(|m| m.encode_utf16().count() >= MAX_HANDLE_MSG_UTF16));
    if let Some(log) = too_long {
        let message = format!(
            "the output of log {} reached {MAX_HANDLE_MSG_UTF16} characters, the most a log row keeps: \
             it may be cut short, so it is not passed on (return less, or a reference to where it is)",
            log.log_id
        );
        return (NodeState::Failed, None, message);
    }
    let failures: Vec<String> = logs
        .iter()
        .filter(|l| l.handle_code != 200)
        .map(|l| match l.handle_code {
            0 => format!("log {}: trigger failed (code {})", l.log_id, l.trigger_code),
            code => format!("log {}: code {code}", l.log_id),
        })
        .collect();
    let outputs: Vec<Value> = logs.iter().map(|l| output_value(l.handle_msg.as_deref())).collect();
    let output = if logs.len() == 1 && logs[0].shard_total <= 1 {
        outputs.into_iter().next().unwrap_or(Value::Null)
    } else {
        Value::Array(outputs)
    };
    let output = Some(output.to_string());
    if failures.is_empty() {
        let message = format!("succeeded ({} log row{})", logs.len(), if logs.len() == 1 { "" } else { "s" });
        (NodeState::Succeeded, output, message)
    } else {
        (NodeState::Failed, output, failures.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::ACTIVE_RUN_STATES;

    fn log(shard: i32, total: i32, trigger: i32, handle: i32, msg: Option<&str>) -> NodeLogResult {
        NodeLogResult {
            log_id: 10 + i64::from(shard),
            node: "n".into(),
            attempt: 1,
            shard_index: shard,
            shard_total: total,
            job_id: 7,
            executor_address: Some("http://e/".into()),
            trigger_code: trigger,
            handle_code: handle,
            handle_msg: msg.map(str::to_string),
        }
    }

    #[test]
    fn the_storage_counts_the_same_runs_as_active() {
        let active: Vec<&str> = RunState::ACTIVE.iter().map(|s| s.as_str()).collect();
        assert_eq!(active, ACTIVE_RUN_STATES);
    }

    #[test]
    fn a_log_is_finished_by_its_result_or_a_failed_trigger() {
        assert!(!finished(&log(0, 1, 0, 0, None)), "not sent yet");
        assert!(!finished(&log(0, 1, 200, 0, None)), "running");
        assert!(finished(&log(0, 1, 500, 0, None)), "trigger failed");
        assert!(finished(&log(0, 1, 200, 500, None)));
        assert!(finished(&log(0, 1, 200, 200, None)));
    }

    #[test]
    fn outputs_are_json_where_they_are_json_and_listed_by_shard() {
        let one = log(0, 1, 200, 200, Some(r#"{"rows": 3}"#));
        let (state, output, _) = job_outcome(&[&one]);
        assert_eq!((state, output.as_deref()), (NodeState::Succeeded, Some(r#"{"rows":3}"#)));
        let text = log(0, 1, 200, 200, Some("plain"));
        assert_eq!(job_outcome(&[&text]).1.as_deref(), Some(r#""plain""#));
        let (a, b) = (log(0, 2, 200, 200, Some("1")), log(1, 2, 200, 500, Some("x")));
        let (state, output, message) = job_outcome(&[&a, &b]);
        assert_eq!((state, output.as_deref()), (NodeState::Failed, Some(r#"[1,"x"]"#)));
        assert_eq!(message, "log 11: code 500");
        let unsent = log(0, 1, 500, 0, None);
        assert_eq!(job_outcome(&[&unsent]).2, "log 10: trigger failed (code 500)");
    }

    #[test]
    fn an_output_the_log_row_may_have_cut_fails_the_node() {
        let long = "x".repeat(MAX_HANDLE_MSG_UTF16);
        let full = log(0, 1, 200, 200, Some(&long));
        let (state, output, message) = job_outcome(&[&full]);
        assert_eq!((state, output), (NodeState::Failed, None));
        assert!(message.contains("15000 characters"), "{message}");
    }
}
