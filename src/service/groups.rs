//! Executor groups as a user may see them: an administrator every group, others the groups their
//! `permission` grants (the groups the console's job and log pages offer them).

use super::{LoginUser, ServiceError};
use crate::app::AppState;
use crate::storage::JobGroup;

/// A page length that holds every group. Executor groups are few (one per application), so a
/// restricted user's page is cut from all matching groups rather than by a second SQL text.
pub const ALL: i64 = 100_000;

/// The groups of one page whose AppName and title contain the filters, and the total.
pub async fn list(
    state: &AppState,
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
pub async fn get(state: &AppState, user: &LoginUser, id: i32) -> Result<JobGroup, ServiceError> {
    user.ensure_access(state, id)?;
    let Some(group) = state.db.load_group(id).await? else {
        return Err(ServiceError::NotFound(format!("{}{}", state.i18n.get("jobinfo_field_jobgroup"), state.i18n.get("system_not_found"))));
    };
    Ok(group)
}
