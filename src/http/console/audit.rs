//! The audit page's data (administrators only): the events of this admin's audit file, newest first,
//! filtered as the page asks. Not in 2.4.2, which keeps no audit trail.

use super::error::ConsoleError;
use super::joblog::parse_filter_time;
use super::params::Params;
use super::views::Page;
use crate::http::state::AppState;
use crate::service::audit::read::{self, Filter};
use crate::service::ServiceContext;
use axum::extract::State;
use axum::routing::any;
use axum::{Json, Router};
use serde_json::Value;

/// The longest page asked for.
const MAX_LENGTH: usize = 500;

pub fn admin_routes() -> Router<AppState> {
    Router::new().route("/audit/pageList", any(page_list)).route("/audit/pageList/", any(page_list))
}

/// A DataTables page. The file is not counted through (it may be gigabytes): the total says whether an
/// older page exists.
async fn page_list(
    State(services): State<ServiceContext>,
    params: Params,
) -> Result<Json<Page<Value>>, ConsoleError> {
    let Some(path) = services.audit.file().map(std::path::Path::to_path_buf) else {
        return Err(ConsoleError::msg(services.i18n.get("audit_no_file")));
    };
    let start: i64 = params.number_or("start", 0)?;
    let length: i64 = params.number_or("length", 10)?;
    let (start, length) = (start.max(0) as usize, (length.max(1) as usize).min(MAX_LENGTH));
    let zone = services.cron_zone();
    let (from, to) = parse_filter_time(params.string("filterTime").as_deref());
    let text = |name: &str| params.string(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    let filter = Filter {
        from_ms: from.map(|t| zone.to_epoch_ms(t)),
        // The picker's end is a whole second: everything within it is included.
        to_ms: to.map(|t| zone.to_epoch_ms(t) + 999),
        user: text("user"),
        kind: text("kind"),
        text: text("text"),
    };
    let read = tokio::task::spawn_blocking(move || read::newest(&path, &filter, start, length)).await;
    let page = match read {
        Ok(Ok(page)) => page,
        // Not written yet: nothing happened since the file was configured.
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            read::Page { events: Vec::new(), more: false }
        }
        Ok(Err(e)) => {
            tracing::error!(
                "audit file {}: cannot read it: {e}",
                services.audit.file().map(|p| p.display().to_string()).unwrap_or_default()
            );
            return Err(ConsoleError::msg(services.i18n.get("audit_read_failed")));
        }
        Err(e) => {
            tracing::error!("reading the audit file failed: {e}");
            return Err(ConsoleError::msg(services.i18n.get("audit_read_failed")));
        }
    };
    let total = (start + page.events.len() + usize::from(page.more)) as i64;
    Ok(Json(Page::new(page.events, total)))
}
