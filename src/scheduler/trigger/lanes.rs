//! The fast and the slow lane, which replace 2.4.2's two trigger thread pools (2.4.2:
//! JobTriggerPoolHelper): each is a queue of triggers drained under a concurrency limit
//! (`xxl.job.triggerpool.fast.max` / `slow.max`). A job whose triggers were slow (> 500 ms) more than ten
//! times in the current minute goes to the slow lane, so a dead or hanging executor cannot starve the
//! others.

use super::super::backlog::{Backlog, Reserved};
use super::resolve::Trigger;
use super::run::{process, Release};
use super::TriggerContext;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore, TryAcquireError};

/// A trigger slower than this counts towards moving its job to the slow lane.
const SLOW_TRIGGER_MS: i64 = 500;
/// Slow triggers per minute after which a job uses the slow lane.
const SLOW_LANE_THRESHOLD: u32 = 10;

/// The lanes' concurrency limits, which queued requests and the leader's planned fires share: a job whose
/// triggers were slow takes its turn in the slow lane, so a hanging executor cannot starve the others.
#[derive(Clone)]
pub struct Lanes {
    pub(super) fast: Lane,
    pub(super) slow: Lane,
    slow_jobs: Arc<Mutex<SlowJobs>>,
}

/// One lane: triggers wait in its queue, in order, for one of its permits; only then does a trigger
/// become a task (a burst of thousands waits as small queue entries, not as thousands of tasks).
#[derive(Clone)]
pub(super) struct Lane {
    queue: mpsc::UnboundedSender<Turn>,
    limit: Arc<Semaphore>,
    concurrency: usize,
    backlog: Arc<Backlog>,
}

/// A trigger waiting for its turn, with what holds it back once its `/run` is ready (planned fires).
struct Turn {
    context: Arc<TriggerContext>,
    trigger: Trigger,
    release: Option<Release>,
}

impl Lane {
    fn start(concurrency: usize, slow_jobs: Arc<Mutex<SlowJobs>>, backlog: Arc<Backlog>) -> Lane {
        let limit = Arc::new(Semaphore::new(concurrency));
        let (queue, turns) = mpsc::unbounded_channel();
        tokio::spawn(give_turns(turns, limit.clone(), slow_jobs, backlog.clone()));
        Lane { queue, limit, concurrency, backlog }
    }

    pub(super) fn enqueue(&self, context: Arc<TriggerContext>, trigger: Trigger, release: Option<Release>) {
        self.backlog.add(1);
        if self.queue.send(Turn { context, trigger, release }).is_err() {
            self.backlog.remove(1);
            tracing::error!("trigger dropped: its lane has stopped");
        }
    }

    /// Waits until every permit is back: every trigger the lane started has finished.
    pub(super) async fn finished(&self) {
        let _ = self.limit.acquire_many(self.concurrency as u32).await;
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
        while let Some(turn) = next.take() {
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
            start_turn(turn, permit, slow_jobs.clone());
            next = turns.try_recv().ok();
        }
    }
}

/// Runs one trigger that has its permit.
fn start_turn(turn: Turn, permit: OwnedSemaphorePermit, slow_jobs: Arc<Mutex<SlowJobs>>) {
    tokio::spawn(async move {
        let _permit = permit;
        let Turn { context, trigger, release } = turn;
        let job_id = trigger.resolved.job.id;
        // The trigger's own time (routing and `/run`), as 2.4.2 measures it in its pool thread: not
        // the wait for the database or for permits, which a burst makes long for every job, nor a
        // planned fire's wait for its instant.
        let Some(started) = process(&context, trigger, release).await else { return };
        let now = context.clock.now_ms();
        if let Ok(mut slow) = slow_jobs.lock() {
            slow.record(job_id, now, now - started);
        }
    });
}

impl Lanes {
    /// The two lanes with these concurrency limits; `fast_backlog` counts the triggers waiting for a
    /// permit of the fast lane.
    pub(super) fn start(fast_max: usize, slow_max: usize, fast_backlog: Arc<Backlog>) -> Lanes {
        let slow_jobs: Arc<Mutex<SlowJobs>> = Arc::default();
        Lanes {
            fast: Lane::start(fast_max, slow_jobs.clone(), fast_backlog),
            slow: Lane::start(slow_max, slow_jobs.clone(), Arc::default()),
            slow_jobs,
        }
    }

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

    pub(super) fn is_slow(&self, job_id: i32) -> bool {
        self.slow_jobs.lock().is_ok_and(|s| s.is_slow(job_id))
    }

    /// Runs one trigger in its job's lane, under the lane's concurrency limit. Once a permit is held and
    /// the trigger's `/run` ready (address chosen, request built), `release` decides when it is written and
    /// whether at all (waiting for a permit can take long when an executor hangs).
    pub fn spawn(&self, context: Arc<TriggerContext>, trigger: Trigger, release: Option<Release>) {
        let lane = if self.is_slow(trigger.resolved.job.id) { &self.slow } else { &self.fast };
        lane.enqueue(context, trigger, release);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
