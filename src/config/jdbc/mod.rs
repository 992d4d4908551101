//! `spring.datasource.url`: JDBC (MySQL Connector/J, MariaDB, PostgreSQL), sqlx-style and SQLite URLs.
//! This file dispatches on the scheme; each dialect's URL form is parsed beside it (passwords are masked
//! by `config::text::redact`).

mod mysql;
mod postgres;
mod sqlite;

use super::{DbTarget, HostPort};
use chrono_tz::Tz;
use percent_encoding::percent_decode_str;
use std::path::Path;

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
        return sqlite::parse(&body["sqlite:".len()..], cwd);
    }
    // The offset in `url` just after the scheme's colon.
    let after = |scheme: &str| lower_body.strip_prefix(scheme).map(|rest| url.len() - rest.len());
    if let Some(offset) = after("mysql:").or_else(|| after("mariadb:")) {
        return mysql::parse(url, offset);
    }
    if let Some(offset) = after("postgresql:").or_else(|| after("postgres:")) {
        return postgres::parse(url, offset);
    }
    let scheme = body.split(':').next().unwrap_or_default();
    Err(format!(
        "unsupported database `{scheme}`: use jdbc:mysql://, jdbc:mariadb://, jdbc:postgresql://, mysql://, \
         mariadb://, postgres:// or sqlite:"
    ))
}

/// `[user[:password]@]hosts/path[?query]`, what follows the `//` of a server URL.
struct ServerUrl<'a> {
    username: Option<String>,
    password: Option<String>,
    hosts: &'a str,
    path: &'a str,
    query: &'a str,
}

impl<'a> ServerUrl<'a> {
    /// `scheme_end` is the offset in `url` after the scheme, where `//` must follow.
    fn split(url: &'a str, scheme_end: usize) -> Result<ServerUrl<'a>, String> {
        let Some(rest) = url[scheme_end..].strip_prefix("//") else {
            return Err(format!("expected `//` after `{}`", &url[..scheme_end]));
        };
        let (main, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, path) = main.split_once('/').unwrap_or((main, ""));
        let (userinfo, hosts) = match authority.rsplit_once('@') {
            Some((userinfo, hosts)) => (Some(userinfo), hosts),
            None => (None, authority),
        };
        let (username, password) = match userinfo {
            Some(info) => {
                let (user, pass) = info.split_once(':').map_or((info, None), |(u, p)| (u, Some(p)));
                (
                    Some(decode(user, "the user name")?).filter(|u| !u.is_empty()),
                    pass.map(|p| decode(p, "the password")).transpose()?,
                )
            }
            None => (None, None),
        };
        Ok(ServerUrl { username, password, hosts, path, query })
    }

    /// The comma-separated hosts, in the order written.
    fn hosts(&self, default_port: u16) -> Result<Vec<HostPort>, String> {
        self.hosts
            .split(',')
            .map(|spec| host_port(spec, default_port).map(|(host, port)| HostPort { host, port }))
            .collect()
    }

    fn database(&self) -> Result<String, String> {
        let database = decode(self.path, "the database name")?;
        if database.is_empty() {
            return Err("no database name after the host".into());
        }
        Ok(database)
    }
}

fn host_port(spec: &str, default_port: u16) -> Result<(String, u16), String> {
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
        None | Some("") => default_port,
        Some(p) => p.parse::<u16>().ok().filter(|p| *p != 0).ok_or_else(|| format!("invalid port `{p}`"))?,
    };
    let host = decode(host, "the host")?;
    // Connector/J and pgJDBC connect to localhost when the host is left out.
    Ok((if host.is_empty() { "localhost".to_string() } else { host }, port))
}

fn decode(s: &str, what: &str) -> Result<String, String> {
    percent_decode_str(s)
        .decode_utf8()
        .map(|c| c.into_owned())
        .map_err(|_| format!("{what} is not UTF-8 after percent-decoding"))
}

#[cfg(test)]
fn ok(url: &str) -> Datasource {
    parse(url, Path::new("/work")).unwrap_or_else(|e| panic!("{url}: {e}"))
}

#[cfg(test)]
fn err(url: &str) -> String {
    parse(url, Path::new("/work")).map(|d| format!("{d:?}")).expect_err(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsupported_and_malformed_urls() {
        assert!(err("jdbc:oracle:thin:@db:1521/x").contains("oracle"));
        assert!(err("sqlserver://db/x").contains("sqlserver"));
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
}
