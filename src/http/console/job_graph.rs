//! The job dependency graph (issue 47): `/jobinfo/graph`, reached from the job list, and its JSON
//! `/jobinfo/graph/data`: the jobs of the groups the user may see, the `child_jobid` links between them
//! and each job's last result. Only the 2.4 tables are read.

use super::error::PageError;
use super::pages::{page, visible_groups};
use super::params::Params;
use super::{slash_tolerant, JsonResult, LoginUser};
use crate::domain::ReturnT;
use crate::http::dates::json_date;
use crate::http::state::AppState;
use crate::service::job_graph;
use crate::service::ServiceContext;
use crate::storage::JobLog;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Html;
use axum::routing::any;
use axum::{Json, Router};
use minijinja::context;
use serde::Serialize;
use std::collections::HashMap;

pub fn page_routes() -> Router<AppState> {
    slash_tolerant([("/jobinfo/graph", any(graph_page))])
}

pub fn routes() -> Router<AppState> {
    slash_tolerant([("/jobinfo/graph/data", any(graph_data))])
}

async fn graph_page(
    State(state): State<AppState>,
    user: LoginUser,
    headers: HeaderMap,
    params: Params,
) -> Result<Html<String>, PageError> {
    let groups = visible_groups(&state.services, &user).await?;
    let job_group: i32 = params.number_or("jobGroup", 0)?;
    let model = context! { page => "jobinfo", groups => groups, job_group => job_group };
    page(&state, &user, &headers, "job_graph.html", model).await
}

/// A job's last run: `success`, `failed`, `running` (sent, no result yet), or none.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LastRun {
    log_id: i64,
    result: &'static str,
    trigger_time: Option<String>,
}

impl LastRun {
    fn of(log: &JobLog, zone: crate::time::Zone) -> LastRun {
        let result = match (log.trigger_code, log.handle_code) {
            (0 | 200, 0) => "running",
            (_, 200) => "success",
            _ => "failed",
        };
        LastRun { log_id: log.id, result, trigger_time: json_date(zone, log.trigger_time) }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GraphJob {
    id: i32,
    job_group: i32,
    job_desc: String,
    last: Option<LastRun>,
}

#[derive(Serialize)]
struct Graph {
    jobs: Vec<GraphJob>,
    /// (parent, child): the parent's success starts the child.
    links: Vec<(i32, i32)>,
}

async fn graph_data(
    State(services): State<ServiceContext>,
    user: LoginUser,
    params: Params,
) -> JsonResult<Graph> {
    let job_group: i32 = params.number_or("jobGroup", 0)?;
    let graph = job_graph::graph(&services, &user, job_group).await?;
    let zone = services.db.zone();
    let last: HashMap<i32, &JobLog> = graph.last_logs.iter().map(|log| (log.job_id, log)).collect();
    let jobs = graph
        .jobs
        .into_iter()
        .map(|job| GraphJob {
            last: last.get(&job.id).map(|log| LastRun::of(log, zone)),
            id: job.id,
            job_group: job.job_group,
            job_desc: job.job_desc,
        })
        .collect();
    Ok(Json(ReturnT::with_content(Graph { jobs, links: graph.links })))
}
