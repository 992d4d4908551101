//! `xxl.job.auth.ldap.*`: console logins checked by an LDAP directory (docs/authentication.md, LDAP).

use super::sources::Sources;
use super::text::parse_bool;
use super::{ConfigError, Secret};
use std::fmt;
use std::path::{Path, PathBuf};

/// Where the directory is and how users and their groups are found in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LdapConfig {
    /// `ldap://` or `ldaps://`, host and optional port; nothing else.
    pub url: String,
    /// How the connection is protected (never unverified TLS).
    pub tls: LdapTls,
    /// PEM file of the trusted CAs (absolute); `None` = the system's.
    pub ca_file: Option<PathBuf>,
    /// The service account; `None` = anonymous search.
    pub bind: Option<(String, Secret)>,
    pub user_base: String,
    /// Contains `{0}`.
    pub user_filter: String,
    /// `None`: groups are read from `group_attribute` of the user entry.
    pub group_base: Option<String>,
    /// Contains `{dn}` or `{0}`.
    pub group_filter: String,
    pub group_attribute: String,
    /// Name or DN; `None` = the role is left as an admin set it.
    pub admin_group: Option<String>,
    /// Group (name or DN) → executor AppNames, in configured order; `None` = permissions left alone.
    pub group_executors: Option<Vec<(String, Vec<String>)>>,
    pub fallback_to_local: bool,
    pub timeout_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LdapTls {
    /// `ldaps://`: TLS from the first byte.
    Ldaps,
    /// `ldap://` upgraded by StartTLS before any bind.
    StartTls,
    /// `ldap://` as is: passwords in clear text, only when configured so.
    None,
}

impl fmt::Display for LdapConfig {
    /// One line for the start-up log: no password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tls = match self.tls {
            LdapTls::Ldaps => "LDAPS",
            LdapTls::StartTls => "StartTLS",
            LdapTls::None => "no TLS (passwords in clear text)",
        };
        let ca =
            self.ca_file.as_ref().map_or("system CAs".to_string(), |f| format!("CAs from {}", f.display()));
        let bind =
            self.bind.as_ref().map_or("anonymous search".to_string(), |(dn, _)| format!("search as {dn}"));
        let groups = match &self.group_base {
            Some(base) => format!("groups {} under {base}", self.group_filter),
            None => format!("groups from {}", self.group_attribute),
        };
        write!(
            f,
            "{} ({tls}, {ca}), {bind}, users {} under {}, {groups}, admin group {}, group executors {}, fallback to local {}, timeout {} ms",
            self.url,
            self.user_filter,
            self.user_base,
            self.admin_group.as_deref().unwrap_or("(not set)"),
            self.group_executors.as_ref().map_or("(not set)".to_string(), |m| format_mapping(m)),
            self.fallback_to_local,
            self.timeout_ms
        )
    }
}

fn format_mapping(mapping: &[(String, Vec<String>)]) -> String {
    mapping.iter().map(|(group, apps)| format!("{group}={}", apps.join(","))).collect::<Vec<_>>().join(";")
}

/// A login taking longer than this could not even finish a TLS handshake; longer than this holds a
/// request for minutes.
const TIMEOUT_RANGE_MS: (u64, u64) = (100, 120_000);

/// `None` unless `xxl.job.auth.ldap.url` is set. Every key is read either way, so a bad value is
/// reported even while LDAP is off.
pub(crate) fn ldap(
    src: &Sources,
    cwd: &Path,
    warnings: &mut Vec<String>,
) -> Result<Option<LdapConfig>, ConfigError> {
    let text = |name: &'static str| -> Result<Option<String>, ConfigError> {
        Ok(src.text(name)?.map(|v| v.trim().to_string()).filter(|v| !v.is_empty()))
    };
    let url_raw = src.raw("xxl.job.auth.ldap.url")?.filter(|raw| !raw.value.trim().is_empty());
    let starttls = src.required("xxl.job.auth.ldap.starttls", parse_bool)?;
    let ca_file = text("xxl.job.auth.ldap.ca-file")?.map(|f| cwd.join(f));
    let bind_dn = text("xxl.job.auth.ldap.bind-dn")?;
    let bind_password = src.raw("xxl.job.auth.ldap.bind-password")?.filter(|raw| !raw.value.is_empty());
    let user_base = text("xxl.job.auth.ldap.user-search-base")?;
    let user_filter = src.required("xxl.job.auth.ldap.user-search-filter", |s| filter(s, &["{0}"]))?;
    let group_base = text("xxl.job.auth.ldap.group-search-base")?;
    let group_filter =
        src.required("xxl.job.auth.ldap.group-search-filter", |s| filter(s, &["{dn}", "{0}"]))?;
    let group_attribute = src.defaulted("xxl.job.auth.ldap.group-attribute")?.value.trim().to_string();
    let admin_group = text("xxl.job.auth.ldap.admin-group")?;
    let group_executors = src.typed("xxl.job.auth.ldap.group-executors", group_executors)?;
    let fallback_to_local = src.required("xxl.job.auth.ldap.fallback-to-local", parse_bool)?;
    let timeout_ms = src.required("xxl.job.auth.ldap.timeout", |s| {
        let ms: u64 = s.trim().parse().map_err(|_| "expected a whole number of ms".to_string())?;
        let (min, max) = TIMEOUT_RANGE_MS;
        if (min..=max).contains(&ms) {
            Ok(ms)
        } else {
            Err(format!("expected {min} to {max} (ms)"))
        }
    })?;
    let Some(url_raw) = url_raw else { return Ok(None) };
    let (url, ldaps) = server_url(&url_raw.value).map_err(|reason| url_raw.invalid(reason))?;
    let tls = match (ldaps, starttls) {
        (true, _) => LdapTls::Ldaps,
        (false, true) => LdapTls::StartTls,
        (false, false) => {
            warnings.push(format!(
                "xxl.job.auth.ldap.starttls=false with {url}: console passwords cross the network to the LDAP server in clear text"
            ));
            LdapTls::None
        }
    };
    let Some(user_base) = user_base else {
        return Err(url_raw.invalid("xxl.job.auth.ldap.user-search-base is required with an LDAP url"));
    };
    // A DN without a password is an unauthenticated bind, which servers accept as anonymous: say so.
    let bind = match (bind_dn, bind_password) {
        (Some(dn), Some(password)) => Some((dn, Secret(password.value))),
        (None, None) => None,
        (Some(_), None) => {
            return Err(
                url_raw.invalid("xxl.job.auth.ldap.bind-dn is set without xxl.job.auth.ldap.bind-password")
            )
        }
        (None, Some(password)) => return Err(password.invalid("set without xxl.job.auth.ldap.bind-dn")),
    };
    Ok(Some(LdapConfig {
        url,
        tls,
        ca_file,
        bind,
        user_base,
        user_filter,
        group_base,
        group_filter,
        group_attribute,
        admin_group,
        group_executors,
        fallback_to_local,
        timeout_ms,
    }))
}

/// `scheme://host[:port]` without user, path or query (they would be silently ignored), and whether
/// it is `ldaps`.
fn server_url(s: &str) -> Result<(String, bool), String> {
    let url = url::Url::parse(s.trim()).map_err(|e| format!("not a URL: {e}"))?;
    let ldaps = match url.scheme() {
        "ldap" => false,
        "ldaps" => true,
        _ => return Err("expected an ldap:// or ldaps:// URL".into()),
    };
    let bare = url.username().is_empty()
        && url.password().is_none()
        && matches!(url.path(), "" | "/")
        && url.query().is_none();
    let Some(host) = url.host_str().filter(|_| bare) else {
        return Err("expected ldap://HOST[:PORT] or ldaps://HOST[:PORT], nothing more".into());
    };
    let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
    Ok((format!("{}://{host}{port}", url.scheme()), ldaps))
}

/// A filter template: parenthesised, with at least one of `placeholders`.
fn filter(s: &str, placeholders: &[&str]) -> Result<String, String> {
    let s = s.trim();
    if !(s.starts_with('(') && s.ends_with(')')) {
        return Err("an LDAP filter is enclosed in parentheses, e.g. (uid={0})".into());
    }
    if !placeholders.iter().any(|p| s.contains(p)) {
        return Err(format!("the filter must contain {}", placeholders.join(" or ")));
    }
    Ok(s.to_string())
}

/// `GROUP=APP[,APP...]` entries separated by `;`; GROUP may be a DN (split at the last `=`, since
/// AppNames have none).
fn group_executors(s: &str) -> Result<Vec<(String, Vec<String>)>, String> {
    let mut mapping = Vec::new();
    for entry in s.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        let Some((group, apps)) = entry.rsplit_once('=') else {
            return Err(format!("`{entry}` is not GROUP=APPNAME[,APPNAME...]"));
        };
        let apps: Vec<String> =
            apps.split(',').map(str::trim).filter(|a| !a.is_empty()).map(str::to_string).collect();
        if group.trim().is_empty() || apps.is_empty() {
            return Err(format!("`{entry}` names no group or no AppName"));
        }
        mapping.push((group.trim().to_string(), apps));
    }
    Ok(mapping)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_ldap_or_ldaps_and_bare() {
        assert_eq!(server_url("ldap://dir.example.com"), Ok(("ldap://dir.example.com".into(), false)));
        assert_eq!(server_url(" ldaps://127.0.0.1:6360/ "), Ok(("ldaps://127.0.0.1:6360".into(), true)));
        for bad in ["http://dir", "ldap://u:p@dir", "ldap://dir/dc=x", "ldap://dir?x", "dir:389"] {
            assert!(server_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn filters_need_parentheses_and_a_placeholder() {
        assert_eq!(filter(" (uid={0}) ", &["{0}"]).as_deref(), Ok("(uid={0})"));
        assert!(filter("uid={0}", &["{0}"]).is_err());
        assert!(filter("(uid=alice)", &["{0}"]).is_err());
        assert!(filter("(memberUid={0})", &["{dn}", "{0}"]).is_ok());
    }

    #[test]
    fn group_executors_read_as_documented() {
        let mapping = group_executors("ops=order-app, billing-app ; dev=sample-app;").unwrap();
        assert_eq!(
            mapping,
            vec![
                ("ops".into(), vec!["order-app".into(), "billing-app".into()]),
                ("dev".into(), vec!["sample-app".into()])
            ]
        );
        assert_eq!(format_mapping(&mapping), "ops=order-app,billing-app;dev=sample-app");
        let by_dn = group_executors("cn=ops,ou=groups,dc=example,dc=com=order-app,billing-app").unwrap();
        assert_eq!(
            by_dn,
            vec![(
                "cn=ops,ou=groups,dc=example,dc=com".into(),
                vec!["order-app".into(), "billing-app".into()]
            )]
        );
        assert!(group_executors("ops").is_err());
        assert!(group_executors("ops=").is_err());
        assert!(group_executors("=app").is_err());
    }
}
