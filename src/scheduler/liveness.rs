//! Which admins live, and the takeover of a dead admin's plan (see `crate::domain::ownership`).
//!
//! Each admin holds a session lock named after it on a connection of its own and lists itself in
//! `xxl_job_lock`; every other admin waits on that lock on a connection of its own. The database releases
//! a lock the moment its connection ends, so when an admin dies the first waiter gets the lock at once,
//! takes over the dead admin's planned rows under the schedule lock and sends them at their instants.
//! Rows the dead admin was sending are not sent again: they are left to their callbacks (which mark them
//! delivered) and settled as "result unknown" after [`UNCERTAIN_AFTER`].
//!
//! SQLite has one admin process per file and no server to hold a lock: at start the admin takes over
//! whatever plan an earlier run of it left. A Galera node's locks are its own (other nodes do not see
//! them), so there the lost-result sweep settles a dead admin's plan instead.

use super::monitors::{alarm_status, LOST_RESULT_AFTER_MS};
use super::schedule::TimerWheel;
use crate::domain::ownership::{Owner, MARKER_PREFIXES, REGISTRY_PREFIX};
use crate::domain::protocol::FAIL_CODE;
use crate::domain::{PlannedFire, TriggerRequest, TriggerType};
use crate::i18n::I18n;
use crate::storage::{Db, OwnedRow, Result, SessionLock};
use crate::time::Clock;
use crate::workers::Shutdown;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// How often the registry of admins is read for new admins to watch, and this admin's own lock checked.
const WATCH_INTERVAL: Duration = Duration::from_secs(2);
/// How soon an admin without its own lock tries again: well within [`WATCH_BACKOFF`].
const OWN_LOCK_RETRY: Duration = Duration::from_millis(250);
/// One wait on another admin's lock; then the watcher checks that the admin is still registered.
const LOCK_WAIT: Duration = Duration::from_secs(10);
/// After a watcher's connection failed (the database restarted): time for the owners to take their
/// locks back first, so that a live admin is rarely taken for dead. (Taking a live admin's plan over is
/// safe, only needless: every row is marked before it is sent, conditionally.)
const WATCH_BACKOFF: Duration = Duration::from_secs(3);
/// Rows a dead admin was sending are settled as "result unknown" this long after the takeover, unless a
/// callback said the executor got them.
const UNCERTAIN_AFTER: Duration = Duration::from_secs(10);

pub struct Liveness {
    pub db: Db,
    pub owner: Owner,
    pub wheel: TimerWheel,
    pub clock: Arc<dyn Clock>,
    pub i18n: I18n,
}

impl Liveness {
    pub async fn run(self, mut shutdown: Shutdown) {
        let this = Arc::new(self);
        if !this.db.has_session_locks() {
            if this.db.is_sqlite() {
                this.resume_previous_run(&mut shutdown).await;
            }
            return;
        }
        let mut own: Option<SessionLock> = None;
        let mut watchers: HashMap<String, JoinHandle<()>> = HashMap::new();
        loop {
            let held = match own.as_mut() {
                Some(lock) => this.db.holds(lock).await,
                None => false,
            };
            if !held {
                if let Some(stale) = own.take() {
                    stale.release().await;
                }
                own = this.take_own_lock().await;
            }
            watchers.retain(|_, watcher| !watcher.is_finished());
            match this.db.registered_admins(REGISTRY_PREFIX).await {
                Ok(rows) => {
                    for row in rows {
                        let Some(other) = Owner::from_registry_row(&row).filter(|o| *o != this.owner) else { continue };
                        if let Entry::Vacant(slot) = watchers.entry(row) {
                            let row = slot.key().clone();
                            slot.insert(tokio::spawn(this.clone().watch(other, row, shutdown.clone())));
                        }
                    }
                }
                Err(e) => tracing::debug!("admins not listed: {e}"),
            }
            // Without its lock (the database restarted) an admin may be taken for dead: it retakes it soon.
            let pause = if own.is_some() { WATCH_INTERVAL } else { OWN_LOCK_RETRY };
            if !shutdown.sleep(pause).await {
                break;
            }
        }
        for watcher in watchers.into_values() {
            watcher.abort();
        }
        // The others take over what is left of this admin's plan only once its lanes are done with it
        // (rows are marked before they are sent, so whoever marks a row first sends it).
        if let Err(e) = this.db.unregister_admin(&this.owner.registry_row()).await {
            tracing::debug!("registry row not removed: {e}");
        }
        if let Some(lock) = own {
            lock.release().await;
        }
    }

    /// Takes this admin's session lock and lists it in the registry. The lock may be held for a moment
    /// by another admin taking over this one's plan after a lost connection: then it waits for it.
    async fn take_own_lock(&self) -> Option<SessionLock> {
        let (name, key) = (self.owner.lock_name(), self.owner.lock_key());
        let lock = match self.db.session_lock(&name, key, Duration::ZERO).await {
            Ok(None) => self.db.session_lock(&name, key, LOCK_WAIT).await,
            other => other,
        };
        match lock {
            Ok(Some(lock)) => match self.db.register_admin(&self.owner.registry_row()).await {
                Ok(()) => Some(lock),
                Err(e) => {
                    tracing::warn!("this admin could not list itself among the live admins: {e}");
                    lock.release().await;
                    None
                }
            },
            Ok(None) => None,
            Err(e) => {
                tracing::debug!("own session lock not taken: {e}");
                None
            }
        }
    }

    /// Waits on `other`'s lock; once it is free, `other` is dead (or stopped): its plan is taken over.
    async fn watch(self: Arc<Self>, other: Owner, row: String, mut shutdown: Shutdown) {
        let name = other.lock_name();
        loop {
            let lock = tokio::select! {
                lock = self.db.session_lock(&name, other.lock_key(), LOCK_WAIT) => lock,
                _ = shutdown.signalled() => return,
            };
            match lock {
                Ok(Some(lock)) => {
                    let outcome = self.take_over(other, Some(&row)).await;
                    lock.release().await;
                    match outcome {
                        Ok(()) => return,
                        Err(e) => tracing::error!("the plan of admin {} not taken over yet: {e}", other.id()),
                    }
                }
                Ok(None) => match self.db.registered_admins(&row).await {
                    Ok(rows) if rows.is_empty() => return,
                    _ => continue,
                },
                Err(e) => tracing::debug!("watching admin {}: {e}", other.id()),
            }
            if !shutdown.sleep(WATCH_BACKOFF).await {
                return;
            }
        }
    }

    /// Takes over the unsent planned rows of the dead admin `victim` (and removes its registry row), under
    /// the schedule lock so that one survivor does it; sends them at their instants.
    async fn take_over(&self, victim: Owner, registry_row: Option<&str>) -> Result<()> {
        let now = self.clock.now_ms();
        let planned_by_victim = victim.planned();
        let mut lock = self.db.lock_schedule().await?;
        let rows = lock.rows_marked(&planned_by_victim, &victim.sending_prefix(), now - LOST_RESULT_AFTER_MS).await?;
        let (planned, sending): (Vec<OwnedRow>, Vec<OwnedRow>) =
            rows.into_iter().partition(|r| r.trigger_msg.as_deref() == Some(planned_by_victim.as_str()));
        let ids: Vec<i64> = planned.iter().map(|r| r.id).collect();
        lock.remark(&ids, &planned_by_victim, &self.owner.planned()).await?;
        if let Some(row) = registry_row {
            lock.unregister_admin(row).await?;
        }
        let committed = lock.commit().await;
        let taken = planned.len();
        let zone = self.db.zone();
        // On the wheel even when the COMMIT got no answer, as it may have been written: a row that was not
        // still names the dead admin, so it is not sent from here (rows are marked only if they name this
        // admin), and the next attempt takes it over again.
        self.wheel.schedule(planned.into_iter().map(|row| {
            let at = row.trigger_time.map_or(now, |t| zone.to_epoch_ms(t));
            // Planned "now": a fire already due is late and is settled with the job's other rows.
            let fire = PlannedFire { at_ms: at, planned_at_ms: now, log_id: row.id, marked: false };
            (at.max(now), TriggerRequest { planned: Some(fire), ..TriggerRequest::of_job(row.job_id, TriggerType::Cron) })
        }));
        committed?;
        if taken == 0 && sending.is_empty() {
            return Ok(());
        }
        tracing::warn!(
            "admin {} is gone: {taken} of its planned fire(s) taken over, {} it was sending left to their callbacks",
            victim.id(),
            sending.len()
        );
        let uncertain: Vec<i64> = sending.iter().map(|r| r.id).collect();
        if !uncertain.is_empty() {
            let (db, msg) = (self.db.clone(), self.i18n.get("joblog_trigger_uncertain").to_string());
            tokio::spawn(async move {
                tokio::time::sleep(UNCERTAIN_AFTER).await;
                // A row whose callback came meanwhile has its result and is left alone.
                match db.settle_unsent(&uncertain, FAIL_CODE, &msg, alarm_status::NEW).await {
                    Ok(n) if n > 0 => tracing::warn!("{n} trigger(s) of a dead admin without a callback settled as \"result unknown\""),
                    Ok(_) => {}
                    Err(e) => tracing::warn!("triggers of a dead admin left to the lost-result sweep: {e}"),
                }
            });
        }
        Ok(())
    }

    /// SQLite: takes over the plan a previous run of the admin left (killed, or stopped by power loss), so a
    /// restart loses only the seconds it was down, and those by the misfire rule.
    async fn resume_previous_run(&self, shutdown: &mut Shutdown) {
        loop {
            let now = self.clock.now_ms();
            let outcome = async {
                let rows = self.db.marked_rows(now - LOST_RESULT_AFTER_MS, MARKER_PREFIXES).await?;
                let owners: HashSet<Owner> = rows
                    .iter()
                    .filter_map(|r| r.trigger_msg.as_deref().and_then(Owner::from_marker))
                    .map(|(o, _)| o)
                    .filter(|o| *o != self.owner)
                    .collect();
                for owner in owners {
                    self.take_over(owner, None).await?;
                }
                Ok::<_, crate::storage::StorageError>(())
            }
            .await;
            match outcome {
                Ok(()) => return,
                Err(e) => tracing::error!("the plan of the previous run not resumed yet: {e}"),
            }
            if !shutdown.sleep(WATCH_BACKOFF).await {
                return;
            }
        }
    }
}
