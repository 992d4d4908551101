//! Search filters from configured templates, with every value escaped (RFC 4515, 3), and group names.

use ldap3::ldap_escape;

/// `template` with `{0}` replaced by the login name and `{dn}` by the user's DN, both escaped so a
/// value is always one assertion value: `*`, `(`, `)`, `\` and NUL become `\2a`, `\28`, `\29`, `\5c`,
/// `\00`. One pass, so a name containing `{dn}` stays that text.
pub(super) fn fill(template: &str, username: &str, dn: Option<&str>) -> String {
    let mut out = String::with_capacity(template.len() + username.len());
    let mut rest = template;
    loop {
        let next = [("{0}", Some(username)), ("{dn}", dn)]
            .into_iter()
            .filter_map(|(placeholder, value)| Some((rest.find(placeholder)?, placeholder, value?)))
            .min_by_key(|(at, _, _)| *at);
        let Some((at, placeholder, value)) = next else { break };
        out.push_str(&rest[..at]);
        out.push_str(&ldap_escape(value));
        rest = &rest[at + placeholder.len()..];
    }
    out.push_str(rest);
    out
}

/// Whether a group of the user (a DN, or a bare name from some directories' attributes) is the
/// configured one, given by DN or by name (the value of the DN's first part: `ops` for
/// `cn=ops,ou=groups,dc=example,dc=com`). Case-insensitive, as directories compare these names.
pub(super) fn same_group(group: &str, configured: &str) -> bool {
    let configured = configured.trim();
    let normal = |dn: &str| dn.split(',').map(str::trim).collect::<Vec<_>>().join(",");
    normal(group).eq_ignore_ascii_case(&normal(configured))
        || first_value(group).is_some_and(|name| name.eq_ignore_ascii_case(configured))
}

/// `ops` of `cn=ops,ou=groups,…`; `None` for a value that is no DN.
fn first_value(dn: &str) -> Option<&str> {
    let first = dn.split(',').next()?;
    first.split_once('=').map(|(_, value)| value.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_so_a_name_cannot_change_the_filter() {
        assert_eq!(fill("(uid={0})", "alice", None), "(uid=alice)");
        assert_eq!(fill("(uid={0})", "*)(uid=*", None), r"(uid=\2a\29\28uid=\2a)");
        assert_eq!(fill("(uid={0})", "a\\b\0", None), r"(uid=a\5cb\00)");
        assert_eq!(
            fill("(&(objectClass=person)(|(uid={0})(mail={0})))", "x*", None),
            r"(&(objectClass=person)(|(uid=x\2a)(mail=x\2a)))"
        );
    }

    #[test]
    fn the_dn_is_escaped_too_and_names_are_not_read_twice() {
        assert_eq!(fill("(member={dn})", "alice", Some("cn=a (x),dc=ex")), r"(member=cn=a \28x\29,dc=ex)");
        assert_eq!(
            fill("(|(member={dn})(memberUid={0}))", "alice", Some("uid=alice,dc=ex")),
            "(|(member=uid=alice,dc=ex)(memberUid=alice))"
        );
        assert_eq!(
            fill("(uid={0})", "{dn}", Some("cn=x")),
            "(uid={dn})",
            "a placeholder inside a value stays text"
        );
        assert_eq!(fill("(member={dn})", "alice", None), "(member={dn})", "no DN to fill");
    }

    #[test]
    fn groups_match_by_dn_or_name() {
        let dn = "cn=Ops,ou=groups,dc=example,dc=com";
        assert!(same_group(dn, "ops"));
        assert!(same_group(dn, "CN=ops, ou=groups, dc=example, dc=com"));
        assert!(!same_group(dn, "groups"));
        assert!(!same_group(dn, "cn=ops,ou=other,dc=example,dc=com"));
        assert!(same_group("ops", "ops"), "a bare name from memberUid-style attributes");
        assert!(!same_group("dev", "ops"));
    }
}
