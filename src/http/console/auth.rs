//! `/login` and `/logout` (2.4.2: IndexController.loginDo and logout, LoginService).

use super::error::ConsoleError;
use super::params::Params;
use super::session;
use super::throttle::wait_secs;
use super::{changes_state_post_only, current_user, LoginUser};
use crate::domain::{is_blank, ReturnT};
use crate::http::client::ClientAddr;
use crate::http::state::AppState;
use crate::i18n::I18n;
use crate::service::audit::{Event, EventKind, METHOD_LDAP, METHOD_PASSWORD};
use crate::service::login::{self, Outcome};
use crate::service::Origin;
use crate::storage::JobUser;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::{Json, Router};
use std::net::IpAddr;
use tower_sessions::Session;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/login", changes_state_post_only(login))
        .route("/login/", changes_state_post_only(login))
        .route("/logout", changes_state_post_only(logout))
        .route("/logout/", changes_state_post_only(logout))
}

/// "Too many failed attempts, try again in N s".
pub fn throttled(i18n: &I18n, wait_ms: i64) -> ConsoleError {
    ConsoleError::msg(i18n.format("login_throttled", &[&wait_secs(wait_ms)]))
}

async fn login(
    State(state): State<AppState>,
    ClientAddr(address): ClientAddr,
    session: Session,
    params: Params,
) -> Result<Json<ReturnT<()>>, ConsoleError> {
    let i18n = &state.services.i18n;
    if !state.config.auth.password_enabled {
        return Err(ConsoleError::msg(i18n.get("login_password_disabled")));
    }
    let (username, password) = (params.string("userName"), params.string("password"));
    let (Some(username), Some(password)) = (username, password) else {
        return Err(ConsoleError::msg(i18n.get("login_param_empty")));
    };
    if is_blank(Some(&username)) || is_blank(Some(&password)) {
        return Err(ConsoleError::msg(i18n.get("login_param_empty")));
    }
    let now = state.services.clock.now_ms();
    let user = state.services.db.load_user_by_name(&username).await?;
    // Counted per account found, whatever spelling of the name found it.
    let account = user.as_ref().map(|u| u.id);
    let attempt = Attempt { username: &username, address, account, now };
    let ending = match state.console.throttle.wait_ms(account, address, now) {
        Some(wait) => Ending::Throttled(wait),
        None => Ending::Checked(
            login::check(&state.services.db, state.console.ldap.as_ref(), user, &username, &password).await?,
        ),
    };
    let user = settle(&state, &attempt, ending)?;
    let remember = params.string("ifRemember").as_deref() == Some("on");
    session::begin(&session, &state.console.secret, &user, remember, now).await?;
    Ok(Json(ReturnT::success()))
}

/// One sign-in attempt with a name and password.
struct Attempt<'a> {
    username: &'a str,
    address: IpAddr,
    /// The id of the user row the name found.
    account: Option<i32>,
    now: i64,
}

/// How a sign-in attempt ended.
enum Ending {
    /// Refused unchecked: too many failures; the wait in ms.
    Throttled(i64),
    Checked(Outcome),
}

/// Every sign-in attempt with a name and password ends here, accepted or not: the throttle's count,
/// the audit event (which logs it), and the answer.
fn settle(state: &AppState, attempt: &Attempt, ending: Ending) -> Result<JobUser, ConsoleError> {
    let (i18n, throttle) = (&state.services.i18n, &state.console.throttle);
    let Attempt { username, address, account, now } = *attempt;
    // With a directory configured every attempt is an LDAP login, whatever decided it in the end.
    let method = if state.console.ldap.is_some() { METHOD_LDAP } else { METHOD_PASSWORD };
    match ending {
        Ending::Checked(Outcome::SignedIn(user)) => {
            throttle.record_success(user.id, address);
            state.services.audit.sign_in(&user.username, Some(user.id), method, address, None);
            Ok(user)
        }
        Ending::Throttled(wait) => {
            state.services.audit.sign_in(
                username,
                account,
                method,
                address,
                Some("too many failed attempts"),
            );
            Err(throttled(i18n, wait))
        }
        Ending::Checked(Outcome::Refused) => {
            throttle.record_failure(account, address, now);
            let reason = match (method, account) {
                // Whether the directory knew the name is not told apart, here as in the answer.
                (METHOD_LDAP, _) => "wrong user name or password",
                (_, Some(_)) => "wrong password",
                (_, None) => "no such user",
            };
            state.services.audit.sign_in(username, account, method, address, Some(reason));
            Err(ConsoleError::msg(i18n.get("login_param_unvalid")))
        }
        Ending::Checked(Outcome::DirectoryDown) => {
            state.services.audit.sign_in(
                username,
                account,
                method,
                address,
                Some("the LDAP server cannot answer"),
            );
            Err(ConsoleError::msg(i18n.get("login_ldap_unavailable")))
        }
    }
}

async fn logout(
    State(state): State<AppState>,
    ClientAddr(address): ClientAddr,
    session: Session,
) -> Result<Json<ReturnT<()>>, ConsoleError> {
    let user = current_user(&state, &session).await?;
    session::end(&session, &state.console.ended, &state.services.db, state.services.clock.now_ms()).await?;
    if let Some(user) = user {
        let user = LoginUser(user, Origin { address: Some(address), token_id: None });
        state.services.audit.record(Event::by(&user, EventKind::SignOut, None));
    }
    Ok(Json(ReturnT::success()))
}

/// Behind a TLS-terminating proxy the request itself is plain HTTP; the proxy says so. Only ever adds
/// `Secure` to our own cookie, so a forged header harms nobody but its sender.
pub fn is_https(headers: &HeaderMap) -> bool {
    headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|p| p.eq_ignore_ascii_case("https"))
}
