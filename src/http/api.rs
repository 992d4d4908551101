//! Executor → admin API (2.4.2: JobApiController): `/api/registry`, `/api/registryRemove`, `/api/callback`.
//!
//! Every outcome is HTTP 200 with a ReturnT body, in the order of checks the Java admin applies:
//! method, token, URI, then the body. The body is read only after the token check, and never beyond
//! [`MAX_BODY`].

use crate::domain::{is_blank, HandleCallbackParam, RegistryParam, ReturnT};
use crate::http::client::ClientAddr;
use crate::http::state::AppState;
use crate::metrics::IgnoredCallback;
use crate::scheduler::complete::CallbackOutcome;
use crate::storage::RegistryKey;
use crate::workers::registry::RegistryOp;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::{Json, Router};
use serde::de::DeserializeOwned;
use std::net::IpAddr;
use subtle::ConstantTimeEq;

/// Real callback batches are far smaller; Java executors cap one message at 50,000 characters.
pub const MAX_BODY: usize = 1024 * 1024;

const TOKEN_HEADER: &str = "XXL-JOB-ACCESS-TOKEN";
/// Sent by some older and third-party executors.
const LEGACY_TOKEN_HEADER: &str = "XXL-RPC-ACCESS-TOKEN";

pub fn routes() -> Router<AppState> {
    // Spring MVC also matches one trailing slash.
    Router::new().route("/api/{uri}", any(api)).route("/api/{uri}/", any(api))
}

async fn api(
    State(state): State<AppState>,
    Path(uri): Path<String>,
    ClientAddr(client): ClientAddr,
    method: Method,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let request = Request { uri: &uri, method: &method, headers: &headers, client };
    match handle(&state, request, body).await {
        Ok(reply) => Json(reply).into_response(),
        // The client may still be sending a body we will not read: the connection cannot be reused.
        Err(Unread(reply)) => ([(header::CONNECTION, "close")], Json(reply)).into_response(),
    }
}

/// A reply given without reading the request body to its end.
struct Unread(ReturnT<String>);

/// What the checks read of a request, its body aside.
struct Request<'a> {
    uri: &'a str,
    method: &'a Method,
    headers: &'a HeaderMap,
    /// The client's address, by `server.forward-headers-strategy` as everywhere else.
    client: IpAddr,
}

async fn handle(state: &AppState, request: Request<'_>, body: Body) -> Result<ReturnT<String>, Unread> {
    let Request { uri, method, headers, client } = request;
    if method != Method::POST {
        return Err(Unread(ReturnT::fail("invalid request, HttpMethod not support.")));
    }
    if uri.trim().is_empty() {
        return Err(Unread(ReturnT::fail("invalid request, uri-mapping empty.")));
    }
    if !token_accepted(state.config.access_token.expose(), headers) {
        return Err(Unread(ReturnT::fail("The access token is wrong.")));
    }
    if !matches!(uri, "callback" | "registry" | "registryRemove") {
        return Err(Unread(ReturnT::fail(format!("invalid request, uri-mapping({uri}) not found."))));
    }
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY).await else {
        return Err(Unread(ReturnT::fail(format!(
            "invalid request, body larger than {MAX_BODY} bytes or unreadable."
        ))));
    };
    Ok(match uri {
        "callback" => callback(state, &body).await,
        "registry" => registry(state, &body, RegistryOp::Register, client).await,
        _ => registry(state, &body, RegistryOp::Remove, client).await,
    })
}

/// A blank configured token disables the check; otherwise the header must match exactly.
fn token_accepted(configured: &str, headers: &HeaderMap) -> bool {
    if configured.trim().is_empty() {
        return true;
    }
    [TOKEN_HEADER, LEGACY_TOKEN_HEADER].iter().any(|name| {
        headers.get(*name).is_some_and(|sent| bool::from(sent.as_bytes().ct_eq(configured.as_bytes())))
    })
}

/// Parses a JSON body; an empty body reads as JSON `null`.
fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<Option<T>, String> {
    let text = std::str::from_utf8(body).map_err(|_| "invalid request, body is not UTF-8.".to_string())?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    serde_json::from_str::<Option<T>>(text).map_err(|e| format!("invalid request, malformed JSON body: {e}"))
}

async fn registry(
    state: &AppState,
    body: &[u8],
    op: fn(RegistryKey) -> RegistryOp,
    client: IpAddr,
) -> ReturnT<String> {
    let param = match parse::<RegistryParam>(body) {
        Ok(Some(param)) => param,
        Ok(None) => return ReturnT::fail("Illegal Argument."),
        Err(msg) => return ReturnT::fail(msg),
    };
    let RegistryParam { registry_group, registry_key, registry_value } = param;
    let (Some(group), Some(key), Some(value)) = (registry_group, registry_key, registry_value) else {
        return ReturnT::fail("Illegal Argument.");
    };
    if [&group, &key, &value].iter().any(|v| is_blank(Some(v.as_str()))) {
        return ReturnT::fail("Illegal Argument.");
    }
    // MySQL refuses (or, outside strict mode, silently cuts) longer values.
    for (name, text, max) in
        [("registryGroup", &group, 50), ("registryKey", &key, 255), ("registryValue", &value, 255)]
    {
        if text.chars().count() > max {
            return ReturnT::fail(format!("Illegal Argument: {name} is longer than {max} characters."));
        }
    }
    let key = RegistryKey { registry_group: group, registry_key: key, registry_value: value };
    let op = op(key);
    if let RegistryOp::Register(key) = &op {
        if let Err(refusal) = state.registry.admit(client, key).await {
            return ReturnT::fail(refusal.to_string());
        }
    }
    match state.registry.push(op).await {
        Ok(()) => ReturnT::success(),
        Err(full) => ReturnT::fail(full.to_string()),
    }
}

async fn callback(state: &AppState, body: &[u8]) -> ReturnT<String> {
    let items = match parse::<Vec<HandleCallbackParam>>(body) {
        Ok(items) => items.unwrap_or_default(),
        Err(msg) => return ReturnT::fail(msg),
    };
    state.metrics.callbacks_received(items.len());
    match state.services.completer.callback(&items).await {
        Ok(outcomes) => {
            for (item, outcome) in items.iter().zip(outcomes) {
                match outcome {
                    CallbackOutcome::Finished => state.metrics.job_result(item.handle_code),
                    CallbackOutcome::UnknownLog => {
                        state.metrics.callback_ignored(IgnoredCallback::UnknownLog)
                    }
                    CallbackOutcome::AlreadyFinished => {
                        state.metrics.callback_ignored(IgnoredCallback::AlreadyFinished)
                    }
                }
            }
            ReturnT::success()
        }
        Err(e) => {
            // Not acknowledged: the executor keeps the batch and sends it again.
            tracing::error!("callback batch of {} item(s) not applied: {e}", items.len());
            ReturnT::fail("callback not applied: the database is unavailable; please retry.")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn token_check_is_exact_and_blank_disables_it() {
        let mut headers = HeaderMap::new();
        assert!(token_accepted("", &headers));
        assert!(token_accepted("  ", &headers));
        assert!(!token_accepted("T", &headers));
        headers.insert(TOKEN_HEADER, HeaderValue::from_static("T "));
        assert!(!token_accepted("T", &headers), "untrimmed comparison");
        headers.insert(TOKEN_HEADER, HeaderValue::from_static("T"));
        assert!(token_accepted("T", &headers));
        let mut legacy = HeaderMap::new();
        legacy.insert(LEGACY_TOKEN_HEADER, HeaderValue::from_static("T"));
        assert!(token_accepted("T", &legacy));
    }

    #[test]
    fn empty_and_null_bodies_read_as_absent() {
        assert_eq!(parse::<RegistryParam>(b"").unwrap(), None);
        assert_eq!(parse::<RegistryParam>(b" null ").unwrap(), None);
        assert!(parse::<RegistryParam>(b"{").unwrap_err().contains("malformed JSON"));
        assert!(parse::<Vec<HandleCallbackParam>>(b"{}").is_err());
    }
}
