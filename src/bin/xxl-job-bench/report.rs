//! The printed report: one table per mode (sustained rows, bursts, the raw ceiling, workflows), the
//! details behind each row, and the targets of issue 11 (workflows: issue 46) met or missed.

use super::args::{Phase, Storage};
use super::db::{LogCounts, COUNTERS, DML};
use super::executor::ExecutorCounts;
use super::process::LogSummary;
use super::raw::RawResult;
use super::stats::Usage;
use super::stats::{cpu_percent, us_per_trigger, FireAnalysis, Percentiles};
use super::workflow::{Validation, WorkflowResult, DAG};
use std::fmt::Write;

/// Seconds of a row's per-second p99 line before it wraps.
const SECONDS_PER_LINE: usize = 20;

/// The job count the per-trigger targets are stated at.
const TARGET_JOBS: usize = 10_000;
const TARGET_P99_ALIGNED_MS: f64 = 300.0;
const TARGET_P99_SPREAD_MS: f64 = 50.0;
const TARGET_ADMIN_US: f64 = 30.0;
const TARGET_DB_US: f64 = 45.0;
const TARGET_SQLITE_CPU: f64 = 60.0;
const TARGET_SQLITE_RSS_MB: f64 = 80.0;
const TARGET_SQLITE_SMALL_JOBS: usize = 1_000;
const TARGET_SQLITE_SMALL_RSS_MB: f64 = 40.0;
/// A burst this large must be sent whole within the misfire threshold on MariaDB.
const TARGET_BURST_JOBS: usize = 50_000;
/// Issue 46: from a node's callback to each ready successor's `/run`, and validating 500 nodes.
const TARGET_EDGE_P50_MS: f64 = 20.0;
const TARGET_EDGE_P99_MS: f64 = 100.0;
const TARGET_VALIDATION_MS: f64 = 100.0;

/// What a row measured: the admin on one storage, or the peer (ratch-job) with its own store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler {
    Admin(Storage),
    Peer,
}

impl Scheduler {
    pub fn name(self) -> &'static str {
        match self {
            Scheduler::Admin(storage) => storage.name(),
            Scheduler::Peer => "ratch-job",
        }
    }

    /// The process whose CPU, memory and log a row reports.
    fn process(self) -> &'static str {
        match self {
            Scheduler::Admin(_) => "admin",
            Scheduler::Peer => "ratch-job",
        }
    }
}

/// Everything measured for one row.
pub struct Row {
    pub scheduler: Scheduler,
    pub jobs: usize,
    pub measured: Measured,
}

pub enum Measured {
    Sustained(RunResult),
    Burst(RunResult),
    Raw(RawResult),
    Workflow(Box<WorkflowResult>),
}

impl Usage {
    fn percent(&self, ticks: Option<u64>) -> Option<f64> {
        ticks.map(|t| cpu_percent(t, self.elapsed_ms))
    }
}

/// What a row with the admin measured.
pub struct RunResult {
    pub phase: Phase,
    pub fires: FireAnalysis,
    /// Seconds of planned instants the fires stand for (1 for a burst).
    pub seconds: u64,
    pub usage: Usage,
    pub peak_rss_kib: Option<u64>,
    /// The log rows of the window (sustained rows).
    pub logs: Option<LogCounts>,
    pub backlog_at_end: u64,
    pub executor: ExecutorCounts,
    pub log: LogSummary,
    pub exit: String,
}

impl RunResult {
    fn sent_per_s(&self) -> f64 {
        self.fires.sent as f64 / self.seconds as f64
    }

    fn admin_cpu(&self) -> Option<f64> {
        self.usage.percent(self.usage.admin_ticks)
    }

    fn db_cpu(&self) -> Option<f64> {
        self.usage.percent(self.usage.db_ticks)
    }

    fn admin_us(&self) -> Option<f64> {
        us_per_trigger(self.usage.admin_ticks?, self.fires.sent)
    }

    fn db_us(&self) -> Option<f64> {
        us_per_trigger(self.usage.db_ticks?, self.fires.sent)
    }

    fn rss_mb(&self) -> Option<f64> {
        self.peak_rss_kib.map(|k| k as f64 / 1024.0)
    }

    fn lateness_ms(&self, pick: fn(&Percentiles) -> i64) -> Option<f64> {
        self.fires.lateness.as_ref().map(|l| ms(pick(l)))
    }

    /// Planned (job, instant) pairs that got a `/run`.
    fn sent_once(&self) -> u64 {
        self.fires.planned - self.fires.missing
    }

    /// Pairs without a `/run` that no line of the admin's log accounts for.
    fn unaccounted(&self) -> u64 {
        self.fires.missing.saturating_sub(self.log.misfire_settled())
    }
}

/// `mysql aligned 10,000 jobs`.
pub fn label(scheduler: Scheduler, kind: &str, jobs: usize) -> String {
    format!("{} {kind} {} jobs", scheduler.name(), thousands(jobs as f64))
}

/// `mysql workflow 1,000 runs`.
pub fn workflow_label(scheduler: Scheduler, runs: usize) -> String {
    format!("{} workflow {} runs", scheduler.name(), thousands(runs as f64))
}

fn ms(us: i64) -> f64 {
    us as f64 / 1000.0
}

fn opt(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "-".to_string(), |v| format!("{v:.decimals$}"))
}

/// `12345.6` → `12,346`: rates are easier to compare with separators.
pub fn thousands(value: f64) -> String {
    let rounded = value.round() as i64;
    let digits = rounded.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if rounded < 0 {
        out.insert(0, '-');
    }
    out
}

fn count(n: u64) -> String {
    thousands(n as f64)
}

const SUSTAINED: [(&str, usize); 13] = [
    ("storage", 9),
    ("phase", 7),
    ("jobs", 7),
    ("sent/s", 8),
    ("p50 ms", 7),
    ("p99 ms", 7),
    ("adm CPU%", 8),
    ("DB CPU%", 7),
    ("adm µs/trg", 10),
    ("DB µs/trg", 9),
    ("RSS MB", 6),
    ("dup", 7),
    ("missing", 9),
];

const BURST: [(&str, usize); 13] = [
    ("storage", 7),
    ("jobs", 7),
    ("sent", 7),
    ("≤ 5 s", 7),
    ("p50 ms", 7),
    ("p99 ms", 7),
    ("max ms", 7),
    ("misfire", 7),
    ("untraced", 8),
    ("dup", 5),
    ("adm µs/trg", 10),
    ("DB µs/trg", 9),
    ("RSS MB", 6),
];

const RAW: [(&str, usize); 8] = [
    ("jobs", 7),
    ("raw/s", 8),
    ("SQL/trg", 7),
    ("fsync/trg", 9),
    ("lock fails", 10),
    ("DB CPU%", 7),
    ("DB µs/trg", 9),
    ("bench CPU%", 10),
];

const WORKFLOW: [(&str, usize); 11] = [
    ("storage", 8),
    ("runs", 6),
    ("ended", 6),
    ("ok", 6),
    ("wall s", 6),
    ("p50 ms", 7),
    ("p99 ms", 7),
    ("max ms", 7),
    ("adm CPU s", 9),
    ("DB CPU s", 8),
    ("RSS MB", 6),
];

fn table(out: &mut String, header: &[(&str, usize)], rows: &[Vec<String>]) {
    if rows.is_empty() {
        return;
    }
    let line = |cells: Vec<String>| -> String {
        cells.iter().zip(header).map(|(c, (_, w))| format!("{c:>w$}")).collect::<Vec<_>>().join(" ")
    };
    let head = line(header.iter().map(|(h, _)| h.to_string()).collect());
    let _ = writeln!(out, "{head}\n{}", "-".repeat(head.chars().count()));
    for row in rows {
        let _ = writeln!(out, "{}", line(row.clone()));
    }
    out.push('\n');
}

/// The report; `validation` is the workflow mode's timing of a 500-node definition.
pub fn render(machine: &str, settings: &str, rows: &[Row], validation: Option<&Validation>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\n== xxl-job-bench ==\n{machine}\n{settings}\n");
    let mut sustained = Vec::new();
    let mut bursts = Vec::new();
    let mut raws = Vec::new();
    let mut workflows = Vec::new();
    for row in rows {
        match &row.measured {
            Measured::Sustained(r) => sustained.push(sustained_cells(row, r)),
            Measured::Burst(r) => bursts.push(burst_cells(row, r)),
            Measured::Raw(r) => raws.push(raw_cells(row, r)),
            Measured::Workflow(r) => workflows.push(workflow_cells(row, r)),
        }
    }
    for (header, cells, legend) in [
        (&SUSTAINED[..], &sustained, SUSTAINED_LEGEND),
        (&BURST[..], &bursts, BURST_LEGEND),
        (&RAW[..], &raws, RAW_LEGEND),
        (&WORKFLOW[..], &workflows, WORKFLOW_LEGEND),
    ] {
        table(&mut out, header, cells);
        if !cells.is_empty() {
            let _ = writeln!(out, "{legend}");
        }
    }
    if let Some(v) = validation {
        validation_line(&mut out, v);
    }
    for row in rows {
        details(&mut out, row);
    }
    targets(&mut out, rows);
    workflow_targets(&mut out, rows, validation);
    ratios(&mut out, rows);
    out
}

/// What the columns of the sustained table mean, printed under it.
const SUSTAINED_LEGEND: &str =
    "sent/s = /run requests standing for a planned instant of the window, per second; lateness = arrival at the\n\
     executor − planned instant (header Xxl-Job-Planned-Time; ratch-job: its logDateTime, the second it fired\n\
     for); CPU = % of one core over the window, and CPU time per /run sent (DB = the mariadbd process, or\n\
     PostgreSQL's postmaster with its backends; SQLite runs inside the admin); RSS = the admin's (ratch-job's)\n\
     peak (VmHWM); dup = /run requests beyond the first for one (job, planned instant); missing = (job,\n\
     instant) pairs of the window without a /run (aligned: every whole second; spread: each job's phase + k s).\n";

/// What the columns of the burst table mean.
const BURST_LEGEND: &str =
    "sent = jobs whose one planned fire got a /run; ≤ 5 s = of those, arriving within the misfire threshold;\n\
     lateness = arrival − the instant; misfire = fires the admin's log says it settled by the misfire rule\n\
     without sending them; untraced = jobs without a /run that no such log line accounts for; CPU per\n\
     /run sent counts from the activation (planning included) to the end of the burst.\n";

/// What the raw ceiling's table measures.
const RAW_LEGEND: &str =
    "raw = the admin's per-trigger writes batched as at full load (200-row log INSERT … RETURNING, the\n\
     trigger-report UPDATE, the guarded result UPDATE, a 500-row schedule UPDATE per 500 triggers) from\n\
     30 connections, without the admin; SQL/trg = (SELECT+INSERT+UPDATE+DELETE) per trigger.\n";

/// What the workflow table measures.
const WORKFLOW_LEGEND: &str =
    "p50/p99/max = edge latency: a node's /run arrival at the executor − the moment the executor sent the\n\
     callback of the node before it (for the join c, the last of b1..b5's callbacks), once per run and node\n\
     with upstream nodes (9 a run); ended = runs over, ok = of them succeeded; wall = from the first run's\n\
     admission to the last run's end; CPU = seconds over that time (DB = the mariadbd process, or\n\
     PostgreSQL's postmaster with its backends; SQLite runs inside the admin); RSS = the admin's peak (VmHWM).\n";

fn sustained_cells(row: &Row, r: &RunResult) -> Vec<String> {
    vec![
        row.scheduler.name().to_string(),
        r.phase.name().to_string(),
        thousands(row.jobs as f64),
        thousands(r.sent_per_s()),
        opt(r.lateness_ms(|l| l.p50), 1),
        opt(r.lateness_ms(|l| l.p99), 1),
        opt(r.admin_cpu(), 0),
        opt(r.db_cpu(), 0),
        opt(r.admin_us(), 1),
        opt(r.db_us(), 1),
        opt(r.rss_mb(), 1),
        count(r.fires.duplicates),
        count(r.fires.missing),
    ]
}

fn burst_cells(row: &Row, r: &RunResult) -> Vec<String> {
    vec![
        row.scheduler.name().to_string(),
        thousands(row.jobs as f64),
        count(r.sent_once()),
        count(r.fires.within_threshold),
        opt(r.lateness_ms(|l| l.p50), 1),
        opt(r.lateness_ms(|l| l.p99), 1),
        opt(r.lateness_ms(|l| l.max), 1),
        count(r.log.misfire_settled()),
        count(r.unaccounted()),
        count(r.fires.duplicates),
        opt(r.admin_us(), 1),
        opt(r.db_us(), 1),
        opt(r.rss_mb(), 1),
    ]
}

fn raw_cells(row: &Row, r: &RawResult) -> Vec<String> {
    vec![
        thousands(row.jobs as f64),
        thousands(r.triggers_per_s),
        format!("{:.2}", r.sql_per_trigger),
        format!("{:.2}", r.fsyncs_per_trigger),
        count(r.lock_failures),
        opt(r.db_cpu, 0),
        opt(r.db_us_per_trigger, 1),
        opt(r.bench_cpu, 0),
    ]
}

fn workflow_cells(row: &Row, r: &WorkflowResult) -> Vec<String> {
    let edge = |pick: fn(&Percentiles) -> i64| r.edges.latency.as_ref().map(|l| ms(pick(l)));
    let seconds = |ticks: Option<u64>| ticks.map(|t| t as f64 / super::stats::USER_HZ);
    vec![
        row.scheduler.name().to_string(),
        thousands(r.runs as f64),
        count(r.finished()),
        count(r.succeeded()),
        opt(r.wall_ms.map(|w| w as f64 / 1000.0), 1),
        opt(edge(|l| l.p50), 1),
        opt(edge(|l| l.p99), 1),
        opt(edge(|l| l.max), 1),
        opt(seconds(r.usage.admin_ticks), 1),
        opt(seconds(r.usage.db_ticks), 1),
        opt(r.peak_rss_kib.map(|k| k as f64 / 1024.0), 1),
    ]
}

fn validation_line(out: &mut String, v: &Validation) {
    let millis = |us: Option<u64>| opt(us.map(|us| us as f64 / 1000.0), 1);
    let _ = writeln!(
        out,
        "Validation of a {}-node definition ({} edges; job nodes, each with a parameter template): {} ms median, \
         {} ms the slowest of {} (the first, cold: {} ms); reading its JSON {} ms.\n",
        v.nodes,
        thousands(v.edges as f64),
        millis(v.median_us()),
        millis(v.max_us()),
        v.validate_us.len(),
        millis(v.validate_us.first().copied()),
        millis(Some(v.parse_us)),
    );
}

fn details(out: &mut String, row: &Row) {
    let (r, kind) = match &row.measured {
        Measured::Sustained(r) => (r, r.phase.name()),
        Measured::Burst(r) => (r, "burst"),
        Measured::Raw(_) => return,
        Measured::Workflow(r) => return workflow_details(out, row, r),
    };
    let _ = writeln!(out, "{}", label(row.scheduler, kind, row.jobs));
    fire_counts(out, r);
    // The peer logs no summary of unsent fires, and its logDateTime is the planned instant itself.
    let peer = row.scheduler == Scheduler::Peer;
    if !peer {
        not_sent(out, r);
    }
    log_rows(out, r);
    lateness(out, r, peer);
    statements(out, &r.usage, r.fires.sent);
    let who = row.scheduler.process();
    cpu(out, &r.usage, r.fires.sent, who);
    executor_and_log(out, r, who);
}

fn workflow_details(out: &mut String, row: &Row, r: &WorkflowResult) {
    let _ = writeln!(out, "{}", workflow_label(row.scheduler, r.runs));
    let states: Vec<String> = r.states.iter().map(|(state, n)| format!("{} {state}", count(*n))).collect();
    let split = |p: Option<Percentiles>| {
        p.map_or_else(|| "-".to_string(), |p| format!("{:.1}/{:.1}/{:.1}", ms(p.p50), ms(p.p99), ms(p.max)))
    };
    let _ = writeln!(
        out,
        "  runs: {} admitted in {:.1} s (one transaction each); {}; each run's start → end p50/p99/max ms: {}",
        thousands(r.runs as f64),
        r.admission_ms as f64 / 1000.0,
        states.join(", "),
        split(r.run_time),
    );
    let e = &r.edges;
    let _ = writeln!(
        out,
        "  node runs: {} log rows of {} nodes × {} runs; {} received by the executor, {} /run beyond the first for \
         one log row, {} nodes never sent, {} /run for no run's log row",
        count(e.node_logs),
        DAG.len(),
        thousands(r.runs as f64),
        count(e.received),
        count(e.doubled),
        count(e.unsent),
        count(e.foreign),
    );
    let _ = writeln!(
        out,
        "  edge latency p50/p99/max ms: {} over {} edges ({} without a traced /run or callback); {} callbacks \
         sent again after their batch went unanswered (counted from their first sending)",
        split(e.latency),
        count(e.measured),
        count(e.unmeasured),
        count(e.resent),
    );
    let pair = |p: Option<Percentiles>| {
        p.map_or_else(|| "-".to_string(), |p| format!("{:.1}/{:.1}", ms(p.p50), ms(p.p99)))
    };
    let _ = writeln!(
        out,
        "  edge split at the engine's times, p50/p99 ms: callback → the node before seen ended {}; → successor sent \
         to the lanes {}; → its /run at the executor {}",
        pair(e.split.noticed),
        pair(e.split.sent),
        pair(e.split.arrived),
    );
    statements(out, &r.usage, e.received);
    cpu(out, &r.usage, e.received, "admin");
    let x = &r.executor;
    let _ = writeln!(
        out,
        "  executor: {} /run in total ({} refused); callbacks: {} applied, {} batches failed",
        count(x.runs),
        count(x.refused),
        count(x.callbacks_applied),
        count(x.callback_failures),
    );
    process_log(out, &r.log, &r.exit, "admin");
}

/// What was planned and what the executor received for it.
fn fire_counts(out: &mut String, r: &RunResult) {
    let f = &r.fires;
    let _ = writeln!(
        out,
        "  fires: {} (job, instant) planned; {} /run for them ({} pairs sent, {} duplicates, {} missing, {} off their \
         grid (re-anchored FIX_RATE), {} misfire compensations); {} /run without a planned instant, {} of unknown jobs",
        count(f.planned),
        count(f.sent),
        count(r.sent_once()),
        count(f.duplicates),
        count(f.missing),
        count(f.off_grid),
        count(f.compensations),
        count(f.unplanned),
        count(f.foreign),
    );
}

/// The admin's own count of planned fires it did not send, by reason.
fn not_sent(out: &mut String, r: &RunResult) {
    let not_sent: Vec<String> =
        r.log.not_sent.iter().map(|(reason, n)| format!("{reason}: {}", count(*n))).collect();
    let _ = writeln!(
        out,
        "  planned fires the admin logged as not sent (whole run): {}",
        if not_sent.is_empty() { "none".to_string() } else { not_sent.join(", ") }
    );
}

fn log_rows(out: &mut String, r: &RunResult) {
    if let Some(logs) = &r.logs {
        let _ = writeln!(
            out,
            "  log rows of the window: {} created, {} /run accepted, {} done (handle_code 200) = {}/s",
            count(logs.created as u64),
            count(logs.triggered as u64),
            count(logs.succeeded as u64),
            thousands(logs.succeeded as f64 / r.seconds as f64),
        );
    }
}

/// Lateness over the whole window (and, for the admin, to the log's trigger time), then each second's p99.
fn lateness(out: &mut String, r: &RunResult, peer: bool) {
    let f = &r.fires;
    let split = |p: Option<Percentiles>| {
        p.map_or_else(|| "-".to_string(), |p| format!("{:.1}/{:.1}/{:.1}", ms(p.p50), ms(p.p99), ms(p.max)))
    };
    let to_log_time = match peer {
        true => String::new(),
        false => format!("; planned → logDateTime (planning, wheel, lanes, loads) {}", split(f.to_log_time)),
    };
    let _ = writeln!(out, "  lateness p50/p99/max ms: {} in all{to_log_time}", split(f.lateness));
    if f.p99_by_second.len() > 1 {
        let seconds: Vec<String> = f.p99_by_second.iter().map(|p99| opt(p99.map(ms), 0)).collect();
        for (i, line) in seconds.chunks(SECONDS_PER_LINE).enumerate() {
            let lead = if i == 0 { "  each second's p99 ms:" } else { "" };
            let _ = writeln!(out, "{lead:>24} {}", line.join(" "));
        }
    }
}

/// MariaDB's statement counters per /run sent, when they were read.
fn statements(out: &mut String, u: &Usage, sent: u64) {
    if !u.statements.is_empty() {
        let per_run = |n: u64| opt((sent > 0).then(|| n as f64 / sent as f64), 2);
        let per =
            |name: &str| per_run(COUNTERS.iter().position(|c| *c == name).map_or(0, |i| u.statements[i]));
        let dml: u64 =
            COUNTERS.iter().zip(&u.statements).filter(|(c, _)| DML.contains(c)).map(|(_, n)| n).sum();
        let _ = writeln!(
            out,
            "  per /run (MariaDB counters): {} SQL ({} SELECT, {} INSERT, {} UPDATE, {} DELETE); {} BEGIN, {} COMMIT, \
             {} ping/admin cmds, {} prepares, {} InnoDB fsyncs",
            per_run(dml),
            per("Com_select"),
            per("Com_insert"),
            per("Com_update"),
            per("Com_delete"),
            per("Com_begin"),
            per("Com_commit"),
            per("Com_admin_commands"),
            per("Com_stmt_prepare"),
            per("Innodb_data_fsyncs"),
        );
    }
}

fn cpu(out: &mut String, u: &Usage, sent: u64, who: &str) {
    let per_run = |ticks: Option<u64>| opt(ticks.and_then(|t| us_per_trigger(t, sent)), 1);
    // Per-process and machine-wide ticks are sampled separately; a small negative rest is noise.
    let others = (|| {
        Some(u.machine_busy_ticks?.saturating_sub(u.admin_ticks? + u.db_ticks.unwrap_or(0) + u.own_ticks?))
    })();
    let _ = writeln!(
        out,
        "  CPU over {:.1} s (% of one core): {who} {} ({} µs/run), database server {} ({} µs/run), bench {}, \
         other processes ≈ {}; machine busy {} of {}, iowait {}",
        u.elapsed_ms as f64 / 1000.0,
        opt(u.percent(u.admin_ticks), 0),
        per_run(u.admin_ticks),
        opt(u.percent(u.db_ticks), 0),
        per_run(u.db_ticks),
        opt(u.percent(u.own_ticks), 0),
        opt(u.percent(others), 0),
        opt(u.percent(u.machine_busy_ticks), 0),
        std::thread::available_parallelism().map_or(0, |n| n.get()) * 100,
        opt(u.percent(u.machine_iowait_ticks), 0),
    );
}

fn executor_and_log(out: &mut String, r: &RunResult, who: &str) {
    let e = &r.executor;
    let _ = writeln!(
        out,
        "  executor: {} /run in total ({} refused); callbacks: {} applied, {} batches failed, {} queued when the \
         window closed",
        count(e.runs),
        count(e.refused),
        count(e.callbacks_applied),
        count(e.callback_failures),
        count(r.backlog_at_end),
    );
    if e.unrecorded > 0 {
        let _ = writeln!(
            out,
            "  {} /run were not recorded (memory bound): the counts are incomplete",
            count(e.unrecorded)
        );
    }
    process_log(out, &r.log, &r.exit, who);
}

/// What the admin (ratch-job) logged at warn level or above, and how it ended.
fn process_log(out: &mut String, log: &LogSummary, exit: &str, who: &str) {
    let _ = writeln!(out, "  {who} log: {} warnings, {} errors; {exit}", log.warnings, log.errors);
    for sample in &log.samples {
        let _ = writeln!(out, "    | {}", truncate(sample, 200));
    }
}

fn truncate(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "MISSED"
    }
}

/// `value` against `≤ limit`, or "not measured".
fn at_most(what: &str, value: Option<f64>, limit: f64, unit: &str) -> String {
    match value {
        Some(v) => format!("{what} {v:.1} {unit} vs ≤ {limit} {unit} {}", verdict(v <= limit)),
        None => format!("{what}: not measured"),
    }
}

/// The goals for the rows that measure them (reported, not asserted).
fn goals(row: &Row) -> Vec<String> {
    // The peer is measured for the ratios; the targets are the admin's.
    let Scheduler::Admin(storage) = row.scheduler else { return Vec::new() };
    let mut goals = Vec::new();
    match &row.measured {
        Measured::Sustained(r) => {
            if row.jobs == TARGET_JOBS {
                let once = r.fires.missing == 0 && r.fires.duplicates == 0;
                if r.phase == Phase::Aligned {
                    goals.push(format!(
                        "every fire once ({} missing, {} duplicates) {}",
                        count(r.fires.missing),
                        count(r.fires.duplicates),
                        verdict(once)
                    ));
                }
                let p99_limit = match r.phase {
                    Phase::Aligned => TARGET_P99_ALIGNED_MS,
                    Phase::Spread => TARGET_P99_SPREAD_MS,
                };
                goals.push(at_most("p99", r.lateness_ms(|l| l.p99), p99_limit, "ms"));
                match storage {
                    Storage::MySql => {
                        goals.push(at_most("admin", r.admin_us(), TARGET_ADMIN_US, "µs/trigger"));
                        goals.push(at_most("MariaDB", r.db_us(), TARGET_DB_US, "µs/trigger"));
                    }
                    // The issue states the database's target for MariaDB only.
                    Storage::Postgres => {
                        goals.push(at_most("admin", r.admin_us(), TARGET_ADMIN_US, "µs/trigger"))
                    }
                    Storage::Sqlite => {
                        goals.push(at_most("admin CPU", r.admin_cpu(), TARGET_SQLITE_CPU, "%"));
                        goals.push(at_most("RSS", r.rss_mb(), TARGET_SQLITE_RSS_MB, "MB"));
                    }
                }
            }
            if storage == Storage::Sqlite && row.jobs == TARGET_SQLITE_SMALL_JOBS {
                goals.push(at_most("RSS", r.rss_mb(), TARGET_SQLITE_SMALL_RSS_MB, "MB"));
            }
        }
        Measured::Burst(r) => {
            goals.push(format!(
                "no silent drops ({} untraced) {}",
                count(r.unaccounted()),
                verdict(r.unaccounted() == 0)
            ));
            if storage == Storage::MySql && row.jobs >= TARGET_BURST_JOBS {
                let all = r.fires.within_threshold == r.fires.planned;
                goals.push(format!(
                    "all sent within 5 s ({} of {}) {}",
                    count(r.fires.within_threshold),
                    count(r.fires.planned),
                    verdict(all)
                ));
            }
        }
        Measured::Raw(_) | Measured::Workflow(_) => {}
    }
    goals
}

fn targets(out: &mut String, rows: &[Row]) {
    let lines: Vec<String> = rows
        .iter()
        .filter_map(|row| {
            let goals = goals(row);
            let kind = match &row.measured {
                Measured::Sustained(r) => r.phase.name(),
                Measured::Burst(_) => "burst",
                Measured::Raw(_) => "raw",
                Measured::Workflow(_) => "workflow",
            };
            (!goals.is_empty())
                .then(|| format!("  {}: {}", label(row.scheduler, kind, row.jobs), goals.join(" | ")))
        })
        .collect();
    if !lines.is_empty() {
        let _ = writeln!(out, "\nTargets (issue 11; reported, not asserted):\n{}", lines.join("\n"));
    }
}

/// The goals of issue 46's workflow rows and of the validation timing (reported, not asserted).
fn workflow_targets(out: &mut String, rows: &[Row], validation: Option<&Validation>) {
    let mut lines = Vec::new();
    for row in rows {
        let Measured::Workflow(r) = &row.measured else { continue };
        let edge = |pick: fn(&Percentiles) -> i64| r.edges.latency.as_ref().map(|l| ms(pick(l)));
        let all = r.succeeded() == r.runs as u64;
        let goals = [
            format!(
                "runs succeeded {} of {} {}",
                count(r.succeeded()),
                thousands(r.runs as f64),
                verdict(all)
            ),
            at_most("edge p50", edge(|l| l.p50), TARGET_EDGE_P50_MS, "ms"),
            at_most("edge p99", edge(|l| l.p99), TARGET_EDGE_P99_MS, "ms"),
        ];
        lines.push(format!("  {}: {}", workflow_label(row.scheduler, r.runs), goals.join(" | ")));
    }
    if let Some(v) = validation {
        let slowest = v.max_us().map(|us| us as f64 / 1000.0);
        lines.push(match slowest {
            Some(ms) => format!(
                "  validation of a {}-node definition: {ms:.1} ms (the slowest of {}) vs < {TARGET_VALIDATION_MS} ms {}",
                v.nodes,
                v.validate_us.len(),
                verdict(ms < TARGET_VALIDATION_MS)
            ),
            None => "  validation: not measured".into(),
        });
    }
    if !lines.is_empty() {
        let _ = writeln!(out, "\nTargets (issue 46; reported, not asserted):\n{}", lines.join("\n"));
    }
}

const RATIOS: [(&str, usize); 7] =
    [("storage", 9), ("phase", 7), ("jobs", 7), ("p99", 6), ("adm CPU", 7), ("DB CPU", 7), ("RSS", 6)];

/// `ours / peer`, when both were measured and the peer's is not zero.
fn ratio(ours: Option<f64>, peer: Option<f64>) -> Option<f64> {
    let peer = peer.filter(|p| *p > 0.0)?;
    Some(ours? / peer)
}

/// Each admin row against the peer's row of the same shape.
fn ratios(out: &mut String, rows: &[Row]) {
    fn sustained(row: &Row) -> Option<(Scheduler, usize, &RunResult)> {
        match &row.measured {
            Measured::Sustained(r) => Some((row.scheduler, row.jobs, r)),
            _ => None,
        }
    }
    let mut lines = Vec::new();
    for (_, jobs, peer) in rows.iter().filter_map(sustained).filter(|(s, _, _)| *s == Scheduler::Peer) {
        for (scheduler, _, ours) in rows
            .iter()
            .filter_map(sustained)
            .filter(|(s, j, r)| *s != Scheduler::Peer && *j == jobs && r.phase == peer.phase)
        {
            let p99 = |r: &RunResult| r.lateness_ms(|l| l.p99);
            lines.push(vec![
                scheduler.name().to_string(),
                ours.phase.name().to_string(),
                thousands(jobs as f64),
                opt(ratio(p99(ours), p99(peer)), 2),
                opt(ratio(ours.admin_cpu(), peer.admin_cpu()), 2),
                opt(ratio(ours.db_cpu(), peer.admin_cpu()), 2),
                opt(ratio(ours.rss_mb(), peer.rss_mb()), 2),
            ]);
        }
    }
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nRatios to ratch-job measured in this run (ours / peer; below 1 is better):");
    table(out, &RATIOS, &lines);
    let _ = writeln!(
        out,
        "p99 = lateness p99; adm CPU = the admin's CPU / ratch-job's; DB CPU = the database server's CPU / ratch-job's\n\
         (ratch-job keeps its records in its own process); RSS = peak RSS / ratch-job's."
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::EdgeAnalysis;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0.0), "0");
        assert_eq!(thousands(999.4), "999");
        assert_eq!(thousands(1000.0), "1,000");
        assert_eq!(thousands(1_234_567.5), "1,234,568");
        assert_eq!(thousands(-12_345.0), "-12,345");
    }

    #[test]
    fn truncation_keeps_char_boundaries() {
        assert_eq!(truncate("触发失败了", 2), "触发…");
        assert_eq!(truncate("ok", 5), "ok");
    }

    #[test]
    fn ratios_need_both_values() {
        assert_eq!(ratio(Some(3.0), Some(2.0)), Some(1.5));
        assert_eq!(
            (ratio(None, Some(2.0)), ratio(Some(3.0), None), ratio(Some(3.0), Some(0.0))),
            (None, None, None)
        );
    }

    #[test]
    fn workflow_rows_are_tabled_detailed_and_checked() {
        let result = WorkflowResult {
            runs: 2,
            admission_ms: 40,
            states: [("succeeded".to_string(), 1), ("failed".to_string(), 1)].into(),
            wall_ms: Some(1_500),
            run_time: Percentiles::of(vec![900_000, 1_100_000]),
            edges: EdgeAnalysis {
                latency: Percentiles::of(vec![5_000, 12_000, 150_000]),
                measured: 3,
                node_logs: 20,
                received: 20,
                ..Default::default()
            },
            usage: Usage { elapsed_ms: 1_500, admin_ticks: Some(30), ..Usage::default() },
            peak_rss_kib: Some(20_480),
            executor: ExecutorCounts::default(),
            log: LogSummary::default(),
            exit: "exit status: 0 after SIGTERM".into(),
        };
        let row = Row {
            scheduler: Scheduler::Admin(Storage::Sqlite),
            jobs: 2,
            measured: Measured::Workflow(Box::new(result)),
        };
        let validation =
            Validation { nodes: 500, edges: 1_470, parse_us: 900, validate_us: vec![4_000, 2_000, 3_000] };
        let out = render("machine", "settings", &[row], Some(&validation));
        let table_row = out.lines().find(|l| l.trim_start().starts_with("sqlite")).unwrap();
        let cells: Vec<&str> = table_row.split_whitespace().collect();
        assert_eq!(cells, ["sqlite", "2", "2", "1", "1.5", "12.0", "150.0", "150.0", "0.3", "-", "20.0"]);
        assert!(out.contains("3.0 ms median, 4.0 ms the slowest of 3 (the first, cold: 4.0 ms)"), "{out}");
        assert!(out.contains("edge latency p50/p99/max ms: 12.0/150.0/150.0 over 3 edges"), "{out}");
        assert!(
            out.contains(
                "sqlite workflow 2 runs: runs succeeded 1 of 2 MISSED | edge p50 12.0 ms vs ≤ 20 ms met | \
                 edge p99 150.0 ms vs ≤ 100 ms MISSED"
            ),
            "{out}"
        );
        assert!(
            out.contains("validation of a 500-node definition: 4.0 ms (the slowest of 3) vs < 100 ms met")
        );
    }

    #[test]
    fn goals_compare_against_limits() {
        assert_eq!(at_most("p99", Some(42.04), 50.0, "ms"), "p99 42.0 ms vs ≤ 50 ms met");
        assert_eq!(at_most("RSS", Some(81.0), 80.0, "MB"), "RSS 81.0 MB vs ≤ 80 MB MISSED");
        assert_eq!(at_most("MariaDB", None, 45.0, "µs/trigger"), "MariaDB: not measured");
    }
}
