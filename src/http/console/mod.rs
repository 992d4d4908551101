//! The web console (spec console): the same URLs, parameters and JSON as 2.4.2, behind a login gate,
//! with every job-group permission check applied and cross-site requests refused.

mod auth;
pub mod error;
mod jobgroup;
mod jobinfo;
mod joblog;
mod pages;
pub mod params;
mod render;
mod return_to;
pub mod session;
mod users;
pub mod views;

use crate::app::AppState;
use crate::storage::JobUser;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::header::{COOKIE, HOST, ORIGIN};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use error::{ConsoleError, JsonError};
use session::{LoginThrottle, Revocations, SessionKeys, COOKIE_NAME};

/// The user of a gated request; the console and the REST API share its rights.
pub use crate::service::LoginUser;

/// Console-only state shared by every instance of the handlers.
pub struct ConsoleState {
    pub keys: SessionKeys,
    pub throttle: LoginThrottle,
    pub revoked: Revocations,
}

impl<S: Send + Sync> FromRequestParts<S> for LoginUser {
    type Rejection = ConsoleError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        parts.extensions.get::<LoginUser>().cloned().ok_or(ConsoleError::LoginRequired)
    }
}

/// The console routes: public ones, gated data endpoints, and admin-only ones.
pub fn routes(state: AppState) -> Router<AppState> {
    let data = Router::new()
        .merge(jobinfo::routes())
        .merge(joblog::routes())
        .merge(users::any_user_routes())
        .merge(pages::gated_data_routes())
        .merge(
            Router::new()
                .merge(jobgroup::routes())
                .merge(users::admin_routes())
                .route_layer(axum::middleware::from_fn_with_state(state.clone(), admin_only)),
        )
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), gate))
        .route_layer(axum::middleware::from_fn(same_origin_only));
    let pages = pages::gated_routes()
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), gate))
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), return_to::remember_page));
    Router::new()
        .merge(auth::routes())
        .merge(pages::public_routes())
        .merge(data)
        .merge(pages)
        .route("/static/{*path}", axum::routing::get(render::static_file))
}

/// The login gate (spec console 0.3): a valid session of a user that still exists with the same
/// password, or a redirect to the login page.
async fn gate(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    match current_user(&state, request.headers()).await {
        Ok(Some(user)) => {
            request.extensions_mut().insert(LoginUser(user));
            next.run(request).await
        }
        Ok(None) => JsonError { error: ConsoleError::LoginRequired, context_path: state.config.server.context_path.clone() }.into_response(),
        Err(error) => JsonError { error, context_path: state.config.server.context_path.clone() }.into_response(),
    }
}

/// The logged-in user of a request, if any.
pub async fn current_user(state: &AppState, headers: &axum::http::HeaderMap) -> Result<Option<JobUser>, ConsoleError> {
    let Some(token) = cookie(headers, COOKIE_NAME) else { return Ok(None) };
    let Some(claims) = state.console.keys.verify(&token, state.clock.now_ms()) else { return Ok(None) };
    if state.console.revoked.is_revoked(&token) {
        return Ok(None);
    }
    let Some(user) = state.db.load_user(claims.uid).await? else { return Ok(None) };
    Ok(state.console.keys.matches(&claims, &user).then_some(user))
}

async fn admin_only(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let admin = request.extensions().get::<LoginUser>().is_some_and(LoginUser::is_admin);
    if admin {
        next.run(request).await
    } else {
        let error = ConsoleError::msg(state.i18n.get("system_permission_limit"));
        JsonError { error, context_path: state.config.server.context_path.clone() }.into_response()
    }
}

/// Refuses state-changing requests made by another site's pages (CSRF): a foreign `Origin`, or a
/// browser's `Sec-Fetch-Site: cross-site`. Scripts send neither and keep working.
async fn same_origin_only(request: Request, next: Next) -> Response {
    if is_cross_site(request.headers()) {
        return ConsoleError::CrossSite.into_response();
    }
    next.run(request).await
}

pub fn is_cross_site(headers: &axum::http::HeaderMap) -> bool {
    if headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) == Some("cross-site") {
        return true;
    }
    let Some(origin) = headers.get(ORIGIN).and_then(|v| v.to_str().ok()) else { return false };
    let host = headers.get("x-forwarded-host").or_else(|| headers.get(HOST)).and_then(|v| v.to_str().ok());
    let origin_host = origin.split_once("://").map(|(_, rest)| rest.trim_end_matches('/'));
    match (origin_host, host) {
        (Some(origin_host), Some(host)) => !origin_host.eq_ignore_ascii_case(host),
        // "null" origins (sandboxed frames, file: pages) and missing Host headers are refused.
        _ => true,
    }
}

/// A cookie's value from the `Cookie` headers.
pub fn cookie(headers: &axum::http::HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

/// A JSON endpoint's result: ReturnT on success, mapped failure otherwise.
pub type JsonResult<T> = Result<axum::Json<crate::domain::ReturnT<T>>, JsonError>;

/// Attaches the context path to a failure, for the login redirect.
pub trait OrJson<T> {
    fn or_json(self, state: &AppState) -> Result<T, JsonError>;
}

impl<T, E: Into<ConsoleError>> OrJson<T> for Result<T, E> {
    fn or_json(self, state: &AppState) -> Result<T, JsonError> {
        self.map_err(|e| JsonError { error: e.into(), context_path: state.config.server.context_path.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderMap, HeaderValue};

    #[test]
    fn cross_site_detection() {
        let mut h = HeaderMap::new();
        assert!(!is_cross_site(&h), "scripts send no Origin");
        h.insert(HOST, HeaderValue::from_static("admin.example:8080"));
        h.insert(ORIGIN, HeaderValue::from_static("http://admin.example:8080"));
        assert!(!is_cross_site(&h));
        h.insert(ORIGIN, HeaderValue::from_static("https://evil.example"));
        assert!(is_cross_site(&h));
        h.insert(ORIGIN, HeaderValue::from_static("null"));
        assert!(is_cross_site(&h));
        let mut fetch = HeaderMap::new();
        fetch.insert("sec-fetch-site", HeaderValue::from_static("cross-site"));
        assert!(is_cross_site(&fetch));
    }

    #[test]
    fn cookies_are_found_among_several() {
        let mut h = HeaderMap::new();
        h.append(COOKIE, HeaderValue::from_static("a=1; XXL_JOB_LOGIN_IDENTITY=v1.x.y"));
        assert_eq!(cookie(&h, COOKIE_NAME).as_deref(), Some("v1.x.y"));
        assert_eq!(cookie(&h, "b"), None);
    }
}
