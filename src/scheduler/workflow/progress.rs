//! Running attempts progressed: finished from their results, failed past their timeout, stopped with
//! their run; and the kills that go with it.

use super::outcome::{finished, job_outcome};
use super::snapshot::{node_change, RunSnapshot};
use super::{Result, Workflows};
use crate::domain::workflow::model::{Node, NodeKind, NodeState, RunState};
use crate::storage::{NodeAttempt, NodeChange, NodeLogResult, RunChange};

impl Workflows {
    /// Finishes the running attempts whose results are in, times out those past their timeout, and
    /// stops them all when the run is stopping.
    pub(super) async fn progress_running(&self, view: &RunSnapshot<'_>, now: i64) -> Result<bool> {
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
}

/// How long a kill waits for the address of a run whose trigger result is not written yet.
const KILL_ADDRESS_WAITS: u32 = 50;
const KILL_ADDRESS_PAUSE: std::time::Duration = std::time::Duration::from_millis(200);
