//! The leader's planned fires, from the schedule pass to their `/run` (issues: failover without a lost
//! or doubled fire; performance round 2).
//!
//! Each planned fire goes through four steps, each for many fires at once:
//! 1. **Checked**, [`CHECK_AHEAD_MS`] before it is due: one read of the jobs' status and last change finds
//!    the fires the console cancelled (job stopped, deleted or rescheduled since the plan) and loads the
//!    jobs and groups the sends need, so sending waits for nothing.
//! 2. **Decided and prepared** [`PREPARE_AHEAD_MS`] before it is due, per job (see
//!    [`crate::domain::fires`]): the newest due fire of a job runs, older ones collapse into it; its
//!    address is chosen, its request built and a connection to the executor taken, and it is held.
//! 3. **Covered by the lease's watermark**, just before it is due (as long before as recent commits took,
//!    5 ms at least; on SQLite, 150 ms before): one statement raises the watermark to the fires about to
//!    go out (see `crate::domain::ownership`), so a successor never sends them again.
//! 4. **Written** when due and covered, after one more check of the decision. What a leader dying after
//!    the watermark leaves uncertain is only these writes, a few milliseconds for a second's fires.
//!
//! Fires not sent are settled in batches by a writer task: those the console cancelled lose their row,
//! the others get a result that says why.

use super::lease::{Leadership, Renewal};
use super::monitors::alarm_status;
use super::trigger::{expand, load_groups, new_rows, Groups, Lanes, TriggerContext};
use crate::domain::fires::{Fire, JobFires, Kind, Verdict};
use crate::domain::misfire::{cancelled, DropReason};
use crate::domain::ownership::PlanMarker;
use crate::domain::protocol::FAIL_CODE;
use crate::domain::schedule::{CronCache, MisfireStrategy, PRE_READ_MS};
use crate::domain::{TriggerRequest, TriggerType};
use crate::storage::{Db, JobInfo, JobVersion, PlannedRow};
use crate::time::{sleep_unless_cancelled, Zone, CRON_ZONE};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, Notify};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Fires are checked this long before they are due: time for one read of their jobs, while a console
/// change meanwhile is still seen (the check is the last look at the job before the `/run`).
const CHECK_AHEAD_MS: i64 = 30;
/// Fires due this much later than the first unchecked one are checked with it.
const CHECK_SPAN_MS: i64 = 20;
/// The watermark is raised ahead of the fires due, so that its commit does not make them late, over the
/// fires due within the span after them (one statement for them all). The fires it covers and that are
/// not sent yet are what a leader dying at that moment loses (a successor takes them for sent), so with
/// standbys it is raised as late as its commits allow: as long ahead as the slowest of the recent ones
/// took, and a little more, within these bounds...
const SERVER_COVER: CoverReach = CoverReach { least_ahead: 5, most_ahead: 50, span: 10 };
/// ...and on SQLite, whose one writer may be in a schedule pass's transaction (at most 10,000 fires) when
/// a second's fires come near, 150 ms: time for that transaction to end first. (No standby takes over
/// there; a crash is downtime, whose fires the restart settles by the misfire rule.)
const EMBEDDED_COVER: CoverReach = CoverReach { least_ahead: 150, most_ahead: 150, span: 50 };
/// Watermark commits remembered to time the next ones.
const COVER_TIMINGS_KEPT: usize = 8;
/// Room left after the slowest recent commit.
const COVER_SLACK_MS: i64 = 2;
/// Fires are decided and their requests prepared this long before they are due, ahead of the watermark,
/// so that once it is raised only the writes remain.
const PREPARE_AHEAD_MS: i64 = 20;
/// A prepared fire the watermark has not covered this long after it was due goes back to the pending
/// fires and is decided anew (late, perhaps collapsing or misfiring) once the watermark is raised.
const HOLD_MAX_MS: i64 = 1_000;
/// Groups are read again when older than this (executors register every 30 s).
const GROUPS_FRESH_MS: i64 = 1_000;
/// Pause before trying again when the database did not answer a check or a watermark.
const RETRY_PAUSE: Duration = Duration::from_millis(500);
/// Rows settled per statement.
const SETTLE_BATCH: usize = 1_000;

/// How far ahead of the fires the watermark is raised, at least and at most, and over what span after them.
#[derive(Debug, Clone, Copy)]
struct CoverReach {
    least_ahead: i64,
    most_ahead: i64,
    span: i64,
}

/// How long the latest watermark commits took.
#[derive(Default)]
struct CoverTimings {
    recent: std::collections::VecDeque<i64>,
}

impl CoverTimings {
    fn record(&mut self, took: Duration) {
        if self.recent.len() == COVER_TIMINGS_KEPT {
            self.recent.pop_front();
        }
        self.recent.push_back(took.as_millis().min(i64::MAX as u128) as i64);
    }

    /// How long before the fires due the next commit begins: when the slowest recent one would still
    /// end before they are due.
    fn ahead(&self, reach: CoverReach) -> i64 {
        let slowest = self.recent.iter().copied().max().unwrap_or(0);
        (slowest + COVER_SLACK_MS).clamp(reach.least_ahead, reach.most_ahead)
    }
}

/// What the dispatcher uses.
pub struct DispatchServices {
    pub db: Db,
    pub leadership: Leadership,
    pub context: Arc<TriggerContext>,
    pub lanes: Lanes,
}

/// The leader's planned fires; cheap to clone.
#[derive(Clone)]
pub struct Dispatcher {
    inner: Arc<Inner>,
}

struct Inner {
    db: Db,
    leadership: Leadership,
    context: Arc<TriggerContext>,
    lanes: Lanes,
    state: Mutex<State>,
    /// How far ahead of their release fires are covered by the watermark, and over what span.
    cover_reach: CoverReach,
    /// Fires were added, or a check, a watermark or a decision changed what is due next.
    checker_wake: Notify,
    cover_wake: Notify,
    sender_wake: Notify,
    /// The watermark was raised, or the term ended: prepared fires look again.
    cover_raised: Notify,
    settled: mpsc::UnboundedSender<Settled>,
}

/// A planned fire not sent, for the settlement writer.
struct Settled {
    log_id: i64,
    reason: DropReason,
    fire_once_now: bool,
}

#[derive(Default)]
struct State {
    /// The leadership term the fires belong to: fires of an earlier one were taken over by another admin.
    term: u64,
    jobs: HashMap<i32, Entry>,
    /// Every pending fire by (release, log id, job).
    timeline: BTreeSet<(i64, i64, i32)>,
    /// Fires released up to here are checked against the console, with their jobs and groups loaded.
    checked_through: i64,
    /// Fires released up to here are covered by the lease's watermark.
    covered_through: i64,
    /// Fires decided and prepared ahead of the watermark, by release: the watermark is raised over them.
    held: BTreeMap<i64, usize>,
    groups: Groups,
    groups_loaded_ms: i64,
    crons: CronCache,
}

/// A job with pending fires (or a compensation owed).
#[derive(Default)]
struct Entry {
    fires: JobFires,
    /// As loaded by the last check that found it changed (or new).
    job: Option<Arc<JobInfo>>,
}

impl Entry {
    fn fire_once_now(&self) -> bool {
        self.job.as_ref().is_some_and(|j| {
            MisfireStrategy::from_name(&j.misfire_strategy) == Some(MisfireStrategy::FireOnceNow)
        })
    }
}

/// The next instant of `job`'s schedule after `after_ms`; `None` when there is none (or no job).
fn schedule_next(crons: &mut CronCache, job: Option<&JobInfo>, after_ms: i64, zone: Zone) -> Option<i64> {
    let job = job?;
    crons.next_time(&job.schedule_type, job.schedule_conf.as_deref(), after_ms, zone).ok().flatten()
}

impl State {
    fn add(&mut self, job_id: i32, fire: Fire) {
        self.timeline.insert((fire.release_ms, fire.log_id, job_id));
        self.jobs.entry(job_id).or_default().fires.add(fire);
    }

    /// Removes every pending fire of `job_id` that `reject` rejects.
    fn remove_fires(&mut self, job_id: i32, reject: impl FnMut(&Fire) -> bool) -> Vec<Fire> {
        let Some(entry) = self.jobs.get_mut(&job_id) else { return Vec::new() };
        let removed = entry.fires.remove_where(reject);
        for fire in &removed {
            self.timeline.remove(&(fire.release_ms, fire.log_id, job_id));
        }
        removed
    }

    /// The jobs with fires released in `(after, through]`.
    fn jobs_between(&self, after: i64, through: i64) -> Vec<i32> {
        let mut jobs: Vec<i32> = self
            .timeline
            .range((after + 1, i64::MIN, i32::MIN)..=(through, i64::MAX, i32::MAX))
            .map(|e| e.2)
            .collect();
        jobs.sort_unstable();
        jobs.dedup();
        jobs
    }

    /// The release of the latest pending fire at or before `bound` and after `after`.
    fn last_release_between(&self, after: i64, bound: i64) -> Option<i64> {
        self.timeline
            .range((after + 1, i64::MIN, i32::MIN)..=(bound, i64::MAX, i32::MAX))
            .next_back()
            .map(|e| e.0)
    }

    fn first_release_after(&self, after: i64) -> Option<i64> {
        self.timeline.range((after + 1, i64::MIN, i32::MIN)..).next().map(|e| e.0)
    }

    /// The first release in `[from, through]` at which at least `fires` fires are due, pending or held.
    fn burst_between(&self, from: i64, through: i64, fires: usize) -> Option<i64> {
        // Held fires the watermark covers are with the lanes.
        let held_from = from.max(self.covered_through + 1);
        let mut counts: BTreeMap<i64, usize> = if held_from <= through {
            self.held.range(held_from..=through).map(|(r, n)| (*r, *n)).collect()
        } else {
            BTreeMap::new()
        };
        for (release, _, _) in self.timeline.range((from, i64::MIN, i32::MIN)..=(through, i64::MAX, i32::MAX))
        {
            *counts.entry(*release).or_default() += 1;
        }
        counts.into_iter().find(|(_, n)| *n >= fires).map(|(r, _)| r)
    }

    /// The first release past the watermark, of a pending fire or a held one.
    fn first_uncovered(&self) -> Option<i64> {
        let held = self.held.range(self.covered_through + 1..).next().map(|(release, _)| *release);
        self.first_release_after(self.covered_through).into_iter().chain(held).min()
    }

    /// Whether the watermark covers every fire due by `now`: fires due later may then be prepared ahead.
    fn cover_keeps_up(&self, now: i64) -> bool {
        self.first_uncovered().is_none_or(|first| first > now)
    }

    /// The last release past the watermark and at or before `bound`, and how many fires are released
    /// between the two.
    fn uncovered_through(&self, bound: i64) -> Option<(i64, usize)> {
        let after = self.covered_through;
        if bound <= after {
            return None;
        }
        let held = self.held.range(after + 1..=bound);
        let last_held = held.clone().next_back().map(|(release, _)| *release);
        let through = self.last_release_between(after, bound).into_iter().chain(last_held).max()?;
        let pending =
            self.timeline.range((after + 1, i64::MIN, i32::MIN)..=(through, i64::MAX, i32::MAX)).count();
        Some((through, pending + held.map(|(_, n)| n).sum::<usize>()))
    }
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

impl Dispatcher {
    /// Starts the checker, the sender and the settlement writer; they run until shutdown, the sender
    /// until it has sent or given up what it holds.
    pub fn start(
        services: DispatchServices,
        shutdown: CancellationToken,
    ) -> (Dispatcher, Vec<JoinHandle<()>>) {
        let DispatchServices { db, leadership, context, lanes } = services;
        let (settled, settled_rx) = mpsc::unbounded_channel();
        let inner = Arc::new(Inner {
            cover_reach: if db.is_sqlite() { EMBEDDED_COVER } else { SERVER_COVER },
            db: db.clone(),
            leadership,
            context: context.clone(),
            lanes,
            state: Mutex::default(),
            checker_wake: Notify::new(),
            cover_wake: Notify::new(),
            sender_wake: Notify::new(),
            cover_raised: Notify::new(),
            settled,
        });
        let tasks = vec![
            tokio::spawn(inner.clone().check_loop(shutdown.clone())),
            tokio::spawn(inner.clone().cover_loop(shutdown.clone())),
            tokio::spawn(inner.clone().send_loop(shutdown)),
            tokio::spawn(write_settlements(context, settled_rx)),
        ];
        (Dispatcher { inner }, tasks)
    }

    /// Begins term `term` with the fires a takeover found (released after the watermark `watermark_ms`,
    /// which the previous leader may have sent up to): the fires of any earlier term are dropped, as
    /// another admin took them over meanwhile.
    pub fn take_over(&self, term: u64, watermark_ms: i64, rows: Vec<(PlannedRow, PlanMarker)>) {
        {
            let mut state = self.inner.lock();
            let crons = std::mem::take(&mut state.crons);
            *state = State {
                term,
                checked_through: watermark_ms,
                covered_through: watermark_ms,
                crons,
                ..State::default()
            };
            for (row, marker) in rows {
                let kind = if marker.instant_ms == marker.release_ms { Kind::Regular } else { Kind::CatchUp };
                // Planned by the previous leader, at the earliest a window before its instant.
                let planned_at_ms = marker.instant_ms - PRE_READ_MS - 1_000;
                state.add(
                    row.job_id,
                    Fire {
                        log_id: row.id,
                        instant_ms: marker.instant_ms,
                        release_ms: marker.release_ms,
                        kind,
                        planned_at_ms,
                    },
                );
            }
        }
        self.inner.cover_raised.notify_waiters();
    }

    /// The first release in `[from, through]` of at least `fires` fires.
    pub fn burst_between(&self, from: i64, through: i64, fires: usize) -> Option<i64> {
        self.inner.lock().burst_between(from, through, fires)
    }

    /// Waits until the lanes have no trigger waiting for a permit, at most `limit`.
    pub async fn drained(&self, limit: Duration) {
        self.inner.lanes.drained(limit).await
    }

    /// Whether a burst of triggers is being sent.
    pub fn sending(&self) -> bool {
        self.inner.lanes.sending()
    }

    /// Looks at the fires at once (a term began).
    pub fn wake(&self) {
        self.inner.checker_wake.notify_one();
        self.inner.cover_wake.notify_one();
        self.inner.sender_wake.notify_one();
    }

    /// Adds the fires a pass of term `term` planned (`(job, fire)`); fires of an ended term are dropped
    /// (their rows are the new leader's).
    pub fn add(&self, term: u64, fires: Vec<(i32, Fire)>) {
        {
            let mut state = self.inner.lock();
            if state.term != term {
                return;
            }
            for (job_id, fire) in fires {
                state.add(job_id, fire);
            }
        }
        self.wake();
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether this admin still leads in `term`; if not, the fires of that term are dropped, except those
    /// prepared and covered by its watermark: no successor sends them.
    fn still_leads(&self, term: u64) -> bool {
        let now = self.leadership.term();
        let leads = now.leading && now.number == term;
        if !leads {
            let mut state = self.lock();
            if state.term == term {
                let crons = std::mem::take(&mut state.crons);
                *state = State { term, crons, covered_through: state.covered_through, ..State::default() };
            }
            drop(state);
            self.cover_raised.notify_waiters();
        }
        leads
    }

    async fn check_loop(self: Arc<Self>, shutdown: CancellationToken) {
        loop {
            let now = self.context.clock.now_ms();
            let (work, wake_at) = self.next_check(now);
            match work {
                Some(work) => {
                    if !self.check(work).await
                        && !sleep_unless_cancelled(&shutdown, RETRY_PAUSE).await
                        && self.is_idle()
                    {
                        return;
                    }
                }
                None => {
                    if shutdown.is_cancelled() && self.is_idle() {
                        return;
                    }
                    pause(&self.checker_wake, wake_at, now, &shutdown).await;
                }
            }
        }
    }

    fn is_idle(&self) -> bool {
        let state = self.lock();
        state.timeline.is_empty() && state.held.range(state.covered_through + 1..).next().is_none()
    }

    /// The next fires to check, or when to look again.
    fn next_check(&self, now: i64) -> (Option<CheckWork>, Option<i64>) {
        let state = self.lock();
        let term = self.leadership.term();
        if !term.leading || term.number != state.term {
            return (None, None);
        }
        let Some(first) = state.first_release_after(state.checked_through) else { return (None, None) };
        if first > now + CHECK_AHEAD_MS {
            return (None, Some(first - CHECK_AHEAD_MS));
        }
        let through = state
            .last_release_between(state.checked_through, first.max(now + CHECK_AHEAD_MS) + CHECK_SPAN_MS)
            .unwrap_or(first);
        let jobs = state.jobs_between(state.checked_through, through);
        let groups_due = now - state.groups_loaded_ms >= GROUPS_FRESH_MS;
        (Some(CheckWork { term: state.term, after: state.checked_through, through, jobs, groups_due }), None)
    }

    /// Checks the fires of `work` against the jobs as stored now: removes those the console cancelled and
    /// loads what their sends need. Returns false when the database did not answer (tried again later).
    async fn check(&self, work: CheckWork) -> bool {
        let db = &self.db;
        let versions: HashMap<i32, JobVersion> = match db.job_versions(&work.jobs).await {
            Ok(v) => v.into_iter().map(|v| (v.id, v)).collect(),
            Err(e) => {
                self.context.counts.wait(work.jobs.len() as u64, self.context.clock.now_ms(), &e);
                return false;
            }
        };
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
        let loaded = match db.load_jobs(&stale).await {
            Ok(jobs) => jobs,
            Err(e) => {
                self.context.counts.wait(stale.len() as u64, self.context.clock.now_ms(), &e);
                return false;
            }
        };
        let groups = {
            let state = self.lock();
            let mut ids: HashSet<i32> = loaded.iter().map(|j| j.job_group).collect();
            let known = |id: &i32| state.jobs.get(id).and_then(|e| e.job.as_ref()).map(|j| j.job_group);
            ids.extend(work.jobs.iter().filter_map(known));
            let missing = ids.iter().any(|g| !state.groups.contains_key(g));
            (work.groups_due || missing).then(|| ids.into_iter().collect::<Vec<_>>())
        };
        let groups = match groups {
            Some(ids) => match load_groups(db, &ids).await {
                Ok(groups) => Some(groups),
                Err(e) => {
                    self.context.counts.wait(work.jobs.len() as u64, self.context.clock.now_ms(), &e);
                    return false;
                }
            },
            None => None,
        };
        let zone = db.zone();
        let mut cancellations = Vec::new();
        {
            let mut state = self.lock();
            if state.term != work.term {
                return true;
            }
            if let Some(groups) = groups {
                state.groups.extend(groups);
                state.groups_loaded_ms = self.context.clock.now_ms();
            }
            for job in loaded {
                let id = job.id;
                state.jobs.entry(id).or_default().job = Some(Arc::new(job));
            }
            for &job_id in &work.jobs {
                let version = versions.get(&job_id);
                let job = state.jobs.get(&job_id).and_then(|e| e.job.clone());
                let updated_ms = version.and_then(|v| v.update_time).map(|t| zone.to_epoch_ms(t));
                // The status just read, the rest of the job as loaded when it last changed.
                let current = version
                    .zip(job.as_deref())
                    .map(|(v, j)| JobInfo { trigger_status: v.trigger_status, ..j.clone() });
                let Some(entry) = state.jobs.get(&job_id) else { continue };
                // A stopped or deleted job sends none of its fires; a rescheduled one none it no longer has.
                let verdicts: HashMap<i64, DropReason> = entry
                    .fires
                    .pending()
                    .filter_map(|f| {
                        let reason = cancelled(
                            current.as_ref(),
                            updated_ms,
                            f.instant_ms,
                            f.planned_at_ms,
                            CRON_ZONE,
                        )?;
                        let checked_now = f.release_ms > work.after && f.release_ms <= work.through;
                        (reason != DropReason::Rescheduled || checked_now).then_some((f.log_id, reason))
                    })
                    .collect();
                let removed = state.remove_fires(job_id, |f| verdicts.contains_key(&f.log_id));
                cancellations.extend(removed.iter().map(|f| Settled {
                    log_id: f.log_id,
                    reason: verdicts[&f.log_id],
                    fire_once_now: false,
                }));
                if version.is_none() {
                    state.jobs.remove(&job_id);
                }
            }
            state.checked_through = state.checked_through.max(work.through);
        }
        for settled in cancellations {
            let _ = self.settled.send(settled);
        }
        self.sender_wake.notify_one();
        true
    }

    /// Raises the lease's watermark over the fires due within the cover's reach, ahead of their sends.
    async fn cover_loop(self: Arc<Self>, shutdown: CancellationToken) {
        let mut timings = CoverTimings::default();
        let span = self.cover_reach.span;
        loop {
            let ahead = timings.ahead(self.cover_reach);
            let term = self.lock().term;
            let now = self.context.clock.now_ms();
            let (cover, wake_at) = {
                let state = self.lock();
                match state.first_uncovered() {
                    Some(first) if first <= now + ahead => {
                        (state.uncovered_through(first.max(now + ahead) + span), None)
                    }
                    first => (None, first.map(|f| f - ahead)),
                }
            };
            let Some((through, fires)) = cover else {
                if shutdown.is_cancelled() && self.is_idle() {
                    return;
                }
                pause(&self.cover_wake, wake_at, now, &shutdown).await;
                continue;
            };
            let started = std::time::Instant::now();
            let advanced = self.leadership.advance(through).await;
            if matches!(advanced, Ok(Renewal::Renewed)) {
                timings.record(started.elapsed());
            }
            match advanced {
                Ok(Renewal::Renewed) => {
                    let mut state = self.lock();
                    if state.term == term {
                        state.covered_through = state.covered_through.max(through);
                        state.held = state.held.split_off(&(through + 1));
                    }
                    drop(state);
                    self.cover_raised.notify_waiters();
                    self.sender_wake.notify_one();
                }
                Ok(Renewal::Deposed | Renewal::NotLeading) => {
                    self.still_leads(term);
                    if shutdown.is_cancelled() {
                        return;
                    }
                }
                Err(e) => {
                    self.context.counts.wait(fires as u64, now, &e);
                    if !sleep_unless_cancelled(&shutdown, RETRY_PAUSE).await && self.is_idle() {
                        return;
                    }
                }
            }
        }
    }

    async fn send_loop(self: Arc<Self>, shutdown: CancellationToken) {
        loop {
            let term = self.lock().term;
            let now = self.context.clock.now_ms();
            let next = self.send_due(term, now);
            if shutdown.is_cancelled() && (self.is_idle() || !self.still_leads(term)) {
                return;
            }
            pause(&self.sender_wake, next, now, &shutdown).await;
        }
    }

    /// Decides the fires due by `now` and covered, and, while the watermark keeps up, those due within
    /// [`PREPARE_AHEAD_MS`]; sends them on their way (held until due and covered). Returns when to look
    /// again.
    fn send_due(self: &Arc<Self>, term: u64, now: i64) -> Option<i64> {
        let mut sends = Vec::new();
        let reserved;
        let mut settled = Vec::new();
        let next = {
            let mut state = self.lock();
            if state.term != term {
                return None;
            }
            let due_through = decide_through(&state, now);
            let decided_at = now.max(due_through);
            let jobs = state.jobs_between(i64::MIN, due_through);
            let State { jobs: entries, timeline, crons, groups, held, .. } = &mut *state;
            // Counted from the moment they leave the timeline until they are with their lanes: a schedule
            // pass making way for the burst sees them all along.
            reserved = (!jobs.is_empty()).then(|| self.lanes.reserve(jobs.len()));
            for job_id in jobs {
                let Some(entry) = entries.get_mut(&job_id) else { continue };
                let fire_once_now = entry.fire_once_now();
                let job = entry.job.clone();
                let mut next = |after| schedule_next(crons, job.as_deref(), after, CRON_ZONE);
                for (fire, verdict) in entry.fires.decide(decided_at, due_through, fire_once_now, &mut next) {
                    timeline.remove(&(fire.release_ms, fire.log_id, job_id));
                    match verdict {
                        Verdict::Send { compensation } => match &job {
                            Some(job) => {
                                *held.entry(fire.release_ms).or_default() += 1;
                                sends.push((
                                    job.clone(),
                                    groups.get(&job.job_group).cloned(),
                                    fire,
                                    compensation,
                                ));
                            }
                            None => settled.push(Settled {
                                log_id: fire.log_id,
                                reason: DropReason::Deleted,
                                fire_once_now,
                            }),
                        },
                        Verdict::Collapsed => settled.push(Settled {
                            log_id: fire.log_id,
                            reason: DropReason::Collapsed,
                            fire_once_now,
                        }),
                        Verdict::Misfired => settled.push(Settled {
                            log_id: fire.log_id,
                            reason: DropReason::Misfire,
                            fire_once_now,
                        }),
                    }
                }
            }
            next_wake(&state, now)
        };
        for s in settled {
            let _ = self.settled.send(s);
        }
        for (job, group, fire, compensation) in sends {
            self.send(term, job, group, fire, compensation, now);
        }
        drop(reserved);
        next
    }

    /// Sends one decided fire: its planned row serves the first (or only) trigger; a sharding broadcast's
    /// other shards get rows of their own.
    fn send(
        self: &Arc<Self>,
        term: u64,
        job: Arc<JobInfo>,
        group: Option<(Arc<crate::storage::JobGroup>, Arc<Vec<String>>)>,
        fire: Fire,
        compensation: bool,
        now: i64,
    ) {
        let kind = if compensation { TriggerType::Misfire } else { TriggerType::Cron };
        let job_id = job.id;
        let request = TriggerRequest::of_job(job.id, kind);
        let mut shards = expand(&request, job, group.as_ref()).into_iter();
        let Some(first) = shards.next() else { return };
        let sent_at = now.max(fire.release_ms);
        let first = first.into_shard(fire.log_id, sent_at, Some(fire.instant_ms));
        let release = Box::pin(self.clone().hold(term, job_id, fire, compensation));
        self.lanes.spawn(self.context.clone(), first, Some(release));
        let others: Vec<_> = shards.collect();
        if others.is_empty() {
            return;
        }
        let me = self.clone();
        tokio::spawn(async move {
            sleep_until(&*me.context.clock, fire.release_ms).await;
            let now = me.context.clock.now_ms();
            let rows = new_rows(&others, now);
            match me.db.insert_rows(&rows).await {
                Ok(ids) => {
                    for (pending, log_id) in others.into_iter().zip(ids) {
                        me.lanes.spawn(
                            me.context.clone(),
                            pending.into_shard(log_id, now, Some(fire.instant_ms)),
                            None,
                        );
                    }
                }
                Err(e) => tracing::error!(
                    job_id,
                    "the other shards of a broadcast not sent, their rows not written: {e}"
                ),
            }
        });
    }

    /// Holds a prepared fire until it is due and covered by the watermark, then makes the last check;
    /// false when it is not to be written.
    async fn hold(self: Arc<Self>, term: u64, job_id: i32, fire: Fire, compensation: bool) -> bool {
        sleep_until(&*self.context.clock, fire.release_ms).await;
        loop {
            let raised = self.cover_raised.notified();
            tokio::pin!(raised);
            raised.as_mut().enable();
            let now = self.context.clock.now_ms();
            match self.cover_of(term, fire.release_ms) {
                Some(true) => break,
                // The term ended before the watermark covered the fire: its successor sends it.
                None => return false,
                Some(false) if now >= fire.release_ms + HOLD_MAX_MS => {
                    self.put_back(term, job_id, fire, compensation);
                    return false;
                }
                Some(false) => {
                    let _ = tokio::time::timeout(
                        Duration::from_millis((fire.release_ms + HOLD_MAX_MS - now) as u64),
                        raised,
                    )
                    .await;
                }
            }
        }
        self.still_wanted(term, job_id, &fire, compensation)
    }

    /// Whether the watermark of `term` covers a fire released at `release_ms`; `None` when that term
    /// ended without covering it.
    fn cover_of(&self, term: u64, release_ms: i64) -> Option<bool> {
        let state = self.lock();
        if state.term == term && state.covered_through >= release_ms {
            return Some(true);
        }
        let now = self.leadership.term();
        (state.term == term && now.leading && now.number == term).then_some(false)
    }

    /// A held fire whose watermark did not come goes back to be decided anew once it does.
    fn put_back(&self, term: u64, job_id: i32, fire: Fire, compensation: bool) {
        let mut state = self.lock();
        if state.term != term {
            return;
        }
        state.timeline.insert((fire.release_ms, fire.log_id, job_id));
        state.jobs.entry(job_id).or_default().fires.put_back(fire, compensation);
        drop(state);
        self.cover_wake.notify_one();
        self.sender_wake.notify_one();
    }

    /// The last check of a decided fire, once it is due and covered: it still goes out unless the job's
    /// next fire has come within the margin meanwhile (it then collapses into that one).
    fn still_wanted(&self, term: u64, job_id: i32, fire: &Fire, compensation: bool) -> bool {
        let now = self.context.clock.now_ms();
        let mut state = self.lock();
        if state.term != term {
            // The term ended after the watermark covered this fire: no other admin sends it.
            return true;
        }
        let State { jobs, crons, .. } = &mut *state;
        let Some(entry) = jobs.get_mut(&job_id) else { return true };
        let job = entry.job.clone();
        let mut next = |after| schedule_next(crons, job.as_deref(), after, CRON_ZONE);
        if entry.fires.still_sendable(fire, now, &mut next) {
            return true;
        }
        let fire_once_now = entry.fire_once_now();
        entry.fires.give_up(fire, compensation, now, fire_once_now);
        drop(state);
        let _ =
            self.settled.send(Settled { log_id: fire.log_id, reason: DropReason::Collapsed, fire_once_now });
        false
    }
}

/// Waits until `wake_at` (at most a second from `now`), a wake-up on `wake`, or the stop signal.
async fn pause(wake: &Notify, wake_at: Option<i64>, now: i64, shutdown: &CancellationToken) {
    let wait =
        wake_at.map_or(Duration::from_secs(1), |at| Duration::from_millis((at - now).clamp(1, 1_000) as u64));
    tokio::select! {
        _ = tokio::time::sleep(wait) => {}
        _ = wake.notified() => {}
        _ = shutdown.cancelled(), if !shutdown.is_cancelled() => {}
    }
}

/// The fires to decide at `now` are those released up to here: the checked fires due by now and covered
/// by the watermark, and while the watermark keeps up (it covers everything due by now), those due within
/// [`PREPARE_AHEAD_MS`] as well. When it lags (the database is slow or away), fires wait for it undecided,
/// so that they are decided when they can go out.
fn decide_through(state: &State, now: i64) -> i64 {
    let through =
        if state.cover_keeps_up(now) { now + PREPARE_AHEAD_MS } else { now.min(state.covered_through) };
    through.min(state.checked_through)
}

/// When the sender has something to do next: decide the first pending fire; `None` while it waits for
/// the checker or the watermark (which wake it).
fn next_wake(state: &State, now: i64) -> Option<i64> {
    let first = state.timeline.first()?.0;
    if first > state.checked_through {
        return None;
    }
    if state.cover_keeps_up(now) {
        Some(first - PREPARE_AHEAD_MS)
    } else {
        (first <= state.covered_through).then_some(first)
    }
}

/// Sleeps until `at_ms` on `clock`.
async fn sleep_until(clock: &dyn crate::time::Clock, at_ms: i64) {
    let wait = at_ms - clock.now_ms();
    if wait > 0 {
        tokio::time::sleep(Duration::from_millis(wait as u64)).await;
    }
}

/// Writes what becomes of the fires not sent, many rows per statement: cancelled fires lose their rows,
/// the others get a result that says why (`alarm_status` 1: nothing to retry or alarm about). Each is
/// counted in the log and the metrics.
async fn write_settlements(context: Arc<TriggerContext>, mut settled: mpsc::UnboundedReceiver<Settled>) {
    let mut batch = Vec::with_capacity(SETTLE_BATCH);
    while settled.recv_many(&mut batch, SETTLE_BATCH).await > 0 {
        let now = context.clock.now_ms();
        for reason in DropReason::ALL {
            let ids: Vec<i64> = batch.iter().filter(|s| s.reason == reason).map(|s| s.log_id).collect();
            if ids.is_empty() {
                continue;
            }
            let written = if reason.is_cancellation() {
                context.db.delete_unsent_logs(&ids).await.map(drop)
            } else {
                let key = if reason == DropReason::Collapsed {
                    "joblog_skipped_collapsed"
                } else {
                    "joblog_skipped_misfire"
                };
                context
                    .db
                    .settle_unsent(&ids, FAIL_CODE, context.i18n.get(key), alarm_status::NOT_NEEDED)
                    .await
                    .map(drop)
            };
            if let Err(e) = written {
                // Left for the lost-result sweep, which settles them with a message.
                tracing::warn!(
                    "{} fire(s) not sent ({}) left to the lost-result sweep: {e}",
                    ids.len(),
                    reason.label()
                );
            }
            context.counts.drop_fires(reason, ids.len() as u64, now);
            if !reason.is_cancellation() {
                let fire_once_now =
                    batch.iter().filter(|s| s.reason == reason && s.fire_once_now).count() as u64;
                let counted_as = if reason == DropReason::Collapsed { "collapsed" } else { "at_release" };
                context.metrics.misfires_settled("FIRE_ONCE_NOW", counted_as, fire_once_now);
                context.metrics.misfires_settled("DO_NOTHING", counted_as, ids.len() as u64 - fire_once_now);
            }
        }
        batch.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watermark_is_raised_as_far_ahead_as_the_slowest_recent_commit_needs() {
        let mut timings = CoverTimings::default();
        assert_eq!(timings.ahead(SERVER_COVER), 5, "nothing measured yet: the least");
        timings.record(Duration::from_millis(1));
        assert_eq!(timings.ahead(SERVER_COVER), 5);
        timings.record(Duration::from_millis(12));
        assert_eq!(timings.ahead(SERVER_COVER), 14, "the slowest and the slack");
        timings.record(Duration::from_secs(3));
        assert_eq!(timings.ahead(SERVER_COVER), 50, "at most");
        for _ in 0..COVER_TIMINGS_KEPT {
            timings.record(Duration::from_millis(2));
        }
        assert_eq!(timings.ahead(SERVER_COVER), 5, "a slow commit is forgotten after the next ones");
        assert_eq!(timings.ahead(EMBEDDED_COVER), 150);
    }

    #[test]
    fn a_burst_is_a_release_of_many_fires_pending_or_held_and_not_yet_covered() {
        let mut state = State::default();
        let fire = |log_id, release_ms| Fire {
            log_id,
            instant_ms: release_ms,
            release_ms,
            kind: Kind::Regular,
            planned_at_ms: 0,
        };
        for job in 0..3 {
            state.add(job, fire(i64::from(job), 1_000));
            state.add(job, fire(10 + i64::from(job), 2_000));
        }
        state.add(9, fire(20, 1_500));
        assert_eq!(state.burst_between(0, 5_000, 3), Some(1_000));
        assert_eq!(state.burst_between(1_001, 5_000, 3), Some(2_000));
        assert_eq!(state.burst_between(0, 5_000, 4), None, "no release has four");
        assert_eq!(state.burst_between(1_001, 1_999, 1), Some(1_500));
        // Decided and held: still to come until the watermark covers them (they are with the lanes then).
        state.held.insert(3_000, 5);
        assert_eq!(state.burst_between(2_001, 5_000, 5), Some(3_000));
        state.covered_through = 3_000;
        assert_eq!(state.burst_between(2_001, 5_000, 1), None);
    }
}
