//! The HTTP surface: the executor API and operations endpoints, all under the context path (the executor API
//! also at the root, for 3.x executors).

mod api;
pub mod client;
pub mod console;
mod dates;
mod health;
pub mod openapi;
mod prometheus;
pub mod state;
mod trace;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
pub use state::AppState;
use std::time::Duration;
use tower::util::MapRequestLayer;
use tower::Layer;

/// Bodies up to this size are read before the handler runs (see [`settle_body`]).
const SETTLED_BODY_MAX: u64 = 64 * 1024;
/// How long a client may take to send such a body.
const SETTLE_WAIT: Duration = Duration::from_secs(10);

/// The complete application router, nested under `server.servlet.context-path`, with every request's body
/// settled (see [`settle_body`]).
pub fn router(state: AppState) -> Router {
    routes(state).layer(axum::middleware::from_fn(settle_body))
}

/// A handler that refuses a request (no session, no token, cross-site) answers without reading its body;
/// hyper then cannot reuse the connection, and a client that sends its body after the headers writes into
/// a closed socket and loses its next request. So a small body is read first, and the connection stays
/// usable whatever the answer; for a larger or unsized body, a refusal says `Connection: close`.
async fn settle_body(request: Request, next: Next) -> Response {
    let length = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let chunked = length.is_none() && request.headers().contains_key(header::TRANSFER_ENCODING);
    let request = match length {
        Some(length) if length > 0 && length <= SETTLED_BODY_MAX => {
            let (parts, body) = request.into_parts();
            match tokio::time::timeout(SETTLE_WAIT, axum::body::to_bytes(body, SETTLED_BODY_MAX as usize))
                .await
            {
                Ok(Ok(bytes)) => Request::from_parts(parts, Body::from(bytes)),
                // Too slow or broken: nothing more can be read from this connection.
                _ => return (StatusCode::REQUEST_TIMEOUT, [(header::CONNECTION, "close")]).into_response(),
            }
        }
        _ => request,
    };
    let mut response = next.run(request).await;
    let large = length.is_some_and(|length| length > SETTLED_BODY_MAX);
    if (large || chunked) && !response.status().is_success() {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

fn routes(state: AppState) -> Router {
    let management = state.config.server.management_context_path.clone();
    // axum cannot nest at the root: an empty management path means the health routes sit at the top.
    let actuator = if state.config.server.prometheus {
        health::routes().merge(prometheus::routes())
    } else {
        health::routes()
    };
    let health = if management.is_empty() { actuator } else { Router::new().nest(&management, actuator) };
    let inner = Router::new()
        .merge(api::routes())
        .merge(health)
        .merge(console::routes(state.clone()))
        .merge(openapi::routes())
        .with_state(state.clone())
        .layer(trace::request_spans());
    let context = state.config.server.context_path.clone();
    if context.is_empty() {
        inner
    } else {
        // axum matches a nested root route at `{context}` only; the console's home is `{context}/`.
        // The rewrite must happen before routing, hence a service around the router.
        let home = format!("{context}/");
        let api_context = context == "/api" || context.starts_with("/api/");
        // The bare host is where people type first: send them to the console.
        let console_home = home.clone();
        let nested = Router::new().nest(&context, inner);
        let rewrite = move |mut request: Request| {
            if request.uri().path() == home {
                let query = request.uri().query().map(|q| format!("?{q}")).unwrap_or_default();
                if let Ok(uri) = format!("{context}{query}").parse() {
                    *request.uri_mut() = uri;
                }
            }
            request
        };
        let root = Router::new().route("/", get(move || async move { Redirect::to(&console_home) }));
        // Executors of 3.4.1 and later default to an admin address without a context path: they post
        // `/api/registry` and `/api/callback` at the root. Same handler, same token check; only a context path
        // that is itself `/api…` keeps the root's `/api/` for the console.
        let root = if api_context { root } else { root.merge(api::routes().with_state(state.clone())) };
        let root = root.layer(trace::request_spans());
        root.fallback_service(MapRequestLayer::new(rewrite).layer(nested))
    }
}
