//! `/groups`: the executor groups a token's user may see; administrators create, change and delete them.

use super::shapes::GroupView;
use super::{location, paging, ApiResult, ApiUser, ErrorBody, Id, JsonBody, Listing, QueryParams};
use crate::config::Config;
use crate::service::groups::{self, GroupForm};
use crate::service::ServiceContext;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde::Deserialize;
use std::sync::Arc;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct GroupQuery {
    /// AppName contains this.
    appname: Option<String>,
    /// Title contains this.
    title: Option<String>,
    /// Rows to skip (default 0).
    #[param(minimum = 0)]
    offset: Option<i64>,
    /// Rows to answer, 1 to 1000 (default 20).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<i64>,
}

/// Lists executor groups: every group for an administrator, the permitted ones for other users.
#[utoipa::path(operation_id = "listGroups", get, path = "/groups", tag = "groups", params(GroupQuery),
    responses((status = 200, body = Listing<GroupView>), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub async fn list(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    QueryParams(query): QueryParams<GroupQuery>,
) -> ApiResult<Json<Listing<GroupView>>> {
    let (offset, limit) = paging(query.offset, query.limit)?;
    let (found, total) = groups::list(&services, &user, query.appname, query.title, offset, limit).await?;
    let zone = services.db.zone();
    Ok(Json(Listing { total, items: found.into_iter().map(|g| GroupView::of(g, zone)).collect() }))
}

/// One executor group.
#[utoipa::path(operation_id = "getGroup", get, path = "/groups/{id}", tag = "groups", params(("id" = i32, Path, description = "group id", minimum = 1)),
    responses((status = 200, body = GroupView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i32>,
) -> ApiResult<Json<GroupView>> {
    let group = groups::get(&services, &user, id).await?;
    Ok(Json(GroupView::of(group, services.db.zone())))
}

/// Creates an executor group (administrators only).
#[utoipa::path(operation_id = "createGroup", post, path = "/groups", tag = "groups", request_body = GroupForm,
    responses((status = 201, body = GroupView, headers(("Location" = String, description = "the new group's URL"))), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 415, body = ErrorBody)))]
pub async fn create(
    State(services): State<ServiceContext>,
    State(config): State<Arc<Config>>,
    ApiUser(user): ApiUser,
    JsonBody(form): JsonBody<GroupForm>,
) -> ApiResult<impl IntoResponse> {
    let id = groups::add(&services, &user, form).await?;
    let group = groups::get(&services, &user, id).await?;
    Ok((
        StatusCode::CREATED,
        location(&config, &format!("/groups/{id}")),
        Json(GroupView::of(group, services.db.zone())),
    ))
}

/// Replaces an executor group's settings (administrators only); an automatic group takes its live
/// registrations at once.
#[utoipa::path(operation_id = "updateGroup", put, path = "/groups/{id}", tag = "groups", request_body = GroupForm, params(("id" = i32, Path, description = "group id", minimum = 1)),
    responses((status = 200, body = GroupView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)))]
pub async fn update(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i32>,
    JsonBody(form): JsonBody<GroupForm>,
) -> ApiResult<Json<GroupView>> {
    groups::get(&services, &user, id).await?;
    groups::update(&services, &user, GroupForm { id, ..form }).await?;
    let group = groups::get(&services, &user, id).await?;
    Ok(Json(GroupView::of(group, services.db.zone())))
}

/// Deletes an executor group without jobs, unless it is the last one (administrators only).
#[utoipa::path(operation_id = "deleteGroup", delete, path = "/groups/{id}", tag = "groups", params(("id" = i32, Path, description = "group id", minimum = 1)),
    responses((status = 204, description = "deleted"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody, description = "the group has jobs, or is the last one")))]
pub async fn delete(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    Id(id): Id<i32>,
) -> ApiResult<StatusCode> {
    groups::get(&services, &user, id).await?;
    groups::remove(&services, &user, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
