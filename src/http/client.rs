//! The client address of a request: the socket peer, or what `X-Forwarded-For` says when
//! `server.forward-headers-strategy` trusts it, as Spring Boot decides.
//!
//! The list is read from the right, skipping internal proxies, as Tomcat's `RemoteIpValve` does: the
//! left end is whatever the client chose to send, so believing it would let a guesser pose as a new
//! address on every attempt.

use crate::config::ForwardHeaders;
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{Extensions, HeaderMap, StatusCode};
use std::net::{IpAddr, SocketAddr};

/// The client's address, per [`client_address`]. Needs the server's connect info.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr(pub IpAddr);

impl FromRequestParts<crate::http::state::AppState> for ClientAddr {
    type Rejection = (StatusCode, &'static str);

    async fn from_request_parts(
        parts: &mut Parts,
        state: &crate::http::state::AppState,
    ) -> Result<Self, Self::Rejection> {
        request_address(state.config.server.forward_headers, &parts.extensions, &parts.headers)
            .map(ClientAddr)
            .ok_or((StatusCode::INTERNAL_SERVER_ERROR, "the server was started without connection info"))
    }
}

/// The client's address of a request whose extensions carry the server's connect info.
pub fn request_address(
    strategy: ForwardHeaders,
    extensions: &Extensions,
    headers: &HeaderMap,
) -> Option<IpAddr> {
    let ConnectInfo(peer) = extensions.get::<ConnectInfo<SocketAddr>>()?;
    Some(client_address(strategy, peer.ip(), headers))
}

pub fn client_address(strategy: ForwardHeaders, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
    let peer = peer.to_canonical();
    let trusted = match strategy {
        ForwardHeaders::None => false,
        ForwardHeaders::Native => is_internal(peer),
        ForwardHeaders::Framework => true,
    };
    if !trusted {
        return peer;
    }
    let hops: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    let mut client = peer;
    for hop in hops.iter().rev() {
        let Ok(address) = hop.parse::<IpAddr>() else { break };
        client = address.to_canonical();
        if !is_internal(client) {
            break;
        }
    }
    client
}

/// Tomcat's default `internalProxies`: loopback, private, link-local and carrier-grade NAT addresses.
fn is_internal(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback() || v4.is_private() || v4.is_link_local() || (a == 100 && (64..128).contains(&b))
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            v6.is_loopback() || first & 0xffc0 == 0xfe80 || first & 0xfe00 == 0xfc00
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn forwarded(values: &[&'static str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append("x-forwarded-for", HeaderValue::from_static(value));
        }
        headers
    }

    #[test]
    fn the_peer_unless_the_strategy_trusts_the_header() {
        let headers = forwarded(&["203.0.113.9"]);
        assert_eq!(client_address(ForwardHeaders::None, ip("10.0.0.1"), &headers), ip("10.0.0.1"));
        assert_eq!(client_address(ForwardHeaders::Native, ip("10.0.0.1"), &headers), ip("203.0.113.9"));
        assert_eq!(
            client_address(ForwardHeaders::Native, ip("198.51.100.1"), &headers),
            ip("198.51.100.1"),
            "an outside peer is not a proxy"
        );
        assert_eq!(
            client_address(ForwardHeaders::Framework, ip("198.51.100.1"), &headers),
            ip("203.0.113.9")
        );
        assert_eq!(
            client_address(ForwardHeaders::Native, ip("::ffff:127.0.0.1"), &HeaderMap::new()),
            ip("127.0.0.1")
        );
    }

    #[test]
    fn the_list_is_read_from_the_right_past_internal_proxies() {
        let spoofed = forwarded(&["1.2.3.4, 203.0.113.9", "10.1.1.1"]);
        assert_eq!(client_address(ForwardHeaders::Native, ip("127.0.0.1"), &spoofed), ip("203.0.113.9"));
        let garbage = forwarded(&["nonsense, 192.168.1.5"]);
        assert_eq!(client_address(ForwardHeaders::Native, ip("127.0.0.1"), &garbage), ip("192.168.1.5"));
        let internal_only = forwarded(&["fd00::1, 172.16.0.3"]);
        assert_eq!(
            client_address(ForwardHeaders::Framework, ip("100.64.0.1"), &internal_only),
            ip("fd00::1")
        );
    }
}
