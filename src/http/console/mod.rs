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
pub mod secret;
pub mod session;
pub mod throttle;
mod users;
pub mod views;

use crate::app::AppState;
use crate::storage::JobUser;
use axum::extract::{FromRequestParts, Request, State};
use axum::handler::Handler;
use axum::http::header::{COOKIE, HOST, ORIGIN, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{post, MethodRouter};
use axum::Router;
use error::{ConsoleError, JsonError};
use session::{Binding, EndedSessions, SessionSecret, COOKIE_NAME};
use throttle::LoginThrottle;
use tower_sessions::Session;

/// The user of a gated request; the console and the REST API share its rights.
pub use crate::service::LoginUser;

/// Console-only state shared by every instance of the handlers.
pub struct ConsoleState {
    pub secret: SessionSecret,
    pub throttle: LoginThrottle,
    pub ended: EndedSessions,
}

impl ConsoleState {
    pub fn new(secret: SessionSecret) -> ConsoleState {
        ConsoleState { secret, throttle: LoginThrottle::default(), ended: EndedSessions::default() }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for LoginUser {
    type Rejection = ConsoleError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        parts.extensions.get::<LoginUser>().cloned().ok_or(ConsoleError::LoginRequired)
    }
}

/// The console routes: public ones, gated data endpoints, and admin-only ones; all of them with
/// sessions and the hardening headers.
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
        .layer(state.console.secret.layer())
        .layer(axum::middleware::from_fn(harden))
}

/// An endpoint that changes state (spec console 0.2 lets every endpoint take any method; that made
/// `<img src=".../jobinfo/remove?id=1">` a CSRF): POST only, anything else answered 405 with
/// `Allow: POST`, and refused when a browser says it comes from another site or a sibling site (another
/// port or subdomain of the same host, where `SameSite=Lax` cookies still go).
pub fn changes_state<H, T>(handler: H) -> MethodRouter<AppState>
where
    H: Handler<T, AppState>,
    T: 'static,
{
    post(handler).route_layer(axum::middleware::from_fn(same_site_refused))
}

async fn same_site_refused(request: Request, next: Next) -> Response {
    if is_cross_site(request.headers()) || fetch_site(request.headers()) == Some("same-site") {
        return ConsoleError::CrossSite.into_response();
    }
    next.run(request).await
}

/// Headers every console response carries: no framing by other origins (clickjacking), no content
/// sniffing, no console URLs (with their ids) leaked to other sites. Behind https the login cookie is
/// marked `Secure`.
async fn harden(request: Request, next: Next) -> Response {
    let https = auth::is_https(request.headers());
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    for (name, value) in [
        ("x-frame-options", "SAMEORIGIN"),
        ("content-security-policy", "frame-ancestors 'self'"),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "same-origin"),
    ] {
        headers.insert(HeaderName::from_static(name), HeaderValue::from_static(value));
    }
    if https {
        mark_secure(headers);
    }
    response
}

fn mark_secure(headers: &mut HeaderMap) {
    let cookies: Vec<HeaderValue> = headers.get_all(SET_COOKIE).iter().cloned().collect();
    headers.remove(SET_COOKIE);
    for cookie in cookies {
        let text = cookie.to_str().unwrap_or_default();
        let secured = (text.starts_with(&format!("{COOKIE_NAME}=")) && !text.contains("; Secure"))
            .then(|| HeaderValue::from_str(&format!("{text}; Secure")).ok())
            .flatten();
        headers.append(SET_COOKIE, secured.unwrap_or(cookie));
    }
}

/// The login gate (spec console 0.3): a valid session of a user that still exists with the same
/// password, or a redirect to the login page.
async fn gate(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let session = request.extensions().get::<Session>().cloned();
    let user = match session {
        Some(session) => current_user(&state, &session).await,
        None => Ok(None),
    };
    match user {
        Ok(Some(user)) => {
            request.extensions_mut().insert(LoginUser(user));
            next.run(request).await
        }
        Ok(None) => JsonError { error: ConsoleError::LoginRequired, context_path: state.config.server.context_path.clone() }.into_response(),
        Err(error) => JsonError { error, context_path: state.config.server.context_path.clone() }.into_response(),
    }
}

/// The logged-in user of a session, if any.
pub async fn current_user(state: &AppState, session: &Session) -> Result<Option<JobUser>, ConsoleError> {
    let console = &state.console;
    let Some(login) = session::login_of(session, &console.ended, state.clock.now_ms()).await? else { return Ok(None) };
    let Some(user) = state.db.load_user(login.uid).await? else { return Ok(None) };
    Ok(console.secret.binding_matches(&login.binding, &user, Binding::Password).then_some(user))
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

/// Refuses requests made by another site's pages (CSRF): a foreign `Origin`, or a browser's
/// `Sec-Fetch-Site: cross-site`. Scripts send neither and keep working.
async fn same_origin_only(request: Request, next: Next) -> Response {
    if is_cross_site(request.headers()) {
        return ConsoleError::CrossSite.into_response();
    }
    next.run(request).await
}

fn fetch_site(headers: &HeaderMap) -> Option<&str> {
    headers.get("sec-fetch-site").and_then(|v| v.to_str().ok())
}

pub fn is_cross_site(headers: &HeaderMap) -> bool {
    if fetch_site(headers) == Some("cross-site") {
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
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
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
    fn only_the_login_cookie_is_marked_secure() {
        let mut h = HeaderMap::new();
        h.append(SET_COOKIE, HeaderValue::from_static("XXL_JOB_LOGIN_IDENTITY=abc; HttpOnly; Path=/"));
        h.append(SET_COOKIE, HeaderValue::from_static("other=1; Path=/"));
        h.append(SET_COOKIE, HeaderValue::from_static("XXL_JOB_LOGIN_IDENTITY=; Path=/; Secure"));
        mark_secure(&mut h);
        let cookies: Vec<&str> = h.get_all(SET_COOKIE).iter().map(|v| v.to_str().unwrap()).collect();
        assert_eq!(cookies, ["XXL_JOB_LOGIN_IDENTITY=abc; HttpOnly; Path=/; Secure", "other=1; Path=/", "XXL_JOB_LOGIN_IDENTITY=; Path=/; Secure"]);
    }

    #[test]
    fn cookies_are_found_among_several() {
        let mut h = HeaderMap::new();
        h.append(COOKIE, HeaderValue::from_static("a=1; xxljob_adminlte_settings=off"));
        assert_eq!(cookie(&h, "xxljob_adminlte_settings").as_deref(), Some("off"));
        assert_eq!(cookie(&h, "b"), None);
    }
}
