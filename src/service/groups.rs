//! Executor groups (2.4.2: JobGroupController): seen by a user as the console's job and log pages offer
//! them (an administrator every group, others the groups their `permission` grants), managed by
//! administrators only, with 2.4.2's checks.

use super::audit::{changes, EventKind, Target};
use super::{LoginUser, ServiceContext, ServiceError};
use crate::domain::codes::AddressType;
use crate::domain::registry::{fitting_list, group_addresses, ADDRESS_LIST_MAX_BYTES, DEAD_TIMEOUT_SECS};
use crate::domain::{is_blank, java_split};
use crate::i18n::I18n;
use crate::storage::{Db, JobGroup};
use serde::Deserialize;
use std::collections::HashMap;

/// A page length that holds every group. Executor groups are few (one per application), so a
/// restricted user's page is cut from all matching groups rather than by a second SQL text.
pub const ALL: i64 = 100_000;

/// The groups of one page whose AppName and title contain the filters, and the total.
pub async fn list(
    state: &ServiceContext,
    user: &LoginUser,
    app_name: Option<String>,
    title: Option<String>,
    offset: i64,
    limit: i64,
) -> Result<(Vec<JobGroup>, i64), ServiceError> {
    let (offset, limit) = (offset.max(0), limit.max(0));
    let Some(permitted) = user.permitted_groups() else {
        return Ok(state.db.page_groups(&app_name, &title, offset, limit).await?);
    };
    let (mut groups, _) = state.db.page_groups(&app_name, &title, 0, ALL).await?;
    groups.retain(|g| permitted.contains(&g.id));
    let total = groups.len() as i64;
    Ok((groups.into_iter().skip(offset as usize).take(limit as usize).collect(), total))
}

/// Group `id` if the user may see it.
pub async fn get(state: &ServiceContext, user: &LoginUser, id: i32) -> Result<JobGroup, ServiceError> {
    user.ensure_access(state, id)?;
    let Some(group) = state.db.load_group(id).await? else {
        return Err(ServiceError::NotFound(format!(
            "{}{}",
            state.i18n.get("jobinfo_field_jobgroup"),
            state.i18n.get("system_not_found")
        )));
    };
    Ok(group)
}

/// The fields of the executor form.
// Defaults are per field: a container's `#[serde(default)]` would make the document declare each field's
// `Default` value, `null` for the texts the document says are strings.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupForm {
    /// Taken from the URL (API) or the form's `id` (console), never from a JSON body.
    #[serde(skip)]
    #[schema(ignore)]
    pub id: i32,
    /// The executors' AppName, 4 to 64 characters, neither markup nor control characters.
    #[schema(
        required = true,
        nullable = false,
        min_length = 4,
        max_length = 64,
        pattern = r"^[^<>\x00-\x1f\x7f-\x9f]*[^<>\x00-\x1f\x7f-\x9f \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^<>\x00-\x1f\x7f-\x9f]*$"
    )]
    pub appname: Option<String>,
    /// Display name, at most 12 characters.
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 12,
        pattern = r"^[^<>\x00]*[^<>\x00\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^<>\x00]*$"
    )]
    pub title: Option<String>,
    /// 0: addresses from executor registration; 1: the manual `addressList`.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 1, default = 0)]
    pub address_type: i8,
    /// Comma-separated executor addresses (manual groups).
    pub address_list: Option<String>,
}

impl GroupForm {
    /// The address type the form asks for, as the column stores it.
    pub fn address_type(&self) -> AddressType {
        AddressType::from(i16::from(self.address_type))
    }

    /// The checks of save and update, in 2.4.2's order; markup is refused on both (2.4.2 forgets it on
    /// update).
    pub(super) fn validate(&self, i18n: &I18n) -> Result<(), ServiceError> {
        let t = |key| i18n.get(key);
        let invalid = |text: String| Err(ServiceError::Invalid(text));
        let has_markup = |s: &str| s.contains('<') || s.contains('>');
        let appname = self.appname.as_deref().unwrap_or("");
        if is_blank(Some(appname)) {
            return invalid(format!("{}AppName", t("system_please_input")));
        }
        // Characters, as the varchar column (utf8mb4) and the REST API's JSON Schema count them; 2.4.2 counts
        // UTF-16 units, which differs only for characters beyond the BMP (emoji).
        let length = appname.chars().count();
        if !(4..=64).contains(&length) {
            return invalid(t("jobgroup_field_appname_length").to_string());
        }
        // Control characters too: an AppName is an identifier, written into logs and executor requests.
        if has_markup(appname) || appname.chars().any(char::is_control) {
            return invalid(format!("AppName{}", t("system_unvalid")));
        }
        let title = self.title.as_deref().unwrap_or("");
        if is_blank(Some(title)) {
            return invalid(format!("{}{}", t("system_please_input"), t("jobgroup_field_title")));
        }
        if has_markup(title) {
            return invalid(format!("{}{}", t("jobgroup_field_title"), t("system_unvalid")));
        }
        if title.chars().count() > 12 {
            return invalid(t("jobgroup_field_title_length").to_string());
        }
        // 2.4.2 takes any number for manual; the form and the REST API's document offer only these two.
        if !matches!(self.address_type(), AddressType::Auto | AddressType::Manual) {
            return invalid(format!("{}{}", t("jobgroup_field_addressType"), t("system_unvalid")));
        }
        if self.address_type() != AddressType::Auto {
            let list = self.address_list.as_deref().unwrap_or("");
            if is_blank(Some(list)) {
                return invalid(t("jobgroup_field_addressType_limit").to_string());
            }
            if has_markup(list) {
                return invalid(format!("{}{}", t("jobgroup_field_registryList"), t("system_unvalid")));
            }
            if java_split(list).iter().any(|a| is_blank(Some(a))) {
                return invalid(t("jobgroup_field_registryList_unvalid").to_string());
            }
        }
        // Whatever the type (an automatic group stores what it is sent until the monitor's next pass),
        // a longer list would not fit the TEXT column.
        if self.address_list.as_deref().is_some_and(|list| list.len() > ADDRESS_LIST_MAX_BYTES) {
            return invalid(t("jobgroup_field_registryList_length").to_string());
        }
        Ok(())
    }
}

/// Managing executors is for administrators.
pub(super) fn ensure_admin(i18n: &I18n, user: &LoginUser) -> Result<(), ServiceError> {
    if user.is_admin() {
        Ok(())
    } else {
        Err(ServiceError::Forbidden(i18n.get("system_permission_limit").to_string()))
    }
}

/// A group as the audit trail names it.
fn group_target(id: i32, app_name: Option<&str>) -> Target {
    Target::new("group", id, app_name.map(str::to_string))
}

/// Creates a group; returns its id.
pub async fn add(state: &ServiceContext, user: &LoginUser, form: GroupForm) -> Result<i32, ServiceError> {
    let app_name = form.appname.clone();
    let result = insert(state, user, form).await;
    let target = group_target(result.as_ref().map_or(0, |group| group.id), app_name.as_deref());
    state
        .audit
        .done(user, EventKind::GroupAdd, target, |group| changes(None, Some(group)), result)
        .map(|group| group.id)
}

async fn insert(state: &ServiceContext, user: &LoginUser, form: GroupForm) -> Result<JobGroup, ServiceError> {
    ensure_admin(&state.i18n, user)?;
    form.validate(&state.i18n)?;
    let group = JobGroup {
        id: 0,
        address_type: form.address_type(),
        app_name: form.appname.unwrap_or_default(),
        title: form.title.unwrap_or_default(),
        address_list: form.address_list,
        update_time: Some(state.db.datetime(state.clock.now_ms())),
    };
    match state.db.insert_group(&group).await? {
        id if id > 0 => Ok(JobGroup { id, ..group }),
        _ => Err(ServiceError::Failed),
    }
}

/// Changes group `form.id`; an automatic group takes its live registrations at once.
pub async fn update(state: &ServiceContext, user: &LoginUser, form: GroupForm) -> Result<(), ServiceError> {
    let target = group_target(form.id, form.appname.as_deref());
    let before = state.db.load_group(form.id).await.ok().flatten();
    let result = change(state, user, form).await;
    state
        .audit
        .done(user, EventKind::GroupUpdate, target, |group| changes(before.as_ref(), Some(group)), result)
        .map(drop)
}

async fn change(state: &ServiceContext, user: &LoginUser, form: GroupForm) -> Result<JobGroup, ServiceError> {
    ensure_admin(&state.i18n, user)?;
    form.validate(&state.i18n)?;
    let now = state.clock.now_ms();
    let address_type = form.address_type();
    let app_name = form.appname.unwrap_or_default();
    let address_list = if address_type == AddressType::Auto {
        live_addresses(&state.db, &app_name, now).await?
    } else {
        form.address_list
    };
    let group = JobGroup {
        id: form.id,
        app_name,
        title: form.title.unwrap_or_default(),
        address_type,
        address_list,
        update_time: Some(state.db.datetime(now)),
    };
    match state.db.update_group(&group).await? {
        0 => Err(ServiceError::Failed),
        _ => Ok(group),
    }
}

/// The live registrations of an automatic group, as the registry monitor would write them on its next
/// pass, cut to what the column holds.
pub(super) async fn live_addresses(
    db: &Db,
    app_name: &str,
    now_ms: i64,
) -> Result<Option<String>, ServiceError> {
    Ok(live_address_lists(db, now_ms).await?.remove(app_name))
}

/// [`live_addresses`] of every AppName with a live registration.
pub(super) async fn live_address_lists(
    db: &Db,
    now_ms: i64,
) -> Result<HashMap<String, String>, ServiceError> {
    let live = db.live_registrations(DEAD_TIMEOUT_SECS, now_ms).await?;
    Ok(group_addresses(live).into_iter().map(|(app, set)| (app, fitting_list(&set).0)).collect())
}

/// Deletes an empty group, unless it is the last one.
pub async fn remove(state: &ServiceContext, user: &LoginUser, id: i32) -> Result<(), ServiceError> {
    let before = state.db.load_group(id).await.ok().flatten();
    let result = delete(state, user, id).await;
    let target = group_target(id, before.as_ref().map(|group| group.app_name.as_str()));
    state.audit.done(user, EventKind::GroupRemove, target, |_| changes(before.as_ref(), None), result)
}

async fn delete(state: &ServiceContext, user: &LoginUser, id: i32) -> Result<(), ServiceError> {
    ensure_admin(&state.i18n, user)?;
    let t = |key| state.i18n.get(key).to_string();
    if !state.db.jobs_by_group(id).await?.is_empty() {
        return Err(ServiceError::Conflict(t("jobgroup_del_limit_0")));
    }
    if state.db.all_groups().await?.len() == 1 {
        return Err(ServiceError::Conflict(t("jobgroup_del_limit_1")));
    }
    match state.db.delete_group(id).await? {
        0 => Err(ServiceError::Failed),
        _ => Ok(()),
    }
}
