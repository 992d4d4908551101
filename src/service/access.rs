//! Who acts: a user as stored now, with the group rights of its role (2.4.2: XxlJobUser.validPermission).

use super::{ServiceContext, ServiceError};
use crate::domain::java_split;
use crate::i18n::I18n;
use crate::storage::{JobUser, Role};
use std::net::IpAddr;

/// The user of a request, as stored in the database now (console session or API token alike), and
/// where the request came from, for the audit trail.
#[derive(Debug, Clone)]
pub struct LoginUser(pub JobUser, pub Origin);

/// Where a request came from, as the HTTP edge saw it; empty for the configuration's own changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    /// The client's address (`server.forward-headers-strategy` applied).
    pub address: Option<IpAddr>,
    /// The id of the API token acting, never its text; `None` for a console session.
    pub token_id: Option<String>,
}

impl LoginUser {
    pub fn is_admin(&self) -> bool {
        self.0.role == Role::Admin
    }

    /// An administrator sees every group; others the groups listed exactly in `permission` (2.4.2:
    /// XxlJobUser.validPermission).
    pub fn can_access(&self, group: i32) -> bool {
        self.is_admin()
            || self
                .0
                .permission
                .as_deref()
                .is_some_and(|p| java_split(p).contains(&group.to_string().as_str()))
    }

    /// Fails with 2.4.2's permission message, naming the user, unless the group is permitted; a refusal
    /// is an audit event.
    pub fn ensure_access(&self, state: &ServiceContext, group: i32) -> Result<(), ServiceError> {
        let result = self.ensure_access_with(&state.i18n, group);
        if let Err(ServiceError::Forbidden(msg)) = &result {
            state.audit.refused_group(self, group, msg);
        }
        result
    }

    /// [`Self::ensure_access`] with the messages at hand (the command line has no service context).
    pub fn ensure_access_with(&self, i18n: &I18n, group: i32) -> Result<(), ServiceError> {
        if self.can_access(group) {
            Ok(())
        } else {
            Err(ServiceError::Forbidden(format!(
                "{}[username={}]",
                i18n.get("system_permission_limit"),
                self.0.username
            )))
        }
    }

    /// The groups a non-admin may see; `None` for an admin (no restriction).
    pub fn permitted_groups(&self) -> Option<Vec<i32>> {
        if self.is_admin() {
            return None;
        }
        Some(
            self.0
                .permission
                .as_deref()
                .map(java_split)
                .unwrap_or_default()
                .iter()
                .filter_map(|g| g.parse().ok())
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(role: i16, permission: Option<&str>) -> LoginUser {
        LoginUser(
            JobUser {
                id: 2,
                username: "u".into(),
                password: String::new(),
                role: role.into(),
                permission: permission.map(str::to_string),
            },
            Origin::default(),
        )
    }

    #[test]
    fn group_permissions_match_exact_untrimmed_ids() {
        assert!(user(1, None).can_access(99));
        let u = user(0, Some("1, 3,12"));
        assert!(u.can_access(1) && u.can_access(12));
        assert!(!u.can_access(3), "' 3' does not grant 3, as in 2.4.2");
        assert!(!u.can_access(2));
        assert!(!user(0, None).can_access(1));
        assert_eq!(u.permitted_groups(), Some(vec![1, 12]));
        assert_eq!(user(1, Some("1")).permitted_groups(), None);
    }
}
