//! Console users (spec console 1.6): administrators add, change and remove them, with 2.4.2's checks
//! (name and password lengths, unique names, nobody changing themselves there); everyone changes their
//! own password, giving the old one. Passwords are stored as 2.4.2 stores them (see [`md5_hex`]).

use super::login::{md5_hex, password_matches};
use super::{LoginUser, ServiceContext, ServiceError};
use crate::domain::is_blank;
use crate::i18n::I18n;
use crate::storage::{JobUser, Role};

/// The fields of the user form; the role is read apart (see [`add`]).
#[derive(Debug, Clone, Default)]
pub struct UserForm {
    pub username: Option<String>,
    pub password: Option<String>,
    pub permission: Option<String>,
}

fn invalid(text: String) -> ServiceError {
    ServiceError::Invalid(text)
}

/// "Please input" and the field's name.
fn missing(i18n: &I18n, field: &str) -> ServiceError {
    invalid(format!("{}{}", i18n.get("system_please_input"), i18n.get(field)))
}

/// A trimmed name or password of 4 to 20 characters, or the length message.
fn of_length(i18n: &I18n, text: &str) -> Result<String, ServiceError> {
    let text = text.trim();
    if !(4..=20).contains(&text.encode_utf16().count()) {
        return Err(invalid(format!("{}[4-20]", i18n.get("system_lengh_limit"))));
    }
    Ok(text.to_string())
}

/// Creates a user. The role is read once the name and password pass, as the console always did, so
/// a form wrong in both says what is wrong with the name.
pub async fn add<E: From<ServiceError>>(
    ctx: &ServiceContext,
    form: UserForm,
    role: impl FnOnce() -> Result<Role, E>,
) -> Result<JobUser, E> {
    let i18n = &ctx.i18n;
    let username = form.username.unwrap_or_default();
    if is_blank(Some(&username)) {
        return Err(missing(i18n, "user_username").into());
    }
    let username = of_length(i18n, &username)?;
    let password = form.password.unwrap_or_default();
    if is_blank(Some(&password)) {
        return Err(missing(i18n, "user_password").into());
    }
    let password = of_length(i18n, &password)?;
    if ctx.db.load_user_by_name(&username).await.map_err(ServiceError::from)?.is_some() {
        return Err(invalid(i18n.get("user_username_repeat").to_string()).into());
    }
    let mut user =
        JobUser { id: 0, username, password: md5_hex(&password), role: role()?, permission: form.permission };
    user.id = ctx.db.insert_user(&user).await.map_err(ServiceError::from)?;
    Ok(user)
}

/// Nobody changes or removes themselves in the user manager.
fn ensure_other(i18n: &I18n, login: &LoginUser, id: i32, username: Option<&str>) -> Result<(), ServiceError> {
    // 2.4.2 compares the submitted name, so a request naming someone else could change oneself.
    if id == login.0.id || username == Some(login.0.username.as_str()) {
        return Err(invalid(i18n.get("user_update_loginuser_limit").to_string()));
    }
    Ok(())
}

/// Changes user `id`: its password when one is given, its role and permission. Returns the user as
/// stored afterwards.
pub async fn update<E: From<ServiceError>>(
    ctx: &ServiceContext,
    login: &LoginUser,
    id: i32,
    form: UserForm,
    role: impl FnOnce() -> Result<Role, E>,
) -> Result<Option<JobUser>, E> {
    ensure_other(&ctx.i18n, login, id, form.username.as_deref())?;
    let password = match form.password.filter(|p| !is_blank(Some(p))) {
        Some(password) => Some(md5_hex(&of_length(&ctx.i18n, &password)?)),
        None => None,
    };
    let role = role()?;
    ctx.db
        .update_user(id, password.as_deref(), role, form.permission.as_deref())
        .await
        .map_err(ServiceError::from)?;
    Ok(ctx.db.load_user(id).await.map_err(ServiceError::from)?)
}

/// Removes user `id`, who is not the one asking.
pub async fn remove(ctx: &ServiceContext, login: &LoginUser, id: i32) -> Result<(), ServiceError> {
    ensure_other(&ctx.i18n, login, id, None)?;
    ctx.db.delete_user(id).await?;
    Ok(())
}

/// The old and the new password of a change, both given, the new one of the right length; returns the
/// new one trimmed.
pub fn password_change(i18n: &I18n, old: &str, new: &str) -> Result<String, ServiceError> {
    if is_blank(Some(old)) {
        return Err(missing(i18n, "change_pwd_field_oldpwd"));
    }
    if is_blank(Some(new)) {
        return Err(missing(i18n, "change_pwd_field_newpwd"));
    }
    of_length(i18n, new)
}

/// The old password of a change, which must be the user's.
pub fn check_old_password(i18n: &I18n, user: &JobUser, old: &str) -> Result<(), ServiceError> {
    if password_matches(user, old) {
        return Ok(());
    }
    Err(invalid(format!("{}{}", i18n.get("change_pwd_field_oldpwd"), i18n.get("system_unvalid"))))
}

/// Stores the user's new password, which must differ from the current one.
pub async fn set_password(ctx: &ServiceContext, user: &JobUser, new: &str) -> Result<(), ServiceError> {
    // Asked after the old password, so it tells nothing that one did not.
    if md5_hex(new) == user.password {
        return Err(invalid(ctx.i18n.get("change_pwd_same").to_string()));
    }
    ctx.db.update_user(user.id, Some(&md5_hex(new)), user.role, user.permission.as_deref()).await?;
    Ok(())
}
