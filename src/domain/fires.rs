//! A job's planned fires as the leading admin holds them until each is sent or settled: which one runs,
//! which collapse into it, and which one carries a FIRE_ONCE_NOW job's misfire compensation.
//!
//! The rule, decided when a fire is due and checked again just before its `/run` is written: a fire is
//! sent only while the job's next fire is more than [`MARGIN_MS`] away and the job has not run since
//! [`MARGIN_MS`] before the fire was due. A fire that a stall (a database outage, a lock wait, a slow
//! machine, a takeover) made so late that its successor is due as well collapses into that successor, as
//! 2.4.2's schedule pass fires a late job once; the newest due fire is the one that runs. A fire held up
//! on its way (its task waited for the machine or a permit) while its successor was decided and went out
//! gives way to that run too: a decided fire is no longer pending, so only the run it made tells. So a job
//! never runs twice within a second because something paused, and a lag of less than a period loses
//! nothing. A fire more than the misfire threshold late obeys the misfire strategy: DO_NOTHING skips it,
//! FIRE_ONCE_NOW sends the job's next run as its one compensation.

use super::misfire::MISFIRE_THRESHOLD_MS;
use std::collections::VecDeque;

/// A fire is not sent when the job's next fire comes within this, nor when the job ran within this before
/// the fire was due: both would reach the executor within one second, one after the other.
pub const MARGIN_MS: i64 = 100;

/// Whether a fire for `instant_ms` is a misfire at `now_ms`: more than 2.4.2's window late.
fn misfired(instant_ms: i64, now_ms: i64) -> bool {
    now_ms - instant_ms > MISFIRE_THRESHOLD_MS
}

/// One planned fire of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fire {
    /// Its log row, written with the plan.
    pub log_id: i64,
    /// The instant it stands for.
    pub instant_ms: i64,
    /// When it is due to go out: its instant, or later for a pass's catch-up of a missed instant.
    pub release_ms: i64,
    /// A pass's catch-up, or a misfire compensation (a FIRE_ONCE_NOW job's missed next time).
    pub kind: Kind,
    /// When it was planned: a console change after this may have cancelled it.
    pub planned_at_ms: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A planned instant of the schedule.
    Regular,
    /// A missed next time found by a pass (2.4.2's case B): the job runs once now for it.
    CatchUp,
    /// A missed next time more than the threshold late, FIRE_ONCE_NOW (2.4.2's case A).
    Compensation,
}

/// What becomes of a due fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Send it now; `compensation` when it goes out as the job's misfire trigger.
    Send { compensation: bool },
    /// Not sent: the job's next fire is due too and stands for it.
    Collapsed,
    /// Not sent: more than the misfire threshold late, and the job is DO_NOTHING.
    Misfired,
}

/// The fires of one job not yet decided, in release order, whether a compensation is owed, and when the
/// job last ran.
#[derive(Debug, Default)]
pub struct JobFires {
    pending: VecDeque<Fire>,
    /// A FIRE_ONCE_NOW fire was missed: the job's next run goes out as its misfire trigger.
    owes_compensation: bool,
    /// When the last of the job's fires passed its last check: it stands for the fires due until
    /// [`MARGIN_MS`] after it, decided or not.
    last_run_ms: Option<i64>,
}

impl JobFires {
    pub fn add(&mut self, fire: Fire) {
        let at = self
            .pending
            .partition_point(|f| (f.release_ms, f.instant_ms) <= (fire.release_ms, fire.instant_ms));
        self.pending.insert(at, fire);
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty() && !self.owes_compensation
    }

    pub fn pending(&self) -> impl Iterator<Item = &Fire> {
        self.pending.iter()
    }

    /// Removes the pending fires `keep` rejects (a job stopped or rescheduled in the console) and returns them.
    pub fn remove_where(&mut self, mut reject: impl FnMut(&Fire) -> bool) -> Vec<Fire> {
        let (rejected, kept): (Vec<Fire>, Vec<Fire>) = self.pending.drain(..).partition(|f| reject(f));
        self.pending = kept.into();
        rejected
    }

    /// When the job's next fire after `fire` goes out: the next pending one's release, else the schedule's
    /// next instant after the fire (`schedule_next`, from its release for a catch-up, whose pass computed
    /// the job's next time from then); `None` when the schedule has no further fire. An orphaned fire's
    /// last check goes by it, as its decision saw it (see [`orphan_check`]).
    pub fn successor(&self, fire: &Fire, schedule_next: &mut dyn FnMut(i64) -> Option<i64>) -> Option<i64> {
        match self.pending.iter().find(|f| (f.release_ms, f.instant_ms) > (fire.release_ms, fire.instant_ms))
        {
            Some(next) => Some(next.release_ms),
            None => schedule_next(if fire.kind == Kind::Regular { fire.instant_ms } else { fire.release_ms }),
        }
    }

    /// Decides at `now_ms` every fire released at or before `due_through_ms` (at most `now_ms`: the fires
    /// the leader may send), oldest first: older ones collapse into the newest, which is sent unless its
    /// successor is due within [`MARGIN_MS`] as well.
    pub fn decide(
        &mut self,
        now_ms: i64,
        due_through_ms: i64,
        fire_once_now: bool,
        schedule_next: &mut dyn FnMut(i64) -> Option<i64>,
    ) -> Vec<(Fire, Verdict)> {
        let due = self.pending.iter().take_while(|f| f.release_ms <= due_through_ms.min(now_ms)).count();
        let mut decided = Vec::with_capacity(due);
        for _ in 0..due {
            let Some(fire) = self.pending.pop_front() else { break };
            let newest = decided.len() + 1 == due;
            let verdict = if newest {
                self.verdict(&fire, now_ms, fire_once_now, schedule_next)
            } else {
                Verdict::Collapsed
            };
            if verdict == Verdict::Collapsed {
                self.collapse(&fire, now_ms, fire_once_now);
            }
            decided.push((fire, verdict));
        }
        decided
    }

    /// Whether another run of the job stands for `fire` at `now_ms`: its next fire is due within the
    /// margin, or the job ran since the margin before `fire` was due (a later fire, decided while this one
    /// waited on its way, went out first).
    fn stood_for(&self, fire: &Fire, now_ms: i64, schedule_next: &mut dyn FnMut(i64) -> Option<i64>) -> bool {
        self.last_run_ms.is_some_and(|ran| ran >= fire.release_ms - MARGIN_MS)
            || self.successor(fire, schedule_next).is_some_and(|next| next <= now_ms + MARGIN_MS)
    }

    fn verdict(
        &mut self,
        fire: &Fire,
        now_ms: i64,
        fire_once_now: bool,
        schedule_next: &mut dyn FnMut(i64) -> Option<i64>,
    ) -> Verdict {
        if self.stood_for(fire, now_ms, schedule_next) {
            return Verdict::Collapsed;
        }
        let late = misfired(fire.instant_ms, now_ms);
        if fire_once_now && (self.owes_compensation || late || fire.kind == Kind::Compensation) {
            self.owes_compensation = false;
            Verdict::Send { compensation: true }
        } else if late {
            Verdict::Misfired
        } else {
            Verdict::Send { compensation: false }
        }
    }

    /// A fire not sent because a later one stands for it passes its compensation on.
    fn collapse(&mut self, fire: &Fire, now_ms: i64, fire_once_now: bool) {
        if fire_once_now && (fire.kind == Kind::Compensation || misfired(fire.instant_ms, now_ms)) {
            self.owes_compensation = true;
        }
    }

    /// The last check before a decided fire's `/run` is written (the write may have waited for a
    /// connection or a permit). Another run stands for it if the job's next fire has come within the margin
    /// or a later fire went out (see [`JobFires::stood_for`]): it collapses into that one, passing on a
    /// compensation it carried. A regular fire that became a misfire on its way follows the misfire rule.
    /// Otherwise it goes out now, and the job's later fires count from this run.
    pub fn last_check(
        &mut self,
        fire: &Fire,
        compensation: bool,
        now_ms: i64,
        fire_once_now: bool,
        schedule_next: &mut dyn FnMut(i64) -> Option<i64>,
    ) -> LastCheck {
        if self.stood_for(fire, now_ms, schedule_next) {
            self.owes_compensation |= compensation;
            self.collapse(fire, now_ms, fire_once_now);
            return LastCheck::Collapsed;
        }
        if !compensation && misfired(fire.instant_ms, now_ms) {
            return if fire_once_now { LastCheck::Compensate } else { LastCheck::Misfired };
        }
        self.last_run_ms = Some(now_ms);
        LastCheck::Send
    }

    /// A decided fire held back unsent (its watermark was late): pending again, to be decided anew, and a
    /// compensation it carried owed again.
    pub fn put_back(&mut self, fire: Fire, compensation: bool) {
        self.owes_compensation |= compensation;
        self.add(fire);
    }
}

/// What the last check of a decided fire comes to, right before its `/run` is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LastCheck {
    /// Written now.
    Send,
    /// Another run stands for it; a compensation it carried is owed again.
    Collapsed,
    /// It became a misfire on its way (its connection came late): DO_NOTHING skips it.
    Misfired,
    /// It became a misfire on its way and its job is FIRE_ONCE_NOW: it goes back to be decided anew, and
    /// goes out as the job's compensation.
    Compensate,
}

/// The last check of a fire whose term ended while it waited for its connection: another admin leads (or
/// this one again, in a later term) and sends the job's next fires, knowing nothing of this one. It gives
/// way once its successor (`successor_ms`, taken when it was decided) is due within the margin; a
/// DO_NOTHING fire that became a misfire is skipped. A FIRE_ONCE_NOW fire that became one still goes out,
/// the job's one run for its instant: no other admin owes it a compensation.
pub fn orphan_check(
    fire: &Fire,
    compensation: bool,
    successor_ms: Option<i64>,
    now_ms: i64,
    fire_once_now: bool,
) -> LastCheck {
    if successor_ms.is_some_and(|next| next <= now_ms + MARGIN_MS) {
        LastCheck::Collapsed
    } else if !compensation && !fire_once_now && misfired(fire.instant_ms, now_ms) {
        LastCheck::Misfired
    } else {
        LastCheck::Send
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: i64 = 1_700_000_000_000;

    fn fire(log_id: i64, instant: i64) -> Fire {
        Fire {
            log_id,
            instant_ms: instant,
            release_ms: instant,
            kind: Kind::Regular,
            planned_at_ms: instant - 5_000,
        }
    }

    /// Every second, as `* * * * * ?`.
    fn every_second(after: i64) -> Option<i64> {
        Some(after - after.rem_euclid(1000) + 1000)
    }

    fn verdicts(decided: &[(Fire, Verdict)]) -> Vec<(i64, Verdict)> {
        decided.iter().map(|(f, v)| (f.log_id, *v)).collect()
    }

    fn job(fires: &[Fire]) -> JobFires {
        let mut job = JobFires::default();
        for f in fires {
            job.add(*f);
        }
        job
    }

    #[test]
    fn an_on_time_fire_is_sent_and_later_ones_wait() {
        let mut j = job(&[fire(2, T + 1_000), fire(1, T)]);
        assert_eq!(
            verdicts(&j.decide(T + 3, T + 3, false, &mut every_second)),
            vec![(1, Verdict::Send { compensation: false })]
        );
        assert_eq!(j.pending().count(), 1);
        assert_eq!(verdicts(&j.decide(T + 999, T + 999, false, &mut every_second)), vec![]);
    }

    #[test]
    fn a_lag_below_the_period_loses_nothing() {
        let mut j = job(&[fire(1, T)]);
        assert_eq!(
            verdicts(&j.decide(T + 899, T + 899, false, &mut every_second)),
            vec![(1, Verdict::Send { compensation: false })]
        );
    }

    #[test]
    fn late_fires_collapse_into_the_newest_due_one() {
        // A stall: five fires due at once, the sixth not yet.
        let mut j = job(&(0..6).map(|k| fire(k, T + k * 1_000)).collect::<Vec<_>>());
        let decided = j.decide(T + 4_500, T + 4_500, false, &mut every_second);
        let mut expected: Vec<(i64, Verdict)> = (0..4).map(|k| (k, Verdict::Collapsed)).collect();
        expected.push((4, Verdict::Send { compensation: false }));
        assert_eq!(verdicts(&decided), expected);
        assert_eq!(j.pending().count(), 1, "the next regular fire stays");
    }

    #[test]
    fn a_fire_whose_successor_is_about_to_go_collapses_into_it() {
        let mut j = job(&[fire(1, T), fire(2, T + 1_000)]);
        assert_eq!(
            verdicts(&j.decide(T + 905, T + 905, false, &mut every_second)),
            vec![(1, Verdict::Collapsed)]
        );
        // Without a planned successor, the schedule's next instant counts (the pass plans it late).
        let mut j = job(&[fire(1, T)]);
        assert_eq!(
            verdicts(&j.decide(T + 950, T + 950, false, &mut every_second)),
            vec![(1, Verdict::Collapsed)]
        );
    }

    #[test]
    fn a_schedule_without_a_next_fire_sends_however_late() {
        let mut j = job(&[fire(1, T)]);
        assert_eq!(
            verdicts(&j.decide(T + 3_000, T + 3_000, false, &mut |_| None)),
            vec![(1, Verdict::Send { compensation: false })]
        );
    }

    #[test]
    fn more_than_the_threshold_late_follows_the_misfire_strategy() {
        let mut every_minute = |after: i64| Some(after - after.rem_euclid(60_000) + 60_000);
        let mut j = job(&[fire(1, T)]);
        assert_eq!(
            verdicts(&j.decide(T + 5_001, T + 5_001, false, &mut every_minute)),
            vec![(1, Verdict::Misfired)]
        );
        let mut j = job(&[fire(1, T)]);
        assert_eq!(
            verdicts(&j.decide(T + 5_001, T + 5_001, true, &mut every_minute)),
            vec![(1, Verdict::Send { compensation: true })]
        );
        let mut j = job(&[fire(1, T)]);
        assert_eq!(
            verdicts(&j.decide(T + 5_000, T + 5_000, true, &mut every_minute)),
            vec![(1, Verdict::Send { compensation: false })],
            "the threshold itself is late, not missed"
        );
    }

    #[test]
    fn a_missed_fire_once_now_fire_makes_the_next_run_the_compensation() {
        // A 6 s outage: the held fires are all due when the database is back; the pass's catch-up runs.
        let mut j = job(&(0..5).map(|k| fire(k, T + k * 1_000)).collect::<Vec<_>>());
        let decided = j.decide(T + 6_020, T + 6_020, true, &mut every_second);
        assert!(decided.iter().all(|(_, v)| *v == Verdict::Collapsed), "{decided:?}");
        j.add(Fire {
            log_id: 9,
            instant_ms: T + 5_000,
            release_ms: T + 6_500,
            kind: Kind::CatchUp,
            planned_at_ms: T + 6_500,
        });
        j.add(fire(10, T + 7_000));
        let decided = j.decide(T + 6_502, T + 6_502, true, &mut every_second);
        assert_eq!(verdicts(&decided), vec![(9, Verdict::Send { compensation: true })]);
        assert_eq!(
            verdicts(&j.decide(T + 7_001, T + 7_001, true, &mut every_second)),
            vec![(10, Verdict::Send { compensation: false })],
            "once"
        );
    }

    #[test]
    fn do_nothing_jobs_are_never_compensated() {
        let mut j = job(&(0..5).map(|k| fire(k, T + k * 1_000)).collect::<Vec<_>>());
        j.decide(T + 6_020, T + 6_020, false, &mut every_second);
        j.add(Fire {
            log_id: 9,
            instant_ms: T + 5_000,
            release_ms: T + 6_500,
            kind: Kind::CatchUp,
            planned_at_ms: T + 6_500,
        });
        assert_eq!(
            verdicts(&j.decide(T + 6_502, T + 6_502, false, &mut every_second)),
            vec![(9, Verdict::Send { compensation: false })]
        );
        assert!(j.is_empty());
    }

    #[test]
    fn a_catch_up_counts_its_successor_from_its_release() {
        // Missed by 3 s, caught up at T + 3_200: the next instant is T + 4_000, not T + 1_000.
        let mut j = job(&[Fire {
            log_id: 1,
            instant_ms: T,
            release_ms: T + 3_200,
            kind: Kind::CatchUp,
            planned_at_ms: T + 3_200,
        }]);
        assert_eq!(
            verdicts(&j.decide(T + 3_201, T + 3_201, false, &mut every_second)),
            vec![(1, Verdict::Send { compensation: false })]
        );
    }

    #[test]
    fn a_compensation_collapsed_into_the_next_fire_goes_out_with_it() {
        let mut every_minute = |after: i64| Some(after - after.rem_euclid(60_000) + 60_000);
        let minute = T - T.rem_euclid(60_000) + 60_000;
        let mut j = job(&[
            Fire {
                log_id: 1,
                instant_ms: minute - 60_000,
                release_ms: minute - 50,
                kind: Kind::Compensation,
                planned_at_ms: minute - 50,
            },
            fire(2, minute),
        ]);
        assert_eq!(
            verdicts(&j.decide(minute - 40, minute - 40, true, &mut every_minute)),
            vec![(1, Verdict::Collapsed)]
        );
        assert_eq!(
            verdicts(&j.decide(minute + 1, minute + 1, true, &mut every_minute)),
            vec![(2, Verdict::Send { compensation: true })]
        );
    }

    #[test]
    fn a_fire_held_up_before_its_write_gives_way_to_its_successor() {
        // Decided at T + 10, its last check comes when its task gets to it.
        let decided = || {
            let mut j = job(&[fire(1, T), fire(2, T + 1_000)]);
            let (sent, _) = j.decide(T + 10, T + 10, true, &mut every_second)[0];
            (j, sent)
        };
        let (mut j, sent) = decided();
        assert_eq!(j.last_check(&sent, true, T + 899, true, &mut every_second), LastCheck::Send);
        let (mut j, sent) = decided();
        assert_eq!(j.last_check(&sent, true, T + 900, true, &mut every_second), LastCheck::Collapsed);
        assert_eq!(
            verdicts(&j.decide(T + 1_001, T + 1_001, true, &mut every_second)),
            vec![(2, Verdict::Send { compensation: true })],
            "the compensation is owed again"
        );
    }

    #[test]
    fn a_fire_whose_connection_came_past_the_misfire_limit_follows_the_misfire_rule() {
        // A job every minute, decided on time, its connection 5.5 s late (a hung executor held them all).
        let mut every_minute = |after: i64| Some(after - after.rem_euclid(60_000) + 60_000);
        let late = T + 5_500;
        for (fire_once_now, expected) in [(false, LastCheck::Misfired), (true, LastCheck::Compensate)] {
            let mut j = job(&[fire(1, T)]);
            let (sent, _) = j.decide(T, T, fire_once_now, &mut every_minute)[0];
            assert_eq!(j.last_check(&sent, false, late, fire_once_now, &mut every_minute), expected);
        }
        // Put back, the FIRE_ONCE_NOW fire goes out once as the job's compensation, however late then.
        let mut j = job(&[fire(1, T)]);
        let (sent, _) = j.decide(T, T, true, &mut every_minute)[0];
        j.put_back(sent, true);
        assert_eq!(
            verdicts(&j.decide(late, late, true, &mut every_minute)),
            vec![(1, Verdict::Send { compensation: true })]
        );
        assert_eq!(j.last_check(&sent, true, T + 9_000, true, &mut every_minute), LastCheck::Send);
    }

    #[test]
    fn an_orphaned_fire_gives_way_to_its_successor_and_a_skipped_misfire() {
        let sent = fire(1, T);
        let next = Some(T + 1_000);
        assert_eq!(orphan_check(&sent, false, next, T + 899, false), LastCheck::Send);
        assert_eq!(orphan_check(&sent, false, next, T + 900, false), LastCheck::Collapsed);
        assert_eq!(
            orphan_check(&sent, true, next, T + 900, true),
            LastCheck::Collapsed,
            "a compensation too"
        );
        let hourly = Some(T + 3_600_000);
        assert_eq!(orphan_check(&sent, false, hourly, T + 5_001, false), LastCheck::Misfired);
        assert_eq!(
            orphan_check(&sent, false, hourly, T + 5_001, true),
            LastCheck::Send,
            "FIRE_ONCE_NOW runs"
        );
        assert_eq!(orphan_check(&sent, true, hourly, T + 9_000, false), LastCheck::Send, "a compensation");
        assert_eq!(orphan_check(&sent, false, None, T + 100, false), LastCheck::Send, "no further fire");
    }

    #[test]
    fn a_fire_prepared_ahead_and_put_back_is_decided_anew_when_it_can_go() {
        // Decided 20 ms ahead of its instant, then held past it: the watermark never came.
        let mut j = job(&[fire(1, T), fire(2, T + 1_000)]);
        let decided = j.decide(T, T, true, &mut every_second);
        let (held, verdict) = decided[0];
        assert_eq!(verdict, Verdict::Send { compensation: false });
        j.put_back(held, false);
        assert_eq!(j.pending().map(|f| f.log_id).collect::<Vec<_>>(), vec![1, 2], "in release order");
        // Decided again once the watermark came, 1.5 s late: the fire after it stands for it.
        let decided = j.decide(T + 1_500, T + 1_500, true, &mut every_second);
        assert_eq!(
            verdicts(&decided),
            vec![(1, Verdict::Collapsed), (2, Verdict::Send { compensation: false })]
        );
        // A compensation it carried is owed again.
        let mut j = job(&[Fire { kind: Kind::Compensation, ..fire(1, T) }]);
        let (held, _) = j.decide(T, T, true, &mut every_second)[0];
        j.put_back(held, true);
        assert_eq!(
            verdicts(&j.decide(T + 100, T + 100, true, &mut every_second)),
            vec![(1, Verdict::Send { compensation: true })]
        );
    }

    #[test]
    fn cancelled_fires_are_removed() {
        let mut j = job(&[fire(1, T), fire(2, T + 1_000)]);
        let removed = j.remove_where(|f| f.log_id == 2);
        assert_eq!(removed.iter().map(|f| f.log_id).collect::<Vec<_>>(), vec![2]);
        assert_eq!(j.pending().map(|f| f.log_id).collect::<Vec<_>>(), vec![1]);
    }

    /// A job's fires as the dispatcher holds them when the database is back after an outage, and when it is.
    type Outage = fn() -> (JobFires, i64);

    /// A job's fires when the database is back, at T + 6.55 s, after a 6 s outage that the plan reaches past
    /// (log 1-20, due T..T+19 s), and when it is back.
    fn after_a_short_outage() -> (JobFires, i64) {
        (job(&(0..20).map(|k| fire(k + 1, T + k * 1_000)).collect::<Vec<_>>()), T + 6_550)
    }

    /// A job's fires after a 20 s outage, as the dispatcher holds them once the database is back: the
    /// late fires planned before it (log 1-6, due T..T+5 s), and the first pass's plan, at T + 20.5 s: the
    /// compensation for the missed next time (log 9, released at once) and the next instants (log 10 on).
    fn after_a_long_outage() -> (JobFires, i64) {
        let pass = T + 20_500;
        let mut fires: Vec<Fire> = (0..6).map(|k| fire(k + 1, T + k * 1_000)).collect();
        fires.push(Fire {
            log_id: 9,
            instant_ms: T + 6_000,
            release_ms: pass,
            kind: Kind::Compensation,
            planned_at_ms: pass,
        });
        fires.extend((0..16).map(|k| fire(10 + k, T + 21_000 + k * 1_000)));
        (job(&fires), pass)
    }

    /// The fires are prepared this long ahead, as `crate::scheduler::dispatch` decides them.
    const PREPARE_AHEAD_MS: i64 = 20;

    /// Plays the fires of a FIRE_ONCE_NOW job every second from `from` to `to` as the dispatcher does: each
    /// millisecond it decides the fires due within [`PREPARE_AHEAD_MS`], and a decided fire has its last
    /// check at its release, or `held_up` milliseconds after its decision (its task waited: a slow machine,
    /// a full lane). Returns what went out: (when, log id, compensation).
    fn play(j: &mut JobFires, from: i64, to: i64, held_up: impl Fn(&Fire) -> i64) -> Vec<(i64, i64, bool)> {
        let mut on_their_way: Vec<(i64, Fire, bool)> = Vec::new();
        let mut sent = Vec::new();
        for now in from..=to {
            for (fire, verdict) in j.decide(now, now + PREPARE_AHEAD_MS, true, &mut every_second) {
                if let Verdict::Send { compensation } = verdict {
                    on_their_way.push((fire.release_ms.max(now + held_up(&fire)), fire, compensation));
                }
            }
            let (due, waiting): (Vec<_>, Vec<_>) = on_their_way.into_iter().partition(|(at, ..)| *at <= now);
            on_their_way = waiting;
            for (_, fire, compensation) in due {
                match j.last_check(&fire, compensation, now, true, &mut every_second) {
                    LastCheck::Send => sent.push((now, fire.log_id, compensation)),
                    LastCheck::Compensate => j.put_back(fire, true),
                    LastCheck::Collapsed | LastCheck::Misfired => {}
                }
            }
        }
        sent
    }

    /// Runs of the job more than [`MARGIN_MS`] apart, never two in one second of the clock, and at most one
    /// compensation.
    fn assert_never_bunched(sent: &[(i64, i64, bool)], case: &str) {
        for pair in sent.windows(2) {
            assert!(pair[1].0 - pair[0].0 > MARGIN_MS, "{case}: {sent:?}");
            assert_ne!(pair[1].0 / 1_000, pair[0].0 / 1_000, "{case}: {sent:?}");
        }
        assert!(compensations(sent) <= 1, "{case}: {sent:?}");
    }

    fn compensations(sent: &[(i64, i64, bool)]) -> usize {
        sent.iter().filter(|(.., compensation)| *compensation).count()
    }

    #[test]
    fn a_compensation_held_up_on_its_way_gives_way_to_the_next_fire_that_went_out() {
        // Back at T + 6.55 s, the fire of T + 6 s goes out as the compensation (the older ones collapse
        // into it), but its task is held up 550 ms: meanwhile the fire of T + 7 s is decided and goes out.
        let (mut j, back) = after_a_short_outage();
        let sent = play(&mut j, back, T + 9_500, |f| if f.log_id == 7 { 550 } else { 0 });
        assert_eq!(
            sent.iter().filter(|(at, ..)| *at < T + 8_000).count(),
            1,
            "the job ran once before T + 8 s: {sent:?}"
        );
        assert_eq!(compensations(&sent), 1, "{sent:?}");
        assert_never_bunched(&sent, "the compensation held up 550 ms");
    }

    #[test]
    fn whichever_fire_is_held_up_on_its_way_the_job_runs_once_a_second_and_is_compensated_once() {
        let outages: [(&str, Outage, [i64; 3]); 2] =
            [("6 s", after_a_short_outage, [7, 8, 9]), ("20 s", after_a_long_outage, [9, 10, 11])];
        for (outage, fires, held_ones) in outages {
            for held in held_ones {
                for held_up in (0..=2_500).step_by(10) {
                    let (mut j, back) = fires();
                    let sent =
                        play(&mut j, back, back + 10_000, |f| if f.log_id == held { held_up } else { 0 });
                    let case = format!("{outage} outage, log {held} held up {held_up} ms");
                    assert_never_bunched(&sent, &case);
                    assert_eq!(compensations(&sent), 1, "{case}: {sent:?}");
                    assert!(sent.len() >= 7, "{case}: the job runs on: {sent:?}");
                }
            }
        }
    }

    #[test]
    fn a_lag_on_every_fire_never_bunches_runs() {
        let outages: [(&str, Outage); 2] = [("6 s", after_a_short_outage), ("20 s", after_a_long_outage)];
        for (outage, fires) in outages {
            for held_up in (0..=2_500).step_by(10) {
                let (mut j, back) = fires();
                let sent = play(&mut j, back, back + 10_000, |_| held_up);
                assert_never_bunched(&sent, &format!("{outage} outage, every fire held up {held_up} ms"));
            }
        }
    }
}
