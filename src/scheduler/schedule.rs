//! The schedule loop (2.4.2: JobScheduleHelper.start), run by the leading admin.
//!
//! Each pass takes the cluster-wide `schedule_lock`, reads the jobs due within the next five seconds,
//! plans them and writes, in the same transaction, their next times and one log row per planned fire
//! (see `crate::domain::ownership`); only once it committed are the fires handed to the dispatcher, so a
//! failed pass never fires anything, and a plan never lives only in the memory of one admin.

use super::dispatch::{Dispatcher, JobFire};
use super::lease::Leadership;
use super::CONFLICT_RETRY;
use crate::domain::fires::{Fire, Kind};
use crate::domain::ownership::PlanMarker;
use crate::domain::schedule::{plan_job, CronCache, PLAN_AHEAD_MS, PRE_READ_MS};
use crate::domain::TriggerType;
use crate::metrics::Metrics;
use crate::storage::{Db, NewLog, ScheduleUpdate, ScheduledJob};
use crate::time::{sleep_unless_cancelled, Clock, Zone};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// What the schedule loop needs.
pub struct Scheduler {
    pub db: Db,
    pub dispatcher: Dispatcher,
    pub leadership: Leadership,
    pub clock: Arc<dyn Clock>,
    pub cron_zone: Zone,
    /// Jobs read per pass: (fast + slow lane limits) × 20, as in 2.4.2.
    pub pre_read_count: i64,
    /// The cron expressions of the jobs, parsed once.
    pub crons: Mutex<CronCache>,
    pub metrics: Arc<Metrics>,
    /// The fires of a pass whose COMMIT got no answer (the connection died with it), with its term: the
    /// next pass finds out whether their rows were written and, if so, hands them on.
    pub unanswered: Mutex<(u64, Vec<JobFire>)>,
}

/// The outcome of one pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassSummary {
    pub jobs: usize,
    /// The page was full: more jobs may be due.
    pub full: bool,
    pub fired_now: usize,
    pub planned: usize,
    pub updated: u64,
    /// The earliest next time of the jobs the pass read or may have left unread, when some are left.
    pub next_due_ms: Option<i64>,
}

impl Scheduler {
    /// Runs passes while this admin leads, until shutdown; the first at once (a new leader plans without
    /// a pause). Passes start half-way through a second so that their database work does not compete
    /// with the fires sent on whole seconds.
    pub async fn run(self, shutdown: CancellationToken) {
        let mut terms = self.leadership.subscribe();
        loop {
            let term = *terms.borrow_and_update();
            if !term.leading {
                tokio::select! {
                    _ = terms.changed() => continue,
                    _ = shutdown.cancelled() => break,
                }
            }
            let started = self.clock.now_ms();
            let (found, full, next_due) = tokio::select! {
                result = self.pass(term.number) => match result {
                    Ok(summary) => (summary.jobs > 0, summary.full, summary.next_due_ms),
                    Err(e) if e.is_conflict() => {
                        // Another admin planned meanwhile (on Galera: committed first); its plan is read
                        // at once, not a second later.
                        tracing::debug!("schedule pass gave way to another admin's: {e}");
                        if !sleep_unless_cancelled(&shutdown, CONFLICT_RETRY).await {
                            break;
                        }
                        continue;
                    }
                    Err(e) => {
                        tracing::error!("schedule pass failed: {e}");
                        (true, false, None)
                    }
                },
                _ = shutdown.cancelled() => break,
            };
            if full {
                // More jobs may be due within the window: read them now, the most urgent first.
                if let Some(next_due) = next_due {
                    let took = self.clock.now_ms() - started;
                    tokio::select! {
                        _ = self.make_way(next_due, took) => {}
                        _ = terms.changed() => {}
                        _ = shutdown.cancelled() => break,
                    }
                }
                continue;
            }
            let now = self.clock.now_ms();
            if now - started < 1000 {
                // Nothing due within the pre-read window: nothing can become due sooner than that
                // without a console change, which always plans at least five seconds ahead. The loop
                // wakes with lead to spare (see IDLE_LEAD_MS).
                let idle = if found { 0 } else { PRE_READ_MS - IDLE_LEAD_MS };
                let pause = Duration::from_millis(until_half_second(now, idle));
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    // A new term plans at once.
                    _ = terms.changed() => {}
                    _ = shutdown.cancelled() => break,
                }
            }
        }
    }

    /// Before a pass that can wait: lets a burst of fires due before it would end (`pass_ms`, as long as
    /// the last one) be sent first, as long as the earliest fire still to plan, at `next_due`, keeps
    /// [`PLAN_LEAD_MS`] of lead. A pass's inserts and updates would compete with the burst's `/run`s for
    /// the cores and the database.
    async fn make_way(&self, next_due: i64, pass_ms: i64) {
        loop {
            let now = self.clock.now_ms();
            let latest_start = next_due - PLAN_LEAD_MS - pass_ms;
            if now >= latest_start {
                return;
            }
            if self.dispatcher.sending() {
                self.dispatcher.drained(Duration::from_millis((latest_start - now) as u64)).await;
                continue;
            }
            // A burst due already may not be with the lanes yet.
            let Some(release) =
                self.dispatcher.burst_between(now - 1_000, now + pass_ms + MAKE_WAY_SLACK_MS, BURST_FIRES)
            else {
                return;
            };
            // Until the burst's triggers queue for their permits (a little before it is due); one due
            // already waits for its watermark.
            tokio::time::sleep(Duration::from_millis(
                (release.min(latest_start) - now).max(MAKE_WAY_POLL_MS) as u64,
            ))
            .await;
        }
    }

    /// One pass under the lock, over the jobs due within the pre-read window, in leadership term `term`.
    pub async fn pass(&self, term: u64) -> crate::storage::Result<PassSummary> {
        self.confirm_unanswered(term).await?;
        // Nothing is released at or before the watermark: a successor would take it for sent. (Read before
        // the lock: the watermark's writes never wait for a pass.)
        let after = self.leadership.watermark().await + 1;
        let started = Instant::now();
        let mut lock = self.db.lock_schedule().await?;
        self.metrics.lock_wait(started.elapsed());
        // Taken over by another admin since the last renewal: plan nothing (the renewal will tell).
        if !lock.leads(self.leadership.owner()).await? {
            return Ok(PassSummary::default());
        }
        let now_time = self.clock.now_ms();
        let due = lock.due_jobs(now_time + PRE_READ_MS, self.pre_read_count).await?;
        let (mut planned, updates, skipped) = self.plan(&due, now_time);
        // The jobs planned (a pass stops at FIRES_PER_PASS fires; the next pass takes the rest at once).
        let jobs = &due[..updates.len()];
        for p in &mut planned {
            p.fire.release_ms = p.fire.release_ms.max(after);
        }
        let updated = lock.update_schedules(&updates).await?;
        let owner = self.leadership.owner();
        let rows: Vec<NewLog> = planned
            .iter()
            .map(|p| NewLog {
                job_group: p.job_group,
                job_id: p.job_id,
                trigger_time_ms: p.fire.release_ms,
                trigger_msg: Some(
                    PlanMarker { owner, release_ms: p.fire.release_ms, instant_ms: p.fire.instant_ms }.text(),
                ),
            })
            .collect();
        let ids = lock.insert_logs(&rows).await?;
        let summary = PassSummary {
            jobs: jobs.len(),
            full: due.len() as i64 >= self.pre_read_count || jobs.len() < due.len(),
            fired_now: planned.iter().filter(|p| p.fire.kind != Kind::Regular).count(),
            planned: planned.iter().filter(|p| p.fire.kind == Kind::Regular).count(),
            updated,
            next_due_ms: due
                .get(jobs.len())
                .or(due.last().filter(|_| due.len() as i64 >= self.pre_read_count))
                .map(|j| j.trigger_next_time),
        };
        let fires: Vec<JobFire> = planned
            .into_iter()
            .zip(ids)
            .map(|(p, log_id)| JobFire { job_id: p.job_id, fire: Fire { log_id, ..p.fire } })
            .collect();
        if let Err(e) = lock.commit().await {
            // A failed statement before it rolled the pass back; a COMMIT without an answer may have
            // been written, and nobody else sends this admin's rows while it leads.
            let mut unanswered = self.unanswered.lock().unwrap_or_else(|e| e.into_inner());
            *unanswered = (term, fires);
            return Err(e);
        }
        if skipped > 0 {
            tracing::warn!("{skipped} job(s) missed a fire by more than {PRE_READ_MS} ms: skipped by their misfire strategy DO_NOTHING");
        }
        self.dispatcher.add(term, fires);
        self.metrics.schedule_pass(started.elapsed());
        Ok(summary)
    }

    /// Hands on the fires of an unanswered COMMIT whose rows turn out to exist (it was written).
    async fn confirm_unanswered(&self, term: u64) -> crate::storage::Result<()> {
        let (of_term, fires) =
            std::mem::take(&mut *self.unanswered.lock().unwrap_or_else(|e| e.into_inner()));
        if fires.is_empty() || of_term != term {
            return Ok(());
        }
        let ids: Vec<i64> = fires.iter().map(|f| f.fire.log_id).collect();
        let present = match self.db.planned_rows_present(&ids).await {
            Ok(present) => present,
            Err(e) => {
                *self.unanswered.lock().unwrap_or_else(|e| e.into_inner()) = (of_term, fires);
                return Err(e);
            }
        };
        let confirmed: Vec<JobFire> =
            fires.into_iter().filter(|f| present.contains(&f.fire.log_id)).collect();
        if !confirmed.is_empty() {
            tracing::warn!(
                "{} fire(s) of a pass whose commit got no answer were written after all: sent now",
                confirmed.len()
            );
            self.dispatcher.add(term, confirmed);
        }
        Ok(())
    }

    /// Plans the due jobs in order (2.4.2: JobScheduleHelper.start), until [`FIRES_PER_PASS`] fires: their
    /// fires, the schedule updates to write (one per job planned), and how many missed fires DO_NOTHING
    /// skipped.
    fn plan(&self, jobs: &[ScheduledJob], now_time: i64) -> (Vec<Planned>, Vec<ScheduleUpdate>, usize) {
        let mut fires = Vec::new();
        let mut skipped = 0;
        let mut updates = Vec::with_capacity(jobs.len());
        let mut crons = self.crons.lock().unwrap_or_else(|e| e.into_inner());
        let horizon = now_time + PRE_READ_MS + PLAN_AHEAD_MS;
        for job in jobs {
            if fires.len() >= FIRES_PER_PASS {
                break;
            }
            let plan = plan_job(job, now_time, self.clock.now_ms(), horizon, self.cron_zone, &mut crons);
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
            let fire = |instant_ms, release_ms, kind| Planned {
                job_id: job.id,
                job_group: job.job_group,
                // Its row does not exist yet.
                fire: Fire { log_id: 0, instant_ms, release_ms, kind, planned_at_ms: now_time },
            };
            if let Some((kind, instant_ms)) = plan.fire_now {
                let kind = if kind == TriggerType::Misfire { Kind::Compensation } else { Kind::CatchUp };
                fires.push(fire(instant_ms, now_time, kind));
            }
            fires.extend(plan.fires_at.iter().map(|&at| fire(at, at, Kind::Regular)));
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

/// Fires one pass writes at most, in one transaction: everything else that writes (the watermark before a
/// second's fires, their results) waits for it on SQLite, and on every backend the pass holds the schedule
/// lock meanwhile. Jobs beyond are planned by the next pass, at once.
const FIRES_PER_PASS: usize = 10_000;

/// An idle loop wakes this much before anything can be due: the loop sleeps until the first half-second
/// after that, so the first fires to plan are 2 to 3 s away. The passes that plan every job after an
/// idle spell (10,000 every-second jobs: eight passes of 10,000 fires, 2 s of work on a busy machine)
/// then finish in time while they make way for the bursts (with a lead of 0.5 s, some fires of a second
/// were planned after it and collapsed).
const IDLE_LEAD_MS: i64 = 3_000;
/// Fires due at one instant for which a pass that can wait makes way: more than the lanes send at once.
const BURST_FIRES: usize = 500;
/// Room after a pass for the burst it would meet.
const MAKE_WAY_SLACK_MS: i64 = 20;
/// How often a pass making way looks again for a burst that is due but not with the lanes yet.
const MAKE_WAY_POLL_MS: i64 = 5;
/// Lead a pass that makes way leaves the earliest fire it has to plan.
const PLAN_LEAD_MS: i64 = 1_000;

/// A fire a pass plans, before its row is written.
struct Planned {
    job_id: i32,
    job_group: i32,
    fire: Fire,
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
}
