//! The trigger pool: the triggers that are not planned (manual runs, retries, child jobs) queue per lane
//! and are taken in batches, whose jobs and groups are loaded and whose log rows are inserted by a few
//! statements; each trigger then waits in its lane (2.4.2: JobTriggerPoolHelper.addTrigger).

use super::super::backlog::Backlog;
use super::super::results::Results;
use super::super::{TriggerSink, CONFLICT_RETRY};
use super::counts::{flush_counts, Counts};
use super::lanes::{Lane, Lanes};
use super::resolve::resolve_batch;
use super::TriggerContext;
use crate::config::Config;
use crate::domain::routing::Router;
use crate::domain::TriggerRequest;
use crate::executor::ExecutorClient;
use crate::host;
use crate::i18n::I18n;
use crate::metrics::{self, Metrics};
use crate::storage::Db;
use crate::time::Clock;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Room for bursts: a schedule pass may release thousands of fires in the same millisecond.
const LANE_QUEUE: usize = 100_000;
/// How long shutdown waits for triggers already running.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);
/// Requests a lane takes from its queue at once: their jobs and groups are loaded, and their log rows
/// inserted, by a few statements for all of them.
const MAX_BATCH: usize = 500;
/// Batches of one lane being resolved (jobs and groups loaded, rows inserted) at the same time. While they
/// are, the queue fills the next one, so batches grow with the load instead of the statements per trigger.
const RESOLVING_BATCHES: usize = 2;
/// Pause between attempts while the database is unreachable.
const RETRY_PAUSE: Duration = Duration::from_secs(1);

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

/// What the lanes use, given by whoever starts them.
pub struct LaneServices {
    pub db: Db,
    pub i18n: I18n,
    pub executors: ExecutorClient,
    pub clock: Arc<dyn Clock>,
    pub metrics: Arc<Metrics>,
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
            admin_address: host::address(),
            results,
            counts: counts.clone(),
            metrics: metrics.clone(),
        });
        let (fast_max, slow_max) =
            (config.trigger_pool.fast_max as usize, config.trigger_pool.slow_max as usize);
        let lanes = Lanes::start(fast_max, slow_max, backlog);
        let (fast, fast_rx) = mpsc::channel(LANE_QUEUE);
        let (slow, slow_rx) = mpsc::channel(LANE_QUEUE);
        let tasks = vec![
            tokio::spawn(run_lane(fast_rx, lanes.fast.clone(), context.clone(), shutdown.clone())),
            tokio::spawn(run_lane(slow_rx, lanes.slow.clone(), context.clone(), shutdown)),
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

/// Takes the requests queued for `lane` in batches until `shutdown`, then runs what is queued and waits
/// (at most [`DRAIN_TIMEOUT`]) for the lane's triggers to finish.
async fn run_lane(
    mut queue: mpsc::Receiver<TriggerRequest>,
    lane: Lane,
    context: Arc<TriggerContext>,
    shutdown: CancellationToken,
) {
    let resolving = Arc::new(Semaphore::new(RESOLVING_BATCHES));
    let mut batch = Vec::with_capacity(MAX_BATCH);
    loop {
        // While the batches being resolved hold the database, requests accumulate into the next one.
        let Ok(resolve_permit) = resolving.clone().acquire_owned().await else { break };
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
        tokio::spawn(run_batch(context.clone(), lane.clone(), requests, resolve_permit));
    }
    // Every permit back means every trigger of this lane has finished (the leader's planned fires too).
    let _ = tokio::time::timeout(DRAIN_TIMEOUT, async {
        let _ = resolving.acquire_many(RESOLVING_BATCHES as u32).await;
        lane.finished().await;
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
    resolve_permit: OwnedSemaphorePermit,
) {
    // The triggers wait for the database rather than being dropped.
    let triggers = loop {
        match resolve_batch(&context, &requests).await {
            Ok(triggers) => break triggers,
            // Another admin's transaction on the same rows won (a Galera certification conflict, a
            // deadlock): the next attempt sees its result, so it is made at once.
            Err(e) if e.is_conflict() => tokio::time::sleep(CONFLICT_RETRY).await,
            Err(e) => {
                context.counts.wait(requests.len() as u64, context.clock.now_ms(), &e);
                tokio::time::sleep(RETRY_PAUSE).await;
            }
        }
    };
    for trigger in triggers {
        lane.enqueue(context.clone(), trigger, None);
    }
    drop(resolve_permit);
}

#[cfg(test)]
mod tests {
    use super::*;

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
