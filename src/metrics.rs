//! Prometheus metrics, served at `{context}{management}/prometheus` in the text exposition format 0.0.4.
//!
//! One [`Metrics`] value is created at start-up and handed to the components that count; what can be
//! read at scrape time (lane backlog, pool, executors online, process) is read then, not counted. The
//! registry is hand-written: every label set is small and closed (trigger types, lanes, channels named in
//! configuration), which needs only atomics, and the text format is a few lines to write.

use crate::domain::TriggerType;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Seconds; from "on time" to "the misfire rule would skip it" (five seconds).
const LATENESS_BUCKETS: [f64; 12] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];
/// Seconds; a schedule pass or lock wait is normally milliseconds, seconds under contention.
const PASS_BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0];
/// AppNames reported one by one; the others are summed under [`OTHER_APPNAMES`], so a flood of
/// registrations cannot flood the time-series database.
pub const MAX_APPNAMES: usize = 100;
pub const OTHER_APPNAMES: &str = "_other";

const TRIGGER_TYPES: [TriggerType; 6] =
    [TriggerType::Cron, TriggerType::Manual, TriggerType::Retry, TriggerType::Parent, TriggerType::Api, TriggerType::Misfire];

/// The counters and histograms of one admin process.
pub struct Metrics {
    /// `false` when the endpoint is switched off: nothing is counted.
    enabled: bool,
    /// By trigger type (index in [`TRIGGER_TYPES`]), then success / failure.
    triggers: [[AtomicU64; 2]; TRIGGER_TYPES.len()],
    lateness: Histogram<{ LATENESS_BUCKETS.len() }>,
    /// Fast lane, slow lane.
    rejections: [AtomicU64; 2],
    /// (strategy, reason, count): a handful of entries, searched without allocating, since a saturated
    /// admin settles tens of thousands of misfires a second.
    misfires: Mutex<Vec<(String, String, u64)>>,
    callbacks_received: AtomicU64,
    /// Unknown log, already finished.
    callbacks_ignored: [AtomicU64; 2],
    /// Registrations of a new AppName refused for `xxl.job.registry.max-apps`.
    registrations_refused: AtomicU64,
    /// By channel, then sent / failed.
    alarms: Mutex<BTreeMap<String, [u64; 2]>>,
    schedule_pass: Histogram<{ PASS_BUCKETS.len() }>,
    lock_wait: Histogram<{ PASS_BUCKETS.len() }>,
}

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

/// What only the scrape can know: read by the HTTP handler from the running services.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub lane_backlog: usize,
    pub pool_in_use: u32,
    pub pool_idle: u32,
    pub pool_max: u32,
    /// Live executor addresses per AppName.
    pub executors: Vec<(String, usize)>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        Metrics::with_counting(true)
    }

    /// Counting only when `enabled`; a switched-off endpoint costs the hot path one branch per event.
    pub fn with_counting(enabled: bool) -> Metrics {
        Metrics {
            enabled,
            triggers: Default::default(),
            lateness: Histogram::new(LATENESS_BUCKETS),
            rejections: Default::default(),
            misfires: Mutex::default(),
            callbacks_received: AtomicU64::new(0),
            callbacks_ignored: Default::default(),
            registrations_refused: AtomicU64::new(0),
            alarms: Mutex::default(),
            schedule_pass: Histogram::new(PASS_BUCKETS),
            lock_wait: Histogram::new(PASS_BUCKETS),
        }
    }

    /// A trigger reached its end: `/run` answered 200, or not (or no executor could be chosen).
    pub fn trigger(&self, kind: TriggerType, success: bool) {
        if !self.enabled {
            return;
        }
        let index = TRIGGER_TYPES.iter().position(|t| *t == kind).unwrap_or(0);
        self.triggers[index][usize::from(!success)].fetch_add(1, Ordering::Relaxed);
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
        self.rejections[lane as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// A missed fire of a job with misfire `strategy` (`DO_NOTHING`, `FIRE_ONCE_NOW`) was settled for
    /// `reason`: `late`, read by the schedule pass more than the pre-read window after its time;
    /// `at_release`, more than that late when its lane was about to send it. Both come from small fixed
    /// sets; the strategy is the stored text, which the console validates.
    pub fn misfire_settled(&self, strategy: &str, reason: &str) {
        self.misfires_settled(strategy, reason, 1);
    }

    /// [`Metrics::misfire_settled`] for `n` fires at once.
    pub fn misfires_settled(&self, strategy: &str, reason: &str, n: u64) {
        if !self.enabled {
            return;
        }
        if let Ok(mut misfires) = self.misfires.lock() {
            match misfires.iter_mut().find(|(s, r, _)| s == strategy && r == reason) {
                Some((_, _, count)) => *count += n,
                None => misfires.push((strategy.to_string(), reason.to_string(), n)),
            }
        }
    }

    /// Callback items received from executors.
    pub fn callbacks_received(&self, items: usize) {
        if !self.enabled {
            return;
        }
        self.callbacks_received.fetch_add(items as u64, Ordering::Relaxed);
    }

    /// A callback item that changed nothing.
    pub fn callback_ignored(&self, why: IgnoredCallback) {
        if !self.enabled {
            return;
        }
        self.callbacks_ignored[why as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// A registration refused because its AppName would be one too many.
    pub fn registration_refused(&self) {
        if self.enabled {
            self.registrations_refused.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// An alarm sent (or not) on `channel` (`email`, `webhook:<name>`, or `unknown` for a name no channel has).
    pub fn alarm(&self, channel: &str, delivered: bool) {
        if !self.enabled {
            return;
        }
        if let Ok(mut alarms) = self.alarms.lock() {
            alarms.entry(channel.to_string()).or_default()[usize::from(!delivered)] += 1;
        }
    }

    pub fn schedule_pass(&self, took: Duration) {
        if !self.enabled {
            return;
        }
        self.schedule_pass.observe(took.as_secs_f64());
    }

    pub fn lock_wait(&self, took: Duration) {
        if !self.enabled {
            return;
        }
        self.lock_wait.observe(took.as_secs_f64());
    }

    /// The exposition text: everything counted, the snapshot, and the process's own figures.
    pub fn render(&self, snapshot: &Snapshot) -> String {
        let mut out = Exposition::default();
        out.family("xxl_job_triggers_total", "counter", "Triggers finished, by trigger type and /run result.");
        for (kind, counts) in TRIGGER_TYPES.iter().zip(&self.triggers) {
            for (result, count) in ["success", "failure"].iter().zip(counts) {
                out.sample("xxl_job_triggers_total", &[("type", trigger_type_label(*kind)), ("result", result)], load(count));
            }
        }
        out.histogram("xxl_job_fire_lateness_seconds", "From a planned fire's instant to its /run request.", &self.lateness);
        out.family("xxl_job_trigger_lane_backlog", "gauge", "Triggers waiting in the lanes' queues.");
        out.sample("xxl_job_trigger_lane_backlog", &[], snapshot.lane_backlog as f64);
        out.family("xxl_job_trigger_rejections_total", "counter", "Triggers refused because their lane's queue was full.");
        for (lane, count) in ["fast", "slow"].iter().zip(&self.rejections) {
            out.sample("xxl_job_trigger_rejections_total", &[("lane", lane)], load(count));
        }
        out.family("xxl_job_misfires_settled_total", "counter", "Missed fires settled by the schedule pass, by misfire strategy and reason.");
        let mut misfires = self.misfires.lock().map(|m| m.clone()).unwrap_or_default();
        misfires.sort();
        for (strategy, reason, count) in misfires {
            out.sample("xxl_job_misfires_settled_total", &[("strategy", &strategy), ("reason", &reason)], count as f64);
        }
        out.family("xxl_job_callbacks_received_total", "counter", "Result callback items received from executors.");
        out.sample("xxl_job_callbacks_received_total", &[], load(&self.callbacks_received));
        out.family("xxl_job_callbacks_ignored_total", "counter", "Callback items that changed nothing, by reason.");
        for (reason, count) in ["unknown_log", "already_finished"].iter().zip(&self.callbacks_ignored) {
            out.sample("xxl_job_callbacks_ignored_total", &[("reason", reason)], load(count));
        }
        out.family("xxl_job_registrations_refused_total", "counter", "Executor registrations refused, by reason.");
        out.sample("xxl_job_registrations_refused_total", &[("reason", "max_apps")], load(&self.registrations_refused));
        out.family("xxl_job_executors_online", "gauge", "Live executor registrations per AppName.");
        for (app_name, count) in capped(&snapshot.executors) {
            out.sample("xxl_job_executors_online", &[("appname", &app_name)], count as f64);
        }
        out.family("xxl_job_alarms_total", "counter", "Alarms by channel and outcome.");
        for (channel, counts) in self.alarms.lock().map(|m| m.clone()).unwrap_or_default() {
            for (result, count) in ["sent", "failed"].iter().zip(counts) {
                out.sample("xxl_job_alarms_total", &[("channel", &channel), ("result", result)], count as f64);
            }
        }
        out.histogram("xxl_job_schedule_pass_seconds", "Duration of schedule passes, lock wait included.", &self.schedule_pass);
        out.histogram("xxl_job_schedule_lock_wait_seconds", "Time spent waiting for the cluster-wide schedule lock.", &self.lock_wait);
        out.family("xxl_job_db_connections", "gauge", "Database pool connections by state.");
        out.sample("xxl_job_db_connections", &[("state", "in_use")], f64::from(snapshot.pool_in_use));
        out.sample("xxl_job_db_connections", &[("state", "idle")], f64::from(snapshot.pool_idle));
        out.family("xxl_job_db_connections_max", "gauge", "Database pool size limit.");
        out.sample("xxl_job_db_connections_max", &[], f64::from(snapshot.pool_max));
        if let Some(process) = process::read() {
            process.render(&mut out);
        }
        out.text
    }
}

fn load(counter: &AtomicU64) -> f64 {
    counter.load(Ordering::Relaxed) as f64
}

fn trigger_type_label(kind: TriggerType) -> &'static str {
    match kind {
        TriggerType::Cron => "cron",
        TriggerType::Manual => "manual",
        TriggerType::Retry => "retry",
        TriggerType::Parent => "parent",
        TriggerType::Api => "api",
        TriggerType::Misfire => "misfire",
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

/// A cumulative histogram with fixed upper bounds.
struct Histogram<const N: usize> {
    bounds: [f64; N],
    /// Observations at or below each bound (not cumulative; summed when rendered), then above the last.
    counts: [AtomicU64; N],
    overflow: AtomicU64,
    /// Microseconds, so the sum is an integer counter.
    sum_micros: AtomicU64,
}

impl<const N: usize> Histogram<N> {
    fn new(bounds: [f64; N]) -> Self {
        Histogram { bounds, counts: std::array::from_fn(|_| AtomicU64::new(0)), overflow: AtomicU64::new(0), sum_micros: AtomicU64::new(0) }
    }

    fn observe(&self, seconds: f64) {
        match self.bounds.iter().position(|bound| seconds <= *bound) {
            Some(i) => self.counts[i].fetch_add(1, Ordering::Relaxed),
            None => self.overflow.fetch_add(1, Ordering::Relaxed),
        };
        self.sum_micros.fetch_add((seconds * 1e6) as u64, Ordering::Relaxed);
    }
}

/// The text being written.
#[derive(Default)]
struct Exposition {
    text: String,
}

impl Exposition {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.text, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.text.push_str(name);
        if !labels.is_empty() {
            let pairs: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{}\"", escape_label(v))).collect();
            let _ = write!(self.text, "{{{}}}", pairs.join(","));
        }
        let _ = writeln!(self.text, " {value}");
    }

    fn histogram<const N: usize>(&mut self, name: &str, help: &str, histogram: &Histogram<N>) {
        self.family(name, "histogram", help);
        let bucket = format!("{name}_bucket");
        let mut cumulative = 0;
        for (bound, count) in histogram.bounds.iter().zip(&histogram.counts) {
            cumulative += count.load(Ordering::Relaxed);
            self.sample(&bucket, &[("le", &bound.to_string())], cumulative as f64);
        }
        cumulative += histogram.overflow.load(Ordering::Relaxed);
        self.sample(&bucket, &[("le", "+Inf")], cumulative as f64);
        self.sample(&format!("{name}_sum"), &[], histogram.sum_micros.load(Ordering::Relaxed) as f64 / 1e6);
        self.sample(&format!("{name}_count"), &[], cumulative as f64);
    }
}

/// The format's three escapes in label values.
fn escape_label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// The standard `process_*` metrics, from Linux's procfs; absent elsewhere.
mod process {
    use super::Exposition;

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
            status.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
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
        pub(super) fn render(&self, out: &mut Exposition) {
            for (name, kind, help, value) in [
                ("process_cpu_seconds_total", "counter", "User and system CPU time spent, in seconds.", self.cpu_seconds),
                ("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", self.resident_bytes),
                ("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", self.virtual_bytes),
                ("process_open_fds", "gauge", "Open file descriptors.", self.open_fds),
                ("process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch, in seconds.", self.start_time_seconds),
            ] {
                out.family(name, kind, help);
                out.sample(name, &[], value);
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
        let text = metrics.render(&Snapshot { lane_backlog: 7, pool_in_use: 2, pool_idle: 3, pool_max: 30, executors: vec![("app".into(), 2)] });
        assert_eq!(line(&text, "xxl_job_triggers_total{type=\"cron\",result=\"success\"}"), Some("1"));
        assert_eq!(line(&text, "xxl_job_triggers_total{type=\"cron\",result=\"failure\"}"), Some("1"));
        assert_eq!(line(&text, "xxl_job_triggers_total{type=\"manual\",result=\"failure\"}"), Some("1"));
        assert_eq!(line(&text, "xxl_job_fire_lateness_seconds_bucket{le=\"0.005\"}"), Some("1"));
        assert_eq!(line(&text, "xxl_job_fire_lateness_seconds_bucket{le=\"0.05\"}"), Some("2"));
        assert_eq!(line(&text, "xxl_job_fire_lateness_seconds_bucket{le=\"10\"}"), Some("2"));
        assert_eq!(line(&text, "xxl_job_fire_lateness_seconds_bucket{le=\"+Inf\"}"), Some("3"));
        assert_eq!(line(&text, "xxl_job_fire_lateness_seconds_count"), Some("3"));
        assert_eq!(line(&text, "xxl_job_fire_lateness_seconds_sum"), Some("60.043"));
        assert_eq!(line(&text, "xxl_job_trigger_rejections_total{lane=\"slow\"}"), Some("1"));
        assert_eq!(line(&text, "xxl_job_trigger_lane_backlog"), Some("7"));
        assert_eq!(line(&text, "xxl_job_misfires_settled_total{strategy=\"DO_NOTHING\",reason=\"late\"}"), Some("2"));
        assert_eq!(line(&text, "xxl_job_callbacks_received_total"), Some("3"));
        assert_eq!(line(&text, "xxl_job_callbacks_ignored_total{reason=\"already_finished\"}"), Some("1"));
        assert_eq!(line(&text, "xxl_job_alarms_total{channel=\"webhook:ops\\\"x\",result=\"failed\"}"), Some("1"));
        assert_eq!(line(&text, "xxl_job_db_connections{state=\"idle\"}"), Some("3"));
        assert_eq!(line(&text, "xxl_job_executors_online{appname=\"app\"}"), Some("2"));
        assert!(text.contains("# TYPE xxl_job_fire_lateness_seconds histogram\n"), "{text}");
        if cfg!(target_os = "linux") {
            assert!(line(&text, "process_open_fds").is_some_and(|v| v.parse::<f64>().unwrap() > 0.0), "{text}");
            assert!(line(&text, "process_start_time_seconds").is_some_and(|v| v.parse::<f64>().unwrap() > 1.6e9), "{text}");
        }
    }

    #[test]
    fn switched_off_counts_nothing() {
        let metrics = Metrics::with_counting(false);
        metrics.trigger(TriggerType::Cron, true);
        metrics.run_sent(TriggerType::Cron, Some(1_000), 1_010);
        metrics.misfire_settled("DO_NOTHING", "late");
        metrics.alarm("email", true);
        let text = metrics.render(&Snapshot::default());
        assert_eq!(line(&text, "xxl_job_triggers_total{type=\"cron\",result=\"success\"}"), Some("0"));
        assert_eq!(line(&text, "xxl_job_fire_lateness_seconds_count"), Some("0"));
        assert!(!text.contains("xxl_job_misfires_settled_total{") && !text.contains("xxl_job_alarms_total{"), "{text}");
    }

    #[test]
    fn appnames_beyond_the_cap_are_summed() {
        let many: Vec<(String, usize)> = (0..MAX_APPNAMES + 5).map(|i| (format!("app{i:03}"), 1 + usize::from(i == 104))).collect();
        let shown = capped(&many);
        assert_eq!(shown.len(), MAX_APPNAMES + 1);
        assert_eq!(shown[0], ("app104".to_string(), 2), "the largest first");
        assert_eq!(shown.last(), Some(&(OTHER_APPNAMES.to_string(), 5)));
        assert_eq!(capped(&many[..3]).len(), 3, "no `_other` below the cap");
    }
}
