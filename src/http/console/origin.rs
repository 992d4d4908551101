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
use url::Url;

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
        let parsed = origin.and_then(|o| Url::parse(o).ok()).filter(|u| u.has_host());
        if parsed.as_ref().is_some_and(|url| self.trusted.contains(&url.origin().ascii_serialization())) {
            return Sender::Own;
        }
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
        // "null" (sandboxed frames, file: pages) parses to no host and is foreign.
        let Some(url) = parsed else { return foreign() };
        let own = addressed.iter().any(|(scheme, host)| {
            let scheme = scheme.unwrap_or(url.scheme());
            Url::parse(&format!("{scheme}://{host}"))
                .is_ok_and(|candidate| candidate.origin() == url.origin())
        });
        if own {
            Sender::Own
        } else {
            foreign()
        }
    }
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
}
