//! The admin (or the peer, ratch-job) as a child process (so its CPU and memory can be measured alone),
//! and what `/proc` says about processes.

use std::collections::BTreeMap;
use std::future::Future;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use xxl_job_admin::domain::misfire::DropReason;

/// Lines kept for the report, of each level.
const LOG_SAMPLES: u64 = 3;
/// The admin drains its timer wheel (≤ 5 s of planned fires) and trigger lanes (≤ 10 s) on SIGTERM.
const STOP_TIMEOUT: Duration = Duration::from_secs(20);
const POLL: Duration = Duration::from_millis(100);

/// What the admin logged at warn level or above.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogSummary {
    pub warnings: u64,
    pub errors: u64,
    pub samples: Vec<String>,
    /// Planned fires the admin settled without sending them, summed from its summary lines, by reason.
    pub not_sent: BTreeMap<String, u64>,
}

impl LogSummary {
    /// Fires settled by the misfire rule, or collapsed into a later fire, without a `/run`.
    pub fn misfire_settled(&self) -> u64 {
        [DropReason::Misfire, DropReason::Collapsed].iter().filter_map(|r| self.not_sent.get(r.label())).sum()
    }
}

/// The admin's summary line for planned fires it did not send (`log_dropped`, scheduler/trigger/counts.rs).
const NOT_SENT: &str = " planned fire(s) not sent: ";

/// Where a child writes its log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogStreams {
    /// The admin: `tracing` lines on stdout, panics on stderr.
    Both,
    /// ratch-job: `env_logger` lines on stderr; stdout has only its start-up banner.
    Stderr,
}

/// A running admin (or peer); killed (SIGKILL) if dropped before [`AdminProcess::stop`].
pub struct AdminProcess {
    /// "the admin" or "ratch-job", for messages.
    name: &'static str,
    child: Child,
    logs: Arc<Mutex<LogSummary>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

impl AdminProcess {
    /// Starts `exe` with `args` in `cwd`. The admin's output is read by two threads that keep only
    /// counts and a few samples, so a flood of log lines can neither block the admin nor fill a disk.
    pub fn spawn(
        name: &'static str,
        exe: &Path,
        args: &[String],
        env: &[(String, String)],
        cwd: &Path,
        streams: LogStreams,
    ) -> Result<AdminProcess, String> {
        let mut command = Command::new(exe);
        command
            .args(args)
            .current_dir(cwd)
            // RUST_LOG would override --logging.level.root; NO_COLOR keeps the level words parseable.
            .env_remove("RUST_LOG")
            .env("NO_COLOR", "1")
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(if streams == LogStreams::Both { Stdio::piped() } else { Stdio::null() })
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
        let logs = Arc::new(Mutex::new(LogSummary::default()));
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            readers.push(read_log(out, logs.clone()));
        }
        if let Some(err) = child.stderr.take() {
            readers.push(read_log(err, logs.clone()));
        }
        Ok(AdminProcess { name, child, logs, readers })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Polls the health endpoint until it answers `UP`, failing early if the admin exits.
    pub async fn wait_healthy(
        &mut self,
        client: &reqwest::Client,
        url: &str,
        timeout: Duration,
    ) -> Result<(), String> {
        let up = || async {
            match client.get(url).timeout(Duration::from_secs(2)).send().await {
                Ok(response) => response.text().await.is_ok_and(|body| body.contains("\"UP\"")),
                Err(_) => false,
            }
        };
        self.wait_until(&format!("report UP at {url}"), timeout, up).await
    }

    /// Polls `ready` until it says yes, failing early if the process exits.
    pub async fn wait_until<F: Future<Output = bool>>(
        &mut self,
        what: &str,
        timeout: Duration,
        mut ready: impl FnMut() -> F,
    ) -> Result<(), String> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                let name = self.name;
                return Err(format!(
                    "{name} exited during start-up ({status}); its log: {:?}",
                    self.log_summary().samples
                ));
            }
            if ready().await {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(format!("{} did not {what} within {timeout:?}", self.name));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    pub fn log_summary(&self) -> LogSummary {
        self.logs.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// SIGTERM, then waits for the graceful shutdown; SIGKILL if it takes longer than [`STOP_TIMEOUT`].
    /// Afterwards [`AdminProcess::log_summary`] includes everything the admin wrote.
    pub async fn stop(&mut self) -> Result<ExitStatus, String> {
        let status = self.terminate().await;
        // The pipes are closed now that the admin is gone, so the readers are at their end.
        for reader in self.readers.drain(..) {
            let _ = reader.join();
        }
        status
    }

    async fn terminate(&mut self) -> Result<ExitStatus, String> {
        // std only sends SIGKILL; the pid cannot have been reused, since the child is not reaped yet.
        let sent = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        if !sent.is_ok_and(|s| s.success()) {
            self.child.kill().map_err(|e| format!("cannot stop {}: {e}", self.name))?;
        }
        let deadline = tokio::time::Instant::now() + STOP_TIMEOUT;
        loop {
            let name = self.name;
            if let Some(status) = self.child.try_wait().map_err(|e| format!("cannot wait for {name}: {e}"))? {
                return Ok(status);
            }
            if tokio::time::Instant::now() >= deadline {
                let _ = self.child.kill();
                let status = self.child.wait().map_err(|e| format!("cannot wait for {name}: {e}"))?;
                return Err(format!("{name} ignored SIGTERM for {STOP_TIMEOUT:?} and was killed ({status})"));
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

impl Drop for AdminProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn read_log(stream: impl Read + Send + 'static, logs: Arc<Mutex<LogSummary>>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            let level = level_of(&line);
            if level.is_none() {
                continue;
            }
            let mut logs = logs.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((reason, n)) = not_sent(&line) {
                *logs.not_sent.entry(reason.to_string()).or_default() += n;
            }
            let seen = match level {
                Some(Level::Warn) => &mut logs.warnings,
                _ => &mut logs.errors,
            };
            *seen += 1;
            if *seen <= LOG_SAMPLES {
                logs.samples.push(line);
            }
        }
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Warn,
    Error,
}

/// Words that name a level, as `tracing` and `env_logger` write them.
const LEVELS: [&str; 5] = ["ERROR", "WARN", "INFO", "DEBUG", "TRACE"];
/// A level comes after the timestamp: one word for `tracing`, three for `env_logger` (date, time, offset).
const LEVEL_WITHIN_WORDS: usize = 4;

/// The level of a `tracing` line (`<timestamp>  WARN <message>`) or an `env_logger` one (`[<date> <time>
/// <offset> WARN  <target>] <message>`); other lines (panics, `eprintln!`) count as errors unless blank.
fn level_of(line: &str) -> Option<Level> {
    if line.trim().is_empty() {
        return None;
    }
    let level =
        line.trim_start_matches('[').split_whitespace().take(LEVEL_WITHIN_WORDS).find(|w| LEVELS.contains(w));
    match level {
        Some("WARN") => Some(Level::Warn),
        Some("INFO" | "DEBUG" | "TRACE") => None,
        _ => Some(Level::Error),
    }
}

/// `<timestamp>  WARN 12 planned fire(s) not sent: misfire, DO_NOTHING` → (reason, 12).
fn not_sent(line: &str) -> Option<(&str, u64)> {
    let (before, reason) = line.split_once(NOT_SENT)?;
    let count = before.rsplit(' ').next()?.parse().ok()?;
    Some((reason.trim(), count))
}

/// User + system CPU ticks of a process (all its threads) so far.
pub fn cpu_ticks(pid: u32) -> Option<u64> {
    Some(ProcStat::read(pid)?.ticks)
}

pub fn own_cpu_ticks() -> Option<u64> {
    Some(ProcStat::parse(&std::fs::read_to_string("/proc/self/stat").ok()?)?.ticks)
}

/// What the report needs of `/proc/<pid>/stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ProcStat {
    ppid: u32,
    /// utime + stime: the process's own CPU.
    ticks: u64,
    /// cutime + cstime: of its children that ended and were waited for.
    children_ticks: u64,
}

impl ProcStat {
    fn read(pid: u32) -> Option<ProcStat> {
        ProcStat::parse(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }

    /// Fields 4 (ppid) and 14–17 (utime, stime, cutime, cstime); the command name (field 2) may contain
    /// spaces and parentheses, so fields are counted from the last `)`.
    fn parse(stat: &str) -> Option<ProcStat> {
        let after_name = &stat[stat.rfind(')')? + 1..];
        let fields: Vec<&str> = after_name.split_whitespace().collect();
        let field = |n: usize| -> Option<u64> { fields.get(n - 3)?.parse().ok() };
        Some(ProcStat {
            ppid: u32::try_from(field(4)?).ok()?,
            ticks: field(14)? + field(15)?,
            children_ticks: field(16)? + field(17)?,
        })
    }
}

/// The processes of a database server, whose CPU is the database's share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerProcess {
    /// One process, all its threads (MariaDB).
    Threads(u32),
    /// A postmaster with one child process per connection (PostgreSQL).
    Postmaster(u32),
}

impl ServerProcess {
    /// CPU ticks of the server so far. For a postmaster: its own, its children's that ended (counted
    /// once it has waited for them) and its live children's; a child ending between the two reads may
    /// be counted twice or not at all, a few ticks against a window's thousands.
    pub fn cpu_ticks(self) -> Option<u64> {
        match self {
            ServerProcess::Threads(pid) => cpu_ticks(pid),
            ServerProcess::Postmaster(pid) => {
                let postmaster = ProcStat::read(pid)?;
                let live = processes().filter_map(ProcStat::read).filter(|c| c.ppid == pid).map(|c| c.ticks);
                Some(postmaster.ticks + postmaster.children_ticks + live.sum::<u64>())
            }
        }
    }
}

/// The pids under `/proc`.
fn processes() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
}

fn is_named(pid: u32, names: &[&str]) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| names.contains(&c.trim()))
}

/// CPU ticks of the whole machine so far, summed over all cores.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MachineTicks {
    /// user, nice, system, irq, softirq, steal.
    pub busy: u64,
    pub iowait: u64,
}

impl MachineTicks {
    pub fn read() -> Option<MachineTicks> {
        parse_machine_ticks(&std::fs::read_to_string("/proc/stat").ok()?)
    }
}

/// The `cpu` line of `/proc/stat`: user nice system idle iowait irq softirq steal guest guest_nice
/// (guest time is already included in user).
fn parse_machine_ticks(stat: &str) -> Option<MachineTicks> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line.split_whitespace().skip(1).map(|f| f.parse().ok()).collect::<Option<_>>()?;
    let field = |i: usize| v.get(i).copied().unwrap_or(0);
    Some(MachineTicks {
        busy: field(0) + field(1) + field(2) + field(5) + field(6) + field(7),
        iowait: field(4),
    })
}

/// `/proc/loadavg` as the kernel writes it, and its 1-minute load.
pub fn load_average() -> Option<(String, f64)> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let one_minute = parse_load(&text)?;
    Some((text.trim().to_string(), one_minute))
}

fn parse_load(loadavg: &str) -> Option<f64> {
    loadavg.split_whitespace().next()?.parse().ok()
}

/// Peak resident set size in KiB (`VmHWM`).
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    parse_vm_hwm(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
}

fn parse_vm_hwm(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line["VmHWM:".len()..].trim().trim_end_matches("kB").trim().parse().ok()
}

/// The database server's pid: the one its pid file names, when readable and a process of `names`;
/// otherwise the one process of `names` running, if there is exactly one (with another server, such as
/// a test suite's private one, picking would be a guess).
pub fn server_process(pid_file: Option<&str>, names: &[&str]) -> Option<u32> {
    let is_server = |pid: &u32| is_named(*pid, names);
    let named =
        pid_file.and_then(|f| std::fs::read_to_string(f).ok()).and_then(|text| text.trim().parse().ok());
    if let Some(pid) = named.filter(is_server) {
        return Some(pid);
    }
    let mut running = processes().filter(is_server);
    let first = running.next()?;
    running.next().is_none().then_some(first)
}

/// The postmaster that forked `backend` (the server process of one of our connections), when both are
/// processes of `names` on this machine: unlike its pid file, this needs no access to the data directory.
pub fn postmaster_of(backend: u32, names: &[&str]) -> Option<u32> {
    let postmaster = ProcStat::read(backend).filter(|_| is_named(backend, names))?.ppid;
    is_named(postmaster, names).then_some(postmaster)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_skip_names_with_spaces() {
        let stat =
            "4242 (tokio (rt) w) S 17 4242 4242 0 -1 4194560 1234 0 0 0 1500 250 30 12 20 0 9 0 100 0 0";
        assert_eq!(ProcStat::parse(stat), Some(ProcStat { ppid: 17, ticks: 1750, children_ticks: 42 }));
        assert_eq!(ProcStat::parse("garbage"), None);
        assert_eq!(ProcStat::parse("1 (x) S 0 1 1 0 -1 0 0 0 0 0 5 6"), None);
    }

    #[test]
    fn postmaster_counts_its_children() {
        // This test process stands in for a postmaster: a child's CPU counts while it runs (live) and
        // after it ended and was waited for (cutime + cstime).
        let me = std::process::id();
        let finished_before = ProcStat::read(me).unwrap().children_ticks;
        let mut child = Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"])
            .spawn()
            .unwrap();
        let mut live = 0;
        while live == 0 && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(20));
            live = ProcStat::read(child.id()).map_or(0, |c| c.ticks);
        }
        let own = cpu_ticks(me).unwrap();
        let during = ServerProcess::Postmaster(me).cpu_ticks().unwrap();
        assert!(during >= own + finished_before + live, "{during} < {own} + {finished_before} + {live}");
        assert!(child.wait().unwrap().success());
        let finished = ProcStat::read(me).unwrap().children_ticks - finished_before;
        assert!(finished >= live.max(1), "the child's {live} ticks are not among the finished ({finished})");
        let own = cpu_ticks(me).unwrap();
        let after = ServerProcess::Postmaster(me).cpu_ticks().unwrap();
        assert!(
            after >= own + finished_before + finished,
            "{after} < {own} + {finished_before} + {finished}"
        );
        assert_eq!(ServerProcess::Postmaster(u32::MAX).cpu_ticks(), None);
    }

    #[test]
    fn machine_ticks_from_the_cpu_line() {
        let stat = "cpu  310639 68 33203 1042349 6569 0 6863 720 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n";
        assert_eq!(
            parse_machine_ticks(stat),
            Some(MachineTicks { busy: 310_639 + 68 + 33_203 + 6_863 + 720, iowait: 6_569 })
        );
        assert_eq!(parse_machine_ticks("intr 1 2\n"), None);
    }

    #[test]
    fn one_minute_load() {
        assert_eq!(parse_load("0.52 0.31 0.20 2/345 6789\n"), Some(0.52));
        assert_eq!(parse_load(""), None);
    }

    #[test]
    fn vm_hwm_in_kib() {
        let status = "Name:\txxl-job-admin\nVmPeak:\t  200000 kB\nVmHWM:\t   45312 kB\nVmRSS:\t   40000 kB\n";
        assert_eq!(parse_vm_hwm(status), Some(45_312));
        assert_eq!(parse_vm_hwm("Name: x\n"), None);
    }

    #[test]
    fn fires_not_sent_are_summed_by_reason() {
        let line = format!(
            "2025-01-01T00:00:00.000001Z  WARN 312 planned fire(s) not sent: {}",
            DropReason::Misfire.label()
        );
        assert_eq!(not_sent(&line), Some((DropReason::Misfire.label(), 312)));
        assert_eq!(
            not_sent("2025-01-01T00:00:00Z  WARN 1 planned fire(s) not sent: job stopped"),
            Some(("job stopped", 1))
        );
        assert_eq!(not_sent("2025-01-01T00:00:00Z  WARN trigger skipped"), None);
        let mut summary = LogSummary::default();
        summary.not_sent.insert(DropReason::Misfire.label().into(), 5);
        summary.not_sent.insert(DropReason::Collapsed.label().into(), 2);
        summary.not_sent.insert(DropReason::Stopped.label().into(), 7);
        assert_eq!(summary.misfire_settled(), 7);
    }

    #[test]
    fn log_levels() {
        assert_eq!(level_of("2025-01-01T00:00:00.000001Z  WARN repeated callback"), Some(Level::Warn));
        assert_eq!(level_of("2025-01-01T00:00:00.000001Z ERROR trigger rejected"), Some(Level::Error));
        assert_eq!(level_of("2025-01-01T00:00:00.000001Z  INFO listening"), None);
        assert_eq!(level_of("thread 'main' panicked at src/app.rs:1:1"), Some(Level::Error));
        assert_eq!(level_of("   "), None);
        assert_eq!(
            level_of("[2026-11-25 16:59:19.092135 +00:00 WARN  ratchjob::raft::store::raftlog] empty"),
            Some(Level::Warn)
        );
        assert_eq!(
            level_of(
                "[2026-11-25 16:59:54.002416 +00:00 ERROR ratchjob::task::request_actor] run task error"
            ),
            Some(Level::Error)
        );
        assert_eq!(level_of("[2026-11-25 16:59:19.092135 +00:00 INFO  ratchjob] started"), None);
    }
}
