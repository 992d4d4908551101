//! The schedule loop and the timer wheel (spec 4.1).
//!
//! Each pass takes the cluster-wide `schedule_lock`, reads the jobs due within the next five seconds,
//! plans them, writes their next times in batches and releases the lock; only then are the fires
//! released, so a failed pass never fires anything twice. Planned fires wait in a timer wheel keyed by
//! the millisecond, not 2.4.2's one-second ring, so a job fires at its planned instant.

use super::TriggerSink;
use crate::domain::schedule::{plan_job, PRE_READ_MS};
use crate::domain::{TriggerRequest, TriggerType};
use crate::metrics::Metrics;
use crate::storage::{Db, ScheduleUpdate};
use crate::time::{Clock, Zone};
use crate::workers::Shutdown;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// How often a full pass re-checks the lanes' backlog before reading the next page.
const BACKLOG_POLL_MS: i64 = 10;
/// The longest a full pass waits for the lanes to catch up.
const BACKLOG_WAIT_MAX_MS: i64 = 1_000;

/// Fires planned to the millisecond, released by one task.
#[derive(Clone)]
pub struct TimerWheel {
    inner: Arc<WheelInner>,
}

struct WheelInner {
    slots: Mutex<BTreeMap<i64, Vec<i32>>>,
    changed: Notify,
}

impl TimerWheel {
    pub fn new() -> TimerWheel {
        TimerWheel { inner: Arc::new(WheelInner { slots: Mutex::new(BTreeMap::new()), changed: Notify::new() }) }
    }

    /// Adds `(fire_at_ms, job_id)` entries.
    pub fn schedule(&self, entries: impl IntoIterator<Item = (i64, i32)>) {
        let mut slots = self.inner.slots.lock().unwrap_or_else(|e| e.into_inner());
        for (at, job_id) in entries {
            slots.entry(at).or_default().push(job_id);
        }
        drop(slots);
        self.inner.changed.notify_one();
    }

    fn is_empty(&self) -> bool {
        self.inner.slots.lock().unwrap_or_else(|e| e.into_inner()).is_empty()
    }

    /// Removes every `(fire_at_ms, job_id)` due at or before `now_ms`, in time order; or returns the next
    /// due time.
    fn take_due(&self, now_ms: i64) -> Result<Vec<(i64, i32)>, Option<i64>> {
        let mut slots = self.inner.slots.lock().unwrap_or_else(|e| e.into_inner());
        let later = slots.split_off(&(now_ms + 1));
        let due = std::mem::replace(&mut *slots, later);
        if due.is_empty() {
            Err(slots.keys().next().copied())
        } else {
            Ok(due.into_iter().flat_map(|(at, jobs)| jobs.into_iter().map(move |job_id| (at, job_id))).collect())
        }
    }

    /// Releases fires as they come due. After shutdown it keeps going until the wheel is empty (at most
    /// the pre-read window): those jobs' next times are already written, so dropping them would lose them.
    pub async fn run(self, triggers: Arc<dyn TriggerSink>, clock: Arc<dyn Clock>, shutdown: Shutdown) {
        loop {
            match self.take_due(clock.now_ms()) {
                Ok(due) => {
                    for (at, job_id) in due {
                        triggers.submit(TriggerRequest::planned(job_id, TriggerType::Cron, at));
                    }
                }
                Err(next) => {
                    if shutdown.is_triggered() && self.is_empty() {
                        return;
                    }
                    let wait = next.map_or(1000, |at| (at - clock.now_ms()).clamp(0, 1000));
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(wait as u64)) => {}
                        _ = self.inner.changed.notified() => {}
                    }
                }
            }
        }
    }
}

impl Default for TimerWheel {
    fn default() -> Self {
        TimerWheel::new()
    }
}

/// What the schedule loop needs.
pub struct Scheduler {
    pub db: Db,
    pub triggers: Arc<dyn TriggerSink>,
    pub wheel: TimerWheel,
    pub clock: Arc<dyn Clock>,
    pub cron_zone: Zone,
    /// Jobs read per pass: (fast + slow lane limits) × 20, as in 2.4.2.
    pub pre_read_count: i64,
    pub metrics: Arc<Metrics>,
}

/// The outcome of one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassSummary {
    pub jobs: usize,
    pub fired_now: usize,
    pub planned: usize,
    pub updated: u64,
}

impl Scheduler {
    /// Runs passes until shutdown. Passes start half-way through a second so that their database work
    /// does not compete with the fires the wheel releases on whole seconds.
    pub async fn run(self, mut shutdown: Shutdown) {
        if !shutdown.sleep(Duration::from_millis(until_half_second(self.clock.now_ms(), 4_000))).await {
            return;
        }
        loop {
            let started = self.clock.now_ms();
            let (found, full) = tokio::select! {
                result = self.pass() => match result {
                    Ok(summary) => (summary.jobs > 0, summary.jobs as i64 >= self.pre_read_count),
                    Err(e) => {
                        tracing::error!("schedule pass failed: {e}");
                        (true, false)
                    }
                },
                _ = wait_shutdown(shutdown.clone()) => break,
            };
            if full {
                // A full page: more jobs may be due within the window; read them now, not next second,
                // unless the lanes are behind: then planning more fires would only make them late (or
                // rejected). Unread jobs keep their next time; the misfire rule settles them if they wait
                // too long.
                let mut waited = 0;
                while self.triggers.backlog() as i64 > self.pre_read_count && waited < BACKLOG_WAIT_MAX_MS {
                    if !shutdown.sleep(Duration::from_millis(BACKLOG_POLL_MS as u64)).await {
                        return;
                    }
                    waited += BACKLOG_POLL_MS;
                }
                continue;
            }
            let now = self.clock.now_ms();
            if now - started < 1000 {
                // Nothing due within the pre-read window: nothing can become due sooner than that
                // without a console change, which always plans at least five seconds ahead.
                let idle = if found { 0 } else { PRE_READ_MS - 1000 };
                if !shutdown.sleep(Duration::from_millis(until_half_second(now, idle))).await {
                    break;
                }
            }
        }
    }

    /// One pass under the lock.
    pub async fn pass(&self) -> crate::storage::Result<PassSummary> {
        let started = Instant::now();
        let mut lock = self.db.lock_schedule().await?;
        self.metrics.lock_wait(started.elapsed());
        let now_time = self.clock.now_ms();
        let jobs = lock.due_jobs(now_time + PRE_READ_MS, self.pre_read_count).await?;
        let mut fire_now = Vec::new();
        let mut planned = Vec::new();
        let mut updates = Vec::with_capacity(jobs.len());
        for job in &jobs {
            let plan = plan_job(job, now_time, self.clock.now_ms(), self.cron_zone);
            if now_time > job.trigger_next_time + PRE_READ_MS {
                self.metrics.misfire_settled(&job.misfire_strategy, "late");
            }
            if let Some(Some(reason)) = &plan.stopped {
                tracing::warn!(job_id = job.id, "job stopped: {reason}");
            } else if plan.stopped.is_some() {
                tracing::info!(job_id = job.id, "job stopped: its schedule has no further fire time");
            }
            if let Some(kind) = plan.fire_now {
                fire_now.push(TriggerRequest::planned(job.id, kind, job.trigger_next_time));
            }
            if let Some(at) = plan.fire_at {
                planned.push((at, job.id));
            }
            updates.push(ScheduleUpdate {
                id: job.id,
                expected_next_time: job.trigger_next_time,
                trigger_status: plan.trigger_status,
                trigger_last_time: plan.trigger_last_time,
                trigger_next_time: plan.trigger_next_time,
            });
        }
        let updated = lock.update_schedules(&updates).await?;
        lock.commit().await?;
        let summary = PassSummary { jobs: jobs.len(), fired_now: fire_now.len(), planned: planned.len(), updated };
        for request in fire_now {
            self.triggers.submit(request);
        }
        self.wheel.schedule(planned);
        self.metrics.schedule_pass(started.elapsed());
        Ok(summary)
    }
}

async fn wait_shutdown(mut shutdown: Shutdown) {
    while shutdown.sleep(Duration::from_secs(3600)).await {}
}

/// Milliseconds from `now_ms` until the first x.500 boundary at least `min_ms` away.
fn until_half_second(now_ms: i64, min_ms: i64) -> u64 {
    let target = now_ms + min_ms;
    let boundary = target - target.rem_euclid(1000) + 500;
    let boundary = if boundary < target { boundary + 1000 } else { boundary };
    (boundary - now_ms) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_wake_on_half_seconds() {
        assert_eq!(until_half_second(10_000, 0), 500);
        assert_eq!(until_half_second(10_600, 0), 900);
        assert_eq!(until_half_second(10_500, 0), 0);
        assert_eq!(until_half_second(10_200, 4_000), 4_300);
    }

    #[test]
    fn the_wheel_releases_due_entries_in_time_order() {
        let wheel = TimerWheel::new();
        wheel.schedule([(3_000, 3), (1_000, 1), (2_000, 2), (1_000, 11)]);
        assert_eq!(wheel.take_due(999), Err(Some(1_000)));
        assert_eq!(wheel.take_due(2_000), Ok(vec![(1_000, 1), (1_000, 11), (2_000, 2)]));
        assert_eq!(wheel.take_due(2_500), Err(Some(3_000)));
        assert_eq!(wheel.take_due(5_000), Ok(vec![(3_000, 3)]));
        assert_eq!(wheel.take_due(5_000), Err(None));
        assert!(wheel.is_empty());
    }
}
