//! Configuration, read the way the Java admin (a Spring Boot application) reads it: built-in defaults <
//! a `.properties` file < environment variables < `--key=value` arguments, with Spring's key names,
//! relaxed matching and placeholders, so an existing xxl-job-admin configuration works unchanged.

mod auth;
mod jdbc;
mod keys;
mod ldap;
mod properties;
mod sections;
mod sources;
#[cfg(test)]
mod tests;
mod text;

pub use auth::{AuthConfig, OidcConfig};
use chrono_tz::Tz;
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
    /// `xxl.job.registry.max-apps`: distinct AppNames executors may register.
    pub registry_max_apps: u32,
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

    /// The effective settings, one per line, secrets masked: for the start-up log.
    pub fn redacted_summary(&self) -> String {
        let none = || "(not set)".to_string();
        let ms = |v: Option<u64>, absent: &str| v.map_or(absent.to_string(), |ms| format!("{ms} ms"));
        let ds = &self.datasource;
        let pool = &ds.pool;
        let mail = &self.mail;
        let database = match &ds.target {
            DbTarget::MySql { servers, database, ssl_mode, connect_timeout_ms, socket_timeout_ms } => {
                format!(
                    "mysql://{servers}/{database} (sslMode {ssl_mode:?}, connectTimeout {}, socketTimeout {})",
                    ms(*connect_timeout_ms, "default"),
                    ms(*socket_timeout_ms, "none")
                )
            }
            DbTarget::Sqlite { path: SqlitePath::File(file) } => format!("sqlite:{}", file.display()),
            DbTarget::Sqlite { path: SqlitePath::Memory } => "sqlite::memory:".to_string(),
            DbTarget::Postgres { servers, database, ssl_mode, schema, settings } => {
                let settings: Vec<String> =
                    settings.iter().map(|(name, value)| format!("{name}={value}")).collect();
                format!(
                    "postgres://{servers}/{database} (sslmode {ssl_mode:?}, targetServerType {:?}, schema {}, settings [{}])",
                    servers.target,
                    schema.as_deref().unwrap_or("default"),
                    settings.join(" ")
                )
            }
        };
        let tls = if mail.implicit_tls {
            "implicit TLS"
        } else if mail.starttls_required {
            "STARTTLS required"
        } else if mail.starttls_enable {
            "STARTTLS when offered"
        } else {
            "none"
        };
        let pools = &self.trigger_pool;
        let mut lines = vec![
            ("server.port", self.server.port.to_string()),
            ("server.address", self.server.address.to_string()),
            ("server.servlet.context-path", display_path(&self.server.context_path)),
            ("management.server.servlet.context-path", display_path(&self.server.management_context_path)),
            ("server.forward-headers-strategy", format!("{:?}", self.server.forward_headers).to_lowercase()),
            ("management.endpoint.prometheus.enabled", self.server.prometheus.to_string()),
            ("spring.datasource.url", database),
            ("database time zone", ds.time_zone.map_or("this machine's zone".to_string(), |tz| tz.name().to_string())),
            // What storage::connect logs in to MySQL with when no user is set.
            ("spring.datasource.username", ds.username.clone().unwrap_or_else(|| "(not set; MySQL: root)".to_string())),
            ("spring.datasource.password", ds.password.as_ref().map_or_else(none, Secret::to_string)),
            (
                "spring.datasource.hikari",
                format!(
                    "maximum-pool-size {}, minimum-idle {}, connection-timeout {} ms, idle-timeout {}, max-lifetime {}, validation-timeout {} ms",
                    pool.max_size,
                    pool.min_idle,
                    pool.connection_timeout_ms,
                    ms(pool.idle_timeout_ms, "never"),
                    ms(pool.max_lifetime_ms, "never"),
                    pool.validation_timeout_ms
                ),
            ),
            (
                "spring.mail.host",
                mail.host.as_ref().map_or("(not set: alarm e-mails are not sent)".to_string(), |h| format!("{h}:{}", mail.port)),
            ),
            ("spring.mail.username", mail.username.clone().unwrap_or_else(none)),
            ("spring.mail.password", mail.password.as_ref().map_or_else(none, Secret::to_string)),
            ("spring.mail.from", mail.from.clone().unwrap_or_else(none)),
            (
                "spring.mail.properties",
                format!("TLS: {tls}, auth: {}, timeout: {}", mail.auth, ms(mail.timeout_ms, "default")),
            ),
            (
                "xxl.job.accessToken",
                if self.access_token.is_blank() { "(empty: no token check)".to_string() } else { self.access_token.to_string() },
            ),
            (
                "xxl.job.session.secret",
                self.session_secret.as_ref().map_or("(not set: a random one kept in the database)".to_string(), Secret::to_string),
            ),
            (
                "xxl.job.console.trusted-origins",
                if self.trusted_origins.is_empty() { "(none: the console's own origin only)".to_string() } else { self.trusted_origins.join(", ") },
            ),
            ("xxl.job.registry.max-per-app", self.registry_max_per_app.to_string()),
            ("xxl.job.registry.max-apps", self.registry_max_apps.to_string()),
            ("xxl.job.i18n", self.i18n.code().to_string()),
            ("xxl.job.triggerpool.fast.max", effective(pools.fast_max, pools.fast_max_configured)),
            ("xxl.job.triggerpool.slow.max", effective(pools.slow_max, pools.slow_max_configured)),
            (
                "xxl.job.logretentiondays",
                self.log_retention_days.map_or("(log cleaning disabled)".to_string(), |d| d.to_string()),
            ),
            ("spring.lifecycle.timeout-per-shutdown-phase", format!("{:?}", self.shutdown_grace)),
            ("logging.level", self.log_filter.clone()),
            ("xxl.job.apply.file", self.apply_file.as_ref().map_or_else(none, |f| f.display().to_string())),
            ("xxl.job.audit.file", self.audit.file.as_ref().map_or("(not set: audit events go to the log only)".to_string(), |f| f.display().to_string())),
            ("xxl.job.audit.webhook.url", self.audit.webhook.as_ref().map_or_else(none, |url| redact_url(url.expose()))),
            (
                "xxl.job.alarm.console-url",
                self.alarm.console_url.clone().unwrap_or_else(|| "(not set: this host's address)".to_string()),
            ),
            ("xxl.job.auth.ldap", self.ldap.as_ref().map_or("(not set: console passwords are checked in xxl_job_user)".to_string(), LdapConfig::to_string)),
        ];
        let webhooks: Vec<(String, String)> = self
            .alarm
            .webhooks
            .iter()
            .map(|w| (format!("xxl.job.alarm.webhook.{}", w.name), w.summary()))
            .collect();
        lines.extend(self.auth.summary());
        lines.extend(webhooks.iter().map(|(key, value)| (key.as_str(), value.clone())));
        lines.iter().map(|(key, value)| format!("{key} = {value}\n")).collect()
    }
}

fn display_path(path: &str) -> String {
    if path.is_empty() {
        "/".to_string()
    } else {
        path.to_string()
    }
}

fn effective(effective: u32, configured: i32) -> String {
    if i64::from(effective) == i64::from(configured) {
        effective.to_string()
    } else {
        format!("{effective} (configured {configured})")
    }
}

/// The commands of the `xxl-job-admin` binary, for `--help`: name and one line of meaning.
const COMMANDS: [(&str, &str); 6] = [
    ("serve", "run the admin: console, executor API and scheduler (the default)"),
    ("export", "write executors and jobs as a document: export [--group APP]... [-o FILE.json|FILE.toml]"),
    (
        "apply",
        "create and update executors and jobs from a document: apply -f FILE|FOLDER [--dry-run] [--prune]",
    ),
    ("cron", "print the next fire times of a cron expression (cron --help)"),
    ("help", "print this help (also -h, --help)"),
    ("version", "print the version (also -V, --version)"),
];

/// `--help` text, wrapped to `width` columns: usage, the commands, the sources in order of precedence,
/// and every key we read with its environment variable, default and meaning.
pub fn help_text(width: usize) -> String {
    let mut out = wrap("Usage: ", "xxl-job-admin [serve] [--config PATH] [--KEY=VALUE ...]", width, 21);
    out.push_str(&wrap("       ", "xxl-job-admin COMMAND [ARGS ...]", width, 21));
    out.push_str("\nCommands:\n");
    let name_width = COMMANDS.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    for (name, meaning) in COMMANDS {
        out.push_str(&wrap(&format!("  {name:<name_width$}  "), meaning, width, 4 + name_width));
    }
    out.push_str(&wrap(
        "",
        "There is no bench command: the benchmark is a program of its own, built beside this one \
         (cargo build --release makes target/release/xxl-job-bench); see xxl-job-bench --help.",
        width,
        0,
    ));
    out.push_str("\nSettings come from these sources; later ones win:\n");
    for source in [
        "1. built-in defaults (below)",
        "2. a .properties file: --config PATH or --spring.config.location=PATH (or the environment variable \
         SPRING_CONFIG_LOCATION; `file:` and `optional:` prefixes work, a directory means \
         DIR/application.properties); otherwise ./application.properties and ./config/application.properties \
         when present, the latter winning",
        "3. environment variables named as below (SERVER_SERVLET_CONTEXT_PATH style is accepted too)",
        "4. arguments --KEY=VALUE (a bare --KEY sets an empty value)",
    ] {
        out.push_str(&wrap("  ", source, width, 5));
    }
    out.push_str(&wrap(
        "",
        "Keys match as in Spring Boot: case-insensitive, `-` and `_` ignored. Values may contain ${NAME} or \
         ${NAME:default} placeholders, looked up among the keys and the environment variables.",
        width,
        0,
    ));
    out.push_str("\nKeys (environment variable, default):\n");
    let webhook_fields = keys::WEBHOOK_FIELDS.iter().map(|f| {
        (
            format!("{}<name>.{}", keys::WEBHOOK_PREFIX, f.name),
            format!("{}<NAME>_{}", keys::WEBHOOK_ENV_PREFIX, f.name.to_ascii_uppercase()),
            f.default,
            f.help,
        )
    });
    let rows = keys::KEYS
        .iter()
        .map(|k| (k.name.to_string(), k.env_name(), k.default, k.help))
        .chain(webhook_fields);
    for (name, env, default, help) in rows {
        let default = default.map_or(String::new(), |d| format!(", default {d}"));
        out.push_str(&wrap("  ", &format!("{name} ({env}{default})"), width, 6));
        out.push_str(&wrap("      ", help, width, 6));
    }
    let ignored: Vec<String> = keys::IGNORED
        .iter()
        .map(|k| if k.ends_with('.') { format!("{k}*") } else { k.to_string() })
        .collect();
    out.push('\n');
    let ignored = format!(
        "Accepted without effect (Java admin settings that do not apply here), apart from the keys above: {}",
        ignored.join(", ")
    );
    out.push_str(&wrap("", &ignored, width, 0));
    out
}

/// `lead` then `text`, as lines of at most `width` columns broken between words, the lines after the
/// first indented by `indent`. A word longer than a line gets a line of its own.
fn wrap(lead: &str, text: &str, width: usize, indent: usize) -> String {
    let mut out = String::new();
    let mut line = lead.to_string();
    let mut empty = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if !empty && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line = " ".repeat(indent);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}
