//! Which admin owns a planned fire, and what becomes of a fire that is late (issue: failover without a
//! lost or doubled fire).
//!
//! Every admin process has an [`Owner`] id, random per start. The log row of a fire a schedule pass plans
//! carries its owner in `trigger_msg` until the fire is sent ("planned by admin …"); just before the
//! `/run` the owner marks it "being sent by admin …" (one statement per batch). A survivor that sees an
//! owner die takes over the rows still planned and leaves the ones being sent to their callbacks: a fire
//! that may have reached the executor is never sent again. Each owner also holds a database session lock
//! named after it, which the database releases the moment the owner's connection ends.

use super::misfire::MISFIRE_THRESHOLD_MS;
use super::PlannedFire;

/// A fire released later than this after its instant may have a newer instant of its job due as well
/// (no schedule fires more often than once a second): it is settled under the schedule lock, where the
/// job's other rows are visible, so that late fires collapse into one run as in 2.4.2.
pub const LATE_MS: i64 = 1_000;

/// One admin process, as named in the rows and locks it owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Owner(u32);

const PLANNED: &str = "planned by admin ";
const SENDING: &str = "being sent by admin ";
/// The beginnings of every owner's markers, planned and being sent.
pub const MARKER_PREFIXES: [&str; 2] = [PLANNED, SENDING];
/// `xxl_job_lock.lock_name` of a live admin: this prefix and the owner's id (the README documents it).
pub const REGISTRY_PREFIX: &str = "admin:";

impl Owner {
    pub fn random() -> Owner {
        Owner(rand::random())
    }

    pub fn id(self) -> String {
        format!("{:08x}", self.0)
    }

    /// `trigger_msg` of a row planned by this admin and not yet sent.
    pub fn planned(self) -> String {
        format!("{PLANNED}{}", self.id())
    }

    /// `trigger_msg` of a row whose `/run` this admin is sending, in the batch `batch`: a row is sent by
    /// the batch that marked it, even if it reached the admin twice (after it was taken over and back).
    pub fn sending(self, batch: u32) -> String {
        format!("{}{batch:08x}", self.sending_prefix())
    }

    /// The beginning of every `sending` marker of this admin.
    pub fn sending_prefix(self) -> String {
        format!("{SENDING}{}/", self.id())
    }

    /// The session lock (MySQL `GET_LOCK` name) held while this admin lives.
    pub fn lock_name(self) -> String {
        format!("xxl-job-admin:{}", self.id())
    }

    /// The PostgreSQL advisory lock key held while this admin lives (the two-key form, the first key
    /// naming this use).
    pub fn lock_key(self) -> (i32, i32) {
        (0x786a_6f62, self.0 as i32)
    }

    /// This admin's row in `xxl_job_lock`, by which the others know whom to watch.
    pub fn registry_row(self) -> String {
        format!("{REGISTRY_PREFIX}{}", self.id())
    }

    pub fn from_registry_row(name: &str) -> Option<Owner> {
        let id = name.strip_prefix(REGISTRY_PREFIX)?;
        (id.len() == 8).then(|| u32::from_str_radix(id, 16).ok().map(Owner)).flatten()
    }

    /// The owner named by a row's `trigger_msg` marker, and whether it was being sent.
    pub fn from_marker(msg: &str) -> Option<(Owner, bool)> {
        let (id, sending) = match msg.strip_prefix(PLANNED) {
            Some(id) => (id, false),
            None => (msg.strip_prefix(SENDING)?, true),
        };
        let id = id.get(..8)?;
        u32::from_str_radix(id, 16).ok().map(|o| (Owner(o), sending))
    }
}

/// Whether a log row stands for a run that happened (or may have: being sent) at its trigger time: the
/// executor took its `/run` or reported a result, or an admin is sending it. A failed trigger, and a row
/// settled unsent (collapsed, misfired), did not run.
pub fn ran(trigger_code: i32, handle_code: i32, trigger_msg: Option<&str>) -> bool {
    trigger_code == 200 || handle_code != 0 || trigger_msg.and_then(Owner::from_marker).is_some_and(|(_, sending)| sending)
}

/// Whether a planned fire is settled under the schedule lock before it is sent: it is released more than
/// [`LATE_MS`] after its instant, or it was planned after its instant (a pass that found the job's next
/// time missed, a row taken over from a dead admin).
pub fn is_late(fire: &PlannedFire, now_ms: i64) -> bool {
    now_ms - fire.at_ms > LATE_MS || fire.at_ms < fire.planned_at_ms
}

/// What a row of the same job says about a late fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobRow {
    pub id: i64,
    /// The planned instant while unsent; the time of the `/run` once sent or being sent.
    pub trigger_time_ms: i64,
    /// Sent, being sent, or finished: a run of the job happened at `trigger_time_ms`.
    pub ran: bool,
}

/// The decision for a late fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Late {
    /// Send it now (late by no more than the misfire threshold).
    Send,
    /// Send it now as the job's one misfire compensation (FIRE_ONCE_NOW).
    Compensate,
    /// Not sent: a newer instant of the job is due, or the job ran at or after this instant.
    Collapsed,
    /// Not sent: more than the misfire threshold late, DO_NOTHING.
    Misfire,
}

/// Decides a late fire from the job's other rows since its instant (`others` excludes its own row). The
/// newest due fire of a job is the one that runs; older ones collapse into it, and so does any fire whose
/// instant a run of the job already covers. The one run of a FIRE_ONCE_NOW job stands for its misfired
/// instants too: it goes out as the compensation when any of them was more than the threshold late.
pub fn decide_late(fire: &PlannedFire, others: &[JobRow], now_ms: i64, fire_once_now: bool) -> Late {
    let newer_due = others.iter().any(|r| r.id > fire.log_id && r.trigger_time_ms <= now_ms);
    let covered = others.iter().any(|r| r.ran && r.trigger_time_ms >= fire.at_ms);
    let misfired = |at: i64| now_ms - at > MISFIRE_THRESHOLD_MS;
    if newer_due || covered {
        Late::Collapsed
    } else if fire_once_now && (misfired(fire.at_ms) || misfired_since_last_run(others, fire.log_id, now_ms)) {
        Late::Compensate
    } else if misfired(fire.at_ms) {
        Late::Misfire
    } else {
        Late::Send
    }
}

/// Whether a fire of the job older than row `id` and newer than its last run did not run and is more than
/// the misfire threshold late at `now_ms`: the next run of a FIRE_ONCE_NOW job then is its compensation.
/// Rows settled unsent (collapsed) keep their planned instant, so it does not matter who settled them.
pub fn misfired_since_last_run(rows: &[JobRow], id: i64, now_ms: i64) -> bool {
    let last_run = rows.iter().filter(|r| r.ran && r.id < id).map(|r| r.id).max().unwrap_or(i64::MIN);
    rows.iter().any(|r| r.id > last_run && r.id < id && !r.ran && now_ms - r.trigger_time_ms > MISFIRE_THRESHOLD_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: i64 = 1_700_000_000_000;

    fn fire(at: i64, log_id: i64) -> PlannedFire {
        PlannedFire { at_ms: at, planned_at_ms: at - 4_500, log_id, marked: false }
    }

    #[test]
    fn markers_and_names_round_trip() {
        let owner = Owner(0x00ab_cdef);
        assert_eq!(owner.planned(), "planned by admin 00abcdef");
        assert_eq!(owner.sending(0x12), "being sent by admin 00abcdef/00000012");
        assert!(owner.sending(7).starts_with(&owner.sending_prefix()));
        assert_eq!(Owner::from_marker(&owner.planned()), Some((owner, false)));
        assert_eq!(Owner::from_marker(&owner.sending(3)), Some((owner, true)));
        assert_eq!(Owner::from_marker("Trigger type: Cron<br>…"), None);
        assert_eq!(Owner::from_registry_row(&owner.registry_row()), Some(owner));
        assert_eq!(Owner::from_registry_row("admin:xyz"), None);
        assert_eq!(Owner::from_registry_row("schedule_lock"), None);
        assert!(owner.registry_row().len() <= 50, "lock_name is varchar(50)");
        assert_eq!(owner.lock_key().1, 0x00ab_cdef);
    }

    #[test]
    fn a_fire_is_late_when_released_a_second_after_its_instant_or_planned_after_it() {
        assert!(!is_late(&fire(T, 1), T + 1_000));
        assert!(is_late(&fire(T, 1), T + 1_001));
        let missed = PlannedFire { at_ms: T, planned_at_ms: T + 200, log_id: 1, marked: false };
        assert!(is_late(&missed, T + 200), "a pass that found the next time missed");
    }

    #[test]
    fn the_newest_due_fire_runs_and_older_ones_collapse_into_it() {
        let now = T + 6_200;
        let rows: Vec<JobRow> = (1..=5).map(|k| JobRow { id: k, trigger_time_ms: T + k * 1_000, ran: false }).collect();
        let others = |id| rows.iter().copied().filter(|r| r.id != id).collect::<Vec<_>>();
        for k in 1..5 {
            assert_eq!(decide_late(&fire(T + k * 1_000, k), &others(k), now, false), Late::Collapsed, "row {k}");
        }
        assert_eq!(decide_late(&fire(T + 5_000, 5), &others(5), now, false), Late::Send);
        // A newer row not yet due does not supersede: it is the next regular fire.
        let future = [JobRow { id: 9, trigger_time_ms: now + 800, ran: false }];
        assert_eq!(decide_late(&fire(T + 5_000, 5), &future, now, false), Late::Send);
    }

    #[test]
    fn a_run_at_or_after_the_instant_covers_it() {
        let sent_late = [JobRow { id: 4, trigger_time_ms: T + 6_200, ran: true }];
        assert_eq!(decide_late(&fire(T + 6_000, 7), &sent_late, T + 6_300, false), Late::Collapsed);
        let sent_before = [JobRow { id: 4, trigger_time_ms: T + 5_010, ran: true }];
        assert_eq!(decide_late(&fire(T + 6_000, 7), &sent_before, T + 7_100, false), Late::Send);
    }

    #[test]
    fn a_fire_once_now_job_is_compensated_by_its_one_run_when_older_instants_misfired() {
        let now = T + 6_500;
        let older = [JobRow { id: 1, trigger_time_ms: T + 1_000, ran: false }];
        assert_eq!(decide_late(&fire(T + 5_000, 5), &older, now, true), Late::Compensate);
        assert_eq!(decide_late(&fire(T + 5_000, 5), &older, now, false), Late::Send, "DO_NOTHING: the late fire only");
        let older_sent = [JobRow { id: 1, trigger_time_ms: T + 1_000, ran: true }];
        assert_eq!(decide_late(&fire(T + 5_000, 5), &older_sent, now, true), Late::Send);
        let run_since = [older[0], JobRow { id: 3, trigger_time_ms: T + 3_000, ran: true }];
        assert_eq!(decide_late(&fire(T + 5_000, 5), &run_since, now, true), Late::Send, "the misfire was compensated by a run since");
    }

    #[test]
    fn rows_settled_unsent_or_failed_did_not_run() {
        assert!(ran(200, 0, Some("Trigger type: Cron")));
        assert!(ran(0, 200, None), "a callback before the trigger result");
        assert!(ran(0, 0, Some(&Owner(1).sending(2))));
        assert!(!ran(0, 0, Some(&Owner(1).planned())));
        assert!(!ran(500, 0, Some("Not sent: late …")));
    }

    #[test]
    fn past_the_threshold_the_misfire_strategy_decides() {
        let now = T + 20_000;
        assert_eq!(decide_late(&fire(T, 1), &[], now, false), Late::Misfire);
        assert_eq!(decide_late(&fire(T, 1), &[], now, true), Late::Compensate);
        assert_eq!(decide_late(&fire(T, 1), &[], T + 5_000, true), Late::Send, "the threshold itself is only late");
    }
}
