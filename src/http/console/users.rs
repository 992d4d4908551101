//! The user manager's endpoints (2.4.2: UserController): administrators manage users; everyone may change
//! their own password, giving the old one.

use super::auth::throttled;
use super::error::ConsoleError;
use super::params::Params;
use super::state::ConsoleState;
use super::throttle::LoginThrottle;
use super::views::{Page, UserView};
use super::{changes_state, changes_state_post_only, JsonResult, LoginUser};
use crate::domain::{is_blank, ReturnT};
use crate::http::client::ClientAddr;
use crate::http::state::AppState;
use crate::service::audit::{changes, Event, EventKind, Target, HIDDEN};
use crate::service::tokens::ApiTokens;
use crate::service::users::{self, UserForm};
use crate::service::ServiceContext;
use crate::storage::{JobUser, Role};
use axum::extract::State;
use axum::routing::any;
use axum::{Json, Router};
use chrono::NaiveDateTime;
use serde::Serialize;
use serde_json::{json, Value};
use std::net::IpAddr;
use std::sync::Arc;

pub fn admin_routes() -> Router<AppState> {
    let mut router = Router::new();
    for (path, handler) in [
        ("/user/pageList", any(page_list)),
        ("/user/add", changes_state(add)),
        ("/user/update", changes_state(update)),
        ("/user/remove", changes_state(remove)),
    ] {
        router = router.route(path, handler.clone()).route(&format!("{path}/"), handler);
    }
    router
}

pub fn any_user_routes() -> Router<AppState> {
    Router::new()
        .route("/user/updatePwd", changes_state(update_pwd))
        .route("/user/updatePwd/", changes_state(update_pwd))
        .route("/user/apiToken", changes_state_post_only(api_token))
        .route("/user/apiToken/", changes_state_post_only(api_token))
}

async fn page_list(
    State(services): State<ServiceContext>,
    params: Params,
) -> Result<Json<Page<UserView>>, ConsoleError> {
    let role: i32 = params.required("role")?;
    let start: i64 = params.number_or("start", 0)?;
    let length: i64 = params.number_or("length", 10)?;
    let (users, total) =
        services.db.page_users(&params.string("username"), role, start.max(0), length.max(0)).await?;
    Ok(Json(Page::new(users.into_iter().map(UserView::from).collect(), total)))
}

/// A user as the audit trail shows it; its password hash is hidden by the trail's redaction.
fn user_fields(user: &JobUser) -> Value {
    json!({ "username": user.username, "password": user.password, "role": user.role, "permission": user.permission })
}

fn user_target(id: i32, name: Option<&str>) -> Target {
    Target::new("user", id, name.map(str::to_string))
}

async fn add(State(services): State<ServiceContext>, login: LoginUser, params: Params) -> JsonResult<()> {
    let name = params.string("username").map(|n| n.trim().to_string());
    let result = users::add(&services, user_form(&params), role(&params)).await;
    let target = user_target(result.as_ref().map_or(0, |user| user.id), name.as_deref());
    services.audit.done(
        &login,
        EventKind::UserAdd,
        target,
        |user| changes(None, Some(&user_fields(user))),
        result,
    )?;
    Ok(Json(ReturnT::success()))
}

/// The user form's fields but the role.
fn user_form(params: &Params) -> UserForm {
    UserForm {
        username: params.string("username"),
        password: params.string("password"),
        permission: params.string("permission"),
    }
}

/// The form's role, a normal user's when not given.
fn role(params: &Params) -> impl FnOnce() -> Result<Role, ConsoleError> + '_ {
    || Ok(i16::from(params.number_or::<i8>("role", 0)?).into())
}

async fn update(State(services): State<ServiceContext>, login: LoginUser, params: Params) -> JsonResult<()> {
    let id: i32 = params.number_or("id", 0)?;
    let before = services.db.load_user(id).await?;
    let result = users::update(&services, &login, id, user_form(&params), role(&params)).await;
    let target = user_target(id, before.as_ref().map(|user| user.username.as_str()));
    let fields = |user: &Option<JobUser>| user.as_ref().map(user_fields);
    services.audit.done(
        &login,
        EventKind::UserUpdate,
        target,
        |after| changes(fields(&before).as_ref(), fields(after).as_ref()),
        result,
    )?;
    Ok(Json(ReturnT::success()))
}

async fn remove(State(services): State<ServiceContext>, login: LoginUser, params: Params) -> JsonResult<()> {
    let id: i32 = params.required("id")?;
    let before = services.db.load_user(id).await?;
    let target = user_target(id, before.as_ref().map(|user| user.username.as_str()));
    let result = users::remove(&services, &login, id).await.map_err(ConsoleError::from);
    services.audit.done(
        &login,
        EventKind::UserRemove,
        target,
        |_| changes(before.as_ref().map(user_fields).as_ref(), None),
        result,
    )?;
    Ok(Json(ReturnT::success()))
}

/// The old-password check is a password oracle, so it is throttled and counted like a login.
async fn update_pwd(
    State(services): State<ServiceContext>,
    State(console): State<Arc<ConsoleState>>,
    login: LoginUser,
    ClientAddr(address): ClientAddr,
    params: Params,
) -> JsonResult<()> {
    let result = change_password(&services, &console.throttle, &login, address, &params).await;
    let target = user_target(login.0.id, Some(&login.0.username));
    // Which password is none of the trail's business: only that it changed.
    let changed = json!({ "password": { "before": HIDDEN, "after": HIDDEN } });
    services.audit.done(&login, EventKind::UserPassword, target, |()| Some(changed), result)?;
    Ok(Json(ReturnT::success()))
}

/// The rules are the service's; the throttle, which counts wrong old passwords like failed logins, is
/// the console's.
async fn change_password(
    services: &ServiceContext,
    throttle: &LoginThrottle,
    login: &LoginUser,
    address: IpAddr,
    params: &Params,
) -> Result<(), ConsoleError> {
    let old = params.string("oldPassword").unwrap_or_default();
    let new = params.string("password").unwrap_or_default();
    let new = users::password_change(&services.i18n, &old, &new)?;
    let now = services.clock.now_ms();
    if let Some(wait) = throttle.wait_ms(Some(login.0.id), address, now) {
        return Err(throttled(&services.i18n, wait));
    }
    if let Err(wrong) = users::check_old_password(&services.i18n, &login.0, &old) {
        throttle.record_failure(Some(login.0.id), address, now);
        return Err(wrong.into());
    }
    throttle.record_success(login.0.id, address);
    Ok(users::set_password(services, &login.0, &new).await?)
}

/// A new personal API token, shown once: nothing is stored, so it cannot be shown again.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct IssuedToken {
    token: String,
    /// `yyyy-MM-dd HH:mm:ss`, or null for a token that ends only with a password or role change.
    expire_time: Option<String>,
}

/// Issues a personal REST API token for the logged-in user; `expireTime` (optional, wall-clock time in
/// the admin's zone) must lie in the future.
async fn api_token(
    State(services): State<ServiceContext>,
    State(tokens): State<ApiTokens>,
    login: LoginUser,
    params: Params,
) -> JsonResult<IssuedToken> {
    let now = services.clock.now_ms();
    let zone = services.cron_zone();
    let expires = match params.string("expireTime").filter(|t| !is_blank(Some(t))) {
        None => None,
        Some(text) => {
            let typed = NaiveDateTime::parse_from_str(text.trim(), "%Y-%m-%d %H:%M:%S")
                .ok()
                .map(|t| zone.to_epoch_ms(t));
            match typed.filter(|&ms| ms > now) {
                Some(ms) => Some(ms),
                None => return Err(ConsoleError::msg(services.i18n.get("api_token_expire_unvalid"))),
            }
        }
    };
    let token = tokens.issue(&login.0, now, expires);
    let expire_time = expires.map(|ms| zone.to_naive_exact(ms).format("%Y-%m-%d %H:%M:%S").to_string());
    // Named by its id, which the token's requests carry in their events too; never by its text.
    let id = tokens.verify(&token, now).map(|claims| claims.id().to_string()).ok();
    let issued = json!({ "expireTime": { "before": null, "after": expire_time } });
    let event = Event::by(
        &login,
        EventKind::TokenIssue,
        Some(Target { kind: "token", id: id.map(Value::from), name: Some(login.0.username.clone()) }),
    );
    services.audit.record(event.changes(Some(issued)));
    Ok(Json(ReturnT::with_content(IssuedToken { token, expire_time })))
}
