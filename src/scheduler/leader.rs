//! Which admin leads, and the takeover of a dead leader's plan (see `crate::domain::ownership`).
//!
//! One admin leads: it makes the schedule passes and sends the planned fires; the others stand by. On
//! one MySQL/MariaDB or PostgreSQL server the leader also holds a session lock on a connection of its own
//! and the others wait on it: the server releases it the moment the leader's connection ends (kill -9,
//! OOM, power), so a waiter takes over within milliseconds, without heartbeats through the database.
//! Where no session lock tells (a Galera node's locks are its own; SQLite has one admin process), an
//! admin takes over a lease not renewed for [`LEASE_MS`], and on SQLite the admin takes over whatever
//! plan an earlier run left at start. A leader that stalls (its connection alive, its renewals not) is
//! taken over by the lease on every backend.

use super::dispatch::Dispatcher;
use super::lease::Leadership;
use super::monitors::LOST_RESULT_AFTER_MS;
use crate::domain::codes::AlarmStatus;
use crate::domain::ownership::{LEADER_LOCK_KEY, LEADER_LOCK_NAME};
use crate::domain::protocol::FAIL_CODE;
use crate::i18n::I18n;
use crate::storage::{Claim, Db, SessionLock, Takeover};
use crate::time::{sleep_unless_cancelled, Clock};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// A lease not renewed for this long is vacant: its leader is dead or stalled.
pub const LEASE_MS: i64 = 5_000;
/// How often the leader renews its lease when no fire raises its watermark.
const RENEW_EVERY: Duration = Duration::from_millis(1_000);
/// How often a standby without a session lock to wait on reads the lease.
const LEASE_POLL: Duration = Duration::from_millis(1_000);
/// One wait on the leader's session lock; then the standby checks the lease for a stalled leader. Short,
/// so that a frozen leader (whose lock the server keeps until its connection has been idle for
/// `crate::storage::IDLE_HOLDER_SECS`) is taken over within its lease.
const LOCK_WAIT: Duration = Duration::from_secs(1);
/// After its connection failed (the database restarted), a standby gives the leader this long to take its
/// session lock back before it waits on it, so that a live leader is rarely taken over. (Taking a live
/// leader's plan over is safe, only needless: the leader learns it at its next renewal and stops.)
const STANDBY_BACKOFF: Duration = Duration::from_secs(3);
/// How soon a leader without its session lock tries to take it again.
const LOCK_RETRY: Duration = Duration::from_millis(250);
/// A check of the leader's lock connection that takes longer counts as lost.
const LOCK_CHECK_LIMIT: Duration = Duration::from_secs(1);
/// Rows the previous leader may have sent are settled as "result unknown" this long after the takeover,
/// unless a callback said the executor got them.
const UNCERTAIN_AFTER: Duration = Duration::from_secs(10);

/// Takes and keeps the lease, and takes a dead or stalled leader's plan over.
pub struct Election {
    pub db: Db,
    pub leadership: Leadership,
    pub dispatcher: Dispatcher,
    pub clock: Arc<dyn Clock>,
    pub i18n: I18n,
}

impl Election {
    pub async fn run(self, shutdown: CancellationToken) {
        let mut lock: Option<SessionLock> = None;
        let mut backoff = false;
        let mut first = true;
        // SQLite: one admin per file, so whatever lease an earlier run left is taken at once.
        let mut claim = if self.db.has_session_locks() { None } else { Some(self.claim_at_start()) };
        loop {
            if shutdown.is_cancelled() {
                break;
            }
            let term = self.leadership.term();
            let pause = if term.leading {
                self.keep_leading(&mut lock).await
            } else if self.db.has_session_locks() {
                self.stand_by_on_lock(&mut lock, &mut backoff, std::mem::take(&mut first), &shutdown).await
            } else {
                self.stand_by_on_lease(claim.take()).await
            };
            if !pause.is_zero() && !sleep_unless_cancelled(&shutdown, pause).await {
                break;
            }
        }
        // No term begins any more. A take under way when the stop came may have begun one: the dispatcher
        // sends that plan before it ends, which it may do from now on.
        self.dispatcher.elections_over();
        // A graceful stop: the lease is given up and the lock released, so that a standby takes the rest
        // of the plan over at once; meanwhile the dispatcher sends what it holds until it is taken.
        self.leadership.release();
        if let Err(e) = self.leadership.renew().await {
            tracing::debug!("lease not given up: {e}");
        }
        if let Some(lock) = lock {
            lock.release().await;
        }
    }

    fn claim_at_start(&self) -> Claim {
        if self.db.is_sqlite() {
            Claim::Unconditional
        } else {
            Claim::IfVacant { lease_ms: LEASE_MS }
        }
    }

    /// While leading: renews the lease (a renewal that finds it taken ends the term), and keeps the
    /// session lock, taking it back when its connection was lost.
    async fn keep_leading(&self, lock: &mut Option<SessionLock>) -> Duration {
        let mut pause = RENEW_EVERY;
        if self.db.has_session_locks() {
            let held = match lock.as_mut() {
                Some(l) => tokio::time::timeout(LOCK_CHECK_LIMIT, self.db.holds(l)).await.unwrap_or(false),
                None => false,
            };
            if !held {
                if let Some(stale) = lock.take() {
                    stale.release().await;
                }
                // Taken back at once after a database restart; held by another admin, which then takes
                // the lease over, and the next renewal ends this term.
                *lock = self
                    .db
                    .session_lock(LEADER_LOCK_NAME, LEADER_LOCK_KEY, Duration::ZERO)
                    .await
                    .ok()
                    .flatten();
                if lock.is_none() {
                    pause = LOCK_RETRY;
                }
            }
        }
        if let Err(e) = self.leadership.renew().await {
            tracing::debug!("lease not renewed: {e}");
        }
        pause
    }

    /// A standby where session locks tell: waits on the leader's lock and takes the lease once it holds it;
    /// between waits, takes a lease its holder stopped renewing (a stalled leader).
    async fn stand_by_on_lock(
        &self,
        lock: &mut Option<SessionLock>,
        backoff: &mut bool,
        first: bool,
        shutdown: &CancellationToken,
    ) -> Duration {
        // Held from a term another admin ended: it is the new leader's to hold.
        if let Some(l) = lock.take() {
            l.release().await;
        }
        if *backoff {
            if self.db.ping().await.is_err() {
                return STANDBY_BACKOFF;
            }
            *backoff = false;
            return STANDBY_BACKOFF;
        }
        // At start only a try: a lease left vacant by a stalled leader is taken without waiting 10 s.
        let wait = if first { Duration::ZERO } else { LOCK_WAIT };
        let acquired = tokio::select! {
            acquired = self.db.session_lock(LEADER_LOCK_NAME, LEADER_LOCK_KEY, wait) => acquired,
            _ = shutdown.cancelled() => return Duration::ZERO,
        };
        match acquired {
            Ok(Some(acquired)) => {
                *lock = Some(acquired);
                if self.take(Claim::Unconditional).await {
                    return Duration::ZERO;
                }
                // Not taken (the database failed meanwhile): let the lock go for another admin.
                if let Some(l) = lock.take() {
                    l.release().await;
                }
                STANDBY_BACKOFF
            }
            Ok(None) => {
                // The take's transaction locks the lease rows, which holds the leader's renewals up: it is
                // only worth it for a lease that reads as vacant.
                if self.lease_looks_vacant().await == Some(true) {
                    self.take(Claim::IfVacant { lease_ms: LEASE_MS }).await;
                }
                Duration::ZERO
            }
            Err(e) => {
                tracing::debug!("waiting on the leader's lock: {e}");
                *backoff = true;
                STANDBY_BACKOFF
            }
        }
    }

    /// A standby where no session lock tells (a Galera node, SQLite): takes the lease once it is vacant.
    async fn stand_by_on_lease(&self, claim: Option<Claim>) -> Duration {
        let claim = claim.unwrap_or(Claim::IfVacant { lease_ms: LEASE_MS });
        if claim != Claim::Unconditional && self.lease_looks_vacant().await != Some(true) {
            return LEASE_POLL;
        }
        if self.take(claim).await {
            Duration::ZERO
        } else {
            LEASE_POLL
        }
    }

    /// Whether the lease, read without a lock, is vacant (or absent); `None` when it could not be read.
    async fn lease_looks_vacant(&self) -> Option<bool> {
        match self.db.lease().await {
            Ok(lease) => Some(lease.is_none_or(|l| l.is_vacant(self.clock.now_ms(), LEASE_MS))),
            Err(e) => {
                tracing::debug!("lease not read: {e}");
                None
            }
        }
    }

    /// Takes the lease on `claim`'s condition; on success begins a term with the previous leader's plan.
    async fn take(&self, claim: Claim) -> bool {
        let began = std::time::Instant::now();
        let now = self.clock.now_ms();
        let taken =
            match self.db.take_lease(self.leadership.owner(), now, claim, now - LOST_RESULT_AFTER_MS).await {
                Ok(Some(taken)) => taken,
                Ok(None) => return false,
                Err(e) => {
                    tracing::debug!("lease not taken: {e}");
                    return false;
                }
            };
        let Takeover { lease, previous, planned, uncertain } = taken;
        let (taken_over, unknown) = (planned.len(), uncertain.len());
        // The dispatcher holds the plan before the term begins, and with it the passes of the term.
        let term = self.leadership.next_term();
        self.dispatcher.take_over(term, lease.watermark_ms, planned);
        self.leadership.lead(term, lease, began).await;
        self.dispatcher.wake();
        match previous {
            Some(p) if p.owner != lease.owner => tracing::warn!(
                "this admin leads now, after admin {}: {taken_over} of its planned fire(s) taken over, {unknown} it may have sent left to their callbacks",
                p.owner.id()
            ),
            Some(_) => tracing::info!("this admin leads again: {taken_over} planned fire(s) of its earlier term resumed"),
            None => tracing::info!("this admin leads: it plans and sends the scheduled fires"),
        }
        if !uncertain.is_empty() {
            let (db, msg) = (self.db.clone(), self.i18n.get("joblog_trigger_uncertain").to_string());
            tokio::spawn(async move {
                tokio::time::sleep(UNCERTAIN_AFTER).await;
                // A row whose callback came meanwhile has its result and is left alone.
                match db.settle_unsent(&uncertain, FAIL_CODE, &msg, AlarmStatus::New).await {
                    Ok(n) if n > 0 => tracing::warn!("{n} trigger(s) of the previous leader without a callback settled as \"result unknown\""),
                    Ok(_) => {}
                    Err(e) => tracing::warn!("triggers of the previous leader left to the lost-result sweep: {e}"),
                }
            });
        }
        true
    }
}
