//! Step 1, the check: shortly before fires are due, one read of their jobs' status and last change finds
//! the fires the console cancelled (job stopped, deleted or rescheduled since the plan) and loads the
//! jobs and groups their sends need, so that sending waits for nothing.

use super::settle::Settled;
use super::state::State;
use super::{pause, Inner, Next, RETRY_PAUSE};
use crate::domain::misfire::{cancelled, DropReason};
use crate::scheduler::trigger::{load_groups, Groups};
use crate::storage::{JobInfo, JobVersion, StorageError};
use crate::time::{sleep_unless_cancelled, Zone, CRON_ZONE};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Fires are checked this long before they are due: time for one read of their jobs, while a console
/// change meanwhile is still seen (the check is the last look at the job before the `/run`).
pub(super) const CHECK_AHEAD_MS: i64 = 30;
/// Fires due this much later than the first unchecked one are checked with it.
const CHECK_SPAN_MS: i64 = 20;
/// Groups are read again when older than this (executors register every 30 s).
const GROUPS_FRESH_MS: i64 = 1_000;

/// What a check read from the database.
struct CheckRead {
    /// The status and last change of each job still there.
    versions: HashMap<i32, JobVersion>,
    /// The jobs not loaded yet, or changed since they were.
    loaded: Vec<JobInfo>,
    /// The groups, when they were due to be read again or some were missing.
    groups: Option<Groups>,
}

/// Work for the checker: the fires released in `(after, through]`, of these jobs.
struct CheckWork {
    term: u64,
    after: i64,
    through: i64,
    jobs: Vec<i32>,
    /// The groups are to be read again.
    groups_due: bool,
}

impl Inner {
    pub(super) async fn check_loop(self: Arc<Self>, shutdown: CancellationToken) {
        loop {
            let now = self.context.clock.now_ms();
            match self.next_check(now) {
                Next::Work(work) => {
                    if !self.check(work).await
                        && !sleep_unless_cancelled(&shutdown, RETRY_PAUSE).await
                        && self.may_end(&shutdown)
                    {
                        return;
                    }
                }
                Next::WakeAt(wake_at) => {
                    if self.may_end(&shutdown) {
                        return;
                    }
                    pause(&self.checker_wake, wake_at, now, &shutdown).await;
                }
            }
        }
    }

    /// The next fires to check, or when to look again.
    fn next_check(&self, now: i64) -> Next<CheckWork> {
        let state = self.lock();
        let term = self.leadership.term();
        if !term.leading || term.number != state.term {
            return Next::WakeAt(None);
        }
        let Some(first) = state.first_release_after(state.checked_through) else { return Next::WakeAt(None) };
        if first > now + CHECK_AHEAD_MS {
            return Next::WakeAt(Some(first - CHECK_AHEAD_MS));
        }
        let through = state
            .last_release_between(state.checked_through, first.max(now + CHECK_AHEAD_MS) + CHECK_SPAN_MS)
            .unwrap_or(first);
        let jobs = state.jobs_between(state.checked_through, through);
        let groups_due = now - state.groups_loaded_ms >= GROUPS_FRESH_MS;
        Next::Work(CheckWork { term: state.term, after: state.checked_through, through, jobs, groups_due })
    }

    /// Checks the fires of `work` against the jobs as stored now: removes those the console cancelled and
    /// loads what their sends need. Returns false when the database did not answer (tried again later).
    async fn check(&self, work: CheckWork) -> bool {
        let Some(read) = self.read_for_check(&work).await else { return false };
        let Some(cancellations) = self.apply_check(&work, read) else { return true };
        for settled in cancellations {
            let _ = self.settled.send(settled);
        }
        self.sender_wake.notify_one();
        true
    }

    /// Reads the jobs' status and last change, the jobs changed since they were loaded, and the groups
    /// when due; `None` when the database did not answer (the fires are counted as waiting for it).
    async fn read_for_check(&self, work: &CheckWork) -> Option<CheckRead> {
        let db = &self.db;
        let versions = self.answered(db.job_versions(&work.jobs).await, work.jobs.len())?;
        let versions: HashMap<i32, JobVersion> = versions.into_iter().map(|v| (v.id, v)).collect();
        // Loaded anew: jobs not loaded yet, or changed since they were.
        let stale: Vec<i32> = {
            let state = self.lock();
            versions
                .values()
                .filter(|v| {
                    state
                        .jobs
                        .get(&v.id)
                        .and_then(|e| e.job.as_ref())
                        .is_none_or(|j| j.update_time != v.update_time)
                })
                .map(|v| v.id)
                .collect()
        };
        let loaded = self.answered(db.load_jobs(&stale).await, stale.len())?;
        let groups = match self.groups_to_read(work, &loaded) {
            Some(ids) => Some(self.answered(load_groups(db, &ids).await, work.jobs.len())?),
            None => None,
        };
        Some(CheckRead { versions, loaded, groups })
    }

    /// The value of a read, or `None` when the database did not answer: its `fires` then wait for it.
    fn answered<T>(&self, read: Result<T, StorageError>, fires: usize) -> Option<T> {
        read.map_err(|e| self.context.counts.wait(fires as u64, self.context.clock.now_ms(), &e)).ok()
    }

    /// The groups of the checked jobs, when they are due to be read again or one of them is missing.
    fn groups_to_read(&self, work: &CheckWork, loaded: &[JobInfo]) -> Option<Vec<i32>> {
        let state = self.lock();
        let mut ids: HashSet<i32> = loaded.iter().map(|j| j.job_group).collect();
        let known = |id: &i32| state.jobs.get(id).and_then(|e| e.job.as_ref()).map(|j| j.job_group);
        ids.extend(work.jobs.iter().filter_map(known));
        let missing = ids.iter().any(|g| !state.groups.contains_key(g));
        (work.groups_due || missing).then(|| ids.into_iter().collect())
    }

    /// Stores what the check read and removes the fires the console cancelled, returned to be settled;
    /// `None` when the term ended meanwhile.
    fn apply_check(&self, work: &CheckWork, read: CheckRead) -> Option<Vec<Settled>> {
        let zone = self.db.zone();
        let mut state = self.lock();
        if state.term != work.term {
            return None;
        }
        if let Some(groups) = read.groups {
            state.groups.extend(groups);
            state.groups_loaded_ms = self.context.clock.now_ms();
        }
        for job in read.loaded {
            let id = job.id;
            state.jobs.entry(id).or_default().job = Some(Arc::new(job));
        }
        let mut cancellations = Vec::new();
        for &job_id in &work.jobs {
            let version = read.versions.get(&job_id);
            cancellations.extend(cancel_fires(&mut state, work, job_id, version, zone));
            if version.is_none() {
                state.jobs.remove(&job_id);
            }
        }
        state.checked_through = state.checked_through.max(work.through);
        Some(cancellations)
    }
}

/// Removes the fires of `job_id` the console cancelled: all of a stopped or deleted job, those a
/// rescheduled one no longer has (among the fires this check covers).
fn cancel_fires(
    state: &mut State,
    work: &CheckWork,
    job_id: i32,
    version: Option<&JobVersion>,
    zone: Zone,
) -> Vec<Settled> {
    let job = state.jobs.get(&job_id).and_then(|e| e.job.clone());
    let updated_ms = version.and_then(|v| v.update_time).map(|t| zone.to_epoch_ms(t));
    // The status just read, the rest of the job as loaded when it last changed.
    let current =
        version.zip(job.as_deref()).map(|(v, j)| JobInfo { trigger_status: v.trigger_status, ..j.clone() });
    let Some(entry) = state.jobs.get(&job_id) else { return Vec::new() };
    let verdicts: HashMap<i64, DropReason> = entry
        .fires
        .pending()
        .filter_map(|f| {
            let reason = cancelled(current.as_ref(), updated_ms, f.instant_ms, f.planned_at_ms, CRON_ZONE)?;
            let checked_now = f.release_ms > work.after && f.release_ms <= work.through;
            (reason != DropReason::Rescheduled || checked_now).then_some((f.log_id, reason))
        })
        .collect();
    let removed = state.remove_fires(job_id, |f| verdicts.contains_key(&f.log_id));
    removed
        .iter()
        .map(|f| Settled { log_id: f.log_id, reason: verdicts[&f.log_id], fire_once_now: false })
        .collect()
}
