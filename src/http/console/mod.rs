//! The web console (docs/console.md#the-console): the same URLs, parameters and JSON as 2.4.2, behind a
//! login gate, with every job-group permission check applied and cross-site requests refused.

mod alarms;
mod audit;
mod auth;
mod code;
pub mod error;
mod job_graph;
mod jobgroup;
mod jobinfo;
mod joblog;
mod oidc;
pub mod origin;
mod pages;
pub mod params;
mod render;
mod return_to;
pub mod secret;
pub mod session;
mod sign_in;
pub mod state;
pub mod throttle;
mod users;
pub mod views;
mod workflow_runs;
mod workflows;

use crate::http::state::AppState;
use crate::storage::JobUser;
use axum::extract::{FromRequestParts, Request, State};
use axum::handler::Handler;
use axum::http::header::{COOKIE, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{on, post, MethodFilter, MethodRouter};
use axum::{Extension, Router};
use error::ConsoleError;
use origin::Sender;
use session::{Binding, COOKIE_NAME};
use std::sync::Arc;
use tower_sessions::Session;

use crate::http::client::request_address;
use crate::service::audit::Target;
/// The user of a gated request; the console and the REST API share its rights.
pub use crate::service::LoginUser;
use crate::service::Origin;
use crate::service::ServiceContext;
use state::ConsoleState;

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
        .merge(code::routes())
        .merge(joblog::routes())
        .merge(users::any_user_routes())
        .merge(pages::gated_data_routes())
        .merge(workflows::routes())
        .merge(workflow_runs::routes().merge(job_graph::routes()))
        .merge(
            Router::new()
                .merge(jobgroup::routes())
                .merge(users::admin_routes())
                .merge(alarms::admin_routes())
                .merge(audit::admin_routes())
                .route_layer(axum::middleware::from_fn_with_state(state.clone(), admin_only)),
        )
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), gate))
        .route_layer(axum::middleware::from_fn(same_origin_only));
    let pages = pages::gated_routes()
        .merge(workflows::page_routes())
        .merge(workflow_runs::page_routes().merge(job_graph::page_routes()))
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), gate))
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), return_to::remember_page));
    Router::new()
        .merge(auth::routes())
        .merge(oidc::routes())
        .merge(pages::public_routes())
        .merge(data)
        .merge(pages)
        .route("/static/{*path}", axum::routing::get(render::static_file))
        .layer(axum::middleware::map_response_with_state(
            state.config.server.context_path.clone(),
            error::fill_context_path,
        ))
        .layer(state.console.secret.layer())
        // The origin checks run inside the method routers, which have no state of their own.
        .layer(Extension(state.console.clone()))
        .layer(axum::middleware::from_fn(harden))
}

/// Routes that answer with a trailing slash too, as 2.4.2's Spring MVC does.
pub fn slash_tolerant<'p>(
    routes: impl IntoIterator<Item = (&'p str, MethodRouter<AppState>)>,
) -> Router<AppState> {
    routes.into_iter().fold(Router::new(), |router, (path, handler)| {
        router.route(path, handler.clone()).route(&format!("{path}/"), handler)
    })
}

/// An endpoint that changes state and that 2.4.2 also serves to GET (its controllers take any method), as
/// front ends use it (`xxl-job-vue3` kills a run with `GET /joblog/logKill?id=…`). POST from anyone but
/// another origin's page; GET only when the browser marks it as the console's own (see
/// [`guard_state_change`]); other methods are answered 405 with the console's JSON.
pub fn changes_state<H, T>(handler: H) -> MethodRouter<AppState>
where
    H: Handler<T, AppState>,
    T: 'static,
{
    on(MethodFilter::GET.or(MethodFilter::POST), handler)
        .route_layer(axum::middleware::from_fn(guard_state_change))
        .fallback(method_refused::<true>)
}

/// An endpoint that changes state over POST only: `/login` and `/logout` (POST only in 2.4.2 too) and
/// the endpoints 2.4.2 does not have.
pub fn changes_state_post_only<H, T>(handler: H) -> MethodRouter<AppState>
where
    H: Handler<T, AppState>,
    T: 'static,
{
    post(handler).route_layer(axum::middleware::from_fn(guard_state_change)).fallback(method_refused::<false>)
}

/// The CSRF rules of a state change (docs/security.md#security; 2.4.2 has none, and a link or an
/// `<img src=".../jobinfo/remove?id=1">` on any page acted with the visitor's cookie):
/// - another origin's page (another site, or a sibling: another port or subdomain of this host, where
///   `SameSite=Lax` cookies still go) is refused, whatever the method;
/// - the console's own pages pass, POST or GET;
/// - a request with no browser marker passes as POST (scripts) but not as GET: an `<img>` of another
///   site sends `Sec-Fetch-Site: cross-site` in a current browser and nothing at all in an old one.
async fn guard_state_change(
    Extension(console): Extension<Arc<ConsoleState>>,
    request: Request,
    next: Next,
) -> Response {
    let method = request.method().clone();
    if method != Method::GET && method != Method::POST {
        // HEAD, which the GET route also takes.
        return method_refused::<true>(Extension(console), request.uri().clone()).await;
    }
    match console.origins.sender(request.headers()) {
        Sender::Own => next.run(request).await,
        Sender::Unmarked if method == Method::POST => next.run(request).await,
        Sender::Unmarked => {
            ConsoleError::Refused(console.i18n.format("system_get_needs_console", &[&request.uri().path()]))
                .into_response()
        }
        Sender::Foreign(evidence) => refuse_foreign(&console, request.uri(), evidence),
    }
}

/// Refuses reads by another origin's pages too: a page that cannot read the answer may still trigger
/// what a read does (a rolling log fetched from an executor).
async fn same_origin_only(
    Extension(console): Extension<Arc<ConsoleState>>,
    request: Request,
    next: Next,
) -> Response {
    match console.origins.sender(request.headers()) {
        Sender::Foreign(evidence) => refuse_foreign(&console, request.uri(), evidence),
        Sender::Own | Sender::Unmarked => next.run(request).await,
    }
}

/// 403 with what to configure, in the console's language; the log says what was compared.
fn refuse_foreign(console: &ConsoleState, uri: &Uri, evidence: origin::Evidence) -> Response {
    tracing::warn!(
        path = uri.path(),
        origin = evidence.origin.as_deref().unwrap_or("(none)"),
        sec_fetch_site = evidence.fetch_site.as_deref().unwrap_or("(none)"),
        addressed = ?evidence.addressed,
        trusted = ?console.origins.trusted(),
        "refused a console request from another origin's page; if that origin is the console's own, set \
         xxl.job.console.trusted-origins or have the proxy pass the public host"
    );
    ConsoleError::Refused(console.i18n.format("system_cross_site_refused", &[&evidence.sender()]))
        .into_response()
}

/// 405 for a method the endpoint never takes, with `Allow` and the console's JSON.
async fn method_refused<const GET: bool>(
    Extension(console): Extension<Arc<ConsoleState>>,
    uri: Uri,
) -> Response {
    let (allow, key) =
        if GET { ("GET, POST", "system_get_needs_console") } else { ("POST", "system_post_only") };
    ConsoleError::MethodRefused { allow, message: console.i18n.format(key, &[&uri.path()]) }.into_response()
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

/// The login gate (2.4.2: PermissionInterceptor): a valid session of a user that still exists with the same
/// password, or a redirect to the login page.
async fn gate(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let session = request.extensions().get::<Session>().cloned();
    let user = match session {
        Some(session) => current_user(&state, &session).await,
        None => Ok(None),
    };
    match user {
        Ok(Some(user)) => {
            let address =
                request_address(state.config.server.forward_headers, request.extensions(), request.headers());
            request.extensions_mut().insert(LoginUser(user, Origin { address, token_id: None }));
            next.run(request).await
        }
        Ok(None) => ConsoleError::LoginRequired.into_response(),
        Err(error) => error.into_response(),
    }
}

/// The logged-in user of a session, if any.
pub async fn current_user(state: &AppState, session: &Session) -> Result<Option<JobUser>, ConsoleError> {
    let console = &state.console;
    let Some(login) =
        session::login_of(session, &console.ended, &state.services.db, state.services.clock.now_ms()).await?
    else {
        return Ok(None);
    };
    let Some(user) = state.services.db.load_user(login.uid).await? else { return Ok(None) };
    Ok(console.secret.binding_matches(&login.binding, &user, Binding::Password).then_some(user))
}

async fn admin_only(State(services): State<ServiceContext>, request: Request, next: Next) -> Response {
    match request.extensions().get::<LoginUser>() {
        Some(user) if user.is_admin() => next.run(request).await,
        user => {
            let message = services.i18n.get("system_permission_limit");
            if let Some(user) = user {
                refused(&services, user, request.uri().path(), message);
            }
            ConsoleError::msg(message).into_response()
        }
    }
}

/// A console request refused for lack of permission, as an audit event naming its path.
pub fn refused(services: &ServiceContext, user: &LoginUser, path: &str, message: &str) {
    services.audit.refused(user, Target::named("endpoint", path), message);
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
pub type JsonResult<T> = Result<axum::Json<crate::domain::ReturnT<T>>, ConsoleError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_login_cookie_is_marked_secure() {
        let mut h = HeaderMap::new();
        h.append(SET_COOKIE, HeaderValue::from_static("XXL_JOB_LOGIN_IDENTITY=abc; HttpOnly; Path=/"));
        h.append(SET_COOKIE, HeaderValue::from_static("other=1; Path=/"));
        h.append(SET_COOKIE, HeaderValue::from_static("XXL_JOB_LOGIN_IDENTITY=; Path=/; Secure"));
        mark_secure(&mut h);
        let cookies: Vec<&str> = h.get_all(SET_COOKIE).iter().map(|v| v.to_str().unwrap()).collect();
        assert_eq!(
            cookies,
            [
                "XXL_JOB_LOGIN_IDENTITY=abc; HttpOnly; Path=/; Secure",
                "other=1; Path=/",
                "XXL_JOB_LOGIN_IDENTITY=; Path=/; Secure"
            ]
        );
    }

    #[test]
    fn cookies_are_found_among_several() {
        let mut h = HeaderMap::new();
        h.append(COOKIE, HeaderValue::from_static("a=1; xxljob_adminlte_settings=off"));
        assert_eq!(cookie(&h, "xxljob_adminlte_settings").as_deref(), Some("off"));
        assert_eq!(cookie(&h, "b"), None);
    }
}
