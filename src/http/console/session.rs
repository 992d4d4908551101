//! Console login sessions on tower-sessions, kept in the login cookie itself.
//!
//! No table may be added to the 2.4 schema, so the session record travels in the cookie, encrypted and
//! authenticated (AES-256-GCM, tower-sessions-cookie-store's private cookies) with a key derived from the
//! [`SessionSecret`] every admin on the database shares; any admin can read a session another issued.
//! 2.4.2's cookie (the user row in hex, forgeable by anyone who knows a password hash) never decrypts.
//! A session names the user and carries a keyed fingerprint of the user's password hash and role at
//! login; it authenticates only while the stored user still matches it, so a password change ends every
//! session of that user on every admin.

use super::error::ConsoleError;
pub use crate::service::login::md5_hex;
use crate::storage::{logout_row, Db, JobUser};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use subtle::ConstantTimeEq;
use tower_sessions::cookie::time::OffsetDateTime;
use tower_sessions::cookie::SameSite;
use tower_sessions::session::{Error as SessionError, Id};
use tower_sessions::{Expiry, Session};
use tower_sessions_cookie_store::{CookieSessionConfig, CookieSessionManagerLayer, Key, PrivateCookie};

pub const COOKIE_NAME: &str = "XXL_JOB_LOGIN_IDENTITY";
/// A session without "remember me" ends after this long.
pub const SESSION_MS: i64 = 12 * 60 * 60 * 1000;
/// A remembered session ends after this long.
pub const REMEMBER_MS: i64 = 14 * 24 * 60 * 60 * 1000;
/// Where the login lives in the session record.
const LOGIN_KEY: &str = "login";

type HmacSha256 = Hmac<Sha256>;

/// The root secret of console credentials, shared by every admin on one database (see
/// [`super::secret`]). Every key is derived from it per purpose, so a future credential (an API token)
/// can be added without reusing the cookie key.
#[derive(Clone)]
pub struct SessionSecret {
    key: [u8; 32],
}

impl SessionSecret {
    /// A secret from its text form (configured, or kept in the database or a file).
    pub fn new(material: &str) -> SessionSecret {
        let mut hasher = Sha256::new();
        hasher.update(b"xxl-job-admin session secret v2\0");
        hasher.update(material.as_bytes());
        SessionSecret { key: hasher.finalize().into() }
    }

    /// A 256-bit key for one `purpose`, independent of the keys of every other purpose.
    pub fn derive(&self, purpose: &str) -> [u8; 32] {
        let mut mac = HmacSha256::new_from_slice(&self.key).expect("HMAC takes keys of any length");
        mac.update(purpose.as_bytes());
        mac.finalize().into_bytes().into()
    }

    /// A keyed fingerprint of what a credential of `user` is bound to (see [`Binding`]). It changes when
    /// any of those does, which ends every credential carrying the old one; the hash itself never leaves
    /// the server.
    pub fn user_binding(&self, user: &JobUser, binding: Binding) -> String {
        let (id, role) = (user.id.to_string(), i16::from(user.role).to_string());
        let parts: &[&[u8]] = match binding {
            Binding::Password => &[b"password", id.as_bytes(), user.password.as_bytes()],
            Binding::PasswordAndRole => {
                &[b"password+role", id.as_bytes(), user.password.as_bytes(), role.as_bytes()]
            }
        };
        let mut mac =
            HmacSha256::new_from_slice(&self.derive("user-binding")).expect("HMAC takes keys of any length");
        for part in parts {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part);
        }
        hex::encode(&mac.finalize().into_bytes()[..16])
    }

    /// Whether `fingerprint` (from [`SessionSecret::user_binding`]) still describes `user` as stored now.
    pub fn binding_matches(&self, fingerprint: &str, user: &JobUser, binding: Binding) -> bool {
        bool::from(fingerprint.as_bytes().ct_eq(self.user_binding(user, binding).as_bytes()))
    }

    /// The tower-sessions layer keeping sessions in the encrypted login cookie: HttpOnly, SameSite=Lax,
    /// a browser-session cookie unless "remember me" sets an expiry. `Secure` is added per request
    /// behind https (see `super::harden`), which a fixed layer setting cannot express.
    pub fn layer(&self) -> CookieSessionManagerLayer<PrivateCookie> {
        let mut key = [0u8; 64];
        key[..32].copy_from_slice(&self.derive("cookie-signing"));
        key[32..].copy_from_slice(&self.derive("cookie-encryption"));
        let config = CookieSessionConfig::default()
            .with_name(COOKIE_NAME)
            .with_http_only(true)
            .with_same_site(SameSite::Lax)
            .with_secure(false)
            .with_path("/");
        CookieSessionManagerLayer::private(Key::from(&key)).with_config(config)
    }
}

/// What a credential stays bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// The user's id and password hash: console sessions, which check the role on every request, so
    /// a role change takes effect at once without ending them.
    Password,
    /// Also the role: for credentials that carry what the user could do when they were issued.
    PasswordAndRole,
}

/// What a session says about its user; trusted only once the user's current row matches `binding`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Login {
    pub uid: i32,
    pub binding: String,
    /// Epoch ms after which the session no longer authenticates (the cookie's own lifetime aside).
    pub exp: i64,
}

impl Login {
    /// A login of `user` at `now_ms`, for 12 hours or, remembered, 14 days.
    fn new(secret: &SessionSecret, user: &JobUser, remember: bool, now_ms: i64) -> Login {
        let exp = now_ms + if remember { REMEMBER_MS } else { SESSION_MS };
        Login { uid: user.id, binding: secret.user_binding(user, Binding::Password), exp }
    }

    fn is_current(&self, now_ms: i64) -> bool {
        self.exp > now_ms
    }

    /// The cookie's own lifetime: the browser session, or until the login expires when remembered.
    fn cookie_expiry(&self, remember: bool) -> Expiry {
        if !remember {
            return Expiry::OnSessionEnd;
        }
        let at = OffsetDateTime::from_unix_timestamp_nanos(i128::from(self.exp) * 1_000_000);
        Expiry::AtDateTime(at.unwrap_or_else(|_| OffsetDateTime::now_utc()))
    }
}

/// Starts a session for `user` under a fresh id (so an id seen before login is worthless after it).
pub async fn begin(
    session: &Session,
    secret: &SessionSecret,
    user: &JobUser,
    remember: bool,
    now_ms: i64,
) -> Result<(), SessionError> {
    let login = Login::new(secret, user, remember, now_ms);
    session.cycle_id().await?;
    session.set_expiry(Some(login.cookie_expiry(remember)));
    session.insert(LOGIN_KEY, login).await
}

/// The login of an unexpired session not ended by logout on any admin of the database.
pub async fn login_of(
    session: &Session,
    ended: &EndedSessions,
    db: &Db,
    now_ms: i64,
) -> Result<Option<Login>, ConsoleError> {
    let Some(id) = session.id() else { return Ok(None) };
    if ended.contains(id) {
        return Ok(None);
    }
    let Some(login) = session.get::<Login>(LOGIN_KEY).await?.filter(|login| login.is_current(now_ms)) else {
        return Ok(None);
    };
    // Ended on another admin: remembered here too, so a replayed cookie costs one lookup.
    if db.logout_recorded(&logout_row(login.exp, &id.to_string())).await? {
        ended.insert(id, login.exp, now_ms);
        return Ok(None);
    }
    Ok(Some(login))
}

/// Ends the session: the cookie is cleared, and a copy of it no longer authenticates on any admin of the
/// database (see [`crate::storage::LOGOUT_PREFIX`]).
pub async fn end(session: &Session, ended: &EndedSessions, db: &Db, now_ms: i64) -> Result<(), ConsoleError> {
    let Some(id) = session.id() else { return Ok(()) };
    if let Some(login) = session.get::<Login>(LOGIN_KEY).await? {
        ended.insert(id, login.exp, now_ms);
        db.record_logout(&logout_row(login.exp, &id.to_string()), now_ms).await?;
    }
    Ok(session.flush().await?)
}

/// Sessions ended by logout before their expiry, known to this admin (ended here or found ended in the
/// database), kept in memory until they would have expired anyway.
#[derive(Default)]
pub struct EndedSessions {
    ended: Mutex<HashMap<Id, i64>>,
}

impl EndedSessions {
    fn insert(&self, id: Id, exp: i64, now_ms: i64) {
        let mut ended = self.ended.lock().unwrap_or_else(|e| e.into_inner());
        ended.retain(|_, exp| *exp > now_ms);
        ended.insert(id, exp);
    }

    fn contains(&self, id: Id) -> bool {
        self.ended.lock().unwrap_or_else(|e| e.into_inner()).contains_key(&id)
    }
}

/// md5 of `123456`, the password of the initial `admin` row of the 2.4 schema script.
pub const DEFAULT_PASSWORD_MD5: &str = "e10adc3949ba59abbe56e057f20f883e";

/// Names the administrators that still have the schema's default password, with the login that works
/// until it is changed: on a fresh database that is how a newcomer gets in, anywhere else a warning.
pub async fn warn_about_default_passwords(db: &Db, local_logins: bool) {
    if !local_logins {
        // LDAP owns every login: a stored password opens nothing, so advertising one would mislead.
        tracing::info!("logins are checked by LDAP (xxl.job.auth.ldap.*): log in with a directory account");
        return;
    }
    // Every administrator in one page: a few rows on any real installation.
    const ALL: i64 = i64::MAX;
    let admins = match db.page_users(&None, 1, 0, ALL).await {
        Ok((admins, _)) => admins,
        Err(e) => {
            tracing::warn!("could not check the administrators for the default password: {e}");
            return;
        }
    };
    for admin in admins.iter().filter(|user| user.password == DEFAULT_PASSWORD_MD5) {
        tracing::warn!(
            "administrator '{name}' still has the default password: log in as {name} / 123456 and change it \
             (user menu, top right) before anyone else does",
            name = admin.username
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::Role;

    fn admin() -> JobUser {
        JobUser {
            id: 1,
            username: "admin".into(),
            password: md5_hex("123456"),
            role: Role::Admin,
            permission: None,
        }
    }

    #[test]
    fn md5_matches_the_stored_default_admin_hash() {
        assert_eq!(md5_hex("123456"), DEFAULT_PASSWORD_MD5);
    }

    #[test]
    fn keys_differ_by_secret_and_purpose() {
        let secret = SessionSecret::new("one");
        assert_eq!(secret.derive("a"), SessionSecret::new("one").derive("a"));
        assert_ne!(secret.derive("a"), secret.derive("b"));
        assert_ne!(secret.derive("a"), SessionSecret::new("two").derive("a"));
    }

    #[test]
    fn bindings_follow_the_password_and_optionally_the_role() {
        let secret = SessionSecret::new("s");
        for binding in [Binding::Password, Binding::PasswordAndRole] {
            let fingerprint = secret.user_binding(&admin(), binding);
            assert!(secret.binding_matches(&fingerprint, &admin(), binding));
            assert!(!secret.binding_matches(
                &fingerprint,
                &JobUser { password: md5_hex("other"), ..admin() },
                binding
            ));
            assert!(!secret.binding_matches(&fingerprint, &JobUser { id: 2, ..admin() }, binding));
            assert!(
                !SessionSecret::new("t").binding_matches(&fingerprint, &admin(), binding),
                "another secret"
            );
            assert!(!fingerprint.contains(&admin().password), "the hash never travels");
        }
        let demoted = JobUser { role: Role::Normal, ..admin() };
        assert!(secret.binding_matches(
            &secret.user_binding(&admin(), Binding::Password),
            &demoted,
            Binding::Password
        ));
        let with_role = secret.user_binding(&admin(), Binding::PasswordAndRole);
        assert!(!secret.binding_matches(&with_role, &demoted, Binding::PasswordAndRole));
        assert_ne!(with_role, secret.user_binding(&admin(), Binding::Password));
    }

    #[test]
    fn logins_last_12_hours_or_14_days_when_remembered() {
        let secret = SessionSecret::new("s");
        let login = Login::new(&secret, &admin(), false, 1_000);
        assert!(login.is_current(1_000 + SESSION_MS - 1) && !login.is_current(1_000 + SESSION_MS));
        assert_eq!(login.cookie_expiry(false), Expiry::OnSessionEnd, "a browser-session cookie");
        let remembered = Login::new(&secret, &admin(), true, 1_000);
        assert!(
            remembered.is_current(1_000 + REMEMBER_MS - 1) && !remembered.is_current(1_000 + REMEMBER_MS)
        );
        let Expiry::AtDateTime(at) = remembered.cookie_expiry(true) else { panic!("a dated cookie") };
        assert_eq!(at.unix_timestamp() * 1000, 1_000 + REMEMBER_MS, "the cookie ends with the login");
    }

    #[test]
    fn ended_sessions_are_forgotten_after_their_expiry() {
        let ended = EndedSessions::default();
        ended.insert(Id(1), 100, 0);
        assert!(ended.contains(Id(1)));
        ended.insert(Id(2), 300, 200);
        assert!(!ended.contains(Id(1)), "expired anyway, so no longer kept");
        assert!(ended.contains(Id(2)));
    }
}
