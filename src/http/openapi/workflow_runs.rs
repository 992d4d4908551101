//! Workflow runs: start one, list a workflow's runs, read one with its nodes, and operate on it.

use super::{location, paging, ApiError, ApiResult, ApiUser, ErrorBody, Id, JsonBody, Listing, QueryParams};
use crate::config::Config;
use crate::domain::workflow::model::RunState;
use crate::service::workflow_runs::{self, NodeDetail, Operation, RunDetail};
use crate::service::ServiceContext;
use crate::storage::{Backfill, NodeAttempt, NodeTrigger, WorkflowRun};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;

/// What a run starts with.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StartBody {
    /// Laid over the workflow's default parameters.
    #[serde(default)]
    #[schema(value_type = Object)]
    params: Map<String, Value>,
    /// The instant the run stands for (epoch ms, what templates see as `logical_time` and `ds`); now
    /// when absent.
    #[schema(minimum = 0)]
    logical_time: Option<i64>,
}

/// A started (or queued, or discarded) run.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Started {
    pub id: i64,
    /// `running`, `queued` (waiting under the concurrency policy) or `discarded`.
    pub state: String,
    /// The run stopped to make room for this one (policy `replace_oldest`).
    pub replaced: Option<i64>,
}

/// Starts a run of the workflow's current version. Answers 201 with the run, also when the concurrency
/// policy queued or discarded it (its `state` says so).
#[utoipa::path(operation_id = "startWorkflowRun", post, path = "/workflows/{id}/runs", tag = "workflow runs",
    request_body = StartBody, params(("id" = i64, Path, description = "workflow id", minimum = 1)),
    responses((status = 201, body = Started, headers(("Location" = String, description = "the run"))), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)))]
pub async fn start(
    State(services): State<ServiceContext>,
    State(config): State<Arc<Config>>,
    ApiUser(user): ApiUser,
    Id(id): Id<i64>,
    JsonBody(body): JsonBody<StartBody>,
) -> ApiResult<Response> {
    if body.logical_time.is_some_and(|t| t < 0) {
        return Err(ApiError::BadRequest("logicalTime must be epoch milliseconds, 0 or more".into()));
    }
    let admitted = workflow_runs::start(&services, &user, id, body.params, body.logical_time).await?;
    let started = Started { id: admitted.id, state: admitted.state.to_string(), replaced: admitted.replaced };
    Ok((StatusCode::CREATED, location(&config, &format!("/workflow-runs/{}", admitted.id)), Json(started))
        .into_response())
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct RunListQuery {
    /// Only runs in this state.
    state: Option<RunState>,
    /// Rows to skip (default 0).
    #[param(minimum = 0)]
    offset: Option<i64>,
    /// Rows to answer, 1 to 1000 (default 20).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<i64>,
}

/// A run without its nodes.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunView {
    pub id: i64,
    pub workflow_id: i64,
    /// The definition version the run uses.
    pub version: i32,
    pub state: String,
    /// schedule, misfire, manual, api, subworkflow.
    pub trigger_type: String,
    /// Epoch ms.
    pub logical_time: i64,
    #[schema(value_type = Object)]
    pub params: Value,
    pub started_by: Option<String>,
    pub parent_run_id: Option<i64>,
    pub parent_node: Option<String>,
    /// Epoch ms: created, started, ended (the last only once the run is over), deadline.
    pub add_time: i64,
    pub start_time: Option<i64>,
    pub end_time: Option<i64>,
    pub deadline_time: Option<i64>,
    pub message: Option<String>,
}

impl From<WorkflowRun> for RunView {
    fn from(run: WorkflowRun) -> RunView {
        let over = RunState::parse(&run.state).is_some_and(RunState::is_terminal);
        RunView {
            id: run.id,
            workflow_id: run.workflow_id,
            version: run.version,
            trigger_type: run.trigger_type,
            logical_time: run.logical_time,
            params: serde_json::from_str(&run.params).unwrap_or(Value::Null),
            started_by: run.started_by,
            parent_run_id: run.parent_run_id,
            parent_node: run.parent_node,
            add_time: run.add_time,
            start_time: run.start_time,
            end_time: run.end_time.filter(|_| over),
            deadline_time: run.deadline_time,
            message: run.message,
            state: run.state,
        }
    }
}

/// Lists a workflow's runs, newest first.
#[utoipa::path(operation_id = "listWorkflowRuns", get, path = "/workflows/{id}/runs", tag = "workflow runs",
    params(("id" = i64, Path, description = "workflow id", minimum = 1), RunListQuery),
    responses((status = 200, body = Listing<RunView>), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i64>,
    QueryParams(query): QueryParams<RunListQuery>,
) -> ApiResult<Json<Listing<RunView>>> {
    let (offset, limit) = paging(query.offset, query.limit)?;
    let states = query.state.into_iter().collect();
    let (runs, total) = workflow_runs::runs(&services, &user, id, states, offset, limit).await?;
    Ok(Json(Listing { total, items: runs.into_iter().map(RunView::from).collect() }))
}

/// One attempt of a node.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttemptView {
    /// 1, 2, … in the order they were made (retries, reruns, operations).
    pub attempt: i32,
    pub state: String,
    /// Epoch ms.
    pub ready_time: Option<i64>,
    pub retry_time: Option<i64>,
    pub send_time: Option<i64>,
    pub end_time: Option<i64>,
    /// The executor parameter sent (a job node).
    pub param: Option<String>,
    /// What the node returned: JSON where it is JSON (any JSON value); null before it ended.
    pub output: Value,
    pub message: Option<String>,
    /// Who asked for this attempt, or decided it (approval, mark, skip).
    pub acted_by: Option<String>,
    /// The xxl_job_log rows of a job node, one per shard (`GET /logs/{id}`).
    pub log_ids: Vec<i64>,
}

impl AttemptView {
    pub fn of(attempt: NodeAttempt, triggers: Vec<NodeTrigger>) -> AttemptView {
        AttemptView {
            attempt: attempt.attempt,
            state: attempt.state,
            ready_time: attempt.ready_time,
            retry_time: attempt.retry_time,
            send_time: attempt.send_time,
            end_time: attempt.end_time,
            param: attempt.param,
            output: match attempt.output {
                None => Value::Null,
                Some(text) => serde_json::from_str(&text).unwrap_or(Value::String(text)),
            },
            message: attempt.message,
            acted_by: attempt.acted_by,
            log_ids: triggers.into_iter().map(|t| t.log_id).collect(),
        }
    }
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeView {
    pub name: String,
    /// The latest attempt's state (`pending` before any).
    pub state: String,
    pub attempts: Vec<AttemptView>,
}

/// A run with its nodes, in definition order.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunDetailView {
    #[serde(flatten)]
    pub run: RunView,
    pub workflow_name: String,
    pub nodes: Vec<NodeView>,
}

/// A run with every node's attempts and their log rows.
#[utoipa::path(operation_id = "getWorkflowRun", get, path = "/workflow-runs/{id}", tag = "workflow runs",
    params(("id" = i64, Path, description = "run id", minimum = 1)),
    responses((status = 200, body = RunDetailView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i64>,
) -> ApiResult<Json<RunDetailView>> {
    let RunDetail { run, workflow, nodes } = workflow_runs::detail(&services, &user, id).await?;
    let nodes = nodes
        .into_iter()
        .map(|NodeDetail { name, state, attempts }| NodeView {
            name,
            state,
            attempts: attempts.into_iter().map(|(a, t)| AttemptView::of(a, t)).collect(),
        })
        .collect();
    Ok(Json(RunDetailView { run: run.into(), workflow_name: workflow.name, nodes }))
}

/// What an operation did.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Operated {
    pub operation: String,
    /// The nodes given a new attempt (retry-failed, rerun); empty otherwise.
    pub nodes: Vec<String>,
}

/// What marking a node succeeded may carry.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MarkBody {
    /// The node's output, as later nodes see it: any JSON value.
    output: Option<Value>,
}

async fn operate(
    services: &ServiceContext,
    user: crate::service::LoginUser,
    id: i64,
    operation: Operation,
) -> ApiResult<Json<Operated>> {
    let name = operation.name().to_string();
    let nodes = workflow_runs::operate(services, &user, id, operation).await?;
    Ok(Json(Operated { operation: name, nodes }))
}

/// Run operations without a node: `stop` (running nodes are killed, nothing starts), `pause` (no node
/// starts until `resume`), `resume`, `retry-failed` (failed, cut-off and stopped nodes run again; what
/// succeeded keeps its output). 409 when the run is not in a state the operation applies to.
#[utoipa::path(operation_id = "operateWorkflowRun", post, path = "/workflow-runs/{id}/{operation}", tag = "workflow runs",
    params(("id" = i64, Path, description = "run id", minimum = 1),
           ("operation" = String, Path, description = "stop, pause, resume or retry-failed", pattern = "^(stop|pause|resume|retry-failed)$")),
    responses((status = 200, body = Operated), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn run_operation(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Path((id, operation)): Path<(String, String)>,
) -> ApiResult<Json<Operated>> {
    let id = run_id(&id)?;
    let operation = Operation::parse(&operation, None, None).ok_or(ApiError::NotFoundRoute)?;
    operate(&services, user, id, operation).await
}

/// Node operations: `rerun` (it and every node after it run again), `mark-failed`, `skip` (a node not
/// started yet), `approve` and `reject` (an approval node waiting). 409 when the node is not in a state
/// the operation applies to.
#[utoipa::path(operation_id = "operateWorkflowNode", post, path = "/workflow-runs/{id}/nodes/{node}/{operation}", tag = "workflow runs",
    params(("id" = i64, Path, description = "run id", minimum = 1), ("node" = String, Path, description = "node name"),
           ("operation" = String, Path, description = "rerun, mark-failed, skip, approve or reject", pattern = "^(rerun|mark-failed|skip|approve|reject)$")),
    responses((status = 200, body = Operated), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn node_operation(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Path((id, node, operation)): Path<(String, String, String)>,
) -> ApiResult<Json<Operated>> {
    let id = run_id(&id)?;
    // mark-succeeded has a route of its own, which takes an output.
    let operation = Some(operation)
        .filter(|name| name != "mark-succeeded")
        .and_then(|name| Operation::parse(&name, Some(node), None))
        .ok_or(ApiError::NotFoundRoute)?;
    operate(&services, user, id, operation).await
}

/// Sets a node succeeded, whatever it was doing (a running node's runs are killed), with an optional
/// output that later nodes see; the nodes a failure had cut off get their chance again.
#[utoipa::path(operation_id = "markWorkflowNodeSucceeded", post, path = "/workflow-runs/{id}/nodes/{node}/mark-succeeded", tag = "workflow runs",
    request_body(content = MarkBody, description = "optional"),
    params(("id" = i64, Path, description = "run id", minimum = 1), ("node" = String, Path, description = "node name")),
    responses((status = 200, body = Operated), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn mark_succeeded(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Path((id, node)): Path<(String, String)>,
    body: axum::body::Bytes,
) -> ApiResult<Json<Operated>> {
    let id = run_id(&id)?;
    let output = if body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        serde_json::from_slice::<MarkBody>(&body)
            .map_err(|e| ApiError::BadRequest(format!("invalid JSON body: {e}")))?
            .output
    };
    operate(&services, user, id, Operation::MarkSucceeded { node, output }).await
}

fn run_id(text: &str) -> ApiResult<i64> {
    text.parse()
        .ok()
        .filter(|id: &i64| *id > 0)
        .ok_or_else(|| ApiError::BadRequest("id must be a positive run id".into()))
}

/// A backfill to start.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BackfillBody {
    /// The range of logical times, epoch ms, inclusive: a run for every instant of the workflow's
    /// schedule in it (at most 1000).
    #[schema(minimum = 0)]
    from: i64,
    #[schema(minimum = 0)]
    to: i64,
    /// Runs going at once (default 1: one after the other).
    #[schema(minimum = 1, maximum = 100)]
    parallel: Option<u32>,
    /// Laid over the workflow's default parameters in every run.
    #[serde(default)]
    #[schema(value_type = Object)]
    params: Map<String, Value>,
}

/// A started backfill.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BackfillStarted {
    pub id: i64,
    /// How many runs it made, one per schedule instant.
    pub runs: usize,
}

/// Most runs of one backfill going at once.
pub const MAX_PARALLEL: u32 = 100;

/// Starts a backfill: a run of the workflow's current version for every instant of its schedule in the
/// range, each with that instant as its logical time, `parallel` at a time, oldest first.
#[utoipa::path(operation_id = "startWorkflowBackfill", post, path = "/workflows/{id}/backfills", tag = "workflow runs",
    request_body = BackfillBody, params(("id" = i64, Path, description = "workflow id", minimum = 1)),
    responses((status = 201, body = BackfillStarted, headers(("Location" = String, description = "the backfill"))), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 415, body = ErrorBody)))]
pub async fn start_backfill(
    State(services): State<ServiceContext>,
    State(config): State<Arc<Config>>,
    ApiUser(user): ApiUser,
    Id(id): Id<i64>,
    JsonBody(body): JsonBody<BackfillBody>,
) -> ApiResult<Response> {
    let parallel = body.parallel.unwrap_or(1);
    if !(1..=MAX_PARALLEL).contains(&parallel) {
        return Err(ApiError::BadRequest(format!("parallel must be between 1 and {MAX_PARALLEL}")));
    }
    if body.from < 0 || body.to < 0 {
        return Err(ApiError::BadRequest("from and to are epoch milliseconds, 0 or more".into()));
    }
    let (backfill, runs) =
        workflow_runs::backfill(&services, &user, id, body.from, body.to, parallel, body.params).await?;
    let started = BackfillStarted { id: backfill, runs };
    Ok((StatusCode::CREATED, location(&config, &format!("/workflow-backfills/{backfill}")), Json(started))
        .into_response())
}

/// A backfill with how many of its runs are in each state.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BackfillView {
    pub id: i64,
    pub workflow_id: i64,
    /// `running`, `finished` or `stopped`.
    pub state: String,
    /// Epoch ms.
    pub from: i64,
    pub to: i64,
    pub parallel: i32,
    /// Runs it made.
    pub total: i32,
    pub author: Option<String>,
    pub add_time: i64,
    pub end_time: Option<i64>,
    /// Its runs by state (`GET /workflows/{id}/runs` lists them).
    #[schema(value_type = Object)]
    pub runs: Map<String, Value>,
}

/// A backfill and the states of its runs.
#[utoipa::path(operation_id = "getWorkflowBackfill", get, path = "/workflow-backfills/{id}", tag = "workflow runs",
    params(("id" = i64, Path, description = "backfill id", minimum = 1)),
    responses((status = 200, body = BackfillView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_backfill(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i64>,
) -> ApiResult<Json<BackfillView>> {
    let (backfill, counts) = workflow_runs::backfill_detail(&services, &user, id).await?;
    Ok(Json(BackfillView::new(backfill, counts)))
}

impl BackfillView {
    pub fn new(b: Backfill, counts: Vec<(String, i64)>) -> BackfillView {
        BackfillView {
            id: b.id,
            workflow_id: b.workflow_id,
            state: b.state,
            from: b.from_time,
            to: b.to_time,
            parallel: b.parallel,
            total: b.total,
            author: b.author,
            add_time: b.add_time,
            end_time: b.end_time,
            runs: counts.into_iter().map(|(state, n)| (state, Value::from(n))).collect(),
        }
    }
}

/// Stops a backfill as a whole: its waiting runs end stopped, its going runs are stopped. 409 when it is
/// over.
#[utoipa::path(operation_id = "stopWorkflowBackfill", post, path = "/workflow-backfills/{id}/stop", tag = "workflow runs",
    params(("id" = i64, Path, description = "backfill id", minimum = 1)),
    responses((status = 200, body = BackfillView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn stop_backfill(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i64>,
) -> ApiResult<Json<BackfillView>> {
    workflow_runs::stop_backfill(&services, &user, id).await?;
    get_backfill(State(services), ApiUser(user), Id(id)).await
}
