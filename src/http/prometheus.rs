//! `{context}/actuator/prometheus`: the metrics in Prometheus's text format, where Spring Boot's actuator
//! serves them. Like health, it needs no login: scrapers do not log in, and it shows counts, not data.

use crate::http::state::AppState;
use crate::metrics::Snapshot;
use crate::workers::registry::{group_addresses, DEAD_TIMEOUT_SECS};
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

pub fn routes() -> Router<AppState> {
    Router::new().route("/prometheus", get(scrape)).route("/prometheus/", get(scrape))
}

async fn scrape(State(state): State<AppState>) -> impl IntoResponse {
    let (pool_in_use, pool_idle, pool_max) = state.db.pool_stats();
    let executors = match state.db.live_registrations(DEAD_TIMEOUT_SECS, state.clock.now_ms()).await {
        Ok(rows) => group_addresses(rows).into_iter().map(|(app_name, addresses)| (app_name, addresses.len())).collect(),
        Err(e) => {
            // The rest is still worth scraping; a gap in this series shows the outage.
            tracing::warn!("metrics: cannot read the executor registry: {e}");
            Vec::new()
        }
    };
    let snapshot = Snapshot { lane_backlog: state.triggers.backlog(), pool_in_use, pool_idle, pool_max, executors };
    ([(CONTENT_TYPE, TEXT_FORMAT)], state.metrics.render(&snapshot))
}
