//! The leader's planned fires, from the schedule pass to their `/run` (issues: failover without a lost
//! or doubled fire; performance round 2).
//!
//! Each planned fire goes through four steps, each for many fires at once:
//! 1. **Checked** ([`check`]), [`check::CHECK_AHEAD_MS`] before it is due: one read of the jobs' status and
//!    last change finds the fires the console cancelled (job stopped, deleted or rescheduled since the
//!    plan) and loads the jobs and groups the sends need, so sending waits for nothing.
//! 2. **Decided and prepared** ([`send`]) [`send::PREPARE_AHEAD_MS`] before it is due, per job (see
//!    [`crate::domain::fires`]): the newest due fire of a job runs, older ones collapse into it; its
//!    address is chosen, its request built and a connection to the executor taken, and it is held.
//! 3. **Covered by the lease's watermark** ([`cover`]), just before it is due (as long before as recent
//!    commits took, 5 ms at least; on SQLite, 150 ms before): one statement raises the watermark to the
//!    fires about to go out (see `crate::domain::ownership`), so a successor never sends them again.
//! 4. **Written** ([`hold`]) when due and covered, after one more check of the decision right before the
//!    write, once its connection is taken. What a leader dying after the watermark leaves uncertain is
//!    only these writes, a few milliseconds for a second's fires.
//!
//! Fires not sent are settled in batches by a writer task ([`settle`]): those the console cancelled lose
//! their row, the others get a result that says why. What the steps share, the fires of the term and
//! their timeline, is in [`state`].

mod check;
mod cover;
mod hold;
mod send;
mod settle;
mod state;

use super::lease::Leadership;
use super::trigger::{Lanes, TriggerContext};
use crate::domain::fires::{Fire, Kind};
use crate::domain::ownership::PlanMarker;
use crate::domain::schedule::PRE_READ_MS;
use crate::storage::{Db, PlannedRow};
use cover::{CoverReach, EMBEDDED_COVER, SERVER_COVER};
use settle::{write_settlements, Settled};
use state::State;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, Notify};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Pause before trying again when the database did not answer a check or a watermark.
const RETRY_PAUSE: Duration = Duration::from_millis(500);

/// A planned fire of job `job_id`, as a schedule pass hands it on.
pub struct JobFire {
    pub job_id: i32,
    pub fire: Fire,
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
    /// The election has ended (a stop): no term begins any more. Until then a stopping admin may still
    /// take a plan over (its standby's take was under way when the stop came), and must send it.
    elections_over: AtomicBool,
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
            elections_over: AtomicBool::new(false),
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

    /// No term begins any more: once stopping and idle, the checker, the watermark and the sender end.
    pub fn elections_over(&self) {
        self.inner.elections_over.store(true, Ordering::Release);
        self.wake();
    }

    /// Adds the fires a pass of term `term` planned; fires of an ended term are dropped (their rows are
    /// the new leader's).
    pub fn add(&self, term: u64, fires: Vec<JobFire>) {
        {
            let mut state = self.inner.lock();
            if state.term != term {
                return;
            }
            for JobFire { job_id, fire } in fires {
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

    fn is_idle(&self) -> bool {
        self.lock().is_idle()
    }

    /// Whether a stopping dispatcher may end: no term begins any more, and none of its fires is left.
    fn may_end(&self, shutdown: &CancellationToken) -> bool {
        shutdown.is_cancelled() && self.terms_over() && self.is_idle()
    }

    fn terms_over(&self) -> bool {
        self.elections_over.load(Ordering::Acquire)
    }
}

/// What the checker or the watermark does next: the work at hand, or when to look again (`None`: when
/// woken).
enum Next<T> {
    Work(T),
    WakeAt(Option<i64>),
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

/// Sleeps until `at_ms` on `clock`.
async fn sleep_until(clock: &dyn crate::time::Clock, at_ms: i64) {
    let wait = at_ms - clock.now_ms();
    if wait > 0 {
        tokio::time::sleep(Duration::from_millis(wait as u64)).await;
    }
}
