//! What becomes of a planned fire when it is about to be sent (issue: the engine's promise through faults).
//!
//! A schedule pass plans fires up to five seconds ahead. Between the plan and the `/run` the job may have
//! been stopped or rescheduled in the console, or the admin may have been held up (a database outage, a
//! stalled lane): the fire is then checked again, and a fire more than [`MISFIRE_THRESHOLD_MS`] late is
//! settled by its job's misfire strategy, as the schedule pass settles a missed next time (spec 4.1 case A).

use super::schedule::{next_time, MisfireStrategy, PRE_READ_MS};
use super::PlannedFire;
use crate::storage::JobInfo;
use crate::time::Zone;

/// A fire later than this is a misfire: 2.4.2's pre-read window, the bound of its case (B) "late fire".
pub const MISFIRE_THRESHOLD_MS: i64 = PRE_READ_MS;

/// The decision for one planned fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// On time (or late within the threshold): send it.
    Send,
    /// Late, with FIRE_ONCE_NOW: send it as the job's one misfire compensation, unless another fire of
    /// the job went out since the missed instant.
    Compensate,
    /// Not sent; its log row is removed.
    Drop(DropReason),
}

/// Why a planned fire is not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// The job was deleted after the plan.
    Deleted,
    /// The job was stopped after the plan.
    Stopped,
    /// The job's schedule was changed after the plan and no longer fires at the planned instant.
    Rescheduled,
    /// Late, with DO_NOTHING.
    Misfire,
    /// Late, and a later fire of the job, or a run since its instant, stands for it.
    Collapsed,
}

impl DropReason {
    pub const ALL: [DropReason; 5] =
        [DropReason::Deleted, DropReason::Stopped, DropReason::Rescheduled, DropReason::Misfire, DropReason::Collapsed];

    /// A short label for log lines and metrics.
    pub fn label(self) -> &'static str {
        match self {
            DropReason::Deleted => "job deleted",
            DropReason::Stopped => "job stopped",
            DropReason::Rescheduled => "job rescheduled",
            DropReason::Misfire => "misfire, DO_NOTHING",
            DropReason::Collapsed => "late, collapsed into a later fire or run of the job",
        }
    }
}

/// Decides a planned fire of `job` (its row as stored now; `None` when it was deleted) at `now_ms`.
/// `updated_ms` is the job's `update_time`, which the console sets on every change and a schedule pass
/// never does: only a job changed after the plan is checked against its current schedule.
pub fn release(job: Option<&JobInfo>, updated_ms: Option<i64>, fire: &PlannedFire, now_ms: i64, cron_zone: Zone) -> Release {
    let Some(job) = job else { return Release::Drop(DropReason::Deleted) };
    if job.trigger_status != 1 {
        return Release::Drop(DropReason::Stopped);
    }
    // update_time has whole seconds: a change in the second of the plan counts as after it.
    let changed_after_plan = updated_ms.is_some_and(|t| t >= fire.planned_at_ms - fire.planned_at_ms.rem_euclid(1000));
    if changed_after_plan && !still_planned(job, fire.at_ms, cron_zone) {
        return Release::Drop(DropReason::Rescheduled);
    }
    if now_ms - fire.at_ms <= MISFIRE_THRESHOLD_MS {
        return Release::Send;
    }
    match MisfireStrategy::from_name(&job.misfire_strategy) {
        Some(MisfireStrategy::FireOnceNow) => Release::Compensate,
        _ => Release::Drop(DropReason::Misfire),
    }
}

/// Whether the job's current schedule still has a fire at `at_ms`: for CRON, the expression fires then;
/// for FIX_RATE (whose instants depend on history), the stored next time is one period after it.
fn still_planned(job: &JobInfo, at_ms: i64, cron_zone: Zone) -> bool {
    let conf = job.schedule_conf.as_deref();
    match job.schedule_type.as_str() {
        "CRON" => next_time("CRON", conf, at_ms - 1, cron_zone) == Ok(Some(at_ms)),
        "FIX_RATE" => next_time("FIX_RATE", conf, at_ms, cron_zone) == Ok(Some(job.trigger_next_time)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_700_000_000_000;
    const UTC: Zone = Zone::Named(chrono_tz::UTC);

    fn job(misfire: &str) -> JobInfo {
        JobInfo {
            schedule_type: "CRON".into(),
            schedule_conf: Some("* * * * * ?".into()),
            misfire_strategy: misfire.into(),
            trigger_status: 1,
            trigger_next_time: T0 + 1_000,
            ..JobInfo::sample(1)
        }
    }

    fn fire(at: i64) -> PlannedFire {
        PlannedFire { at_ms: at, planned_at_ms: at - 500, log_id: 7, marked: false }
    }

    #[test]
    fn on_time_and_slightly_late_fires_are_sent() {
        let j = job("DO_NOTHING");
        assert_eq!(release(Some(&j), None, &fire(T0), T0 + 3, UTC), Release::Send);
        assert_eq!(release(Some(&j), None, &fire(T0), T0 + 5_000, UTC), Release::Send, "the threshold itself is late, not missed");
    }

    #[test]
    fn a_fire_more_than_five_seconds_late_follows_the_misfire_strategy() {
        assert_eq!(release(Some(&job("DO_NOTHING")), None, &fire(T0), T0 + 5_001, UTC), Release::Drop(DropReason::Misfire));
        assert_eq!(release(Some(&job("FIRE_ONCE_NOW")), None, &fire(T0), T0 + 20_000, UTC), Release::Compensate);
        assert_eq!(release(Some(&job("nonsense")), None, &fire(T0), T0 + 20_000, UTC), Release::Drop(DropReason::Misfire));
    }

    #[test]
    fn stopped_and_deleted_jobs_send_nothing() {
        let stopped = JobInfo { trigger_status: 0, ..job("FIRE_ONCE_NOW") };
        assert_eq!(release(Some(&stopped), None, &fire(T0), T0, UTC), Release::Drop(DropReason::Stopped));
        assert_eq!(release(None, None, &fire(T0), T0, UTC), Release::Drop(DropReason::Deleted));
    }

    #[test]
    fn a_change_after_the_plan_drops_the_fire_only_if_the_schedule_no_longer_has_it() {
        let every_minute = JobInfo { schedule_conf: Some("0 * * * * ?".into()), ..job("DO_NOTHING") };
        let f = fire(T0 + 1_000); // 22:13:21, not a whole minute
        assert_eq!(release(Some(&every_minute), Some(T0 + 800), &f, T0 + 1_000, UTC), Release::Drop(DropReason::Rescheduled));
        assert_eq!(release(Some(&every_minute), Some(T0 - 2_000), &f, T0 + 1_000, UTC), Release::Send, "changed before the plan");
        let same = job("DO_NOTHING");
        assert_eq!(release(Some(&same), Some(T0 + 800), &f, T0 + 1_000, UTC), Release::Send, "a description edit keeps the fire");
        // The plan was at T0 + 500: an update stamped with that whole second counts as after it.
        assert_eq!(release(Some(&every_minute), Some(T0), &f, T0 + 1_000, UTC), Release::Drop(DropReason::Rescheduled));
    }

    #[test]
    fn fix_rate_fires_are_kept_while_the_next_time_follows_from_them() {
        let rate = JobInfo {
            schedule_type: "FIX_RATE".into(),
            schedule_conf: Some("10".into()),
            trigger_next_time: T0 + 10_000,
            ..job("DO_NOTHING")
        };
        assert_eq!(release(Some(&rate), Some(T0), &fire(T0), T0, UTC), Release::Send);
        let rerated = JobInfo { schedule_conf: Some("30".into()), ..rate };
        assert_eq!(release(Some(&rerated), Some(T0), &fire(T0), T0, UTC), Release::Drop(DropReason::Rescheduled));
    }
}
