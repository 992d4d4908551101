//! `/login` and `/logout` (spec console 1.2, 2.2, 2.4).

use super::error::{ConsoleError, JsonError};
use super::params::Params;
use super::session::{self, md5_hex};
use super::throttle::wait_secs;
use super::{changes_state_post_only, current_user, LoginUser, OrJson};
use crate::service::audit::{Event, METHOD_PASSWORD};
use crate::service::Origin;
use crate::http::state::AppState;
use crate::domain::{is_blank, ReturnT};
use crate::http::client::ClientAddr;
use crate::i18n::I18n;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::{Json, Router};
use subtle::ConstantTimeEq;
use tower_sessions::Session;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/login", changes_state_post_only(login))
        .route("/login/", changes_state_post_only(login))
        .route("/logout", changes_state_post_only(logout))
        .route("/logout/", changes_state_post_only(logout))
}

/// "Too many failed attempts, try again in N s".
pub fn throttled(i18n: &I18n, wait_ms: i64) -> ConsoleError {
    ConsoleError::msg(i18n.format("login_throttled", &[&wait_secs(wait_ms)]))
}

async fn login(State(state): State<AppState>, ClientAddr(address): ClientAddr, session: Session, params: Params) -> Result<Json<ReturnT<()>>, JsonError> {
    let i18n = &state.i18n;
    if !state.config.auth.password_enabled {
        return Err(ConsoleError::msg(i18n.get("login_password_disabled"))).or_json(&state);
    }
    let (username, password) = (params.string("userName"), params.string("password"));
    let (Some(username), Some(password)) = (username, password) else {
        return Err(ConsoleError::msg(i18n.get("login_param_empty"))).or_json(&state);
    };
    if is_blank(Some(&username)) || is_blank(Some(&password)) {
        return Err(ConsoleError::msg(i18n.get("login_param_empty"))).or_json(&state);
    }
    let now = state.clock.now_ms();
    let throttle = &state.console.throttle;
    let user = state.db.load_user_by_name(&username).await.or_json(&state)?;
    // Counted per account found, whatever spelling of the name found it.
    let account = user.as_ref().map(|u| u.id);
    if let Some(wait) = throttle.wait_ms(account, address, now) {
        state.audit.sign_in(&username, account, METHOD_PASSWORD, address, Some("too many failed attempts"));
        return Err(throttled(i18n, wait)).or_json(&state);
    }
    // Password as sent, untrimmed, as 2.4.2 hashes it.
    let valid = user.as_ref().is_some_and(|u| bool::from(md5_hex(&password).as_bytes().ct_eq(u.password.as_bytes())));
    let Some(user) = user.filter(|_| valid) else {
        throttle.record_failure(account, address, now);
        let reason = if account.is_some() { "wrong password" } else { "no such user" };
        state.audit.sign_in(&username, account, METHOD_PASSWORD, address, Some(reason));
        return Err(ConsoleError::msg(i18n.get("login_param_unvalid"))).or_json(&state);
    };
    throttle.record_success(user.id, address);
    let remember = params.string("ifRemember").as_deref() == Some("on");
    session::begin(&session, &state.console.secret, &user, remember, now).await.or_json(&state)?;
    state.audit.sign_in(&user.username, Some(user.id), METHOD_PASSWORD, address, None);
    Ok(Json(ReturnT::success()))
}

async fn logout(State(state): State<AppState>, ClientAddr(address): ClientAddr, session: Session) -> Result<Json<ReturnT<()>>, JsonError> {
    let user = current_user(&state, &session).await.or_json(&state)?;
    session::end(&session, &state.console.ended, &state.db, state.clock.now_ms()).await.or_json(&state)?;
    if let Some(user) = user {
        let user = LoginUser(user, Origin { address: Some(address), token_id: None });
        state.audit.record(Event::by(&user, "signout", None));
    }
    Ok(Json(ReturnT::success()))
}

/// Behind a TLS-terminating proxy the request itself is plain HTTP; the proxy says so. Only ever adds
/// `Secure` to our own cookie, so a forged header harms nobody but its sender.
pub fn is_https(headers: &HeaderMap) -> bool {
    headers.get("x-forwarded-proto").and_then(|v| v.to_str().ok()).is_some_and(|p| p.eq_ignore_ascii_case("https"))
}
