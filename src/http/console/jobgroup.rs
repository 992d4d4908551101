//! The executor manager's endpoints (spec console 1.5); administrators only.

use super::error::{ConsoleError, JsonError};
use super::params::Params;
use super::views::{GroupView, Page};
use super::{changes_state, JsonResult, OrJson};
use crate::app::AppState;
use crate::domain::{is_blank, java_split, ReturnT};
use crate::storage::JobGroup;
use crate::workers::registry::{fitting_list, group_addresses, ADDRESS_LIST_MAX_BYTES, DEAD_TIMEOUT_SECS};
use axum::extract::State;
use axum::routing::any;
use axum::{Json, Router};

pub fn routes() -> Router<AppState> {
    let mut router = Router::new();
    for (path, handler) in [
        ("/jobgroup/pageList", any(page_list)),
        ("/jobgroup/save", changes_state(save)),
        ("/jobgroup/update", changes_state(update)),
        ("/jobgroup/remove", changes_state(remove)),
        ("/jobgroup/loadById", any(load_by_id)),
    ] {
        router = router.route(path, handler.clone()).route(&format!("{path}/"), handler);
    }
    router
}

async fn page_list(State(state): State<AppState>, params: Params) -> Result<Json<Page<GroupView>>, JsonError> {
    let start: i64 = params.number_or("start", 0).or_json(&state)?;
    let length: i64 = params.number_or("length", 10).or_json(&state)?;
    let (groups, total) = state
        .db
        .page_groups(&params.string("appname"), &params.string("title"), start.max(0), length.max(0))
        .await
        .or_json(&state)?;
    let zone = state.db.zone();
    Ok(Json(Page::new(groups.into_iter().map(|g| GroupView::new(g, zone)).collect(), total)))
}

struct GroupForm {
    id: i32,
    appname: Option<String>,
    title: Option<String>,
    address_type: i8,
    address_list: Option<String>,
}

impl GroupForm {
    fn read(params: &Params) -> Result<GroupForm, ConsoleError> {
        Ok(GroupForm {
            id: params.number_or("id", 0)?,
            appname: params.string("appname"),
            title: params.string("title"),
            address_type: params.number_or("addressType", 0)?,
            address_list: params.string("addressList"),
        })
    }

    /// The checks of save and update, in 2.4.2's order; markup is refused on both (2.4.2 forgets it on
    /// update).
    fn validate(&self, state: &AppState) -> Result<(), ConsoleError> {
        let t = |key| state.i18n.get(key);
        let has_markup = |s: &str| s.contains('<') || s.contains('>');
        let appname = self.appname.as_deref().unwrap_or("");
        if is_blank(Some(appname)) {
            return Err(ConsoleError::msg(format!("{}AppName", t("system_please_input"))));
        }
        let length = appname.encode_utf16().count();
        if !(4..=64).contains(&length) {
            return Err(ConsoleError::msg(t("jobgroup_field_appname_length")));
        }
        if has_markup(appname) {
            return Err(ConsoleError::msg(format!("AppName{}", t("system_unvalid"))));
        }
        let title = self.title.as_deref().unwrap_or("");
        if is_blank(Some(title)) {
            return Err(ConsoleError::msg(format!("{}{}", t("system_please_input"), t("jobgroup_field_title"))));
        }
        if has_markup(title) {
            return Err(ConsoleError::msg(format!("{}{}", t("jobgroup_field_title"), t("system_unvalid"))));
        }
        if title.encode_utf16().count() > 12 {
            return Err(ConsoleError::msg(t("jobgroup_field_title_length")));
        }
        if self.address_type != 0 {
            let list = self.address_list.as_deref().unwrap_or("");
            if is_blank(Some(list)) {
                return Err(ConsoleError::msg(t("jobgroup_field_addressType_limit")));
            }
            if has_markup(list) {
                return Err(ConsoleError::msg(format!("{}{}", t("jobgroup_field_registryList"), t("system_unvalid"))));
            }
            if java_split(list).iter().any(|a| is_blank(Some(a))) {
                return Err(ConsoleError::msg(t("jobgroup_field_registryList_unvalid")));
            }
        }
        // Whatever the type (an automatic group stores what it is sent until the monitor's next pass),
        // a longer list would not fit the TEXT column.
        if self.address_list.as_deref().is_some_and(|list| list.len() > ADDRESS_LIST_MAX_BYTES) {
            return Err(ConsoleError::msg(t("jobgroup_field_registryList_length")));
        }
        Ok(())
    }
}

async fn save(State(state): State<AppState>, params: Params) -> JsonResult<()> {
    let form = GroupForm::read(&params).or_json(&state)?;
    form.validate(&state).or_json(&state)?;
    let group = JobGroup {
        id: 0,
        app_name: form.appname.unwrap_or_default(),
        title: form.title.unwrap_or_default(),
        address_type: form.address_type,
        address_list: form.address_list,
        update_time: Some(state.db.datetime(state.clock.now_ms())),
    };
    let id = state.db.insert_group(&group).await.or_json(&state)?;
    Ok(Json(if id > 0 { ReturnT::success() } else { ReturnT { code: 500, msg: None, content: None } }))
}

async fn update(State(state): State<AppState>, params: Params) -> JsonResult<()> {
    let form = GroupForm::read(&params).or_json(&state)?;
    form.validate(&state).or_json(&state)?;
    let now = state.clock.now_ms();
    let app_name = form.appname.unwrap_or_default();
    let address_list = if form.address_type == 0 {
        // Automatic groups take their live registrations right away, as the monitor would.
        let live = state.db.live_registrations(DEAD_TIMEOUT_SECS, now).await.or_json(&state)?;
        // Cut to what the column holds, as the monitor does.
        group_addresses(live).get(&app_name).map(|set| fitting_list(set).0)
    } else {
        form.address_list
    };
    let group = JobGroup {
        id: form.id,
        app_name,
        title: form.title.unwrap_or_default(),
        address_type: form.address_type,
        address_list,
        update_time: Some(state.db.datetime(now)),
    };
    let updated = state.db.update_group(&group).await.or_json(&state)?;
    Ok(Json(if updated > 0 { ReturnT::success() } else { ReturnT { code: 500, msg: None, content: None } }))
}

async fn remove(State(state): State<AppState>, params: Params) -> JsonResult<()> {
    let id: i32 = params.required("id").or_json(&state)?;
    let t = |key| state.i18n.get(key);
    if !state.db.jobs_by_group(id).await.or_json(&state)?.is_empty() {
        return Ok(Json(ReturnT::fail(t("jobgroup_del_limit_0"))));
    }
    if state.db.all_groups().await.or_json(&state)?.len() == 1 {
        return Ok(Json(ReturnT::fail(t("jobgroup_del_limit_1"))));
    }
    let deleted = state.db.delete_group(id).await.or_json(&state)?;
    Ok(Json(if deleted > 0 { ReturnT::success() } else { ReturnT { code: 500, msg: None, content: None } }))
}

async fn load_by_id(State(state): State<AppState>, params: Params) -> JsonResult<GroupView> {
    let id: i32 = params.required("id").or_json(&state)?;
    let zone = state.db.zone();
    Ok(Json(match state.db.load_group(id).await.or_json(&state)? {
        Some(group) => ReturnT::with_content(GroupView::new(group, zone)),
        None => ReturnT { code: 500, msg: None, content: None },
    }))
}
