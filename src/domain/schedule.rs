//! Schedule types and the next planned fire of a job (2.4.2: ScheduleTypeEnum, MisfireStrategyEnum,
//! JobScheduleHelper.refreshNextValidTime).

use crate::cron::{CronError, CronExpression};
use crate::domain::codes::TriggerStatus;
use crate::domain::TriggerType;
use crate::i18n::I18n;
use crate::storage::ScheduledJob;
use crate::time::Zone;
use chrono::{DateTime, Local, Utc};
use std::collections::HashMap;
use std::sync::Arc;

/// Serialized as 2.4.2 names them (`NONE`, `CRON`, `FIX_RATE`), in workflow definitions too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ScheduleType {
    None,
    Cron,
    FixRate,
}

impl ScheduleType {
    pub const ALL: [ScheduleType; 3] = [ScheduleType::None, ScheduleType::Cron, ScheduleType::FixRate];

    pub fn from_name(name: &str) -> Option<ScheduleType> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            ScheduleType::None => "NONE",
            ScheduleType::Cron => "CRON",
            ScheduleType::FixRate => "FIX_RATE",
        }
    }

    pub fn i18n_key(self) -> &'static str {
        match self {
            ScheduleType::None => "schedule_type_none",
            ScheduleType::Cron => "schedule_type_cron",
            ScheduleType::FixRate => "schedule_type_fix_rate",
        }
    }
}

/// Serialized as 2.4.2 names them (`DO_NOTHING`, `FIRE_ONCE_NOW`), in workflow definitions too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum MisfireStrategy {
    DoNothing,
    FireOnceNow,
}

impl MisfireStrategy {
    pub const ALL: [MisfireStrategy; 2] = [MisfireStrategy::DoNothing, MisfireStrategy::FireOnceNow];

    pub fn from_name(name: &str) -> Option<MisfireStrategy> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            MisfireStrategy::DoNothing => "DO_NOTHING",
            MisfireStrategy::FireOnceNow => "FIRE_ONCE_NOW",
        }
    }

    pub fn i18n_key(self) -> &'static str {
        match self {
            MisfireStrategy::DoNothing => "misfire_strategy_do_nothing",
            MisfireStrategy::FireOnceNow => "misfire_strategy_fire_once_now",
        }
    }
}

/// Why no next time could be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    #[error("invalid cron expression: {0}")]
    Cron(CronError),
    #[error("invalid fixed rate '{0}': expected a whole number of seconds")]
    FixRate(String),
}

impl ScheduleError {
    /// The console's message in `i18n`'s language: 2.4.2's "Cron" + `system_unvalid` (or `schedule_type` +
    /// `system_unvalid`) first, so that scripts matching those still match, then the reason.
    pub fn message(&self, i18n: &I18n) -> String {
        match self {
            ScheduleError::Cron(e) => i18n.format("jobinfo_cron_unvalid_reason", &[&e.describe(i18n)]),
            ScheduleError::FixRate(_) => i18n.get("jobinfo_fix_rate_unvalid").to_string(),
        }
    }
}

/// The next planned fire strictly after `from_ms`, or `None` when the schedule has no (further) fire.
/// CRON is evaluated in `cron_zone` (the JVM default zone in 2.4.2, the process zone here).
pub fn next_time(
    schedule_type: &str,
    conf: Option<&str>,
    from_ms: i64,
    cron_zone: Zone,
) -> Result<Option<i64>, ScheduleError> {
    let conf = conf.unwrap_or("");
    match ScheduleType::from_name(schedule_type) {
        Some(ScheduleType::Cron) => {
            let cron = CronExpression::parse(conf).map_err(ScheduleError::Cron)?;
            Ok(cron_next(&cron, from_ms, cron_zone))
        }
        Some(ScheduleType::FixRate) => {
            // 2.4.2 multiplies in 32-bit arithmetic and overflows above 2147483 s; we don't.
            let seconds: i64 = conf.trim().parse().map_err(|_| ScheduleError::FixRate(conf.to_string()))?;
            if seconds < 1 {
                return Err(ScheduleError::FixRate(conf.to_string()));
            }
            Ok(Some(from_ms + seconds * 1000))
        }
        Some(ScheduleType::None) | None => Ok(None),
    }
}

/// Parsed cron expressions by text: a schedule pass plans thousands of jobs that share a few
/// expressions, and parsing each one per plan cost more than computing its next time.
#[derive(Default)]
pub struct CronCache {
    parsed: HashMap<String, Result<Arc<CronExpression>, CronError>>,
}

/// Distinct expressions kept; past this the cache starts over (a pass then re-parses as it goes).
const CRON_CACHE_MAX: usize = 10_000;

impl CronCache {
    /// [`next_time`], with each cron expression parsed once.
    pub fn next_time(
        &mut self,
        schedule_type: &str,
        conf: Option<&str>,
        from_ms: i64,
        zone: Zone,
    ) -> Result<Option<i64>, ScheduleError> {
        if ScheduleType::from_name(schedule_type) != Some(ScheduleType::Cron) {
            return next_time(schedule_type, conf, from_ms, zone);
        }
        let text = conf.unwrap_or("");
        if !self.parsed.contains_key(text) {
            if self.parsed.len() >= CRON_CACHE_MAX {
                self.parsed.clear();
            }
            let parsed = CronExpression::parse(text).map(Arc::new);
            self.parsed.insert(text.to_string(), parsed);
        }
        match &self.parsed[text] {
            Ok(cron) => Ok(cron_next(cron, from_ms, zone)),
            Err(e) => Err(ScheduleError::Cron(e.clone())),
        }
    }
}

/// The next fire of a cron expression strictly after `after_ms`, in epoch milliseconds.
pub fn cron_next(cron: &CronExpression, after_ms: i64, zone: Zone) -> Option<i64> {
    let after = DateTime::<Utc>::from_timestamp_millis(after_ms)?;
    match zone {
        Zone::System => cron.next_after(&after.with_timezone(&Local)).map(|t| t.timestamp_millis()),
        Zone::Named(tz) => cron.next_after(&after.with_timezone(&tz)).map(|t| t.timestamp_millis()),
    }
}

/// Jobs due within this window are read ahead and fired on time from the timer wheel.
pub const PRE_READ_MS: i64 = 5000;

/// A job read by a pass is planned this much further than the window: its next pass comes that much
/// later, so a job firing every second is written once every few seconds instead of every second.
pub const PLAN_AHEAD_MS: i64 = 3000;

/// Fires one job may get from one pass, whatever its schedule (none fires more often than once a second).
const MAX_FIRES_PER_PASS: usize = 16;

/// What one schedule pass does with one due job (2.4.2: JobScheduleHelper: misfired, late, or due soon).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobPlan {
    /// A trigger to issue at once, a misfire compensation or a fire late by at most [`PRE_READ_MS`], and
    /// the planned instant it stands for: the missed next time for a compensation; for a late fire the
    /// newest instant of the schedule due by the pass, into which the older ones collapse.
    pub fire_now: Option<(TriggerType, i64)>,
    /// Planned fires to issue exactly at these instants.
    pub fires_at: Vec<i64>,
    pub trigger_status: TriggerStatus,
    pub trigger_last_time: i64,
    pub trigger_next_time: i64,
    /// Why the job was stopped, when it was (no next time, or an invalid schedule).
    pub stopped: Option<Option<ScheduleError>>,
}

/// Plans one due job, with every fire up to `horizon_ms` (at least the end of the window). `now_time` is
/// the pass's time (taken once the lock is held); `current_ms` is the clock when the job is planned
/// (2.4.2 re-reads the clock for each refresh after a late fire).
pub fn plan_job(
    job: &ScheduledJob,
    now_time: i64,
    current_ms: i64,
    horizon_ms: i64,
    cron_zone: Zone,
    crons: &mut CronCache,
) -> JobPlan {
    let next = job.trigger_next_time;
    let mut plan = JobPlan {
        fire_now: None,
        fires_at: Vec::new(),
        trigger_status: job.trigger_status,
        trigger_last_time: job.trigger_last_time,
        trigger_next_time: next,
        stopped: None,
    };
    if now_time > next + PRE_READ_MS {
        // (A) Missed by more than the window.
        if MisfireStrategy::from_name(&job.misfire_strategy) == Some(MisfireStrategy::FireOnceNow) {
            plan.fire_now = Some((TriggerType::Misfire, next));
        }
        plan.refresh(job, current_ms, cron_zone, crons);
    } else if now_time > next {
        // (B) Late by at most the window: fire now, and pre-read the following fires if they are close.
        // The fire stands for the newest instant due: a job whose next time is 1.3 s late fires for the
        // current second, as held fires collapse into the newest, and the next fire is refreshed from now.
        plan.fire_now = Some((TriggerType::Cron, newest_due(job, now_time, cron_zone, crons)));
        plan.refresh(job, current_ms, cron_zone, crons);
    }
    // (C) Due within the window, or once (A) and (B) moved the next time on: fire exactly on time.
    while plan.trigger_status == TriggerStatus::Running
        && plan.trigger_next_time <= horizon_ms.max(now_time + PRE_READ_MS)
        && plan.fires_at.len() < MAX_FIRES_PER_PASS
    {
        let at = plan.trigger_next_time;
        plan.fires_at.push(at);
        plan.refresh(job, at, cron_zone, crons);
    }
    plan
}

/// The newest instant of the job's schedule at or before `now_ms`, from its next time on (at most the
/// window's worth of fires, which is all a late job can have missed).
fn newest_due(job: &ScheduledJob, now_ms: i64, cron_zone: Zone, crons: &mut CronCache) -> i64 {
    let mut newest = job.trigger_next_time;
    for _ in 0..MAX_FIRES_PER_PASS {
        match crons.next_time(&job.schedule_type, job.schedule_conf.as_deref(), newest, cron_zone) {
            Ok(Some(at)) if at <= now_ms => newest = at,
            _ => break,
        }
    }
    newest
}

impl JobPlan {
    fn refresh(&mut self, job: &ScheduledJob, from_ms: i64, cron_zone: Zone, crons: &mut CronCache) {
        match crons.next_time(&job.schedule_type, job.schedule_conf.as_deref(), from_ms, cron_zone) {
            Ok(Some(next)) => {
                self.trigger_last_time = self.trigger_next_time;
                self.trigger_next_time = next;
            }
            outcome => {
                self.trigger_status = TriggerStatus::Stopped;
                self.trigger_last_time = 0;
                self.trigger_next_time = 0;
                self.stopped = Some(outcome.err());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_700_000_000_000; // 2023-11-14 22:13:20 UTC

    fn job(schedule_type: &str, conf: &str, next: i64, misfire: &str) -> ScheduledJob {
        ScheduledJob {
            id: 1,
            job_group: 1,
            schedule_type: schedule_type.into(),
            schedule_conf: Some(conf.into()),
            misfire_strategy: misfire.into(),
            trigger_status: TriggerStatus::Running,
            trigger_last_time: 0,
            trigger_next_time: next,
        }
    }

    /// 2.4.2's plan: nothing beyond the window.
    fn plan_job(job: &ScheduledJob, now_time: i64, current_ms: i64, zone: Zone) -> JobPlan {
        super::plan_job(job, now_time, current_ms, now_time + PRE_READ_MS, zone, &mut CronCache::default())
    }

    /// The kind of the trigger a plan issues at once.
    fn kind(plan: &JobPlan) -> Option<TriggerType> {
        plan.fire_now.map(|(kind, _)| kind)
    }

    const UTC: Zone = Zone::Named(chrono_tz::UTC);

    #[test]
    fn due_within_the_window_fires_on_time_and_advances_from_the_plan() {
        let plan = plan_job(&job("FIX_RATE", "10", T0 + 3_000, "DO_NOTHING"), T0, T0, UTC);
        assert_eq!(kind(&plan), None);
        assert_eq!(plan.fires_at, vec![T0 + 3_000]);
        assert_eq!((plan.trigger_last_time, plan.trigger_next_time), (T0 + 3_000, T0 + 13_000));
        assert_eq!(plan.trigger_status, TriggerStatus::Running);
    }

    #[test]
    fn exactly_due_now_is_case_c() {
        let plan = plan_job(&job("FIX_RATE", "1", T0, "DO_NOTHING"), T0, T0, UTC);
        assert_eq!((kind(&plan), plan.fires_at.first().copied()), (None, Some(T0)));
    }

    #[test]
    fn late_by_at_most_the_window_fires_now_and_pre_reads_the_next() {
        // Next was 2 s ago; FIX_RATE 3 s from "current" lands inside the window, so it is pre-read too.
        let plan = plan_job(&job("FIX_RATE", "3", T0 - 2_000, "DO_NOTHING"), T0, T0 + 10, UTC);
        assert_eq!(kind(&plan), Some(TriggerType::Cron));
        assert_eq!(plan.fires_at, vec![T0 + 3_010]);
        assert_eq!((plan.trigger_last_time, plan.trigger_next_time), (T0 + 3_010, T0 + 6_010));
    }

    #[test]
    fn a_late_fire_stands_for_the_newest_instant_due() {
        let plan = plan_job(&job("CRON", "* * * * * ?", T0 - 3_000, "DO_NOTHING"), T0 + 200, T0 + 200, UTC);
        assert_eq!(plan.fire_now, Some((TriggerType::Cron, T0)));
        assert_eq!(plan.fires_at.first(), Some(&(T0 + 1_000)));
        // FIX_RATE keeps the grid of the missed next time for the instant; the next fire is refreshed from now.
        let plan = plan_job(&job("FIX_RATE", "2", T0 - 4_500, "DO_NOTHING"), T0, T0, UTC);
        assert_eq!(
            (plan.fire_now, plan.fires_at.first().copied()),
            (Some((TriggerType::Cron, T0 - 500)), Some(T0 + 2_000))
        );
        // A compensation stands for the missed next time.
        let plan = plan_job(&job("CRON", "* * * * * ?", T0 - 9_000, "FIRE_ONCE_NOW"), T0, T0, UTC);
        assert_eq!(plan.fire_now, Some((TriggerType::Misfire, T0 - 9_000)));
    }

    #[test]
    fn late_with_a_distant_next_fire_only_fires_now() {
        let plan = plan_job(&job("FIX_RATE", "60", T0 - 1_000, "DO_NOTHING"), T0, T0, UTC);
        assert_eq!((kind(&plan), plan.fires_at.clone()), (Some(TriggerType::Cron), vec![]));
        assert_eq!((plan.trigger_last_time, plan.trigger_next_time), (T0 - 1_000, T0 + 60_000));
    }

    #[test]
    fn misfire_do_nothing_skips_and_reschedules_from_now() {
        let plan = plan_job(&job("CRON", "0 * * * * ?", T0 - 5_001, "DO_NOTHING"), T0, T0, UTC);
        assert_eq!((kind(&plan), plan.fires_at.clone()), (None, vec![]));
        assert_eq!(plan.trigger_next_time, 1_700_000_040_000, "next whole minute after now");
        assert_eq!(plan.trigger_last_time, T0 - 5_001);
    }

    #[test]
    fn misfire_fire_once_now_fires_a_misfire_trigger() {
        let plan = plan_job(&job("CRON", "0 * * * * ?", T0 - 60_000, "FIRE_ONCE_NOW"), T0, T0, UTC);
        assert_eq!((kind(&plan), plan.fires_at.clone()), (Some(TriggerType::Misfire), vec![]));
    }

    #[test]
    fn boundary_of_the_window_is_still_late_not_missed() {
        let plan = plan_job(&job("FIX_RATE", "100", T0 - 5_000, "FIRE_ONCE_NOW"), T0, T0, UTC);
        assert_eq!(kind(&plan), Some(TriggerType::Cron));
    }

    #[test]
    fn a_horizon_past_the_window_plans_every_fire_up_to_it() {
        let plan = super::plan_job(
            &job("CRON", "* * * * * ?", T0 + 1_000, "DO_NOTHING"),
            T0,
            T0,
            T0 + 8_000,
            UTC,
            &mut CronCache::default(),
        );
        assert_eq!(plan.fires_at, (1..=8).map(|k| T0 + k * 1_000).collect::<Vec<_>>());
        assert_eq!((plan.trigger_last_time, plan.trigger_next_time), (T0 + 8_000, T0 + 9_000));
        // Late: the fire now, then the instants from now to the horizon.
        let late = super::plan_job(
            &job("FIX_RATE", "2", T0 - 1_000, "DO_NOTHING"),
            T0,
            T0,
            T0 + 8_000,
            UTC,
            &mut CronCache::default(),
        );
        assert_eq!(
            (kind(&late), late.fires_at),
            (Some(TriggerType::Cron), vec![T0 + 2_000, T0 + 4_000, T0 + 6_000, T0 + 8_000])
        );
    }

    #[test]
    fn a_schedule_without_a_next_time_stops_the_job_after_its_last_fire() {
        let plan = plan_job(&job("CRON", "0 0 0 1 1 ? 2020", T0 + 1_000, "DO_NOTHING"), T0, T0, UTC);
        assert_eq!(plan.fires_at, vec![T0 + 1_000], "the pre-read fire still happens");
        assert_eq!(
            (plan.trigger_status, plan.trigger_last_time, plan.trigger_next_time),
            (TriggerStatus::Stopped, 0, 0)
        );
        assert_eq!(plan.stopped, Some(None));
    }

    #[test]
    fn an_invalid_schedule_stops_the_job() {
        for (kind, conf) in [("CRON", "not a cron"), ("FIX_RATE", "abc"), ("FIX_RATE", "0")] {
            let plan = plan_job(&job(kind, conf, T0 + 1_000, "DO_NOTHING"), T0, T0, UTC);
            assert_eq!(plan.trigger_status, TriggerStatus::Stopped, "{kind} {conf}");
            assert!(matches!(plan.stopped, Some(Some(_))));
        }
        let plan = plan_job(&job("NONE", "", T0 - 1, "DO_NOTHING"), T0, T0, UTC);
        assert_eq!((kind(&plan), plan.trigger_status), (Some(TriggerType::Cron), TriggerStatus::Stopped));
    }

    #[test]
    fn cron_is_evaluated_in_the_given_zone() {
        let shanghai = Zone::Named(chrono_tz::Asia::Shanghai);
        let j = job("CRON", "0 0 2 * * ?", 0, "DO_NOTHING");
        // 2:00 in Shanghai is 18:00 UTC the day before.
        let next = next_time(&j.schedule_type, j.schedule_conf.as_deref(), T0, shanghai).unwrap().unwrap();
        assert_eq!(next, 1_700_071_200_000);
    }

    #[test]
    fn fix_rate_does_not_overflow_like_2_4_2() {
        let j = job("FIX_RATE", "2147484", 0, "DO_NOTHING");
        assert_eq!(
            next_time(&j.schedule_type, j.schedule_conf.as_deref(), 0, UTC).unwrap(),
            Some(2_147_484_000)
        );
    }

    #[test]
    fn the_cron_cache_answers_as_the_parser_does() {
        let mut cache = CronCache::default();
        for _ in 0..2 {
            assert_eq!(
                cache.next_time("CRON", Some("0 * * * * ?"), T0, UTC),
                next_time("CRON", Some("0 * * * * ?"), T0, UTC)
            );
            assert!(matches!(
                cache.next_time("CRON", Some("nonsense"), T0, UTC),
                Err(ScheduleError::Cron(_))
            ));
            assert_eq!(cache.next_time("FIX_RATE", Some("3"), T0, UTC), Ok(Some(T0 + 3_000)));
        }
        assert_eq!(cache.parsed.len(), 2, "FIX_RATE needs no parsing");
    }
}
