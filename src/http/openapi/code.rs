//! `/export` and `/apply`: jobs as code (docs/jobs-as-code.md) over the API, within the token user's groups.

use super::{nul_in_json, nul_refused, ApiError, ApiResult, ApiUser, ErrorBody};
use crate::http::state::AppState;
use crate::service::jobs_as_code::{self, ApplyOptions, Document, Format, Plan, Setting};
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

/// The query's pairs, refusing any name not in `known`.
fn query_pairs(uri: &Uri, known: &[&str]) -> ApiResult<Vec<(String, String)>> {
    let pairs: Vec<(String, String)> = uri.query().map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect()).unwrap_or_default();
    match pairs.iter().find(|(name, _)| !known.contains(&name.as_str())) {
        Some((name, _)) => Err(ApiError::BadRequest(format!("unknown parameter `{name}`; this endpoint takes {}", known.join(", ")))),
        None => Ok(pairs),
    }
}

fn flag(pairs: &[(String, String)], name: &str) -> ApiResult<bool> {
    match pairs.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v.as_str()) {
        None | Some("false") => Ok(false),
        Some("true" | "") => Ok(true),
        Some(other) => Err(ApiError::BadRequest(format!("{name} must be true or false, not {other:?}"))),
    }
}

/// Exports executors and their jobs as a document keyed by natural keys: the named executors (repeat
/// `group`), or every executor the token's user may see.
#[utoipa::path(operation_id = "exportJobs", get, path = "/export", tag = "jobs as code",
    params(
        ("group" = Option<Vec<String>>, Query, description = "an executor's app_name; repeat for several; absent = every permitted executor"),
        ("format" = Option<String>, Query, description = "json (default) or toml"),
    ),
    responses(
        (status = 200, body = Document, description = "the document (TOML with format=toml)", content_type = "application/json"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody, description = "no executor has a named app_name")))]
pub async fn export(State(state): State<AppState>, ApiUser(user): ApiUser, uri: Uri) -> ApiResult<Response> {
    let pairs = query_pairs(&uri, &["group", "format"])?;
    let format = match pairs.iter().rev().find(|(n, _)| n == "format") {
        None => Format::Json,
        Some((_, name)) => Format::of_name(name).ok_or_else(|| ApiError::BadRequest(format!("format must be json or toml, not {name:?}")))?,
    };
    let groups: Vec<String> = pairs.into_iter().filter(|(n, _)| n == "group").map(|(_, v)| v).collect();
    let doc = jobs_as_code::export(&Setting::of(&state), &user, &groups).await?;
    Ok(([(CONTENT_TYPE, format.media_type())], doc.render(format)).into_response())
}

/// What an apply answers: the plan, and whether it was carried out.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Applied {
    /// false for a dry run (or when nothing differed): nothing was written.
    pub applied: bool,
    /// Steps that write something.
    pub changes: usize,
    #[serde(flatten)]
    pub plan: Plan,
}

/// Applies a document (JSON, or TOML with `Content-Type: application/toml`): creates what is missing,
/// updates what differs, leaves the rest, and with `prune` deletes the named executors' jobs the document
/// does not list. One transaction: a refused document changes nothing.
#[utoipa::path(operation_id = "applyJobs", post, path = "/apply", tag = "jobs as code",
    params(
        ("dryRun" = Option<bool>, Query, description = "only plan: nothing is written"),
        ("prune" = Option<bool>, Query, description = "delete the jobs of the document's executors that it does not list"),
    ),
    request_body(content = Document, description = "the document; TOML with Content-Type: application/toml", content_type = "application/json"),
    responses((status = 200, body = Applied), (status = 400, body = ErrorBody, description = "the document does not parse or an entry is refused; the message names it"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 415, body = ErrorBody)))]
pub async fn apply(State(state): State<AppState>, ApiUser(user): ApiUser, uri: Uri, headers: HeaderMap, body: String) -> ApiResult<Json<Applied>> {
    let pairs = query_pairs(&uri, &["dryRun", "prune"])?;
    let options = ApplyOptions { dry_run: flag(&pairs, "dryRun")?, prune: flag(&pairs, "prune")? };
    let media = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let media = media.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let format = match media.as_str() {
        "application/json" => Format::Json,
        "application/toml" | "text/toml" => Format::Toml,
        _ => return Err(ApiError::UnsupportedMediaType),
    };
    let doc = Document::parse(&body, format).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    // PostgreSQL cannot store NUL in text: refused everywhere alike, naming the field.
    if let Some(field) = serde_json::to_value(&doc).ok().and_then(|v| nul_in_json(&v, "")) {
        return Err(nul_refused(&state, &field));
    }
    let plan = jobs_as_code::apply_for(&state, &user, &doc, options).await?;
    let changes = plan.changes();
    Ok(Json(Applied { applied: !options.dry_run && changes > 0, changes, plan }))
}
