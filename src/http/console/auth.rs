//! `/login` and `/logout` (spec console 1.2, 2.2, 2.4).

use super::error::{ConsoleError, JsonError};
use super::params::Params;
use super::session::{md5_hex, COOKIE_NAME, REMEMBER_MS};
use super::{cookie, is_cross_site, OrJson};
use crate::app::AppState;
use crate::domain::{is_blank, ReturnT};
use axum::extract::State;
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use subtle::ConstantTimeEq;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/login", post(login))
        .route("/login/", post(login))
        .route("/logout", post(logout))
        .route("/logout/", post(logout))
}

async fn login(State(state): State<AppState>, headers: HeaderMap, params: Params) -> Result<Response, JsonError> {
    if is_cross_site(&headers) {
        return Err(ConsoleError::CrossSite).or_json(&state);
    }
    let i18n = &state.i18n;
    let (username, password) = (params.string("userName"), params.string("password"));
    let (Some(username), Some(password)) = (username, password) else {
        return Err(ConsoleError::msg(i18n.get("login_param_empty"))).or_json(&state);
    };
    if is_blank(Some(&username)) || is_blank(Some(&password)) {
        return Err(ConsoleError::msg(i18n.get("login_param_empty"))).or_json(&state);
    }
    let now = state.clock.now_ms();
    let throttle = &state.console.throttle;
    if throttle.is_blocked(&username, now) {
        tracing::warn!(username, "login refused: too many failed attempts");
        return Err(ConsoleError::msg(format!("{} ({})", i18n.get("login_fail"), i18n.get("system_api_error")))).or_json(&state);
    }
    let user = state.db.load_user_by_name(&username).await.or_json(&state)?;
    // Password as sent, untrimmed, as 2.4.2 hashes it.
    let valid = user.as_ref().is_some_and(|u| bool::from(md5_hex(&password).as_bytes().ct_eq(u.password.as_bytes())));
    let Some(user) = user.filter(|_| valid) else {
        throttle.record_failure(&username, now);
        tracing::info!(username, "failed login");
        return Err(ConsoleError::msg(i18n.get("login_param_unvalid"))).or_json(&state);
    };
    throttle.record_success(&username);
    let remember = params.string("ifRemember").as_deref() == Some("on");
    let token = state.console.keys.issue(&user, remember, now);
    let mut attributes = format!("{COOKIE_NAME}={token}; Path=/; HttpOnly; SameSite=Lax");
    if remember {
        attributes.push_str(&format!("; Max-Age={}", REMEMBER_MS / 1000));
    }
    if is_https(&headers) {
        attributes.push_str("; Secure");
    }
    let mut response = Json(ReturnT::<()>::success()).into_response();
    if let Ok(value) = HeaderValue::from_str(&attributes) {
        response.headers_mut().insert(SET_COOKIE, value);
    }
    Ok(response)
}

async fn logout(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, JsonError> {
    if is_cross_site(&headers) {
        return Err(ConsoleError::CrossSite).or_json(&state);
    }
    let mut response = Json(ReturnT::<()>::success()).into_response();
    if let Some(token) = cookie(&headers, COOKIE_NAME) {
        let now = state.clock.now_ms();
        if let Some(claims) = state.console.keys.verify(&token, now) {
            state.console.revoked.revoke(&token, &claims, now);
        }
        let expired = format!("{COOKIE_NAME}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT");
        if let Ok(value) = HeaderValue::from_str(&expired) {
            response.headers_mut().insert(SET_COOKIE, value);
        }
    }
    Ok(response)
}

/// Behind a TLS-terminating proxy the request itself is plain HTTP; the proxy says so.
pub fn is_https(headers: &HeaderMap) -> bool {
    headers.get("x-forwarded-proto").and_then(|v| v.to_str().ok()).is_some_and(|p| p.eq_ignore_ascii_case("https"))
}
