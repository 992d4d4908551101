//! Prometheus metrics, served at `{context}{management}/prometheus`: OpenMetrics 1.0 to a scraper that
//! asks for it (`Accept: application/openmetrics-text`), else the classic text format 0.0.4.
//!
//! One [`Metrics`] value is created at start-up and handed to the components that count; what can be
//! read at scrape time (lane backlog, pool, executors online, process) is read then, into a registry of
//! that scrape. Counting and encoding are the Prometheus project's `prometheus-client` crate; the hot
//! path's counters are resolved once at start (a relaxed atomic increment each, as before), and only
//! the classic format's few differences from OpenMetrics are written here ([`classic`]).

use crate::domain::TriggerType;
use prometheus_client::encoding::text::{encode_eof, encode_registry};
use prometheus_client::encoding::{EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Registry;
use std::fmt::Write as _;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

/// Seconds; from "on time" to "the misfire rule would skip it" (five seconds).
const LATENESS_BUCKETS: [f64; 12] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];
/// Seconds; a schedule pass or lock wait is normally milliseconds, seconds under contention.
const PASS_BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0];
/// AppNames reported one by one; the others are summed under [`OTHER_APPNAMES`], so a flood of
/// registrations cannot flood the time-series database.
pub const MAX_APPNAMES: usize = 100;
pub const OTHER_APPNAMES: &str = "_other";

/// What a scraper that speaks OpenMetrics gets, and the classic format everyone else does.
pub const OPENMETRICS_FORMAT: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
pub const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Every (strategy, reason) the scheduler settles misfires for, shown at 0 from the start so that
/// `increase()` sees the first one: `late` (a pass found the next time past its window), `at_release` (a
/// planned DO_NOTHING fire that late when released), `collapsed` (late, and a later fire or a run of the
/// job stands for it).
const KNOWN_MISFIRES: [(&str, &str); 5] = [
    ("DO_NOTHING", "late"),
    ("FIRE_ONCE_NOW", "late"),
    ("DO_NOTHING", "at_release"),
    ("DO_NOTHING", "collapsed"),
    ("FIRE_ONCE_NOW", "collapsed"),
];

/// The results a job run can report, in the order of [`Metrics::job_results`]'s counters.
const JOB_RESULTS: [&str; 3] = ["success", "failure", "timeout"];

const TRIGGER_TYPES: [TriggerType; 7] = [
    TriggerType::Cron,
    TriggerType::Manual,
    TriggerType::Retry,
    TriggerType::Parent,
    TriggerType::Api,
    TriggerType::Misfire,
    TriggerType::Workflow,
];

type Labels = Vec<(&'static str, LabelValue)>;

/// A label value escaped as both text formats require (`\\`, `"`, newline): prometheus-client 0.23
/// writes label values as they are, and AppNames come from executors.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct LabelValue(String);

impl EncodeLabelValue for LabelValue {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> std::fmt::Result {
        encoder.write_str(&self.0.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n"))
    }
}

fn labels(pairs: &[(&'static str, &str)]) -> Labels {
    pairs.iter().map(|(name, value)| (*name, LabelValue(value.to_string()))).collect()
}

/// The counters and histograms of one admin process.
pub struct Metrics {
    /// `false` when the endpoint is switched off: nothing is counted.
    enabled: bool,
    registry: Registry,
    /// By trigger type (index in [`TRIGGER_TYPES`]), then success / failure.
    triggers: [[Counter; 2]; TRIGGER_TYPES.len()],
    lateness: Histogram,
    /// Fast lane, slow lane.
    rejections: [Counter; 2],
    misfires: Family<Labels, Counter>,
    callbacks_received: Counter,
    /// Results executors reported and the admin recorded, by [`JOB_RESULTS`].
    job_results: [Counter; JOB_RESULTS.len()],
    /// Unknown log, already finished.
    callbacks_ignored: [Counter; 2],
    /// Executor registrations refused, by [`REFUSED_REGISTRATIONS`].
    registrations_refused: [Counter; REFUSED_REGISTRATIONS.len()],
    alarms: Family<Labels, Counter>,
    schedule_pass: Histogram,
    lock_wait: Histogram,
    clock_offset: Gauge<f64, AtomicU64>,
    workflows: WorkflowMetrics,
}

/// The workflow engine's counters and histograms.
struct WorkflowMetrics {
    /// Runs admitted, by [`RUN_ADMISSIONS`], and ended, by [`RUN_ENDS`].
    runs_started: [Counter; RUN_ADMISSIONS.len()],
    runs_ended: [Counter; RUN_ENDS.len()],
    node_wait: Histogram,
    edge_latency: Histogram,
}

impl WorkflowMetrics {
    fn register(registry: &mut Registry) -> WorkflowMetrics {
        WorkflowMetrics {
            runs_started: counters(
                registry,
                "xxl_job_workflow_runs_started",
                "Workflow runs started, by what their concurrency policy made of them",
                "state",
                RUN_ADMISSIONS,
            ),
            runs_ended: counters(
                registry,
                "xxl_job_workflow_runs_ended",
                "Workflow runs ended (by this admin's reconciler), by final state",
                "state",
                RUN_ENDS,
            ),
            node_wait: histogram(
                registry,
                "xxl_job_workflow_node_wait_seconds",
                "From a workflow node becoming ready to its /run being handed to the lanes",
                &LATENESS_BUCKETS,
            ),
            edge_latency: histogram(
                registry,
                "xxl_job_workflow_edge_latency_seconds",
                "From the end of a node's last upstream node to the node's /run being handed to the lanes",
                &LATENESS_BUCKETS,
            ),
        }
    }
}

/// The `state` labels of `xxl_job_workflow_runs_started_total`: what the concurrency policy made of a run.
pub const RUN_ADMISSIONS: [&str; 3] = ["running", "queued", "discarded"];
/// The `state` labels of `xxl_job_workflow_runs_ended_total`.
pub const RUN_ENDS: [&str; 3] = ["succeeded", "failed", "stopped"];

/// Which lane refused a trigger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    Fast,
    Slow,
}

/// Why a callback item changed nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IgnoredCallback {
    UnknownLog,
    AlreadyFinished,
}

/// Why an executor registration was refused; the order of [`REFUSED_REGISTRATIONS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusedRegistration {
    /// A new AppName that no group has, past `xxl.job.registry.max-apps`.
    MaxApps,
    /// A new AppName that no group has, from a client address at `xxl.job.registry.max-apps-per-address`.
    MaxAppsPerAddress,
    /// A new address of an AppName at `xxl.job.registry.max-per-app`.
    MaxPerApp,
    /// The registry's write queue stayed full.
    QueueFull,
}

/// The `reason` labels of `xxl_job_registrations_refused_total`.
pub const REFUSED_REGISTRATIONS: [&str; 4] =
    ["max_apps", "max_apps_per_address", "max_per_app", "queue_full"];

/// What only the scrape can know: read by the HTTP handler from the running services.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub lane_backlog: usize,
    pub pool_in_use: u32,
    pub pool_idle: u32,
    pub pool_max: u32,
    /// Live executor addresses per AppName.
    pub executors: Vec<(String, usize)>,
    /// Workflow runs not over, by state.
    pub workflow_runs: Vec<(String, i64)>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

/// One counter per label set of `values`, registered as one family and resolved now, so counting
/// never looks a label set up.
fn counters<const N: usize>(
    registry: &mut Registry,
    name: &str,
    help: &str,
    label: &'static str,
    values: [&str; N],
) -> [Counter; N] {
    let family = Family::<Labels, Counter>::default();
    registry.register(name, help, family.clone());
    values.map(|value| family.get_or_create(&labels(&[(label, value)])).clone())
}

fn histogram(registry: &mut Registry, name: &str, help: &str, buckets: &[f64]) -> Histogram {
    let histogram = Histogram::new(buckets.iter().copied());
    registry.register(name, help, histogram.clone());
    histogram
}

/// How far this admin's clock is from the database server's (`crate::workers::clock`).
fn clock_offset_gauge(registry: &mut Registry) -> Gauge<f64, AtomicU64> {
    let gauge = Gauge::<f64, AtomicU64>::default();
    registry.register(
        "xxl_job_clock_offset_seconds",
        "This admin's clock minus the database server's, as last measured (the admin schedules on the server's)",
        gauge.clone(),
    );
    gauge
}

/// Triggers finished, one counter per trigger type and result, each served from the start.
fn trigger_counters(registry: &mut Registry) -> [[Counter; 2]; TRIGGER_TYPES.len()] {
    let family = Family::<Labels, Counter>::default();
    registry.register(
        "xxl_job_triggers",
        "Triggers finished, by trigger type and /run result",
        family.clone(),
    );
    TRIGGER_TYPES.map(|kind| {
        ["success", "failure"].map(|result| {
            family.get_or_create(&labels(&[("type", trigger_type_label(kind)), ("result", result)])).clone()
        })
    })
}

/// Missed fires settled, with the known strategy and reason pairs served at 0 from the start.
fn misfire_family(registry: &mut Registry) -> Family<Labels, Counter> {
    let misfires = Family::<Labels, Counter>::default();
    registry.register(
        "xxl_job_misfires_settled",
        "Missed fires settled by the schedule pass, by misfire strategy and reason",
        misfires.clone(),
    );
    for (strategy, reason) in KNOWN_MISFIRES {
        // Creating the series is the point: it is served at 0.
        let _ = misfires.get_or_create(&labels(&[("strategy", strategy), ("reason", reason)]));
    }
    misfires
}

impl Metrics {
    pub fn new() -> Metrics {
        Metrics::with_counting(true)
    }

    /// Counting only when `enabled`; a switched-off endpoint costs the hot path one branch per event.
    /// Families are registered in the order they are served.
    pub fn with_counting(enabled: bool) -> Metrics {
        let mut registry = Registry::default();
        let triggers = trigger_counters(&mut registry);
        let lateness = histogram(
            &mut registry,
            "xxl_job_fire_lateness_seconds",
            "From a planned fire's instant to its /run request",
            &LATENESS_BUCKETS,
        );
        let rejections = counters(
            &mut registry,
            "xxl_job_trigger_rejections",
            "Triggers refused because their lane's queue was full",
            "lane",
            ["fast", "slow"],
        );
        let misfires = misfire_family(&mut registry);
        let callbacks_received = Counter::default();
        registry.register(
            "xxl_job_callbacks_received",
            "Result callback items received from executors",
            callbacks_received.clone(),
        );
        let job_results = counters(
            &mut registry,
            "xxl_job_job_results",
            "Job results as executors reported them (callback items recorded), by result",
            "result",
            JOB_RESULTS,
        );
        let callbacks_ignored = counters(
            &mut registry,
            "xxl_job_callbacks_ignored",
            "Callback items that changed nothing, by reason",
            "reason",
            ["unknown_log", "already_finished"],
        );
        let registrations_refused = counters(
            &mut registry,
            "xxl_job_registrations_refused",
            "Executor registrations refused, by reason",
            "reason",
            REFUSED_REGISTRATIONS,
        );
        let alarms = Family::<Labels, Counter>::default();
        registry.register("xxl_job_alarms", "Alarms by channel and outcome", alarms.clone());
        let schedule_pass = histogram(
            &mut registry,
            "xxl_job_schedule_pass_seconds",
            "Duration of schedule passes, lock wait included",
            &PASS_BUCKETS,
        );
        let lock_wait = histogram(
            &mut registry,
            "xxl_job_schedule_lock_wait_seconds",
            "Time spent waiting for the cluster-wide schedule lock",
            &PASS_BUCKETS,
        );
        let clock_offset = clock_offset_gauge(&mut registry);
        let workflows = WorkflowMetrics::register(&mut registry);
        Metrics {
            workflows,
            enabled,
            registry,
            clock_offset,
            triggers,
            lateness,
            rejections,
            misfires,
            callbacks_received,
            job_results,
            callbacks_ignored,
            registrations_refused,
            alarms,
            schedule_pass,
            lock_wait,
        }
    }

    /// A trigger reached its end: `/run` answered 200, or not (or no executor could be chosen).
    pub fn trigger(&self, kind: TriggerType, success: bool) {
        if !self.enabled {
            return;
        }
        let index = TRIGGER_TYPES.iter().position(|t| *t == kind).unwrap_or(0);
        self.triggers[index][usize::from(!success)].inc();
    }

    /// `/run` is being sent at `now_ms` for a trigger of `kind` that stands for `planned_ms`: a schedule
    /// fire's lateness is observed (misfire compensations are late by design and counted as misfires).
    pub fn run_sent(&self, kind: TriggerType, planned_ms: Option<i64>, now_ms: i64) {
        if !self.enabled {
            return;
        }
        if let (TriggerType::Cron, Some(planned)) = (kind, planned_ms) {
            self.lateness.observe((now_ms - planned).max(0) as f64 / 1000.0);
        }
    }

    /// A trigger was refused because its lane's queue was full (or closed).
    pub fn rejected(&self, lane: Lane) {
        if !self.enabled {
            return;
        }
        self.rejections[lane as usize].inc();
    }

    /// A missed fire of a job with misfire `strategy` (`DO_NOTHING`, `FIRE_ONCE_NOW`) was settled for
    /// `reason` (see [`KNOWN_MISFIRES`]). Both come from small fixed sets; the strategy is the stored
    /// text, which the console validates.
    pub fn misfire_settled(&self, strategy: &str, reason: &str) {
        self.misfires_settled(strategy, reason, 1);
    }

    /// [`Metrics::misfire_settled`] for `n` fires at once.
    pub fn misfires_settled(&self, strategy: &str, reason: &str, n: u64) {
        if !self.enabled || n == 0 {
            return;
        }
        self.misfires.get_or_create(&labels(&[("strategy", strategy), ("reason", reason)])).inc_by(n);
    }

    /// Callback items received from executors.
    pub fn callbacks_received(&self, items: usize) {
        if !self.enabled {
            return;
        }
        self.callbacks_received.inc_by(items as u64);
    }

    /// A run's result as its executor reported it (`handleCode`): 200 success, 502 timeout (the
    /// executor's `executorTimeout` ran out), anything else failure.
    pub fn job_result(&self, handle_code: i32) {
        if !self.enabled {
            return;
        }
        let index = match handle_code {
            200 => 0,
            502 => 2,
            _ => 1,
        };
        self.job_results[index].inc();
    }

    /// The alarm channels that exist (`email`, `webhook:<name>`, `unknown`): shown at 0 from the start.
    pub fn alarm_channels<'a>(&self, channels: impl IntoIterator<Item = &'a str>) {
        for channel in channels {
            for result in ["sent", "failed"] {
                let _ = self.alarms.get_or_create(&alarm_labels(channel, result));
            }
        }
    }

    /// A callback item that changed nothing.
    pub fn callback_ignored(&self, why: IgnoredCallback) {
        if !self.enabled {
            return;
        }
        self.callbacks_ignored[why as usize].inc();
    }

    /// An executor registration refused, and why.
    pub fn registration_refused(&self, why: RefusedRegistration) {
        if self.enabled {
            self.registrations_refused[why as usize].inc();
        }
    }

    /// An alarm sent (or not) on `channel` (`email`, `webhook:<name>`, or `unknown` for a name no channel has).
    pub fn alarm(&self, channel: &str, delivered: bool) {
        if !self.enabled {
            return;
        }
        self.alarms.get_or_create(&alarm_labels(channel, if delivered { "sent" } else { "failed" })).inc();
    }

    pub fn schedule_pass(&self, took: Duration) {
        if !self.enabled {
            return;
        }
        self.schedule_pass.observe(took.as_secs_f64());
    }

    /// This host's clock minus the database server's (`crate::workers::clock`).
    pub fn clock_offset(&self, local_minus_server_ms: i64) {
        self.clock_offset.set(local_minus_server_ms as f64 / 1000.0);
    }

    /// A workflow run was admitted as `state` (one of [`RUN_ADMISSIONS`]).
    pub fn workflow_run_started(&self, state: &str) {
        if let Some(i) = RUN_ADMISSIONS.iter().position(|s| *s == state).filter(|_| self.enabled) {
            self.workflows.runs_started[i].inc();
        }
    }

    /// A workflow run ended in `state` (one of [`RUN_ENDS`]).
    pub fn workflow_run_ended(&self, state: &str) {
        if let Some(i) = RUN_ENDS.iter().position(|s| *s == state).filter(|_| self.enabled) {
            self.workflows.runs_ended[i].inc();
        }
    }

    /// A workflow node was sent `wait_ms` after it became ready and `edge_ms` after its last upstream
    /// node ended (none for a node without upstream nodes).
    pub fn workflow_node_sent(&self, wait_ms: i64, edge_ms: Option<i64>) {
        if !self.enabled {
            return;
        }
        self.workflows.node_wait.observe(wait_ms.max(0) as f64 / 1000.0);
        if let Some(edge) = edge_ms {
            self.workflows.edge_latency.observe(edge.max(0) as f64 / 1000.0);
        }
    }

    pub fn lock_wait(&self, took: Duration) {
        if !self.enabled {
            return;
        }
        self.lock_wait.observe(took.as_secs_f64());
    }

    /// The OpenMetrics exposition: everything counted, then this scrape's snapshot and the process.
    pub fn render_openmetrics(&self, snapshot: &Snapshot) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = encode_registry(&mut out, &self.registry);
        let _ = encode_registry(&mut out, &scrape_registry(snapshot));
        let _ = encode_eof(&mut out);
        out
    }

    /// The same in the classic text format 0.0.4.
    pub fn render(&self, snapshot: &Snapshot) -> String {
        classic(&self.render_openmetrics(snapshot))
    }
}

fn alarm_labels(channel: &str, result: &str) -> Labels {
    labels(&[("channel", channel), ("result", result)])
}

/// What only the scrape knows, and the admin's version.
fn scrape_registry(snapshot: &Snapshot) -> Registry {
    let mut registry = Registry::default();
    registry.register(
        "xxl_job_build",
        "The admin's version",
        Info::new(vec![("version", env!("CARGO_PKG_VERSION"))]),
    );
    let gauge = |registry: &mut Registry, name: &str, help: &str, value: i64| {
        let gauge = Gauge::<i64>::default();
        gauge.set(value);
        registry.register(name, help, gauge);
    };
    gauge(
        &mut registry,
        "xxl_job_trigger_lane_backlog",
        "Triggers waiting in the lanes' queues",
        snapshot.lane_backlog as i64,
    );
    let executors = Family::<Labels, Gauge>::default();
    for (app_name, count) in capped(&snapshot.executors) {
        executors.get_or_create(&labels(&[("appname", &app_name)])).set(count as i64);
    }
    registry.register("xxl_job_executors_online", "Live executor registrations per AppName", executors);
    let runs = Family::<Labels, Gauge>::default();
    for state in ["queued", "running", "paused", "stopping"] {
        let count = snapshot.workflow_runs.iter().find(|(s, _)| s == state).map_or(0, |(_, n)| *n);
        runs.get_or_create(&labels(&[("state", state)])).set(count);
    }
    registry.register("xxl_job_workflow_runs_active", "Workflow runs not over, by state", runs);
    let connections = Family::<Labels, Gauge>::default();
    connections.get_or_create(&labels(&[("state", "in_use")])).set(i64::from(snapshot.pool_in_use));
    connections.get_or_create(&labels(&[("state", "idle")])).set(i64::from(snapshot.pool_idle));
    registry.register("xxl_job_db_connections", "Database pool connections by state", connections);
    gauge(
        &mut registry,
        "xxl_job_db_connections_max",
        "Database pool size limit",
        i64::from(snapshot.pool_max),
    );
    if let Some(process) = process::read() {
        process.register(&mut registry);
    }
    registry
}

/// OpenMetrics text as the classic format 0.0.4: a counter family and its `# HELP`/`# TYPE` lines are
/// named with `_total` there, an info family is a gauge named with `_info`, and there is no `# EOF`.
/// Samples are written the same way in both.
pub fn classic(open_metrics: &str) -> String {
    let mut out = String::with_capacity(open_metrics.len());
    // `# HELP` comes before `# TYPE`, which decides its name.
    let mut help: Option<(&str, &str)> = None;
    for line in open_metrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# HELP ") {
            help = rest.split_once(' ');
            continue;
        }
        if let Some((name, kind)) = line.strip_prefix("# TYPE ").and_then(|rest| rest.split_once(' ')) {
            let (name, kind) = match kind {
                "counter" => (format!("{name}_total"), kind),
                "info" => (format!("{name}_info"), "gauge"),
                _ => (name.to_string(), kind),
            };
            if let Some((_, text)) = help.take() {
                out.push_str(&format!("# HELP {name} {text}\n"));
            }
            out.push_str(&format!("# TYPE {name} {kind}\n"));
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn trigger_type_label(kind: TriggerType) -> &'static str {
    match kind {
        TriggerType::Cron => "cron",
        TriggerType::Manual => "manual",
        TriggerType::Retry => "retry",
        TriggerType::Parent => "parent",
        TriggerType::Api => "api",
        TriggerType::Misfire => "misfire",
        TriggerType::Workflow => "workflow",
    }
}

/// The [`MAX_APPNAMES`] AppNames with most executors (then by name), the rest summed as one.
fn capped(executors: &[(String, usize)]) -> Vec<(String, usize)> {
    let mut sorted = executors.to_vec();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let rest: usize = sorted.iter().skip(MAX_APPNAMES).map(|(_, n)| n).sum();
    sorted.truncate(MAX_APPNAMES);
    if executors.len() > MAX_APPNAMES {
        sorted.push((OTHER_APPNAMES.to_string(), rest));
    }
    sorted
}

/// The standard `process_*` metrics, from Linux's procfs; absent elsewhere.
mod process {
    use prometheus_client::metrics::counter::Counter;
    use prometheus_client::metrics::gauge::Gauge;
    use prometheus_client::registry::Registry;
    use std::sync::atomic::AtomicU64;

    /// `/proc` reports times in USER_HZ, which Linux fixes at 100 for user space on every architecture.
    const TICKS_PER_SECOND: f64 = 100.0;

    pub(super) struct Process {
        cpu_seconds: f64,
        resident_bytes: f64,
        virtual_bytes: f64,
        open_fds: f64,
        start_time_seconds: f64,
    }

    pub(super) fn read() -> Option<Process> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // Fields after the command name, which is in parentheses and may contain spaces.
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        // Numbered as in proc(5): state is field 3, so field n is at index n - 3.
        let field = |n: usize| fields.get(n - 3).and_then(|v| v.parse::<f64>().ok());
        let cpu_seconds = (field(14)? + field(15)?) / TICKS_PER_SECOND;
        let boot_time = std::fs::read_to_string("/proc/stat")
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("btime ").and_then(|v| v.trim().parse::<f64>().ok()))?;
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let kib = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        };
        Some(Process {
            cpu_seconds,
            resident_bytes: kib("VmRSS:")? * 1024.0,
            virtual_bytes: kib("VmSize:")? * 1024.0,
            open_fds: std::fs::read_dir("/proc/self/fd").ok()?.count() as f64,
            start_time_seconds: boot_time + field(22)? / TICKS_PER_SECOND,
        })
    }

    impl Process {
        pub(super) fn register(&self, registry: &mut Registry) {
            let cpu = Counter::<f64, AtomicU64>::default();
            cpu.inc_by(self.cpu_seconds);
            registry.register("process_cpu_seconds", "User and system CPU time spent, in seconds", cpu);
            for (name, help, value) in [
                ("process_resident_memory_bytes", "Resident memory size in bytes", self.resident_bytes),
                ("process_virtual_memory_bytes", "Virtual memory size in bytes", self.virtual_bytes),
                ("process_open_fds", "Open file descriptors", self.open_fds),
                (
                    "process_start_time_seconds",
                    "Start time of the process since the Unix epoch, in seconds",
                    self.start_time_seconds,
                ),
            ] {
                let gauge = Gauge::<f64, AtomicU64>::default();
                gauge.set(value);
                registry.register(name, help, gauge);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
        text.lines().find(|l| l.starts_with(prefix)).and_then(|l| l.rsplit(' ').next())
    }

    #[test]
    fn workflow_runs_and_node_waits_render() {
        let metrics = Metrics::new();
        metrics.workflow_run_started("discarded");
        metrics.workflow_run_ended("succeeded");
        metrics.workflow_node_sent(3, Some(12));
        metrics.workflow_node_sent(40, None);
        let text =
            metrics.render(&Snapshot { workflow_runs: vec![("running".into(), 4)], ..Snapshot::default() });
        assert_eq!(line(&text, "xxl_job_workflow_runs_active{state=\"running\"}"), Some("4"));
        assert_eq!(line(&text, "xxl_job_workflow_runs_active{state=\"queued\"}"), Some("0"));
        assert_eq!(line(&text, "xxl_job_workflow_runs_started_total{state=\"discarded\"}"), Some("1"));
        assert_eq!(line(&text, "xxl_job_workflow_runs_ended_total{state=\"succeeded\"}"), Some("1"));
        assert_eq!(line(&text, "xxl_job_workflow_edge_latency_seconds_bucket{le=\"0.025\"}"), Some("1"));
        assert_eq!(line(&text, "xxl_job_workflow_node_wait_seconds_count"), Some("2"));
    }

    #[test]
    fn counters_and_histograms_render_in_the_text_format() {
        let metrics = Metrics::new();
        metrics.trigger(TriggerType::Cron, true);
        metrics.trigger(TriggerType::Cron, false);
        metrics.trigger(TriggerType::Manual, false);
        for late in [3, 40, 60_000] {
            metrics.run_sent(TriggerType::Cron, Some(1_000), 1_000 + late);
        }
        // Not a planned schedule fire: no lateness.
        metrics.run_sent(TriggerType::Cron, None, 1_000);
        metrics.run_sent(TriggerType::Misfire, Some(1_000), 9_000);
        metrics.rejected(Lane::Slow);
        metrics.misfire_settled("DO_NOTHING", "late");
        metrics.misfire_settled("DO_NOTHING", "late");
        metrics.callbacks_received(3);
        metrics.callback_ignored(IgnoredCallback::AlreadyFinished);
        metrics.alarm("webhook:ops\"x", false);
        metrics.alarm_channels(["email", "webhook:ops\"x"]);
        for code in [200, 200, 500, 502, 0] {
            metrics.job_result(code);
        }
        let pool =
            Snapshot { lane_backlog: 7, pool_in_use: 2, pool_idle: 3, pool_max: 30, ..Snapshot::default() };
        let text = metrics.render(&Snapshot { executors: vec![("app".into(), 2)], ..pool });
        assert_eq!(line(&text, "xxl_job_triggers_total{type=\"cron\",result=\"success\"}"), Some("1"));
        assert_eq!(line(&text, "xxl_job_triggers_total{type=\"cron\",result=\"failure\"}"), Some("1"));
        assert_eq!(line(&text, "xxl_job_triggers_total{type=\"manual\",result=\"failure\"}"), Some("1"));
        assert_eq!(line(&text, "xxl_job_fire_lateness_seconds_bucket{le=\"0.005\"}"), Some("1"));
        assert_eq!(line(&text, "xxl_job_fire_lateness_seconds_bucket{le=\"0.05\"}"), Some("2"));
        assert_eq!(line(&text, "xxl_job_fire_lateness_seconds_bucket{le=\"10.0\"}"), Some("2"));
        assert_eq!(line(&text, "xxl_job_fire_lateness_seconds_bucket{le=\"+Inf\"}"), Some("3"));
        assert_eq!(line(&text, "xxl_job_fire_lateness_seconds_count"), Some("3"));
        let sum: f64 = line(&text, "xxl_job_fire_lateness_seconds_sum").unwrap().parse().unwrap();
        assert!((sum - 60.043).abs() < 1e-9, "{sum}");
        assert_eq!(line(&text, "xxl_job_trigger_rejections_total{lane=\"slow\"}"), Some("1"));
        assert_eq!(line(&text, "xxl_job_trigger_lane_backlog"), Some("7"));
        assert_eq!(
            line(&text, "xxl_job_misfires_settled_total{strategy=\"DO_NOTHING\",reason=\"late\"}"),
            Some("2")
        );
        assert_eq!(line(&text, "xxl_job_callbacks_received_total"), Some("3"));
        assert_eq!(line(&text, "xxl_job_callbacks_ignored_total{reason=\"already_finished\"}"), Some("1"));
        assert_eq!(
            line(&text, "xxl_job_alarms_total{channel=\"webhook:ops\\\"x\",result=\"failed\"}"),
            Some("1")
        );
        assert_eq!(line(&text, "xxl_job_db_connections{state=\"idle\"}"), Some("3"));
        assert_eq!(
            line(&text, "xxl_job_alarms_total{channel=\"email\",result=\"sent\"}"),
            Some("0"),
            "known, never used"
        );
        assert_eq!(
            line(&text, "xxl_job_misfires_settled_total{strategy=\"FIRE_ONCE_NOW\",reason=\"collapsed\"}"),
            Some("0")
        );
        assert_eq!(line(&text, "xxl_job_job_results_total{result=\"success\"}"), Some("2"));
        assert_eq!(line(&text, "xxl_job_job_results_total{result=\"failure\"}"), Some("2"));
        assert_eq!(line(&text, "xxl_job_job_results_total{result=\"timeout\"}"), Some("1"));
        assert_eq!(
            line(&text, &format!("xxl_job_build_info{{version=\"{}\"}}", env!("CARGO_PKG_VERSION"))),
            Some("1")
        );
        assert_eq!(line(&text, "xxl_job_executors_online{appname=\"app\"}"), Some("2"));
        assert!(text.contains("# TYPE xxl_job_fire_lateness_seconds histogram\n"), "{text}");
        if cfg!(target_os = "linux") {
            assert!(
                line(&text, "process_open_fds").is_some_and(|v| v.parse::<f64>().unwrap() > 0.0),
                "{text}"
            );
            assert!(
                line(&text, "process_start_time_seconds").is_some_and(|v| v.parse::<f64>().unwrap() > 1.6e9),
                "{text}"
            );
        }
    }

    /// A label value cannot end its sample: AppNames come from executors.
    #[test]
    fn label_values_are_escaped() {
        let metrics = Metrics::new();
        let forged = "x\"} 1\nxxl_job_triggers_total{type=\"cron\",result=\"success\\";
        let text = metrics.render(&Snapshot { executors: vec![(forged.into(), 1)], ..Snapshot::default() });
        assert_eq!(line(&text, "xxl_job_executors_online{appname=\"x\\\"} 1\\nxxl_job_triggers_total{type=\\\"cron\\\",result=\\\"success\\\\\"}"), Some("1"), "{text}");
        assert_eq!(
            text.lines()
                .filter(|l| l.starts_with("xxl_job_triggers_total{type=\"cron\",result=\"success\"}"))
                .count(),
            1
        );
    }

    /// OpenMetrics names a counter family without `_total` and ends with `# EOF`; the classic format
    /// names it with `_total` and has no `# EOF`; both write the same samples.
    #[test]
    fn both_formats() {
        let metrics = Metrics::new();
        metrics.trigger(TriggerType::Api, true);
        let open = metrics.render_openmetrics(&Snapshot::default());
        let classic = metrics.render(&Snapshot::default());
        assert!(open.ends_with("# EOF\n") && !classic.contains("# EOF"), "{classic}");
        assert!(
            open.contains("# TYPE xxl_job_triggers counter\n")
                && classic.contains("# TYPE xxl_job_triggers_total counter\n")
        );
        assert!(
            open.contains("# TYPE xxl_job_build info\n")
                && classic.contains("# TYPE xxl_job_build_info gauge\n")
        );
        assert!(
            classic.contains(
                "# HELP xxl_job_triggers_total Triggers finished, by trigger type and /run result.\n"
            ),
            "{classic}"
        );
        let samples =
            |text: &str| text.lines().filter(|l| !l.starts_with('#')).map(str::to_string).collect::<Vec<_>>();
        assert_eq!(samples(&open).len(), samples(&classic).len());
        assert_eq!(line(&open, "xxl_job_triggers_total{type=\"api\",result=\"success\"}"), Some("1"));
    }

    #[test]
    fn switched_off_counts_nothing() {
        let metrics = Metrics::with_counting(false);
        metrics.trigger(TriggerType::Cron, true);
        metrics.run_sent(TriggerType::Cron, Some(1_000), 1_010);
        metrics.misfire_settled("DO_NOTHING", "late");
        metrics.alarm("email", true);
        metrics.job_result(200);
        let text = metrics.render(&Snapshot::default());
        assert_eq!(line(&text, "xxl_job_triggers_total{type=\"cron\",result=\"success\"}"), Some("0"));
        assert_eq!(line(&text, "xxl_job_fire_lateness_seconds_count"), Some("0"));
        assert_eq!(
            line(&text, "xxl_job_misfires_settled_total{strategy=\"DO_NOTHING\",reason=\"late\"}"),
            Some("0")
        );
        assert_eq!(line(&text, "xxl_job_job_results_total{result=\"success\"}"), Some("0"));
        assert!(!text.contains("xxl_job_alarms_total{"), "{text}");
    }

    #[test]
    fn appnames_beyond_the_cap_are_summed() {
        let many: Vec<(String, usize)> =
            (0..MAX_APPNAMES + 5).map(|i| (format!("app{i:03}"), 1 + usize::from(i == 104))).collect();
        let shown = capped(&many);
        assert_eq!(shown.len(), MAX_APPNAMES + 1);
        assert_eq!(shown[0], ("app104".to_string(), 2), "the largest first");
        assert_eq!(shown.last(), Some(&(OTHER_APPNAMES.to_string(), 5)));
        assert_eq!(capped(&many[..3]).len(), 3, "no `_other` below the cap");
    }
}
