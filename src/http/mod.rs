//! The HTTP surface: the executor API and operations endpoints, all under the context path (the executor API
//! also at the root, for 3.x executors).

mod api;
pub mod client;
pub mod console;
mod health;
mod prometheus;
pub mod openapi;

use crate::app::AppState;
use axum::extract::Request;
use axum::response::Redirect;
use axum::routing::get;
use axum::Router;
use tower::util::MapRequestLayer;
use tower::Layer;

/// The complete application router, nested under `server.servlet.context-path`.
pub fn router(state: AppState) -> Router {
    let management = state.config.server.management_context_path.clone();
    // axum cannot nest at the root: an empty management path means the health routes sit at the top.
    let actuator = if state.config.server.prometheus { health::routes().merge(prometheus::routes()) } else { health::routes() };
    let health = if management.is_empty() { actuator } else { Router::new().nest(&management, actuator) };
    let inner = Router::new()
        .merge(api::routes())
        .merge(health)
        .merge(console::routes(state.clone()))
        .merge(openapi::routes())
        .with_state(state.clone());
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
        let root = if api_context {
            root
        } else {
            root.merge(api::routes().with_state(state.clone()))
        };
        root.fallback_service(MapRequestLayer::new(rewrite).layer(nested))
    }
}
