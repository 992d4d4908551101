//! What this host is called by, as 2.4.2 names it: trigger reports show it, and alarms link to the
//! console through it when the console listens on every interface.

/// The first non-loopback IPv4 address of this host, or `127.0.0.1` when it has none (2.4.2: IpUtil.getIp).
pub fn address() -> String {
    if_addrs::get_if_addrs()
        .ok()
        .and_then(|ifaces| {
            ifaces.into_iter().find_map(|i| match i.ip() {
                std::net::IpAddr::V4(v4) if !v4.is_loopback() => Some(v4.to_string()),
                _ => None,
            })
        })
        .unwrap_or_else(|| "127.0.0.1".to_string())
}
