//! A span for each request, named by the route it matched rather than its URI, so that what a handler logs
//! says which endpoint it served and the span's fields stay few (one per route, not one per job id).

use axum::body::Body;
use axum::extract::{MatchedPath, Request};
use tower_http::classify::{ServerErrorsAsFailures, SharedClassifier};
use tower_http::trace::{
    DefaultOnBodyChunk, DefaultOnEos, DefaultOnFailure, DefaultOnRequest, DefaultOnResponse, TraceLayer,
};
use tracing::{Level, Span};

/// The routes load balancers and Prometheus poll every few seconds: their spans are at DEBUG, so a log at
/// INFO is not filled with them.
const POLLED: [&str; 4] = ["/health", "/health/", "/prometheus", "/prometheus/"];

pub type RequestSpans = TraceLayer<
    SharedClassifier<ServerErrorsAsFailures>,
    fn(&Request) -> Span,
    DefaultOnRequest,
    DefaultOnResponse,
    DefaultOnBodyChunk,
    DefaultOnEos,
    DefaultOnFailure,
>;

/// The layer for a router: requests and responses are logged at DEBUG; a failed one (a 5xx answer) too, as
/// the handlers already log at their own level why they failed.
pub fn request_spans() -> RequestSpans {
    TraceLayer::new_for_http()
        .make_span_with(span as fn(&Request<Body>) -> Span)
        .on_failure(DefaultOnFailure::new().level(Level::DEBUG))
}

fn span(request: &Request) -> Span {
    let method = request.method();
    let route =
        request.extensions().get::<MatchedPath>().map_or_else(|| request.uri().path(), MatchedPath::as_str);
    if POLLED.iter().any(|polled| route.ends_with(polled)) {
        tracing::debug_span!("request", %method, route)
    } else {
        tracing::info_span!("request", %method, route)
    }
}

#[cfg(test)]
mod tests {
    use super::span;
    use axum::body::Body;
    use axum::extract::Request;
    use tracing::Level;

    fn level(path: &str) -> Option<Level> {
        let request = Request::builder().uri(path).body(Body::empty()).expect("a request");
        span(&request).metadata().map(|meta| *meta.level())
    }

    #[test]
    fn polled_routes_are_debug_the_others_info() {
        for path in ["/xxl-job-admin/actuator/health", "/actuator/prometheus/", "/health"] {
            assert_eq!(level(path), Some(Level::DEBUG), "{path}");
        }
        for path in ["/xxl-job-admin/api/callback", "/xxl-job-admin/jobinfo/pageList", "/api/registry"] {
            assert_eq!(level(path), Some(Level::INFO), "{path}");
        }
    }
}
