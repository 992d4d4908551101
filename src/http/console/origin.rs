//! Who sent a console request, as the browser tells it: the console's defence against cross-site request
//! forgery.
//!
//! Fetch Metadata decides first: `Sec-Fetch-Site` is set by the browser itself, cannot be forged by a
//! page, and passes proxies unchanged, so the console's own pages are recognised behind any proxy. Only
//! for browsers that send no `Sec-Fetch-Site` is `Origin` compared with the origin the request was
//! addressed to, as the proxies in front say it (`Forwarded`, `X-Forwarded-Host`/`-Proto`, `Host`).
//! Those headers are believed from anyone: a page cannot add them to a cross-site request without a
//! CORS preflight we never grant, and whoever sends them otherwise sends no victim's cookie.

use axum::http::header::{FORWARDED, HOST, ORIGIN};
use axum::http::HeaderMap;

/// What the headers say about the page that sent a request.
#[derive(Debug, PartialEq, Eq)]
pub enum Sender {
    /// The console's own pages, a trusted origin's, or the user's own navigation (a typed URL, a bookmark).
    Own,
    /// A page of another origin (another site, or a sibling: another port or subdomain of this host).
    Foreign(Evidence),
    /// No browser marker at all: a script, or a request without `Origin` from a browser too old for
    /// Fetch Metadata (which is what an `<img>` of another site's page is in such a browser).
    Unmarked,
}

/// What gave a foreign sender away, for its refusal and the log.
#[derive(Debug, PartialEq, Eq)]
pub struct Evidence {
    pub fetch_site: Option<String>,
    pub origin: Option<String>,
    /// The origins the request was addressed to, as compared (`*` where the scheme is not known).
    pub addressed: Vec<String>,
}

impl Evidence {
    /// The sender as a user recognises it: its origin, else the browser's verdict.
    pub fn sender(&self) -> String {
        match (&self.origin, &self.fetch_site) {
            (Some(origin), _) => origin.clone(),
            (None, Some(site)) => format!("Sec-Fetch-Site: {site}"),
            (None, None) => "?".to_string(),
        }
    }
}

/// `xxl.job.console.trusted-origins` and the rules above.
#[derive(Debug, Default)]
pub struct OriginPolicy {
    /// As `Origin` headers write them (see the configuration).
    trusted: Vec<String>,
}

impl OriginPolicy {
    pub fn new(trusted: Vec<String>) -> OriginPolicy {
        OriginPolicy { trusted }
    }

    pub fn trusted(&self) -> &[String] {
        &self.trusted
    }

    pub fn sender(&self, headers: &HeaderMap) -> Sender {
        let origin = text(headers, ORIGIN.as_str());
        let fetch_site = text(headers, "sec-fetch-site");
        let addressed = addressed_origins(headers);
        let foreign = || {
            Sender::Foreign(Evidence {
                fetch_site: fetch_site.map(str::to_string),
                origin: origin.map(str::to_string),
                addressed: addressed
                    .iter()
                    .map(|(scheme, host)| format!("{}://{host}", scheme.unwrap_or("*")))
                    .collect(),
            })
        };
        // "null" (sandboxed frames, file: pages) is a serialized origin too, an opaque one; anything else
        // that is not one (userinfo, a path, an escape, a trailing dot) no browser sends: refused whatever
        // else the request says, so no parser's leniency can turn it into our own origin.
        let serialized = match origin {
            None | Some("null") => None,
            Some(origin) => match SerializedOrigin::parse(origin) {
                Some(parsed) => Some(parsed),
                None => return foreign(),
            },
        };
        if !self.trusted.is_empty()
            && serialized.as_ref().is_some_and(|o| self.trusted.contains(&o.to_string()))
        {
            return Sender::Own;
        }
        match fetch_site {
            Some(site) if site.eq_ignore_ascii_case("same-origin") || site.eq_ignore_ascii_case("none") => {
                return Sender::Own
            }
            // cross-site, same-site, or a value we do not know.
            Some(_) => return foreign(),
            None => {}
        }
        if origin.is_none() {
            return Sender::Unmarked;
        }
        let Some(serialized) = serialized else { return foreign() };
        let own = addressed.iter().any(|(scheme, host)| {
            let scheme = scheme.unwrap_or(serialized.scheme);
            SerializedOrigin::addressed(scheme, host).is_some_and(|candidate| candidate.same(&serialized))
        });
        if own {
            Sender::Own
        } else {
            foreign()
        }
    }
}

/// An origin as browsers serialize it (RFC 6454 section 6.1): `scheme://host[:port]`, nothing more. Parsed
/// strictly rather than through a URL parser, which would read `http://evil.example@host` as `host`.
#[derive(Debug)]
struct SerializedOrigin<'a> {
    scheme: &'a str,
    /// As written; compared without regard to ASCII case, as DNS names are.
    host: &'a str,
    /// `None` for the scheme's default port, written or not.
    port: Option<u16>,
}

impl<'a> SerializedOrigin<'a> {
    fn parse(origin: &'a str) -> Option<SerializedOrigin<'a>> {
        let (scheme, authority) = origin.split_once("://")?;
        let scheme = ["http", "https"].into_iter().find(|s| s.eq_ignore_ascii_case(scheme))?;
        SerializedOrigin::addressed(scheme, authority)
    }

    /// The origin of a request addressed to `host[:port]` over `scheme` (a `Host` header's form).
    fn addressed(scheme: &'a str, authority: &'a str) -> Option<SerializedOrigin<'a>> {
        let (host, port) = split_port(authority)?;
        if !(valid_ip_literal(host) || valid_host_name(host)) {
            return None;
        }
        let default = if scheme.eq_ignore_ascii_case("http") {
            80
        } else if scheme.eq_ignore_ascii_case("https") {
            443
        } else {
            return None;
        };
        Some(SerializedOrigin { scheme, host, port: port.filter(|&p| p != default) })
    }

    fn same(&self, other: &SerializedOrigin<'_>) -> bool {
        self.scheme.eq_ignore_ascii_case(other.scheme)
            && self.host.eq_ignore_ascii_case(other.host)
            && self.port == other.port
    }
}

impl std::fmt::Display for SerializedOrigin<'_> {
    /// The ASCII serialization the configuration keeps trusted origins in: lower case, no default port.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://{}", self.scheme.to_ascii_lowercase(), self.host.to_ascii_lowercase())?;
        match self.port {
            Some(port) => write!(f, ":{port}"),
            None => Ok(()),
        }
    }
}

/// `host` and its port, if one is written: digits without a leading zero, 1 to 65535.
fn split_port(authority: &str) -> Option<(&str, Option<u16>)> {
    let port_at = match authority.rfind(':') {
        Some(i) if !authority[i..].contains(']') => i,
        _ => return Some((authority, None)),
    };
    let digits = &authority[port_at + 1..];
    let well_formed =
        !digits.is_empty() && !digits.starts_with('0') && digits.bytes().all(|b| b.is_ascii_digit());
    let port = digits.parse::<u16>().ok().filter(|_| well_formed)?;
    Some((&authority[..port_at], Some(port)))
}

/// A DNS name (IDNs arrive as punycode) or an IPv4 address: dot-separated labels of letters, digits and
/// hyphens, none empty, so no leading, doubled or trailing dot.
fn valid_host_name(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

/// An IPv6 address in brackets, as origins and `Host` write it.
fn valid_ip_literal(host: &str) -> bool {
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .is_some_and(|address| address.parse::<std::net::Ipv6Addr>().is_ok())
}

fn text<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim)
}

/// Every (scheme if stated, host[:port]) the request says it was addressed to: each `Forwarded`
/// element's `host` with its `proto`, each `X-Forwarded-Host` with `X-Forwarded-Proto`, and `Host`.
fn addressed_origins(headers: &HeaderMap) -> Vec<(Option<&str>, &str)> {
    let mut origins = Vec::new();
    for element in
        headers.get_all(FORWARDED).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(','))
    {
        let pairs = element
            .split(';')
            .filter_map(|pair| pair.split_once('='))
            .map(|(k, v)| (k.trim(), v.trim().trim_matches('"')));
        let (mut host, mut proto) = (None, None);
        for (key, value) in pairs {
            if key.eq_ignore_ascii_case("host") {
                host = Some(value);
            } else if key.eq_ignore_ascii_case("proto") {
                proto = Some(value);
            }
        }
        origins.extend(host.map(|host| (proto, host)));
    }
    let forwarded_proto = text(headers, "x-forwarded-proto").and_then(|p| p.split(',').next()).map(str::trim);
    let forwarded_hosts =
        headers.get_all("x-forwarded-host").iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(','));
    origins.extend(forwarded_hosts.map(|host| (forwarded_proto, host.trim())));
    origins.extend(text(headers, HOST.as_str()).map(|host| (None, host)));
    origins.retain(|(_, host)| !host.is_empty());
    origins
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    fn sender(pairs: &[(&'static str, &'static str)]) -> Sender {
        OriginPolicy::new(vec!["https://ui.example.com".into()]).sender(&headers(pairs))
    }

    fn is_foreign(sender: &Sender) -> bool {
        matches!(sender, Sender::Foreign(_))
    }

    #[test]
    fn fetch_metadata_decides_first() {
        // nginx's default: Host is the upstream's address; the browser still says same-origin.
        let proxied = [
            ("host", "127.0.0.1:8080"),
            ("origin", "http://jobs.example.com"),
            ("sec-fetch-site", "same-origin"),
        ];
        assert_eq!(sender(&proxied), Sender::Own);
        assert_eq!(sender(&[("sec-fetch-site", "none")]), Sender::Own, "a typed URL or a bookmark");
        for site in ["cross-site", "same-site", "bogus"] {
            let own_origin =
                [("host", "a.example"), ("origin", "http://a.example"), ("sec-fetch-site", site)];
            assert!(is_foreign(&sender(&own_origin)), "{site}");
        }
    }

    #[test]
    fn origin_is_compared_with_the_public_origin_without_fetch_metadata() {
        assert_eq!(sender(&[]), Sender::Unmarked, "a script");
        assert_eq!(sender(&[("host", "a.example:8080")]), Sender::Unmarked);
        assert_eq!(sender(&[("host", "a.example:8080"), ("origin", "http://A.example:8080")]), Sender::Own);
        assert_eq!(
            sender(&[("host", "a.example"), ("origin", "https://a.example")]),
            Sender::Own,
            "TLS ended in front"
        );
        assert_eq!(
            sender(&[("host", "a.example:443"), ("origin", "https://a.example")]),
            Sender::Own,
            "default port"
        );
        let sibling = sender(&[("host", "a.example:8080"), ("origin", "http://a.example:8081")]);
        let Sender::Foreign(evidence) = sibling else { panic!("a sibling port is foreign") };
        assert_eq!(evidence.addressed, ["*://a.example:8080"]);
        assert_eq!(evidence.sender(), "http://a.example:8081");
        assert!(is_foreign(&sender(&[("host", "a.example"), ("origin", "null")])));
        assert!(is_foreign(&sender(&[("origin", "http://a.example")])), "nothing to compare with");
        // Behind a proxy that rewrites Host but says what the browser asked for.
        let upstream = ("host", "127.0.0.1:8080");
        assert_eq!(
            sender(&[
                upstream,
                ("x-forwarded-host", "jobs.example.com"),
                ("origin", "http://jobs.example.com")
            ]),
            Sender::Own
        );
        let https = [upstream, ("x-forwarded-host", "jobs.example.com"), ("x-forwarded-proto", "https")];
        assert_eq!(
            sender(&[https[0], https[1], https[2], ("origin", "https://jobs.example.com")]),
            Sender::Own
        );
        assert!(
            is_foreign(&sender(&[https[0], https[1], https[2], ("origin", "http://jobs.example.com")])),
            "http page, https console"
        );
        let forwarded =
            ("forwarded", "for=10.0.0.1;host=\"jobs.example.com:8443\";proto=https, for=10.0.0.2;host=inner");
        assert_eq!(sender(&[upstream, forwarded, ("origin", "https://jobs.example.com:8443")]), Sender::Own);
        assert!(is_foreign(&sender(&[upstream, forwarded, ("origin", "https://evil.example")])));
    }

    #[test]
    fn trusted_origins_pass_even_cross_site() {
        let trusted = [
            ("host", "127.0.0.1:8080"),
            ("origin", "https://ui.example.com"),
            ("sec-fetch-site", "cross-site"),
        ];
        assert_eq!(sender(&trusted), Sender::Own);
        assert_eq!(
            sender(&[("host", "127.0.0.1:8080"), ("origin", "https://ui.example.com:443")]),
            Sender::Own
        );
        assert!(
            is_foreign(&sender(&[("origin", "http://ui.example.com"), ("sec-fetch-site", "cross-site")])),
            "another scheme"
        );
    }

    /// What browsers send is accepted; what no browser sends (RFC 6454's serialization is scheme, host and
    /// port only) is refused as foreign, with or without Fetch Metadata, even where a URL parser would find
    /// this very host in it.
    #[test]
    fn only_serialized_origins_are_compared() {
        let host = ("host", "127.0.0.1:8080");
        let accepted = ["http://127.0.0.1:8080", "HTTP://127.0.0.1:8080", "http://[::1]:8080"];
        for origin in accepted {
            let ipv6 = ("host", "[::1]:8080");
            let addressed = if origin.contains('[') { ipv6 } else { host };
            assert_eq!(sender(&[addressed, ("origin", origin)]), Sender::Own, "{origin}");
        }
        let refused = [
            "http://evil.example@127.0.0.1:8080",
            "http://evil.example%40127.0.0.1:8080",
            "http://user:pass@127.0.0.1:8080",
            "http://@127.0.0.1:8080",
            "http://127.0.0.1:8080/",
            "http://127.0.0.1:8080/path",
            "http://127.0.0.1:8080?x",
            "http://127.0.0.1:8080#x",
            "http://127.0.0.1.:8080",
            "http://127.0.0.1:08080",
            "http://127.0.0.1:+8080",
            "http://127.0.0.1:",
            "http://127.0.0.1:99999",
            "http://127.0.0.1 :8080",
            "http:127.0.0.1:8080",
            "//127.0.0.1:8080",
            "127.0.0.1:8080",
            "ftp://127.0.0.1:8080",
            "http://127%2e0.0.1:8080",
            "http://127.0.0.1:8080\\@evil.example",
            "http://[::1%25eth0]:8080",
            "http://",
        ];
        for origin in refused {
            assert!(is_foreign(&sender(&[host, ("origin", origin)])), "{origin}");
            let browser_says_own = [host, ("origin", origin), ("sec-fetch-site", "same-origin")];
            assert!(is_foreign(&sender(&browser_says_own)), "{origin} with Sec-Fetch-Site");
        }
        let trailing_dot = [("host", "a.example."), ("origin", "http://a.example.")];
        assert!(is_foreign(&sender(&trailing_dot)), "a trailing dot on both sides");
        let trusted_with_userinfo = [host, ("origin", "https://x@ui.example.com")];
        assert!(is_foreign(&sender(&trusted_with_userinfo)), "userinfo before a trusted origin");
    }
}
