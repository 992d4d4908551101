//! The workflow pages of the console (docs/workflows.md#in-the-console): the list at `/workflow` and the
//! editor at `/workflow/edit`, and their JSON under `/workflow/…`. The rules are the REST API's
//! ([`crate::service::workflows`]): the same permissions, checks and audit events; a refused definition
//! answers its problems one by one, with node and field, for the editor to show where they are.

use super::error::{ConsoleError, PageError};
use super::pages::{page, visible_groups};
use super::params::Params;
use super::render::script_json;
use super::views::Page;
use super::{changes_state, LoginUser};
use crate::domain::workflow::model::RunState;
use crate::domain::workflow::{DefinitionDiff, DefinitionError, Problem};
use crate::domain::ReturnT;
use crate::http::state::AppState;
use crate::service::workflows::{self, Saved, WorkflowQuery};
use crate::service::{workflow_editing, workflow_runs, ServiceContext, ServiceError};
use crate::storage::{LastRun, Workflow, WorkflowRun};
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::any;
use axum::{Json, Router};
use minijinja::context;
use serde::Serialize;
use serde_json::{Map, Value};

/// The last-run filter's value for workflows that never ran.
const NEVER_RAN: &str = "none";

pub fn page_routes() -> Router<AppState> {
    Router::new()
        .route("/workflow", any(list_page))
        .route("/workflow/", any(list_page))
        .route("/workflow/edit", any(edit_page))
}

pub fn routes() -> Router<AppState> {
    let mut router = Router::new();
    for (path, handler) in [
        ("/workflow/pageList", any(page_list)),
        ("/workflow/load", any(load)),
        ("/workflow/jobs", any(jobs)),
        ("/workflow/validate", any(validate)),
        ("/workflow/versions", any(versions)),
        ("/workflow/version", any(version)),
        ("/workflow/diff", any(diff)),
        ("/workflow/toToml", any(to_toml)),
        ("/workflow/fromToml", any(from_toml)),
        ("/workflow/save", changes_state(save)),
        ("/workflow/remove", changes_state(remove)),
        ("/workflow/start", changes_state(start)),
        ("/workflow/stop", changes_state(stop)),
        ("/workflow/trigger", changes_state(trigger)),
        ("/workflow/copy", changes_state(copy)),
        ("/workflow/restore", changes_state(restore)),
    ] {
        router = router.route(path, handler);
    }
    router
}

/// A failure of the workflow endpoints: a refused definition keeps its problems, for the editor;
/// everything else is the console's.
#[derive(Debug)]
pub enum WorkflowError {
    Console(ConsoleError),
    Definition(Vec<DefinitionError>),
}

impl From<ServiceError> for WorkflowError {
    fn from(error: ServiceError) -> WorkflowError {
        match error {
            ServiceError::Definition(problems) => WorkflowError::Definition(problems),
            other => WorkflowError::Console(other.into()),
        }
    }
}

impl From<ConsoleError> for WorkflowError {
    fn from(error: ConsoleError) -> WorkflowError {
        WorkflowError::Console(error)
    }
}

/// One problem of a definition as the editor shows it; `cycle` names a cycle's nodes in order.
#[derive(Debug, Serialize)]
struct ProblemView {
    node: Option<String>,
    field: String,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    cycle: Option<Vec<String>>,
}

fn problem_views(problems: &[DefinitionError]) -> Vec<ProblemView> {
    problems
        .iter()
        .map(|p| ProblemView {
            node: p.node.clone(),
            field: p.field.clone(),
            message: p.problem.to_string(),
            cycle: match &p.problem {
                Problem::Cycle(names) => Some(names.clone()),
                _ => None,
            },
        })
        .collect()
}

/// A refused definition: the console's failure envelope, with every problem as its content.
impl IntoResponse for WorkflowError {
    fn into_response(self) -> Response {
        match self {
            WorkflowError::Console(error) => error.into_response(),
            WorkflowError::Definition(problems) => {
                let msg = ServiceError::Definition(problems.clone()).to_string();
                Json(ReturnT { code: 500, msg: Some(msg), content: Some(problem_views(&problems)) })
                    .into_response()
            }
        }
    }
}

type Answer<T> = Result<Json<ReturnT<T>>, WorkflowError>;

fn answer<T>(content: T) -> Answer<T> {
    Ok(Json(ReturnT::with_content(content)))
}

/// The run states a list may filter on, and "never ran".
fn last_run_filter(params: &Params) -> Result<Option<LastRun>, ConsoleError> {
    match params.string("lastState").filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) if s == NEVER_RAN => Ok(Some(LastRun::Never)),
        Some(s) => match RunState::parse(&s) {
            Some(state) => Ok(Some(LastRun::In(state.as_str().to_string()))),
            None => Err(ConsoleError::BadRequest(format!("parameter 'lastState' is not a run state: {s}"))),
        },
    }
}

async fn list_page(
    State(state): State<AppState>,
    user: LoginUser,
    headers: HeaderMap,
    params: Params,
) -> Result<Html<String>, PageError> {
    let groups = visible_groups(&state.services, &user).await?;
    let job_group: i32 = params.number_or("jobGroup", 0)?;
    let states: Vec<&str> = RunState::ALL.iter().map(|s| s.as_str()).collect();
    let model =
        context! { page => "workflow", groups => groups, job_group => job_group, run_states => states };
    page(&state, &user, &headers, "workflow.html", model).await
}

async fn edit_page(
    State(state): State<AppState>,
    user: LoginUser,
    headers: HeaderMap,
    params: Params,
) -> Result<Html<String>, PageError> {
    let groups = visible_groups(&state.services, &user).await?;
    let id: i64 = params.number_or("id", 0)?;
    if id > 0 {
        workflows::get(&state.services, &user, id).await?;
    }
    let model = context! {
        page => "workflow",
        workflow_id => id,
        groups_json => script_json(&groups),
    };
    page(&state, &user, &headers, "workflow_edit.html", model).await
}

/// A workflow as the list shows it, with its latest run.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct WorkflowRow {
    id: i64,
    name: String,
    job_group: i32,
    current_version: i32,
    trigger_status: i16,
    schedule_type: String,
    schedule_conf: Option<String>,
    /// Epoch milliseconds; 0 while stopped.
    trigger_next_time: i64,
    author: Option<String>,
    update_time: i64,
    last_run: Option<LastRunView>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct LastRunView {
    id: i64,
    state: String,
    add_time: i64,
    end_time: Option<i64>,
}

impl WorkflowRow {
    fn of(w: Workflow, run: Option<WorkflowRun>) -> WorkflowRow {
        WorkflowRow {
            id: w.id,
            name: w.name,
            job_group: w.job_group,
            current_version: w.current_version,
            trigger_status: w.trigger_status,
            schedule_type: w.schedule_type,
            schedule_conf: w.schedule_conf,
            trigger_next_time: w.trigger_next_time,
            author: w.author,
            update_time: w.update_time,
            last_run: run.map(|r| LastRunView {
                id: r.id,
                state: r.state,
                add_time: r.add_time,
                end_time: r.end_time,
            }),
        }
    }
}

async fn page_list(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> Result<Json<Page<WorkflowRow>>, WorkflowError> {
    let query = WorkflowQuery {
        job_group: params.number_or("jobGroup", 0)?,
        name: params.string("name").filter(|n| !n.is_empty()),
        last_run: last_run_filter(&params)?,
    };
    let start: i64 = params.number_or("start", 0)?;
    let length: i64 = params.number_or("length", 10)?;
    let (rows, total) =
        workflow_editing::list_with_latest_runs(&services, &user, query, start, length).await?;
    Ok(Json(Page::new(rows.into_iter().map(|(w, run)| WorkflowRow::of(w, run)).collect(), total)))
}

/// A workflow with its current definition.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Loaded {
    id: i64,
    current_version: i32,
    trigger_status: i16,
    definition: crate::domain::workflow::Definition,
}

async fn load(State(services): State<ServiceContext>, user: LoginUser, params: Params) -> Answer<Loaded> {
    let id: i64 = params.required("id")?;
    let (w, definition) = workflows::get_current(&services, &user, id).await?;
    answer(Loaded {
        id: w.id,
        current_version: w.current_version,
        trigger_status: w.trigger_status,
        definition,
    })
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct JobChoice {
    id: i32,
    job_desc: String,
    executor_handler: String,
}

async fn jobs(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> Answer<Vec<JobChoice>> {
    let job_group: i32 = params.required("jobGroup")?;
    let found = workflow_editing::group_jobs(&services, &user, job_group).await?;
    answer(
        found
            .into_iter()
            .map(|j| JobChoice {
                id: j.id,
                job_desc: j.job_desc,
                executor_handler: j.executor_handler.unwrap_or_default(),
            })
            .collect(),
    )
}

/// The `definition` parameter: a JSON object.
fn document(params: &Params) -> Result<Value, WorkflowError> {
    let text =
        params.string("definition").ok_or_else(|| ConsoleError::MissingParameter("definition".into()))?;
    Ok(workflow_editing::document_of(&text)?)
}

/// The checks of a save, nothing saved: every problem, or none.
async fn validate(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> Answer<Vec<ProblemView>> {
    let id = Some(params.number_or::<i64>("id", 0)?).filter(|&id| id > 0);
    match workflows::check_document(&services, &user, &document(&params)?, id).await {
        Ok(_) => answer(Vec::new()),
        Err(ServiceError::Definition(problems)) => answer(problem_views(&problems)),
        Err(other) => Err(other.into()),
    }
}

/// Creates a workflow (no `id`) or saves its next version over `baseVersion`.
async fn save(State(services): State<ServiceContext>, user: LoginUser, params: Params) -> Answer<Saved> {
    let id: i64 = params.number_or("id", 0)?;
    let document = document(&params)?;
    let saved = if id > 0 {
        let base = Some(params.number_or::<i32>("baseVersion", 0)?).filter(|&v| v > 0);
        workflows::update(&services, &user, id, document, base).await?
    } else {
        workflows::create(&services, &user, document).await?
    };
    answer(saved)
}

/// Refused while a run is not over, with how many.
async fn remove(State(services): State<ServiceContext>, user: LoginUser, params: Params) -> Answer<()> {
    workflows::remove(&services, &user, params.required("id")?).await?;
    answer(())
}

async fn start(State(services): State<ServiceContext>, user: LoginUser, params: Params) -> Answer<i64> {
    let started = workflows::start(&services, &user, params.required("id")?).await?;
    answer(started.trigger_next_time)
}

async fn stop(State(services): State<ServiceContext>, user: LoginUser, params: Params) -> Answer<()> {
    workflows::stop(&services, &user, params.required("id")?).await?;
    answer(())
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Started {
    run_id: i64,
    state: String,
}

/// Runs a workflow now with `params`, a JSON object laid over its default parameters (empty: none).
async fn trigger(State(services): State<ServiceContext>, user: LoginUser, params: Params) -> Answer<Started> {
    let id: i64 = params.required("id")?;
    let text = params.string("params").unwrap_or_default();
    let run_params = match text.trim() {
        "" => Map::new(),
        text => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            _ => return Err(ConsoleError::msg(services.i18n.get("workflow_params_invalid")).into()),
        },
    };
    let admitted = workflow_runs::start(&services, &user, id, run_params, None).await?;
    answer(Started { run_id: admitted.id, state: admitted.state.to_string() })
}

async fn copy(State(services): State<ServiceContext>, user: LoginUser, params: Params) -> Answer<Saved> {
    let id: i64 = params.required("id")?;
    let name = params.string("name").unwrap_or_default();
    answer(workflow_editing::copy(&services, &user, id, name).await?)
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct VersionRow {
    version: i32,
    author: Option<String>,
    add_time: i64,
    current: bool,
}

async fn versions(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> Answer<Vec<VersionRow>> {
    let (w, found) = workflows::versions(&services, &user, params.required("id")?).await?;
    let rows = found
        .into_iter()
        .map(|v| VersionRow {
            current: v.version == w.current_version,
            version: v.version,
            author: v.author,
            add_time: v.add_time,
        })
        .collect();
    answer(rows)
}

async fn version(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> Answer<crate::domain::workflow::Definition> {
    let (_, _, definition) =
        workflows::version(&services, &user, params.required("id")?, params.required("version")?).await?;
    answer(definition)
}

#[derive(Debug, Serialize)]
struct DiffAnswer {
    from: i32,
    to: i32,
    #[serde(flatten)]
    diff: DefinitionDiff,
}

async fn diff(State(services): State<ServiceContext>, user: LoginUser, params: Params) -> Answer<DiffAnswer> {
    let id: i64 = params.required("id")?;
    let (from, to) = (params.required("from")?, params.required("to")?);
    let (from, to, diff) = workflows::compare(&services, &user, id, Some(from), Some(to)).await?;
    answer(DiffAnswer { from, to, diff })
}

async fn restore(State(services): State<ServiceContext>, user: LoginUser, params: Params) -> Answer<Saved> {
    answer(workflows::restore(&services, &user, params.required("id")?, params.required("version")?).await?)
}

/// The definition as the jobs-as-code TOML; one that does not read as a definition is refused with where.
async fn to_toml(State(services): State<ServiceContext>, user: LoginUser, params: Params) -> Answer<String> {
    let document = document(&params)?;
    let def = serde_json::from_value(document)
        .map_err(|e| ConsoleError::msg(format!("the definition does not read: {e}")))?;
    answer(workflow_editing::to_toml(&services, &user, &def).await?)
}

async fn from_toml(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> Answer<crate::domain::workflow::Definition> {
    let text = params.string("toml").unwrap_or_default();
    answer(workflow_editing::from_toml(&services, &user, &text).await?)
}
