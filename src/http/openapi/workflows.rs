//! `/workflows`: workflow definitions: list, read, create, change, delete, their versions, what changed
//! between two, restoring one, and scheduling.

use super::shapes::{DiffView, VersionDetail, VersionView, WorkflowDetail, WorkflowView};
use super::{location, paging, within, ApiResult, ApiUser, ErrorBody, Id, JsonBody, Listing, QueryParams};
use crate::config::Config;
use crate::domain::workflow::Definition;
use crate::service::workflows::{self, Saved, WorkflowQuery};
use crate::service::ServiceContext;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde::Deserialize;
use std::sync::Arc;

/// A definition document as sent. The service reads it, to name the path of any fault (`nodes[2].retry`);
/// the document declares it as a `Definition`. Not a schema of the document itself, so the body's edge
/// checks (media type, an object, no NUL) apply and the field checks are left to the service.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(transparent)]
pub struct DefinitionBody(serde_json::Value);

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WorkflowListQuery {
    /// Executor group id; 0 or absent = every permitted group.
    #[param(minimum = 0)]
    job_group: Option<i32>,
    /// Name contains this.
    name: Option<String>,
    /// Rows to skip (default 0).
    #[param(minimum = 0)]
    offset: Option<i64>,
    /// Rows to answer, 1 to 1000 (default 20).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<i64>,
}

/// Lists the workflows of the permitted groups, by name.
#[utoipa::path(operation_id = "listWorkflows", get, path = "/workflows", tag = "workflows", params(WorkflowListQuery),
    responses((status = 200, body = Listing<WorkflowView>), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn list(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    QueryParams(query): QueryParams<WorkflowListQuery>,
) -> ApiResult<Json<Listing<WorkflowView>>> {
    let (offset, limit) = paging(query.offset, query.limit)?;
    within(&services, "jobGroup", query.job_group, 0..=i32::MAX)?;
    let filter = WorkflowQuery { job_group: query.job_group.unwrap_or(0), name: query.name, last_run: None };
    let (found, total) = workflows::list(&services, &user, filter, offset, limit).await?;
    Ok(Json(Listing { total, items: found.into_iter().map(WorkflowView::of).collect() }))
}

/// Creates a workflow, stopped, from a definition document: its version 1.
#[utoipa::path(operation_id = "createWorkflow", post, path = "/workflows", tag = "workflows", request_body = Definition,
    responses((status = 201, body = Saved, headers(("Location" = String, description = "the new workflow's URL"))),
        (status = 400, body = ErrorBody, description = "the document is refused: `errors` lists every problem, with its node and field \
            (a job, executor group or sub-workflow it names that does not exist, a cycle, sub-workflows nested too deep among them)"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody, description = "the executor group, or that of a job or sub-workflow named, is not granted"),
        (status = 409, body = ErrorBody, description = "another workflow has the name"), (status = 415, body = ErrorBody),
        (status = 503, body = ErrorBody, description = "the first workflow: the database account may not create the workflow tables (the message says what to do)")))]
pub async fn create(
    State(services): State<ServiceContext>,
    State(config): State<Arc<Config>>,
    ApiUser(user): ApiUser,
    JsonBody(DefinitionBody(document)): JsonBody<DefinitionBody>,
) -> ApiResult<impl IntoResponse> {
    let saved = workflows::create(&services, &user, document).await?;
    Ok((StatusCode::CREATED, location(&config, &format!("/workflows/{}", saved.id)), Json(saved)))
}

/// One workflow, with the definition of its current version.
#[utoipa::path(operation_id = "getWorkflow", get, path = "/workflows/{id}", tag = "workflows", params(("id" = i64, Path, description = "workflow id", minimum = 1)),
    responses((status = 200, body = WorkflowDetail), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i64>,
) -> ApiResult<Json<WorkflowDetail>> {
    let (workflow, definition) = workflows::get_current(&services, &user, id).await?;
    Ok(Json(WorkflowDetail { workflow: WorkflowView::of(workflow), definition }))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SaveQuery {
    /// The version the document was made from: when another one is current (someone saved meanwhile),
    /// the save is refused with 409 rather than undo that change.
    #[param(minimum = 1)]
    base_version: Option<i32>,
}

/// Saves a definition document as the workflow's next version, if it differs from the current one (else
/// answers the current version, unchanged). A running workflow whose schedule changes is rescheduled.
#[utoipa::path(operation_id = "updateWorkflow", put, path = "/workflows/{id}", tag = "workflows", request_body = Definition,
    params(("id" = i64, Path, description = "workflow id", minimum = 1), SaveQuery),
    responses((status = 200, body = Saved),
        (status = 400, body = ErrorBody, description = "the document is refused: `errors` lists every problem, with its node and field"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "another version is current than `baseVersion`, or became current meanwhile; \
            another workflow has the name; the workflow is running and the new schedule cannot be"),
        (status = 415, body = ErrorBody)))]
pub async fn update(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i64>,
    QueryParams(query): QueryParams<SaveQuery>,
    JsonBody(DefinitionBody(document)): JsonBody<DefinitionBody>,
) -> ApiResult<Json<Saved>> {
    within(&services, "baseVersion", query.base_version, 1..=i32::MAX)?;
    Ok(Json(workflows::update(&services, &user, id, document, query.base_version).await?))
}

/// Deletes a workflow with its versions and past runs.
#[utoipa::path(operation_id = "deleteWorkflow", delete, path = "/workflows/{id}", tag = "workflows", params(("id" = i64, Path, description = "workflow id", minimum = 1)),
    responses((status = 204, description = "deleted"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "runs of it are queued, running or paused, or another workflow runs it as a sub-workflow")))]
pub async fn delete(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i64>,
) -> ApiResult<StatusCode> {
    workflows::remove(&services, &user, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PageQuery {
    /// Rows to skip (default 0).
    #[param(minimum = 0)]
    offset: Option<i64>,
    /// Rows to answer, 1 to 1000 (default 20).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<i64>,
}

/// A workflow's versions, newest first.
#[utoipa::path(operation_id = "listWorkflowVersions", get, path = "/workflows/{id}/versions", tag = "workflows",
    params(("id" = i64, Path, description = "workflow id", minimum = 1), PageQuery),
    responses((status = 200, body = Listing<VersionView>), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn versions(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i64>,
    QueryParams(query): QueryParams<PageQuery>,
) -> ApiResult<Json<Listing<VersionView>>> {
    let (offset, limit) = paging(query.offset, query.limit)?;
    let (workflow, versions) = workflows::versions(&services, &user, id).await?;
    let total = versions.len() as i64;
    let page = versions.into_iter().skip(offset as usize).take(limit as usize);
    let items = page.map(|v| VersionView::of(v, workflow.current_version)).collect();
    Ok(Json(Listing { total, items }))
}

/// One version of a workflow, with its definition.
#[utoipa::path(operation_id = "getWorkflowVersion", get, path = "/workflows/{id}/versions/{version}", tag = "workflows",
    params(("id" = i64, Path, description = "workflow id", minimum = 1), ("version" = i32, Path, description = "version number", minimum = 1)),
    responses((status = 200, body = VersionDetail), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn version(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(path): Id<VersionPath>,
) -> ApiResult<Json<VersionDetail>> {
    let (workflow, version, definition) = workflows::version(&services, &user, path.id, path.version).await?;
    Ok(Json(VersionDetail::of(version, definition, workflow.current_version)))
}

/// The path of one version, by name so that a malformed one is named.
#[derive(Debug, Deserialize)]
pub struct VersionPath {
    id: i64,
    version: i32,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct DiffQuery {
    /// The older version; absent = the one before `to`.
    #[param(minimum = 1)]
    from: Option<i32>,
    /// The newer version; absent = the current one.
    #[param(minimum = 1)]
    to: Option<i32>,
}

/// What changed between two versions of a workflow: the top-level fields with their old and new values,
/// and the nodes (by name) added, removed, and changed, with their changed fields.
#[utoipa::path(operation_id = "diffWorkflowVersions", get, path = "/workflows/{id}/diff", tag = "workflows",
    params(("id" = i64, Path, description = "workflow id", minimum = 1), DiffQuery),
    responses((status = 200, body = DiffView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no such workflow, or it has no such version")))]
pub async fn diff(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i64>,
    QueryParams(query): QueryParams<DiffQuery>,
) -> ApiResult<Json<DiffView>> {
    within(&services, "from", query.from, 1..=i32::MAX)?;
    within(&services, "to", query.to, 1..=i32::MAX)?;
    let (from, to, diff) = workflows::compare(&services, &user, id, query.from, query.to).await?;
    Ok(Json(DiffView { from, to, diff }))
}

/// Makes an older version's definition current again, as a new version (nothing changes when it is the
/// current definition already). It is checked as any save is: what it names must still exist.
#[utoipa::path(operation_id = "restoreWorkflowVersion", post, path = "/workflows/{id}/versions/{version}/restore", tag = "workflows",
    params(("id" = i64, Path, description = "workflow id", minimum = 1), ("version" = i32, Path, description = "the version to restore", minimum = 1)),
    responses((status = 200, body = Saved),
        (status = 400, body = ErrorBody, description = "the version no longer passes the checks of a save (`errors` says why)"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no such workflow, or it has no such version"),
        (status = 409, body = ErrorBody, description = "another save came first, another workflow has the name, or the workflow is running and its restored schedule cannot be")))]
pub async fn restore(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(path): Id<VersionPath>,
) -> ApiResult<Json<Saved>> {
    Ok(Json(workflows::restore(&services, &user, path.id, path.version).await?))
}

/// Schedules a workflow: its first run comes five seconds from now at the earliest.
#[utoipa::path(operation_id = "startWorkflow", post, path = "/workflows/{id}/start", tag = "workflows", params(("id" = i64, Path, description = "workflow id", minimum = 1)),
    responses((status = 200, body = WorkflowView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "the workflow's schedule type is NONE, or its schedule never fires again")))]
pub async fn start(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i64>,
) -> ApiResult<Json<WorkflowView>> {
    Ok(Json(WorkflowView::of(workflows::start(&services, &user, id).await?)))
}

/// Unschedules a workflow; runs under way go on.
#[utoipa::path(operation_id = "stopWorkflow", post, path = "/workflows/{id}/stop", tag = "workflows", params(("id" = i64, Path, description = "workflow id", minimum = 1)),
    responses((status = 200, body = WorkflowView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn stop(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i64>,
) -> ApiResult<Json<WorkflowView>> {
    Ok(Json(WorkflowView::of(workflows::stop(&services, &user, id).await?)))
}
