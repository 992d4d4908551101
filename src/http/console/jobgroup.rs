//! The executor manager's endpoints (2.4.2: JobGroupController); administrators only. The rules are in
//! [`crate::service::groups`], shared with the REST API.

use super::error::ConsoleError;
use super::params::Params;
use super::views::{GroupView, Page};
use super::{changes_state, JsonResult, LoginUser};
use crate::domain::ReturnT;
use crate::http::state::AppState;
use crate::service::groups::{self, GroupForm};
use crate::service::ServiceContext;
use axum::extract::State;
use axum::routing::any;
use axum::{Json, Router};

pub fn routes() -> Router<AppState> {
    let mut router = Router::new();
    for (path, handler) in [
        ("/jobgroup/pageList", any(page_list)),
        ("/jobgroup/save", changes_state(save)),
        ("/jobgroup/update", changes_state(update)),
        ("/jobgroup/remove", changes_state(remove)),
        ("/jobgroup/loadById", any(load_by_id)),
    ] {
        router = router.route(path, handler.clone()).route(&format!("{path}/"), handler);
    }
    router
}

async fn page_list(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> Result<Json<Page<GroupView>>, ConsoleError> {
    let start: i64 = params.number_or("start", 0)?;
    let length: i64 = params.number_or("length", 10)?;
    let (found, total) =
        groups::list(&services, &user, params.string("appname"), params.string("title"), start, length)
            .await?;
    let zone = services.db.zone();
    Ok(Json(Page::new(found.into_iter().map(|g| GroupView::new(g, zone)).collect(), total)))
}

/// The executor form as the console posts it.
fn group_form(params: &Params) -> Result<GroupForm, ConsoleError> {
    Ok(GroupForm {
        id: params.number_or("id", 0)?,
        appname: params.string("appname"),
        title: params.string("title"),
        address_type: params.number_or("addressType", 0)?,
        address_list: params.string("addressList"),
    })
}

async fn save(State(services): State<ServiceContext>, user: LoginUser, params: Params) -> JsonResult<()> {
    let form = group_form(&params)?;
    groups::add(&services, &user, form).await?;
    Ok(Json(ReturnT::success()))
}

async fn update(State(services): State<ServiceContext>, user: LoginUser, params: Params) -> JsonResult<()> {
    let form = group_form(&params)?;
    groups::update(&services, &user, form).await?;
    Ok(Json(ReturnT::success()))
}

async fn remove(State(services): State<ServiceContext>, user: LoginUser, params: Params) -> JsonResult<()> {
    let id: i32 = params.required("id")?;
    groups::remove(&services, &user, id).await?;
    Ok(Json(ReturnT::success()))
}

async fn load_by_id(State(services): State<ServiceContext>, params: Params) -> JsonResult<GroupView> {
    let id: i32 = params.required("id")?;
    let zone = services.db.zone();
    Ok(Json(match services.db.load_group(id).await? {
        Some(group) => ReturnT::with_content(GroupView::new(group, zone)),
        None => ReturnT { code: 500, msg: None, content: None },
    }))
}
