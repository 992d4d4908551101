//! `spring.datasource.url`: JDBC (MySQL Connector/J, MariaDB), sqlx-style and SQLite URLs.

use super::{DbTarget, SqlitePath, SslMode};
use chrono_tz::Tz;
use percent_encoding::percent_decode_str;
use std::path::Path;

const MYSQL_DEFAULT_PORT: u16 = 3306;
const MASK: &str = "******";

#[derive(Debug)]
pub(crate) struct Datasource {
    pub target: DbTarget,
    pub time_zone: Option<Tz>,
    /// Credentials written into the URL; they win over the username/password keys.
    pub username: Option<String>,
    pub password: Option<String>,
    pub warnings: Vec<String>,
}

/// Parses a URL; relative SQLite paths are taken from `cwd`. An error is a reason that never repeats
/// credentials.
pub(crate) fn parse(url: &str, cwd: &Path) -> Result<Datasource, String> {
    let url = url.trim();
    let lower = url.to_ascii_lowercase();
    let body = lower.strip_prefix("jdbc:").map_or(url, |_| &url[5..]);
    let lower_body = &lower[url.len() - body.len()..];
    if lower_body.starts_with("sqlite:") {
        return sqlite(&body["sqlite:".len()..], cwd);
    }
    for scheme in ["mysql:", "mariadb:"] {
        if let Some(rest) = lower_body.strip_prefix(scheme) {
            let mut warnings = Vec::new();
            let mut offset = url.len() - rest.len();
            // Connector/J's multi-host flavours: we connect to one server only.
            for flavour in ["loadbalance:", "replication:", "failover:", "sequential:", "aurora:"] {
                if rest.starts_with(flavour) {
                    warnings.push(format!(
                        "spring.datasource.url: `{}{flavour}` is treated as a plain single-server URL",
                        &lower[..offset]
                    ));
                    offset += flavour.len();
                }
            }
            let rest = &url[offset..];
            let Some(rest) = rest.strip_prefix("//") else {
                return Err(format!("expected `//` after `{}`", &url[..offset]));
            };
            return mysql(rest, warnings);
        }
    }
    let scheme = body.split(':').next().unwrap_or_default();
    Err(format!("unsupported database `{scheme}`: use jdbc:mysql://, jdbc:mariadb://, mysql://, mariadb:// or sqlite:"))
}

/// `[user[:password]@]host[:port][,host2...]/database[?params]`
fn mysql(rest: &str, mut warnings: Vec<String>) -> Result<Datasource, String> {
    let (main, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, path) = main.split_once('/').unwrap_or((main, ""));
    let (userinfo, hosts) = match authority.rsplit_once('@') {
        Some((userinfo, hosts)) => (Some(userinfo), hosts),
        None => (None, authority),
    };
    let (mut username, mut password) = match userinfo {
        Some(info) => {
            let (user, pass) = info.split_once(':').map_or((info, None), |(u, p)| (u, Some(p)));
            (
                Some(decode(user, "the user name")?).filter(|u| !u.is_empty()),
                pass.map(|p| decode(p, "the password")).transpose()?,
            )
        }
        None => (None, None),
    };
    if hosts.contains('(') {
        return Err("the `address=(...)` host syntax is not supported; write host:port".into());
    }
    let mut host_list = hosts.split(',');
    let (host, port) = host_port(host_list.next().unwrap_or_default())?;
    if host_list.next().is_some() {
        warnings.push(format!("spring.datasource.url names several hosts; only {host}:{port} is used"));
    }
    let database = decode(path, "the database name")?;
    if database.is_empty() {
        return Err("no database name after the host".into());
    }

    let mut params = Params::parse(query)?;
    let time_zone = params.time_zone()?;
    if let Some(user) = params.user.take() {
        username = Some(user);
    }
    if let Some(pass) = params.password.take() {
        password = Some(pass);
    }
    warnings.append(&mut params.warnings);
    let target = DbTarget::MySql {
        host,
        port,
        database,
        ssl_mode: params.ssl_mode()?,
        connect_timeout_ms: params.connect_timeout_ms,
        socket_timeout_ms: params.socket_timeout_ms,
    };
    Ok(Datasource { target, time_zone, username, password, warnings })
}

/// `PATH`, `//PATH` (so `sqlite:///abs` is absolute), `:memory:`, each with optional `?params`.
fn sqlite(rest: &str, cwd: &Path) -> Result<Datasource, String> {
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let path = path.strip_prefix("//").unwrap_or(path);
    // sqlite-jdbc also takes SQLite's URI filenames (`jdbc:sqlite:file:x.db`).
    let path = path.strip_prefix("file:").unwrap_or(path);
    let path = if path == ":memory:" {
        SqlitePath::Memory
    } else if path.is_empty() {
        return Err("no SQLite file path (use sqlite:PATH or sqlite::memory:)".into());
    } else {
        SqlitePath::File(cwd.join(decode(path, "the file path")?))
    };
    let mut params = Params::parse(query)?;
    let time_zone = params.time_zone()?;
    let mut warnings = std::mem::take(&mut params.warnings);
    warnings.extend(
        params.mysql_only().map(|name| format!("spring.datasource.url: `{name}` has no meaning for SQLite; ignored")),
    );
    Ok(Datasource { target: DbTarget::Sqlite { path }, time_zone, username: None, password: None, warnings })
}

fn host_port(spec: &str) -> Result<(String, u16), String> {
    let (host, port) = if let Some(v6) = spec.strip_prefix('[') {
        let (host, after) = v6.split_once(']').ok_or("unclosed `[` in the host")?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or("unexpected text after `]`")?),
        };
        (host, port)
    } else {
        spec.split_once(':').map_or((spec, None), |(h, p)| (h, Some(p)))
    };
    let port = match port {
        None | Some("") => MYSQL_DEFAULT_PORT,
        Some(p) => p.parse::<u16>().ok().filter(|p| *p != 0).ok_or_else(|| format!("invalid port `{p}`"))?,
    };
    let host = decode(host, "the host")?;
    // Connector/J connects to localhost when the host is left out.
    Ok((if host.is_empty() { "localhost".to_string() } else { host }, port))
}

fn decode(s: &str, what: &str) -> Result<String, String> {
    percent_decode_str(s)
        .decode_utf8()
        .map(|c| c.into_owned())
        .map_err(|_| format!("{what} is not UTF-8 after percent-decoding"))
}

/// The URL parameters we honour; names match case-insensitively, ignoring `-` and `_` (so sqlx's
/// `ssl-mode` is Connector/J's `sslMode`).
#[derive(Default)]
struct Params {
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
    warnings: Vec<String>,
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
    "failoverreadonly",
    "maxreconnects",
    "initialtimeout",
    "allowmultiqueries",
    "nullcatalogmeanscurrent",
    "tinyint1isbit",
    "useaffectedrows",
    "useinformationschema",
];

impl Params {
    fn parse(query: &str) -> Result<Params, String> {
        let mut params = Params::default();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let name = decode(name, "a parameter name")?;
            let value = decode(value, &format!("parameter `{name}`"))?;
            let canonical: String =
                name.chars().filter(|c| *c != '-' && *c != '_').flat_map(char::to_lowercase).collect();
            let flag = |value: &str| super::sections::parse_bool(value).map_err(|e| format!("parameter `{name}`: {e}"));
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
                harmless if HARMLESS.contains(&harmless) => {}
                _ => {
                    params.warnings.push(format!("spring.datasource.url: parameter `{name}` is not supported; ignored"))
                }
            }
        }
        Ok(params)
    }

    /// Names of given parameters that only mean something for MySQL.
    fn mysql_only(&self) -> impl Iterator<Item = &'static str> {
        [
            ("sslMode", self.ssl_mode.is_some()),
            ("useSSL", self.use_ssl.is_some()),
            ("requireSSL", self.require_ssl.is_some()),
            ("verifyServerCertificate", self.verify_server_certificate.is_some()),
            ("connectTimeout", self.connect_timeout_ms.is_some()),
            ("socketTimeout", self.socket_timeout_ms.is_some()),
            ("user", self.user.is_some()),
            ("password", self.password.is_some()),
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

    /// The zone DATETIMEs are written in (spec 11.2). Without `preserveInstants` Connector/J keeps the
    /// JVM's wall clock, i.e. the system zone.
    fn time_zone(&mut self) -> Result<Option<Tz>, String> {
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

/// An IANA name, a Java short ID (`CTT`), or an offset (`GMT+8`, `UTC+08:00`, `+8`); `LOCAL` and
/// `SERVER` mean the system zone (`None`).
fn parse_zone(zone: &str) -> Result<Option<Tz>, String> {
    let zone = zone.trim();
    if zone.eq_ignore_ascii_case("LOCAL") || zone.eq_ignore_ascii_case("SERVER") {
        return Ok(None);
    }
    if let Some(offset) = offset_zone(zone) {
        return offset.map(Some);
    }
    if let Some((_, iana)) = JAVA_SHORT_IDS.iter().find(|(id, _)| *id == zone) {
        return Ok(iana.parse().ok());
    }
    zone.parse::<Tz>()
        .ok()
        .or_else(|| chrono_tz::TZ_VARIANTS.iter().copied().find(|tz| tz.name().eq_ignore_ascii_case(zone)))
        .map(Some)
        .ok_or_else(|| format!("unknown time zone `{zone}`"))
}

/// `None` when `zone` is not written as an offset at all.
fn offset_zone(zone: &str) -> Option<Result<Tz, String>> {
    let upper = zone.to_ascii_uppercase();
    if upper == "Z" {
        return Some(Ok(Tz::UTC));
    }
    let signed = ["GMT", "UTC", "UT", ""]
        .iter()
        .find_map(|prefix| upper.strip_prefix(prefix).filter(|rest| rest.starts_with(['+', '-'])))?;
    let (negative, digits) = (signed.starts_with('-'), &signed[1..]);
    let (hours, minutes) = match digits.split_once(':') {
        Some((h, m)) => (h, m),
        None if digits.len() == 4 => digits.split_at(2),
        None => (digits, "0"),
    };
    let parsed =
        (1..=2).contains(&hours.len()).then(|| hours.parse::<i32>().ok().zip(minutes.parse::<i32>().ok())).flatten();
    let Some((hours, minutes)) = parsed.filter(|(h, m)| *h <= 18 && *m < 60) else {
        return Some(Err(format!("`{zone}` is not a valid offset")));
    };
    if minutes != 0 {
        return Some(Err(format!("offset `{zone}` is not whole hours; name the zone instead (e.g. Asia/Kolkata)")));
    }
    let hours = if negative { -hours } else { hours };
    if hours == 0 {
        return Some(Ok(Tz::UTC));
    }
    // POSIX `Etc/` zones count the other way: UTC+8 is Etc/GMT-8.
    let name = format!("Etc/GMT{}{}", if hours > 0 { '-' } else { '+' }, hours.abs());
    Some(name.parse().map_err(|_| format!("offset `{zone}` is outside -12..+14 hours")))
}

/// `java.util.TimeZone`'s three-letter IDs, which Connector/J accepts (`CST` is Chicago there too).
const JAVA_SHORT_IDS: &[(&str, &str)] = &[
    ("ACT", "Australia/Darwin"),
    ("AET", "Australia/Sydney"),
    ("AGT", "America/Argentina/Buenos_Aires"),
    ("ART", "Africa/Cairo"),
    ("AST", "America/Anchorage"),
    ("BET", "America/Sao_Paulo"),
    ("BST", "Asia/Dhaka"),
    ("CAT", "Africa/Harare"),
    ("CNT", "America/St_Johns"),
    ("CST", "America/Chicago"),
    ("CTT", "Asia/Shanghai"),
    ("EAT", "Africa/Addis_Ababa"),
    ("ECT", "Europe/Paris"),
    ("IET", "America/Indiana/Indianapolis"),
    ("IST", "Asia/Kolkata"),
    ("JST", "Asia/Tokyo"),
    ("MIT", "Pacific/Apia"),
    ("NET", "Asia/Yerevan"),
    ("NST", "Pacific/Auckland"),
    ("PLT", "Asia/Karachi"),
    ("PNT", "America/Phoenix"),
    ("PRT", "America/Puerto_Rico"),
    ("PST", "America/Los_Angeles"),
    ("SST", "Pacific/Guadalcanal"),
    ("VST", "Asia/Ho_Chi_Minh"),
];

/// The URL with any password (user-info or `password=` parameter) masked, for messages.
pub(crate) fn redact(url: &str) -> String {
    let (main, query) = match url.split_once('?') {
        Some((main, query)) => (main, Some(query)),
        None => (url, None),
    };
    let mut out = match main.find("//") {
        Some(start) => {
            let authority_start = start + 2;
            let authority_end = main[authority_start..].find('/').map_or(main.len(), |i| authority_start + i);
            let authority = &main[authority_start..authority_end];
            match authority.rsplit_once('@') {
                Some((userinfo, hosts)) if userinfo.contains(':') => {
                    let user = userinfo.split(':').next().unwrap_or_default();
                    format!("{}{user}:{MASK}@{hosts}{}", &main[..authority_start], &main[authority_end..])
                }
                _ => main.to_string(),
            }
        }
        None => main.to_string(),
    };
    if let Some(query) = query {
        let params: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) if name.trim().eq_ignore_ascii_case("password") => format!("{name}={MASK}"),
                _ => pair.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&params.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn ok(url: &str) -> Datasource {
        parse(url, Path::new("/work")).unwrap_or_else(|e| panic!("{url}: {e}"))
    }

    fn err(url: &str) -> String {
        parse(url, Path::new("/work")).map(|d| format!("{d:?}")).expect_err(url)
    }

    fn mysql_parts(url: &str) -> (String, u16, String, SslMode, Option<u64>, Option<u64>) {
        match ok(url).target {
            DbTarget::MySql { host, port, database, ssl_mode, connect_timeout_ms, socket_timeout_ms } => {
                (host, port, database, ssl_mode, connect_timeout_ms, socket_timeout_ms)
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
                host: "127.0.0.1".into(),
                port: 3306,
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

    #[test]
    fn several_hosts_use_the_first_with_a_warning() {
        let ds = ok("jdbc:mysql://a:3306,b:3307/x");
        assert!(matches!(&ds.target, DbTarget::MySql { host, port: 3306, .. } if host == "a"));
        assert_eq!(ds.warnings.len(), 1);
        assert!(ds.warnings[0].contains("a:3306"), "{:?}", ds.warnings);
        for url in ["jdbc:mysql:loadbalance://a,b/x", "jdbc:mysql:replication://a,b/x", "jdbc:mariadb:failover://a/x"] {
            let ds = ok(url);
            assert!(matches!(&ds.target, DbTarget::MySql { host, .. } if host == "a"), "{url}");
            assert!(ds.warnings.iter().any(|w| w.contains("single-server")), "{url}: {:?}", ds.warnings);
        }
    }

    #[test]
    fn sqlx_style_urls_with_credentials() {
        let ds = ok("mysql://root:p%40ss%3Aword@db.local:3307/xxl_job?ssl-mode=disabled");
        assert_eq!(ds.username.as_deref(), Some("root"));
        assert_eq!(ds.password.as_deref(), Some("p@ss:word"));
        assert!(matches!(ds.target, DbTarget::MySql { port: 3307, ssl_mode: SslMode::Disabled, .. }));
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
    fn time_zones() {
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

    #[test]
    fn zone_spellings() {
        let z = |s: &str| parse_zone(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(z("Asia/Shanghai"), Some(zone("Asia/Shanghai")));
        assert_eq!(z("asia/shanghai"), Some(zone("Asia/Shanghai")));
        assert_eq!(z("CTT"), Some(zone("Asia/Shanghai")));
        assert_eq!(z("CST"), Some(zone("America/Chicago")));
        for east8 in ["GMT+8", "GMT+08", "GMT+08:00", "GMT+0800", "UTC+8", "+08:00", "+8", "utc+8"] {
            assert_eq!(z(east8), Some(zone("Etc/GMT-8")), "{east8}");
        }
        assert_eq!(z("GMT-5"), Some(zone("Etc/GMT+5")));
        assert_eq!(z("UTC+14"), Some(zone("Etc/GMT-14")));
        assert_eq!(z("GMT+0"), Some(Tz::UTC));
        assert_eq!(z("Z"), Some(Tz::UTC));
        assert_eq!(z("server"), None);
        assert!(parse_zone("+05:30").unwrap_err().contains("whole hours"));
        assert!(parse_zone("GMT+15").unwrap_err().contains("outside"));
        assert!(parse_zone("GMT+x").is_err());
        assert!(parse_zone("Nowhere").is_err());
    }

    #[test]
    fn sqlite_forms() {
        let path = |url: &str| match ok(url).target {
            DbTarget::Sqlite { path } => path,
            other => panic!("{url}: {other:?}"),
        };
        let file = |p: &str| SqlitePath::File(PathBuf::from(p));
        assert_eq!(path("sqlite:xxl-job-admin.db"), file("/work/xxl-job-admin.db"));
        assert_eq!(path("sqlite://data/x.db"), file("/work/data/x.db"));
        assert_eq!(path("sqlite:///var/lib/x.db"), file("/var/lib/x.db"));
        assert_eq!(path("sqlite:/var/lib/x.db"), file("/var/lib/x.db"));
        assert_eq!(path("jdbc:sqlite:x.db"), file("/work/x.db"));
        assert_eq!(path("jdbc:sqlite:file:x.db"), file("/work/x.db"));
        assert_eq!(path("sqlite:my%20jobs.db"), file("/work/my jobs.db"));
        assert_eq!(path("sqlite::memory:"), SqlitePath::Memory);
        assert_eq!(path("sqlite://:memory:"), SqlitePath::Memory);
        assert_eq!(path("jdbc:sqlite::memory:"), SqlitePath::Memory);
        assert!(err("sqlite:").contains("path"));
        let ds = ok("sqlite:x.db?serverTimezone=Asia/Tokyo&useSSL=false&mode=rwc");
        assert_eq!(ds.time_zone, Some(zone("Asia/Tokyo")));
        assert_eq!(ds.warnings.len(), 2, "{:?}", ds.warnings);
        assert_eq!((ds.username, ds.password), (None, None));
    }

    #[test]
    fn unsupported_and_malformed_urls() {
        assert!(err("jdbc:postgresql://db/x").contains("postgresql"));
        assert!(err("postgres://db/x").contains("postgres"));
        assert!(err("jdbc:mysql:db/x").contains("//"));
        assert!(err("jdbc:mysql://db:port/x").contains("port"));
        assert!(err("jdbc:mysql://db:70000/x").contains("70000"));
        assert!(err("jdbc:mysql://db:3306").contains("database"));
        assert!(err("jdbc:mysql://db:3306/").contains("database"));
        assert!(err("jdbc:mysql://address=(host=a)(port=1)/x").contains("address"));
    }

    #[test]
    fn errors_never_repeat_the_password() {
        for url in [
            "mysql://u:hunter2@db:notaport/x",
            "mysql://u:hunter2@db/x?sslMode=bad",
            "jdbc:mysql://db/?password=hunter2",
        ] {
            let e = err(url);
            assert!(!e.contains("hunter2"), "{e}");
        }
    }

    #[test]
    fn redaction() {
        assert_eq!(redact("mysql://u:hunter2@db/x?a=1"), "mysql://u:******@db/x?a=1");
        assert_eq!(
            redact("jdbc:mysql://db/x?user=u&password=hunter2&a=1"),
            "jdbc:mysql://db/x?user=u&password=******&a=1"
        );
        assert_eq!(redact("mysql://u@db/x"), "mysql://u@db/x");
        assert_eq!(redact("sqlite:x.db"), "sqlite:x.db");
    }
}
