//! The console's pages and the two endpoints that belong to them (`/chartInfo`, `/jobcode/save`).

use super::error::{ConsoleError, PageError};
use super::params::Params;
use super::render::{render, script_json};
use super::session::DEFAULT_PASSWORD_MD5;
use super::views::JobView;
use super::{changes_state, cookie, current_user, JsonResult, LoginUser};
use super::{oidc, return_to};
use crate::domain::glue::{BlockStrategy, GlueType};
use crate::domain::routing::RouteStrategy;
use crate::domain::schedule::{MisfireStrategy, ScheduleType};
use crate::domain::{java_split, ReturnT, GLUE_HISTORY};
use crate::http::state::AppState;
use crate::service::audit::{self, changes, EventKind, Target};
use crate::service::groups;
use crate::service::ServiceContext;
use crate::storage::LogGlue;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::any;
use axum::{Json, Router};
use chrono::{Duration, NaiveDateTime};
use minijinja::{context, Value};
use serde::Serialize;
use std::collections::BTreeSet;
use tower_sessions::Session;

pub fn gated_routes() -> Router<AppState> {
    let mut router = Router::new();
    for (path, handler) in [
        ("/jobinfo", any(jobinfo_page)),
        ("/joblog", any(joblog_page)),
        ("/joblog/logDetailPage", any(log_detail_page)),
        ("/jobgroup", any(jobgroup_page)),
        ("/user", any(user_page)),
        ("/alarm", any(alarm_page)),
        ("/audit", any(audit_page)),
        ("/jobcode", any(jobcode_page)),
        ("/help", any(help_page)),
    ] {
        router = router.route(path, handler.clone()).route(&format!("{path}/"), handler);
    }
    router.route("/", any(dashboard))
}

pub fn gated_data_routes() -> Router<AppState> {
    Router::new()
        .route("/chartInfo", any(chart_info))
        .route("/chartInfo/", any(chart_info))
        .route("/jobcode/save", changes_state(jobcode_save))
        .route("/jobcode/save/", changes_state(jobcode_save))
}

pub fn public_routes() -> Router<AppState> {
    Router::new().route("/toLogin", any(to_login)).route("/toLogin/", any(to_login))
}

/// The sidebar is collapsed when the client's settings cookie says so.
fn collapsed(headers: &HeaderMap) -> bool {
    cookie(headers, "xxljob_adminlte_settings").as_deref() == Some("off")
}

/// A gated page. Administrators are warned on every page while an administrator account keeps the
/// default password.
pub(super) async fn page(
    state: &AppState,
    user: &LoginUser,
    headers: &HeaderMap,
    template: &str,
    model: Value,
) -> Result<Html<String>, PageError> {
    let default_password =
        user.is_admin() && state.services.db.admins_with_password(DEFAULT_PASSWORD_MD5).await? > 0;
    let model = context! { default_password_warning => default_password, ..model };
    render(state, Some(&user.0), collapsed(headers), template, model)
}

/// A select option: value and label.
#[derive(Serialize)]
struct Choice {
    value: &'static str,
    label: String,
}

fn choices(services: &ServiceContext) -> Value {
    let t = |key: &str| services.i18n.get(key).to_string();
    let route: Vec<Choice> =
        RouteStrategy::ALL.iter().map(|r| Choice { value: r.name(), label: t(r.i18n_key()) }).collect();
    let glue: Vec<Choice> =
        GlueType::ALL.iter().map(|g| Choice { value: g.name(), label: g.title().to_string() }).collect();
    let block: Vec<Choice> =
        BlockStrategy::ALL.iter().map(|b| Choice { value: b.name(), label: t(b.i18n_key()) }).collect();
    let schedule: Vec<Choice> =
        ScheduleType::ALL.iter().map(|s| Choice { value: s.name(), label: t(s.i18n_key()) }).collect();
    let misfire: Vec<Choice> =
        MisfireStrategy::ALL.iter().map(|m| Choice { value: m.name(), label: t(m.i18n_key()) }).collect();
    context! { route => route, glue => glue, block => block, schedule => schedule, misfire => misfire }
}

#[derive(Serialize)]
pub(super) struct GroupChoice {
    id: i32,
    appname: String,
    title: String,
}

/// The groups the user may see, or the "no executor" failure of 2.4.2.
pub(super) async fn visible_groups(
    services: &ServiceContext,
    user: &LoginUser,
) -> Result<Vec<GroupChoice>, PageError> {
    let (groups, _) = groups::list(services, user, None, None, 0, groups::ALL).await?;
    let visible: Vec<GroupChoice> =
        groups.into_iter().map(|g| GroupChoice { id: g.id, appname: g.app_name, title: g.title }).collect();
    if visible.is_empty() {
        return Err(PageError(ConsoleError::msg(services.i18n.get("jobgroup_empty"))));
    }
    Ok(visible)
}

async fn dashboard(
    State(state): State<AppState>,
    user: LoginUser,
    headers: HeaderMap,
) -> Result<Html<String>, PageError> {
    let jobs = state.services.db.count_jobs().await?;
    let totals = state.services.db.report_totals().await?;
    let executors: BTreeSet<String> = state
        .services
        .db
        .all_groups()
        .await?
        .into_iter()
        .filter_map(|g| g.address_list)
        .flat_map(|list| {
            java_split(&list).into_iter().filter(|a| !a.is_empty()).map(str::to_string).collect::<Vec<_>>()
        })
        .collect();
    let model = context! {
        page => "index",
        job_info_count => jobs,
        job_log_count => totals.running + totals.success + totals.fail,
        job_log_success_count => totals.success,
        executor_count => executors.len(),
    };
    page(&state, &user, &headers, "index.html", model).await
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Chart {
    trigger_day_list: Vec<String>,
    trigger_day_count_running_list: Vec<i64>,
    trigger_day_count_suc_list: Vec<i64>,
    trigger_day_count_fail_list: Vec<i64>,
    trigger_count_running_total: i64,
    trigger_count_suc_total: i64,
    trigger_count_fail_total: i64,
}

async fn chart_info(State(services): State<ServiceContext>, params: Params) -> JsonResult<Chart> {
    let parse = |name: &str| -> Result<Option<NaiveDateTime>, ConsoleError> {
        match params.string(name).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(v) => NaiveDateTime::parse_from_str(&v, "%Y-%m-%d %H:%M:%S").map(Some).map_err(|_| {
                ConsoleError::BadRequest(format!("parameter '{name}' is not a date (yyyy-MM-dd HH:mm:ss)"))
            }),
        }
    };
    let (from, to) = (parse("startDate")?, parse("endDate")?);
    let rows = match (from, to) {
        (Some(from), Some(to)) => services.db.reports_between(from, to).await?,
        _ => Vec::new(),
    };
    let mut chart = Chart {
        trigger_day_list: Vec::new(),
        trigger_day_count_running_list: Vec::new(),
        trigger_day_count_suc_list: Vec::new(),
        trigger_day_count_fail_list: Vec::new(),
        trigger_count_running_total: 0,
        trigger_count_suc_total: 0,
        trigger_count_fail_total: 0,
    };
    if rows.is_empty() {
        // 2.4.2 shows the last seven days with zeros when nothing matches.
        let today = services.db.zone().to_naive_exact(services.clock.now_ms()).date();
        for offset in (0..7).rev() {
            chart.trigger_day_list.push((today - Duration::days(offset)).format("%Y-%m-%d").to_string());
            chart.trigger_day_count_running_list.push(0);
            chart.trigger_day_count_suc_list.push(0);
            chart.trigger_day_count_fail_list.push(0);
        }
    }
    for row in rows {
        chart
            .trigger_day_list
            .push(row.trigger_day.map(|d| d.format("%Y-%m-%d").to_string()).unwrap_or_default());
        chart.trigger_day_count_running_list.push(row.running_count.into());
        chart.trigger_day_count_suc_list.push(row.suc_count.into());
        chart.trigger_day_count_fail_list.push(row.fail_count.into());
        chart.trigger_count_running_total += i64::from(row.running_count);
        chart.trigger_count_suc_total += i64::from(row.suc_count);
        chart.trigger_count_fail_total += i64::from(row.fail_count);
    }
    Ok(Json(ReturnT::with_content(chart)))
}

/// The login page; `redirect` names the page to return to afterwards (see `return_to`).
async fn to_login(
    State(state): State<AppState>,
    session: Session,
    params: Params,
) -> Result<Response, PageError> {
    let context = &state.config.server.context_path;
    let requested = params.string(return_to::PARAM);
    let return_to = requested
        .as_deref()
        .and_then(|path| return_to::safe_return_path(context, path))
        .map_or_else(|| format!("{context}/"), str::to_string);
    if current_user(&state, &session).await?.is_some() {
        return Ok(Redirect::to(&return_to).into_response());
    }
    let auth = &state.config.auth;
    let model = context! {
        page => "login",
        return_to => return_to,
        password_login => auth.password_enabled,
        oidc_name => auth.oidc.as_ref().map(|oidc| oidc.provider_name.clone()),
        oidc_login => format!("{context}{}?{}={}", oidc::START_PATH, return_to::PARAM, return_to::param_value(&return_to)),
        oidc_failed => params.string(oidc::FAILED_PARAM).is_some(),
    };
    Ok(render(&state, None, false, "login.html", model)?.into_response())
}

async fn help_page(
    State(state): State<AppState>,
    user: LoginUser,
    headers: HeaderMap,
) -> Result<Html<String>, PageError> {
    let server = &state.config.server;
    let model = context! { page => "help", management => server.management_context_path, prometheus => server.prometheus };
    page(&state, &user, &headers, "help.html", model).await
}

async fn jobinfo_page(
    State(state): State<AppState>,
    user: LoginUser,
    headers: HeaderMap,
    params: Params,
) -> Result<Html<String>, PageError> {
    let groups = visible_groups(&state.services, &user).await?;
    let job_group: i32 = params.number_or("jobGroup", -1)?;
    let model = context! { page => "jobinfo", groups => groups, job_group => job_group, choices => choices(&state.services) };
    page(&state, &user, &headers, "jobinfo.html", model).await
}

async fn joblog_page(
    State(state): State<AppState>,
    user: LoginUser,
    headers: HeaderMap,
    params: Params,
) -> Result<Html<String>, PageError> {
    let groups = visible_groups(&state.services, &user).await?;
    let job_id: i32 = params.number_or("jobId", 0)?;
    let mut job = None;
    if job_id > 0 {
        let i18n = &state.services.i18n;
        let Some(found) = state.services.db.load_job(job_id).await? else {
            let msg = format!("{}{}", i18n.get("jobinfo_field_id"), i18n.get("system_unvalid"));
            return Err(PageError(ConsoleError::msg(msg)));
        };
        user.ensure_access(&state.services, found.job_group)?;
        job = Some(JobView::new(found, state.services.db.zone()));
    }
    let model = context! { page => "joblog", groups => groups, job => job };
    page(&state, &user, &headers, "joblog.html", model).await
}

async fn log_detail_page(
    State(state): State<AppState>,
    user: LoginUser,
    headers: HeaderMap,
    params: Params,
) -> Result<Html<String>, PageError> {
    let id: i64 = params.required("id")?;
    let Some(log) = state.services.db.load_log(id).await? else {
        return Err(PageError(ConsoleError::msg(state.services.i18n.get("joblog_logid_unvalid"))));
    };
    user.ensure_access(&state.services, log.job_group)?;
    let model = context! { page => "logdetail", trigger_code => log.trigger_code, handle_code => log.handle_code, log_id => log.id };
    page(&state, &user, &headers, "joblog_detail.html", model).await
}

fn require_admin(services: &ServiceContext, user: &LoginUser, page: &str) -> Result<(), PageError> {
    if user.is_admin() {
        Ok(())
    } else {
        let message = services.i18n.get("system_permission_limit");
        super::refused(services, user, page, message);
        Err(PageError(ConsoleError::msg(message)))
    }
}

async fn jobgroup_page(
    State(state): State<AppState>,
    user: LoginUser,
    headers: HeaderMap,
) -> Result<Html<String>, PageError> {
    require_admin(&state.services, &user, "/jobgroup")?;
    page(&state, &user, &headers, "jobgroup.html", context! { page => "jobgroup" }).await
}

async fn user_page(
    State(state): State<AppState>,
    user: LoginUser,
    headers: HeaderMap,
) -> Result<Html<String>, PageError> {
    require_admin(&state.services, &user, "/user")?;
    let groups: Vec<GroupChoice> = state
        .services
        .db
        .all_groups()
        .await?
        .into_iter()
        .map(|g| GroupChoice { id: g.id, appname: g.app_name, title: g.title })
        .collect();
    page(&state, &user, &headers, "user.html", context! { page => "user", groups => groups }).await
}

async fn alarm_page(
    State(state): State<AppState>,
    user: LoginUser,
    headers: HeaderMap,
) -> Result<Html<String>, PageError> {
    require_admin(&state.services, &user, "/alarm")?;
    let channels = super::alarms::channel_rows(&state);
    page(&state, &user, &headers, "alarm.html", context! { page => "alarm", channels => channels }).await
}

async fn audit_page(
    State(state): State<AppState>,
    user: LoginUser,
    headers: HeaderMap,
) -> Result<Html<String>, PageError> {
    require_admin(&state.services, &user, "/audit")?;
    let file = state.services.audit.file().map(|path| path.display().to_string());
    page(
        &state,
        &user,
        &headers,
        "audit.html",
        context! { page => "audit", audit_file => file, kinds => audit::KINDS },
    )
    .await
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GlueVersion {
    id: i32,
    glue_type: Option<String>,
    glue_source: Option<String>,
    glue_remark: String,
    update_time: Option<String>,
}

impl From<LogGlue> for GlueVersion {
    fn from(glue: LogGlue) -> GlueVersion {
        GlueVersion {
            id: glue.id,
            glue_type: glue.glue_type,
            glue_source: glue.glue_source,
            glue_remark: glue.glue_remark,
            update_time: glue.update_time.map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string()),
        }
    }
}

async fn jobcode_page(
    State(state): State<AppState>,
    user: LoginUser,
    headers: HeaderMap,
    params: Params,
) -> Result<Html<String>, PageError> {
    let job_id: i32 = params.required("jobId")?;
    let i18n = &state.services.i18n;
    let Some(job) = state.services.db.load_job(job_id).await? else {
        return Err(PageError(ConsoleError::msg(i18n.get("jobinfo_glue_jobid_unvalid"))));
    };
    // Permission first: a foreign job's glue type is none of this user's business.
    user.ensure_access(&state.services, job.job_group)?;
    if job.glue_type == GlueType::Bean.name() {
        return Err(PageError(ConsoleError::msg(i18n.get("jobinfo_glue_gluetype_unvalid"))));
    }
    let history: Vec<GlueVersion> =
        state.services.db.glues_of_job(job.id).await?.into_iter().map(GlueVersion::from).collect();
    let glue_title = GlueType::from_name(&job.glue_type).map_or("", GlueType::title);
    let model = context! {
        page => "jobcode",
        job => JobView::new(job.clone(), state.services.db.zone()),
        glue_title => glue_title,
        history => history,
        history_json => script_json(&history),
    };
    page(&state, &user, &headers, "jobcode.html", model).await
}

async fn jobcode_save(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> JsonResult<()> {
    let i18n = &services.i18n;
    let id: i32 = params.required("id")?;
    let Some(remark) = params.string("glueRemark") else {
        return Ok(Json(ReturnT::fail(format!(
            "{}{}",
            i18n.get("system_please_input"),
            i18n.get("jobinfo_glue_remark")
        ))));
    };
    if !(4..=100).contains(&remark.encode_utf16().count()) {
        return Ok(Json(ReturnT::fail(i18n.get("jobinfo_glue_remark_limit"))));
    }
    let Some(mut job) = services.db.load_job(id).await? else {
        return Ok(Json(ReturnT::fail(i18n.get("jobinfo_glue_jobid_unvalid"))));
    };
    user.ensure_access(&services, job.job_group)?;
    let before = job.clone();
    let now = services.db.datetime(services.clock.now_ms());
    job.glue_source = params.string("glueSource");
    job.glue_remark = Some(remark);
    job.glue_updatetime = Some(now);
    job.update_time = Some(now);
    let saved: Result<(), ConsoleError> = async {
        services.db.update_job(&job).await?;
        Ok(services.db.save_glue(&LogGlue::of_job(&job, now), GLUE_HISTORY).await?)
    }
    .await;
    let target = Target::new("job", job.id, Some(job.job_desc.clone()));
    services.audit.done(
        &user,
        EventKind::GlueSave,
        target,
        |()| changes(Some(&before), Some(&job)),
        saved,
    )?;
    Ok(Json(ReturnT::success()))
}
