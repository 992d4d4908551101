//! What the console changed between a fire's plan and its `/run` (issue: the engine's promise through
//! faults), and why a planned fire is not sent.
//!
//! A schedule pass plans fires up to five seconds ahead. Meanwhile the job may be stopped, deleted or
//! rescheduled in the console: its planned fires are then checked against the job as stored just before
//! they are sent, and those the user cancelled are removed. How late a fire may be is
//! [`super::fires`]'s question.

use super::codes::TriggerStatus;
use super::schedule::{next_time, PRE_READ_MS};
use crate::storage::JobInfo;
use crate::time::Zone;

/// A fire later than this is a misfire: 2.4.2's pre-read window, the bound of its case (B) "late fire".
pub const MISFIRE_THRESHOLD_MS: i64 = PRE_READ_MS;

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
    /// Late, and a later fire of the job stands for it.
    Collapsed,
    /// Its admin lost the lead before the send (frozen or cut off past its lease): a successor leads, and
    /// took this fire for sent.
    Deposed,
}

impl DropReason {
    pub const ALL: [DropReason; 6] = [
        DropReason::Deleted,
        DropReason::Stopped,
        DropReason::Rescheduled,
        DropReason::Misfire,
        DropReason::Collapsed,
        DropReason::Deposed,
    ];

    /// A short label for log lines and metrics.
    pub fn label(self) -> &'static str {
        match self {
            DropReason::Deleted => "job deleted",
            DropReason::Stopped => "job stopped",
            DropReason::Rescheduled => "job rescheduled",
            DropReason::Misfire => "misfire, DO_NOTHING",
            DropReason::Collapsed => "late, collapsed into a later fire of the job",
            DropReason::Deposed => "lead lost before the send",
        }
    }

    /// Whether the user cancelled the fire in the console (its row is removed), rather than the engine
    /// settling it (its row says why).
    pub fn is_cancellation(self) -> bool {
        matches!(self, DropReason::Deleted | DropReason::Stopped | DropReason::Rescheduled)
    }
}

/// Why a fire of `job` (its row as stored now; `None` when it was deleted) for `instant_ms`, planned at
/// `planned_at_ms`, is cancelled, if it is. `updated_ms` is the job's `update_time`, which the console sets
/// on every change and a schedule pass never does: only a job changed after the plan is checked against
/// its current schedule.
pub fn cancelled(
    job: Option<&JobInfo>,
    updated_ms: Option<i64>,
    instant_ms: i64,
    planned_at_ms: i64,
    cron_zone: Zone,
) -> Option<DropReason> {
    let Some(job) = job else { return Some(DropReason::Deleted) };
    if job.trigger_status != TriggerStatus::Running {
        return Some(DropReason::Stopped);
    }
    // update_time has whole seconds: a change in the second of the plan counts as after it.
    let changed_after_plan = updated_ms.is_some_and(|t| t >= planned_at_ms - planned_at_ms.rem_euclid(1000));
    (changed_after_plan && !still_planned(job, instant_ms, cron_zone)).then_some(DropReason::Rescheduled)
}

/// Whether the job's current schedule still has a fire at `at_ms`: for CRON, the expression fires then;
/// for FIX_RATE (whose instants depend on history), the stored next time is a whole number of periods
/// after it (a pass plans up to five seconds ahead, so a short period has several fires planned).
fn still_planned(job: &JobInfo, at_ms: i64, cron_zone: Zone) -> bool {
    let conf = job.schedule_conf.as_deref();
    match job.schedule_type.as_str() {
        "CRON" => next_time("CRON", conf, at_ms - 1, cron_zone) == Ok(Some(at_ms)),
        "FIX_RATE" => match next_time("FIX_RATE", conf, at_ms, cron_zone) {
            Ok(Some(next)) => {
                let (period, ahead) = (next - at_ms, job.trigger_next_time - at_ms);
                ahead > 0 && ahead % period == 0
            }
            _ => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_700_000_000_000;
    const UTC: Zone = Zone::Named(chrono_tz::UTC);

    fn job() -> JobInfo {
        JobInfo {
            schedule_type: "CRON".into(),
            schedule_conf: Some("* * * * * ?".into()),
            misfire_strategy: "DO_NOTHING".into(),
            trigger_status: TriggerStatus::Running,
            trigger_next_time: T0 + 1_000,
            ..JobInfo::sample(1)
        }
    }

    #[test]
    fn an_unchanged_job_keeps_its_fires() {
        assert_eq!(cancelled(Some(&job()), None, T0, T0 - 500, UTC), None);
    }

    #[test]
    fn stopped_and_deleted_jobs_send_nothing() {
        let stopped = JobInfo { trigger_status: TriggerStatus::Stopped, ..job() };
        assert_eq!(cancelled(Some(&stopped), None, T0, T0 - 500, UTC), Some(DropReason::Stopped));
        assert_eq!(cancelled(None, None, T0, T0 - 500, UTC), Some(DropReason::Deleted));
    }

    #[test]
    fn a_change_after_the_plan_drops_the_fire_only_if_the_schedule_no_longer_has_it() {
        let every_minute = JobInfo { schedule_conf: Some("0 * * * * ?".into()), ..job() };
        let (at, planned) = (T0 + 1_000, T0 + 500); // 22:13:21, not a whole minute
        assert_eq!(
            cancelled(Some(&every_minute), Some(T0 + 800), at, planned, UTC),
            Some(DropReason::Rescheduled)
        );
        assert_eq!(
            cancelled(Some(&every_minute), Some(T0 - 2_000), at, planned, UTC),
            None,
            "changed before the plan"
        );
        assert_eq!(
            cancelled(Some(&job()), Some(T0 + 800), at, planned, UTC),
            None,
            "a description edit keeps the fire"
        );
        // The plan was at T0 + 500: an update stamped with that whole second counts as after it.
        assert_eq!(cancelled(Some(&every_minute), Some(T0), at, planned, UTC), Some(DropReason::Rescheduled));
    }

    #[test]
    fn fix_rate_fires_are_kept_while_the_next_time_follows_from_them() {
        let rate = JobInfo {
            schedule_type: "FIX_RATE".into(),
            schedule_conf: Some("10".into()),
            trigger_next_time: T0 + 10_000,
            ..job()
        };
        assert_eq!(cancelled(Some(&rate), Some(T0), T0, T0 - 500, UTC), None);
        let rerated = JobInfo { schedule_conf: Some("30".into()), ..rate.clone() };
        assert_eq!(cancelled(Some(&rerated), Some(T0), T0, T0 - 500, UTC), Some(DropReason::Rescheduled));
        // Every second, planned five seconds ahead: the fire at T0 is still one of the rate's.
        let fast = JobInfo { schedule_conf: Some("1".into()), trigger_next_time: T0 + 5_000, ..rate };
        assert_eq!(cancelled(Some(&fast), Some(T0), T0, T0 - 500, UTC), None);
        assert_eq!(cancelled(Some(&fast), Some(T0), T0 + 500, T0 - 500, UTC), Some(DropReason::Rescheduled));
    }
}
