//! Configuration, read the way the Java admin (a Spring Boot application) reads it: built-in defaults <
//! a `.properties` file < environment variables < `--key=value` arguments, with Spring's key names,
//! relaxed matching and placeholders, so an existing xxl-job-admin configuration works unchanged.

mod auth;
mod help;
mod jdbc;
mod keys;
mod ldap;
mod properties;
mod sections;
mod sources;
mod summary;
#[cfg(test)]
mod tests;
mod text;

pub use auth::{AuthConfig, OidcConfig};
use chrono_tz::Tz;
pub use help::help_text;
pub use ldap::{LdapConfig, LdapTls};
use sources::Sources;
use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub server: ServerConfig,
    pub datasource: DataSourceConfig,
    pub mail: MailConfig,
    pub alarm: AlarmConfig,
    /// `xxl.job.accessToken`; blank disables the token check both ways.
    pub access_token: Secret,
    /// `xxl.job.session.secret`: the key of console sessions; `None` = one kept in the database.
    pub session_secret: Option<Secret>,
    /// `xxl.job.console.trusted-origins`: other origins whose pages may change data, as
    /// `scheme://host[:port]` (the form of an `Origin` header; default ports left out).
    pub trusted_origins: Vec<String>,
    /// `xxl.job.registry.max-per-app`: registrations kept per AppName.
    pub registry_max_per_app: u32,
    /// `xxl.job.registry.max-apps`: distinct AppNames no group has that executors may register.
    pub registry_max_apps: u32,
    /// `xxl.job.registry.max-apps-per-address`: of those, how many one client address may register.
    pub registry_max_apps_per_address: u32,
    pub i18n: Lang,
    pub trigger_pool: TriggerPoolConfig,
    /// `None` when log cleaning is disabled (`xxl.job.logretentiondays` below 7).
    pub log_retention_days: Option<u32>,
    /// How long a stop waits for in-flight work before the process exits.
    pub shutdown_grace: std::time::Duration,
    /// A `tracing` filter directive string built from `logging.level.*`.
    pub log_filter: String,
    /// `xxl.job.apply.file`: a jobs-as-code file or folder applied at start.
    pub apply_file: Option<std::path::PathBuf>,
    /// `xxl.job.auth.ldap.*`: `None` unless an LDAP server is configured.
    pub ldap: Option<LdapConfig>,
    pub audit: AuditConfig,
    /// `xxl.job.auth.*`: how people sign in to the console.
    pub auth: AuthConfig,
}

/// Where audit events go besides the log (`xxl.job.audit.*`, docs/audit.md).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AuditConfig {
    /// `xxl.job.audit.file`, absolute; `None` = no file.
    pub file: Option<PathBuf>,
    /// `xxl.job.audit.webhook.url`: a secret, as the URL may carry a token.
    pub webhook: Option<Secret>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    pub port: u16,
    pub address: IpAddr,
    /// `""` for the root, otherwise `/a/b` (leading `/`, no trailing `/`).
    pub context_path: String,
    /// Same form; the health endpoint's prefix under `context_path`.
    pub management_context_path: String,
    /// `server.forward-headers-strategy`: whether `X-Forwarded-For` names the client.
    pub forward_headers: ForwardHeaders,
    /// `management.endpoint.prometheus.enabled`: metrics are counted and served.
    pub prometheus: bool,
}

/// Spring's `server.forward-headers-strategy`, as it decides whose `X-Forwarded-For` is believed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForwardHeaders {
    /// The socket peer is the client; forwarding headers are ignored.
    None,
    /// Tomcat's `RemoteIpValve`: believed when the peer is an internal (private or loopback) address.
    Native,
    /// Spring's `ForwardedHeaderFilter`: believed from any peer.
    Framework,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataSourceConfig {
    pub target: DbTarget,
    pub username: Option<String>,
    pub password: Option<Secret>,
    pub pool: PoolConfig,
    /// The zone DATETIME columns are written and read in, as Connector/J does for 2.4.2 (see
    /// README.md#point-it-at-your-existing-xxl-job-database); `None` = this machine's zone.
    pub time_zone: Option<Tz>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbTarget {
    MySql {
        servers: Servers,
        database: String,
        ssl_mode: SslMode,
        connect_timeout_ms: Option<u64>,
        /// `None` = no timeout.
        socket_timeout_ms: Option<u64>,
    },
    Sqlite {
        path: SqlitePath,
    },
    Postgres {
        servers: Servers,
        database: String,
        ssl_mode: SslMode,
        /// `currentSchema`: the schema (search path) the tables are in; `None` = the server's default.
        schema: Option<String>,
        /// Run-time settings from `options=-c name=value …`, sent when connecting.
        settings: Vec<(String, String)>,
    },
}

/// The hosts of a server URL, in the order written, and how the admin chooses among them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Servers {
    /// Never empty.
    pub hosts: Vec<HostPort>,
    /// Which server may take the admin's connections (pgJDBC's `targetServerType`).
    pub target: TargetServer,
    /// After a move away from the first host, how often it is tried again (Connector/J's
    /// `secondsBeforeRetryMaster`); `None` = never.
    pub retry_first_after_secs: Option<u64>,
}

impl Servers {
    /// One host, no conditions: what a plain single-server URL names.
    pub fn single(host: &str, port: u16) -> Servers {
        Servers {
            hosts: vec![HostPort { host: host.to_string(), port }],
            target: TargetServer::Any,
            retry_first_after_secs: None,
        }
    }

    /// The first host, where the admin connects when all are up.
    pub fn first(&self) -> &HostPort {
        &self.hosts[0]
    }
}

impl fmt::Display for Servers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hosts: Vec<String> = self.hosts.iter().map(HostPort::to_string).collect();
        f.write_str(&hosts.join(","))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPort {
    pub host: String,
    pub port: u16,
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// pgJDBC's `targetServerType`, as far as an admin that writes can use it; MySQL URLs are always `Any`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetServer {
    /// The first reachable host, whatever its role.
    Any,
    /// Only a server that takes writes (not in recovery).
    Primary,
    /// A server that takes writes if one is reachable, else the first reachable host.
    PreferPrimary,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlitePath {
    /// Absolute (relative paths are resolved against the working directory at load).
    File(PathBuf),
    Memory,
}

/// MySQL Connector/J's `sslMode` values (libpq's `sslmode` maps onto them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disabled,
    Preferred,
    Required,
    VerifyCa,
    VerifyIdentity,
}

/// `spring.datasource.hikari.*`, after HikariCP's own validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolConfig {
    pub max_size: u32,
    /// Never above `max_size`.
    pub min_idle: u32,
    pub connection_timeout_ms: u64,
    /// `None` = idle connections are never closed.
    pub idle_timeout_ms: Option<u64>,
    /// `None` = connections are never retired for age.
    pub max_lifetime_ms: Option<u64>,
    pub validation_timeout_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailConfig {
    /// `None`: alarm e-mails cannot be sent.
    pub host: Option<String>,
    pub port: u16,
    pub username: Option<String>,
    pub password: Option<Secret>,
    /// The sender address; `spring.mail.username` when `spring.mail.from` is not set.
    pub from: Option<String>,
    /// Authenticate (also true whenever username and password are both set, as JavaMail does).
    pub auth: bool,
    pub starttls_enable: bool,
    pub starttls_required: bool,
    /// TLS from the first byte (SMTPS).
    pub implicit_tls: bool,
    /// `mail.smtp.ssl.trust`: hosts (space-separated, or `*`) whose certificate is not verified.
    pub ssl_trust: Option<String>,
    /// Connect and read timeout; `None` = the mail client's default.
    pub timeout_ms: Option<u64>,
}

/// Alarm channels besides e-mail (`xxl.job.alarm.*`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AlarmConfig {
    /// `xxl.job.alarm.console-url` without a trailing `/`; `None`: derived from this host at start-up.
    pub console_url: Option<String>,
    /// In name order.
    pub webhooks: Vec<WebhookConfig>,
}

/// One `xxl.job.alarm.webhook.<name>.*` channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookConfig {
    /// Canonical (lower case, without `-` and `_`), as Spring relaxes keys: jobs name it `webhook:<name>`.
    pub name: String,
    pub kind: WebhookKind,
    /// A secret: robot URLs carry their access token.
    pub url: Secret,
    /// DingTalk and Feishu signed robots only.
    pub secret: Option<Secret>,
    /// Executor AppNames whose failed jobs come here whatever the job names; `*` is every group.
    pub groups: Vec<String>,
    pub timeout_ms: u64,
}

impl WebhookConfig {
    /// For the start-up log: the URL's host only, since its path and query carry the token.
    fn summary(&self) -> String {
        let host = url::Url::parse(self.url.expose())
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default();
        let groups =
            if self.groups.is_empty() { "jobs naming it".to_string() } else { self.groups.join(",") };
        let signed = if self.secret.is_some() { ", signed" } else { "" };
        format!("{} to {host}{signed}, groups: {groups}, timeout {} ms", self.kind.name(), self.timeout_ms)
    }

    /// The URL as the console shows it (see [`redact_url`]).
    pub fn redacted_url(&self) -> String {
        redact_url(self.url.expose())
    }

    /// Whether failed jobs of the executor `app_name` go to this channel by configuration.
    pub fn covers(&self, app_name: &str) -> bool {
        self.groups.iter().any(|g| g == "*" || g == app_name)
    }
}

/// A URL as it may be shown: scheme, host, port and the path's plain words; every other path segment,
/// every query value and a password become `***`, since robots and webhooks carry their token in any of
/// them (`/robot/send?access_token=…`, `/bot/v2/hook/…`, `/services/T…/B…/…`).
pub fn redact_url(url: &str) -> String {
    const HIDDEN: &str = "***";
    let Ok(url) = url::Url::parse(url) else { return HIDDEN.to_string() };
    let word = |segment: &str| {
        segment.is_empty()
            || (segment.len() <= 24 && segment.chars().all(|c| c.is_ascii_lowercase() || "-_.".contains(c)))
            || (segment.len() <= 3
                && segment.starts_with('v')
                && segment[1..].chars().all(|c| c.is_ascii_digit()))
    };
    let mut shown = format!("{}://", url.scheme());
    if !url.username().is_empty() {
        shown.push_str(url.username());
        shown.push_str(if url.password().is_some() { ":***@" } else { "@" });
    }
    shown.push_str(url.host_str().unwrap_or(""));
    if let Some(port) = url.port() {
        shown.push_str(&format!(":{port}"));
    }
    let path: Vec<&str> = url.path().split('/').map(|s| if word(s) { s } else { HIDDEN }).collect();
    shown.push_str(&path.join("/"));
    let query: Vec<String> = url.query_pairs().map(|(key, _)| format!("{key}={HIDDEN}")).collect();
    if !query.is_empty() {
        shown.push('?');
        shown.push_str(&query.join("&"));
    }
    shown
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebhookKind {
    DingTalk,
    WeCom,
    Feishu,
    Slack,
    Json,
}

impl WebhookKind {
    pub const ALL: [WebhookKind; 5] = [
        WebhookKind::DingTalk,
        WebhookKind::WeCom,
        WebhookKind::Feishu,
        WebhookKind::Slack,
        WebhookKind::Json,
    ];

    /// The value of `.type`.
    pub fn name(&self) -> &'static str {
        match self {
            WebhookKind::DingTalk => "dingtalk",
            WebhookKind::WeCom => "wecom",
            WebhookKind::Feishu => "feishu",
            WebhookKind::Slack => "slack",
            WebhookKind::Json => "json",
        }
    }

    /// Whether the vendor signs with a secret.
    pub fn signs(&self) -> bool {
        matches!(self, WebhookKind::DingTalk | WebhookKind::Feishu)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriggerPoolConfig {
    /// Effective sizes: the configured values raised to 200 and 100 as the Java admin does.
    pub fast_max: u32,
    pub slow_max: u32,
    pub fast_max_configured: i32,
    pub slow_max_configured: i32,
}

/// A value that must not reach logs or messages: `Debug` and `Display` print a mask.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Blank as the Java admin tests it (`trim().length() == 0`).
    pub fn is_blank(&self) -> bool {
        self.0.trim().is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("******")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("******")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    ZhCn,
    ZhTc,
    En,
}

impl Lang {
    pub fn code(&self) -> &'static str {
        match self {
            Lang::ZhCn => "zh_CN",
            Lang::ZhTc => "zh_TC",
            Lang::En => "en",
        }
    }
}

/// Every message names the key or file at fault; values of secret keys are never included.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{key}: invalid value{} ({origin}): {reason}", shown(.value))]
    Invalid { key: &'static str, value: Option<String>, origin: String, reason: String },
    #[error("{key}: invalid value{} ({origin}): {reason}", shown(.value))]
    Webhook { key: String, value: Option<String>, origin: String, reason: String },
    #[error("{key} ({origin}): {reason}")]
    Placeholder { key: &'static str, origin: String, reason: String },
    #[error("configuration location `{location}`: {reason}")]
    Location { location: String, reason: String },
    #[error("configuration file {} does not exist", .0.display())]
    FileNotFound(PathBuf),
    #[error("cannot read configuration file {}: {source}", .path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}:{line}: {message}", .path.display())]
    Syntax { path: PathBuf, line: usize, message: String },
    #[error("command line: {0}")]
    Argument(String),
}

fn shown(value: &Option<String>) -> String {
    value.as_ref().map(|v| format!(" `{v}`")).unwrap_or_default()
}

#[derive(Debug)]
pub struct Loaded {
    pub config: Config,
    /// For the caller to log: unknown keys, adjusted values, ignored URL parameters.
    pub warnings: Vec<String>,
    /// The properties file with the highest precedence that was read.
    pub source_file: Option<PathBuf>,
}

impl Config {
    /// `args` are the process arguments after the program name (and any subcommand); `env` is the
    /// process environment; relative paths are taken from `cwd`.
    pub fn load(
        args: &[String],
        env: impl IntoIterator<Item = (String, String)>,
        cwd: &Path,
    ) -> Result<Loaded, ConfigError> {
        let sources = Sources::gather(args, env, cwd)?;
        let mut warnings = Vec::new();
        let config = Config {
            server: sections::server(&sources)?,
            datasource: sections::datasource(&sources, cwd, &mut warnings)?,
            mail: sections::mail(&sources, &mut warnings)?,
            alarm: sections::alarm(&sources, &mut warnings)?,
            access_token: sections::access_token(&sources)?,
            session_secret: sections::session_secret(&sources)?,
            trusted_origins: sections::trusted_origins(&sources)?,
            registry_max_per_app: sections::at_least_one(&sources, "xxl.job.registry.max-per-app")?,
            registry_max_apps: sections::at_least_one(&sources, "xxl.job.registry.max-apps")?,
            registry_max_apps_per_address: sections::at_least_one(
                &sources,
                "xxl.job.registry.max-apps-per-address",
            )?,
            i18n: sections::lang(&sources, &mut warnings)?,
            trigger_pool: sections::trigger_pool(&sources)?,
            log_retention_days: sections::log_retention_days(&sources)?,
            shutdown_grace: sections::shutdown_grace(&sources)?,
            log_filter: sections::log_filter(&sources)?,
            apply_file: sources
                .text("xxl.job.apply.file")?
                .filter(|f| !f.trim().is_empty())
                .map(|f| cwd.join(f.trim())),
            ldap: ldap::ldap(&sources, cwd, &mut warnings)?,
            audit: sections::audit(&sources, cwd)?,
            auth: auth::auth(&sources)?,
        };
        let (mut all_warnings, source_file) = sources.finish();
        all_warnings.append(&mut warnings);
        Ok(Loaded { config, warnings: all_warnings, source_file })
    }
}
