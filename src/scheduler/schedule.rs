//! The schedule loop and the timer wheel (spec 4.1).
//!
//! Each pass takes the cluster-wide `schedule_lock`, reads the jobs due within the next five seconds,
//! plans them, writes their next times in batches and releases the lock; only then are the fires
//! released, so a failed pass never fires anything twice. Planned fires wait in a timer wheel keyed by
//! the millisecond, not 2.4.2's one-second ring, so a job fires at its planned instant.

use super::{fires_once_now, job_row, TriggerSink, CONFLICT_RETRY};
use crate::domain::misfire::DropReason;
use crate::domain::ownership::{misfired_since_last_run, JobRow, Owner};
use crate::domain::protocol::FAIL_CODE;
use crate::domain::schedule::{plan_job, CronCache, PRE_READ_MS};
use crate::i18n::I18n;
use super::monitors::{alarm_status, LOST_RESULT_AFTER_MS};
use crate::domain::{PlannedFire, TriggerRequest, TriggerType};
use crate::metrics::Metrics;
use crate::storage::{Db, JobRowState, NewLog, ScheduleLock, ScheduleUpdate, ScheduledJob};
use crate::time::{Clock, Zone};
use crate::workers::Shutdown;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;


/// Fires planned to the millisecond, released by one task.
#[derive(Clone)]
pub struct TimerWheel {
    inner: Arc<WheelInner>,
}

struct WheelInner {
    slots: Mutex<BTreeMap<i64, Vec<TriggerRequest>>>,
    changed: Notify,
}

impl TimerWheel {
    pub fn new() -> TimerWheel {
        TimerWheel { inner: Arc::new(WheelInner { slots: Mutex::new(BTreeMap::new()), changed: Notify::new() }) }
    }

    /// Adds requests, each to be released at its `(instant, request)` instant.
    pub fn schedule(&self, entries: impl IntoIterator<Item = (i64, TriggerRequest)>) {
        let mut slots = self.inner.slots.lock().unwrap_or_else(|e| e.into_inner());
        for (at, request) in entries {
            slots.entry(at).or_default().push(request);
        }
        drop(slots);
        self.inner.changed.notify_one();
    }

    fn is_empty(&self) -> bool {
        self.inner.slots.lock().unwrap_or_else(|e| e.into_inner()).is_empty()
    }

    /// Removes every entry due at or before `now_ms`, in time order; or returns the next due time.
    fn take_due(&self, now_ms: i64) -> Result<Vec<TriggerRequest>, Option<i64>> {
        let mut slots = self.inner.slots.lock().unwrap_or_else(|e| e.into_inner());
        let later = slots.split_off(&(now_ms + 1));
        let due = std::mem::replace(&mut *slots, later);
        if due.is_empty() {
            Err(slots.keys().next().copied())
        } else {
            Ok(due.into_values().flatten().collect())
        }
    }

    /// Releases fires as they come due. After shutdown it keeps going until the wheel is empty (at most
    /// the pre-read window): those jobs' next times are already written, so dropping them would lose them.
    pub async fn run(self, triggers: Arc<dyn TriggerSink>, clock: Arc<dyn Clock>, shutdown: Shutdown) {
        loop {
            match self.take_due(clock.now_ms()) {
                Ok(requests) => {
                    for request in requests {
                        triggers.submit(request);
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
    /// The cron expressions of the jobs, parsed once.
    pub crons: Mutex<CronCache>,
    pub metrics: Arc<Metrics>,
    /// This admin's marker of the rows it plans (see `crate::domain::ownership::Owner`).
    pub planned: String,
    /// Its marker of the catch-up fires its passes decide and send at once.
    pub catching_up: String,
    /// The language of the messages of rows settled unsent.
    pub i18n: I18n,
    /// The fires of a pass whose COMMIT got no answer (the connection died with it): the next pass finds
    /// out whether their rows exist and, if so, sends them (see [`Scheduler::confirm_unanswered`]).
    pub unanswered: Mutex<Vec<(i64, TriggerRequest)>>,
}

/// The outcome of one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassSummary {
    pub jobs: usize,
    /// The page was full: more jobs may be due.
    pub full: bool,
    pub fired_now: usize,
    pub planned: usize,
    pub updated: u64,
}

impl Scheduler {
    /// Runs passes until shutdown, the first at once (a restarted admin plans without a pause). Passes
    /// start half-way through a second so that their database work does not compete with the fires the
    /// wheel releases on whole seconds.
    pub async fn run(self, mut shutdown: Shutdown) {
        loop {
            let started = self.clock.now_ms();
            let (found, full) = tokio::select! {
                result = self.pass() => match result {
                    Ok(summary) => (summary.jobs > 0, summary.full),
                    Err(e) if e.is_conflict() => {
                        // Another admin planned meanwhile (on Galera: committed first); its plan is read
                        // at once, not a second later.
                        tracing::debug!("schedule pass gave way to another admin's: {e}");
                        if !shutdown.sleep(CONFLICT_RETRY).await {
                            break;
                        }
                        continue;
                    }
                    Err(e) => {
                        tracing::error!("schedule pass failed: {e}");
                        (true, false)
                    }
                },
                _ = wait_shutdown(shutdown.clone()) => break,
            };
            if full {
                // More jobs may be due within the window: read them now, the most urgent first.
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

    /// One pass under the lock, over the jobs due within the pre-read window. The log rows of the fires
    /// it plans are inserted in the same transaction as the jobs' next times, so a plan is never lost with
    /// the admin that made it.
    pub async fn pass(&self) -> crate::storage::Result<PassSummary> {
        let started = Instant::now();
        let mut lock = self.db.lock_schedule().await?;
        self.metrics.lock_wait(started.elapsed());
        self.confirm_unanswered(&mut lock).await?;
        let now_time = self.clock.now_ms();
        let jobs = lock.due_jobs(now_time + PRE_READ_MS, self.pre_read_count).await?;
        let (fires, updates, skipped) = self.plan(&jobs, now_time);
        let mut fires = self.catch_up(&mut lock, &jobs, fires, now_time).await?;
        let updated = lock.update_schedules(&updates).await?;
        // A job's one fire after a stall is decided here, under the lock: its row is written "being sent",
        // so that it goes out at once, before the job's next regular fire, without being settled again.
        fires.sort_by_key(|f| !f.is_catch_up());
        let catching_up = fires.iter().take_while(|f| f.is_catch_up()).count();
        let rows: Vec<NewLog> = fires
            .iter()
            .map(|f| NewLog { job_group: f.job_group, job_id: f.job_id, trigger_time_ms: f.release_at })
            .collect();
        let mut log_ids = lock.insert_logs(&rows[..catching_up], &self.catching_up).await?;
        log_ids.extend(lock.insert_logs(&rows[catching_up..], &self.planned).await?);
        let summary = PassSummary {
            jobs: jobs.len(),
            full: jobs.len() as i64 >= self.pre_read_count,
            fired_now: fires.iter().filter(|f| f.release_at == now_time).count(),
            planned: fires.iter().filter(|f| f.release_at != now_time).count(),
            updated,
        };
        let released: Vec<(i64, TriggerRequest)> = fires
            .into_iter()
            .zip(log_ids)
            .map(|(fire, log_id)| {
                let planned = PlannedFire { at_ms: fire.at, planned_at_ms: now_time, log_id, marked: fire.is_catch_up() };
                (fire.release_at, TriggerRequest { planned: Some(planned), ..TriggerRequest::of_job(fire.job_id, fire.kind) })
            })
            .collect();
        if let Err(e) = lock.commit().await {
            // A failed statement before it rolled the pass back; a COMMIT without an answer may have
            // been written: its rows name this admin, which no other takes over while it lives.
            self.unanswered.lock().unwrap_or_else(|e| e.into_inner()).extend(released);
            return Err(e);
        }
        if skipped > 0 {
            tracing::warn!("{skipped} job(s) missed a fire by more than {PRE_READ_MS} ms: skipped by their misfire strategy DO_NOTHING");
        }
        let (now, planned): (Vec<_>, Vec<_>) = released.into_iter().partition(|(at, _)| *at == now_time);
        for (_, request) in now {
            self.triggers.submit(request);
        }
        self.wheel.schedule(planned);
        self.metrics.schedule_pass(started.elapsed());
        Ok(summary)
    }

    /// Sends the fires of an unanswered COMMIT whose rows turn out to exist (it was written): they go
    /// through the wheel like any other, and the lanes settle the late ones with their jobs' other rows.
    async fn confirm_unanswered(&self, lock: &mut ScheduleLock) -> crate::storage::Result<()> {
        let unanswered = std::mem::take(&mut *self.unanswered.lock().unwrap_or_else(|e| e.into_inner()));
        let Some(since) = unanswered.iter().map(|(at, _)| *at).min() else { return Ok(()) };
        let rows = match lock.rows_marked(&self.planned, &self.catching_up, since).await {
            Ok(rows) => rows,
            Err(e) => {
                self.unanswered.lock().unwrap_or_else(|e| e.into_inner()).extend(unanswered);
                return Err(e);
            }
        };
        let zone = self.db.zone();
        // Rows of the same id, job and time (to the second the column keeps): ids of a pass rolled back
        // are not handed out again by the servers that can lose an answer, but that is theirs to promise.
        let written: std::collections::HashMap<i64, (i32, i64)> =
            rows.into_iter().map(|r| (r.id, (r.job_id, r.trigger_time.map_or(0, |t| zone.to_epoch_ms(t))))).collect();
        let confirmed: Vec<(i64, TriggerRequest)> = unanswered
            .into_iter()
            .filter(|(at, r)| {
                r.planned.and_then(|p| written.get(&p.log_id)).is_some_and(|(job_id, row_ms)| *job_id == r.job_id && (row_ms - at).abs() < 1000)
            })
            .collect();
        if !confirmed.is_empty() {
            tracing::warn!("{} fire(s) of a pass whose commit got no answer were written after all: sent now", confirmed.len());
            self.wheel.schedule(confirmed);
        }
        Ok(())
    }

    /// The fires of jobs whose next time was missed (a stall) stand for every late fire of theirs: the
    /// late rows not yet sent, any admin's, are settled as collapsed into it, and a FIRE_ONCE_NOW job's
    /// fire becomes its compensation when any of them was more than the misfire threshold late. A fire
    /// whose instant a run already covers (a late row sent since) is not sent at all. So a job runs once
    /// after a stall, whoever gets to its rows first: this pass, or the lanes settling its late rows.
    async fn catch_up(&self, lock: &mut ScheduleLock, jobs: &[ScheduledJob], fires: Vec<Fire>, now_time: i64) -> crate::storage::Result<Vec<Fire>> {
        let missed: Vec<i32> = fires.iter().filter(|f| f.is_catch_up()).map(|f| f.job_id).collect();
        if missed.is_empty() {
            return Ok(fires);
        }
        let rows = lock.job_rows(&missed, now_time - LOST_RESULT_AFTER_MS).await?;
        let zone = self.db.zone();
        let at_ms = |r: &JobRowState| job_row(r, zone).trigger_time_ms;
        let mut collapsed = Vec::new();
        let mut kept = Vec::with_capacity(fires.len());
        for mut fire in fires {
            if !fire.is_catch_up() {
                kept.push(fire);
                continue;
            }
            let job_rows: Vec<JobRow> = rows
                .iter()
                .filter(|r| r.job_id == fire.job_id)
                .map(|r| job_row(r, zone))
                .collect();
            if job_rows.iter().any(|r| r.ran && r.trigger_time_ms >= fire.at) {
                continue;
            }
            let fire_once_now = jobs.iter().any(|j| j.id == fire.job_id && fires_once_now(&j.misfire_strategy));
            if fire_once_now && misfired_since_last_run(&job_rows, i64::MAX, now_time) {
                fire.kind = TriggerType::Misfire;
            }
            // The job's planned rows not yet sent and due: this fire stands for them.
            let planned = |r: &&JobRowState| {
                r.job_id == fire.job_id
                    && r.trigger_code == 0
                    && r.handle_code == 0
                    && at_ms(r) <= now_time
                    && r.trigger_msg.as_deref().and_then(Owner::from_marker).is_some_and(|(_, sending)| !sending)
            };
            collapsed.extend(rows.iter().filter(planned).map(|r| r.id));
            kept.push(fire);
        }
        if !collapsed.is_empty() {
            lock.settle_unsent(&collapsed, FAIL_CODE, self.i18n.get("joblog_skipped_collapsed"), alarm_status::NOT_NEEDED).await?;
            tracing::warn!("{} planned fire(s) not sent: {}", collapsed.len(), DropReason::Collapsed.label());
        }
        Ok(kept)
    }

    /// Plans each due job (spec 4.1): the fires to release, the schedule updates to write, and how many
    /// missed fires DO_NOTHING skipped.
    fn plan(&self, jobs: &[ScheduledJob], now_time: i64) -> (Vec<Fire>, Vec<ScheduleUpdate>, usize) {
        let mut fires = Vec::new();
        let mut skipped = 0;
        let mut updates = Vec::with_capacity(jobs.len());
        let mut crons = self.crons.lock().unwrap_or_else(|e| e.into_inner());
        for job in jobs {
            let plan = plan_job(job, now_time, self.clock.now_ms(), self.cron_zone, &mut crons);
            if let Some(Some(reason)) = &plan.stopped {
                tracing::warn!(job_id = job.id, "job stopped: {reason}");
            } else if plan.stopped.is_some() {
                tracing::info!(job_id = job.id, "job stopped: its schedule has no further fire time");
            }
            if now_time > job.trigger_next_time + PRE_READ_MS {
                self.metrics.misfire_settled(&job.misfire_strategy, "late");
                if plan.fire_now.is_none() {
                    skipped += 1;
                }
            }
            if let Some(kind) = plan.fire_now {
                // A late fire stands for the missed next time; so does a misfire compensation.
                fires.push(Fire { job_id: job.id, job_group: job.job_group, kind, at: job.trigger_next_time, release_at: now_time });
            }
            if let Some(at) = plan.fire_at {
                fires.push(Fire { job_id: job.id, job_group: job.job_group, kind: TriggerType::Cron, at, release_at: at });
            }
            updates.push(ScheduleUpdate {
                id: job.id,
                expected_next_time: job.trigger_next_time,
                trigger_status: plan.trigger_status,
                trigger_last_time: plan.trigger_last_time,
                trigger_next_time: plan.trigger_next_time,
            });
        }
        (fires, updates, skipped)
    }
}

impl Fire {
    /// Released after its instant: the job's next time was missed.
    fn is_catch_up(&self) -> bool {
        self.at < self.release_at
    }
}

/// A fire decided by a pass: released at once or from the wheel.
struct Fire {
    job_id: i32,
    job_group: i32,
    kind: TriggerType,
    /// The instant it stands for.
    at: i64,
    /// When it is released to the lanes (its log row's trigger time until it is sent).
    release_at: i64,
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
        let job = |id| TriggerRequest::of_job(id, TriggerType::Cron);
        wheel.schedule([(3_000, job(3)), (1_000, job(1)), (2_000, job(2)), (1_000, job(11))]);
        let ids = |due: Vec<TriggerRequest>| due.into_iter().map(|r| r.job_id).collect::<Vec<_>>();
        assert_eq!(wheel.take_due(999).map(ids), Err(Some(1_000)));
        assert_eq!(wheel.take_due(2_000).map(ids), Ok(vec![1, 11, 2]));
        assert_eq!(wheel.take_due(2_500).map(ids), Err(Some(3_000)));
        assert_eq!(wheel.take_due(5_000).map(ids), Ok(vec![3]));
        assert_eq!(wheel.take_due(5_000), Err(None));
        assert!(wheel.is_empty());
    }
}
