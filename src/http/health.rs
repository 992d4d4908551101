//! `{context}/actuator/health`, as Spring Boot's actuator answers it (no details).

use crate::app::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

pub fn routes() -> Router<AppState> {
    Router::new().route("/health", get(health)).route("/health/", get(health))
}

async fn health(State(state): State<AppState>) -> (StatusCode, Json<Value>) {
    match state.db.ping().await {
        Ok(()) => (StatusCode::OK, Json(json!({"status": "UP"}))),
        Err(e) => {
            tracing::warn!("health check: database unreachable: {e}");
            (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"status": "DOWN"})))
        }
    }
}
