//! Step 4, the write: a prepared fire is held until it is due and covered by the watermark, then checked
//! once more, once its `/run` is ready (the job's next fire may have come meanwhile, or gone out while this
//! one waited for a connection; a successor may have taken over) right before it is written. A fire whose
//! watermark does not come goes back to be decided anew.

use super::settle::Settled;
use super::state::{schedule_next, State, TimelineEntry};
use super::{sleep_until, Inner};
use crate::domain::fires::{orphan_check, Fire, LastCheck};
use crate::domain::misfire::DropReason;
use crate::scheduler::trigger::Release;
use crate::time::CRON_ZONE;
use std::sync::Arc;
use std::time::Duration;

/// A prepared fire the watermark has not covered this long after it was due goes back to the pending
/// fires and is decided anew (late, perhaps collapsing or misfiring) once the watermark is raised.
const HOLD_MAX_MS: i64 = 1_000;

/// A decided fire on its way to its write, with what its last check needs.
#[derive(Debug, Clone, Copy)]
pub(super) struct OnItsWay {
    pub term: u64,
    pub job_id: i32,
    pub fire: Fire,
    /// It goes out as the job's misfire compensation.
    pub compensation: bool,
    /// The job's next fire after it, as its decision saw it: the last check of a fire whose term ended
    /// meanwhile has only this to go by.
    pub successor_ms: Option<i64>,
    pub fire_once_now: bool,
}

impl Inner {
    /// What holds a prepared fire back: until it is due and covered, then the last check.
    pub(super) fn release(self: &Arc<Self>, way: OnItsWay) -> Release {
        let me = self.clone();
        Release {
            due: Box::pin(self.clone().until_due(way)),
            last_check: Box::new(move || Box::pin(me.last_check(way))),
        }
    }

    /// Holds a prepared fire until it is due and covered by the watermark; false when it went back to be
    /// decided anew or its term ended first.
    async fn until_due(self: Arc<Self>, way: OnItsWay) -> bool {
        let OnItsWay { term, job_id, fire, compensation, .. } = way;
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
        true
    }

    /// The check right before the write; false when the fire is not to be written (its row is settled, or
    /// it went back to be decided anew).
    async fn last_check(self: Arc<Self>, way: OnItsWay) -> bool {
        let fire = way.fire;
        // A leader frozen or cut off for longer than it may trust its lease sends nothing before the
        // database says the lease is still its own: its successor may have taken this fire for sent.
        if !self.leadership.still_holds().await {
            let _ = self.settled.send(Settled {
                log_id: fire.log_id,
                reason: DropReason::Deposed,
                fire_once_now: false,
            });
            return false;
        }
        self.still_wanted(way)
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
        state.timeline.insert(TimelineEntry::of(job_id, &fire));
        state.jobs.entry(job_id).or_default().fires.put_back(fire, compensation);
        drop(state);
        self.cover_wake.notify_one();
        self.sender_wake.notify_one();
    }

    /// The last check of a decided fire, once it is due, covered and its connection taken (see
    /// [`crate::domain::fires::JobFires::last_check`]): it goes out unless another run stands for it or it
    /// became a misfire on its way. A fire of a term that ended meanwhile (another admin leads, or this one
    /// again) has only its own successor's instant to go by ([`orphan_check`]).
    fn still_wanted(&self, way: OnItsWay) -> bool {
        let OnItsWay { term, job_id, fire, compensation, successor_ms, mut fire_once_now } = way;
        let now = self.context.clock.now_ms();
        let mut state = self.lock();
        let check = if state.term != term {
            orphan_check(&fire, compensation, successor_ms, now, fire_once_now)
        } else {
            let State { jobs, crons, .. } = &mut *state;
            let Some(entry) = jobs.get_mut(&job_id) else { return true };
            // The job as it is now (the console may have changed its misfire rule since the decision).
            fire_once_now = entry.fire_once_now();
            let job = entry.job.clone();
            let mut next = |after| schedule_next(crons, job.as_deref(), after, CRON_ZONE);
            entry.fires.last_check(&fire, compensation, now, fire_once_now, &mut next)
        };
        drop(state);
        let reason = match check {
            LastCheck::Send => return true,
            LastCheck::Compensate => {
                self.put_back(term, job_id, fire, true);
                return false;
            }
            LastCheck::Collapsed => DropReason::Collapsed,
            LastCheck::Misfired => DropReason::Misfire,
        };
        let _ = self.settled.send(Settled { log_id: fire.log_id, reason, fire_once_now });
        false
    }
}
