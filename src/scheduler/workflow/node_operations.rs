//! Operations on one node of a run: mark it succeeded or failed, skip it, approve or reject it.

use super::operations::{Actor, OperationError, Result};
use super::Workflows;
use crate::domain::workflow::model::{NodeKind, NodeState, RunState};
use crate::storage::{NodeAttempt, NodeChange};
use serde_json::Value;

impl Workflows {
    /// Sets a node succeeded (with `output`) or failed, whatever it was doing: a running node's runs are
    /// killed. The nodes after it that a failure had cut off get their chance again.
    pub async fn mark_node(
        &self,
        run_id: i64,
        node: &str,
        succeeded: bool,
        output: Option<Value>,
        actor: &Actor<'_>,
    ) -> Result<()> {
        let loaded = self.load(run_id).await?;
        loaded.check_node(node)?;
        if loaded.state == RunState::Stopping || loaded.state == RunState::Queued {
            return Err(OperationError::Refused(format!("run {run_id} is {}", loaded.run.state)));
        }
        let (state, verb) = if succeeded {
            (NodeState::Succeeded, "marked succeeded")
        } else {
            (NodeState::Failed, "marked failed")
        };
        let now = self.services().clock.now_ms();
        let change = NodeChange {
            state: state.as_str().into(),
            end_time: Some(now),
            output: output.map(|o| o.to_string()),
            message: Some(format!("{verb} by {}", actor.name)),
            acted_by: Some(actor.name.to_string()),
            ..NodeChange::default()
        };
        let snapshot = loaded.snapshot();
        let db = &self.services().db;
        match snapshot.latest(node) {
            Some(latest) if latest.state == NodeState::Running.as_str() => {
                if !db.change_node_state(run_id, node, latest.attempt, latest.seq, &change).await? {
                    return Err(OperationError::Refused(format!("node {node} changed meanwhile; try again")));
                }
                self.kill_attempt(run_id, latest, &format!("{verb} by {}", actor.name)).await?;
            }
            _ => {
                if !self.put_attempt(&snapshot, node, &change).await? {
                    return Err(OperationError::Refused(format!("node {node} changed meanwhile; try again")));
                }
            }
        }
        let cut_off: Vec<String> = loaded
            .node_and_after(node)
            .into_iter()
            .filter(|n| n != node)
            .filter(|n| {
                matches!(loaded.latest_state(n), Some(NodeState::UpstreamFailed | NodeState::Stopped))
            })
            .collect();
        if succeeded && !cut_off.is_empty() {
            for n in &cut_off {
                let next = snapshot.latest(n).map_or(1, |a| a.attempt + 1);
                let change = NodeChange {
                    state: NodeState::Pending.as_str().into(),
                    message: Some(format!("{node} {verb} by {}", actor.name)),
                    acted_by: Some(actor.name.to_string()),
                    ..NodeChange::default()
                };
                db.insert_node_attempt(run_id, n, next, &change).await?;
            }
        }
        self.revive(&loaded, &format!("node {node} {verb} by {}", actor.name)).await
    }

    /// Skips a node that has not finished and is not running.
    pub async fn skip_node(&self, run_id: i64, node: &str, actor: &Actor<'_>) -> Result<()> {
        let loaded = self.load(run_id).await?;
        loaded.check_node(node)?;
        match loaded.latest_state(node) {
            Some(s) if s.is_terminal() || s == NodeState::Running => {
                return Err(OperationError::Refused(format!(
                    "node {node} is {s}: only a waiting node can be skipped"
                )));
            }
            _ => {}
        }
        if loaded.state.is_terminal() {
            return Err(OperationError::Refused(format!("run {run_id} is {}", loaded.run.state)));
        }
        let now = self.services().clock.now_ms();
        let change = NodeChange {
            state: NodeState::Skipped.as_str().into(),
            end_time: Some(now),
            message: Some(format!("skipped by {}", actor.name)),
            acted_by: Some(actor.name.to_string()),
            ..NodeChange::default()
        };
        if !self.put_attempt(&loaded.snapshot(), node, &change).await? {
            return Err(OperationError::Refused(format!("node {node} changed meanwhile; try again")));
        }
        self.wake(run_id);
        Ok(())
    }

    /// Lets a run go on past an approval node (or, `approve` false, fails the node).
    pub async fn approve(&self, run_id: i64, node: &str, approve: bool, actor: &Actor<'_>) -> Result<()> {
        let loaded = self.load(run_id).await?;
        loaded.check_node(node)?;
        let Some(def_node) = loaded.def.nodes.iter().find(|n| n.name == node) else {
            unreachable!("checked")
        };
        let NodeKind::Approval { approvers } = &def_node.kind else {
            return Err(OperationError::Refused(format!("node {node} is not an approval")));
        };
        if !actor.admin && !approvers.is_empty() && !approvers.iter().any(|a| a == actor.name) {
            return Err(OperationError::Refused(format!(
                "only {} may decide node {node}",
                approvers.join(", ")
            )));
        }
        let snapshot = loaded.snapshot();
        let Some(latest) = snapshot.latest(node).filter(|a| a.state == NodeState::WaitingApproval.as_str())
        else {
            return Err(OperationError::Refused(format!("node {node} is not waiting for approval")));
        };
        let now = self.services().clock.now_ms();
        let (state, verb) =
            if approve { (NodeState::Succeeded, "approved") } else { (NodeState::Failed, "rejected") };
        let change = NodeChange {
            state: state.as_str().into(),
            end_time: Some(now),
            output: Some(serde_json::json!({ verb: actor.name }).to_string()),
            message: Some(format!("{verb} by {}", actor.name)),
            acted_by: Some(actor.name.to_string()),
            ..NodeChange::default()
        };
        if !self.services().db.change_node_state(run_id, node, latest.attempt, latest.seq, &change).await? {
            return Err(OperationError::Refused(format!("node {node} changed meanwhile; try again")));
        }
        self.wake(run_id);
        Ok(())
    }

    /// Kills the runs of a node attempt that have no result yet.
    async fn kill_attempt(&self, run_id: i64, attempt: &NodeAttempt, why: &str) -> Result<()> {
        let results = self.services().db.run_trigger_results(run_id).await?;
        for log in results.iter().filter(|l| l.node == attempt.node && l.attempt == attempt.attempt) {
            if log.handle_code == 0 && (log.trigger_code == 0 || log.trigger_code == 200) {
                self.kill(log, why).await;
            }
        }
        Ok(())
    }
}
