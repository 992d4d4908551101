//! What the console's workflow pages need beyond the definitions' own rules ([`super::workflows`]): the
//! list with each workflow's latest run, a copy under a new name, the jobs a node may run, and a
//! definition as the jobs-as-code TOML of one workflow and back (docs/workflows.md#in-the-console).

use super::jobs_as_code::{definition_of, exported_workflow, natural_key, Document, Format};
use super::workflows::{self, Saved, WorkflowQuery};
use super::{LoginUser, ServiceContext, ServiceError};
use crate::domain::workflow::model::{Definition, NodeKind};
use crate::domain::workflow::{DefinitionError, Problem};
use crate::storage::{JobGroup, JobInfo, Workflow, WorkflowRun};
use serde_json::Value;
use std::collections::HashMap;

/// One page of the workflows the user may see, each with its latest run if it ran, and how many match.
pub async fn list_with_latest_runs(
    state: &ServiceContext,
    user: &LoginUser,
    query: WorkflowQuery,
    offset: i64,
    limit: i64,
) -> Result<(Vec<(Workflow, Option<WorkflowRun>)>, i64), ServiceError> {
    let (found, total) = workflows::list(state, user, query, offset, limit).await?;
    let ids: Vec<i64> = found.iter().map(|w| w.id).collect();
    let mut latest: HashMap<i64, WorkflowRun> =
        state.db.latest_runs(&ids).await?.into_iter().map(|run| (run.workflow_id, run)).collect();
    let rows = found.into_iter().map(|w| (latest.remove(&w.id), w)).map(|(run, w)| (w, run)).collect();
    Ok((rows, total))
}

/// Saves the current definition of workflow `id` as a new workflow named `name`, stopped; audited as
/// any creation.
pub async fn copy(
    state: &ServiceContext,
    user: &LoginUser,
    id: i64,
    name: String,
) -> Result<Saved, ServiceError> {
    let (_, mut def) = workflows::get_current(state, user, id).await?;
    def.name = name;
    let document = serde_json::to_value(&def).map_err(|e| {
        tracing::error!("a workflow definition did not serialize: {e}");
        ServiceError::Failed
    })?;
    workflows::create(state, user, document).await
}

/// The jobs of an executor group the user may access, for job nodes to name.
pub async fn group_jobs(
    state: &ServiceContext,
    user: &LoginUser,
    job_group: i32,
) -> Result<Vec<JobInfo>, ServiceError> {
    user.ensure_access(state, job_group)?;
    Ok(state.db.jobs_by_group(job_group).await?)
}

/// The definition as the jobs-as-code TOML of one workflow: its group by AppName, each job by its natural
/// key (`app/description/handler`), or as `#id` when it is gone or of a group the user may not access.
pub async fn to_toml(
    state: &ServiceContext,
    user: &LoginUser,
    def: &Definition,
) -> Result<String, ServiceError> {
    user.ensure_access(state, def.job_group)?;
    let group = state.db.load_group(def.job_group).await?;
    let app_name = group.map(|g| g.app_name).unwrap_or_default();
    // A job of a group the user may not access keeps its id: its name is none of his business.
    let jobs: Vec<JobInfo> = state
        .db
        .load_jobs(&workflows::job_ids(def))
        .await?
        .into_iter()
        .filter(|j| user.can_access(j.job_group))
        .collect();
    let groups: HashMap<i32, String> = state
        .db
        .load_groups(&jobs.iter().map(|j| j.job_group).collect::<Vec<_>>())
        .await?
        .into_iter()
        .map(|g| (g.id, g.app_name))
        .collect();
    let keys: HashMap<i32, String> = jobs
        .iter()
        .filter_map(|j| {
            groups
                .get(&j.job_group)
                .map(|app| (j.id, natural_key(app, &j.job_desc, j.executor_handler.as_deref().unwrap_or(""))))
        })
        .collect();
    let workflow = exported_workflow(def, &app_name, &|id| keys.get(&id).cloned(), None);
    let document = Document { workflows: vec![workflow], ..Document::default() };
    document.render(Format::Toml).map_err(|e| ServiceError::Invalid(e.to_string()))
}

/// The definition a TOML text of one workflow stands for: its executor by AppName and its jobs by natural
/// key (or `#id`), among the groups the user may access. Not checked further: the editor validates it.
pub async fn from_toml(
    state: &ServiceContext,
    user: &LoginUser,
    text: &str,
) -> Result<Definition, ServiceError> {
    let document = Document::parse(text, Format::Toml).map_err(|e| ServiceError::Invalid(e.to_string()))?;
    let [workflow] = document.workflows.as_slice() else {
        return Err(ServiceError::Invalid(format!(
            "the text holds {} workflows: it must hold exactly one [[workflow]]",
            document.workflows.len()
        )));
    };
    let groups: Vec<JobGroup> =
        state.db.all_groups().await?.into_iter().filter(|g| user.can_access(g.id)).collect();
    let Some(group) = groups.iter().find(|g| g.app_name == workflow.executor) else {
        return Err(ServiceError::Invalid(format!(
            "executor: no executor you may access has the AppName {:?}",
            workflow.executor
        )));
    };
    let mut keys: HashMap<String, i32> = HashMap::new();
    for g in &groups {
        let named = workflow
            .nodes
            .iter()
            .filter_map(|n| n.job.as_deref())
            .any(|k| k.starts_with(&format!("{}/", g.app_name)));
        if named {
            for job in state.db.jobs_by_group(g.id).await? {
                keys.insert(
                    natural_key(&g.app_name, &job.job_desc, job.executor_handler.as_deref().unwrap_or("")),
                    job.id,
                );
            }
        }
    }
    let job_id = |key: &str| {
        keys.get(key).copied().or_else(|| key.strip_prefix('#').and_then(|id| id.parse().ok())).unwrap_or(0)
    };
    let def = definition_of(workflow, group.id, &job_id)
        .map_err(|reason| ServiceError::Invalid(reason.render(&state.i18n)))?;
    let unknown: Vec<DefinitionError> = def
        .nodes
        .iter()
        .zip(&workflow.nodes)
        .enumerate()
        .filter(|(_, (node, _))| matches!(node.kind, NodeKind::Job { job_id: 0, .. }))
        .map(|(i, (node, written))| DefinitionError {
            node: Some(node.name.clone()),
            field: format!("nodes[{i}].kind.jobId"),
            problem: Problem::Unreadable(format!(
                "no job you may access is named {:?}",
                written.job.clone().unwrap_or_default()
            )),
        })
        .collect();
    if unknown.is_empty() {
        Ok(def)
    } else {
        Err(ServiceError::Definition(unknown))
    }
}

/// A definition document sent as text: JSON, an object.
pub fn document_of(text: &str) -> Result<Value, ServiceError> {
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(ServiceError::Invalid("the definition must be a JSON object".to_string())),
        Err(e) => Err(ServiceError::Invalid(format!("the definition is not JSON: {e}"))),
    }
}
