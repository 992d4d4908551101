//! `/auth/oidc/login` and `/auth/oidc/callback`: the browser's side of an OpenID Connect sign-in (see
//! [`crate::service::oidc`]).
//!
//! Between the two requests the sign-in's state, nonce and PKCE verifier travel in a cookie of their
//! own, encrypted and authenticated (AES-256-GCM) with a key derived from the session secret, valid
//! for ten minutes and sent only to the callback: any admin on the database can complete a sign-in
//! another one started, and no admin keeps anything in memory for it.

use super::auth::is_https;
use super::cookie;
use super::params::Params;
use super::return_to;
use super::session::SessionSecret;
use super::sign_in;
use crate::http::client::ClientAddr;
use crate::http::state::AppState;
use crate::service::audit::METHOD_OIDC;
use crate::service::oidc::{OidcError, Pending};
use crate::storage::JobUser;
use axum::extract::State;
use axum::http::header::{HOST, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use serde::{Deserialize, Serialize};
use tower_sessions::cookie::time::Duration as CookieDuration;
use tower_sessions::cookie::{Cookie, CookieJar, Key, SameSite};
use tower_sessions::Session;

pub const TRANSACTION_COOKIE: &str = "XXL_JOB_OIDC";
/// How long a sign-in may stay at the provider: time to type a password and a second factor.
const TRANSACTION_MS: i64 = 10 * 60 * 1000;
const PREFIX: &str = "/auth/oidc";
pub const START_PATH: &str = "/auth/oidc/login";
pub const CALLBACK_PATH: &str = "/auth/oidc/callback";
/// The login page's parameter saying that a sign-in at the provider failed.
pub const FAILED_PARAM: &str = "oidcFailed";

pub fn routes() -> Router<AppState> {
    Router::new().route(START_PATH, get(start)).route(CALLBACK_PATH, get(callback))
}

/// A sign-in in progress, as its cookie carries it.
#[derive(Debug, Serialize, Deserialize)]
struct Transaction {
    pending: Pending,
    /// The console page to show afterwards (checked by `return_to` when the sign-in began).
    return_to: String,
    started_ms: i64,
}

fn key(secret: &SessionSecret) -> Key {
    let mut key = [0u8; 64];
    key[..32].copy_from_slice(&secret.derive("oidc-transaction-signing"));
    key[32..].copy_from_slice(&secret.derive("oidc-transaction-encryption"));
    Key::from(&key)
}

fn seal(secret: &SessionSecret, transaction: &Transaction) -> String {
    let mut jar = CookieJar::new();
    jar.private_mut(&key(secret))
        .add(Cookie::new(TRANSACTION_COOKIE, serde_json::to_string(transaction).unwrap_or_default()));
    jar.get(TRANSACTION_COOKIE).map(|c| c.value().to_string()).unwrap_or_default()
}

/// The transaction in a cookie value, if this database's secret sealed it.
fn open(secret: &SessionSecret, value: &str) -> Option<Transaction> {
    let mut jar = CookieJar::new();
    jar.add_original(Cookie::new(TRANSACTION_COOKIE, value.to_string()));
    let cookie = jar.private(&key(secret)).get(TRANSACTION_COOKIE)?;
    serde_json::from_str(cookie.value()).ok()
}

/// The `Set-Cookie` of the transaction cookie; an empty `value` deletes it.
fn transaction_cookie(state: &AppState, headers: &HeaderMap, value: String) -> Option<HeaderValue> {
    let max_age =
        if value.is_empty() { CookieDuration::ZERO } else { CookieDuration::milliseconds(TRANSACTION_MS) };
    let cookie = Cookie::build((TRANSACTION_COOKIE, value))
        .path(format!("{}{PREFIX}", state.config.server.context_path))
        .http_only(true)
        // Lax: the provider sends the browser back with a top-level GET, which Lax cookies go along with.
        .same_site(SameSite::Lax)
        .secure(is_https(headers))
        .max_age(max_age)
        .build();
    HeaderValue::from_str(&cookie.to_string()).ok()
}

/// The callback URL: as configured (behind a load balancer, its public address), else this request's
/// scheme and host.
fn redirect_uri(state: &AppState, headers: &HeaderMap, configured: Option<&String>) -> String {
    if let Some(uri) = configured {
        return uri.clone();
    }
    let scheme = if is_https(headers) { "https" } else { "http" };
    let host = headers.get(HOST).and_then(|h| h.to_str().ok()).unwrap_or("localhost");
    format!("{scheme}://{host}{}{CALLBACK_PATH}", state.config.server.context_path)
}

fn to_login_failed(state: &AppState) -> Response {
    Redirect::to(&format!("{}/toLogin?{FAILED_PARAM}=1", state.config.server.context_path)).into_response()
}

/// Sends the browser to the provider, with the transaction cookie.
async fn start(State(state): State<AppState>, headers: HeaderMap, params: Params) -> Response {
    let Some(oidc) = &state.console.oidc else { return StatusCode::NOT_FOUND.into_response() };
    let context = &state.config.server.context_path;
    let return_to = params
        .string(return_to::PARAM)
        .as_deref()
        .and_then(|path| return_to::safe_return_path(context, path))
        .map_or_else(|| format!("{context}/"), str::to_string);
    let redirect_uri = redirect_uri(&state, &headers, oidc.config().redirect_uri.as_ref());
    let (url, pending) = match oidc.begin(&redirect_uri).await {
        Ok(started) => started,
        Err(e) => {
            tracing::warn!("an OpenID Connect sign-in could not start: {e}");
            return to_login_failed(&state);
        }
    };
    let transaction = Transaction { pending, return_to, started_ms: state.services.clock.now_ms() };
    let mut response = Redirect::to(&url).into_response();
    if let Some(cookie) = transaction_cookie(&state, &headers, seal(&state.console.secret, &transaction)) {
        response.headers_mut().append(SET_COOKIE, cookie);
    }
    response
}

/// Where the provider sends the browser back: the session begins, or the login page says it failed.
async fn callback(
    State(state): State<AppState>,
    ClientAddr(address): ClientAddr,
    session: Session,
    headers: HeaderMap,
    params: Params,
) -> Response {
    let outcome = complete(&state, &headers, &params).await;
    let return_to = outcome.as_ref().ok().map(|(_, to)| to.clone());
    let concluded = sign_in::conclude(
        &state,
        &session,
        METHOD_OIDC,
        address,
        outcome.map(|(user, _)| user).map_err(|e| e.to_string()),
    )
    .await;
    let mut response = match (concluded, return_to) {
        (Ok(true), Some(to)) => Redirect::to(&to).into_response(),
        (Err(e), _) => {
            tracing::error!("an OpenID Connect sign-in could not start its session: {e}");
            to_login_failed(&state)
        }
        _ => to_login_failed(&state),
    };
    // Used once, whatever the outcome.
    if let Some(cookie) = transaction_cookie(&state, &headers, String::new()) {
        response.headers_mut().append(SET_COOKIE, cookie);
    }
    response
}

/// The user of a callback, and the page to show them.
async fn complete(
    state: &AppState,
    headers: &HeaderMap,
    params: &Params,
) -> Result<(JobUser, String), OidcError> {
    let oidc = state
        .console
        .oidc
        .as_ref()
        .ok_or_else(|| OidcError::Refused("OpenID Connect is not configured".into()))?;
    let now = state.services.clock.now_ms();
    let transaction = cookie(headers, TRANSACTION_COOKIE)
        .and_then(|value| open(&state.console.secret, &value))
        .filter(|t| now - t.started_ms <= TRANSACTION_MS && t.started_ms - now <= TRANSACTION_MS)
        .ok_or_else(|| {
            OidcError::Refused(
                "no sign-in in progress in this browser (no cookie, or older than ten minutes)".into(),
            )
        })?;
    if let Some(error) = params.string("error") {
        let description = params.string("error_description").unwrap_or_default();
        // Anyone can send these to the callback: kept short and on one line for the log.
        let said: String =
            format!("{error} {description}").chars().filter(|c| !c.is_control()).take(200).collect();
        return Err(OidcError::Denied(said.trim().to_string()));
    }
    let (Some(returned_state), Some(code)) = (params.string("state"), params.string("code")) else {
        return Err(OidcError::Refused("the callback has no state or no code".into()));
    };
    let identity = oidc.finish(&transaction.pending, &returned_state, &code, now).await?;
    let user = oidc.provision(&state.services.db, &identity).await?;
    Ok((user, transaction.return_to))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transaction() -> Transaction {
        let pending = Pending {
            state: "s".into(),
            nonce: "n".into(),
            verifier: "v".into(),
            redirect_uri: "http://a/cb".into(),
        };
        Transaction { pending, return_to: "/x".into(), started_ms: 1 }
    }

    #[test]
    fn transactions_open_only_with_the_secret_that_sealed_them() {
        let secret = SessionSecret::new("one");
        let sealed = seal(&secret, &transaction());
        assert!(!sealed.contains("\"nonce\"") && !sealed.contains("http://a/cb"), "encrypted: {sealed}");
        let opened = open(&secret, &sealed).expect("opens");
        assert_eq!(
            (opened.pending, opened.return_to, opened.started_ms),
            (transaction().pending, "/x".to_string(), 1)
        );
        assert!(open(&SessionSecret::new("two"), &sealed).is_none(), "another database's secret");
        let mut tampered = sealed.clone().into_bytes();
        let last = tampered.len() - 2;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        assert!(open(&secret, &String::from_utf8(tampered).unwrap()).is_none(), "tampered");
    }
}
