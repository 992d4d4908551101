//! The trigger pools and the trigger algorithm (spec 4.2, 4.3, 5).
//!
//! Two lanes replace 2.4.2's two thread pools: each is a queue drained under a concurrency limit
//! (`xxl.job.triggerpool.fast.max` / `slow.max`). A job whose triggers were slow (> 500 ms) more than ten
//! times in the current minute goes to the slow lane, so a dead or hanging executor cannot starve the
//! others.

use super::backlog::{Backlog, Reserved};
use super::results::{ResultSender, Results};
use super::{TriggerSink, CONFLICT_RETRY};
use crate::config::Config;
use crate::domain::misfire::DropReason;
use crate::domain::protocol::FAIL_CODE;
use crate::domain::routing::{RouteStrategy, Router};
use crate::domain::trigger_msg::{block_title_key, call_report, TriggerReport};
use crate::domain::{is_blank, java_split, ReturnT, TriggerRequest, TriggerType};
use crate::executor::{ExecutorClient, FireHeaders, TriggerParam};
use crate::i18n::I18n;
use crate::metrics::{self, Metrics};
use crate::storage::{Db, JobGroup, JobInfo, NewLog, Result, TriggerInfo};
use crate::time::{sleep_unless_cancelled, Clock};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore, TryAcquireError};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

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
/// Pause between attempts while the database is unreachable.
const RETRY_PAUSE: Duration = Duration::from_secs(1);

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
    pub results: ResultSender,
    /// What was not sent or had to wait, counted for the log.
    pub counts: Arc<Counts>,
    pub metrics: Arc<Metrics>,
}

/// Events logged as per-second summaries rather than a line each.
#[derive(Default)]
pub struct Counts {
    /// Planned fires not sent, by reason.
    dropped: Mutex<Summary<DropReason>>,
    /// Triggers waiting for the database.
    waiting: Mutex<Summary<()>>,
}

impl Counts {
    pub fn drop_fires(&self, reason: DropReason, n: u64, now_ms: i64) {
        let mut dropped = self.dropped.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = dropped.note(reason, n, now_ms) {
            log_dropped(reason, count);
        }
    }

    pub fn wait(&self, n: u64, now_ms: i64, error: &crate::storage::StorageError) {
        if let Some(count) = self.waiting.lock().unwrap_or_else(|e| e.into_inner()).note((), n, now_ms) {
            tracing::error!("{count} trigger(s) waiting for the database: {error}");
        }
    }

    /// Logs what is still held back: once a second, and at the end, so every count reaches the log.
    fn flush(&self, now_ms: i64) {
        for (reason, count) in self.dropped.lock().unwrap_or_else(|e| e.into_inner()).flush(now_ms) {
            log_dropped(reason, count);
        }
        for ((), count) in self.waiting.lock().unwrap_or_else(|e| e.into_inner()).flush(now_ms) {
            tracing::error!("{count} more trigger(s) waited for the database");
        }
    }
}

fn log_dropped(reason: DropReason, count: u64) {
    tracing::warn!("{count} planned fire(s) not sent: {}", reason.label());
}

/// Writes the held-back counts every second until shutdown, then once more.
async fn flush_counts(counts: Arc<Counts>, clock: Arc<dyn Clock>, shutdown: CancellationToken) {
    while sleep_unless_cancelled(&shutdown, Duration::from_secs(1)).await {
        counts.flush(clock.now_ms());
    }
    counts.flush(i64::MAX);
}

/// Counts events per kind and says when to log them: the first at once, then at most one line per
/// kind and second carrying the count, so an outage logs a summary instead of a line per fire.
pub struct Summary<K> {
    kinds: HashMap<K, (i64, u64)>,
}

impl<K> Default for Summary<K> {
    fn default() -> Self {
        Summary { kinds: HashMap::new() }
    }
}

impl<K: std::hash::Hash + Eq + Copy> Summary<K> {
    /// Adds `n` events of `kind`; `Some(count)` when a line is due, with every event not yet logged.
    pub fn note(&mut self, kind: K, n: u64, now_ms: i64) -> Option<u64> {
        let (last_logged, pending) = self.kinds.entry(kind).or_insert((i64::MIN, 0));
        *pending += n;
        if now_ms.saturating_sub(*last_logged) < 1000 {
            return None;
        }
        *last_logged = now_ms;
        Some(std::mem::take(pending))
    }

    /// Takes the counts held back for kinds last logged at least a second before `now_ms`.
    pub fn flush(&mut self, now_ms: i64) -> Vec<(K, u64)> {
        let mut due = Vec::new();
        for (kind, (last_logged, pending)) in &mut self.kinds {
            if *pending > 0 && now_ms.saturating_sub(*last_logged) >= 1000 {
                *last_logged = now_ms;
                due.push((*kind, std::mem::take(pending)));
            }
        }
        due
    }
}

/// What the lanes use, given by whoever starts them.
pub struct LaneServices {
    pub db: Db,
    pub i18n: I18n,
    pub executors: ExecutorClient,
    pub clock: Arc<dyn Clock>,
    pub metrics: Arc<Metrics>,
}

/// The two lanes; cheap to clone.
#[derive(Clone)]
pub struct TriggerPool {
    fast: mpsc::Sender<TriggerRequest>,
    slow: mpsc::Sender<TriggerRequest>,
    lanes: Lanes,
    clock: Arc<dyn Clock>,
    rejections: Arc<Mutex<Rejections>>,
    metrics: Arc<Metrics>,
}

/// The lanes' concurrency limits, which queued requests and the leader's planned fires share: a job whose
/// triggers were slow takes its turn in the slow lane, so a hanging executor cannot starve the others.
#[derive(Clone)]
pub struct Lanes {
    fast: Lane,
    slow: Lane,
    slow_jobs: Arc<Mutex<SlowJobs>>,
}

/// One lane: triggers wait in its queue, in order, for one of its permits; only then does a trigger
/// become a task (a burst of thousands waits as small queue entries, not as thousands of tasks).
#[derive(Clone)]
struct Lane {
    queue: mpsc::UnboundedSender<Turn>,
    limit: Arc<Semaphore>,
    backlog: Arc<Backlog>,
}

/// Holds a prepared trigger back until it may be written; `false`: it is not sent (and has no result:
/// whoever held it back accounts for its row).
pub type Release = Pin<Box<dyn Future<Output = bool> + Send>>;

/// A trigger waiting for its turn, with what holds it back once it is prepared (planned fires).
type Turn = (Arc<TriggerContext>, Shard, Option<Release>);

impl Lane {
    fn start(concurrency: usize, slow_jobs: Arc<Mutex<SlowJobs>>, backlog: Arc<Backlog>) -> Lane {
        let limit = Arc::new(Semaphore::new(concurrency));
        let (queue, turns) = mpsc::unbounded_channel();
        tokio::spawn(give_turns(turns, limit.clone(), slow_jobs, backlog.clone()));
        Lane { queue, limit, backlog }
    }

    fn enqueue(&self, context: Arc<TriggerContext>, shard: Shard, release: Option<Release>) {
        self.backlog.add(1);
        if self.queue.send((context, shard, release)).is_err() {
            self.backlog.remove(1);
            tracing::error!("trigger dropped: its lane has stopped");
        }
    }
}

/// Runs the queued triggers of a lane as its permits allow. It ends with the process (the lanes' senders
/// live as long as the admin).
async fn give_turns(
    mut turns: mpsc::UnboundedReceiver<Turn>,
    limit: Arc<Semaphore>,
    slow_jobs: Arc<Mutex<SlowJobs>>,
    backlog: Arc<Backlog>,
) {
    while let Some(first) = turns.recv().await {
        let mut next = Some(first);
        while let Some((context, shard, release)) = next.take() {
            // What is queued and has a permit starts in this one poll, without yielding to the triggers
            // already started: the instant's fires all get their tasks before the first replies are
            // handled, so their `/run`s are written within a few milliseconds of the watermark.
            let permit = match limit.clone().try_acquire_owned() {
                Ok(permit) => permit,
                Err(TryAcquireError::NoPermits) => match limit.clone().acquire_owned().await {
                    Ok(permit) => permit,
                    Err(_) => return,
                },
                Err(TryAcquireError::Closed) => return,
            };
            backlog.remove(1);
            start_turn(context, shard, release, permit, slow_jobs.clone());
            next = turns.try_recv().ok();
        }
    }
}

/// Runs one trigger that has its permit.
fn start_turn(
    context: Arc<TriggerContext>,
    shard: Shard,
    release: Option<Release>,
    permit: OwnedSemaphorePermit,
    slow_jobs: Arc<Mutex<SlowJobs>>,
) {
    tokio::spawn(async move {
        let _permit = permit;
        let job_id = shard.prepared.job.id;
        // The trigger's own time (routing and `/run`), as 2.4.2 measures it in its pool thread: not
        // the wait for the database or for permits, which a burst makes long for every job, nor a
        // planned fire's wait for its instant.
        let Some(started) = process(&context, shard, release).await else { return };
        let now = context.clock.now_ms();
        if let Ok(mut slow) = slow_jobs.lock() {
            slow.record(job_id, now, now - started);
        }
    });
}

impl Lanes {
    /// Waits until no trigger waits for a permit of the fast lane, at most `limit`.
    pub async fn drained(&self, limit: Duration) {
        self.fast.backlog.cleared(limit).await;
    }

    /// Whether triggers wait for a permit of the fast lane: a burst is being sent.
    pub fn sending(&self) -> bool {
        !self.fast.backlog.is_empty()
    }

    /// Counts `n` decided fires in the backlog until they are with their lanes.
    pub fn reserve(&self, n: usize) -> Reserved {
        self.fast.backlog.reserve(n)
    }

    fn is_slow(&self, job_id: i32) -> bool {
        self.slow_jobs.lock().is_ok_and(|s| s.is_slow(job_id))
    }

    /// Runs one trigger in its job's lane, under the lane's concurrency limit. Once a permit is held and
    /// the trigger prepared (address chosen, request built), `release` decides when it is written and
    /// whether at all (waiting for a permit can take long when an executor hangs).
    pub fn spawn(&self, context: Arc<TriggerContext>, shard: Shard, release: Option<Release>) {
        let lane = if self.is_slow(shard.prepared.job.id) { &self.slow } else { &self.fast };
        lane.enqueue(context, shard, release);
    }
}

/// What starting the lanes gives.
pub struct Started {
    pub pool: TriggerPool,
    /// What every trigger uses, for the leader's planned fires too.
    pub context: Arc<TriggerContext>,
    /// The trigger results waiting to be written, which callbacks join.
    pub results: Arc<Results>,
    /// The lanes, then the result writer and the counts' flusher: they end in this order.
    pub tasks: Vec<JoinHandle<()>>,
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
    pub fn start(lanes: LaneServices, config: &Config, shutdown: CancellationToken) -> Started {
        let LaneServices { db, i18n, executors, clock, metrics } = lanes;
        // The fast lane's: a burst of planned fires goes there (a job is moved to the slow lane by its own
        // slow triggers, and that lane's backlog is a hanging executor's, not a burst).
        let backlog: Arc<Backlog> = Arc::default();
        let (waiting, results, writer) = Results::start(db.clone(), backlog.clone());
        let counts = Arc::new(Counts::default());
        let flusher = tokio::spawn(flush_counts(counts.clone(), clock.clone(), shutdown.clone()));
        let context = Arc::new(TriggerContext {
            db,
            i18n,
            executors,
            router: Router::new(),
            clock: clock.clone(),
            admin_address: admin_address(),
            results,
            counts: counts.clone(),
            metrics: metrics.clone(),
        });
        let (fast_max, slow_max) =
            (config.trigger_pool.fast_max as usize, config.trigger_pool.slow_max as usize);
        let slow_jobs: Arc<Mutex<SlowJobs>> = Arc::default();
        let lanes = Lanes {
            fast: Lane::start(fast_max, slow_jobs.clone(), backlog),
            slow: Lane::start(slow_max, slow_jobs.clone(), Arc::default()),
            slow_jobs,
        };
        let (fast, fast_rx) = mpsc::channel(LANE_QUEUE);
        let (slow, slow_rx) = mpsc::channel(LANE_QUEUE);
        let tasks = vec![
            tokio::spawn(run_lane(
                fast_rx,
                (lanes.fast.clone(), fast_max),
                context.clone(),
                shutdown.clone(),
            )),
            tokio::spawn(run_lane(slow_rx, (lanes.slow.clone(), slow_max), context.clone(), shutdown)),
            // Last: they end once the lanes and their triggers are done with the context.
            writer,
            flusher,
        ];
        Started {
            pool: TriggerPool { fast, slow, lanes, clock, rejections: Arc::default(), metrics },
            context,
            results: waiting,
            tasks,
        }
    }

    /// The concurrency limits, for the planned fires the leader sends beside the queued requests.
    pub fn lanes(&self) -> Lanes {
        self.lanes.clone()
    }
}

impl TriggerSink for TriggerPool {
    fn submit(&self, request: TriggerRequest) {
        let slow = self.lanes.is_slow(request.job_id);
        let lane = if slow { &self.slow } else { &self.fast };
        if let Err(e) = lane.try_send(request) {
            let request = match e {
                mpsc::error::TrySendError::Full(r) | mpsc::error::TrySendError::Closed(r) => r,
            };
            self.metrics.rejected(if slow { metrics::Lane::Slow } else { metrics::Lane::Fast });
            let now = self.clock.now_ms();
            // Overloaded, every fire of a second may be rejected: a line for each would cost the CPU the
            // lanes lack. The first few of each second are logged in full, the rest counted.
            let suppressed = match self.rejections.lock() {
                Ok(mut r) => r.note(now),
                Err(_) => Some(0),
            };
            let Some(suppressed) = suppressed else { return };
            if suppressed > 0 {
                tracing::error!(
                    "{suppressed} more triggers were rejected in the previous second (lanes full)"
                );
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
    (lane, concurrency): (Lane, usize),
    context: Arc<TriggerContext>,
    shutdown: CancellationToken,
) {
    let preparing = Arc::new(Semaphore::new(PREPARING_BATCHES));
    let mut batch = Vec::with_capacity(MAX_BATCH);
    loop {
        // While the batches in preparation hold the database, requests accumulate into the next one.
        let Ok(prepare_permit) = preparing.clone().acquire_owned().await else { break };
        let received = tokio::select! {
            n = queue.recv_many(&mut batch, MAX_BATCH) => n,
            _ = shutdown.cancelled() => {
                // Refuse new requests but run what is already queued.
                queue.close();
                queue.recv_many(&mut batch, MAX_BATCH).await
            }
        };
        if received == 0 {
            break;
        }
        let requests = std::mem::replace(&mut batch, Vec::with_capacity(MAX_BATCH));
        tokio::spawn(run_batch(context.clone(), lane.clone(), requests, prepare_permit));
    }
    // Every permit back means every trigger of this lane has finished (the leader's planned fires too).
    let _ = tokio::time::timeout(DRAIN_TIMEOUT, async {
        let _ = preparing.acquire_many(PREPARING_BATCHES as u32).await;
        let _ = lane.limit.acquire_many(concurrency as u32).await;
    })
    .await;
    context.counts.flush(i64::MAX);
}

/// One batch of requests: their jobs and groups loaded and their log rows inserted together, then each
/// trigger sent on its own under the lane's concurrency limit.
async fn run_batch(
    context: Arc<TriggerContext>,
    lane: Lane,
    requests: Vec<TriggerRequest>,
    prepare_permit: OwnedSemaphorePermit,
) {
    // The triggers wait for the database rather than being dropped.
    let shards = loop {
        match prepare(&context, &requests).await {
            Ok(shards) => break shards,
            // Another admin's transaction on the same rows won (a Galera certification conflict, a
            // deadlock): the next attempt sees its result, so it is made at once.
            Err(e) if e.is_conflict() => tokio::time::sleep(CONFLICT_RETRY).await,
            Err(e) => {
                context.counts.wait(requests.len() as u64, context.clock.now_ms(), &e);
                tokio::time::sleep(RETRY_PAUSE).await;
            }
        }
    };
    for shard in shards {
        lane.enqueue(context.clone(), shard, None);
    }
    drop(prepare_permit);
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
    let groups = load_groups(&context.db, &group_ids).await?;
    let now = context.clock.now_ms();
    let mut pending: Vec<Pending> = Vec::with_capacity(requests.len());
    for request in requests {
        let Some(job) = jobs.get(&request.job_id) else {
            tracing::warn!(job_id = request.job_id, "trigger skipped: the job does not exist");
            continue;
        };
        pending.extend(expand(request, job.clone(), groups.get(&job.job_group)));
    }
    let ids = context.db.insert_rows(&new_rows(&pending, now)).await?;
    Ok(pending
        .into_iter()
        .zip(ids)
        .map(|(p, log_id)| {
            if let Some(sink) = &p.prepared.request.on_log_id {
                (sink.0)(log_id);
            }
            p.into_shard(log_id, now, None)
        })
        .collect())
}

/// The log rows of these triggers, sent at `now`.
pub fn new_rows(pending: &[Pending], now: i64) -> Vec<NewLog> {
    pending
        .iter()
        .map(|p| NewLog {
            job_group: p.prepared.job.job_group,
            job_id: p.prepared.job.id,
            trigger_time_ms: now,
            trigger_msg: None,
        })
        .collect()
}

/// Groups by id, each with its address list split once (not once per trigger).
pub type Groups = HashMap<i32, (Arc<JobGroup>, Arc<Vec<String>>)>;

/// Loads the groups of these ids, their address lists split.
pub async fn load_groups(db: &Db, ids: &[i32]) -> Result<Groups> {
    Ok(db
        .load_groups(ids)
        .await?
        .into_iter()
        .map(|g| {
            let addresses = Arc::new(split_addresses(Some(&g)));
            (g.id, (Arc::new(g), addresses))
        })
        .collect())
}

/// The triggers one request makes of `job` in `group`: one, or one per address for a sharding broadcast,
/// each with the request's overrides (parameter, retry count, addresses) applied.
pub fn expand(
    request: &TriggerRequest,
    mut job: Arc<JobInfo>,
    group: Option<&(Arc<JobGroup>, Arc<Vec<String>>)>,
) -> Vec<Pending> {
    if let Some(param) = request.executor_param.clone() {
        Arc::make_mut(&mut job).executor_param = Some(param);
    }
    let fail_retry_count =
        if request.fail_retry_count >= 0 { request.fail_retry_count } else { job.executor_fail_retry_count };
    let (mut group, mut addresses) = match group {
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
    let broadcast =
        route == Some(RouteStrategy::ShardingBroadcast) && !addresses.is_empty() && sharding.is_none();
    let prepared =
        Arc::new(Prepared { job, group, addresses, request: request.clone(), fail_retry_count, route });
    let (first, total) =
        if broadcast { (0, prepared.addresses.len() as i32) } else { sharding.unwrap_or((0, 1)) };
    let indexes = if broadcast { 0..total } else { first..first + 1 };
    indexes.map(|index| Pending { prepared: prepared.clone(), index, total }).collect()
}

/// A trigger decided on, before its log row is known.
pub struct Pending {
    prepared: Arc<Prepared>,
    index: i32,
    total: i32,
}

impl Pending {
    /// The trigger, with its log row, sent at `trigger_time`; `planned_ms` is the instant a planned fire
    /// stands for.
    pub fn into_shard(self, log_id: i64, trigger_time: i64, planned_ms: Option<i64>) -> Shard {
        let trigger_type = self.prepared.request.trigger_type;
        Shard {
            prepared: self.prepared,
            index: self.index,
            total: self.total,
            log_id,
            trigger_time,
            trigger_type,
            planned_ms,
        }
    }
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
pub struct Prepared {
    job: Arc<JobInfo>,
    group: Option<Arc<JobGroup>>,
    addresses: Arc<Vec<String>>,
    request: TriggerRequest,
    fail_retry_count: i32,
    route: Option<RouteStrategy>,
}

/// One trigger to send: its log row exists.
pub struct Shard {
    prepared: Arc<Prepared>,
    index: i32,
    total: i32,
    log_id: i64,
    trigger_time: i64,
    trigger_type: TriggerType,
    /// The planned instant the trigger stands for, sent to the executor.
    planned_ms: Option<i64>,
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
/// Returns when its own work began (when `release` let it go, if later), `None` when `release` held it
/// back. Unlike 2.4.2, a missing group or an unknown route strategy ends as a failed trigger with a
/// message, never as a log row stuck "running".
async fn process(context: &TriggerContext, shard: Shard, release: Option<Release>) -> Option<i64> {
    let mut started = context.clock.now_ms();
    let i18n = &context.i18n;
    let s = &*shard.prepared;
    let (route, index, total, log_id, trigger_time) =
        (s.route, shard.index, shard.total, shard.log_id, shard.trigger_time);
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
    let fire = FireHeaders { planned_ms: shard.planned_ms, trigger_type: shard.trigger_type.name() };
    // The connection is taken while the fire is held, not before: the last check of the decision comes
    // at its instant however long connecting takes (an executor that does not answer SYNs takes the
    // connect timeout, and the fire must then fail, not collapse into the next).
    let readying = async {
        match &address {
            Some(address) => Some((
                address,
                context.executors.ready_run(context.executors.prepare_run(address, &param, fire)).await,
            )),
            None => None,
        }
    };
    let request = match release {
        Some(mut release) => {
            let mut readying = std::pin::pin!(readying);
            // A fire held back stops connecting; only a connection already taken is given back.
            let (go, ready) = tokio::select! {
                biased;
                ready = &mut readying => (release.await, Some(ready)),
                go = &mut release => (go, None),
            };
            if !go {
                if let Some(Some((_, request))) = ready {
                    context.executors.unsent(request);
                }
                return None;
            }
            started = context.clock.now_ms();
            match ready {
                Some(ready) => ready,
                None => readying.await,
            }
        }
        None => readying.await,
    };
    let (code, run_msg) = match request {
        Some((address, request)) => {
            context.metrics.run_sent(shard.trigger_type, shard.planned_ms, context.clock.now_ms());
            let result = context.executors.send_run(request).await;
            let label = i18n.get("jobconf_trigger_run");
            (result.code, Some(call_report(label, address, result.code, result.msg.as_deref())))
        }
        None => (FAIL_CODE, None),
    };
    context.metrics.trigger(shard.trigger_type, code == 200);

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
        trigger_type_title: i18n.get(shard.trigger_type.i18n_key()),
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
        trigger_msg: Some(context.results.shared_text(report.render(i18n))),
        executor_address: address,
        executor_handler: job.executor_handler.clone(),
        executor_param: job.executor_param.clone(),
        executor_sharding_param: sharding_text,
        executor_fail_retry_count: s.fail_retry_count,
    };
    // Written with other triggers' results by the writer task (with the callback, should it come first,
    // unless child jobs are to start); directly if the writer is gone.
    let joinable = job.child_jobid.as_deref().is_none_or(|c| c.trim().is_empty());
    if let Some(info) = context.results.send(log_id, info, joinable) {
        if let Err(e) = context.db.update_trigger_info(log_id, &info).await {
            tracing::error!(job_id = job.id, log_id, "trigger result not written: {e}");
        }
    }
    Some(started)
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
        Some(RouteStrategy::Failover) => {
            probe(context, addresses, "jobconf_beat", |a| context.executors.beat(a)).await
        }
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
async fn probe<'a, F, Fut>(
    context: &TriggerContext,
    addresses: &'a [String],
    label_key: &str,
    call: F,
) -> (Option<String>, Option<String>)
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
    fn summaries_log_the_first_event_then_a_count_a_second_and_flush_the_rest() {
        let mut summary = Summary::default();
        let t = 1_700_000_000_000;
        assert_eq!(summary.note(DropReason::Misfire, 3, t), Some(3));
        assert_eq!(summary.note(DropReason::Misfire, 5, t + 400), None);
        assert_eq!(summary.note(DropReason::Stopped, 1, t + 400), Some(1), "kinds are counted apart");
        assert_eq!(summary.flush(t + 900), vec![], "held back less than a second");
        assert_eq!(summary.flush(t + 1_000), vec![(DropReason::Misfire, 5)]);
        assert_eq!(summary.note(DropReason::Misfire, 2, t + 1_500), None);
        assert_eq!(
            summary.flush(i64::MAX),
            vec![(DropReason::Misfire, 2)],
            "the last flush takes everything"
        );
        assert_eq!(summary.flush(i64::MAX), vec![]);
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
