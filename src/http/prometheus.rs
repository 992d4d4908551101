//! `{context}/actuator/prometheus`: the metrics where Spring Boot's actuator serves them, in OpenMetrics
//! for a scraper whose `Accept` names it (Prometheus does), else in the classic text format. Like health,
//! it needs no login: scrapers do not log in, and it shows counts, not data.

use crate::domain::registry::{group_addresses, DEAD_TIMEOUT_SECS};
use crate::http::state::AppState;
use crate::metrics::{Metrics, Snapshot, OPENMETRICS_FORMAT, TEXT_FORMAT};
use crate::service::ServiceContext;
use axum::extract::State;
use axum::http::header::{ACCEPT, CONTENT_TYPE};
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use std::sync::Arc;

pub fn routes() -> Router<AppState> {
    Router::new().route("/prometheus", get(scrape)).route("/prometheus/", get(scrape))
}

async fn scrape(
    State(services): State<ServiceContext>,
    State(metrics): State<Arc<Metrics>>,
    headers: HeaderMap,
) -> impl IntoResponse {
    let (pool_in_use, pool_idle, pool_max) = services.db.pool_stats();
    let executors = match services.db.live_registrations(DEAD_TIMEOUT_SECS, services.clock.now_ms()).await {
        Ok(rows) => group_addresses(rows)
            .into_iter()
            .map(|(app_name, addresses)| (app_name, addresses.len()))
            .collect(),
        Err(e) => {
            // The rest is still worth scraping; a gap in this series shows the outage.
            tracing::warn!("metrics: cannot read the executor registry: {e}");
            Vec::new()
        }
    };
    let workflow_runs = match services.db.active_run_counts().await {
        Ok(counts) => counts,
        Err(e) => {
            tracing::warn!("metrics: cannot count the workflow runs: {e}");
            Vec::new()
        }
    };
    let snapshot = Snapshot {
        lane_backlog: services.triggers.backlog(),
        pool_in_use,
        pool_idle,
        pool_max,
        executors,
        workflow_runs,
    };
    if wants_openmetrics(&headers) {
        ([(CONTENT_TYPE, OPENMETRICS_FORMAT)], metrics.render_openmetrics(&snapshot))
    } else {
        ([(CONTENT_TYPE, TEXT_FORMAT)], metrics.render(&snapshot))
    }
}

/// Whether `Accept` names OpenMetrics with a non-zero weight (Prometheus sends it first, with the text
/// format as a fallback).
fn wants_openmetrics(headers: &HeaderMap) -> bool {
    headers.get_all(ACCEPT).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).any(|range| {
        let mut parts = range.split(';').map(str::trim);
        let openmetrics =
            parts.next().is_some_and(|media| media.eq_ignore_ascii_case("application/openmetrics-text"));
        openmetrics && !parts.any(|p| p.strip_prefix("q=").and_then(|q| q.parse::<f64>().ok()) == Some(0.0))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn openmetrics_when_asked_for() {
        let accept = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(ACCEPT, HeaderValue::from_static(value));
            wants_openmetrics(&headers)
        };
        assert!(accept("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"));
        assert!(!accept("text/plain;version=0.0.4"));
        assert!(!accept("application/openmetrics-text; q=0"));
        assert!(!accept("*/*"));
        assert!(!wants_openmetrics(&HeaderMap::new()));
    }
}
