//! Step 2, decided and prepared: shortly before they are due, each job's due fires are decided (the
//! newest runs, older ones collapse into it; see [`crate::domain::fires`]) and sent on their way to the
//! lanes, where the request is built and a connection taken, held until due and covered.

use super::hold::OnItsWay;
use super::settle::Settled;
use super::state::{schedule_next, State, TimelineEntry};
use super::{pause, sleep_until, Inner};
use crate::domain::fires::{Fire, Verdict};
use crate::domain::misfire::DropReason;
use crate::domain::{TriggerRequest, TriggerType};
use crate::scheduler::trigger::{expand, new_rows, LoadedGroup};
use crate::storage::JobInfo;
use crate::time::CRON_ZONE;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Fires are decided and their requests prepared this long before they are due, ahead of the watermark,
/// so that once it is raised only the writes remain.
pub(super) const PREPARE_AHEAD_MS: i64 = 20;

/// A fire decided to go out, with what its send needs.
struct Decided {
    job: Arc<JobInfo>,
    group: Option<LoadedGroup>,
    fire: Fire,
    /// It makes up for a misfire (fire-once-now).
    compensation: bool,
    /// The job's next fire after it (see [`OnItsWay::successor_ms`]).
    successor_ms: Option<i64>,
    fire_once_now: bool,
}

/// What the decisions of one look at the due fires came to.
#[derive(Default)]
struct Decisions {
    sends: Vec<Decided>,
    settled: Vec<Settled>,
}

impl Inner {
    pub(super) async fn send_loop(self: Arc<Self>, shutdown: CancellationToken) {
        loop {
            let term = self.lock().term;
            let now = self.context.clock.now_ms();
            let next = self.send_due(term, now);
            if shutdown.is_cancelled() && self.terms_over() && (self.is_idle() || !self.still_leads(term)) {
                return;
            }
            pause(&self.sender_wake, next, now, &shutdown).await;
        }
    }

    /// Decides the fires due by `now` and covered, and, while the watermark keeps up, those due within
    /// [`PREPARE_AHEAD_MS`]; sends them on their way (held until due and covered). Returns when to look
    /// again.
    fn send_due(self: &Arc<Self>, term: u64, now: i64) -> Option<i64> {
        let (decisions, reserved, next) = {
            let mut state = self.lock();
            if state.term != term {
                return None;
            }
            let due_through = decide_through(&state, now);
            let jobs = state.jobs_between(i64::MIN, due_through);
            // Counted from the moment they leave the timeline until they are with their lanes: a schedule
            // pass making way for the burst sees them all along.
            let reserved = (!jobs.is_empty()).then(|| self.lanes.reserve(jobs.len()));
            let decisions = decide(&mut state, &jobs, now.max(due_through), due_through);
            (decisions, reserved, next_wake(&state, now))
        };
        for s in decisions.settled {
            let _ = self.settled.send(s);
        }
        for decided in decisions.sends {
            self.send(term, decided, now);
        }
        drop(reserved);
        next
    }

    /// Sends one decided fire: its planned row serves the first (or only) trigger; a sharding broadcast's
    /// other shards get rows of their own.
    fn send(self: &Arc<Self>, term: u64, decided: Decided, now: i64) {
        let Decided { job, group, fire, compensation, successor_ms, fire_once_now } = decided;
        let kind = if compensation { TriggerType::Misfire } else { TriggerType::Cron };
        let job_id = job.id;
        let request = TriggerRequest::of_job(job.id, kind);
        let mut triggers = expand(&request, job, group.as_ref()).into_iter();
        let Some(first) = triggers.next() else { return };
        let sent_at = now.max(fire.release_ms);
        let first = first.into_trigger(fire.log_id, sent_at, Some(fire.instant_ms));
        let release =
            self.release(OnItsWay { term, job_id, fire, compensation, successor_ms, fire_once_now });
        self.lanes.spawn(self.context.clone(), first, Some(release));
        let others: Vec<_> = triggers.collect();
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
                    for (new_trigger, log_id) in others.into_iter().zip(ids) {
                        me.lanes.spawn(
                            me.context.clone(),
                            new_trigger.into_trigger(log_id, now, Some(fire.instant_ms)),
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
}

/// Decides the fires of `jobs` released up to `due_through`, taking them off the timeline: those to
/// send are held for the watermark, the others are to be settled.
fn decide(state: &mut State, jobs: &[i32], decided_at: i64, due_through: i64) -> Decisions {
    let mut decisions = Decisions::default();
    let State { jobs: entries, timeline, crons, groups, held, .. } = state;
    for &job_id in jobs {
        let Some(entry) = entries.get_mut(&job_id) else { continue };
        let fire_once_now = entry.fire_once_now();
        let job = entry.job.clone();
        let mut next = |after| schedule_next(crons, job.as_deref(), after, CRON_ZONE);
        for (fire, verdict) in entry.fires.decide(decided_at, due_through, fire_once_now, &mut next) {
            timeline.remove(&TimelineEntry::of(job_id, &fire));
            let reason = match verdict {
                Verdict::Send { compensation } => match &job {
                    Some(job) => {
                        *held.entry(fire.release_ms).or_default() += 1;
                        let group = groups.get(&job.job_group).cloned();
                        let successor_ms = entry.fires.successor(&fire, &mut next);
                        decisions.sends.push(Decided {
                            job: job.clone(),
                            group,
                            fire,
                            compensation,
                            successor_ms,
                            fire_once_now,
                        });
                        continue;
                    }
                    None => DropReason::Deleted,
                },
                Verdict::Collapsed => DropReason::Collapsed,
                Verdict::Misfired => DropReason::Misfire,
            };
            decisions.settled.push(Settled { log_id: fire.log_id, reason, fire_once_now });
        }
    }
    decisions
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
    let first = state.timeline.first()?.release_ms;
    if first > state.checked_through {
        return None;
    }
    if state.cover_keeps_up(now) {
        Some(first - PREPARE_AHEAD_MS)
    } else {
        (first <= state.covered_through).then_some(first)
    }
}
