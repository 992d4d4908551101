//! The one table of configuration keys: it drives defaults, `--help`, environment names and the
//! detection of unknown keys.

/// A key we read.
pub(crate) struct KeySpec {
    /// Spelled as in the Java admin's shipped `application.properties`.
    pub name: &'static str,
    /// The value used when no source sets the key, written as a user would write it.
    pub default: Option<&'static str>,
    pub help: &'static str,
    /// The value must never appear in messages.
    pub secret: bool,
}

const fn key(name: &'static str, default: Option<&'static str>, help: &'static str) -> KeySpec {
    KeySpec { name, default, help, secret: false }
}

const fn secret(name: &'static str, default: Option<&'static str>, help: &'static str) -> KeySpec {
    KeySpec { name, default, help, secret: true }
}

pub(crate) const KEYS: &[KeySpec] = &[
    key("server.port", Some("8080"), "HTTP port; 0 picks a free port"),
    key("server.address", Some("0.0.0.0"), "IP address to listen on"),
    key("server.servlet.context-path", Some("/xxl-job-admin"), "URL prefix of the console and /api; / for none"),
    key(
        "server.forward-headers-strategy",
        Some("none"),
        "none: the client address is the socket peer; native: X-Forwarded-For from internal proxies; framework: from any peer",
    ),
    key("management.server.servlet.context-path", Some("/actuator"), "prefix of the health and prometheus endpoints under the context path"),
    key(
        "management.endpoint.prometheus.enabled",
        Some("true"),
        "serve metrics at {management path}/prometheus; false also stops counting them",
    ),
    key(
        "spring.datasource.url",
        Some("sqlite:xxl-job-admin.db"),
        "database: jdbc:mysql://HOST:PORT/DB?..., mysql://USER:PASS@HOST/DB, jdbc:mariadb://..., jdbc:postgresql://HOST:PORT/DB?..., postgres://USER:PASS@HOST/DB, sqlite:PATH, sqlite::memory:",
    ),
    key("spring.datasource.username", None, "database user (when not set: root on MySQL, postgres on PostgreSQL)"),
    secret("spring.datasource.password", None, "database password"),
    key("spring.datasource.hikari.maximum-pool-size", Some("30"), "most open database connections (at least 1)"),
    key("spring.datasource.hikari.minimum-idle", Some("10"), "idle connections kept open (at most maximum-pool-size)"),
    key("spring.datasource.hikari.connection-timeout", Some("10000"), "ms to wait for a free connection (at least 250; 0 = no limit)"),
    key("spring.datasource.hikari.idle-timeout", Some("30000"), "ms before an idle connection above minimum-idle is closed (0 = never)"),
    key("spring.datasource.hikari.max-lifetime", Some("900000"), "ms before a connection is replaced (0 = never; at least 30000)"),
    key("spring.datasource.hikari.validation-timeout", Some("1000"), "ms allowed for a connection liveness check (at least 250)"),
    key("spring.mail.host", None, "SMTP server; without it no alarm e-mail is sent"),
    key("spring.mail.port", Some("25"), "SMTP port (465 when the protocol is smtps and no port is set)"),
    key("spring.mail.protocol", Some("smtp"), "smtp, or smtps for TLS from the first byte"),
    key("spring.mail.username", None, "SMTP user"),
    secret("spring.mail.password", None, "SMTP password"),
    key("spring.mail.from", None, "sender address of alarm e-mails (default: spring.mail.username)"),
    key("spring.mail.properties.mail.smtp.auth", Some("false"), "SMTP AUTH (also done whenever username and password are set, as JavaMail does)"),
    key("spring.mail.properties.mail.smtp.starttls.enable", Some("false"), "upgrade to TLS with STARTTLS when the server offers it"),
    key("spring.mail.properties.mail.smtp.starttls.required", Some("false"), "refuse to send without STARTTLS"),
    key("spring.mail.properties.mail.smtp.socketFactory.class", None, "javax.net.ssl.SSLSocketFactory = TLS from the first byte"),
    key("spring.mail.properties.mail.smtp.ssl.enable", Some("false"), "TLS from the first byte"),
    key("spring.mail.properties.mail.smtp.ssl.trust", None, "SMTP hosts (space-separated, * for all) whose certificate is not checked"),
    key("spring.mail.properties.mail.smtp.timeout", None, "ms; the longer of the two bounds the connect, nine times it a whole message"),
    key("spring.mail.properties.mail.smtp.connectiontimeout", None, "ms; see mail.smtp.timeout (default 15000 for both)"),
    secret("xxl.job.accessToken", Some("default_token"), "token shared with executors; empty disables the check"),
    secret(
        "xxl.job.session.secret",
        None,
        "key of console sessions, at least 32 characters, the same on every admin; default: a random one kept in the database",
    ),
    key(
        "xxl.job.console.trusted-origins",
        None,
        "origins (scheme://host[:port], comma-separated) whose pages may change data in the console besides its own, e.g. a front end served elsewhere",
    ),
    key("xxl.job.registry.max-per-app", Some("4000"), "most executor registrations kept per AppName (at least 1)"),
    key("xxl.job.registry.max-apps", Some("1000"), "most distinct AppNames that no executor group has executors may register (at least 1); a new one past it is refused"),
    key("xxl.job.registry.max-apps-per-address", Some("100"), "of those AppNames, most one client address may register (at least 1); a new one past it is refused"),
    key("xxl.job.i18n", Some("zh_CN"), "language: zh_CN, zh_TC or en"),
    key("xxl.job.triggerpool.fast.max", Some("200"), "fast trigger pool size (values below 200 mean 200)"),
    key("xxl.job.triggerpool.slow.max", Some("100"), "slow trigger pool size (values below 100 mean 100)"),
    key(
        "xxl.job.apply.file",
        None,
        "a jobs-as-code file (.json, .toml) or a folder of them, applied at every start (docs/jobs-as-code.md)",
    ),
    key(
        "xxl.job.audit.file",
        None,
        "audit trail: a JSON-lines file every change and sign-in is appended to, created if missing (docs/audit.md); not set = no file",
    ),
    // May carry a token in its path or query: never shown.
    secret("xxl.job.audit.webhook.url", None, "audit trail: an http(s) URL each audit event is POSTed to as JSON, in the background"),
    key("xxl.job.logretentiondays", Some("30"), "days of job logs kept; below 7 disables cleaning"),
    key(
        "xxl.job.alarm.console-url",
        None,
        "console URL in alarm messages, e.g. https://jobs.example.com/xxl-job-admin (default: this host's address, port and context path)",
    ),
    key(
        "spring.lifecycle.timeout-per-shutdown-phase",
        Some("10s"),
        "how long a stop (SIGTERM, Ctrl-C) waits for planned fires and in-flight work, as a duration (500ms, 10s, 1m); then the admin exits, and what is left is taken over as after a crash; a second signal exits at once",
    ),
    key(
        "xxl.job.auth.ldap.url",
        None,
        "LDAP server for console logins, ldap://HOST[:PORT] or ldaps://HOST[:PORT]; set, the user name and password of /login are checked by LDAP (docs/authentication.md)",
    ),
    key("xxl.job.auth.ldap.starttls", Some("true"), "ldap:// URLs: upgrade to TLS with StartTLS before any bind; false sends passwords in clear text"),
    key("xxl.job.auth.ldap.ca-file", None, "PEM file of the CA(s) that sign the LDAP server's certificate (default: the system's trusted CAs)"),
    key("xxl.job.auth.ldap.bind-dn", None, "DN of the service account that searches for users; not set: anonymous search"),
    secret("xxl.job.auth.ldap.bind-password", None, "password of the service account"),
    key("xxl.job.auth.ldap.user-search-base", None, "DN under which users are searched (required with the url)"),
    key("xxl.job.auth.ldap.user-search-filter", Some("(uid={0})"), "filter finding the user; {0} is the escaped login name (Active Directory: (sAMAccountName={0}))"),
    key("xxl.job.auth.ldap.group-search-base", None, "DN under which groups are searched; not set: groups come from the user's group-attribute"),
    key(
        "xxl.job.auth.ldap.group-search-filter",
        Some("(member={dn})"),
        "filter finding the user's groups; {dn} is the user's escaped DN, {0} the escaped login name",
    ),
    key("xxl.job.auth.ldap.group-attribute", Some("memberOf"), "attribute of the user entry naming its groups, when no group-search-base is set"),
    key("xxl.job.auth.ldap.admin-group", None, "group (name or DN) whose members are administrators; not set: the role stays as an admin set it"),
    key(
        "xxl.job.auth.ldap.group-executors",
        None,
        "executors each group may use: GROUP=APPNAME[,APPNAME...] entries separated by ;, e.g. ops=order-app,billing-app;dev=sample-app; not set: the permissions stay as an admin set them",
    ),
    key(
        "xxl.job.auth.ldap.fallback-to-local",
        Some("false"),
        "true: a name LDAP does not know, or any name while LDAP is unreachable, may log in with its password in xxl_job_user",
    ),
    key("xxl.job.auth.ldap.timeout", Some("5000"), "ms allowed for one LDAP login (connect, binds and searches)"),
    key("xxl.job.auth.password.enabled", Some("true"), "console sign-in with a user name and password; false leaves OpenID Connect only"),
    key("xxl.job.auth.oidc.issuer", None, "OpenID Connect: the provider's issuer URL (its /.well-known/openid-configuration is read); set to enable the login"),
    key("xxl.job.auth.oidc.client-id", None, "OpenID Connect: the client id registered for this console"),
    secret("xxl.job.auth.oidc.client-secret", None, "OpenID Connect: the client secret; not set = a public client (PKCE only)"),
    key(
        "xxl.job.auth.oidc.redirect-uri",
        None,
        "OpenID Connect: the callback to register, https://HOST/CONTEXT/auth/oidc/callback (default: from each request's Host and X-Forwarded-Proto)",
    ),
    key("xxl.job.auth.oidc.scopes", Some("openid profile"), "OpenID Connect: scopes asked for, space- or comma-separated (openid is always added)"),
    key("xxl.job.auth.oidc.provider-name", Some("OpenID Connect"), "OpenID Connect: the name on the login page's button"),
    key("xxl.job.auth.oidc.username-claim", Some("preferred_username"), "OpenID Connect: the ID token claim used as the user name"),
    key(
        "xxl.job.auth.oidc.groups-claim",
        None,
        "OpenID Connect: the ID token claim listing the user's groups; set, every sign-in sets the role (admin-groups) and the executors (groups named as their AppName); not set, an administrator sets them",
    ),
    key("xxl.job.auth.oidc.admin-groups", None, "OpenID Connect: groups whose members are administrators, comma-separated"),
    key("logging.level.root", Some("info"), "log level: trace, debug, info, warn, error or off"),
    key("logging.level.com.xxl.job", None, "log level of the admin's own messages"),
];

/// Alarm channels are named by the user: `xxl.job.alarm.webhook.<name>.<field>`.
pub(crate) const WEBHOOK_PREFIX: &str = "xxl.job.alarm.webhook.";
/// Spring's environment form of [`WEBHOOK_PREFIX`]: `XXL_JOB_ALARM_WEBHOOK_<NAME>_<FIELD>`.
pub(crate) const WEBHOOK_ENV_PREFIX: &str = "XXL_JOB_ALARM_WEBHOOK_";

/// The fields of one webhook channel; `name` is the last segment of the key.
pub(crate) const WEBHOOK_FIELDS: &[KeySpec] = &[
    key("type", None, "alarm channel <name>: dingtalk, wecom, feishu, slack or json"),
    // The URL carries the robot's token (DingTalk, WeCom, Slack): never shown.
    secret("url", None, "its webhook URL (http or https)"),
    secret("secret", None, "signing secret of a DingTalk or Feishu robot with signature checks"),
    key("groups", None, "executor AppNames whose failed jobs it is told about, comma-separated; * = all"),
    key("timeout", Some("5000"), "ms per delivery attempt (three attempts)"),
];

/// The channel name (canonical) and field of a webhook key, if `name` is one.
pub(crate) fn webhook_field(name: &str) -> Option<(String, &'static KeySpec)> {
    let rest = canonical(name).strip_prefix(&canonical(WEBHOOK_PREFIX))?.to_string();
    let (channel, field) = rest.rsplit_once('.')?;
    if channel.is_empty() || channel.contains('.') {
        return None;
    }
    let spec = WEBHOOK_FIELDS.iter().find(|f| canonical(f.name) == field)?;
    Some((channel.to_string(), spec))
}

/// Keys of the Java admin's shipped configuration (and their relatives) that mean nothing here. They are
/// accepted without a warning so an unchanged Java configuration starts cleanly. An entry ending in `.`
/// is a prefix; keys in [`KEYS`] under these prefixes are still read.
pub(crate) const IGNORED: &[&str] = &[
    "spring.mvc.",
    "spring.resources.",
    "spring.web.",
    "spring.freemarker.",
    "spring.application.",
    "spring.datasource.hikari.",
    "spring.datasource.driver-class-name",
    "spring.datasource.type",
    "spring.mail.properties.",
    "spring.mail.default-encoding",
    "mybatis.",
    "management.",
    "logging.",
    "server.",
];

/// Spring's relaxed form of a property name: case-insensitive, `-` and `_` carry no meaning.
pub(crate) fn canonical(name: &str) -> String {
    name.chars().filter(|c| *c != '-' && *c != '_').flat_map(char::to_lowercase).collect()
}

pub(crate) fn find(name: &str) -> Option<&'static KeySpec> {
    let wanted = canonical(name);
    KEYS.iter().find(|k| canonical(k.name) == wanted)
}

pub(crate) fn is_ignored(name: &str) -> bool {
    let name = canonical(name);
    IGNORED.iter().any(|entry| {
        let entry = canonical(entry);
        if entry.ends_with('.') {
            name.starts_with(&entry)
        } else {
            name == entry
        }
    })
}

impl KeySpec {
    /// Spring's environment-variable name: upper case, `.` → `_`, `-` dropped (`SERVER_SERVLET_CONTEXTPATH`).
    pub(crate) fn env_name(&self) -> String {
        self.name
            .chars()
            .filter(|c| *c != '-')
            .map(|c| if c == '.' { '_' } else { c.to_ascii_uppercase() })
            .collect()
    }

    /// The spelling people guess for dashed keys (`SERVER_SERVLET_CONTEXT_PATH`), if it differs.
    pub(crate) fn env_alias(&self) -> Option<String> {
        self.name.contains('-').then(|| {
            self.name
                .chars()
                .map(|c| if c == '.' || c == '-' { '_' } else { c.to_ascii_uppercase() })
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_names_follow_spring() {
        let env = |name: &str| find(name).unwrap().env_name();
        assert_eq!(env("spring.datasource.url"), "SPRING_DATASOURCE_URL");
        assert_eq!(env("server.servlet.context-path"), "SERVER_SERVLET_CONTEXTPATH");
        assert_eq!(env("xxl.job.accessToken"), "XXL_JOB_ACCESSTOKEN");
        assert_eq!(
            env("spring.mail.properties.mail.smtp.socketFactory.class"),
            "SPRING_MAIL_PROPERTIES_MAIL_SMTP_SOCKETFACTORY_CLASS"
        );
        let alias = |name: &str| find(name).unwrap().env_alias();
        assert_eq!(alias("server.servlet.context-path").as_deref(), Some("SERVER_SERVLET_CONTEXT_PATH"));
        assert_eq!(
            alias("spring.datasource.hikari.maximum-pool-size").as_deref(),
            Some("SPRING_DATASOURCE_HIKARI_MAXIMUM_POOL_SIZE")
        );
        assert_eq!(alias("server.port"), None);
    }

    #[test]
    fn relaxed_names_find_one_key() {
        for spelling in
            ["xxl.job.accessToken", "xxl.job.access-token", "xxl.job.accesstoken", "XXL.JOB.ACCESS_TOKEN"]
        {
            assert_eq!(find(spelling).map(|k| k.name), Some("xxl.job.accessToken"), "{spelling}");
        }
        assert_eq!(find("server.servlet.contextPath").map(|k| k.name), Some("server.servlet.context-path"));
        assert!(find("xxl.job.accessTokens").is_none());
    }

    #[test]
    fn ignored_prefixes_and_exact_keys() {
        assert!(is_ignored("spring.datasource.hikari.pool-name"));
        assert!(is_ignored("spring.datasource.driverClassName"));
        assert!(is_ignored("mybatis.mapper-locations"));
        assert!(is_ignored("management.health.mail.enabled"));
        assert!(!is_ignored("spring.datasource.driver-class-name-x"));
        assert!(!is_ignored("spring.datasource.urls"));
        assert!(!is_ignored("xxl.job.foo"));
        assert!(!is_ignored("mybatis"));
    }

    #[test]
    fn webhook_keys_name_a_channel_and_a_field() {
        let field = |name: &str| webhook_field(name).map(|(channel, spec)| (channel, spec.name));
        assert_eq!(field("xxl.job.alarm.webhook.ops.url"), Some(("ops".into(), "url")));
        assert_eq!(field("XXL.JOB.ALARM.WEBHOOK.Ops-Team.Type"), Some(("opsteam".into(), "type")));
        assert_eq!(field("xxl.job.alarm.webhook.ops.colour"), None);
        assert_eq!(field("xxl.job.alarm.webhook.url"), None);
        assert_eq!(field("xxl.job.alarm.webhook.a.b.url"), None);
    }

    #[test]
    fn table_is_consistent() {
        for (i, spec) in KEYS.iter().enumerate() {
            assert!(
                KEYS[..i].iter().all(|k| canonical(k.name) != canonical(spec.name)),
                "{} twice",
                spec.name
            );
            let env = spec.env_name();
            assert!(KEYS.iter().filter(|k| k.env_name() == env).count() == 1, "{env} is ambiguous");
            assert!(!spec.help.is_empty());
        }
    }
}
