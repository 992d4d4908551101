//! `/export` and `/apply`: jobs as code (docs/jobs-as-code.md) over the API, within the token user's groups.

use super::{integral, nul_in_json, nul_refused, ApiError, ApiResult, ApiUser, ErrorBody};
use crate::service::jobs_as_code::{self, ApplyOptions, Document, Format, Plan, Setting};
use crate::service::ServiceContext;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

/// The query's pairs, refusing any name not in `known` and any text holding NUL.
fn query_pairs(services: &ServiceContext, uri: &Uri, known: &[&str]) -> ApiResult<Vec<(String, String)>> {
    let pairs: Vec<(String, String)> = uri
        .query()
        .map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    if let Some((name, _)) = pairs.iter().find(|(name, value)| name.contains('\0') || value.contains('\0')) {
        return Err(nul_refused(services, name));
    }
    match pairs.iter().find(|(name, _)| !known.contains(&name.as_str())) {
        Some((name, _)) => Err(ApiError::BadRequest(format!(
            "unknown parameter `{name}`; this endpoint takes {}",
            known.join(", ")
        ))),
        None => Ok(pairs),
    }
}

/// The last value of the parameter `name`, which must be one of `allowed` (as the document's enumeration
/// spells them: no other case, no bare flag).
fn one_of<'a>(pairs: &[(String, String)], name: &str, allowed: &[&'a str]) -> ApiResult<Option<&'a str>> {
    let Some((_, value)) = pairs.iter().rev().find(|(n, _)| n == name) else { return Ok(None) };
    match allowed.iter().find(|a| *a == value) {
        Some(found) => Ok(Some(*found)),
        None => Err(ApiError::BadRequest(format!("{name} must be {}, not {value:?}", allowed.join(" or ")))),
    }
}

fn flag(pairs: &[(String, String)], name: &str) -> ApiResult<bool> {
    Ok(one_of(pairs, name, &["true", "false"])? == Some("true"))
}

/// The body as a document. JSON Schema's integers include `1.0`, which serde refuses for an integer field:
/// a JSON body that fails is read again with such numbers made integers; any other fault keeps the first
/// reading's message, with its line.
fn read_document(body: &str, format: Format) -> ApiResult<Document> {
    Document::parse(body, format)
        .or_else(|first| match format {
            Format::Json => serde_json::from_str(body)
                .ok()
                .map(integral)
                .and_then(|value| serde_json::from_value(value).ok())
                .ok_or(first),
            Format::Toml => Err(first),
        })
        .map_err(|e| ApiError::BadRequest(e.to_string()))
}

/// Exports executors with their jobs and workflows as a document keyed by natural keys and names: the
/// named executors (repeat `group`), or every executor the token's user may see.
#[utoipa::path(operation_id = "exportJobs", get, path = "/export", tag = "jobs as code",
    params(
        ("group" = Option<Vec<String>>, Query, explode, description = "an executor's app_name; repeat for several; absent = every permitted executor"),
        ("format" = inline(Option<Format>), Query, description = "the answer's format: json (the default) or toml"),
        ("glueHistory" = Option<bool>, Query, description = "true: each GLUE job's version history too (`glue_history`, newest first)"),
    ),
    responses(
        (status = 200, description = "the document: JSON, or TOML with format=toml", content((Document = "application/json"), (String = "application/toml"))),
        (status = 400, body = ErrorBody, description = "an unknown parameter, a format other than json or toml, a text holding NUL, or format=toml for workflows whose parameters hold a null, which TOML cannot write"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "a named executor is not granted to the token's user"),
        (status = 404, body = ErrorBody, description = "no executor has a named app_name")))]
pub async fn export(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    uri: Uri,
) -> ApiResult<Response> {
    let pairs = query_pairs(&services, &uri, &["group", "format", "glueHistory"])?;
    let glue_history = flag(&pairs, "glueHistory")?;
    let format = match one_of(&pairs, "format", &["json", "toml"])? {
        Some("toml") => Format::Toml,
        _ => Format::Json,
    };
    let groups: Vec<String> = pairs.into_iter().filter(|(n, _)| n == "group").map(|(_, v)| v).collect();
    let doc = jobs_as_code::export(&Setting::of(&services), &user, &groups, glue_history).await?;
    let text = doc.render(format).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    Ok(([(CONTENT_TYPE, format.media_type())], text).into_response())
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
/// updates what differs (a workflow by a new version), leaves the rest, and with `prune` deletes the named
/// executors' jobs and workflows the document does not list. One transaction: a refused document changes
/// nothing.
#[utoipa::path(operation_id = "applyJobs", post, path = "/apply", tag = "jobs as code",
    params(
        ("dryRun" = Option<bool>, Query, description = "true: only plan, nothing is written"),
        ("prune" = Option<bool>, Query, description = "true: delete the jobs and workflows of the document's executors that it does not list"),
    ),
    request_body(description = "the document, as an export writes it, JSON or TOML",
        content((Document = "application/json"), (Document = "application/toml"), (Document = "text/toml"))),
    responses(
        (status = 200, body = Applied, description = "the plan, carried out unless dryRun"),
        (status = 400, body = ErrorBody, description = "the document does not parse, or an entry fails the console's checks (the message names it, \
            with its line in TOML), a workflow node is not one kind, a workflow fails a save's checks (each problem named by workflow, node and field); \
            an unknown parameter, a flag other than true or false, a text holding NUL"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "an executor not granted to the token's user, a child job in one, a workflow in one or running its jobs or workflows, or a change of an executor by a non-administrator"),
        (status = 404, body = ErrorBody, description = "a child job or a workflow node's job that names no job of the document or the database, a workflow's executor that names none"),
        (status = 409, body = ErrorBody, description = "entries that collide: an executor, job or workflow declared twice, or stored twice under the name the \
            document uses, a job's GLUE type other than the stored one, a child job or a workflow node's job or sub-workflow that prune would delete, \
            a workflow prune would delete that has a run not over"),
        (status = 415, body = ErrorBody, description = "a body other than application/json, application/toml or text/toml")))]
pub async fn apply(
    State(services): State<ServiceContext>,
    ApiUser(user): ApiUser,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Json<Applied>> {
    let pairs = query_pairs(&services, &uri, &["dryRun", "prune"])?;
    let options = ApplyOptions { dry_run: flag(&pairs, "dryRun")?, prune: flag(&pairs, "prune")? };
    let media = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let media = media.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let format = match media.as_str() {
        "application/json" => Format::Json,
        "application/toml" | "text/toml" => Format::Toml,
        _ => {
            return Err(ApiError::UnsupportedMediaType(
                "a document: Content-Type: application/json, application/toml or text/toml",
            ))
        }
    };
    let body = std::str::from_utf8(&body)
        .map_err(|_| ApiError::BadRequest("the document is not UTF-8 text".into()))?;
    let doc = read_document(body, format)?;
    // PostgreSQL cannot store NUL in text: refused everywhere alike, naming the field.
    if let Some(field) = serde_json::to_value(&doc).ok().and_then(|v| nul_in_json(&v, "")) {
        return Err(nul_refused(&services, &field));
    }
    let plan = jobs_as_code::apply_for(&services, &user, &doc, options).await?;
    let changes = plan.changes();
    Ok(Json(Applied { applied: !options.dry_run && changes > 0, changes, plan }))
}
