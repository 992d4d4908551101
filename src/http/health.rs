//! `{context}/actuator/health`, as Spring Boot's actuator answers it (no details).

use crate::http::state::AppState;
use crate::service::ServiceContext;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};
use std::time::Duration;

pub fn routes() -> Router<AppState> {
    Router::new().route("/health", get(health)).route("/health/", get(health))
}

/// The health check's own bound: a probe must answer "down" quickly, not after the pool's connection
/// timeout (10 s by default), or a short outage reads as a slow "up".
const PING_TIMEOUT: Duration = Duration::from_millis(1500);

async fn health(State(services): State<ServiceContext>) -> (StatusCode, Json<Value>) {
    let reason = match tokio::time::timeout(PING_TIMEOUT, services.db.ping()).await {
        Ok(Ok(())) => return (StatusCode::OK, Json(json!({"status": "UP"}))),
        Ok(Err(e)) => e.to_string(),
        Err(_) => format!("no answer within {} ms", PING_TIMEOUT.as_millis()),
    };
    tracing::warn!("health check: database unreachable: {reason}");
    (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"status": "DOWN"})))
}
