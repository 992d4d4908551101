//! Who a console login is (docs/authentication.md): the password kept in `xxl_job_user`, or, with an
//! LDAP directory configured, the directory's verdict, the user's row created or brought up to date
//! from it.

use crate::ldap::{Directory, DirectoryUser, Verdict};
use crate::storage::{Db, JobUser, Role, StorageError};
use subtle::ConstantTimeEq;

/// The `xxl_job_user.password` of a user the directory signs in. Not 32 hexadecimal digits, so no
/// password's MD5 ever equals it: such a user cannot log in with a local password, also not through
/// `fallback-to-local` while the directory is down, until an administrator sets one.
pub const DIRECTORY_PASSWORD: &str = "{ldap}";
/// `xxl_job_user.username` is a VARCHAR(50).
const USERNAME_MAX_CHARS: usize = 50;

/// How a login ended.
#[derive(Debug)]
pub enum Outcome {
    SignedIn(JobUser),
    /// Wrong name or password: counts as a failed attempt.
    Refused,
    /// The directory could not answer and no local password may stand in: not counted.
    DirectoryDown,
}

/// Checks `password` for `username`; `local` is the user's row, when there is one.
///
/// With a directory: a name it knows is its alone (its password decides, and its row is marked as the
/// directory's); a name it does not know, or any name while it cannot answer, may use a local password
/// only when `fallback-to-local` allows.
pub async fn check(
    db: &Db,
    directory: Option<&Directory>,
    local: Option<JobUser>,
    username: &str,
    password: &str,
) -> Result<Outcome, StorageError> {
    let Some(directory) = directory else { return Ok(local_check(local, password)) };
    match directory.verify(username, password).await {
        Ok(Verdict::Accepted(entry)) if username.chars().count() <= USERNAME_MAX_CHARS => {
            Ok(Outcome::SignedIn(save(db, directory, local, username, &entry).await?))
        }
        Ok(Verdict::Accepted(_)) => {
            tracing::warn!(
                username,
                "LDAP login refused: the name is longer than xxl_job_user allows ({USERNAME_MAX_CHARS})"
            );
            Ok(Outcome::Refused)
        }
        Ok(Verdict::WrongPassword) => Ok(Outcome::Refused),
        Ok(Verdict::UnknownUser) if directory.falls_back_to_local() => Ok(local_check(local, password)),
        Ok(Verdict::UnknownUser) => Ok(Outcome::Refused),
        Err(e) => {
            tracing::warn!(username, "console login: {e}");
            match local_check(local, password) {
                signed_in @ Outcome::SignedIn(_) if directory.falls_back_to_local() => Ok(signed_in),
                _ => Ok(Outcome::DirectoryDown),
            }
        }
    }
}

fn local_check(local: Option<JobUser>, password: &str) -> Outcome {
    // Password as sent, untrimmed, as 2.4.2 hashes it.
    match local.filter(|user| password_matches(user, password)) {
        Some(user) => Outcome::SignedIn(user),
        None => Outcome::Refused,
    }
}

/// The user's row as the directory describes it: created on the first login; role and permissions
/// from the groups where a mapping is configured, else as an administrator set them.
async fn save(
    db: &Db,
    directory: &Directory,
    local: Option<JobUser>,
    username: &str,
    entry: &DirectoryUser,
) -> Result<JobUser, StorageError> {
    let role = directory.is_admin(entry).map(|admin| if admin { Role::Admin } else { Role::Normal });
    let permission = match directory.executor_apps(entry) {
        Some(apps) => Some(permission_of(db, &apps).await?),
        None => None,
    };
    let Some(mut user) = local else {
        let user = JobUser {
            id: 0,
            username: username.to_string(),
            password: DIRECTORY_PASSWORD.to_string(),
            role: role.unwrap_or_default(),
            permission: permission.flatten(),
        };
        let id = match db.insert_user(&user).await {
            Ok(id) => id,
            // Two first logins at once: the other one created the row.
            Err(e) => db.load_user_by_name(username).await?.ok_or(e)?.id,
        };
        tracing::info!(username, dn = %entry.dn, "created the user of a first LDAP login");
        return Ok(db.load_user(id).await?.unwrap_or(JobUser { id, ..user }));
    };
    let before = user.clone();
    user.password = DIRECTORY_PASSWORD.to_string();
    user.role = role.unwrap_or(user.role);
    user.permission = permission.unwrap_or(user.permission);
    if user != before {
        let password = (user.password != before.password).then_some(DIRECTORY_PASSWORD);
        db.update_user(user.id, password, user.role, user.permission.as_deref()).await?;
        tracing::info!(username, role = i16::from(user.role), permission = ?user.permission, "updated the user from LDAP");
    }
    Ok(user)
}

/// The `permission` column for executors named by AppName: their ids, comma-separated, ascending;
/// `None` for none. AppNames without an executor are left out.
async fn permission_of(db: &Db, apps: &[String]) -> Result<Option<String>, StorageError> {
    let mut ids: Vec<i32> =
        db.all_groups().await?.into_iter().filter(|g| apps.contains(&g.app_name)).map(|g| g.id).collect();
    ids.sort_unstable();
    ids.dedup();
    Ok((!ids.is_empty()).then(|| ids.iter().map(i32::to_string).collect::<Vec<_>>().join(",")))
}

/// Whether `password` is the user's, compared in constant time.
pub fn password_matches(user: &JobUser, password: &str) -> bool {
    bool::from(md5_hex(password).as_bytes().ct_eq(user.password.as_bytes()))
}

/// Lowercase hex MD5 of the password bytes, the `xxl_job_user.password` format.
pub fn md5_hex(password: &str) -> String {
    use md5::Digest as _;
    hex::encode(md5::Md5::digest(password.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_password_hashes_to_the_directory_marker() {
        assert!(DIRECTORY_PASSWORD.len() != 32 || !DIRECTORY_PASSWORD.chars().all(|c| c.is_ascii_hexdigit()));
        let user = JobUser {
            id: 3,
            username: "alice".into(),
            password: DIRECTORY_PASSWORD.into(),
            role: Role::Normal,
            permission: None,
        };
        for password in ["", "{ldap}", "secret"] {
            assert!(matches!(local_check(Some(user.clone()), password), Outcome::Refused), "{password}");
        }
        let local = JobUser { password: md5_hex("secret"), ..user };
        assert!(matches!(local_check(Some(local), "secret"), Outcome::SignedIn(_)));
    }
}
