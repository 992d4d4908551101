//! The workflow engine: runs of workflow definitions, each node run an ordinary xxl_job_log row.
//!
//! Nothing of a run lives only in memory. A run advances by *reconciling* it: read its stored state,
//! decide what follows (`crate::domain::workflow::readiness`), and write each step as a compare-and-set
//! (`crate::storage` `workflow_engine`). Any admin may reconcile any run at any time, as often as it likes:
//! two admins deciding the same step both try, one wins. So a crash between two steps heals at the next
//! reconcile, and a callback that reaches another admin (or a Java admin, which only writes the log row)
//! still advances its run.
//!
//! A run is reconciled when something happens to it: a callback finishing one of its log rows (fast path,
//! on the admin that took the callback), an operation, its start. The leader also sweeps every active run
//! each second: the slow path that finds what no event announced (a trigger that failed, a result written
//! by a Java admin, a retry or timeout come due, a crashed admin's half-done step) and fires scheduled
//! workflows.

mod alarm;
mod node_operations;
mod outcome;
mod progress;
mod reconcile;
mod schedule;
mod send;
mod snapshot;

pub mod operations;

use crate::alarm::Alarms;
use crate::domain::workflow::model::Definition;
use crate::executor::ExecutorClient;
use crate::i18n::I18n;
use crate::metrics::Metrics;
use crate::scheduler::lease::Leadership;
use crate::scheduler::trigger::{Lanes, TriggerContext};
use crate::storage::{Db, StorageError};
use crate::time::Clock;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often the leader sweeps the active runs and the workflow schedules.
const SWEEP_EVERY: Duration = Duration::from_secs(1);
/// A run this admin reconciled more recently is left out of a sweep: events (callbacks, operations, the
/// timers of retries, timeouts and deadlines) bring it back sooner; the sweep is for what no event told.
const SWEEP_QUIET: Duration = Duration::from_secs(3);
/// How often an admin that has not seen the workflow tables looks again.
const TABLES_RECHECK: Duration = Duration::from_secs(10);
/// Reconcile passes of one run in a row (each one applies what the previous decided).
const MAX_PASSES: usize = 16;
/// Runs reconciled at once on one admin: each pass takes a database connection or two, and a thousand
/// runs woken together must not take every connection from callbacks and the schedule.
const RECONCILING_AT_ONCE: usize = 8;
/// Runs the sweep looks at in one go.
const SWEEP_RUNS: i64 = 10_000;
/// Definitions kept parsed; versions are immutable, so an entry never goes stale.
const CACHED_DEFINITIONS: usize = 1_000;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error("workflow {workflow_id} version {version} is missing or unreadable: {reason}")]
    Definition { workflow_id: i64, version: i32, reason: String },
}

pub type Result<T> = std::result::Result<T, EngineError>;

/// The engine's handle; cheap to clone.
#[derive(Clone)]
pub struct Workflows {
    inner: Arc<Inner>,
}

/// What reconciling needs.
pub struct EngineServices {
    pub db: Db,
    pub i18n: I18n,
    pub clock: Arc<dyn Clock>,
    pub executors: ExecutorClient,
    /// Where node triggers go: the same context and lanes as every other trigger.
    pub sending: (Arc<TriggerContext>, Lanes),
    pub metrics: Arc<Metrics>,
    /// Where a failed run's and a passed deadline's alarms go.
    pub alarms: Alarms,
}

struct Inner {
    services: EngineServices,
    /// Runs being reconciled on this admin; `true` when asked again meanwhile (one more round follows).
    busy: Mutex<HashMap<i64, bool>>,
    /// Permits for [`RECONCILING_AT_ONCE`] runs.
    reconciling: tokio::sync::Semaphore,
    /// When this admin last finished reconciling each run (entries of finished runs are dropped by the
    /// sweep).
    reconciled: Mutex<HashMap<i64, tokio::time::Instant>>,
    definitions: Mutex<HashMap<(i64, i32), Arc<Definition>>>,
    /// Runs whose deadline has a timer on this admin (each leaves when its timer fires).
    deadline_timers: Mutex<HashSet<i64>>,
    /// When the workflow tables were last found missing; `None` once found (the database handle
    /// remembers that they exist) or before the first look.
    tables_missing_at: Mutex<Option<tokio::time::Instant>>,
    stopped: CancellationToken,
}

impl Workflows {
    pub fn new(services: EngineServices) -> Workflows {
        Workflows {
            inner: Arc::new(Inner {
                services,
                busy: Mutex::default(),
                reconciling: tokio::sync::Semaphore::new(RECONCILING_AT_ONCE),
                reconciled: Mutex::default(),
                definitions: Mutex::default(),
                deadline_timers: Mutex::default(),
                tables_missing_at: Mutex::default(),
                stopped: CancellationToken::new(),
            }),
        }
    }

    fn services(&self) -> &EngineServices {
        &self.inner.services
    }

    /// Reconciles a run now, in the background; a run being reconciled gets one more round after.
    pub fn wake(&self, run_id: i64) {
        if self.inner.stopped.is_cancelled() {
            return;
        }
        {
            let mut busy = lock(&self.inner.busy);
            if let Some(again) = busy.get_mut(&run_id) {
                *again = true;
                return;
            }
            busy.insert(run_id, false);
        }
        let this = self.clone();
        tokio::spawn(async move { this.reconcile_while_asked(run_id).await });
    }

    async fn reconcile_while_asked(&self, run_id: i64) {
        loop {
            // The semaphore is never closed: `None` cannot happen, and would only lift the bound.
            let permit = self.inner.reconciling.acquire().await.ok();
            let outcome = self.reconcile(run_id).await;
            drop(permit);
            if let Err(e) = outcome {
                tracing::warn!(run_id, "workflow run not advanced this time (the sweep tries again): {e}");
            }
            lock(&self.inner.reconciled).insert(run_id, tokio::time::Instant::now());
            let mut busy = lock(&self.inner.busy);
            match busy.get_mut(&run_id) {
                Some(again) if *again => *again = false,
                _ => {
                    busy.remove(&run_id);
                    return;
                }
            }
        }
    }

    /// Reconciles a run at its deadline; one timer per run on this admin.
    fn wake_at_deadline(&self, run_id: i64, deadline_ms: i64) {
        if !lock(&self.inner.deadline_timers).insert(run_id) {
            return;
        }
        let wait = Duration::from_millis((deadline_ms - self.services().clock.now_ms()).max(0) as u64);
        let this = self.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = this.inner.stopped.cancelled() => return,
            }
            lock(&this.inner.deadline_timers).remove(&run_id);
            this.wake(run_id);
        });
    }

    /// Reconciles a run at `at_ms` (a retry or timeout come due, a deadline): sooner than a sweep would.
    fn wake_at(&self, run_id: i64, at_ms: i64) {
        let wait = at_ms - self.services().clock.now_ms();
        let this = self.clone();
        tokio::spawn(async move {
            if wait > 0 {
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(wait as u64)) => {}
                    _ = this.inner.stopped.cancelled() => return,
                }
            }
            this.wake(run_id);
        });
    }

    /// Told by the completer which log rows just got their result: their runs, if any, advance.
    pub fn finished_logs(&self, log_ids: Vec<i64>) {
        // Every callback comes here: on a database without workflows, it costs no task.
        if log_ids.is_empty() || self.inner.stopped.is_cancelled() || self.tables_missing_lately() {
            return;
        }
        let this = self.clone();
        tokio::spawn(async move {
            match this.tables_exist().await {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => return tracing::warn!("workflow runs of finished logs not looked up: {e}"),
            }
            match this.services().db.runs_of_logs(&log_ids).await {
                Ok(found) => {
                    let mut runs: Vec<i64> = found.into_iter().map(|(_, run)| run).collect();
                    runs.sort_unstable();
                    runs.dedup();
                    for run in runs {
                        this.wake(run);
                    }
                }
                Err(e) => {
                    tracing::warn!("workflow runs of finished logs not looked up (the sweep will): {e}")
                }
            }
        });
    }

    /// Whether the workflow tables were found missing less than [`TABLES_RECHECK`] ago.
    fn tables_missing_lately(&self) -> bool {
        lock(&self.inner.tables_missing_at).is_some_and(|at| at.elapsed() < TABLES_RECHECK)
    }

    /// Whether the workflow tables exist, for the sweep and callbacks: while they do not, the database is
    /// asked at most every [`TABLES_RECHECK`] (a database where no workflow was saved never gets them
    /// from us).
    async fn tables_exist(&self) -> Result<bool> {
        if self.tables_missing_lately() {
            return Ok(false);
        }
        self.tables_exist_now().await
    }

    /// Whether the workflow tables exist, asked now unless they were found already: for requests, which
    /// must see a workflow another admin saved a moment ago.
    async fn tables_exist_now(&self) -> Result<bool> {
        let exist = self.services().db.extension_tables_present().await?;
        *lock(&self.inner.tables_missing_at) = (!exist).then(tokio::time::Instant::now);
        Ok(exist)
    }

    /// A version's definition, parsed once.
    async fn definition(&self, workflow_id: i64, version: i32) -> Result<Arc<Definition>> {
        if let Some(found) = lock(&self.inner.definitions).get(&(workflow_id, version)) {
            return Ok(found.clone());
        }
        let missing = |reason: String| EngineError::Definition { workflow_id, version, reason };
        let stored = self
            .services()
            .db
            .load_workflow_version(workflow_id, version)
            .await?
            .ok_or_else(|| missing("no such version".into()))?;
        let parsed: Definition =
            serde_json::from_str(&stored.definition).map_err(|e| missing(e.to_string()))?;
        let parsed = Arc::new(parsed);
        let mut cache = lock(&self.inner.definitions);
        if cache.len() >= CACHED_DEFINITIONS {
            cache.clear();
        }
        cache.insert((workflow_id, version), parsed.clone());
        Ok(parsed)
    }

    /// The leader's sweep, every [`SWEEP_EVERY`] until `shutdown`: active runs reconciled, queued runs
    /// promoted, scheduled workflows fired.
    pub async fn run(self, leadership: Leadership, shutdown: CancellationToken) {
        let mut tick = tokio::time::interval(SWEEP_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = shutdown.cancelled() => break,
            }
            if !leadership.term().leading {
                continue;
            }
            if let Err(e) = self.sweep().await {
                tracing::warn!("workflow sweep failed (tried again in {SWEEP_EVERY:?}): {e}");
            }
        }
        self.inner.stopped.cancel();
    }

    async fn sweep(&self) -> Result<()> {
        if !self.tables_exist().await? {
            return Ok(());
        }
        self.fire_due().await?;
        let runs = self.services().db.active_runs(SWEEP_RUNS).await?;
        let quiet: HashSet<i64> = {
            let mut reconciled = lock(&self.inner.reconciled);
            let active: HashSet<i64> = runs.iter().map(|r| r.id).collect();
            reconciled.retain(|id, _| active.contains(id));
            reconciled.iter().filter(|(_, at)| at.elapsed() < SWEEP_QUIET).map(|(id, _)| *id).collect()
        };
        let mut queued_workflows: Vec<(i64, i64)> = Vec::new();
        let mut backfills: Vec<i64> = Vec::new();
        for run in runs {
            let recent = quiet.contains(&run.id);
            match (run.state.as_str(), run.backfill_id) {
                ("queued", Some(backfill)) => backfills.push(backfill),
                ("queued", None) => {
                    if !queued_workflows.iter().any(|(w, _)| *w == run.workflow_id) {
                        queued_workflows.push((run.workflow_id, run.id));
                    }
                }
                _ if recent => {}
                _ => self.wake(run.id),
            }
        }
        for (workflow_id, run_id) in queued_workflows {
            self.promote(workflow_id, run_id).await?;
        }
        backfills.sort_unstable();
        backfills.dedup();
        for backfill in backfills {
            self.promote_backfill(backfill).await?;
        }
        Ok(())
    }

    /// Starts the queued runs of a workflow that have room now; `run_id` is one of them, whose version
    /// says the limits (versions of one workflow share a queue).
    async fn promote(&self, workflow_id: i64, run_id: i64) -> Result<()> {
        let Some(run) = self.services().db.load_run(run_id).await? else { return Ok(()) };
        let def = self.definition(workflow_id, run.version).await?;
        let now = self.services().clock.now_ms();
        let promoted =
            self.services().db.promote_queued_runs(workflow_id, def.concurrency.max_runs, now).await?;
        for id in promoted {
            self.wake(id);
        }
        Ok(())
    }

    /// Starts the queued runs of a backfill that have room now (and finishes a backfill with none left).
    async fn promote_backfill(&self, backfill: i64) -> Result<()> {
        let now = self.services().clock.now_ms();
        for id in self.services().db.promote_backfill(backfill, now).await? {
            self.wake(id);
        }
        Ok(())
    }
}

/// The engine's maps stay consistent whatever panicked while holding them (each change is one insert or
/// remove), so a poisoned lock is used as it is.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
