//! What the console's run view and runs list read (issue 47): a run's graph as its version defines it,
//! its progress in one query (polled while it goes), one node's attempts with their log rows, and runs
//! across every workflow the user may see. Permission follows the workflow's executor group, as in
//! [`super::workflow_runs`].

use super::access::LoginUser;
use super::workflow_runs::{permitted_run, permitted_workflow};
use super::{ServiceContext, ServiceError};
use crate::domain::workflow::model::{Definition, Node};
use crate::storage::{NodeAttempt, NodeTrigger, RunFilter, Workflow, WorkflowRun};
use std::collections::btree_map::{BTreeMap, Entry};

/// A run with the nodes of the version it runs (empty when that version cannot be read).
pub struct RunGraph {
    pub run: WorkflowRun,
    pub workflow: Workflow,
    pub nodes: Vec<Node>,
}

pub async fn graph(state: &ServiceContext, user: &LoginUser, run_id: i64) -> Result<RunGraph, ServiceError> {
    let (run, workflow) = permitted_run(state, user, run_id).await?;
    let version = state.db.load_workflow_version(run.workflow_id, run.version).await?;
    let nodes = version
        .and_then(|v| serde_json::from_str::<Definition>(&v.definition).ok())
        .map(|d| d.nodes)
        .unwrap_or_default();
    Ok(RunGraph { run, workflow, nodes })
}

/// The run and every attempt of every node, without their log rows: what the run view polls, one
/// query however many nodes the run has.
pub async fn progress(
    state: &ServiceContext,
    user: &LoginUser,
    run_id: i64,
) -> Result<(WorkflowRun, Vec<NodeAttempt>), ServiceError> {
    let (run, _) = permitted_run(state, user, run_id).await?;
    Ok((run, state.db.node_attempts(run_id).await?))
}

/// One node's attempts, oldest first, each with its log rows.
pub async fn node(
    state: &ServiceContext,
    user: &LoginUser,
    run_id: i64,
    node: &str,
) -> Result<Vec<(NodeAttempt, Vec<NodeTrigger>)>, ServiceError> {
    permitted_run(state, user, run_id).await?;
    let mut attempts = Vec::new();
    for attempt in state.db.node_attempts(run_id).await?.into_iter().filter(|a| a.node == node) {
        let triggers = state.db.node_triggers(run_id, node, attempt.attempt).await?;
        attempts.push((attempt, triggers));
    }
    Ok(attempts)
}

/// The runs list's filters; `workflow_id` `None` means every workflow the user may see.
#[derive(Debug, Clone, Default)]
pub struct RunQuery {
    pub workflow_id: Option<i64>,
    pub state: Option<String>,
    pub trigger_type: Option<String>,
    pub logical_from: Option<i64>,
    pub logical_to: Option<i64>,
}

/// One page of runs, newest first, with how many match and the names of their workflows by id.
pub async fn list(
    state: &ServiceContext,
    user: &LoginUser,
    query: RunQuery,
    offset: i64,
    limit: i64,
) -> Result<(Vec<WorkflowRun>, i64, BTreeMap<i64, String>), ServiceError> {
    let groups = match query.workflow_id {
        Some(id) => {
            permitted_workflow(state, user, id).await?;
            None
        }
        None => user.permitted_groups(),
    };
    if !state.db.extension_tables_present().await? {
        return Ok((Vec::new(), 0, BTreeMap::new()));
    }
    let filter = RunFilter {
        workflow_id: query.workflow_id,
        states: query.state.into_iter().collect(),
        groups,
        trigger_type: query.trigger_type,
        logical_from: query.logical_from,
        logical_to: query.logical_to,
    };
    let (runs, total) = state.db.run_page(&filter, offset.max(0), limit.max(0)).await?;
    let mut names = BTreeMap::new();
    for run in &runs {
        if let Entry::Vacant(entry) = names.entry(run.workflow_id) {
            entry.insert(state.db.load_workflow(run.workflow_id).await?.map(|w| w.name).unwrap_or_default());
        }
    }
    Ok((runs, total, names))
}
