//! The trigger pools and the trigger algorithm (spec 4.2, 4.3, 5).
//!
//! Two lanes replace 2.4.2's two thread pools: each is a queue drained under a concurrency limit
//! (`xxl.job.triggerpool.fast.max` / `slow.max`). A job whose triggers were slow (> 500 ms) more than ten
//! times in the current minute goes to the slow lane, so a dead or hanging executor cannot starve the
//! others.

use super::TriggerSink;
use crate::config::Config;
use crate::domain::routing::{RouteStrategy, Router};
use crate::domain::trigger_msg::{block_title_key, call_report, TriggerReport};
use crate::domain::protocol::FAIL_CODE;
use crate::domain::{is_blank, java_split, ReturnT, TriggerRequest};
use crate::executor::{ExecutorClient, TriggerParam};
use crate::i18n::I18n;
use crate::metrics::{Lane, Metrics};
use crate::storage::{Db, JobGroup, JobInfo, Result, TriggerInfo};
use crate::time::Clock;
use crate::workers::Shutdown;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

/// Room for bursts: a schedule pass may release thousands of fires in the same millisecond.
const LANE_QUEUE: usize = 100_000;
/// A trigger slower than this counts towards moving its job to the slow lane.
const SLOW_TRIGGER_MS: i64 = 500;
/// Slow triggers per minute after which a job uses the slow lane.
const SLOW_LANE_THRESHOLD: u32 = 10;
/// How long shutdown waits for triggers already running.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);
/// Requests a lane takes from its queue at once: their jobs and groups are loaded, and their log rows
/// inserted, by a few statements for all of them.
const MAX_BATCH: usize = 500;
/// Batches of one lane in preparation at the same time. While they are, the queue fills the next one, so
/// batches grow with the load instead of the statements per trigger.
const PREPARING_BATCHES: usize = 2;
/// Trigger results written per statement (in chunks of the storage layer's batch size).
const WRITE_BATCH: usize = 1_000;

/// Everything a trigger needs besides its request.
pub struct TriggerContext {
    pub db: Db,
    pub i18n: I18n,
    pub executors: ExecutorClient,
    pub router: Router,
    pub clock: Arc<dyn Clock>,
    /// This admin's address as shown in trigger reports.
    pub admin_address: String,
    /// Trigger results on their way to the writer task, which batches them.
    pub results: mpsc::UnboundedSender<(i64, TriggerInfo)>,
    pub metrics: Arc<Metrics>,
}

/// The two lanes; cheap to clone.
#[derive(Clone)]
pub struct TriggerPool {
    fast: mpsc::Sender<TriggerRequest>,
    slow: mpsc::Sender<TriggerRequest>,
    slow_jobs: Arc<Mutex<SlowJobs>>,
    clock: Arc<dyn Clock>,
    rejections: Arc<Mutex<Rejections>>,
    metrics: Arc<Metrics>,
}

/// Per-job counts of slow triggers in the current minute.
#[derive(Default)]
struct SlowJobs {
    minute: i64,
    counts: HashMap<i32, u32>,
}

impl SlowJobs {
    fn is_slow(&self, job_id: i32) -> bool {
        self.counts.get(&job_id).is_some_and(|c| *c > SLOW_LANE_THRESHOLD)
    }

    fn record(&mut self, job_id: i32, now_ms: i64, took_ms: i64) {
        let minute = now_ms / 60_000;
        if minute != self.minute {
            self.minute = minute;
            self.counts.clear();
        }
        if took_ms > SLOW_TRIGGER_MS {
            *self.counts.entry(job_id).or_default() += 1;
        }
    }
}

impl TriggerPool {
    /// Starts both lanes. They run until `shutdown` (or until every handle is dropped), then finish what
    /// is queued.
    pub fn start(
        db: Db,
        i18n: I18n,
        executors: ExecutorClient,
        clock: Arc<dyn Clock>,
        config: &Config,
        metrics: Arc<Metrics>,
        shutdown: Shutdown,
    ) -> (TriggerPool, Vec<JoinHandle<()>>) {
        let (results, results_rx) = mpsc::unbounded_channel();
        let writer = tokio::spawn(write_trigger_infos(db.clone(), results_rx));
        let context = Arc::new(TriggerContext {
            db,
            i18n,
            executors,
            router: Router::new(),
            clock: clock.clone(),
            admin_address: admin_address(),
            results,
            metrics: metrics.clone(),
        });
        let slow_jobs = Arc::new(Mutex::new(SlowJobs::default()));
        let (fast, fast_rx) = mpsc::channel(LANE_QUEUE);
        let (slow, slow_rx) = mpsc::channel(LANE_QUEUE);
        let lanes = vec![
            tokio::spawn(run_lane(fast_rx, config.trigger_pool.fast_max as usize, context.clone(), slow_jobs.clone(), shutdown.clone())),
            tokio::spawn(run_lane(slow_rx, config.trigger_pool.slow_max as usize, context, slow_jobs.clone(), shutdown)),
            // Last: it ends once the lanes and their triggers are done with the context.
            writer,
        ];
        (TriggerPool { fast, slow, slow_jobs, clock, rejections: Arc::default(), metrics }, lanes)
    }
}

impl TriggerSink for TriggerPool {
    fn submit(&self, request: TriggerRequest) {
        let slow = self.slow_jobs.lock().is_ok_and(|s| s.is_slow(request.job_id));
        let lane = if slow { &self.slow } else { &self.fast };
        if let Err(e) = lane.try_send(request) {
            let request = match e {
                mpsc::error::TrySendError::Full(r) | mpsc::error::TrySendError::Closed(r) => r,
            };
            self.metrics.rejected(if slow { Lane::Slow } else { Lane::Fast });
            let now = self.clock.now_ms();
            // Overloaded, every fire of a second may be rejected: a line for each would cost the CPU the
            // lanes lack. The first few of each second are logged in full, the rest counted.
            let suppressed = match self.rejections.lock() {
                Ok(mut r) => r.note(now),
                Err(_) => Some(0),
            };
            let Some(suppressed) = suppressed else { return };
            if suppressed > 0 {
                tracing::error!("{suppressed} more triggers were rejected in the previous second (lanes full)");
            }
            tracing::error!(
                job_id = request.job_id,
                trigger_type = ?request.trigger_type,
                at = now,
                "trigger rejected: the {} lane is full or stopped",
                if slow { "slow" } else { "fast" }
            );
        }
    }

    fn backlog(&self) -> usize {
        (LANE_QUEUE - self.fast.capacity()) + (LANE_QUEUE - self.slow.capacity())
    }
}

/// Rejected triggers logged per second in full.
const REJECTIONS_LOGGED_PER_SECOND: u32 = 10;

/// Counts rejections per second, to log only the first few of each second.
#[derive(Default)]
struct Rejections {
    second: i64,
    logged: u32,
    suppressed: u64,
}

impl Rejections {
    /// `Some(n)` when this rejection is to be logged, with `n` rejections not logged since the last one
    /// that was; `None` when it is only counted.
    fn note(&mut self, now_ms: i64) -> Option<u64> {
        let second = now_ms.div_euclid(1000);
        if second != self.second {
            self.second = second;
            self.logged = 0;
        }
        if self.logged < REJECTIONS_LOGGED_PER_SECOND {
            self.logged += 1;
            Some(std::mem::take(&mut self.suppressed))
        } else {
            self.suppressed += 1;
            None
        }
    }
}

async fn run_lane(
    mut queue: mpsc::Receiver<TriggerRequest>,
    concurrency: usize,
    context: Arc<TriggerContext>,
    slow_jobs: Arc<Mutex<SlowJobs>>,
    mut shutdown: Shutdown,
) {
    let limit = Arc::new(Semaphore::new(concurrency));
    let preparing = Arc::new(Semaphore::new(PREPARING_BATCHES));
    let mut batch = Vec::with_capacity(MAX_BATCH);
    loop {
        // While the batches in preparation hold the database, requests accumulate into the next one.
        let Ok(prepare_permit) = preparing.clone().acquire_owned().await else { break };
        let received = tokio::select! {
            n = queue.recv_many(&mut batch, MAX_BATCH) => n,
            _ = shutdown.signalled() => {
                // Refuse new requests but run what is already queued.
                queue.close();
                queue.recv_many(&mut batch, MAX_BATCH).await
            }
        };
        if received == 0 {
            break;
        }
        let requests = std::mem::replace(&mut batch, Vec::with_capacity(MAX_BATCH));
        tokio::spawn(run_batch(context.clone(), slow_jobs.clone(), limit.clone(), requests, prepare_permit));
    }
    // Every permit back means every trigger of this lane has finished.
    let _ = tokio::time::timeout(DRAIN_TIMEOUT, async {
        let _ = preparing.acquire_many(PREPARING_BATCHES as u32).await;
        let _ = limit.acquire_many(concurrency as u32).await;
    })
    .await;
}

/// One batch of requests: their jobs and groups loaded and their log rows inserted together, then each
/// trigger sent on its own under the lane's concurrency limit.
async fn run_batch(
    context: Arc<TriggerContext>,
    slow_jobs: Arc<Mutex<SlowJobs>>,
    limit: Arc<Semaphore>,
    requests: Vec<TriggerRequest>,
    prepare_permit: OwnedSemaphorePermit,
) {
    let started = context.clock.now_ms();
    let shards = match prepare(&context, &requests).await {
        Ok(shards) => shards,
        Err(e) => {
            for request in &requests {
                tracing::error!(job_id = request.job_id, "trigger failed: {e}");
            }
            return;
        }
    };
    for shard in shards {
        let Ok(permit) = limit.clone().acquire_owned().await else { break };
        let (context, slow_jobs) = (context.clone(), slow_jobs.clone());
        tokio::spawn(async move {
            let job_id = shard.prepared.job.id;
            process(&context, shard).await;
            let now = context.clock.now_ms();
            if let Ok(mut slow) = slow_jobs.lock() {
                slow.record(job_id, now, now - started);
            }
            drop(permit);
        });
    }
    drop(prepare_permit);
}

/// Writes the trigger results the lanes produce, many rows per statement. It ends when every sender
/// is gone, after writing what was queued.
async fn write_trigger_infos(db: Db, mut results: mpsc::UnboundedReceiver<(i64, TriggerInfo)>) {
    let mut batch = Vec::with_capacity(WRITE_BATCH);
    while results.recv_many(&mut batch, WRITE_BATCH).await > 0 {
        if let Err(e) = db.update_trigger_infos(&batch).await {
            tracing::error!("trigger results of {} log(s) not written: {e}", batch.len());
        }
        batch.clear();
    }
}

/// Loads the jobs and groups of a batch of requests (spec 4.3 trigger), expands sharding broadcasts and
/// inserts one log row per trigger (spec 4.3 step 2), before anything is sent.
async fn prepare(context: &TriggerContext, requests: &[TriggerRequest]) -> Result<Vec<Shard>> {
    let mut job_ids: Vec<i32> = requests.iter().map(|r| r.job_id).collect();
    job_ids.sort_unstable();
    job_ids.dedup();
    let jobs: HashMap<i32, Arc<JobInfo>> =
        context.db.load_jobs(&job_ids).await?.into_iter().map(|j| (j.id, Arc::new(j))).collect();
    let mut group_ids: Vec<i32> = jobs.values().map(|j| j.job_group).collect();
    group_ids.sort_unstable();
    group_ids.dedup();
    // A group's addresses are split once per batch, not per trigger.
    let groups: HashMap<i32, (Arc<JobGroup>, Arc<Vec<String>>)> = context
        .db
        .load_groups(&group_ids)
        .await?
        .into_iter()
        .map(|g| {
            let addresses = Arc::new(split_addresses(Some(&g)));
            (g.id, (Arc::new(g), addresses))
        })
        .collect();

    let mut planned: Vec<(Arc<Prepared>, i32, i32)> = Vec::with_capacity(requests.len());
    for request in requests {
        let Some(job) = jobs.get(&request.job_id) else {
            tracing::warn!(job_id = request.job_id, "trigger skipped: the job does not exist");
            continue;
        };
        let mut job = job.clone();
        if let Some(param) = request.executor_param.clone() {
            Arc::make_mut(&mut job).executor_param = Some(param);
        }
        let fail_retry_count =
            if request.fail_retry_count >= 0 { request.fail_retry_count } else { job.executor_fail_retry_count };
        let (mut group, mut addresses) = match groups.get(&job.job_group) {
            Some((group, addresses)) => (Some(group.clone()), addresses.clone()),
            None => (None, Arc::default()),
        };
        if let (Some(group), Some(list)) = (group.as_mut(), request.address_list.as_deref()) {
            if !list.trim().is_empty() {
                let group = Arc::make_mut(group);
                group.address_type = 1;
                group.address_list = Some(list.trim().to_string());
                addresses = Arc::new(split_addresses(Some(group)));
            }
        }
        let sharding = request.sharding_param.as_deref().and_then(parse_sharding);
        let route = job.executor_route_strategy.as_deref().and_then(RouteStrategy::from_name);
        let broadcast = route == Some(RouteStrategy::ShardingBroadcast) && !addresses.is_empty() && sharding.is_none();
        let prepared = Arc::new(Prepared { job, group, addresses, request: request.clone(), fail_retry_count, route });
        if broadcast {
            let total = prepared.addresses.len() as i32;
            for index in 0..total {
                planned.push((prepared.clone(), index, total));
            }
        } else {
            let (index, total) = sharding.unwrap_or((0, 1));
            planned.push((prepared, index, total));
        }
    }
    if planned.is_empty() {
        return Ok(Vec::new());
    }
    let trigger_time = context.clock.now_ms();
    let rows: Vec<(i32, i32)> = planned.iter().map(|(p, _, _)| (p.job.job_group, p.job.id)).collect();
    let log_ids = context.db.insert_logs(&rows, trigger_time).await?;
    Ok(planned
        .into_iter()
        .zip(log_ids)
        .map(|((prepared, index, total), log_id)| Shard { prepared, index, total, log_id, trigger_time })
        .collect())
}

/// The addresses of a group's list, as 2.4.2 splits them; none without a group or list.
fn split_addresses(group: Option<&JobGroup>) -> Vec<String> {
    group
        .and_then(|g| g.address_list.as_deref())
        .filter(|list| !list.trim().is_empty())
        .map(|list| java_split(list).into_iter().map(str::to_string).collect())
        .unwrap_or_default()
}

/// What every shard of one trigger request shares; jobs and groups are shared by the requests of a
/// batch unless a request overrides a parameter or the addresses.
struct Prepared {
    job: Arc<JobInfo>,
    group: Option<Arc<JobGroup>>,
    addresses: Arc<Vec<String>>,
    request: TriggerRequest,
    fail_retry_count: i32,
    route: Option<RouteStrategy>,
}

/// One trigger to send: its log row exists.
struct Shard {
    prepared: Arc<Prepared>,
    index: i32,
    total: i32,
    log_id: i64,
    trigger_time: i64,
}

/// `index/total`, both 32-bit integers, or nothing.
fn parse_sharding(param: &str) -> Option<(i32, i32)> {
    let (index, total) = param.split_once('/')?;
    if total.contains('/') {
        return None;
    }
    Some((index.parse().ok()?, total.parse().ok()?))
}

/// One trigger after its log row: the address, `/run`, and the report (spec 4.3 processTrigger).
/// Unlike 2.4.2, a missing group or an unknown route strategy ends as a failed trigger with a message,
/// never as a log row stuck "running".
async fn process(context: &TriggerContext, shard: Shard) {
    let i18n = &context.i18n;
    let s = &*shard.prepared;
    let (route, index, total, log_id, trigger_time) = (s.route, shard.index, shard.total, shard.log_id, shard.trigger_time);
    let job = &s.job;
    let sharding_text = (route == Some(RouteStrategy::ShardingBroadcast)).then(|| format!("{index}/{total}"));
    let glue_updatetime = job.glue_updatetime.map(|t| context.db.zone().to_epoch_ms(t)).unwrap_or(0);
    let param = TriggerParam {
        job_id: job.id,
        executor_handler: job.executor_handler.clone(),
        executor_params: job.executor_param.clone(),
        executor_block_strategy: job.executor_block_strategy.clone(),
        executor_timeout: job.executor_timeout,
        log_id,
        log_date_time: trigger_time,
        glue_type: job.glue_type.clone(),
        glue_source: job.glue_source.clone(),
        glue_updatetime,
        broadcast_index: index,
        broadcast_total: total,
    };

    let (address, route_msg) = choose_address(context, s, route, index).await;
    let (code, run_msg) = match &address {
        Some(address) => {
            context.metrics.run_sent(&s.request, context.clock.now_ms());
            let result = context.executors.run(address, &param).await;
            let label = i18n.get("jobconf_trigger_run");
            (result.code, Some(call_report(label, address, result.code, result.msg.as_deref())))
        }
        None => (FAIL_CODE, None),
    };
    context.metrics.trigger(s.request.trigger_type, code == 200);

    let address_items: Vec<&str> = s
        .group
        .as_ref()
        .and_then(|g| g.address_list.as_deref())
        .filter(|l| !is_blank(Some(l)))
        .map(java_split)
        .unwrap_or_default();
    let route_title = match route {
        Some(route) => i18n.get(route.i18n_key()).to_string(),
        None => job.executor_route_strategy.clone().unwrap_or_else(|| "null".into()),
    };
    let report = TriggerReport {
        trigger_type_title: i18n.get(s.request.trigger_type.i18n_key()),
        admin_address: &context.admin_address,
        manual_addresses: s.group.as_ref().is_some_and(|g| g.address_type != 0),
        address_list: (!address_items.is_empty()).then_some(&address_items[..]),
        route_title: &route_title,
        sharding: sharding_text.as_deref(),
        block_title: i18n.get(block_title_key(job.executor_block_strategy.as_deref())),
        timeout: job.executor_timeout,
        fail_retry_count: s.fail_retry_count,
        route_msg: route_msg.as_deref(),
        run_msg: run_msg.as_deref(),
    };
    let info = TriggerInfo {
        trigger_time_ms: trigger_time,
        trigger_code: code,
        trigger_msg: Some(report.render(i18n)),
        executor_address: address,
        executor_handler: job.executor_handler.clone(),
        executor_param: job.executor_param.clone(),
        executor_sharding_param: sharding_text,
        executor_fail_retry_count: s.fail_retry_count,
    };
    // Written with other triggers' results by the writer task; directly if it is gone.
    if let Err(mpsc::error::SendError((log_id, info))) = context.results.send((log_id, info)) {
        if let Err(e) = context.db.update_trigger_info(log_id, &info).await {
            tracing::error!(job_id = job.id, log_id, "trigger result not written: {e}");
        }
    }
}

/// The executor address for this trigger, and the router's message when there is one.
async fn choose_address(
    context: &TriggerContext,
    s: &Prepared,
    route: Option<RouteStrategy>,
    index: i32,
) -> (Option<String>, Option<String>) {
    let i18n = &context.i18n;
    let addresses = &s.addresses;
    if s.group.is_none() {
        let missing = format!("{}{}", i18n.get("jobinfo_field_jobgroup"), i18n.get("system_not_found"));
        return (None, Some(format!("{missing} (id={})", s.job.job_group)));
    }
    if addresses.is_empty() {
        return (None, Some(i18n.get("jobconf_trigger_address_empty").to_string()));
    }
    match route {
        Some(RouteStrategy::ShardingBroadcast) => {
            let address = addresses.get(index as usize).unwrap_or(&addresses[0]);
            (Some(address.clone()), None)
        }
        Some(RouteStrategy::Failover) => probe(context, addresses, "jobconf_beat", |a| context.executors.beat(a)).await,
        Some(RouteStrategy::Busyover) => {
            let job_id = s.job.id;
            probe(context, addresses, "jobconf_idleBeat", |a| context.executors.idle_beat(a, job_id)).await
        }
        Some(strategy) => {
            let now = context.clock.now_ms();
            (context.router.pick(strategy, s.job.id, addresses, now), None)
        }
        None => (
            None,
            Some(format!(
                "{}{} ({})",
                i18n.get("jobinfo_field_executorRouteStrategy"),
                i18n.get("system_unvalid"),
                s.job.executor_route_strategy.as_deref().unwrap_or("null")
            )),
        ),
    }
}

/// FAILOVER / BUSYOVER: asks each executor in turn and takes the first that answers 200 (spec 5.8, 5.9).
async fn probe<'a, F, Fut>(context: &TriggerContext, addresses: &'a [String], label_key: &str, call: F) -> (Option<String>, Option<String>)
where
    F: Fn(&'a str) -> Fut,
    Fut: std::future::Future<Output = ReturnT<String>>,
{
    let label = context.i18n.get(label_key);
    let mut report = String::new();
    for address in addresses {
        let result = call(address).await;
        if !report.is_empty() {
            report.push_str("<br><br>");
        }
        report.push_str(&call_report(label, address, result.code, result.msg.as_deref()));
        if result.is_success() {
            return (Some(address.clone()), Some(report));
        }
    }
    (None, Some(report))
}

/// The first non-loopback IPv4 address of this host, as 2.4.2 reports it.
pub(crate) fn admin_address() -> String {
    if_addrs::get_if_addrs()
        .ok()
        .and_then(|ifaces| {
            ifaces.into_iter().find_map(|i| match i.ip() {
                std::net::IpAddr::V4(v4) if !v4.is_loopback() => Some(v4.to_string()),
                _ => None,
            })
        })
        .unwrap_or_else(|| "127.0.0.1".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sharding_params_need_exactly_two_integers() {
        assert_eq!(parse_sharding("1/3"), Some((1, 3)));
        assert_eq!(parse_sharding("-1/3"), Some((-1, 3)));
        assert_eq!(parse_sharding("1/3/4"), None);
        assert_eq!(parse_sharding("a/3"), None);
        assert_eq!(parse_sharding("13"), None);
    }

    #[test]
    fn a_job_is_slow_after_more_than_ten_slow_triggers_in_a_minute() {
        let mut slow = SlowJobs::default();
        let minute = 1_700_000_040_000;
        for _ in 0..10 {
            slow.record(7, minute, 501);
        }
        assert!(!slow.is_slow(7));
        slow.record(7, minute + 100, 600);
        assert!(slow.is_slow(7));
        slow.record(8, minute + 200, 500);
        assert!(!slow.is_slow(8), "exactly 500 ms is not slow");
        slow.record(8, minute + 60_000, 10);
        assert!(!slow.is_slow(7), "a new minute clears the counts");
    }

    #[test]
    fn rejections_are_logged_ten_a_second_and_the_rest_counted() {
        let mut r = Rejections::default();
        let second = 1_700_000_000_000;
        for _ in 0..10 {
            assert_eq!(r.note(second + 5), Some(0));
        }
        for _ in 0..25 {
            assert_eq!(r.note(second + 900), None);
        }
        assert_eq!(r.note(second + 1_000), Some(25), "the next second's first line reports the suppressed");
        assert_eq!(r.note(second + 1_001), Some(0));
    }
}
