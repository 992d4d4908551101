//! OpenID Connect sign-in (docs/authentication.md): the authorization code flow with PKCE (S256)
//! against a provider found from its issuer URL, the ID token's signature and claims checked, and the
//! user's `xxl_job_user` row created or brought up to date from the token's claims.
//!
//! Nothing of a sign-in in progress is kept here: [`Oidc::begin`] returns what the browser must carry
//! to the callback ([`Pending`], sealed in a cookie by the HTTP layer), so any admin behind a load
//! balancer can complete a sign-in another one started. What is cached (the provider's metadata and
//! keys) is the provider's, the same for every admin.

use crate::config::OidcConfig;
use crate::storage::{Db, JobUser, Role, StorageError};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;
use subtle::ConstantTimeEq;
use tokio::sync::Mutex;

/// The password column of a user created by an OpenID Connect sign-in: not 32 hexadecimal digits, so
/// no password's MD5 can ever equal it; an administrator may still give the user a password.
pub const NO_PASSWORD: &str = "!oidc";
/// Clock difference tolerated between the provider and this admin when checking `exp` and `iat`.
const LEEWAY_SECS: i64 = 60;
/// An unknown key id makes the provider's keys be read again at most this often: a token naming a key
/// that does not exist must not make every sign-in attempt call the provider.
const JWKS_REFRESH_MIN_MS: i64 = 10_000;
/// For each call to the provider; its pages are small.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);
/// The signature algorithms accepted: asymmetric only, so a provider's public key can never be used as
/// an HMAC secret.
const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];
/// `xxl_job_user.username` is VARCHAR(50).
const USERNAME_MAX_CHARS: usize = 50;

#[derive(Debug, thiserror::Error)]
pub enum OidcError {
    /// The provider could not be reached or answered something unusable.
    #[error("provider: {0}")]
    Provider(String),
    /// The ID token (or the callback carrying its code) was refused.
    #[error("refused: {0}")]
    Refused(String),
    /// The provider's answer to the authorization request: an error code and description.
    #[error("the provider answered {0}")]
    Denied(String),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// What a sign-in in progress must keep until the callback: compared there, then discarded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    pub state: String,
    pub nonce: String,
    pub verifier: String,
    /// The callback URL sent with the authorization request; the token request must repeat it.
    pub redirect_uri: String,
}

/// The signed-in user as the provider describes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub username: String,
    /// `None` when no groups claim is configured (roles are then set in the console).
    pub groups: Option<Vec<String>>,
}

/// The provider's endpoints, from its discovery document.
#[derive(Debug, Deserialize)]
struct Metadata {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    jwks_uri: String,
    userinfo_endpoint: Option<String>,
    #[serde(default)]
    token_endpoint_auth_methods_supported: Vec<String>,
}

#[derive(Default)]
struct KeyCache {
    keys: Vec<Jwk>,
    fetched_ms: Option<i64>,
}

pub struct Oidc {
    config: OidcConfig,
    http: reqwest::Client,
    metadata: Mutex<Option<Arc<Metadata>>>,
    keys: Mutex<KeyCache>,
}

fn random_token() -> String {
    URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>())
}

/// RFC 7636's S256 challenge of a verifier.
fn challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

fn same(a: &str, b: &str) -> bool {
    bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

impl Oidc {
    pub fn new(config: OidcConfig) -> Oidc {
        let http = reqwest::Client::builder().timeout(PROVIDER_TIMEOUT).build().unwrap_or_default();
        Oidc { config, http, metadata: Mutex::new(None), keys: Mutex::new(KeyCache::default()) }
    }

    pub fn config(&self) -> &OidcConfig {
        &self.config
    }

    /// The provider's metadata, read once from `{issuer}/.well-known/openid-configuration` (again after
    /// a failure, so an admin started while the provider was down recovers by itself).
    async fn metadata(&self) -> Result<Arc<Metadata>, OidcError> {
        let mut cached = self.metadata.lock().await;
        if let Some(metadata) = cached.as_ref() {
            return Ok(metadata.clone());
        }
        let url = format!("{}/.well-known/openid-configuration", self.config.issuer.trim_end_matches('/'));
        let metadata: Metadata = self.get_json(&url).await?;
        // OpenID Connect Discovery 4.3: the document must name the issuer it was read from.
        if metadata.issuer != self.config.issuer {
            return Err(OidcError::Provider(format!(
                "{url} names the issuer `{}`, not `{}`",
                metadata.issuer, self.config.issuer
            )));
        }
        let metadata = Arc::new(metadata);
        *cached = Some(metadata.clone());
        Ok(metadata)
    }

    async fn get_json<T: serde::de::DeserializeOwned>(&self, url: &str) -> Result<T, OidcError> {
        let failed = |e: reqwest::Error| OidcError::Provider(format!("GET {url}: {e}"));
        let response = self.http.get(url).send().await.map_err(failed)?.error_for_status().map_err(failed)?;
        response.json().await.map_err(failed)
    }

    /// Starts a sign-in: the provider's URL to send the browser to, and what the callback will need.
    pub async fn begin(&self, redirect_uri: &str) -> Result<(String, Pending), OidcError> {
        let metadata = self.metadata().await?;
        let pending = Pending {
            state: random_token(),
            nonce: random_token(),
            verifier: random_token(),
            redirect_uri: redirect_uri.to_string(),
        };
        let mut url = url::Url::parse(&metadata.authorization_endpoint)
            .map_err(|e| OidcError::Provider(format!("authorization_endpoint: {e}")))?;
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.config.client_id)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("scope", &self.config.scopes.join(" "))
            .append_pair("state", &pending.state)
            .append_pair("nonce", &pending.nonce)
            .append_pair("code_challenge", &challenge(&pending.verifier))
            .append_pair("code_challenge_method", "S256");
        Ok((url.into(), pending))
    }

    /// Completes a sign-in from the callback's `state` and `code`: the code is exchanged for tokens and
    /// the ID token checked against what [`Oidc::begin`] sent.
    pub async fn finish(
        &self,
        pending: &Pending,
        state: &str,
        code: &str,
        now_ms: i64,
    ) -> Result<Identity, OidcError> {
        if !same(state, &pending.state) {
            return Err(OidcError::Refused(
                "the state does not match the sign-in this browser started".into(),
            ));
        }
        let metadata = self.metadata().await?;
        let mut form = vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", pending.redirect_uri.as_str()),
            ("code_verifier", pending.verifier.as_str()),
        ];
        let mut request = self.http.post(&metadata.token_endpoint);
        match &self.config.client_secret {
            // client_secret_basic unless the provider only takes the secret in the form.
            Some(secret) if Self::secret_in_form(&metadata) => {
                form.extend([
                    ("client_id", self.config.client_id.as_str()),
                    ("client_secret", secret.expose()),
                ]);
            }
            Some(secret) => {
                // RFC 6749 2.3.1: both are form-encoded before they are joined.
                let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
                request = request.basic_auth(encode(&self.config.client_id), Some(encode(secret.expose())));
            }
            None => form.push(("client_id", self.config.client_id.as_str())),
        }
        let response = request
            .form(&form)
            .send()
            .await
            .map_err(|e| OidcError::Provider(format!("token request: {e}")))?;
        let status = response.status();
        let body: Value = response
            .json()
            .await
            .map_err(|e| OidcError::Provider(format!("token response ({status}): {e}")))?;
        if !status.is_success() {
            let error = body.get("error").and_then(Value::as_str).unwrap_or("an error");
            return Err(OidcError::Provider(format!("token request: HTTP {status}, {error}")));
        }
        let id_token = body
            .get("id_token")
            .and_then(Value::as_str)
            .ok_or_else(|| OidcError::Provider("the token response has no id_token".into()))?;
        let mut claims = self.verify(id_token, &pending.nonce, now_ms).await?;
        let access_token = body.get("access_token").and_then(Value::as_str);
        if let (Some(endpoint), Some(access_token)) = (&metadata.userinfo_endpoint, access_token) {
            self.add_userinfo(&mut claims, endpoint, access_token).await?;
        }
        self.identity(&claims)
    }

    /// Providers that keep the ID token small (oidc-provider, Okta's org server, Entra ID without
    /// optional claims) give the user name or groups at the userinfo endpoint only (Core 5.4): asked
    /// only when a configured claim is missing, and trusted only for the same `sub` (Core 5.3.2).
    async fn add_userinfo(
        &self,
        claims: &mut Map<String, Value>,
        endpoint: &str,
        access_token: &str,
    ) -> Result<(), OidcError> {
        let wanted = [Some(&self.config.username_claim), self.config.groups_claim.as_ref()];
        if wanted.into_iter().flatten().all(|claim| claims.contains_key(claim)) {
            return Ok(());
        }
        let failed = |e: reqwest::Error| OidcError::Provider(format!("userinfo: {e}"));
        let response = self
            .http
            .get(endpoint)
            .bearer_auth(access_token)
            .send()
            .await
            .map_err(failed)?
            .error_for_status()
            .map_err(failed)?;
        let info: Map<String, Value> = response.json().await.map_err(failed)?;
        if info.get("sub").is_none() || info.get("sub") != claims.get("sub") {
            return Err(OidcError::Refused(
                "the userinfo answer is about another subject than the ID token".into(),
            ));
        }
        for (name, value) in info {
            claims.entry(name).or_insert(value);
        }
        Ok(())
    }

    fn secret_in_form(metadata: &Metadata) -> bool {
        let methods = &metadata.token_endpoint_auth_methods_supported;
        !methods.is_empty()
            && !methods.iter().any(|m| m == "client_secret_basic")
            && methods.iter().any(|m| m == "client_secret_post")
    }

    /// The ID token's claims once its signature, issuer, audience, lifetime and nonce are checked
    /// (OpenID Connect Core 3.1.3.7).
    async fn verify(&self, token: &str, nonce: &str, now_ms: i64) -> Result<Map<String, Value>, OidcError> {
        let refused = |reason: String| OidcError::Refused(reason);
        let header = jsonwebtoken::decode_header(token).map_err(|e| refused(format!("not a JWT: {e}")))?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(refused(format!("signature algorithm {:?} is not accepted", header.alg)));
        }
        let key = self.key(header.kid.as_deref(), header.alg, now_ms).await?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&self.config.client_id]);
        validation.set_required_spec_claims(&["iss", "aud", "exp"]);
        // Times are checked below against the admin's clock.
        validation.validate_exp = false;
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation)
            .map_err(|e| refused(format!("ID token: {e}")))?;
        let claims = data.claims;
        let now = now_ms.div_euclid(1000);
        let time = |name: &str| claims.get(name).and_then(Value::as_i64);
        match time("exp") {
            Some(exp) if exp + LEEWAY_SECS > now => {}
            _ => return Err(refused("the ID token has expired".into())),
        }
        match time("iat") {
            Some(iat) if iat - LEEWAY_SECS <= now => {}
            Some(_) => return Err(refused("the ID token is issued in the future".into())),
            None => return Err(refused("the ID token has no iat".into())),
        }
        if time("nbf").is_some_and(|nbf| nbf - LEEWAY_SECS > now) {
            return Err(refused("the ID token is not valid yet".into()));
        }
        if !claims.get("nonce").and_then(Value::as_str).is_some_and(|n| same(n, nonce)) {
            return Err(refused("the nonce does not match the sign-in this browser started".into()));
        }
        // Core 3.1.3.7 items 4 and 5: with several audiences, the token must be meant for us.
        let audiences = claims.get("aud").and_then(Value::as_array).map_or(1, Vec::len);
        if audiences > 1 && claims.get("azp").and_then(Value::as_str) != Some(self.config.client_id.as_str())
        {
            return Err(refused("the ID token has several audiences and another authorized party".into()));
        }
        Ok(claims)
    }

    /// The provider's key named `kid` (or the only key for `alg` when the token names none), reading the
    /// keys again when it is unknown and they were not read within [`JWKS_REFRESH_MIN_MS`].
    async fn key(&self, kid: Option<&str>, alg: Algorithm, now_ms: i64) -> Result<DecodingKey, OidcError> {
        let mut cache = self.keys.lock().await;
        if let Some(key) = find_key(&cache.keys, kid, alg) {
            return key;
        }
        if cache.fetched_ms.is_some_and(|at| now_ms - at < JWKS_REFRESH_MIN_MS) {
            return Err(OidcError::Refused(format!(
                "no key {} among the provider's keys",
                kid.unwrap_or("(unnamed)")
            )));
        }
        let metadata = self.metadata().await?;
        let set: Value = self.get_json(&metadata.jwks_uri).await?;
        // One key of a type this library cannot read must not hide the others.
        cache.keys = set
            .get("keys")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|k| serde_json::from_value(k.clone()).ok())
            .collect();
        cache.fetched_ms = Some(now_ms);
        find_key(&cache.keys, kid, alg).unwrap_or_else(|| {
            Err(OidcError::Refused(format!(
                "no key {} among the provider's keys",
                kid.unwrap_or("(unnamed)")
            )))
        })
    }

    /// The user name and groups from the verified claims.
    fn identity(&self, claims: &Map<String, Value>) -> Result<Identity, OidcError> {
        let claim = &self.config.username_claim;
        let username = claims.get(claim).and_then(Value::as_str).map(str::trim).unwrap_or_default();
        if username.is_empty()
            || username.chars().count() > USERNAME_MAX_CHARS
            || username.chars().any(char::is_control)
        {
            return Err(OidcError::Refused(format!(
                "the claim `{claim}` is missing or is no user name of 1 to {USERNAME_MAX_CHARS} characters"
            )));
        }
        let groups = self.config.groups_claim.as_ref().map(|name| match claims.get(name) {
            Some(Value::Array(values)) => {
                values.iter().filter_map(Value::as_str).map(normalise_group).collect()
            }
            Some(Value::String(value)) => {
                value.split([',', ' ']).filter(|g| !g.is_empty()).map(normalise_group).collect()
            }
            _ => Vec::new(),
        });
        Ok(Identity { username: username.to_string(), groups })
    }

    /// The user's row after this sign-in: created on the first one (a normal user without executors
    /// unless the groups say otherwise), its role and executors replaced by the groups' on every one
    /// when a groups claim is configured, left as an administrator set them otherwise.
    pub async fn provision(&self, db: &Db, identity: &Identity) -> Result<JobUser, OidcError> {
        let rights = match &identity.groups {
            Some(groups) => Some(self.rights(db, groups).await?),
            None => None,
        };
        let existing = match db.load_user_by_name(&identity.username).await? {
            Some(user) => user,
            None => {
                let (role, permission) = rights.clone().unwrap_or_default();
                let user = JobUser {
                    id: 0,
                    username: identity.username.clone(),
                    password: NO_PASSWORD.to_string(),
                    role,
                    permission,
                };
                match db.insert_user(&user).await {
                    Ok(id) => return Ok(JobUser { id, ..user }),
                    // Created meanwhile by a sign-in on another admin (the name is unique): updated below.
                    Err(e) => db.load_user_by_name(&identity.username).await?.ok_or(e)?,
                }
            }
        };
        match rights {
            Some((role, permission)) if (role, &permission) != (existing.role, &existing.permission) => {
                db.update_user(existing.id, None, role, permission.as_deref()).await?;
                Ok(JobUser { role, permission, ..existing })
            }
            _ => Ok(existing),
        }
    }

    /// An administrator for a member of an administrators' group; the executors whose AppName is one of the
    /// groups, as the ascending id list `xxl_job_user.permission` holds.
    async fn rights(&self, db: &Db, groups: &[String]) -> Result<(Role, Option<String>), OidcError> {
        let admin = groups.iter().any(|g| self.config.admin_groups.contains(g));
        let mut ids: Vec<i32> = db
            .all_groups()
            .await?
            .into_iter()
            .filter(|e| groups.contains(&e.app_name))
            .map(|e| e.id)
            .collect();
        ids.sort_unstable();
        let permission =
            (!ids.is_empty()).then(|| ids.iter().map(i32::to_string).collect::<Vec<_>>().join(","));
        Ok((if admin { Role::Admin } else { Role::Normal }, permission))
    }
}

/// Keycloak writes group paths (`/ops`) when asked for full paths: the name is what follows the `/`.
fn normalise_group(group: &str) -> String {
    group.trim().trim_start_matches('/').to_string()
}

fn find_key(keys: &[Jwk], kid: Option<&str>, alg: Algorithm) -> Option<Result<DecodingKey, OidcError>> {
    let fits = |jwk: &&Jwk| {
        let family = matches!(
            (&jwk.algorithm, alg),
            (
                AlgorithmParameters::RSA(_),
                Algorithm::RS256
                    | Algorithm::RS384
                    | Algorithm::RS512
                    | Algorithm::PS256
                    | Algorithm::PS384
                    | Algorithm::PS512
            ) | (AlgorithmParameters::EllipticCurve(_), Algorithm::ES256 | Algorithm::ES384)
                | (AlgorithmParameters::OctetKeyPair(_), Algorithm::EdDSA)
        );
        family && kid.is_none_or(|kid| jwk.common.key_id.as_deref() == Some(kid))
    };
    let mut candidates = keys.iter().filter(fits);
    let jwk = candidates.next()?;
    // Without a key id, only an unambiguous key will do.
    if kid.is_none() && candidates.next().is_some() {
        return None;
    }
    Some(
        DecodingKey::from_jwk(jwk).map_err(|e| {
            OidcError::Refused(format!("the provider's key {}: {e}", kid.unwrap_or("(unnamed)")))
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_is_the_unpadded_base64url_sha256_of_the_verifier() {
        assert_eq!(
            challenge("dBjftJeZ4CVP-mJ92K9pvOf1_nGfyq9pPEy8kYlt4oQ"),
            "0XIh97UoSbl1-8IxCd_rNtkHOgZSmNDugRIP1XERCLc"
        );
    }

    #[test]
    fn no_md5_matches_the_password_of_oidc_users() {
        assert!(!NO_PASSWORD.chars().all(|c| c.is_ascii_hexdigit()) && NO_PASSWORD.len() != 32);
    }

    #[test]
    fn group_paths_lose_their_slash() {
        assert_eq!(normalise_group(" /ops "), "ops");
        assert_eq!(normalise_group("app-a"), "app-a");
    }
}
