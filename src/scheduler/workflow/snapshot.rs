//! A run as one reconcile pass reads it, and what templates see of it.

use crate::domain::workflow::model::{Definition, Node, NodeState, RunState};
use crate::domain::workflow::template::{Context, NodeResult};
use crate::storage::{NodeAttempt, NodeChange, WorkflowRun};
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
    pub fn retries_left(&self, node: &Node) -> bool {
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
            ds: logical_date(self.run.logical_time),
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

pub(super) fn node_change(state: NodeState) -> NodeChange {
    NodeChange { state: state.as_str().to_string(), ..NodeChange::default() }
}

/// The date of a logical instant, YYYY-MM-DD in the admin's zone (what templates call `ds`).
pub(super) fn logical_date(epoch_ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(epoch_ms)
        .map(|t| t.with_timezone(&chrono::Local).format("%Y-%m-%d").to_string())
        .unwrap_or_default()
}
