//! The console's workflow runs (issue 47, docs/workflows.md#in-the-console): the run view
//! (`/workflow/run?id=`), the runs list (`/workflow/runs`) and their JSON under `/workflowrun/`. The
//! rules, permissions and audit events are the REST API's ([`crate::service::workflow_runs`]); the JSON
//! shapes of runs, attempts and backfills are the REST API's too, so both edges show a run alike.

use super::error::{ConsoleError, PageError};
use super::pages::page;
use super::params::Params;
use super::render::script_json;
use super::views::Page;
use super::{changes_state_post_only, slash_tolerant, JsonResult, LoginUser};
use crate::domain::workflow::model::{Node, NodeKind, RunState};
use crate::domain::ReturnT;
use crate::http::openapi::workflow_runs::{
    AttemptView, BackfillStarted, BackfillView, RunView, MAX_PARALLEL,
};
use crate::http::state::AppState;
use crate::service::workflow_run_views::{self, RunQuery};
use crate::service::workflow_runs::{self, Operation};
use crate::service::workflows::{self, WorkflowQuery};
use crate::service::ServiceContext;
use crate::storage::NodeAttempt;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Html;
use axum::routing::any;
use axum::{Json, Router};
use minijinja::context;
use serde::Serialize;
use serde_json::{Map, Value};

/// How a run may have started, for the list's filter.
const TRIGGER_TYPES: [&str; 6] = ["schedule", "misfire", "manual", "api", "subworkflow", "backfill"];

pub fn page_routes() -> Router<AppState> {
    slash_tolerant([("/workflow/run", any(run_page)), ("/workflow/runs", any(runs_page))])
}

pub fn routes() -> Router<AppState> {
    slash_tolerant([
        ("/workflowrun/pageList", any(page_list)),
        ("/workflowrun/progress", any(progress)),
        ("/workflowrun/node", any(node)),
        ("/workflowrun/operate", changes_state_post_only(operate)),
        ("/workflowrun/backfill", changes_state_post_only(backfill)),
        ("/workflowrun/backfillInfo", any(backfill_info)),
        ("/workflowrun/backfillStop", changes_state_post_only(backfill_stop)),
    ])
}

/// A node as the run view draws it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GraphNode {
    name: String,
    upstream: Vec<String>,
    /// job, branch, subworkflow or approval.
    kind: &'static str,
    job_id: Option<i32>,
    disabled: bool,
}

impl From<Node> for GraphNode {
    fn from(node: Node) -> GraphNode {
        let (kind, job_id) = match node.kind {
            NodeKind::Job { job_id, .. } => ("job", Some(job_id)),
            NodeKind::Branch { .. } => ("branch", None),
            NodeKind::SubWorkflow { .. } => ("subworkflow", None),
            NodeKind::Approval { .. } => ("approval", None),
        };
        GraphNode { name: node.name, upstream: node.upstream, kind, job_id, disabled: node.disabled }
    }
}

async fn run_page(
    State(state): State<AppState>,
    user: LoginUser,
    headers: HeaderMap,
    params: Params,
) -> Result<Html<String>, PageError> {
    let id: i64 = params.required("id")?;
    let graph = workflow_run_views::graph(&state.services, &user, id).await?;
    let nodes: Vec<GraphNode> = graph.nodes.into_iter().map(GraphNode::from).collect();
    let model = context! {
        page => "workflow",
        run_id => id,
        workflow_id => graph.workflow.id,
        workflow_name => graph.workflow.name,
        version => graph.run.version,
        graph_json => script_json(&nodes),
    };
    page(&state, &user, &headers, "workflow_run.html", model).await
}

async fn runs_page(
    State(state): State<AppState>,
    user: LoginUser,
    headers: HeaderMap,
    params: Params,
) -> Result<Html<String>, PageError> {
    let workflow_id: i64 = params.number_or("workflowId", 0)?;
    let backfill: i64 = params.number_or("backfill", 0)?;
    let query = WorkflowQuery::default();
    let (workflows, _) = workflows::list(&state.services, &user, query, 0, i64::from(i32::MAX)).await?;
    let choices: Vec<Value> =
        workflows.into_iter().map(|w| serde_json::json!({"id": w.id, "name": w.name})).collect();
    let model = context! {
        page => "workflow",
        workflows => choices,
        workflow_id => workflow_id,
        backfill => backfill,
        states => RunState::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        trigger_types => TRIGGER_TYPES,
    };
    page(&state, &user, &headers, "workflow_runs.html", model).await
}

/// A run of the list, with its workflow's name.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunRow {
    #[serde(flatten)]
    run: RunView,
    workflow_name: String,
    backfill_id: Option<i64>,
}

/// An empty text filters nothing.
fn filter(params: &Params, name: &str) -> Option<String> {
    params.string(name).filter(|v| !v.is_empty())
}

async fn page_list(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> Result<Json<Page<RunRow>>, ConsoleError> {
    let query = RunQuery {
        workflow_id: Some(params.number_or("workflowId", 0)?).filter(|id| *id > 0),
        state: filter(&params, "state"),
        trigger_type: filter(&params, "triggerType"),
        logical_from: Some(params.number_or("from", -1)?).filter(|t| *t >= 0),
        logical_to: Some(params.number_or("to", -1)?).filter(|t| *t >= 0),
    };
    let start: i64 = params.number_or("start", 0)?;
    let length: i64 = params.number_or("length", 10)?;
    let (runs, total, names) = workflow_run_views::list(&services, &user, query, start, length).await?;
    let rows = runs
        .into_iter()
        .map(|run| RunRow {
            workflow_name: names.get(&run.workflow_id).cloned().unwrap_or_default(),
            backfill_id: run.backfill_id,
            run: RunView::from(run),
        })
        .collect();
    Ok(Json(Page::new(rows, total)))
}

/// An attempt's state and times: what the run view's colours and timeline need.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AttemptTimes {
    node: String,
    attempt: i32,
    state: String,
    ready_time: Option<i64>,
    send_time: Option<i64>,
    end_time: Option<i64>,
}

impl From<NodeAttempt> for AttemptTimes {
    fn from(a: NodeAttempt) -> AttemptTimes {
        AttemptTimes {
            node: a.node,
            attempt: a.attempt,
            state: a.state,
            ready_time: a.ready_time,
            send_time: a.send_time,
            end_time: a.end_time,
        }
    }
}

#[derive(Serialize)]
struct Progress {
    run: RunView,
    attempts: Vec<AttemptTimes>,
}

async fn progress(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> JsonResult<Progress> {
    let id: i64 = params.required("id")?;
    let (run, attempts) = workflow_run_views::progress(&services, &user, id).await?;
    let attempts = attempts.into_iter().map(AttemptTimes::from).collect();
    Ok(Json(ReturnT::with_content(Progress { run: run.into(), attempts })))
}

async fn node(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> JsonResult<Vec<AttemptView>> {
    let id: i64 = params.required("id")?;
    let name = params.string("node").unwrap_or_default();
    let attempts = workflow_run_views::node(&services, &user, id, &name).await?;
    Ok(Json(ReturnT::with_content(attempts.into_iter().map(|(a, t)| AttemptView::of(a, t)).collect())))
}

/// A node's output as typed: JSON where it parses, else the text itself; nothing when blank.
fn typed_output(text: Option<String>) -> Option<Value> {
    let text = text.filter(|t| !t.trim().is_empty())?;
    Some(serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

async fn operate(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> JsonResult<Vec<String>> {
    let id: i64 = params.required("id")?;
    let name = params.string("operation").unwrap_or_default();
    let node = filter(&params, "node");
    let operation = Operation::parse(&name, node, typed_output(params.string("output")))
        .ok_or_else(|| ConsoleError::msg(services.i18n.get("wfrun_operation_unknown")))?;
    let nodes = workflow_runs::operate(&services, &user, id, operation).await?;
    Ok(Json(ReturnT::with_content(nodes)))
}

async fn backfill(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> JsonResult<BackfillStarted> {
    let i18n = &services.i18n;
    let workflow_id: i64 = params.required("workflowId")?;
    let (from, to): (i64, i64) = (params.required("from")?, params.required("to")?);
    let parallel: u32 = params.number_or("parallel", 1)?;
    if !(1..=MAX_PARALLEL).contains(&parallel) {
        return Err(ConsoleError::msg(i18n.get("wfrun_backfill_parallel_invalid")));
    }
    if from < 0 || to < from {
        return Err(ConsoleError::msg(i18n.get("wfrun_backfill_range_invalid")));
    }
    let params_text = filter(&params, "params").unwrap_or_else(|| "{}".to_string());
    let run_params = serde_json::from_str::<Map<String, Value>>(&params_text)
        .map_err(|_| ConsoleError::msg(i18n.get("wfrun_params_invalid")))?;
    let (id, runs) =
        workflow_runs::backfill(&services, &user, workflow_id, from, to, parallel, run_params).await?;
    Ok(Json(ReturnT::with_content(BackfillStarted { id, runs })))
}

async fn backfill_info(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> JsonResult<BackfillView> {
    let id: i64 = params.required("id")?;
    let (backfill, counts) = workflow_runs::backfill_detail(&services, &user, id).await?;
    Ok(Json(ReturnT::with_content(BackfillView::new(backfill, counts))))
}

async fn backfill_stop(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> JsonResult<()> {
    let id: i64 = params.required("id")?;
    workflow_runs::stop_backfill(&services, &user, id).await?;
    Ok(Json(ReturnT::success()))
}
