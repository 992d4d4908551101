//! Personal API tokens: signed, without a table (the 2.4 schema may not grow one).
//!
//! A token is `xxlapi1.<claims>.<HMAC-SHA256>`: the user id, the issue time, an optional expiry, and a
//! keyed digest of the user's password hash and role. It authenticates only while that digest still
//! matches the user as stored, so changing the password or the role (or removing the user) revokes every
//! token of that user at once, on every admin sharing the secret. The group rights are read from the
//! user row on each request, like a console session's.
//!
//! The signer takes its secret as bytes handed in at start-up; it derives its own key from them, so a
//! session cookie and an API token are never interchangeable even under one secret.

use crate::storage::JobUser;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use std::sync::Arc;
use subtle::ConstantTimeEq;

const PREFIX: &str = "xxlapi1.";

type HmacSha256 = Hmac<Sha256>;

/// What a token says; trusted only once its signature, its expiry and the user's binding are checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenClaims {
    pub uid: i32,
    /// Keyed digest of the password hash and role at issue.
    pub bind: String,
    /// Issue time, epoch ms.
    pub iat: i64,
    /// Expiry, epoch ms; `None` = until revoked.
    pub exp: Option<i64>,
    /// Makes every token distinct, even two issued in the same millisecond.
    nonce: String,
}

impl TokenClaims {
    /// What names the token in the audit trail: its random part, which proves nothing without the
    /// signature.
    pub fn id(&self) -> &str {
        &self.nonce
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("not an API token")]
    Malformed,
    #[error("the token's signature is not valid")]
    BadSignature,
    #[error("the token has expired")]
    Expired,
    #[error("the token is revoked: its user was removed, or changed password or role")]
    Revoked,
}

#[derive(Clone)]
pub struct ApiTokens {
    key: Arc<[u8]>,
}

impl ApiTokens {
    /// A signer keyed by `secret`, the admin's session secret (shared by every admin of a cluster).
    pub fn new(secret: &[u8]) -> ApiTokens {
        let mut mac = HmacSha256::new_from_slice(secret).expect("HMAC takes keys of any length");
        mac.update(b"xxl-job-admin api token key v1");
        ApiTokens { key: mac.finalize().into_bytes().to_vec().into() }
    }

    fn mac(&self, parts: &[&[u8]]) -> Vec<u8> {
        let mut mac = HmacSha256::new_from_slice(&self.key).expect("HMAC takes keys of any length");
        for part in parts {
            mac.update(part);
            mac.update(&[0]);
        }
        mac.finalize().into_bytes().to_vec()
    }

    /// The digest a token of `user` carries: it changes with the password hash and the role.
    fn binding(&self, user: &JobUser) -> String {
        let (id, role) = (user.id.to_string(), i16::from(user.role).to_string());
        hex::encode(&self.mac(&[b"bind", id.as_bytes(), user.password.as_bytes(), role.as_bytes()])[..16])
    }

    pub fn issue(&self, user: &JobUser, now_ms: i64, expires_ms: Option<i64>) -> String {
        let claims = TokenClaims {
            uid: user.id,
            bind: self.binding(user),
            iat: now_ms,
            exp: expires_ms,
            nonce: hex::encode(rand::random::<[u8; 8]>()),
        };
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims).unwrap_or_default());
        let signature = URL_SAFE_NO_PAD.encode(self.mac(&[PREFIX.as_bytes(), payload.as_bytes()]));
        format!("{PREFIX}{payload}.{signature}")
    }

    /// The claims of a well-signed token that has not expired.
    pub fn verify(&self, token: &str, now_ms: i64) -> Result<TokenClaims, TokenError> {
        let (payload, signature) =
            token.strip_prefix(PREFIX).and_then(|rest| rest.split_once('.')).ok_or(TokenError::Malformed)?;
        let signature = URL_SAFE_NO_PAD.decode(signature).map_err(|_| TokenError::Malformed)?;
        let expected = self.mac(&[PREFIX.as_bytes(), payload.as_bytes()]);
        if !bool::from(expected.ct_eq(&signature)) {
            return Err(TokenError::BadSignature);
        }
        let bytes = URL_SAFE_NO_PAD.decode(payload).map_err(|_| TokenError::Malformed)?;
        let claims: TokenClaims = serde_json::from_slice(&bytes).map_err(|_| TokenError::Malformed)?;
        match claims.exp {
            Some(exp) if exp <= now_ms => Err(TokenError::Expired),
            _ => Ok(claims),
        }
    }

    /// Whether the claims still describe `user` as stored now.
    pub fn check_user(&self, claims: &TokenClaims, user: &JobUser) -> Result<(), TokenError> {
        let same =
            claims.uid == user.id && bool::from(claims.bind.as_bytes().ct_eq(self.binding(user).as_bytes()));
        if same {
            Ok(())
        } else {
            Err(TokenError::Revoked)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::Role;

    fn user() -> JobUser {
        JobUser {
            id: 3,
            username: "ops".into(),
            password: "e10adc3949ba59abbe56e057f20f883e".into(),
            role: Role::Normal,
            permission: Some("1".into()),
        }
    }

    #[test]
    fn tokens_verify_until_they_expire() {
        let tokens = ApiTokens::new(b"secret");
        let forever = tokens.issue(&user(), 1_000, None);
        let claims = tokens.verify(&forever, i64::MAX).unwrap();
        assert_eq!((claims.uid, claims.iat, claims.exp), (3, 1_000, None));
        assert_eq!(tokens.check_user(&claims, &user()), Ok(()));
        let brief = tokens.issue(&user(), 1_000, Some(5_000));
        assert!(tokens.verify(&brief, 4_999).is_ok());
        assert_eq!(tokens.verify(&brief, 5_000), Err(TokenError::Expired));
        assert_ne!(tokens.issue(&user(), 1_000, None), forever, "every token is distinct");
    }

    #[test]
    fn password_and_role_changes_revoke_permission_changes_do_not() {
        let tokens = ApiTokens::new(b"secret");
        let claims = tokens.verify(&tokens.issue(&user(), 0, None), 1).unwrap();
        let new_password = JobUser { password: "0".repeat(32), ..user() };
        assert_eq!(tokens.check_user(&claims, &new_password), Err(TokenError::Revoked));
        assert_eq!(
            tokens.check_user(&claims, &JobUser { role: Role::Admin, ..user() }),
            Err(TokenError::Revoked)
        );
        assert_eq!(tokens.check_user(&claims, &JobUser { id: 4, ..user() }), Err(TokenError::Revoked));
        assert_eq!(
            tokens.check_user(&claims, &JobUser { permission: Some("1,2".into()), ..user() }),
            Ok(()),
            "rights are read live"
        );
        assert!(!claims.bind.contains(&user().password), "the hash never travels");
    }

    #[test]
    fn foreign_tampered_and_session_tokens_are_refused() {
        let tokens = ApiTokens::new(b"secret");
        let token = tokens.issue(&user(), 0, None);
        assert_eq!(ApiTokens::new(b"other").verify(&token, 1), Err(TokenError::BadSignature));
        let (_, signature) = token.rsplit_once('.').unwrap();
        let forged = URL_SAFE_NO_PAD.encode(br#"{"uid":1,"bind":"00","iat":0,"exp":null,"nonce":"0"}"#);
        assert_eq!(tokens.verify(&format!("{PREFIX}{forged}.{signature}"), 1), Err(TokenError::BadSignature));
        assert_eq!(
            tokens.verify("v1.e30.AAAA", 1),
            Err(TokenError::Malformed),
            "a session cookie is no API token"
        );
        assert_eq!(tokens.verify(&format!("{PREFIX}e30.!!"), 1), Err(TokenError::Malformed));
        assert_eq!(tokens.verify("", 1), Err(TokenError::Malformed));
    }
}
