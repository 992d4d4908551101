//! How a sign-in through an identity provider ends, successful or not: the one place that starts the
//! console session and records the outcome in the audit trail.

use super::error::ConsoleError;
use super::session;
use crate::http::state::AppState;
use crate::storage::JobUser;
use std::net::IpAddr;
use tower_sessions::Session;

/// Starts the session of `outcome`'s user exactly as the password login does (a browser-session
/// login), or logs why the attempt was refused; `Ok(true)` when a session began. `reason` never holds
/// a token or a secret; `method` is one of the audit trail's `METHOD_…` names.
pub async fn conclude(
    state: &AppState,
    session: &Session,
    method: &'static str,
    address: IpAddr,
    outcome: Result<JobUser, String>,
) -> Result<bool, ConsoleError> {
    match outcome {
        Ok(user) => {
            session::begin(session, &state.console.secret, &user, false, state.services.clock.now_ms())
                .await?;
            tracing::info!(username = user.username, %address, method, "signed in");
            state.services.audit.sign_in(&user.username, Some(user.id), method, address, None);
            Ok(true)
        }
        Err(reason) => {
            tracing::warn!(%address, method, "sign-in refused: {reason}");
            // Refused before the provider named a user of ours (state, nonce, signature, claims).
            state.services.audit.sign_in(&format!("({method})"), None, method, address, Some(&reason));
            Ok(false)
        }
    }
}
