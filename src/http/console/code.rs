//! Jobs as code in the console (docs/jobs-as-code.md): the job and executor pages' export button and the
//! job page's upload, which plans (dry run) or applies a document. Endpoints 2.4.2 does not have; the rules
//! are [`crate::service::jobs_as_code`]'s, with the user's group rights.

use super::error::ConsoleError;
use super::params::Params;
use super::{changes_state_post_only, JsonResult, LoginUser};
use crate::domain::ReturnT;
use crate::http::state::AppState;
use crate::service::groups;
use crate::service::jobs_as_code::{self, Action, ApplyOptions, Document, Format, Setting};
use crate::service::{ServiceContext, ServiceError};
use axum::extract::State;
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/jobinfo/export", get(export))
        .route("/jobinfo/apply", changes_state_post_only(apply))
}

/// The executor `jobGroup` (0 or absent: every executor the user may see) as a TOML (or `format=json`)
/// download.
async fn export(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> Result<Response, ConsoleError> {
    let group: i32 = params.number_or("jobGroup", 0)?;
    let format = params.string("format").as_deref().and_then(Format::of_name).unwrap_or(Format::Toml);
    let apps = match group {
        0 => vec![],
        id => vec![groups::get(&services, &user, id).await?.app_name],
    };
    let doc = jobs_as_code::export(&Setting::of(&services), &user, &apps, false).await?;
    let text = doc.render(format).map_err(|e| ServiceError::Invalid(e.to_string()))?;
    // Only characters every browser keeps in a file name.
    let stem: String = apps
        .first()
        .map_or("xxl-job", String::as_str)
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || "._-".contains(*c))
        .collect();
    let extension = if format == Format::Json { "json" } else { "toml" };
    let disposition = format!("attachment; filename=\"{stem}.{extension}\"");
    Ok(([(CONTENT_TYPE, format.media_type().to_string()), (CONTENT_DISPOSITION, disposition)], text)
        .into_response())
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Applied {
    /// The plan as the command line prints it, in the console's language.
    plan: String,
    changes: usize,
    /// How many of the changes delete an executor, a job (with its logs) or a workflow (with its runs): the
    /// page asks before those.
    deletions: usize,
    applied: bool,
}

/// Plans or applies the uploaded `document` (`format` json or toml; `dryRun`, `prune` true or false).
async fn apply(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> JsonResult<Applied> {
    let Some(format) = params.string("format").as_deref().and_then(Format::of_name) else {
        return Ok(Json(ReturnT::fail("format: json or toml")));
    };
    let flag = |name: &str| params.string(name).as_deref() == Some("true");
    let options = ApplyOptions { dry_run: flag("dryRun"), prune: flag("prune") };
    let doc = match Document::parse(&params.string("document").unwrap_or_default(), format) {
        Ok(doc) => doc,
        Err(e) => return Ok(Json(ReturnT::fail(e.to_string()))),
    };
    let plan = jobs_as_code::apply_for(&services, &user, &doc, options).await?;
    let changes = plan.changes();
    let actions = plan.executors.iter().map(|s| s.action).chain(plan.jobs.iter().map(|s| s.action));
    let actions = actions.chain(plan.workflows.iter().map(|s| s.action));
    let deletions = actions.filter(|action| *action == Action::Delete).count();
    Ok(Json(ReturnT::with_content(Applied {
        plan: plan.render(&services.i18n),
        changes,
        deletions,
        applied: !options.dry_run && changes > 0,
    })))
}
