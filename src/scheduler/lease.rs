//! This admin's part in the lease (see `crate::domain::ownership`): whether it leads, in which term, and
//! the writes of the lease row, ordered so that the watermark written never goes down. The election
//! (`super::leader`) decides when a term begins; the dispatcher and the schedule passes follow it.

use crate::domain::ownership::{Lease, Owner};
use crate::storage::{Db, Result};
use crate::time::Clock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// A lease write is trusted this long after it began: standbys take a lease over once it has not been
/// renewed for `super::leader::LEASE_MS` (5 s), so a leader that wakes from a freeze (SIGSTOP, a stalled
/// VM) or a cut longer than this asks the database again before it sends anything. The 2 s between them
/// are for a stall between the last check and the write of a `/run`, and for clocks that run at slightly
/// different rates.
pub const TRUSTED_FOR: Duration = Duration::from_millis(3_000);

/// Whether this admin leads, and which term of its leadership it is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Term {
    /// Counts this admin's leaderships: work of an earlier one is not carried into a later one.
    pub number: u64,
    pub leading: bool,
}

/// How a write of the lease went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Renewal {
    Renewed,
    /// Another admin took the lease over: this one no longer leads.
    Deposed,
    /// This admin did not lead.
    NotLeading,
}

/// This admin's part in the lease; cheap to clone.
#[derive(Clone)]
pub struct Leadership {
    inner: Arc<Inner>,
}

struct Inner {
    owner: Owner,
    db: Db,
    clock: Arc<dyn Clock>,
    /// The lease as this admin last wrote it, while it leads. The lock orders the writes, so the
    /// watermark written never goes down.
    lease: tokio::sync::Mutex<Option<Lease>>,
    term: watch::Sender<Term>,
    /// The lease is being given up (a graceful stop): it is written as given up from now on.
    released: AtomicBool,
    /// When the latest write that found the lease still this admin's began (monotonic: a freeze
    /// advances it, a clock step does not).
    confirmed_at: Mutex<Option<Instant>>,
}

impl Leadership {
    pub fn new(owner: Owner, db: Db, clock: Arc<dyn Clock>) -> Leadership {
        let (term, _) = watch::channel(Term { number: 0, leading: false });
        Leadership {
            inner: Arc::new(Inner {
                owner,
                db,
                clock,
                lease: tokio::sync::Mutex::new(None),
                term,
                released: AtomicBool::new(false),
                confirmed_at: Mutex::new(None),
            }),
        }
    }

    pub fn owner(&self) -> Owner {
        self.inner.owner
    }

    pub fn term(&self) -> Term {
        *self.inner.term.borrow()
    }

    pub fn subscribe(&self) -> watch::Receiver<Term> {
        self.inner.term.subscribe()
    }

    /// The watermark of the lease as last written (0 while not leading).
    pub async fn watermark(&self) -> i64 {
        self.inner.lease.lock().await.map_or(0, |l| l.watermark_ms)
    }

    /// Raises the watermark to `through` (never lowers it) and renews the lease, in one statement.
    pub async fn advance(&self, through: i64) -> Result<Renewal> {
        let mut held = self.inner.lease.lock().await;
        let Some(current) = *held else { return Ok(Renewal::NotLeading) };
        let began = Instant::now();
        let renewed_ms =
            if self.inner.released.load(Ordering::Relaxed) { 0 } else { self.inner.clock.now_ms().max(1) };
        let next = Lease { watermark_ms: current.watermark_ms.max(through), renewed_ms, ..current };
        let mut written = self.inner.db.renew_lease(&current, &next).await?;
        if !written {
            // A renewal whose answer was lost may have been written after all: the row tells.
            if let Some(stored) = self.inner.db.own_lease(current.owner).await? {
                let next = Lease { watermark_ms: next.watermark_ms.max(stored.watermark_ms), ..next };
                written = self.inner.db.renew_lease(&stored, &next).await?;
            }
        }
        if written {
            *held = Some(next);
            self.confirm(began);
            return Ok(Renewal::Renewed);
        }
        *held = None;
        self.inner.term.send_modify(|t| t.leading = false);
        tracing::warn!("another admin took the lease over: this admin no longer leads");
        Ok(Renewal::Deposed)
    }

    /// Renews the lease as it is.
    pub async fn renew(&self) -> Result<Renewal> {
        self.advance(0).await
    }

    /// Whether this admin may still send what its lease covers: a lease write began less than
    /// [`TRUSTED_FOR`] ago, or one made now finds the lease still its own. The fence of a leader that
    /// wakes after its successor took over: it sends nothing more.
    pub async fn still_holds(&self) -> bool {
        let fresh = self.confirmed_at().is_some_and(|at| at.elapsed() < TRUSTED_FOR);
        fresh || matches!(self.renew().await, Ok(Renewal::Renewed))
    }

    fn confirmed_at(&self) -> Option<Instant> {
        *self.inner.confirmed_at.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn confirm(&self, began: Instant) {
        let mut confirmed = self.inner.confirmed_at.lock().unwrap_or_else(|e| e.into_inner());
        *confirmed = Some(confirmed.map_or(began, |at| at.max(began)));
    }

    /// The number the next term will have.
    pub(super) fn next_term(&self) -> u64 {
        self.term().number + 1
    }

    /// Begins term `number` with the lease just taken by a write that began at `began`.
    pub(super) async fn lead(&self, number: u64, lease: Lease, began: Instant) {
        *self.inner.lease.lock().await = Some(lease);
        self.confirm(began);
        self.inner.term.send_replace(Term { number, leading: true });
    }

    /// Gives the lease up for a graceful stop: the next write says so, and another admin takes it over
    /// without waiting (where a session lock tells it, at once).
    pub fn release(&self) {
        self.inner.released.store(true, Ordering::Relaxed);
    }

    /// Removes the lease row at the end of a graceful stop, once every fire it covered is sent and its
    /// result written, unless another admin took it over meanwhile: the database is left as found.
    pub async fn resign(&self) {
        let Some(lease) = self.inner.lease.lock().await.take() else { return };
        if let Err(e) = self.inner.db.remove_lease(&lease).await {
            tracing::debug!("lease row not removed: {e}");
        }
    }
}
