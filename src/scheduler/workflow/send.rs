//! Sending a queued node attempt: a job node's triggers (one log row per shard) written with the
//! attempt's change in one transaction and handed to the lanes; a sub-workflow node's child run started
//! the same way.

use super::schedule::{new_run, RunStart};
use super::snapshot::RunSnapshot;
use super::{Result, Workflows};
use crate::domain::workflow::model::{Node, NodeKind, NodeState};
use crate::domain::workflow::template::{self, Context};
use crate::domain::{TriggerRequest, TriggerType};
use crate::scheduler::trigger::{expand, load_groups, new_rows, Groups};
use crate::storage::{JobInfo, NewRun, NodeAttempt, NodeChange, NodeSend};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// The most characters `xxl_job_log.executor_param` holds (varchar(512) in the 2.4 schema).
pub const MAX_NODE_PARAM_CHARS: usize = 512;
/// How deep sub-workflows may nest.
pub const MAX_DEPTH: usize = 5;

/// The jobs of the job nodes one pass sends, with their groups: read once for all of them.
pub(super) struct SendJobs {
    jobs: HashMap<i32, Arc<JobInfo>>,
    groups: Groups,
}

impl Workflows {
    /// Reads the jobs of `nodes`' job nodes and their groups, two statements however many nodes.
    pub(super) async fn send_jobs(&self, nodes: &[&Node]) -> Result<SendJobs> {
        let mut ids: Vec<i32> = nodes
            .iter()
            .filter_map(|n| match n.kind {
                NodeKind::Job { job_id, .. } => Some(job_id),
                _ => None,
            })
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let db = &self.services().db;
        let loaded = if ids.is_empty() { Vec::new() } else { db.load_jobs(&ids).await? };
        let mut group_ids: Vec<i32> = loaded.iter().map(|j| j.job_group).collect();
        group_ids.sort_unstable();
        group_ids.dedup();
        let groups = if group_ids.is_empty() { Groups::new() } else { load_groups(db, &group_ids).await? };
        let jobs = loaded.into_iter().map(|job| (job.id, Arc::new(job))).collect();
        Ok(SendJobs { jobs, groups })
    }

    /// Sends a queued attempt of `node`; a parameter that cannot be made fails the attempt instead.
    /// Whether it was sent (`false`: failed, or another admin sent it first).
    pub(super) async fn send(
        &self,
        view: &RunSnapshot<'_>,
        node: &Node,
        attempt: &NodeAttempt,
        (context, jobs): (&Context, &SendJobs),
        now: i64,
    ) -> Result<bool> {
        let outcome = match &node.kind {
            NodeKind::Job { job_id, param } => {
                self.send_job(view, node, attempt, (*job_id, param), (context, jobs), now).await?
            }
            NodeKind::SubWorkflow { workflow, params } => {
                self.start_child(view, node, attempt, workflow, params, context, now).await?
            }
            NodeKind::Branch { .. } | NodeKind::Approval { .. } => Ok(false),
        };
        let reason = match outcome {
            Ok(sent) => return Ok(sent),
            Err(reason) => reason,
        };
        let change = NodeChange {
            state: NodeState::Failed.as_str().into(),
            end_time: Some(now),
            message: Some(reason),
            ..NodeChange::default()
        };
        self.services()
            .db
            .change_node_state(view.run.id, &node.name, attempt.attempt, attempt.seq, &change)
            .await?;
        Ok(false)
    }

    /// `Ok(Err(reason))` when the attempt cannot be sent and fails; `Ok(Ok(sent))` else.
    async fn send_job(
        &self,
        view: &RunSnapshot<'_>,
        node: &Node,
        attempt: &NodeAttempt,
        (job_id, param_template): (i32, &str),
        (context, jobs): (&Context, &SendJobs),
        now: i64,
    ) -> Result<std::result::Result<bool, String>> {
        let param = if param_template.is_empty() {
            None
        } else {
            match template::render_param(param_template, context) {
                Ok(p) => Some(p),
                Err(e) => return Ok(Err(format!("its parameter template {e}"))),
            }
        };
        if let Some(chars) = param.as_ref().map(|p| p.chars().count()).filter(|n| *n > MAX_NODE_PARAM_CHARS) {
            return Ok(Err(format!(
                "its rendered parameter has {chars} characters; a log row's executor_param holds at most \
                 {MAX_NODE_PARAM_CHARS} (pass a reference instead of the data)"
            )));
        }
        let db = &self.services().db;
        let Some(job) = jobs.jobs.get(&job_id) else {
            return Ok(Err(format!("job {job_id} does not exist")));
        };
        let request = TriggerRequest {
            // Never retried by a fail monitor (ours or a Java admin's): the workflow owns its retries.
            fail_retry_count: 0,
            executor_param: param.clone(),
            ..TriggerRequest::of_job(job_id, TriggerType::Workflow)
        };
        let triggers = expand(&request, job.clone(), jobs.groups.get(&job.job_group));
        let rows = new_rows(&triggers, now);
        let shards: Vec<(i32, i32)> =
            triggers.iter().map(|t| (t.sharding().index, t.sharding().total)).collect();
        let change = NodeChange {
            state: NodeState::Running.as_str().into(),
            send_time: Some(now),
            param: Some(param.unwrap_or_else(|| job.executor_param.clone().unwrap_or_default())),
            ..NodeChange::default()
        };
        let send = node_send(view, attempt, &change);
        let Some(ids) = db.send_node_attempt(&send, &rows, &shards).await? else { return Ok(Ok(false)) };
        let upstream_end = node.upstream.iter().filter_map(|u| view.latest(u).and_then(|a| a.end_time)).max();
        let wait = now - attempt.ready_time.unwrap_or(now);
        self.services().metrics.workflow_node_sent(wait, upstream_end.map(|end| now - end));
        if node.timeout_seconds > 0 {
            self.wake_at(view.run.id, now + i64::from(node.timeout_seconds) * 1000);
        }
        let (context, lanes) = &self.services().sending;
        for (trigger, log_id) in triggers.into_iter().zip(ids) {
            lanes.spawn(context.clone(), trigger.into_trigger(log_id, now, None), None);
        }
        Ok(Ok(true))
    }

    /// Starts the child run of a sub-workflow node: the named workflow's current version, its
    /// parameters rendered (string values at the top level are templates) over its own defaults.
    #[allow(clippy::too_many_arguments)]
    async fn start_child(
        &self,
        view: &RunSnapshot<'_>,
        node: &Node,
        attempt: &NodeAttempt,
        workflow: &str,
        params: &Map<String, Value>,
        context: &Context,
        now: i64,
    ) -> Result<std::result::Result<bool, String>> {
        let db = &self.services().db;
        let Some(child) = db.load_workflow_by_name(workflow).await? else {
            return Ok(Err(format!("workflow {workflow} does not exist")));
        };
        let mut depth = 1;
        let mut parent = view.run.parent_run_id;
        while let Some(id) = parent {
            depth += 1;
            if depth > MAX_DEPTH {
                return Ok(Err(format!("sub-workflows nest deeper than {MAX_DEPTH}")));
            }
            parent = db.load_run(id).await?.and_then(|r| r.parent_run_id);
        }
        let def = self.definition(child.id, child.current_version).await?;
        let mut rendered = Map::new();
        for (key, value) in params {
            let value = match value {
                Value::String(t) => match template::render_param(t, context) {
                    Ok(text) => Value::String(text),
                    Err(e) => return Ok(Err(format!("its parameter {key} {e}"))),
                },
                other => other.clone(),
            };
            rendered.insert(key.clone(), value);
        }
        let start = RunStart {
            trigger_type: "subworkflow",
            logical_time: view.run.logical_time,
            params: rendered,
            started_by: view.run.started_by.clone(),
            backfill_id: None,
        };
        let run = NewRun {
            parent_run_id: Some(view.run.id),
            parent_node: Some(node.name.clone()),
            ..new_run(child.id, child.current_version, &def, start, now)
        };
        let change = NodeChange {
            state: NodeState::Running.as_str().into(),
            send_time: Some(now),
            ..NodeChange::default()
        };
        let Some(id) = db.start_child_run(&node_send(view, attempt, &change), &run).await? else {
            return Ok(Ok(false));
        };
        self.wake(id);
        Ok(Ok(true))
    }
}

/// The change of a queued attempt to `change`, by compare-and-set on the counter it was read with.
fn node_send<'a>(view: &RunSnapshot<'_>, attempt: &'a NodeAttempt, change: &'a NodeChange) -> NodeSend<'a> {
    NodeSend { run_id: view.run.id, node: &attempt.node, attempt: attempt.attempt, seq: attempt.seq, change }
}
