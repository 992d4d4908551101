//! Text helpers shared by the configuration's readers (the sections and the JDBC URL parsers): a leaf
//! that imports nothing of `config`, so the readers can share it without naming each other.

const MASK: &str = "******";

/// Spring's string-to-boolean conversion.
pub(crate) fn parse_bool(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Ok(true),
        "false" | "no" | "off" | "0" => Ok(false),
        _ => Err("expected true or false".into()),
    }
}

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

    #[test]
    fn spring_booleans() {
        assert_eq!(parse_bool(" Yes "), Ok(true));
        assert_eq!(parse_bool("off"), Ok(false));
        assert!(parse_bool("maybe").is_err());
    }
}
