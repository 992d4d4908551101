//! MySQL Connector/J, MariaDB Connector/J and sqlx-style `mysql://` URLs, and the Connector/J parameters we honour.

use super::{decode, Datasource, ServerUrl};
use crate::config::{DbTarget, Servers, SslMode, TargetServer};
use crate::time::parse_zone;
use chrono_tz::Tz;

const MYSQL_DEFAULT_PORT: u16 = 3306;
/// Connector/J's default `secondsBeforeRetryMaster`.
const DEFAULT_RETRY_FIRST_SECS: u64 = 30;

/// `jdbc:mysql:[flavour:]//[user[:password]@]host[:port][,host2...]/database[?params]`, `scheme_end`
/// being the offset after `mysql:`/`mariadb:`.
pub(super) fn parse(url: &str, scheme_end: usize) -> Result<Datasource, String> {
    let mut warnings = Vec::new();
    let mut offset = scheme_end;
    let mut replication = false;
    // Connector/J's and MariaDB's multi-host flavours. All but `replication:` use every host, one at a
    // time in the order written (see `Servers`): spreading a scheduler's locking transactions over several
    // servers gains nothing, and on Galera it turns row locks into certification conflicts.
    for flavour in ["loadbalance:", "replication:", "failover:", "sequential:", "aurora:"] {
        if url[offset..].to_ascii_lowercase().starts_with(flavour) {
            replication |= flavour == "replication:";
            offset += flavour.len();
        }
    }
    let parts = ServerUrl::split(url, offset)?;
    if parts.hosts.contains('(') {
        return Err("the `address=(...)` host syntax is not supported; write host:port".into());
    }
    let mut hosts = parts.hosts(MYSQL_DEFAULT_PORT)?;
    if replication && hosts.len() > 1 {
        // The replicas of a replication URL only serve read-only connections; the admin's are read-write.
        hosts.truncate(1);
        warnings.push(format!(
            "spring.datasource.url: a replication URL's replicas take no writes; only its source {} is used",
            hosts[0]
        ));
    }
    let database = parts.database()?;
    let (mut username, mut password) = (parts.username, parts.password);

    let mut params = Params::parse(parts.query)?;
    let time_zone = params.time_zone()?;
    if let Some(user) = params.user.take() {
        username = Some(user);
    }
    if let Some(pass) = params.password.take() {
        password = Some(pass);
    }
    if params.fail_over_read_only == Some(true) && hosts.len() > 1 {
        warnings.push(
            "spring.datasource.url: failOverReadOnly=true is not followed: the admin must write, so it writes \
             on whichever host it moved to"
                .into(),
        );
    }
    warnings.append(&mut params.warnings);
    let servers = Servers {
        target: TargetServer::Any,
        retry_first_after_secs: match params.seconds_before_retry_master {
            _ if hosts.len() == 1 => None,
            None => Some(DEFAULT_RETRY_FIRST_SECS),
            Some(0) => None,
            Some(secs) => Some(secs),
        },
        hosts,
    };
    let target = DbTarget::MySql {
        servers,
        database,
        ssl_mode: params.ssl_mode()?,
        connect_timeout_ms: params.connect_timeout_ms,
        socket_timeout_ms: params.socket_timeout_ms,
    };
    Ok(Datasource { target, time_zone, username, password, warnings })
}

/// The URL parameters we honour; names match case-insensitively, ignoring `-` and `_` (so sqlx's
/// `ssl-mode` is Connector/J's `sslMode`).
#[derive(Default)]
pub(super) struct Params {
    server_timezone: Option<String>,
    connection_time_zone: Option<String>,
    preserve_instants: Option<bool>,
    ssl_mode: Option<String>,
    use_ssl: Option<bool>,
    require_ssl: Option<bool>,
    verify_server_certificate: Option<bool>,
    connect_timeout_ms: Option<u64>,
    socket_timeout_ms: Option<u64>,
    user: Option<String>,
    password: Option<String>,
    seconds_before_retry_master: Option<u64>,
    fail_over_read_only: Option<bool>,
    pub warnings: Vec<String>,
}

/// Parameters with no effect on how we connect or store data, accepted without a word.
const HARMLESS: &[&str] = &[
    "useunicode",
    "characterencoding",
    "charset",
    "autoreconnect",
    "autoreconnectforpools",
    "allowpublickeyretrieval",
    "useserverprepstmts",
    "cacheprepstmts",
    "prepstmtcachesize",
    "prepstmtcachesqllimit",
    "zerodatetimebehavior",
    "rewritebatchedstatements",
    "uselegacydatetimecode",
    "usejdbccomplianttimezoneshift",
    "usetimezone",
    "maxreconnects",
    // Failover moves on the first failed check, and fall-back is timed by secondsBeforeRetryMaster alone.
    "queriesbeforeretrymaster",
    "retriesalldown",
    "initialtimeout",
    "allowmultiqueries",
    "nullcatalogmeanscurrent",
    "tinyint1isbit",
    "useaffectedrows",
    "useinformationschema",
];

impl Params {
    pub(super) fn parse(query: &str) -> Result<Params, String> {
        let mut params = Params::default();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let name = decode(name, "a parameter name")?;
            let value = decode(value, &format!("parameter `{name}`"))?;
            let canonical: String =
                name.chars().filter(|c| *c != '-' && *c != '_').flat_map(char::to_lowercase).collect();
            let flag = |value: &str| {
                crate::config::text::parse_bool(value).map_err(|e| format!("parameter `{name}`: {e}"))
            };
            let millis = |value: &str| {
                let ms = value
                    .trim()
                    .parse::<u64>()
                    .map_err(|_| format!("parameter `{name}`: `{value}` is not a number of milliseconds"))?;
                // Connector/J: 0 means no timeout.
                Ok::<_, String>((ms > 0).then_some(ms))
            };
            match canonical.as_str() {
                "servertimezone" => params.server_timezone = Some(value),
                "connectiontimezone" => params.connection_time_zone = Some(value),
                "preserveinstants" => params.preserve_instants = Some(flag(&value)?),
                "sslmode" => params.ssl_mode = Some(value),
                "usessl" => params.use_ssl = Some(flag(&value)?),
                "requiressl" => params.require_ssl = Some(flag(&value)?),
                "verifyservercertificate" => params.verify_server_certificate = Some(flag(&value)?),
                "connecttimeout" => params.connect_timeout_ms = millis(&value)?,
                "sockettimeout" => params.socket_timeout_ms = millis(&value)?,
                "user" => params.user = Some(value).filter(|u| !u.is_empty()),
                "password" => params.password = Some(value),
                "secondsbeforeretrymaster" => {
                    let secs = value.trim().parse::<u64>();
                    params.seconds_before_retry_master =
                        Some(secs.map_err(|_| {
                            format!("parameter `{name}`: `{value}` is not a number of seconds")
                        })?);
                }
                "failoverreadonly" => params.fail_over_read_only = Some(flag(&value)?),
                harmless if HARMLESS.contains(&harmless) => {}
                _ => params
                    .warnings
                    .push(format!("spring.datasource.url: parameter `{name}` is not supported; ignored")),
            }
        }
        Ok(params)
    }

    /// Names of given parameters that only mean something for MySQL.
    pub(super) fn mysql_only(&self) -> impl Iterator<Item = &'static str> {
        [
            ("sslMode", self.ssl_mode.is_some()),
            ("useSSL", self.use_ssl.is_some()),
            ("requireSSL", self.require_ssl.is_some()),
            ("verifyServerCertificate", self.verify_server_certificate.is_some()),
            ("connectTimeout", self.connect_timeout_ms.is_some()),
            ("socketTimeout", self.socket_timeout_ms.is_some()),
            ("user", self.user.is_some()),
            ("password", self.password.is_some()),
            ("secondsBeforeRetryMaster", self.seconds_before_retry_master.is_some()),
            ("failOverReadOnly", self.fail_over_read_only.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
    }

    /// Connector/J: an explicit `sslMode` wins; otherwise the legacy flags decide, and PREFERRED is the default.
    fn ssl_mode(&self) -> Result<SslMode, String> {
        if let Some(mode) = &self.ssl_mode {
            return match mode.trim().to_ascii_lowercase().replace('-', "_").as_str() {
                "disabled" | "disable" => Ok(SslMode::Disabled),
                "preferred" | "prefer" => Ok(SslMode::Preferred),
                // MariaDB's `trust` encrypts without checking the certificate.
                "required" | "require" | "trust" => Ok(SslMode::Required),
                "verify_ca" => Ok(SslMode::VerifyCa),
                "verify_identity" | "verify_full" => Ok(SslMode::VerifyIdentity),
                _ => Err(format!(
                    "parameter `sslMode`: `{mode}` is not one of DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY"
                )),
            };
        }
        Ok(if self.use_ssl == Some(false) {
            SslMode::Disabled
        } else if self.verify_server_certificate == Some(true) {
            SslMode::VerifyCa
        } else if self.require_ssl == Some(true) {
            SslMode::Required
        } else {
            SslMode::Preferred
        })
    }

    /// The zone DATETIMEs are written in (README.md#point-it-at-your-existing-xxl-job-database). Without
    /// `preserveInstants` Connector/J keeps the JVM's wall clock, i.e. the system zone.
    pub(super) fn time_zone(&mut self) -> Result<Option<Tz>, String> {
        let (name, zone) = match (&self.connection_time_zone, &self.server_timezone) {
            (Some(zone), _) => ("connectionTimeZone", zone.clone()),
            (None, Some(zone)) => ("serverTimezone", zone.clone()),
            (None, None) => return Ok(None),
        };
        if self.preserve_instants == Some(false) {
            return Ok(None);
        }
        if zone.trim().eq_ignore_ascii_case("SERVER") {
            self.warnings.push(format!(
                "spring.datasource.url: {name}=SERVER is not supported; DATETIMEs use this machine's time zone"
            ));
        }
        parse_zone(&zone).map_err(|e| format!("parameter `{name}`: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{err, ok};
    use super::*;

    fn mysql_parts(url: &str) -> (String, u16, String, SslMode, Option<u64>, Option<u64>) {
        match ok(url).target {
            DbTarget::MySql { servers, database, ssl_mode, connect_timeout_ms, socket_timeout_ms } => {
                let first = servers.first().clone();
                (first.host, first.port, database, ssl_mode, connect_timeout_ms, socket_timeout_ms)
            }
            other => panic!("{url}: {other:?}"),
        }
    }

    fn zone(name: &str) -> Tz {
        name.parse().unwrap()
    }

    #[test]
    fn java_shipped_url() {
        let url = "jdbc:mysql://127.0.0.1:3306/xxl_job?useUnicode=true&characterEncoding=UTF-8&autoReconnect=true&serverTimezone=Asia/Shanghai";
        let ds = ok(url);
        assert_eq!(
            ds.target,
            DbTarget::MySql {
                servers: Servers::single("127.0.0.1", 3306),
                database: "xxl_job".into(),
                ssl_mode: SslMode::Preferred,
                connect_timeout_ms: None,
                socket_timeout_ms: None,
            }
        );
        assert_eq!(ds.time_zone, Some(zone("Asia/Shanghai")));
        assert_eq!((ds.username, ds.password), (None, None));
        assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
    }

    #[test]
    fn mysql_host_forms() {
        assert_eq!(mysql_parts("jdbc:mysql://db/x").0, "db");
        assert_eq!(mysql_parts("jdbc:mysql://db/x").1, 3306);
        assert_eq!(mysql_parts("jdbc:mariadb://db:3307/x").1, 3307);
        assert_eq!(mysql_parts("JDBC:MySQL://DB:3307/X").0, "DB");
        assert_eq!(mysql_parts("JDBC:MySQL://DB:3307/X").2, "X");
        assert_eq!(mysql_parts("jdbc:mysql:///x").0, "localhost");
        assert_eq!(mysql_parts("jdbc:mysql://[::1]:3310/x").0, "::1");
        assert_eq!(mysql_parts("jdbc:mysql://[::1]:3310/x").1, 3310);
        assert_eq!(mysql_parts("jdbc:mysql://db:/x").1, 3306);
        assert_eq!(mysql_parts("jdbc:mysql://db/xxl%2Djob%20a").2, "xxl-job a");
    }

    fn servers(url: &str) -> Servers {
        match ok(url).target {
            DbTarget::MySql { servers, .. } => servers,
            other => panic!("{url}: {other:?}"),
        }
    }

    fn hosts(url: &str) -> Vec<String> {
        servers(url).hosts.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn multi_host_urls_keep_every_host_in_order() {
        assert_eq!(hosts("jdbc:mysql://a:3306,b:3307/x"), ["a:3306", "b:3307"]);
        assert_eq!(hosts("jdbc:mysql://a,[::1]:3310,c/x"), ["a:3306", "[::1]:3310", "c:3306"]);
        for flavour in [
            "mysql:loadbalance",
            "mariadb:sequential",
            "mariadb:failover",
            "mariadb:loadbalance",
            "mariadb:aurora",
        ] {
            let url = format!("jdbc:{flavour}://c:1,b:2,a:3/x");
            let ds = ok(&url);
            assert!(ds.warnings.is_empty(), "{url}: {:?}", ds.warnings);
            assert_eq!(hosts(&url), ["c:1", "b:2", "a:3"], "{url}");
        }
        assert_eq!(servers("jdbc:mysql://a,b/x").target, TargetServer::Any);
        // Without a second host there is nothing to fail over to, and nothing to fall back to.
        assert_eq!(servers("jdbc:mysql:loadbalance://a/x"), Servers::single("a", 3306));
    }

    #[test]
    fn replication_urls_use_the_source_only() {
        let ds = ok("jdbc:mysql:replication://src:3306,replica:3307/x");
        assert!(
            matches!(&ds.target, DbTarget::MySql { servers, .. } if *servers == Servers::single("src", 3306))
        );
        assert!(
            ds.warnings.iter().any(|w| w.contains("src:3306") && w.contains("replica")),
            "{:?}",
            ds.warnings
        );
    }

    #[test]
    fn falling_back_to_the_first_host() {
        assert_eq!(servers("jdbc:mysql://a,b/x").retry_first_after_secs, Some(30));
        assert_eq!(servers("jdbc:mysql://a,b/x?secondsBeforeRetryMaster=5").retry_first_after_secs, Some(5));
        assert_eq!(servers("jdbc:mysql://a,b/x?secondsBeforeRetryMaster=0").retry_first_after_secs, None);
        assert!(err("jdbc:mysql://a,b/x?secondsBeforeRetryMaster=soon").contains("secondsBeforeRetryMaster"));
        let ds =
            ok("jdbc:mysql://a,b/x?queriesBeforeRetryMaster=50&retriesAllDown=120&failOverReadOnly=false");
        assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
        // We never become read-only on a failover host, and say so when the URL asks for it.
        let ds = ok("jdbc:mysql://a,b/x?failOverReadOnly=true");
        assert!(ds.warnings.iter().any(|w| w.contains("failOverReadOnly")), "{:?}", ds.warnings);
    }

    #[test]
    fn sqlx_style_urls_with_credentials() {
        let ds = ok("mysql://root:p%40ss%3Aword@db.local:3307/xxl_job?ssl-mode=disabled");
        assert_eq!(ds.username.as_deref(), Some("root"));
        assert_eq!(ds.password.as_deref(), Some("p@ss:word"));
        assert!(
            matches!(&ds.target, DbTarget::MySql { servers, ssl_mode: SslMode::Disabled, .. } if servers.first().port == 3307)
        );
        let ds = ok("mariadb://u@db/x");
        assert_eq!((ds.username.as_deref(), ds.password), (Some("u"), None));
        let ds = ok("mysql://db/x");
        assert_eq!((ds.username, ds.password), (None, None));
        // Connector/J's `user`/`password` parameters count as URL credentials too.
        let ds = ok("jdbc:mysql://db/x?user=app&password=s3cret");
        assert_eq!((ds.username.as_deref(), ds.password.as_deref()), (Some("app"), Some("s3cret")));
    }

    #[test]
    fn ssl_modes() {
        let mode = |q: &str| mysql_parts(&format!("jdbc:mysql://db/x?{q}")).3;
        assert_eq!(mode(""), SslMode::Preferred);
        assert_eq!(mode("useSSL=false"), SslMode::Disabled);
        assert_eq!(mode("useSSL=true"), SslMode::Preferred);
        assert_eq!(mode("useSSL=true&requireSSL=true"), SslMode::Required);
        assert_eq!(mode("requireSSL=true&useSSL=false"), SslMode::Disabled);
        assert_eq!(mode("useSSL=true&verifyServerCertificate=true"), SslMode::VerifyCa);
        assert_eq!(mode("sslMode=VERIFY_IDENTITY&useSSL=false"), SslMode::VerifyIdentity);
        assert_eq!(mode("sslmode=required"), SslMode::Required);
        assert_eq!(mode("sslMode=verify-ca"), SslMode::VerifyCa);
        assert_eq!(mode("sslMode=verify-full"), SslMode::VerifyIdentity);
        assert!(err("jdbc:mysql://db/x?sslMode=sometimes").contains("sslMode"));
        assert!(err("jdbc:mysql://db/x?useSSL=maybe").contains("useSSL"));
    }

    #[test]
    fn timeouts() {
        let parts = mysql_parts("jdbc:mysql://db/x?connectTimeout=5000&socketTimeout=0");
        assert_eq!((parts.4, parts.5), (Some(5000), None));
        let parts = mysql_parts("jdbc:mysql://db/x?socketTimeout=60000");
        assert_eq!((parts.4, parts.5), (None, Some(60000)));
        assert!(err("jdbc:mysql://db/x?connectTimeout=5s").contains("connectTimeout"));
    }

    #[test]
    fn parameters_accepted_silently_or_with_a_warning() {
        let ds = ok("jdbc:mysql://db/x?useUnicode=true&characterEncoding=utf8&autoReconnect=true&allowPublicKeyRetrieval=true&useServerPrepStmts=true&zeroDateTimeBehavior=convertToNull&rewriteBatchedStatements=true&&");
        assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
        let ds = ok("jdbc:mysql://db/x?fancyOption=1&useUnicode=true");
        assert_eq!(ds.warnings.len(), 1);
        assert!(ds.warnings[0].contains("fancyOption"));
    }

    #[test]
    pub(super) fn time_zones() {
        let tz = |q: &str| ok(&format!("jdbc:mysql://db/x?{q}")).time_zone;
        assert_eq!(tz(""), None);
        assert_eq!(tz("serverTimezone=UTC"), Some(Tz::UTC));
        assert_eq!(tz("serverTimezone=GMT"), Some(zone("GMT")));
        assert_eq!(tz("serverTimezone=Asia%2FShanghai"), Some(zone("Asia/Shanghai")));
        assert_eq!(tz("connectionTimeZone=Europe/Berlin"), Some(zone("Europe/Berlin")));
        assert_eq!(tz("serverTimezone=UTC&connectionTimeZone=Europe/Berlin"), Some(zone("Europe/Berlin")));
        assert_eq!(tz("serverTimezone=GMT%2B8"), Some(zone("Etc/GMT-8")));
        assert_eq!(tz("serverTimezone=GMT+8"), Some(zone("Etc/GMT-8")));
        assert_eq!(tz("serverTimezone=LOCAL"), None);
        assert_eq!(tz("serverTimezone=Asia/Shanghai&preserveInstants=false"), None);
        assert!(ok("jdbc:mysql://db/x?serverTimezone=SERVER").warnings.iter().any(|w| w.contains("SERVER")));
        let e = err("jdbc:mysql://db/x?serverTimezone=Mars/Olympus");
        assert!(e.contains("serverTimezone") && e.contains("Mars/Olympus"), "{e}");
    }
}
