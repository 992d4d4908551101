//! The alarm channels page's data (administrators only): the configured webhook channels as the console
//! shows them, and the test alarm its button sends. Not in 2.4.2, which has e-mail only.

use super::error::ConsoleError;
use super::params::Params;
use super::{changes_state_post_only, JsonResult, LoginUser};
use crate::domain::ReturnT;
use crate::http::state::AppState;
use crate::service::audit::{EventKind, Target};
use crate::service::ServiceContext;
use axum::extract::State;
use axum::{Json, Router};
use serde::Serialize;

pub fn admin_routes() -> Router<AppState> {
    Router::new()
        .route("/alarm/test", changes_state_post_only(test))
        .route("/alarm/test/", changes_state_post_only(test))
}

/// One row of the page: what an administrator needs to use and check a channel, without its secrets.
#[derive(Debug, Serialize)]
pub struct ChannelRow {
    /// Canonical, as a job names it after `webhook:`.
    pub name: String,
    pub kind: &'static str,
    pub target: String,
    pub signed: bool,
    /// The executors whose failed jobs it receives by configuration; `*` is every one.
    pub groups: Vec<String>,
}

/// The configured webhook channels, by name.
pub fn channel_rows(state: &AppState) -> Vec<ChannelRow> {
    state
        .config
        .alarm
        .webhooks
        .iter()
        .map(|w| ChannelRow {
            name: w.name.clone(),
            kind: w.kind.name(),
            target: w.redacted_url(),
            signed: w.secret.is_some(),
            groups: w.groups.clone(),
        })
        .collect()
}

/// Sends a made-up failed run to the channel `name`; the answer says whether it arrived.
async fn test(State(services): State<ServiceContext>, login: LoginUser, params: Params) -> JsonResult<()> {
    let i18n = &services.i18n;
    let name = params.string("name").unwrap_or_default();
    let job_desc = i18n.get("alarm_test_job_desc").to_string();
    let message = i18n.format("alarm_test_message", &[&login.0.username]);
    let result = match services.alarms.test(&name, job_desc, message, services.clock.now_ms()).await {
        None => Err(ConsoleError::msg(i18n.format("alarm_channel_unknown", &[&name]))),
        Some(Err(reason)) => {
            Err(ConsoleError::msg(i18n.format("alarm_channel_test_failed", &[&name, &reason])))
        }
        Some(Ok(())) => Ok(()),
    };
    services.audit.done(
        &login,
        EventKind::AlarmTest,
        Target::named("channel", name.as_str()),
        |()| None,
        result,
    )?;
    Ok(Json(ReturnT { msg: Some(i18n.format("alarm_channel_test_sent", &[&name])), ..ReturnT::success() }))
}
