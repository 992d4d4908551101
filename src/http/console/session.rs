//! Login sessions without server-side storage: a signed, expiring token in the login cookie.
//!
//! 2.4.2's cookie is the user row in hex, forgeable by anyone who knows a password hash; it is never
//! accepted here. Ours is `v1.<claims>.<HMAC-SHA256>`, keyed by a secret derived from the configuration
//! every admin instance shares, and bound to the user's current password hash, so a password change ends
//! every session of that user on every instance. No table is added to the database.

use crate::storage::JobUser;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use subtle::ConstantTimeEq;

pub const COOKIE_NAME: &str = "XXL_JOB_LOGIN_IDENTITY";
/// A session without "remember me" ends after this long.
pub const SESSION_MS: i64 = 12 * 60 * 60 * 1000;
/// A remembered session ends after this long.
pub const REMEMBER_MS: i64 = 14 * 24 * 60 * 60 * 1000;

type HmacSha256 = Hmac<Sha256>;

/// What a token says; trusted only once its signature and the user's current hash are checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    pub uid: i32,
    pub name: String,
    /// A keyed fingerprint of the password hash at login (the hash itself never leaves the server).
    pub pwd: String,
    pub exp: i64,
    pub remember: bool,
}

#[derive(Clone)]
pub struct SessionKeys {
    key: Vec<u8>,
}

impl SessionKeys {
    /// Derives the signing key from configuration material that all instances of a cluster share and
    /// outsiders do not know (the access token and the database credentials).
    pub fn derive(material: &[&str]) -> SessionKeys {
        let mut hasher = Sha256::new();
        hasher.update(b"xxl-job-admin session key v1");
        for part in material {
            hasher.update([0u8]);
            hasher.update(part.as_bytes());
        }
        SessionKeys { key: hasher.finalize().to_vec() }
    }

    /// The signing secret, from which the API token signer derives its own key.
    pub fn secret(&self) -> &[u8] {
        &self.key
    }

    fn mac(&self, parts: &[&[u8]]) -> Vec<u8> {
        let mut mac = HmacSha256::new_from_slice(&self.key).expect("HMAC takes keys of any length");
        for part in parts {
            mac.update(part);
        }
        mac.finalize().into_bytes().to_vec()
    }

    pub fn password_fingerprint(&self, password_hash: &str) -> String {
        hex::encode(&self.mac(&[b"pwd:", password_hash.as_bytes()])[..12])
    }

    pub fn issue(&self, user: &JobUser, remember: bool, now_ms: i64) -> String {
        let claims = Claims {
            uid: user.id,
            name: user.username.clone(),
            pwd: self.password_fingerprint(&user.password),
            exp: now_ms + if remember { REMEMBER_MS } else { SESSION_MS },
            remember,
        };
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims).unwrap_or_default());
        let signature = URL_SAFE_NO_PAD.encode(self.mac(&[b"v1.", payload.as_bytes()]));
        format!("v1.{payload}.{signature}")
    }

    /// The claims of a well-signed, unexpired token.
    pub fn verify(&self, token: &str, now_ms: i64) -> Option<Claims> {
        let rest = token.strip_prefix("v1.")?;
        let (payload, signature) = rest.split_once('.')?;
        let signature = URL_SAFE_NO_PAD.decode(signature).ok()?;
        let expected = self.mac(&[b"v1.", payload.as_bytes()]);
        if !bool::from(expected.ct_eq(&signature)) {
            return None;
        }
        let claims: Claims = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
        (claims.exp > now_ms).then_some(claims)
    }

    /// Whether the claims still describe `user` as stored now.
    pub fn matches(&self, claims: &Claims, user: &JobUser) -> bool {
        claims.uid == user.id
            && claims.name == user.username
            && bool::from(claims.pwd.as_bytes().ct_eq(self.password_fingerprint(&user.password).as_bytes()))
    }
}

/// A random secret kept in `{db_file}.session-key`, created on first use. An embedded database serves one
/// host, and its configuration alone (often all defaults) is no secret, so this joins the key material:
/// every process on that database shares it, nobody else can know it. Unwritable directory: a secret for
/// this process only, so sessions end with it.
pub fn embedded_secret(db_file: &Path) -> String {
    let path = PathBuf::from(format!("{}.session-key", db_file.display()));
    match read_or_create_secret(&path) {
        Ok(secret) => secret,
        Err(e) => {
            tracing::warn!("cannot keep the session secret in {}: {e}; logins end when this process stops", path.display());
            hex::encode(rand::random::<[u8; 32]>())
        }
    }
}

fn read_or_create_secret(path: &Path) -> std::io::Result<String> {
    let existing = |path: &Path| -> std::io::Result<Option<String>> {
        match std::fs::read_to_string(path) {
            Ok(text) if text.trim().len() >= 32 => Ok(Some(text.trim().to_string())),
            Ok(_) => Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "the file holds no secret")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    };
    if let Some(secret) = existing(path)? {
        return Ok(secret);
    }
    // Written aside, then linked into place: a process starting at the same moment sees the whole
    // secret or none, and the loser of the race reads the winner's.
    let secret = hex::encode(rand::random::<[u8; 32]>());
    let staging = PathBuf::from(format!("{}.{}-{:08x}", path.display(), std::process::id(), rand::random::<u32>()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&staging).and_then(|mut file| file.write_all(secret.as_bytes()));
    let linked = written.and_then(|()| std::fs::hard_link(&staging, path));
    let _ = std::fs::remove_file(&staging);
    match linked {
        Ok(()) => Ok(secret),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => existing(path)?.ok_or(e),
        Err(e) => Err(e),
    }
}

/// Tokens ended by logout before their expiry. Kept in memory until they would have expired anyway, so
/// a copied cookie stops working on this instance; other instances forget nothing because they never
/// learn of it — there is no table to share it through without changing the 2.4 schema.
#[derive(Default)]
pub struct Revocations {
    ended: Mutex<HashMap<String, i64>>,
}

impl Revocations {
    pub fn revoke(&self, token: &str, claims: &Claims, now_ms: i64) {
        let mut ended = self.ended.lock().unwrap_or_else(|e| e.into_inner());
        ended.retain(|_, exp| *exp > now_ms);
        ended.insert(token.to_string(), claims.exp);
    }

    pub fn is_revoked(&self, token: &str) -> bool {
        self.ended.lock().unwrap_or_else(|e| e.into_inner()).contains_key(token)
    }
}

/// Failed logins per user name; after [`MAX_FAILURES`] within [`WINDOW_MS`] further attempts are refused
/// until the window has passed, which makes guessing passwords slow.
pub struct LoginThrottle {
    failures: Mutex<HashMap<String, (u32, i64)>>,
}

pub const MAX_FAILURES: u32 = 5;
pub const WINDOW_MS: i64 = 5 * 60 * 1000;

impl LoginThrottle {
    pub fn new() -> LoginThrottle {
        LoginThrottle { failures: Mutex::new(HashMap::new()) }
    }

    fn key(username: &str) -> String {
        username.trim().to_lowercase()
    }

    pub fn is_blocked(&self, username: &str, now_ms: i64) -> bool {
        let failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        failures.get(&Self::key(username)).is_some_and(|(count, since)| *count >= MAX_FAILURES && now_ms - since < WINDOW_MS)
    }

    pub fn record_failure(&self, username: &str, now_ms: i64) {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        // Bounded memory under a flood of random names: forget windows that have passed.
        if failures.len() > 10_000 {
            failures.retain(|_, (_, since)| now_ms - *since < WINDOW_MS);
        }
        let entry = failures.entry(Self::key(username)).or_insert((0, now_ms));
        if now_ms - entry.1 >= WINDOW_MS {
            *entry = (0, now_ms);
        }
        entry.0 += 1;
    }

    pub fn record_success(&self, username: &str) {
        self.failures.lock().unwrap_or_else(|e| e.into_inner()).remove(&Self::key(username));
    }
}

impl Default for LoginThrottle {
    fn default() -> Self {
        LoginThrottle::new()
    }
}

/// Lowercase hex MD5 of the password bytes, the `xxl_job_user.password` format.
pub fn md5_hex(password: &str) -> String {
    use md5::Digest as _;
    hex::encode(md5::Md5::digest(password.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admin() -> JobUser {
        JobUser { id: 1, username: "admin".into(), password: md5_hex("123456"), role: 1, permission: None }
    }

    #[test]
    fn md5_matches_the_stored_default_admin_hash() {
        assert_eq!(md5_hex("123456"), "e10adc3949ba59abbe56e057f20f883e");
    }

    #[test]
    fn the_embedded_secret_is_created_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("admin.db");
        let first = embedded_secret(&db);
        assert_eq!(first.len(), 64);
        assert_eq!(embedded_secret(&db), first, "read back, not replaced");
        let stored = std::fs::read_to_string(dir.path().join("admin.db.session-key")).unwrap();
        assert_eq!(stored, first);
        let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "no staging file is left behind");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("admin.db.session-key")).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "only the owner may read the secret");
        }
        assert_ne!(embedded_secret(&dir.path().join("other.db")), first);
    }

    #[test]
    fn tokens_verify_until_they_expire() {
        let keys = SessionKeys::derive(&["token", "db"]);
        let token = keys.issue(&admin(), false, 1_000);
        let claims = keys.verify(&token, 2_000).unwrap();
        assert!(keys.matches(&claims, &admin()));
        assert!(keys.verify(&token, 1_000 + SESSION_MS).is_none());
        let remembered = keys.issue(&admin(), true, 1_000);
        assert!(keys.verify(&remembered, 1_000 + SESSION_MS + 1).is_some());
    }

    #[test]
    fn tampered_foreign_and_legacy_tokens_are_refused() {
        let keys = SessionKeys::derive(&["token", "db"]);
        let token = keys.issue(&admin(), false, 0);
        let other = SessionKeys::derive(&["other", "db"]);
        assert!(other.verify(&token, 1).is_none(), "another key");
        let (head, sig) = token.rsplit_once('.').unwrap();
        let forged_claims = URL_SAFE_NO_PAD.encode(br#"{"uid":1,"name":"admin","pwd":"x","exp":99999999999999,"remember":true}"#);
        assert!(keys.verify(&format!("v1.{forged_claims}.{sig}"), 1).is_none(), "swapped claims");
        assert!(keys.verify(&format!("{head}.AAAA"), 1).is_none(), "bad signature");
        // The 2.4 cookie: hex of the user JSON.
        let legacy = "7b226964223a312c22757365726e616d65223a2261646d696e222c2270617373776f7264223a226531306164633339343962613539616262653536653035376632306638383365222c22726f6c65223a312c227065726d697373696f6e223a6e756c6c7d";
        assert!(keys.verify(legacy, 1).is_none());
    }

    #[test]
    fn a_password_change_ends_the_session() {
        let keys = SessionKeys::derive(&["t"]);
        let claims = keys.verify(&keys.issue(&admin(), true, 0), 1).unwrap();
        let changed = JobUser { password: md5_hex("new-password"), ..admin() };
        assert!(!keys.matches(&claims, &changed));
        assert!(!claims.pwd.contains(&admin().password), "the hash never travels");
    }

    #[test]
    fn repeated_failures_block_for_a_window() {
        let throttle = LoginThrottle::new();
        for _ in 0..MAX_FAILURES {
            assert!(!throttle.is_blocked("Admin", 0));
            throttle.record_failure("admin", 0);
        }
        assert!(throttle.is_blocked("admin ", 10));
        assert!(!throttle.is_blocked("admin", WINDOW_MS));
        throttle.record_success("admin");
        assert!(!throttle.is_blocked("admin", 10));
    }
}
