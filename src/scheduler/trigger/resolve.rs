//! From trigger requests to triggers with their log rows: a batch's jobs and groups loaded, each request
//! resolved against them (its overrides applied) and expanded into its triggers (one per address for a
//! sharding broadcast), one log row inserted per trigger before anything is sent
//! (2.4.2: XxlJobTrigger.trigger, and the row insert that opens XxlJobTrigger.processTrigger).

use super::TriggerContext;
use crate::domain::codes::AddressType;
use crate::domain::java_split;
use crate::domain::routing::RouteStrategy;
use crate::domain::{TriggerRequest, TriggerType};
use crate::storage::{Db, JobGroup, JobInfo, NewLog, Result};
use std::collections::HashMap;
use std::sync::Arc;

/// A trigger request resolved against its job and group: what all the triggers it makes share. Jobs and
/// groups are shared by the requests of a batch unless a request overrides a parameter or the addresses.
pub struct ResolvedRequest {
    pub(super) job: Arc<JobInfo>,
    pub(super) group: Option<Arc<JobGroup>>,
    pub(super) addresses: Arc<Vec<String>>,
    pub(super) request: TriggerRequest,
    pub(super) fail_retry_count: i32,
    pub(super) route: Option<RouteStrategy>,
}

/// Which part of a run a trigger is, as the executor is told (`broadcastIndex` / `broadcastTotal`):
/// part `index` of `total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sharding {
    pub index: i32,
    pub total: i32,
}

impl Sharding {
    /// A trigger that is not sharded: the only part of one.
    const WHOLE: Sharding = Sharding { index: 0, total: 1 };

    /// A sharding parameter, `index/total` with both 32-bit integers, or nothing.
    fn parse(param: &str) -> Option<Sharding> {
        let (index, total) = param.split_once('/')?;
        if total.contains('/') {
            return None;
        }
        Some(Sharding { index: index.parse().ok()?, total: total.parse().ok()? })
    }
}

/// A trigger decided on, before its log row exists.
pub struct NewTrigger {
    resolved: Arc<ResolvedRequest>,
    sharding: Sharding,
}

/// One trigger to send: its log row exists.
pub struct Trigger {
    pub(super) resolved: Arc<ResolvedRequest>,
    pub(super) sharding: Sharding,
    pub(super) log_id: i64,
    pub(super) trigger_time: i64,
    pub(super) trigger_type: TriggerType,
    /// The planned instant the trigger stands for, sent to the executor.
    pub(super) planned_ms: Option<i64>,
}

impl NewTrigger {
    /// Which part of its run this trigger is.
    pub fn sharding(&self) -> Sharding {
        self.sharding
    }

    /// The trigger, with its log row, sent at `trigger_time`; `planned_ms` is the instant a planned fire
    /// stands for.
    pub fn into_trigger(self, log_id: i64, trigger_time: i64, planned_ms: Option<i64>) -> Trigger {
        let trigger_type = self.resolved.request.trigger_type;
        Trigger {
            resolved: self.resolved,
            sharding: self.sharding,
            log_id,
            trigger_time,
            trigger_type,
            planned_ms,
        }
    }
}

/// Loads the jobs and groups of a batch of requests, expands sharding broadcasts and inserts one log row
/// per trigger, before anything is sent.
pub(super) async fn resolve_batch(
    context: &TriggerContext,
    requests: &[TriggerRequest],
) -> Result<Vec<Trigger>> {
    let mut job_ids: Vec<i32> = requests.iter().map(|r| r.job_id).collect();
    job_ids.sort_unstable();
    job_ids.dedup();
    let jobs: HashMap<i32, Arc<JobInfo>> =
        context.db.load_jobs(&job_ids).await?.into_iter().map(|j| (j.id, Arc::new(j))).collect();
    let mut group_ids: Vec<i32> = jobs.values().map(|j| j.job_group).collect();
    group_ids.sort_unstable();
    group_ids.dedup();
    let groups = load_groups(&context.db, &group_ids).await?;
    let now = context.clock.now_ms();
    let mut new_triggers: Vec<NewTrigger> = Vec::with_capacity(requests.len());
    for request in requests {
        let Some(job) = jobs.get(&request.job_id) else {
            tracing::warn!(job_id = request.job_id, "trigger skipped: the job does not exist");
            continue;
        };
        new_triggers.extend(expand(request, job.clone(), groups.get(&job.job_group)));
    }
    let ids = context.db.insert_rows(&new_rows(&new_triggers, now)).await?;
    Ok(new_triggers
        .into_iter()
        .zip(ids)
        .map(|(t, log_id)| {
            if let Some(sink) = &t.resolved.request.on_log_id {
                (sink.0)(log_id);
            }
            t.into_trigger(log_id, now, None)
        })
        .collect())
}

/// The log rows of these triggers, sent at `now`.
pub fn new_rows(triggers: &[NewTrigger], now: i64) -> Vec<NewLog> {
    triggers
        .iter()
        .map(|t| NewLog {
            job_group: t.resolved.job.job_group,
            job_id: t.resolved.job.id,
            trigger_time_ms: now,
            trigger_msg: None,
        })
        .collect()
}

/// A group with its address list split once (not once per trigger).
#[derive(Clone)]
pub struct LoadedGroup {
    pub group: Arc<JobGroup>,
    pub addresses: Arc<Vec<String>>,
}

/// Groups by id.
pub type Groups = HashMap<i32, LoadedGroup>;

/// Loads the groups of these ids, their address lists split.
pub async fn load_groups(db: &Db, ids: &[i32]) -> Result<Groups> {
    Ok(db
        .load_groups(ids)
        .await?
        .into_iter()
        .map(|g| {
            let addresses = Arc::new(split_addresses(Some(&g)));
            (g.id, LoadedGroup { group: Arc::new(g), addresses })
        })
        .collect())
}

/// The triggers one request makes of `job` in `group`: one, or one per address for a sharding broadcast,
/// each with the request's overrides (parameter, retry count, addresses) applied.
pub fn expand(
    request: &TriggerRequest,
    mut job: Arc<JobInfo>,
    group: Option<&LoadedGroup>,
) -> Vec<NewTrigger> {
    if let Some(param) = request.executor_param.clone() {
        Arc::make_mut(&mut job).executor_param = Some(param);
    }
    let fail_retry_count =
        if request.fail_retry_count >= 0 { request.fail_retry_count } else { job.executor_fail_retry_count };
    let (mut group, mut addresses) = match group {
        Some(loaded) => (Some(loaded.group.clone()), loaded.addresses.clone()),
        None => (None, Arc::default()),
    };
    if let (Some(group), Some(list)) = (group.as_mut(), request.address_list.as_deref()) {
        if !list.trim().is_empty() {
            let group = Arc::make_mut(group);
            group.address_type = AddressType::Manual;
            group.address_list = Some(list.trim().to_string());
            addresses = Arc::new(split_addresses(Some(group)));
        }
    }
    let sharding = request.sharding_param.as_deref().and_then(Sharding::parse);
    let route = job.executor_route_strategy.as_deref().and_then(RouteStrategy::from_name);
    let broadcast =
        route == Some(RouteStrategy::ShardingBroadcast) && !addresses.is_empty() && sharding.is_none();
    let resolved = Arc::new(ResolvedRequest {
        job,
        group,
        addresses,
        request: request.clone(),
        fail_retry_count,
        route,
    });
    if !broadcast {
        return vec![NewTrigger { resolved, sharding: sharding.unwrap_or(Sharding::WHOLE) }];
    }
    let total = resolved.addresses.len() as i32;
    (0..total)
        .map(|index| NewTrigger { resolved: resolved.clone(), sharding: Sharding { index, total } })
        .collect()
}

/// The addresses of a group's list, as 2.4.2 splits them; none without a group or list.
fn split_addresses(group: Option<&JobGroup>) -> Vec<String> {
    group
        .and_then(|g| g.address_list.as_deref())
        .filter(|list| !list.trim().is_empty())
        .map(|list| java_split(list).into_iter().map(str::to_string).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sharding_params_need_exactly_two_integers() {
        assert_eq!(Sharding::parse("1/3"), Some(Sharding { index: 1, total: 3 }));
        assert_eq!(Sharding::parse("-1/3"), Some(Sharding { index: -1, total: 3 }));
        assert_eq!(Sharding::parse("1/3/4"), None);
        assert_eq!(Sharding::parse("a/3"), None);
        assert_eq!(Sharding::parse("13"), None);
    }
}
