//! How people sign in to the console (`xxl.job.auth.*`): the password form, and OpenID Connect
//! (docs/authentication.md).

use super::sections::http_url;
use super::sources::Sources;
use super::text::parse_bool;
use super::{ConfigError, Secret};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthConfig {
    /// `xxl.job.auth.password.enabled`: the console's user name and password form.
    pub password_enabled: bool,
    /// `None` when `xxl.job.auth.oidc.issuer` is not set.
    pub oidc: Option<OidcConfig>,
}

/// `xxl.job.auth.oidc.*`: one OpenID Provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcConfig {
    /// The issuer exactly as the provider writes it in its tokens (no trailing `/` added or removed).
    pub issuer: String,
    pub client_id: String,
    /// `None`: a public client, authenticated by PKCE alone.
    pub client_secret: Option<Secret>,
    /// The callback registered at the provider; `None` = derived from each request's host.
    pub redirect_uri: Option<String>,
    /// Always with `openid`.
    pub scopes: Vec<String>,
    /// Shown on the login page's button.
    pub provider_name: String,
    /// The ID token claim that names the user (`xxl_job_user.username`).
    pub username_claim: String,
    /// The claim listing the user's groups; `None` = roles and permissions are set in the console.
    pub groups_claim: Option<String>,
    /// Groups whose members are administrators (role 1).
    pub admin_groups: Vec<String>,
}

pub(crate) fn auth(src: &Sources) -> Result<AuthConfig, ConfigError> {
    let password_enabled = src.required("xxl.job.auth.password.enabled", parse_bool)?;
    let oidc = oidc(src)?;
    if !password_enabled && oidc.is_none() {
        let raw = src.defaulted("xxl.job.auth.password.enabled")?;
        return Err(raw.invalid(
            "nobody could sign in: configure xxl.job.auth.oidc.issuer, or keep the password login",
        ));
    }
    Ok(AuthConfig { password_enabled, oidc })
}

fn trimmed(src: &Sources, name: &'static str) -> Result<Option<String>, ConfigError> {
    Ok(src.text(name)?.map(|v| v.trim().to_string()).filter(|v| !v.is_empty()))
}

fn list(value: &str) -> Vec<String> {
    value.split([',', ' ']).map(str::trim).filter(|v| !v.is_empty()).map(str::to_string).collect()
}

fn oidc(src: &Sources) -> Result<Option<OidcConfig>, ConfigError> {
    let issuer = src.typed("xxl.job.auth.oidc.issuer", |s| http_url(s).map(|_| s.trim().to_string()))?;
    // Read whether used or not, so a bad value or a forgotten issuer is reported.
    let client_id = trimmed(src, "xxl.job.auth.oidc.client-id")?;
    let client_secret = trimmed(src, "xxl.job.auth.oidc.client-secret")?.map(Secret);
    let redirect_uri =
        src.typed("xxl.job.auth.oidc.redirect-uri", |s| http_url(s).map(|_| s.trim().to_string()))?;
    let mut scopes = list(&src.defaulted("xxl.job.auth.oidc.scopes")?.value);
    if !scopes.iter().any(|s| s == "openid") {
        scopes.insert(0, "openid".to_string());
    }
    let provider_name = src.required("xxl.job.auth.oidc.provider-name", |s| Ok(s.trim().to_string()))?;
    let username_claim = src.required("xxl.job.auth.oidc.username-claim", |s| Ok(s.trim().to_string()))?;
    let groups_claim = trimmed(src, "xxl.job.auth.oidc.groups-claim")?;
    let admin_groups = trimmed(src, "xxl.job.auth.oidc.admin-groups")?.map(|v| list(&v)).unwrap_or_default();
    let Some(issuer) = issuer else {
        if client_id.is_some() || client_secret.is_some() {
            let raw = src.raw("xxl.job.auth.oidc.client-id")?.or(src.raw("xxl.job.auth.oidc.client-secret")?);
            return Err(raw.expect("one of them is set").invalid("xxl.job.auth.oidc.issuer is needed too"));
        }
        return Ok(None);
    };
    let Some(client_id) = client_id else {
        let raw = src.defaulted("xxl.job.auth.oidc.issuer")?;
        return Err(raw.invalid("xxl.job.auth.oidc.client-id is needed too"));
    };
    if !admin_groups.is_empty() && groups_claim.is_none() {
        let raw = src.defaulted("xxl.job.auth.oidc.admin-groups")?;
        return Err(raw.invalid(
            "xxl.job.auth.oidc.groups-claim names the claim these groups are read from; it is not set",
        ));
    }
    Ok(Some(OidcConfig {
        issuer,
        client_id,
        client_secret,
        redirect_uri,
        scopes,
        provider_name,
        username_claim,
        groups_claim,
        admin_groups,
    }))
}

impl AuthConfig {
    /// For the start-up log; the client secret masked.
    pub(crate) fn summary(&self) -> Vec<(&'static str, String)> {
        let mut lines = vec![("xxl.job.auth.password.enabled", self.password_enabled.to_string())];
        let Some(oidc) = &self.oidc else {
            lines.push(("xxl.job.auth.oidc.issuer", "(not set: no OpenID Connect login)".to_string()));
            return lines;
        };
        let mapping = match &oidc.groups_claim {
            Some(claim) => format!("from claim `{claim}`, administrators: {}", oidc.admin_groups.join(",")),
            None => "set in the console".to_string(),
        };
        lines.extend([
            ("xxl.job.auth.oidc.issuer", oidc.issuer.clone()),
            ("xxl.job.auth.oidc.client-id", oidc.client_id.clone()),
            (
                "xxl.job.auth.oidc.client-secret",
                oidc.client_secret
                    .as_ref()
                    .map_or("(not set: a public client)".to_string(), Secret::to_string),
            ),
            (
                "xxl.job.auth.oidc.redirect-uri",
                oidc.redirect_uri
                    .clone()
                    .unwrap_or_else(|| "(not set: from each request's host)".to_string()),
            ),
            ("xxl.job.auth.oidc.scopes", oidc.scopes.join(" ")),
            ("xxl.job.auth.oidc.username-claim", oidc.username_claim.clone()),
            ("xxl.job.auth.oidc roles and permissions", mapping),
        ]);
        lines
    }
}
