//! How a sign-in through an identity provider ends, successful or not: the one place that starts the
//! console session and records the outcome in the audit trail.

use super::error::ConsoleError;
use super::session;
use crate::http::state::AppState;
use crate::storage::JobUser;
use std::net::IpAddr;
use tower_sessions::Session;

/// What proved who the user is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Oidc,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Oidc => "oidc",
        }
    }
}

/// Starts the session of `outcome`'s user exactly as the password login does (a browser-session
/// login), or logs why the attempt was refused; `Ok(true)` when a session began. `reason` never holds
/// a token or a secret.
pub async fn conclude(state: &AppState, session: &Session, method: Method, address: IpAddr, outcome: Result<JobUser, String>) -> Result<bool, ConsoleError> {
    match outcome {
        Ok(user) => {
            session::begin(session, &state.console.secret, &user, false, state.clock.now_ms()).await?;
            tracing::info!(username = user.username, %address, method = method.name(), "signed in");
            state.audit.sign_in(&user.username, Some(user.id), method.name(), address, None);
            Ok(true)
        }
        Err(reason) => {
            tracing::warn!(%address, method = method.name(), "sign-in refused: {reason}");
            // Refused before the provider named a user of ours (state, nonce, signature, claims).
            state.audit.sign_in(&format!("({})", method.name()), None, method.name(), address, Some(&reason));
            Ok(false)
        }
    }
}
