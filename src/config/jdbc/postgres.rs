//! pgJDBC (`jdbc:postgresql://…`) and libpq/sqlx-style (`postgres://…`, `postgresql://…`) URLs.
//!
//! The zone the timestamp columns are written in is `serverTimezone` (as on MySQL) if given, else the
//! `TimeZone` of `options=-c TimeZone=…` (which the server session gets as well), else this machine's
//! zone — what a JVM running a PostgreSQL port of the Java admin writes.

use super::{Datasource, ServerUrl};
use crate::config::{DbTarget, Servers, SslMode, TargetServer};
use crate::time::parse_zone;
use chrono_tz::Tz;

const POSTGRES_DEFAULT_PORT: u16 = 5432;
/// pgJDBC's default `hostRecheckSeconds`: how long a host's known state is trusted before it is tried again.
const DEFAULT_HOST_RECHECK_SECS: u64 = 10;

/// Parameters with no effect on how we connect or store data, accepted without a word (pgJDBC and
/// libpq spellings, compared lower-case without `-` and `_`).
const HARMLESS: &[&str] = &[
    "applicationname",
    "connecttimeout",
    "sockettimeout",
    "logintimeout",
    "tcpkeepalive",
    "preparethreshold",
    "preparedstatementcachequeries",
    "preparedstatementcachesizemib",
    "rewritebatchedinserts",
    "stringtype",
    "loglevel",
    "loggerlevel",
    "rewritebatchedstatements",
    "useunicode",
    "characterencoding",
    "clientencoding",
    "binarytransfer",
    "defaultrowfetchsize",
    "readonly",
    "autosave",
];

/// `//[user[:password]@]host[:port][,host2…]/database[?params]`, `scheme_end` being the offset after
/// `postgresql:`/`postgres:`.
pub(super) fn parse(url: &str, scheme_end: usize) -> Result<Datasource, String> {
    let mut warnings = Vec::new();
    let parts = ServerUrl::split(url, scheme_end)?;
    let hosts = parts.hosts(POSTGRES_DEFAULT_PORT)?;
    let (mut target_server, mut recheck_secs) = (TargetServer::Any, DEFAULT_HOST_RECHECK_SECS);
    let database = parts.database()?;
    let (mut username, mut password) = (parts.username, parts.password);
    let (mut ssl_mode, mut ssl_flag, mut schema, mut server_timezone) = (None, None, None, None);
    let mut settings = Vec::new();
    for pair in parts.query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let name = super::decode(name, "a parameter name")?;
        let value = super::decode(value, &format!("parameter `{name}`"))?;
        let canonical: String =
            name.chars().filter(|c| *c != '-' && *c != '_').flat_map(char::to_lowercase).collect();
        match canonical.as_str() {
            "user" => username = Some(value).filter(|u| !u.is_empty()),
            "password" => password = Some(value),
            "sslmode" => ssl_mode = Some(ssl_mode_of(&value)?),
            "ssl" => {
                ssl_flag = Some(
                    crate::config::text::parse_bool(&value)
                        .map_err(|e| format!("parameter `{name}`: {e}"))?,
                )
            }
            "currentschema" => schema = Some(value).filter(|s| !s.trim().is_empty()),
            "servertimezone" => server_timezone = Some(value),
            "options" => settings.extend(session_settings(&value)?),
            "targetservertype" => target_server = target_server_of(&value)?,
            "hostrechecksecond" | "hostrecheckseconds" => {
                recheck_secs = value
                    .trim()
                    .parse()
                    .map_err(|_| format!("parameter `{name}`: `{value}` is not a number of seconds"))?;
            }
            "loadbalancehosts" => {
                let shuffle = crate::config::text::parse_bool(&value)
                    .map_err(|e| format!("parameter `{name}`: {e}"))?;
                if shuffle && hosts.len() > 1 {
                    warnings.push(
                        "spring.datasource.url: loadBalanceHosts=true is not followed: hosts are tried in the order written"
                            .into(),
                    );
                }
            }
            harmless if HARMLESS.contains(&harmless) => {}
            _ => {
                warnings.push(format!("spring.datasource.url: parameter `{name}` is not supported; ignored"))
            }
        }
    }
    let time_zone =
        match (&server_timezone, settings.iter().find(|(k, _)| k.eq_ignore_ascii_case("TimeZone"))) {
            (Some(zone), _) => parse_zone(zone).map_err(|e| format!("parameter `serverTimezone`: {e}"))?,
            (None, Some((_, zone))) => session_zone(zone)?,
            (None, None) => None,
        };
    let ssl_mode = match (ssl_mode, ssl_flag) {
        (Some(mode), _) => mode,
        // pgJDBC: `ssl=true` without `sslmode` verifies the certificate and the host name.
        (None, Some(true)) => SslMode::VerifyIdentity,
        (None, Some(false)) => SslMode::Disabled,
        (None, None) => SslMode::Preferred,
    };
    // pgJDBC tries the hosts in order for every new connection, skipping for `hostRecheckSeconds` those
    // it found down or of the wrong role: so it comes back to the first host that long after a failover.
    let retry_first_after_secs = (hosts.len() > 1 && recheck_secs > 0).then_some(recheck_secs);
    let servers = Servers { hosts, target: target_server, retry_first_after_secs };
    let target = DbTarget::Postgres { servers, database, ssl_mode, schema, settings };
    Ok(Datasource { target, time_zone, username, password, warnings })
}

/// pgJDBC's `targetServerType`. The admin writes, so the standby-seeking values are refused: on a standby
/// every schedule pass and every console change would fail.
fn target_server_of(value: &str) -> Result<TargetServer, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "any" => Ok(TargetServer::Any),
        "primary" | "master" => Ok(TargetServer::Primary),
        "preferprimary" | "prefermaster" => Ok(TargetServer::PreferPrimary),
        "secondary" | "slave" | "prefersecondary" | "preferslave" => Err(format!(
            "parameter `targetServerType`: `{value}` asks for a standby, which refuses the admin's writes; \
             use primary (or preferPrimary, any)"
        )),
        _ => Err(format!(
            "parameter `targetServerType`: `{value}` is not one of any, primary, master, preferPrimary"
        )),
    }
}

/// libpq's `sslmode` values (`allow` tries plain first, which we do not distinguish from `prefer`).
fn ssl_mode_of(mode: &str) -> Result<SslMode, String> {
    match mode.trim().to_ascii_lowercase().replace('_', "-").as_str() {
        "disable" => Ok(SslMode::Disabled),
        "allow" | "prefer" => Ok(SslMode::Preferred),
        "require" => Ok(SslMode::Required),
        "verify-ca" => Ok(SslMode::VerifyCa),
        "verify-full" => Ok(SslMode::VerifyIdentity),
        _ => Err(format!("parameter `sslmode`: `{mode}` is not one of disable, allow, prefer, require, verify-ca, verify-full")),
    }
}

/// The run-time settings of `options` (`-c name=value` or `--name=value`, space-separated).
fn session_settings(options: &str) -> Result<Vec<(String, String)>, String> {
    let mut settings = Vec::new();
    let mut words = options.split_whitespace();
    while let Some(word) = words.next() {
        let setting = match word {
            "-c" => words.next().ok_or("parameter `options`: `-c` without a setting")?,
            w if w.starts_with("--") => &w[2..],
            w if w.starts_with("-c") => &w[2..],
            w => return Err(format!("parameter `options`: expected `-c name=value`, found `{w}`")),
        };
        let (name, value) = setting
            .split_once('=')
            .ok_or_else(|| format!("parameter `options`: `{setting}` is not name=value"))?;
        settings.push((name.to_string(), value.to_string()));
    }
    Ok(settings)
}

/// A session `TimeZone`: a zone name. PostgreSQL reads POSIX offsets like `UTC+8` as *west* of UTC, the
/// opposite of Connector/J; rather than guess, offsets are refused.
fn session_zone(zone: &str) -> Result<Option<Tz>, String> {
    if zone.contains(['+', '-']) && !zone.contains('/') {
        return Err(format!(
            "parameter `options`: TimeZone `{zone}` is an offset; name the zone (e.g. Asia/Shanghai) or use serverTimezone"
        ));
    }
    parse_zone(zone).map_err(|e| format!("parameter `options`: {e}"))
}

#[cfg(test)]
mod tests {
    use super::super::{err, ok};
    use super::*;

    fn target(url: &str) -> DbTarget {
        ok(url).target
    }

    /// The target of `//host:port/database` without parameters.
    fn plain(host: &str, port: u16, database: &str) -> DbTarget {
        let (servers, database) = (Servers::single(host, port), database.to_string());
        DbTarget::Postgres {
            servers,
            database,
            ssl_mode: SslMode::Preferred,
            schema: None,
            settings: Vec::new(),
        }
    }

    fn servers(url: &str) -> Servers {
        match target(url) {
            DbTarget::Postgres { servers, .. } => servers,
            other => panic!("{url}: {other:?}"),
        }
    }

    fn zone(name: &str) -> Tz {
        name.parse().unwrap()
    }

    #[test]
    fn jdbc_and_libpq_forms() {
        assert_eq!(target("jdbc:postgresql://127.0.0.1:5433/xxl_job"), plain("127.0.0.1", 5433, "xxl_job"));
        assert_eq!(target("jdbc:postgresql://db/x"), plain("db", 5432, "x"));
        assert_eq!(target("postgres://db/x"), plain("db", 5432, "x"));
        assert_eq!(target("postgresql://[::1]/x"), plain("::1", 5432, "x"));
        assert_eq!(target("JDBC:PostgreSQL://DB/X"), plain("DB", 5432, "X"));
        assert_eq!(target("jdbc:postgresql:///x"), plain("localhost", 5432, "x"));
        assert!(err("jdbc:postgresql://db").contains("database"));
        assert!(err("jdbc:postgresql:db/x").contains("//"));
    }

    #[test]
    fn multi_host_urls_and_target_server_type() {
        let all = servers("jdbc:postgresql://standby:5433,primary/x?targetServerType=primary");
        let hosts: Vec<String> = all.hosts.iter().map(ToString::to_string).collect();
        assert_eq!(hosts, ["standby:5433", "primary:5432"]);
        assert_eq!((all.target, all.retry_first_after_secs), (TargetServer::Primary, Some(10)));
        let target = |q: &str| servers(&format!("jdbc:postgresql://a,b/x?{q}")).target;
        assert_eq!(target(""), TargetServer::Any);
        assert_eq!(target("targetServerType=any"), TargetServer::Any);
        assert_eq!(target("targetServerType=master"), TargetServer::Primary);
        assert_eq!(target("targetServerType=preferPrimary"), TargetServer::PreferPrimary);
        for standby in ["secondary", "slave", "preferSecondary", "preferSlave"] {
            let e = err(&format!("jdbc:postgresql://a,b/x?targetServerType={standby}"));
            assert!(e.contains("targetServerType") && e.contains(standby), "{e}");
        }
        assert!(err("jdbc:postgresql://a,b/x?targetServerType=leader").contains("leader"));
        assert_eq!(servers("jdbc:postgresql://a,b/x?hostRecheckSeconds=3").retry_first_after_secs, Some(3));
        assert_eq!(servers("jdbc:postgresql://a,b/x?hostRecheckSeconds=0").retry_first_after_secs, None);
        assert!(ok("jdbc:postgresql://a,b/x?loadBalanceHosts=false").warnings.is_empty());
        assert!(ok("jdbc:postgresql://a,b/x?loadBalanceHosts=true")
            .warnings
            .iter()
            .any(|w| w.contains("loadBalanceHosts")));
    }

    #[test]
    fn credentials_from_userinfo_or_parameters() {
        let ds = ok("postgres://app:p%40ss@db/x");
        assert_eq!((ds.username.as_deref(), ds.password.as_deref()), (Some("app"), Some("p@ss")));
        let ds = ok("jdbc:postgresql://db/x?user=app&password=s3cret");
        assert_eq!((ds.username.as_deref(), ds.password.as_deref()), (Some("app"), Some("s3cret")));
        assert!(!err("postgres://u:hunter2@db/x?sslmode=bad").contains("hunter2"));
    }

    #[test]
    fn ssl_modes() {
        let mode = |q: &str| match target(&format!("jdbc:postgresql://db/x?{q}")) {
            DbTarget::Postgres { ssl_mode, .. } => ssl_mode,
            other => panic!("{other:?}"),
        };
        assert_eq!(mode(""), SslMode::Preferred);
        assert_eq!(mode("sslmode=disable"), SslMode::Disabled);
        assert_eq!(mode("sslmode=allow"), SslMode::Preferred);
        assert_eq!(mode("sslmode=require"), SslMode::Required);
        assert_eq!(mode("sslmode=verify-ca"), SslMode::VerifyCa);
        assert_eq!(mode("sslmode=verify-full"), SslMode::VerifyIdentity);
        assert_eq!(mode("ssl=true"), SslMode::VerifyIdentity);
        assert_eq!(mode("ssl=true&sslmode=require"), SslMode::Required);
        assert_eq!(mode("ssl=false"), SslMode::Disabled);
        assert!(err("jdbc:postgresql://db/x?sslmode=sometimes").contains("sslmode"));
    }

    #[test]
    fn schema_settings_and_time_zone() {
        let tz = |q: &str| ok(&format!("jdbc:postgresql://db/x?{q}")).time_zone;
        assert_eq!(tz(""), None);
        assert_eq!(tz("options=-c%20TimeZone%3DAsia/Shanghai"), Some(zone("Asia/Shanghai")));
        assert_eq!(tz("options=-c TimeZone=UTC"), Some(Tz::UTC));
        assert_eq!(tz("serverTimezone=Asia/Tokyo&options=-c%20TimeZone=UTC"), Some(zone("Asia/Tokyo")));
        assert_eq!(tz("serverTimezone=GMT%2B8"), Some(zone("Etc/GMT-8")));
        assert!(err("jdbc:postgresql://db/x?options=-c%20TimeZone=UTC%2B8").contains("offset"));
        assert!(err("jdbc:postgresql://db/x?options=-c%20TimeZone=Mars/Base").contains("Mars/Base"));
        assert!(err("jdbc:postgresql://db/x?options=TimeZone").contains("options"));
        let DbTarget::Postgres { schema, settings, .. } =
            target("jdbc:postgresql://db/x?currentSchema=jobs&options=-c%20statement_timeout%3D5000%20--lock_timeout=1000")
        else {
            panic!("not PostgreSQL")
        };
        assert_eq!(schema.as_deref(), Some("jobs"));
        assert_eq!(
            settings,
            vec![("statement_timeout".into(), "5000".into()), ("lock_timeout".into(), "1000".into())]
        );
    }

    #[test]
    fn parameters_accepted_silently_or_with_a_warning() {
        let ds = ok("jdbc:postgresql://db/x?ApplicationName=xxl&connectTimeout=10&reWriteBatchedInserts=true&stringtype=unspecified");
        assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
        let ds = ok("jdbc:postgresql://db/x?sslrootcert=/x.pem");
        assert!(ds.warnings.iter().any(|w| w.contains("sslrootcert")), "{:?}", ds.warnings);
    }
}
