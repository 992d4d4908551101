//! The verdict of a fault campaign (`campaign.rs`) over what the executors received (each `/run` with the
//! planned instant and trigger type the admin sends beside it) and what the log table says.
//!
//! Every (job, planned instant) of the jobs' schedules is, outside every fault's window, run exactly once
//! and on time; inside a window it may instead be settled by the job's misfire rule (a row that says so),
//! or never planned at all (a pass that found the job's next time missed fires it once for its missed
//! instants, as 2.4.2 does), or sent late by less than the misfire limit. Nothing runs twice, anywhere;
//! no row stays planned or running once its result came; every settled row lies inside a window.

use super::recorder::Fire;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;
use xxl_job_admin::domain::schedule::next_time;
use xxl_job_admin::i18n::I18n;
use xxl_job_admin::time::Zone;

/// A fire later than this is a misfire (2.4.2's pre-read window): DO_NOTHING skips it, FIRE_ONCE_NOW
/// sends one compensation.
pub const MISFIRE_MS: i64 = 5_000;
/// Jitter allowed on top of the misfire limit, for a fire decided just under it.
const LATE_SLACK_MS: i64 = 1_000;
/// Outside every window a fire arrives within this of its planned instant...
pub const ON_TIME_MS: i64 = 1_000;
/// ...and never more than this before it (the executors and the admins share one clock).
pub const EARLY_MS: i64 = 10;
/// Two runs of a job closer than this were bunched: the engine sends a job's fire only while its next
/// one is more than 100 ms away.
const MIN_SPACING_MS: i64 = 50;
/// The lost-result sweep settles a row still without a trigger result 60 s after its trigger time, and
/// runs every 10 s.
pub const SWEEP_REACH_MS: i64 = 75_000;
/// A result an admin accepted is in its row this long after, at the latest.
const RESULT_APPLIED_MS: i64 = 10_000;
/// A row planned outside every window has its trigger result this long after its trigger time.
const CALM_RESULT_MS: i64 = 10_000;
/// A finding is attributed to the faults that hold its instant, else to those this close to it.
const ATTRIBUTION_MS: i64 = 10_000;
/// Examples quoted per finding, and per combination of faults it happened in.
const EXAMPLES: usize = 8;
const EXAMPLES_PER_COMBINATION: usize = 2;

pub enum Schedule {
    Cron(String),
    /// Every this many ms, from the previous fire (after a misfire, from the pass that found it).
    FixRate(i64),
    /// Schedule type NONE: never fires.
    Never,
}

pub struct Job {
    pub id: i64,
    pub schedule: Schedule,
    pub fire_once_now: bool,
}

/// One row of `xxl_job_log`.
pub struct Row {
    pub id: i64,
    pub job_id: i64,
    pub trigger_ms: Option<i64>,
    pub trigger_code: i32,
    pub handle_code: i32,
    pub trigger_msg: String,
}

/// A stretch of time in which a fault (`what`) may delay or settle fires.
pub struct Window {
    pub what: &'static str,
    pub span: Range<i64>,
}

pub struct Evidence<'a> {
    pub jobs: &'a [Job],
    pub fires: &'a [Fire],
    pub rows: &'a [Row],
    /// When an admin accepted each reported result (log id to epoch ms).
    pub called_back: &'a HashMap<i64, i64>,
    pub windows: &'a [Window],
    /// Each fault from its start to its end and recovery, which findings are attributed to.
    pub faults: &'a [Window],
    /// Every job's first planned instant.
    pub first_fire_ms: i64,
    /// The planned instants checked.
    pub checked: Range<i64>,
    /// When the rows were read (and the fires taken, just before).
    pub read_at_ms: i64,
    /// Times in findings are quoted relative to this.
    pub origin_ms: i64,
}

/// (job, planned instant) pairs by outcome, and rows by state.
#[derive(Debug, Default)]
pub struct Counts {
    pub instants: usize,
    pub run: usize,
    /// Not run; a row says why (collapsed, DO_NOTHING misfire, result unknown or lost).
    pub settled: usize,
    /// Not run, no row: a pass found the job's next time missed and fired once for the missed instants.
    pub skipped: usize,
    pub doubled: usize,
    /// Not run, no row, outside every window.
    pub missing: usize,
    /// Runs outside every window later than [`ON_TIME_MS`] or earlier than [`EARLY_MS`].
    pub off_time: usize,
    /// Runs sent as a FIRE_ONCE_NOW job's misfire compensation.
    pub compensations: usize,
    pub stuck_planned: usize,
    pub stuck_running: usize,
    pub fires: usize,
    pub rows: usize,
}

/// One broken rule, with the faults near it.
pub struct Finding {
    pub rule: &'static str,
    pub count: usize,
    /// How many cases happened in (or near) each kind of fault, or with "no fault" near.
    pub near: BTreeMap<&'static str, usize>,
    /// A few cases of each combination of faults they happened in, each with that combination.
    pub examples: Vec<String>,
}

pub struct Verdict {
    pub counts: Counts,
    /// The latest run outside every window, and the latest run that was no compensation, ms.
    pub worst_calm_ms: i64,
    pub worst_ms: i64,
    pub findings: Vec<Finding>,
}

/// Texts the engine writes on rows it settles (the admins run with `xxl.job.i18n=en`).
struct Texts {
    collapsed: &'static str,
    misfired: &'static str,
    unknown: &'static str,
    lost: &'static str,
}

impl Texts {
    fn load() -> Texts {
        let i18n = I18n::new("en");
        Texts {
            collapsed: i18n.get("joblog_skipped_collapsed"),
            misfired: i18n.get("joblog_skipped_misfire"),
            unknown: i18n.get("joblog_trigger_uncertain"),
            lost: i18n.get("joblog_trigger_result_lost"),
        }
    }
}

/// What a row says of its fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowState {
    Planned,
    Running,
    /// The executor's result is in.
    Done,
    /// Not sent: late, a later fire stands for it.
    Collapsed,
    /// Not sent: a DO_NOTHING misfire.
    Misfired,
    /// May have been sent, no callback: never sent again.
    Unknown,
    Lost,
    /// The trigger failed for another reason (an executor timeout, say).
    Failed,
}

impl RowState {
    fn of(row: &Row, texts: &Texts) -> RowState {
        match (row.trigger_code, row.handle_code) {
            (_, handle) if handle != 0 => RowState::Done,
            (0, _) => RowState::Planned,
            (200, _) => RowState::Running,
            _ if row.trigger_msg == texts.collapsed => RowState::Collapsed,
            _ if row.trigger_msg == texts.misfired => RowState::Misfired,
            _ if row.trigger_msg == texts.unknown => RowState::Unknown,
            _ if row.trigger_msg == texts.lost => RowState::Lost,
            _ => RowState::Failed,
        }
    }

    fn settles(self) -> bool {
        matches!(
            self,
            RowState::Collapsed | RowState::Misfired | RowState::Unknown | RowState::Lost | RowState::Failed
        )
    }
}

/// Broken rules, grouped by rule and the faults near them.
struct Findings<'a> {
    faults: &'a [Window],
    rules: BTreeMap<&'static str, Finding>,
}

/// Times in findings: seconds since the campaign's origin.
#[derive(Clone, Copy)]
struct Origin(i64);

impl Origin {
    fn at(self, ms: i64) -> String {
        format!("t+{:.3}s", (ms - self.0) as f64 / 1000.0)
    }

    fn fire(self, fire: &Fire) -> String {
        let planned = fire.planned_ms.map_or("none".to_string(), |p| self.at(p));
        format!(
            "job {} log {} planned {planned} received {} ({})",
            fire.job_id,
            fire.log_id,
            self.at(fire.at_ms),
            fire.trigger_type.as_deref().unwrap_or("no type")
        )
    }
}

impl Findings<'_> {
    /// A broken `rule` at instant `at_ms`, described by `what`.
    fn add(&mut self, rule: &'static str, at_ms: i64, what: String) {
        let near = |margin: i64| -> Vec<&'static str> {
            let hold = |w: &&Window| at_ms >= w.span.start - margin && at_ms < w.span.end + margin;
            self.faults.iter().filter(hold).map(|w| w.what).collect()
        };
        let mut near = Some(near(0)).filter(|n| !n.is_empty()).unwrap_or_else(|| near(ATTRIBUTION_MS));
        near.sort_unstable();
        near.dedup();
        if near.is_empty() {
            near.push("no fault");
        }
        let finding = self.rules.entry(rule).or_insert_with(|| Finding {
            rule,
            count: 0,
            near: BTreeMap::new(),
            examples: Vec::new(),
        });
        finding.count += 1;
        for kind in &near {
            *finding.near.entry(kind).or_default() += 1;
        }
        let tag = format!("[{}]", near.join("+"));
        let of_tag = finding.examples.iter().filter(|e| e.starts_with(&tag)).count();
        if of_tag < EXAMPLES_PER_COMBINATION && finding.examples.len() < EXAMPLES {
            finding.examples.push(format!("{tag} {what}"));
        }
    }
}

pub fn check(evidence: &Evidence) -> Verdict {
    let texts = Texts::load();
    let mut findings = Findings { faults: evidence.faults, rules: BTreeMap::new() };
    let mut counts = Counts { fires: evidence.fires.len(), rows: evidence.rows.len(), ..Counts::default() };
    let states: HashMap<i64, RowState> =
        evidence.rows.iter().map(|r| (r.id, RowState::of(r, &texts))).collect();
    let mut by_job: HashMap<i64, Vec<&Fire>> = HashMap::new();
    for fire in evidence.fires {
        by_job.entry(fire.job_id).or_default().push(fire);
    }
    let sent: BTreeSet<i64> = evidence.fires.iter().map(|f| f.log_id).collect();
    // Rows that settle a fire without a run, by job and second of their trigger time.
    let mut settled_rows: HashMap<(i64, i64), usize> = HashMap::new();
    for row in evidence.rows {
        if states[&row.id].settles() && !sent.contains(&row.id) {
            if let Some(at) = row.trigger_ms {
                *settled_rows.entry((row.job_id, at.div_euclid(1000))).or_default() += 1;
            }
        }
    }
    let (mut worst_calm_ms, mut worst_ms) = (0, 0);
    for job in evidence.jobs {
        let mut fires = by_job.remove(&job.id).unwrap_or_default();
        fires.sort_by_key(|f| f.at_ms);
        let outcome = check_job(evidence, job, &fires, &settled_rows, &mut counts, &mut findings);
        worst_calm_ms = worst_calm_ms.max(outcome.0);
        worst_ms = worst_ms.max(outcome.1);
    }
    for (job, fires) in by_job {
        findings.add("a /run came for a job the campaign did not make", fires[0].at_ms, format!("job {job}"));
    }
    check_rows(evidence, &states, &sent, &mut counts, &mut findings);
    let findings = findings.rules.into_values().collect();
    Verdict { counts, worst_calm_ms, worst_ms, findings }
}

fn in_window(windows: &[Window], at_ms: i64) -> bool {
    windows.iter().any(|w| w.span.contains(&at_ms))
}

/// One job's instants and runs; returns its worst lateness outside windows and overall (compensations
/// aside).
fn check_job(
    evidence: &Evidence,
    job: &Job,
    fires: &[&Fire],
    settled_rows: &HashMap<(i64, i64), usize>,
    counts: &mut Counts,
    findings: &mut Findings,
) -> (i64, i64) {
    let (windows, o) = (evidence.windows, Origin(evidence.origin_ms));
    let mut by_instant: BTreeMap<i64, Vec<&Fire>> = BTreeMap::new();
    for fire in fires {
        match (fire.planned_ms, fire.trigger_type.as_deref()) {
            (Some(planned), Some(_)) => by_instant.entry(planned).or_default().push(fire),
            _ => findings.add(
                "a /run came without the Xxl-Job-Planned-Time or Xxl-Job-Trigger-Type header",
                fire.at_ms,
                o.fire(fire),
            ),
        }
    }
    check_spacing(fires, o, findings);
    let observed: Vec<i64> = by_instant.keys().copied().collect();
    // Through the newest fire received, which the instants beyond the checked ones may be.
    let instants = expected_instants(&job.schedule, &observed, evidence.first_fire_ms, evidence.read_at_ms);
    for (&instant, sent) in &by_instant {
        if !instants.contains(&instant) {
            findings.add(
                "a run for an instant that is not one of its job's schedule",
                instant,
                sent.iter().map(|f| o.fire(f)).collect::<Vec<_>>().join("; "),
            );
        }
    }
    let (mut worst_calm, mut worst) = (0, 0);
    for fire in fires.iter().filter(|f| f.planned_ms.is_some()) {
        let late = fire.lateness_ms().unwrap_or(0);
        let compensation = fire.trigger_type.as_deref() == Some("MISFIRE");
        if compensation {
            counts.compensations += 1;
            if !job.fire_once_now {
                findings.add("a DO_NOTHING job was sent a misfire compensation", fire.at_ms, o.fire(fire));
            }
        } else {
            worst = worst.max(late);
            if late > MISFIRE_MS + LATE_SLACK_MS {
                findings.add(
                    "a fire more than 6 s late was sent, not settled by the misfire rule",
                    fire.at_ms,
                    o.fire(fire),
                );
            }
        }
        if late < -EARLY_MS {
            findings.add("a fire arrived before its planned instant", fire.at_ms, o.fire(fire));
        }
    }
    for &instant in instants.range(evidence.checked.clone()) {
        counts.instants += 1;
        let calm = !in_window(windows, instant);
        let sent = by_instant.get(&instant).map(Vec::as_slice).unwrap_or_default();
        match sent {
            [] if settled_rows.contains_key(&(job.id, instant.div_euclid(1000))) => counts.settled += 1,
            [] if calm => {
                counts.missing += 1;
                findings.add(
                    "a planned instant outside every fault window was neither run nor settled",
                    instant,
                    format!("job {} at {}", job.id, o.at(instant)),
                );
            }
            [] => counts.skipped += 1,
            [fire] => {
                counts.run += 1;
                let late = fire.lateness_ms().unwrap_or(0);
                if calm {
                    worst_calm = worst_calm.max(late);
                    let as_planned = fire.trigger_type.as_deref() == Some("CRON");
                    counts.off_time += usize::from(!(-EARLY_MS..=ON_TIME_MS).contains(&late) || !as_planned);
                    // An early fire is a finding of its own, anywhere.
                    if late > ON_TIME_MS || !as_planned {
                        findings.add(
                            "a fire outside every fault window was late or not sent as planned",
                            instant,
                            o.fire(fire),
                        );
                    }
                }
            }
            _ => {
                counts.doubled += 1;
                let what = sent.iter().map(|f| o.fire(f)).collect::<Vec<_>>().join("; ");
                findings.add("a planned instant ran more than once", instant, what);
            }
        }
    }
    if let Schedule::Never = job.schedule {
        for fire in fires {
            findings.add("a job with schedule type NONE ran", fire.at_ms, o.fire(fire));
        }
    }
    (worst_calm, worst)
}

/// No job runs twice in a moment: a stall's late fires collapse into one run.
fn check_spacing(fires: &[&Fire], o: Origin, findings: &mut Findings) {
    for pair in fires.windows(2) {
        if pair[1].at_ms - pair[0].at_ms < MIN_SPACING_MS {
            findings.add(
                "a job ran twice within 50 ms",
                pair[1].at_ms,
                format!("{} and {}", o.fire(pair[0]), o.fire(pair[1])),
            );
        }
    }
}

/// The job's planned instants from its first fire through `until_ms`. A CRON job's come from its
/// expression. A FIX_RATE job's chain is each fire's instant plus the period, but a pass that found its
/// next time missed starts a new chain from its own time (2.4.2's refresh from now): a run `observed` off
/// the chain starts it anew.
fn expected_instants(schedule: &Schedule, observed: &[i64], first_ms: i64, until_ms: i64) -> BTreeSet<i64> {
    let mut instants = BTreeSet::new();
    match schedule {
        Schedule::Never => {}
        Schedule::Cron(expression) => {
            let mut at = first_ms - 1;
            while let Ok(Some(next)) = next_time("CRON", Some(expression), at, Zone::System) {
                if next > until_ms {
                    break;
                }
                instants.insert(next);
                at = next;
            }
        }
        Schedule::FixRate(period) => {
            let mut next = first_ms;
            for &run in observed.iter().filter(|&&run| run >= first_ms) {
                // Off the chain, `run` starts a new one, which a pass began at `run - period` (it refreshed
                // the job's next time from its own time): the old chain's instants after that pass are
                // not owed.
                let until = if (run - next).rem_euclid(*period) == 0 { run } else { run - period + 1 };
                while next < until {
                    instants.insert(next);
                    next += period;
                }
                instants.insert(run);
                next = run + period;
            }
            while next <= until_ms {
                instants.insert(next);
                next += period;
            }
        }
    }
    instants
}

/// Settled rows only inside windows, no row said "not sent" of a run, and no row stuck.
fn check_rows(
    evidence: &Evidence,
    states: &HashMap<i64, RowState>,
    sent: &BTreeSet<i64>,
    counts: &mut Counts,
    findings: &mut Findings,
) {
    let o = Origin(evidence.origin_ms);
    let arrived: HashMap<i64, i64> = evidence.fires.iter().map(|f| (f.log_id, f.at_ms)).collect();
    let mut rows = BTreeSet::new();
    for row in evidence.rows {
        rows.insert(row.id);
        let state = states[&row.id];
        let at = row.trigger_ms.unwrap_or(0);
        let what = || format!("log {} of job {} at {}: {state:?}", row.id, row.job_id, o.at(at));
        if state.settles() && !in_window(evidence.windows, at) {
            findings.add("a row settled a fire outside every fault window", at, what());
        }
        if matches!(state, RowState::Collapsed | RowState::Misfired) && sent.contains(&row.id) {
            findings.add("a row says \"not sent\" of a fire the executor received", at, what());
        }
        let age = evidence.read_at_ms - at;
        let stuck = match (state, arrived.get(&row.id), evidence.called_back.get(&row.id)) {
            (RowState::Planned | RowState::Running, _, Some(&accepted)) => {
                evidence.read_at_ms - accepted > RESULT_APPLIED_MS
            }
            (RowState::Planned, None, None) => {
                age > SWEEP_REACH_MS || (age > CALM_RESULT_MS && !in_window(evidence.windows, at))
            }
            (RowState::Planned | RowState::Running, Some(_), None) => age > SWEEP_REACH_MS,
            _ => false,
        };
        if stuck {
            if state == RowState::Planned {
                counts.stuck_planned += 1;
            } else {
                counts.stuck_running += 1;
            }
            let result = match evidence.called_back.get(&row.id) {
                Some(&accepted) => format!("its result accepted at {}", o.at(accepted)),
                None => "no result accepted".to_string(),
            };
            findings.add(
                "a row stayed planned or running after its result came",
                at,
                format!("{}; {result}", what()),
            );
        }
    }
    for fire in evidence.fires.iter().filter(|f| !rows.contains(&f.log_id)) {
        findings.add("a /run whose log row does not exist", fire.at_ms, o.fire(fire));
    }
}
