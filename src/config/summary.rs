//! The effective settings as the start-up log shows them: one line per setting, secrets masked.

use super::{redact_url, Config, DbTarget, LdapConfig, Secret, SqlitePath};

/// One line of the summary: the key (or group of keys) and what it is set to.
type Line = (&'static str, String);

impl Config {
    /// The effective settings, one per line, secrets masked: for the start-up log.
    pub fn redacted_summary(&self) -> String {
        let mut lines = self.server_lines();
        lines.extend(self.datasource_lines());
        lines.extend(self.mail_lines());
        lines.extend(self.scheduler_lines());
        lines.extend(self.auth.summary());
        let webhooks =
            self.alarm.webhooks.iter().map(|w| (format!("xxl.job.alarm.webhook.{}", w.name), w.summary()));
        lines
            .iter()
            .map(|(key, value)| format!("{key} = {value}\n"))
            .chain(webhooks.map(|(key, value)| format!("{key} = {value}\n")))
            .collect()
    }

    fn server_lines(&self) -> Vec<Line> {
        let server = &self.server;
        vec![
            ("server.port", server.port.to_string()),
            ("server.address", server.address.to_string()),
            ("server.servlet.context-path", display_path(&server.context_path)),
            ("management.server.servlet.context-path", display_path(&server.management_context_path)),
            ("server.forward-headers-strategy", format!("{:?}", server.forward_headers).to_lowercase()),
            ("management.endpoint.prometheus.enabled", server.prometheus.to_string()),
        ]
    }

    fn datasource_lines(&self) -> Vec<Line> {
        let ds = &self.datasource;
        let pool = &ds.pool;
        let zone = ds.time_zone.map_or("this machine's zone".to_string(), |tz| tz.name().to_string());
        vec![
            ("spring.datasource.url", self.database()),
            ("database time zone", zone),
            // What storage::connect logs in to MySQL with when no user is set.
            (
                "spring.datasource.username",
                ds.username.clone().unwrap_or_else(|| "(not set; MySQL: root)".to_string()),
            ),
            ("spring.datasource.password", ds.password.as_ref().map_or_else(none, Secret::to_string)),
            (
                "spring.datasource.hikari",
                format!(
                    "maximum-pool-size {}, minimum-idle {}, connection-timeout {} ms, idle-timeout {}, \
                     max-lifetime {}, validation-timeout {} ms",
                    pool.max_size,
                    pool.min_idle,
                    pool.connection_timeout_ms,
                    ms(pool.idle_timeout_ms, "never"),
                    ms(pool.max_lifetime_ms, "never"),
                    pool.validation_timeout_ms
                ),
            ),
        ]
    }

    /// `spring.datasource.url` as understood: the backend, its servers and the options read from the URL.
    fn database(&self) -> String {
        match &self.datasource.target {
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
                    "postgres://{servers}/{database} (sslmode {ssl_mode:?}, targetServerType {:?}, schema {}, \
                     settings [{}])",
                    servers.target,
                    schema.as_deref().unwrap_or("default"),
                    settings.join(" ")
                )
            }
        }
    }

    fn mail_lines(&self) -> Vec<Line> {
        let mail = &self.mail;
        let tls = if mail.implicit_tls {
            "implicit TLS"
        } else if mail.starttls_required {
            "STARTTLS required"
        } else if mail.starttls_enable {
            "STARTTLS when offered"
        } else {
            "none"
        };
        vec![
            (
                "spring.mail.host",
                mail.host.as_ref().map_or("(not set: alarm e-mails are not sent)".to_string(), |h| {
                    format!("{h}:{}", mail.port)
                }),
            ),
            ("spring.mail.username", mail.username.clone().unwrap_or_else(none)),
            ("spring.mail.password", mail.password.as_ref().map_or_else(none, Secret::to_string)),
            ("spring.mail.from", mail.from.clone().unwrap_or_else(none)),
            (
                "spring.mail.properties",
                format!("TLS: {tls}, auth: {}, timeout: {}", mail.auth, ms(mail.timeout_ms, "default")),
            ),
        ]
    }

    /// The `xxl.job.*` settings of the scheduler and the console, and the admin's own lifecycle and logs.
    fn scheduler_lines(&self) -> Vec<Line> {
        let pools = &self.trigger_pool;
        vec![
            (
                "xxl.job.accessToken",
                if self.access_token.is_blank() {
                    "(empty: no token check)".to_string()
                } else {
                    self.access_token.to_string()
                },
            ),
            (
                "xxl.job.session.secret",
                self.session_secret
                    .as_ref()
                    .map_or("(not set: a random one kept in the database)".to_string(), Secret::to_string),
            ),
            (
                "xxl.job.console.trusted-origins",
                if self.trusted_origins.is_empty() {
                    "(none: the console's own origin only)".to_string()
                } else {
                    self.trusted_origins.join(", ")
                },
            ),
            ("xxl.job.registry.max-per-app", self.registry_max_per_app.to_string()),
            ("xxl.job.registry.max-apps", self.registry_max_apps.to_string()),
            ("xxl.job.registry.max-apps-per-address", self.registry_max_apps_per_address.to_string()),
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
            (
                "xxl.job.audit.file",
                self.audit
                    .file
                    .as_ref()
                    .map_or("(not set: audit events go to the log only)".to_string(), |f| {
                        f.display().to_string()
                    }),
            ),
            (
                "xxl.job.audit.webhook.url",
                self.audit.webhook.as_ref().map_or_else(none, |url| redact_url(url.expose())),
            ),
            (
                "xxl.job.alarm.console-url",
                self.alarm
                    .console_url
                    .clone()
                    .unwrap_or_else(|| "(not set: this host's address)".to_string()),
            ),
            (
                "xxl.job.auth.ldap",
                self.ldap.as_ref().map_or(
                    "(not set: console passwords are checked in xxl_job_user)".to_string(),
                    LdapConfig::to_string,
                ),
            ),
        ]
    }
}

fn none() -> String {
    "(not set)".to_string()
}

/// Milliseconds, or `absent` when not set.
fn ms(value: Option<u64>, absent: &str) -> String {
    value.map_or(absent.to_string(), |ms| format!("{ms} ms"))
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
