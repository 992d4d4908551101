//! Typed, validated sections of [`Config`](super::Config), read from [`Sources`].

use super::keys::WEBHOOK_PREFIX;
use super::sources::{FieldValue, Sources};
use super::text::parse_bool;
use super::{
    jdbc, AlarmConfig, AuditConfig, ConfigError, DataSourceConfig, ForwardHeaders, Lang, MailConfig,
    PoolConfig, Secret, ServerConfig, TriggerPoolConfig, WebhookConfig, WebhookKind,
};
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;

/// `JobTriggerPoolHelper` raises smaller pool sizes to these.
const FAST_POOL_MIN: i32 = 200;
const SLOW_POOL_MIN: i32 = 100;
/// `JobLogReportHelper` only cleans logs when at least this many days are kept.
const MIN_RETENTION_DAYS: i32 = 7;

/// HikariCP's own fallbacks when a configured value is out of its range.
const HIKARI_MAX_LIFETIME_MS: u64 = 1_800_000;
const HIKARI_IDLE_TIMEOUT_MS: u64 = 600_000;
/// What HikariCP stores for `connection-timeout=0` ("no limit").
const HIKARI_NO_LIMIT_MS: u64 = i32::MAX as u64;

const SMTPS_PORT: u16 = 465;
const SSL_SOCKET_FACTORIES: &[&str] =
    &["javax.net.ssl.SSLSocketFactory", "com.sun.mail.util.MailSSLSocketFactory"];

pub(crate) fn server(src: &Sources) -> Result<ServerConfig, ConfigError> {
    Ok(ServerConfig {
        port: src.required("server.port", |s| {
            s.trim().parse::<u16>().map_err(|_| "expected a port number 0-65535".into())
        })?,
        address: src.required("server.address", parse_ip)?,
        context_path: context_path(src, "server.servlet.context-path")?,
        management_context_path: context_path(src, "management.server.servlet.context-path")?,
        forward_headers: src.required("server.forward-headers-strategy", |s| {
            match s.trim().to_ascii_lowercase().as_str() {
                "none" => Ok(ForwardHeaders::None),
                "native" => Ok(ForwardHeaders::Native),
                "framework" => Ok(ForwardHeaders::Framework),
                _ => Err("expected none, native or framework".into()),
            }
        })?,
        prometheus: src.required("management.endpoint.prometheus.enabled", parse_bool)?,
    })
}

/// Spring accepts host names here; only `localhost` is common enough to resolve without DNS.
fn parse_ip(s: &str) -> Result<IpAddr, String> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("localhost") {
        return Ok(IpAddr::V4(Ipv4Addr::LOCALHOST));
    }
    let bare = s.strip_prefix('[').and_then(|v6| v6.strip_suffix(']')).unwrap_or(s);
    bare.parse().map_err(|_| "expected an IP address such as 0.0.0.0 or 127.0.0.1".into())
}

fn context_path(src: &Sources, name: &'static str) -> Result<String, ConfigError> {
    let raw = src.defaulted(name)?;
    normalise_path(&raw.value).map_err(|reason| raw.invalid(reason))
}

/// `/a/b` form: leading `/`, no trailing `/`, and `""` for the root. Segments are restricted to plain
/// URL characters so the router can mount them as literal paths.
fn normalise_path(value: &str) -> Result<String, String> {
    let body = value.trim().trim_matches('/');
    if body.is_empty() {
        return Ok(String::new());
    }
    for segment in body.split('/') {
        if segment.is_empty() || segment == "." || segment == ".." {
            return Err("empty, `.` or `..` path segment".into());
        }
        if let Some(c) =
            segment.chars().find(|c| !(c.is_ascii_alphanumeric() || "-._~!$&'()+,;=@".contains(*c)))
        {
            return Err(format!("character `{c}` is not allowed in a context path"));
        }
    }
    Ok(format!("/{body}"))
}

pub(crate) fn datasource(
    src: &Sources,
    cwd: &Path,
    warnings: &mut Vec<String>,
) -> Result<DataSourceConfig, ConfigError> {
    let url = src.defaulted("spring.datasource.url")?;
    // Falling back to SQLite here would silently split the data from a MySQL meant to be configured.
    if url.value.trim().is_empty() {
        return Err(url.invalid("the URL is empty; remove the key to use the embedded SQLite database"));
    }
    let parsed = jdbc::parse(&url.value, cwd).map_err(|reason| url.invalid(reason))?;
    warnings.extend(parsed.warnings);
    let username = parsed.username.or(src.text("spring.datasource.username")?.filter(|u| !u.is_empty()));
    let password = parsed.password.or(src.text("spring.datasource.password")?).filter(|p| !p.is_empty());
    Ok(DataSourceConfig {
        target: parsed.target,
        username,
        password: password.map(Secret),
        pool: pool(src, warnings)?,
        time_zone: parsed.time_zone,
    })
}

/// HikariCP's rules: its setters reject some values (start-up errors in Java too); `validateNumerics`
/// replaces others with a warning.
fn pool(src: &Sources, warnings: &mut Vec<String>) -> Result<PoolConfig, ConfigError> {
    let max_size = src.required("spring.datasource.hikari.maximum-pool-size", |s| {
        parse_number::<u32>(s).and_then(|n| if n >= 1 { Ok(n) } else { Err("must be at least 1".into()) })
    })?;
    let min_idle = src.required("spring.datasource.hikari.minimum-idle", parse_number::<u32>)?.min(max_size);
    let connection_timeout_ms =
        src.required("spring.datasource.hikari.connection-timeout", |s| match parse_number::<u64>(s)? {
            0 => Ok(HIKARI_NO_LIMIT_MS),
            ms if ms < 250 => Err("must be at least 250 (ms), or 0 for no limit".into()),
            ms => Ok(ms),
        })?;
    let validation_timeout_ms =
        src.required("spring.datasource.hikari.validation-timeout", |s| match parse_number::<u64>(s)? {
            ms if ms < 250 => Err("must be at least 250 (ms)".into()),
            ms => Ok(ms),
        })?;
    let max_lifetime_ms = match src.required("spring.datasource.hikari.max-lifetime", parse_number::<u64>)? {
        0 => None,
        ms if ms < 30_000 => {
            warnings.push(format!(
                "spring.datasource.hikari.max-lifetime is less than 30000 ms; using {HIKARI_MAX_LIFETIME_MS} ms"
            ));
            Some(HIKARI_MAX_LIFETIME_MS)
        }
        ms => Some(ms),
    };
    let idle_timeout_ms = match src.required("spring.datasource.hikari.idle-timeout", parse_number::<u64>)? {
        0 => None,
        // Idle retirement only matters when the pool may shrink.
        _ if min_idle >= max_size => None,
        ms if max_lifetime_ms.is_some_and(|life| ms + 1000 > life) => {
            warnings.push(
                "spring.datasource.hikari.idle-timeout is close to or above max-lifetime; idle connections are kept"
                    .into(),
            );
            None
        }
        ms if ms < 10_000 => {
            warnings.push(format!(
                "spring.datasource.hikari.idle-timeout is less than 10000 ms; using {HIKARI_IDLE_TIMEOUT_MS} ms"
            ));
            Some(HIKARI_IDLE_TIMEOUT_MS)
        }
        ms => Some(ms),
    };
    Ok(PoolConfig {
        max_size,
        min_idle,
        connection_timeout_ms,
        idle_timeout_ms,
        max_lifetime_ms,
        validation_timeout_ms,
    })
}

pub(crate) fn mail(src: &Sources, warnings: &mut Vec<String>) -> Result<MailConfig, ConfigError> {
    let trimmed = |name: &'static str| -> Result<Option<String>, ConfigError> {
        Ok(src.text(name)?.map(|v| v.trim().to_string()).filter(|v| !v.is_empty()))
    };
    let flag = |name: &'static str| src.required(name, parse_bool);
    let smtps = src.required("spring.mail.protocol", |s| match s.trim().to_ascii_lowercase().as_str() {
        "smtp" => Ok(false),
        "smtps" => Ok(true),
        _ => Err("expected smtp or smtps".into()),
    })?;
    let port = src.required("spring.mail.port", |s| {
        parse_number::<u16>(s).and_then(|p| {
            if p > 0 {
                Ok(p)
            } else {
                Err("expected a port number 1-65535".into())
            }
        })
    })?;
    // JavaMail's default port follows the protocol.
    let port = if smtps && !src.is_set("spring.mail.port")? { SMTPS_PORT } else { port };
    let username = src.text("spring.mail.username")?.filter(|u| !u.is_empty());
    let password = src.text("spring.mail.password")?.filter(|p| !p.is_empty()).map(Secret);
    let from = trimmed("spring.mail.from")?.or_else(|| username.clone());
    let socket_factory_tls = match trimmed("spring.mail.properties.mail.smtp.socketFactory.class")? {
        None => false,
        Some(class) if SSL_SOCKET_FACTORIES.contains(&class.as_str()) => true,
        Some(class) => {
            warnings.push(format!(
                "spring.mail.properties.mail.smtp.socketFactory.class `{class}` is not an SSL socket factory we know; connecting without implicit TLS"
            ));
            false
        }
    };
    let millis = |name: &'static str| {
        // JavaMail: zero or negative means no timeout.
        src.typed(name, parse_number::<i64>).map(|ms| ms.filter(|ms| *ms > 0).map(|ms| ms.unsigned_abs()))
    };
    // One timeout covers connect and reads here, so it must allow the longer of the two.
    let timeout_ms = millis("spring.mail.properties.mail.smtp.timeout")?
        .max(millis("spring.mail.properties.mail.smtp.connectiontimeout")?);
    // JavaMail authenticates whenever it has credentials, whatever `mail.smtp.auth` says.
    let auth = flag("spring.mail.properties.mail.smtp.auth")? || (username.is_some() && password.is_some());
    // Read even when the protocol already decides, so a bad value is still reported.
    let ssl_enable = flag("spring.mail.properties.mail.smtp.ssl.enable")?;
    Ok(MailConfig {
        host: trimmed("spring.mail.host")?,
        port,
        auth,
        starttls_enable: flag("spring.mail.properties.mail.smtp.starttls.enable")?,
        starttls_required: flag("spring.mail.properties.mail.smtp.starttls.required")?,
        implicit_tls: smtps || socket_factory_tls || ssl_enable,
        ssl_trust: trimmed("spring.mail.properties.mail.smtp.ssl.trust")?,
        timeout_ms,
        username,
        password,
        from,
    })
}

/// Per delivery attempt; the key table shows the same default (checked by a test).
const DEFAULT_WEBHOOK_TIMEOUT_MS: u64 = 5_000;
/// A delivery attempt shorter than this could not even complete a TLS handshake with a distant vendor.
const MIN_WEBHOOK_TIMEOUT_MS: u64 = 100;

pub(crate) fn alarm(src: &Sources, warnings: &mut Vec<String>) -> Result<AlarmConfig, ConfigError> {
    let console_url = src.typed("xxl.job.alarm.console-url", |s| {
        http_url(s)?;
        Ok(s.trim().trim_end_matches('/').to_string())
    })?;
    let webhooks = src
        .webhooks()?
        .iter()
        .map(|(name, fields)| webhook(name, fields, warnings))
        .collect::<Result<_, _>>()?;
    Ok(AlarmConfig { console_url, webhooks })
}

pub(super) fn http_url(s: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(s.trim()).map_err(|e| format!("not a URL: {e}"))?;
    match url.scheme() {
        "http" | "https" if url.host_str().is_some() => Ok(url),
        _ => Err("expected an http:// or https:// URL".into()),
    }
}

fn webhook_timeout(s: &str) -> Result<u64, String> {
    match parse_number::<u64>(s)? {
        ms if ms < MIN_WEBHOOK_TIMEOUT_MS => Err(format!("must be at least {MIN_WEBHOOK_TIMEOUT_MS} (ms)")),
        ms => Ok(ms),
    }
}

fn webhook(
    name: &str,
    fields: &[FieldValue],
    warnings: &mut Vec<String>,
) -> Result<WebhookConfig, ConfigError> {
    let field = |f: &str| fields.iter().find(|v| v.spec.name == f && !v.value.trim().is_empty());
    let required = |f: &str| {
        field(f).ok_or_else(|| ConfigError::Webhook {
            key: format!("{WEBHOOK_PREFIX}{name}.{f}"),
            value: None,
            origin: "configuration".into(),
            reason: format!(
                "missing: every channel needs a type and a url, and {WEBHOOK_PREFIX}{name}.* is configured"
            ),
        })
    };
    let kind_field = required("type")?;
    let kind = WebhookKind::ALL
        .into_iter()
        .find(|k| k.name().eq_ignore_ascii_case(kind_field.value.trim()))
        .ok_or_else(|| kind_field.invalid("expected dingtalk, wecom, feishu, slack or json"))?;
    let url_field = required("url")?;
    http_url(&url_field.value).map_err(|reason| url_field.invalid(reason))?;
    let mut secret = field("secret").map(|s| Secret::new(s.value.trim()));
    if secret.is_some() && !kind.signs() {
        warnings.push(format!(
            "{WEBHOOK_PREFIX}{name}.secret is ignored: only dingtalk and feishu robots sign messages"
        ));
        secret = None;
    }
    let groups = field("groups")
        .map(|g| g.value.split(',').map(str::trim).filter(|g| !g.is_empty()).map(str::to_string).collect())
        .unwrap_or_default();
    let timeout_ms = match field("timeout") {
        Some(t) => webhook_timeout(&t.value).map_err(|reason| t.invalid(reason))?,
        None => DEFAULT_WEBHOOK_TIMEOUT_MS,
    };
    Ok(WebhookConfig {
        name: name.to_string(),
        kind,
        url: Secret::new(url_field.value.trim()),
        secret,
        groups,
        timeout_ms,
    })
}

pub(crate) fn access_token(src: &Sources) -> Result<Secret, ConfigError> {
    Ok(Secret(src.defaulted("xxl.job.accessToken")?.value))
}

/// Shorter secrets could be guessed offline from one session cookie.
const MIN_SESSION_SECRET_CHARS: usize = 32;

pub(crate) fn session_secret(src: &Sources) -> Result<Option<Secret>, ConfigError> {
    let Some(raw) = src.raw("xxl.job.session.secret")?.filter(|raw| !raw.value.trim().is_empty()) else {
        return Ok(None);
    };
    if raw.value.trim().chars().count() < MIN_SESSION_SECRET_CHARS {
        return Err(raw.invalid(format!(
            "at least {MIN_SESSION_SECRET_CHARS} characters are needed, such as the output of `openssl rand -hex 32`"
        )));
    }
    Ok(Some(Secret(raw.value.trim().to_string())))
}

/// Each entry as a browser writes it in `Origin`: http or https, a host, a port only when not the
/// scheme's default, nothing else (a path would never match and hides a mistake).
pub(crate) fn trusted_origins(src: &Sources) -> Result<Vec<String>, ConfigError> {
    let origins = src.typed("xxl.job.console.trusted-origins", |s| {
        s.split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(trusted_origin)
            .collect::<Result<Vec<_>, _>>()
    })?;
    Ok(origins.unwrap_or_default())
}

fn trusted_origin(entry: &str) -> Result<String, String> {
    let url = http_url(entry)?;
    let bare = url.username().is_empty()
        && url.password().is_none()
        && url.path() == "/"
        && url.query().is_none()
        && url.fragment().is_none();
    if !bare {
        return Err(format!("`{entry}` is not an origin: write scheme://host[:port], without a path"));
    }
    Ok(url.origin().ascii_serialization())
}

/// `xxl.job.audit.*`: the file relative to `cwd`, the webhook an http(s) URL (its value never in a message).
pub(crate) fn audit(src: &Sources, cwd: &Path) -> Result<AuditConfig, ConfigError> {
    let file = src.text("xxl.job.audit.file")?.filter(|f| !f.trim().is_empty()).map(|f| cwd.join(f.trim()));
    let webhook = match src.raw("xxl.job.audit.webhook.url")?.filter(|raw| !raw.value.trim().is_empty()) {
        None => None,
        Some(raw) => match http_url(&raw.value) {
            Ok(url) => Some(Secret(url.to_string())),
            Err(reason) => return Err(raw.invalid(reason)),
        },
    };
    Ok(AuditConfig { file, webhook })
}

/// A registry cap: a count of at least 1.
pub(crate) fn at_least_one(src: &Sources, key: &'static str) -> Result<u32, ConfigError> {
    src.required(key, |s| match parse_number::<u32>(s)? {
        0 => Err("at least 1".into()),
        n => Ok(n),
    })
}

/// Any other value behaves as zh_CN, as in the Java admin; spelling variants of the three codes are
/// taken for what they obviously mean.
pub(crate) fn lang(src: &Sources, warnings: &mut Vec<String>) -> Result<Lang, ConfigError> {
    src.required("xxl.job.i18n", |s| {
        Ok(match s.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "zh_cn" => Lang::ZhCn,
            "zh_tc" => Lang::ZhTc,
            "en" => Lang::En,
            _ => {
                warnings.push(format!("xxl.job.i18n `{}` is not zh_CN, zh_TC or en; using zh_CN", s.trim()));
                Lang::ZhCn
            }
        })
    })
}

pub(crate) fn trigger_pool(src: &Sources) -> Result<TriggerPoolConfig, ConfigError> {
    let fast_max_configured = src.required("xxl.job.triggerpool.fast.max", parse_number::<i32>)?;
    let slow_max_configured = src.required("xxl.job.triggerpool.slow.max", parse_number::<i32>)?;
    Ok(TriggerPoolConfig {
        fast_max: fast_max_configured.max(FAST_POOL_MIN).unsigned_abs(),
        slow_max: slow_max_configured.max(SLOW_POOL_MIN).unsigned_abs(),
        fast_max_configured,
        slow_max_configured,
    })
}

pub(crate) fn log_retention_days(src: &Sources) -> Result<Option<u32>, ConfigError> {
    let days = src.required("xxl.job.logretentiondays", parse_number::<i32>)?;
    Ok((days >= MIN_RETENTION_DAYS).then(|| days.unsigned_abs()))
}

/// `spring.lifecycle.timeout-per-shutdown-phase`: a Spring Boot duration, milliseconds without a unit.
pub(crate) fn shutdown_grace(src: &Sources) -> Result<std::time::Duration, ConfigError> {
    src.required("spring.lifecycle.timeout-per-shutdown-phase", parse_duration)
}

/// Spring Boot's simple duration form: a whole number with `ns`, `us`, `ms`, `s`, `m`, `h` or `d`
/// (milliseconds without a unit).
fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let n: u64 = number.parse().map_err(|_| "expected a duration such as 10s, 500ms or 1m".to_string())?;
    let nanos_per = match unit.trim().to_ascii_lowercase().as_str() {
        "ns" => 1,
        "us" => 1_000,
        "" | "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        _ => return Err("expected a duration such as 10s, 500ms or 1m".into()),
    };
    n.checked_mul(nanos_per).map(std::time::Duration::from_nanos).ok_or_else(|| "duration too long".into())
}

/// `logging.level.root` as the default directive; `logging.level.com.xxl.job` for this crate's own events.
pub(crate) fn log_filter(src: &Sources) -> Result<String, ConfigError> {
    let root = src.required("logging.level.root", parse_level)?;
    Ok(match src.typed("logging.level.com.xxl.job", parse_level)? {
        Some(own) => format!("{root},{}={own}", env!("CARGO_CRATE_NAME")),
        None => root.to_string(),
    })
}

/// Spring Boot's `LogLevel` names, case-insensitive; FATAL is logged as ERROR by Logback as well.
fn parse_level(s: &str) -> Result<&'static str, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "trace" => Ok("trace"),
        "debug" => Ok("debug"),
        "info" => Ok("info"),
        "warn" => Ok("warn"),
        "error" | "fatal" => Ok("error"),
        "off" => Ok("off"),
        _ => Err("expected trace, debug, info, warn, error or off".into()),
    }
}

fn parse_number<T: std::str::FromStr>(s: &str) -> Result<T, String> {
    s.trim().parse().map_err(|_| "expected a whole number in range".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_spring_boot_reads_them() {
        use std::time::Duration;
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration(" 250ms "), Ok(Duration::from_millis(250)));
        assert!(parse_duration("10 seconds").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn the_key_table_shows_the_webhook_timeout_default() {
        let shown =
            super::super::keys::WEBHOOK_FIELDS.iter().find(|f| f.name == "timeout").and_then(|f| f.default);
        assert_eq!(shown.map(webhook_timeout), Some(Ok(DEFAULT_WEBHOOK_TIMEOUT_MS)));
    }
}
