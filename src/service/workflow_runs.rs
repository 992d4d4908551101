//! Workflow runs as users and tokens see them: start, list, read with every node's attempts and log
//! rows, and operate on. Permission follows the workflow's executor group, as a job's does; every start
//! and operation is audited.

use super::access::LoginUser;
use super::audit::{EventKind, Target};
use super::{ServiceContext, ServiceError};
use crate::domain::workflow::model::RunState;
use crate::scheduler::workflow::operations::{Actor, BackfillRequest, OperationError, StartRequest};
use crate::storage::{Admitted, Backfill, NodeAttempt, NodeTrigger, RunFilter, Workflow, WorkflowRun};
use serde_json::{json, Map, Value};

/// What can be done to a run.
#[derive(Debug, Clone, PartialEq)]
pub enum Operation {
    Stop,
    Pause,
    Resume,
    RetryFailed,
    RerunFrom(String),
    MarkSucceeded { node: String, output: Option<Value> },
    MarkFailed(String),
    Skip(String),
    Approve(String),
    Reject(String),
}

impl Operation {
    /// The name the audit trail and the API give it.
    pub fn name(&self) -> &'static str {
        match self {
            Operation::Stop => "stop",
            Operation::Pause => "pause",
            Operation::Resume => "resume",
            Operation::RetryFailed => "retry-failed",
            Operation::RerunFrom(_) => "rerun",
            Operation::MarkSucceeded { .. } => "mark-succeeded",
            Operation::MarkFailed(_) => "mark-failed",
            Operation::Skip(_) => "skip",
            Operation::Approve(_) => "approve",
            Operation::Reject(_) => "reject",
        }
    }

    /// The operation of this name: a run operation without `node`, a node operation with it
    /// (`output` goes to mark-succeeded only); `None` for a name that is not one.
    pub fn parse(name: &str, node: Option<String>, output: Option<Value>) -> Option<Operation> {
        Some(match (name, node) {
            ("stop", None) => Operation::Stop,
            ("pause", None) => Operation::Pause,
            ("resume", None) => Operation::Resume,
            ("retry-failed", None) => Operation::RetryFailed,
            ("rerun", Some(node)) => Operation::RerunFrom(node),
            ("mark-succeeded", Some(node)) => Operation::MarkSucceeded { node, output },
            ("mark-failed", Some(node)) => Operation::MarkFailed(node),
            ("skip", Some(node)) => Operation::Skip(node),
            ("approve", Some(node)) => Operation::Approve(node),
            ("reject", Some(node)) => Operation::Reject(node),
            _ => return None,
        })
    }

    fn node(&self) -> Option<&str> {
        match self {
            Operation::Stop | Operation::Pause | Operation::Resume | Operation::RetryFailed => None,
            Operation::RerunFrom(n)
            | Operation::MarkSucceeded { node: n, .. }
            | Operation::MarkFailed(n)
            | Operation::Skip(n)
            | Operation::Approve(n)
            | Operation::Reject(n) => Some(n),
        }
    }
}

/// A run with its workflow's name and every node's attempts.
pub struct RunDetail {
    pub run: WorkflowRun,
    pub workflow: Workflow,
    /// Nodes in definition order, each with its attempts (oldest first) and their log rows.
    pub nodes: Vec<NodeDetail>,
}

pub struct NodeDetail {
    pub name: String,
    /// The latest attempt's state; `pending` before the first.
    pub state: String,
    pub attempts: Vec<(NodeAttempt, Vec<NodeTrigger>)>,
}

impl From<OperationError> for ServiceError {
    fn from(e: OperationError) -> ServiceError {
        match e {
            OperationError::NoWorkflow(_)
            | OperationError::NoRun(_)
            | OperationError::NoBackfill(_)
            | OperationError::NoNode { .. } => ServiceError::NotFound(e.to_string()),
            OperationError::Refused(reason) => ServiceError::Conflict(reason),
            OperationError::Engine(crate::scheduler::workflow::EngineError::Storage(s)) => {
                ServiceError::Storage(s)
            }
            OperationError::Engine(other) => ServiceError::Conflict(other.to_string()),
        }
    }
}

/// The workflow, if the user may see it.
pub(super) async fn permitted_workflow(
    state: &ServiceContext,
    user: &LoginUser,
    id: i64,
) -> Result<Workflow, ServiceError> {
    let not_found = || ServiceError::NotFound(format!("workflow {id} does not exist"));
    if !state.db.extension_tables_present().await? {
        return Err(not_found());
    }
    let workflow = state.db.load_workflow(id).await?.ok_or_else(not_found)?;
    user.ensure_access(state, workflow.job_group)?;
    Ok(workflow)
}

/// The run and its workflow, if the user may see them.
pub(super) async fn permitted_run(
    state: &ServiceContext,
    user: &LoginUser,
    id: i64,
) -> Result<(WorkflowRun, Workflow), ServiceError> {
    let not_found = || ServiceError::NotFound(format!("workflow run {id} does not exist"));
    if !state.db.extension_tables_present().await? {
        return Err(not_found());
    }
    let run = state.db.load_run(id).await?.ok_or_else(not_found)?;
    let workflow = state.db.load_workflow(run.workflow_id).await?.ok_or_else(not_found)?;
    user.ensure_access(state, workflow.job_group)?;
    Ok((run, workflow))
}

/// Starts a run of a workflow with `params` over its defaults.
pub async fn start(
    state: &ServiceContext,
    user: &LoginUser,
    workflow_id: i64,
    params: Map<String, Value>,
    logical_time: Option<i64>,
) -> Result<Admitted, ServiceError> {
    let asked = json!({ "params": params, "logicalTime": logical_time });
    let result = async {
        permitted_workflow(state, user, workflow_id).await?;
        let trigger_type = if user.1.token_id.is_some() { "api" } else { "manual" };
        let request =
            StartRequest { trigger_type, params, started_by: Some(user.0.username.clone()), logical_time };
        Ok(state.workflows.start_run(workflow_id, request).await?)
    }
    .await;
    let target = Target::new("workflow", workflow_id, None);
    state.audit.done(user, EventKind::WorkflowRunStart, target, |a: &Admitted| {
        Some(json!({ "run": { "after": a.id }, "state": { "after": a.state }, "asked": { "after": asked } }))
    }, result)
}

/// One page of a workflow's runs, newest first, optionally in some states.
pub async fn runs(
    state: &ServiceContext,
    user: &LoginUser,
    workflow_id: i64,
    states: Vec<RunState>,
    offset: i64,
    limit: i64,
) -> Result<(Vec<WorkflowRun>, i64), ServiceError> {
    permitted_workflow(state, user, workflow_id).await?;
    let filter = RunFilter {
        workflow_id: Some(workflow_id),
        states: states.iter().map(|s| s.as_str().to_string()).collect(),
        ..RunFilter::default()
    };
    Ok(state.db.run_page(&filter, offset, limit).await?)
}

/// A run with its nodes' attempts and their log rows.
pub async fn detail(
    state: &ServiceContext,
    user: &LoginUser,
    run_id: i64,
) -> Result<RunDetail, ServiceError> {
    let (run, workflow) = permitted_run(state, user, run_id).await?;
    let version = state.db.load_workflow_version(run.workflow_id, run.version).await?;
    let names: Vec<String> = version
        .and_then(|v| serde_json::from_str::<crate::domain::workflow::model::Definition>(&v.definition).ok())
        .map(|d| d.nodes.into_iter().map(|n| n.name).collect())
        .unwrap_or_default();
    let attempts = state.db.node_attempts(run_id).await?;
    let mut nodes = Vec::with_capacity(names.len());
    for name in names {
        let mut of_node = Vec::new();
        for attempt in attempts.iter().filter(|a| a.node == name) {
            let triggers = state.db.node_triggers(run_id, &name, attempt.attempt).await?;
            of_node.push((attempt.clone(), triggers));
        }
        let node_state = of_node.last().map_or_else(|| "pending".to_string(), |(a, _)| a.state.clone());
        nodes.push(NodeDetail { name, state: node_state, attempts: of_node });
    }
    Ok(RunDetail { run, workflow, nodes })
}

/// Applies an operation to a run; the nodes it concerns (retry and rerun), else none.
pub async fn operate(
    state: &ServiceContext,
    user: &LoginUser,
    run_id: i64,
    operation: Operation,
) -> Result<Vec<String>, ServiceError> {
    let result = async {
        permitted_run(state, user, run_id).await?;
        let actor = Actor { name: &user.0.username, admin: user.is_admin() };
        let engine = &state.workflows;
        let nodes = match operation.clone() {
            Operation::Stop => engine.stop_run(run_id, &actor).await.map(|_| Vec::new()),
            Operation::Pause => engine.pause_run(run_id, &actor).await.map(|_| Vec::new()),
            Operation::Resume => engine.resume_run(run_id, &actor).await.map(|_| Vec::new()),
            Operation::RetryFailed => engine.retry_failed(run_id, &actor).await,
            Operation::RerunFrom(node) => engine.rerun_from(run_id, &node, &actor).await,
            Operation::MarkSucceeded { node, output } => {
                engine.mark_node(run_id, &node, true, output, &actor).await.map(|_| Vec::new())
            }
            Operation::MarkFailed(node) => {
                engine.mark_node(run_id, &node, false, None, &actor).await.map(|_| Vec::new())
            }
            Operation::Skip(node) => engine.skip_node(run_id, &node, &actor).await.map(|_| Vec::new()),
            Operation::Approve(node) => engine.approve(run_id, &node, true, &actor).await.map(|_| Vec::new()),
            Operation::Reject(node) => engine.approve(run_id, &node, false, &actor).await.map(|_| Vec::new()),
        }?;
        Ok(nodes)
    }
    .await;
    let target = Target::new("workflowRun", run_id, None);
    let name = operation.name();
    let node = operation.node().map(str::to_string);
    state.audit.done(user, EventKind::WorkflowRunOperate, target, |nodes: &Vec<String>| {
        Some(json!({ "operation": { "after": name }, "node": { "after": node }, "nodes": { "after": nodes } }))
    }, result)
}

/// Starts a backfill of a workflow: a run for every schedule instant from `from` to `to` (epoch ms,
/// inclusive), `parallel` at a time; its id and how many runs it makes.
pub async fn backfill(
    state: &ServiceContext,
    user: &LoginUser,
    workflow_id: i64,
    from: i64,
    to: i64,
    parallel: u32,
    params: Map<String, Value>,
) -> Result<(i64, usize), ServiceError> {
    let asked = json!({ "from": from, "to": to, "parallel": parallel, "params": params });
    let result = async {
        permitted_workflow(state, user, workflow_id).await?;
        let request =
            BackfillRequest { from, to, parallel, params, started_by: Some(user.0.username.clone()) };
        Ok(state.workflows.backfill(workflow_id, request).await?)
    }
    .await;
    let target = Target::new("workflow", workflow_id, None);
    state.audit.done(
        user,
        EventKind::WorkflowBackfill,
        target,
        |(id, runs): &(i64, usize)| {
            Some(json!({ "operation": { "after": "start" }, "backfill": { "after": id },
                         "runs": { "after": runs }, "asked": { "after": asked } }))
        },
        result,
    )
}

/// A backfill and how many of its runs are in each state, if the user may see its workflow.
pub async fn backfill_detail(
    state: &ServiceContext,
    user: &LoginUser,
    id: i64,
) -> Result<(Backfill, Vec<(String, i64)>), ServiceError> {
    let not_found = || ServiceError::NotFound(format!("workflow backfill {id} does not exist"));
    if !state.db.extension_tables_present().await? {
        return Err(not_found());
    }
    let backfill = state.db.load_backfill(id).await?.ok_or_else(not_found)?;
    permitted_workflow(state, user, backfill.workflow_id).await?;
    let counts = state.db.backfill_run_counts(id).await?;
    Ok((backfill, counts))
}

/// Stops a backfill: its waiting runs end, its going runs are stopped.
pub async fn stop_backfill(state: &ServiceContext, user: &LoginUser, id: i64) -> Result<(), ServiceError> {
    let result = async {
        backfill_detail(state, user, id).await?;
        let actor = Actor { name: &user.0.username, admin: user.is_admin() };
        Ok(state.workflows.stop_backfill(id, &actor).await?)
    }
    .await;
    let target = Target::new("workflowBackfill", id, None);
    state.audit.done(
        user,
        EventKind::WorkflowBackfill,
        target,
        |_| Some(json!({ "operation": { "after": "stop" } })),
        result,
    )
}
