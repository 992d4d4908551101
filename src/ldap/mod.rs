//! Console logins checked by an LDAP directory (docs/authentication.md, LDAP): the service account
//! (or an anonymous search) finds the user's entry and groups, then a simple bind as that entry with
//! the password given proves the password. Nothing is cached: each login asks the directory.

mod filter;

use crate::config::{LdapConfig, LdapTls};
use ldap3::{LdapConnAsync, LdapConnSettings, LdapError, Scope, SearchEntry};
use std::sync::Arc;
use std::time::Duration;

/// LDAP result code of a bind with a wrong password (or an unknown DN).
const INVALID_CREDENTIALS: u32 = 49;
/// Asks a search for no attributes (RFC 4511, 4.5.1.8).
const NO_ATTRIBUTES: &str = "1.1";

/// The configured directory, with its TLS trust settled at start.
pub struct Directory {
    config: LdapConfig,
    /// The configured CA file's trust; `None` = the crate's default, the system's trusted CAs.
    trust: Option<Arc<rustls::ClientConfig>>,
}

/// What the directory says of a name and password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The password is right.
    Accepted(DirectoryUser),
    /// The name is the directory's, the password is wrong (or empty, never sent).
    WrongPassword,
    /// No entry matches the name.
    UnknownUser,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectoryUser {
    pub dn: String,
    /// The DNs (or, from some attributes, names) of the user's groups.
    pub groups: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum LdapSetupError {
    #[error("xxl.job.auth.ldap.ca-file {path}: {reason}")]
    CaFile { path: String, reason: String },
}

/// The directory could not answer: unreachable, TLS refused, the service account refused, a search
/// failed, or no answer in time.
#[derive(Debug, thiserror::Error)]
#[error("LDAP {step}: {reason}")]
pub struct DirectoryError {
    step: &'static str,
    reason: String,
}

impl DirectoryError {
    fn at(step: &'static str) -> impl FnOnce(LdapError) -> DirectoryError {
        move |e| DirectoryError { step, reason: e.to_string() }
    }
}

impl Directory {
    /// Reads the CA file now, so a wrong one stops the start rather than every login.
    pub fn new(config: LdapConfig) -> Result<Directory, LdapSetupError> {
        let trust = config.ca_file.as_deref().map(trust_from).transpose()?;
        Ok(Directory { config, trust })
    }

    /// Whether names LDAP does not know, or every name while it cannot answer, may use their
    /// `xxl_job_user` password.
    pub fn falls_back_to_local(&self) -> bool {
        self.config.fallback_to_local
    }

    /// Checks `password` for `username`. An empty password is refused before any connection: a simple
    /// bind with a DN and no password is an "unauthenticated bind" that servers answer with success.
    pub async fn verify(&self, username: &str, password: &str) -> Result<Verdict, DirectoryError> {
        if password.is_empty() {
            return Ok(Verdict::WrongPassword);
        }
        let limit = Duration::from_millis(self.config.timeout_ms);
        tokio::time::timeout(limit, self.ask(username, password)).await.unwrap_or_else(|_| {
            Err(DirectoryError {
                step: "login",
                reason: format!("no answer from {} within {} ms", self.config.url, self.config.timeout_ms),
            })
        })
    }

    async fn ask(&self, username: &str, password: &str) -> Result<Verdict, DirectoryError> {
        let config = &self.config;
        let mut settings = LdapConnSettings::new()
            .set_conn_timeout(Duration::from_millis(config.timeout_ms))
            .set_starttls(config.tls == LdapTls::StartTls);
        if let Some(trust) = &self.trust {
            settings = settings.set_config(trust.clone());
        }
        let (connection, mut ldap) = LdapConnAsync::with_settings(settings, &config.url)
            .await
            .map_err(DirectoryError::at("connection"))?;
        ldap3::drive!(connection);
        if let Some((dn, password)) = &config.bind {
            ldap.simple_bind(dn, password.expose())
                .await
                .and_then(|r| r.success())
                .map_err(DirectoryError::at("bind of the service account"))?;
        }
        let user_filter = filter::fill(&config.user_filter, username, None);
        let attributes = match &config.group_base {
            Some(_) => vec![NO_ATTRIBUTES],
            None => vec![config.group_attribute.as_str()],
        };
        let (entries, _) = ldap
            .search(&config.user_base, Scope::Subtree, &user_filter, attributes)
            .await
            .and_then(|r| r.success())
            .map_err(DirectoryError::at("user search"))?;
        let entry = match <[_; 1]>::try_from(entries) {
            Ok([entry]) => SearchEntry::construct(entry),
            Err(entries) if entries.is_empty() => return Ok(Verdict::UnknownUser),
            Err(entries) => {
                // Which of them typed the password cannot be told: nobody logs in under this name.
                let reason =
                    format!("{} entries match {user_filter}; the filter must find one user", entries.len());
                return Err(DirectoryError { step: "user search", reason });
            }
        };
        // Before the user's bind, so the search runs with the service account's rights.
        let groups = match &config.group_base {
            Some(base) => {
                let group_filter = filter::fill(&config.group_filter, username, Some(&entry.dn));
                let (groups, _) = ldap
                    .search(base, Scope::Subtree, &group_filter, vec![NO_ATTRIBUTES])
                    .await
                    .and_then(|r| r.success())
                    .map_err(DirectoryError::at("group search"))?;
                groups.into_iter().map(|g| SearchEntry::construct(g).dn).collect()
            }
            None => entry
                .attrs
                .iter()
                .filter(|(name, _)| name.eq_ignore_ascii_case(&config.group_attribute))
                .flat_map(|(_, v)| v.clone())
                .collect(),
        };
        let bind =
            ldap.simple_bind(&entry.dn, password).await.map_err(DirectoryError::at("bind of the user"))?;
        let _ = ldap.unbind().await;
        match bind.rc {
            0 => Ok(Verdict::Accepted(DirectoryUser { dn: entry.dn, groups })),
            INVALID_CREDENTIALS => Ok(Verdict::WrongPassword),
            _ => Err(DirectoryError { step: "bind of the user", reason: bind.to_string() }),
        }
    }

    /// Whether the user is an administrator; `None` when no admin group is configured.
    pub fn is_admin(&self, user: &DirectoryUser) -> Option<bool> {
        self.config
            .admin_group
            .as_deref()
            .map(|admin| user.groups.iter().any(|g| filter::same_group(g, admin)))
    }

    /// The executor AppNames the user's groups are mapped to, each once, in configured order; `None`
    /// when no mapping is configured.
    pub fn executor_apps(&self, user: &DirectoryUser) -> Option<Vec<String>> {
        let mapping = self.config.group_executors.as_ref()?;
        let mut apps: Vec<String> = Vec::new();
        for (group, mapped) in mapping {
            if user.groups.iter().any(|g| filter::same_group(g, group)) {
                apps.extend(mapped.iter().filter(|a| !apps.contains(a)).cloned().collect::<Vec<_>>());
            }
        }
        Some(apps)
    }
}

/// Trust in exactly the CAs of a PEM file (a private directory's CA; the system's are not added).
fn trust_from(path: &std::path::Path) -> Result<Arc<rustls::ClientConfig>, LdapSetupError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;
    let failed = |reason: String| LdapSetupError::CaFile { path: path.display().to_string(), reason };
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(path).map_err(|e| failed(e.to_string()))? {
        roots.add(cert.map_err(|e| failed(e.to_string()))?).map_err(|e| failed(e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(failed("no certificate in it".into()));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| failed(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}
