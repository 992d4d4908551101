//! `xxl-job-bench`: the scheduler measured end to end on this machine.
//!
//! Each row gets a fresh database (MariaDB, PostgreSQL or an SQLite file); an in-process executor that acknowledges
//! `/run` at once, reports results by batched callbacks and records every `/run` with the planned instant
//! the admin sends beside it; the admin as a separate child process (so its CPU and memory are its own);
//! and the bench jobs: N jobs due every second (aligned on the second or spread over it) measured over a
//! window after a warm-up, or N jobs due once at one instant (a burst). The executor says what was sent
//! for which instant and when it arrived, the log table what completed, `/proc` the CPU of the admin and
//! the database server (for PostgreSQL its postmaster and the backends it forked) and the admin's memory,
//! and MariaDB its statement counters. `--raw-only` issues the admin's writes without the admin, for the
//! ceiling MariaDB allows. `--peer` first measures ratch-job the same way (see `peer`), then states the
//! admin's figures as ratios to it. `--workflow` starts runs of a 10-node workflow at once and measures
//! from each node's callback to its successors' `/run` (see `workflow`).

mod args;
mod db;
mod executor;
mod peer;
mod process;
mod raw;
mod report;
mod stats;
mod workflow;

use args::{Command, Options, Phase, Storage, Workload, USAGE};
use db::{Counters, RowDb, Servers, Shape};
use executor::{ExecutorCounts, FastExecutor};
use process::{
    cpu_ticks, own_cpu_ticks, peak_rss_kib, AdminProcess, LogStreams, MachineTicks, ServerProcess,
};
use report::{Measured, Row, RunResult, Scheduler};
use stats::Usage;
use stats::{Fire, Grid};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use xxl_job_admin::domain::misfire::MISFIRE_THRESHOLD_MS;

/// How long the admin may take to answer its health check.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// From activating the jobs to their first planned fire: longer than the admin's pre-read window (5 s)
/// so the schedule loop reads every job before it is due.
const LEAD_MS: i64 = 7_000;
/// After a window: fires of its last instants may arrive up to the misfire threshold late (later ones
/// are settled by the misfire rule), and their results need a moment to come back by callback.
const SETTLE_MS: i64 = MISFIRE_THRESHOLD_MS + 1_000;
/// A burst is over when no `/run` arrived for this long (after the misfire threshold has passed) …
const BURST_QUIET: Duration = Duration::from_secs(2);
/// … or at the latest this long after its instant.
const BURST_MAX_MS: i64 = 120_000;
const POLL: Duration = Duration::from_millis(100);
/// A 1-minute load above this means other work shares the cores: the figures are not a quiet run.
const QUIET_LOAD: f64 = 0.5;
const ADMIN_EXE: &str = "xxl-job-admin";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match args::parse(&args) {
        Ok(Command::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Command::Run(options)) => *options,
        Err(e) => {
            eprintln!("xxl-job-bench: {e}");
            eprintln!("Run `xxl-job-bench --help` for the options.");
            return ExitCode::from(2);
        }
    };
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => ExitCode::from(runtime.block_on(bench(options))),
        Err(e) => {
            eprintln!("xxl-job-bench: cannot start the async runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

/// What every row shares.
struct Context {
    admin_exe: PathBuf,
    /// The database servers the rows use.
    servers: Servers,
    /// Only ever pointed at 127.0.0.1; proxies from the environment must not apply.
    client: reqwest::Client,
    /// Where the admin runs (so no stray `application.properties` is picked up) and SQLite files live.
    workdir: PathBuf,
}

/// One row to measure.
#[derive(Debug, Clone, Copy)]
struct Plan {
    scheduler: Scheduler,
    kind: Kind,
    /// The bench jobs; for a workflow row, the runs.
    jobs: usize,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    /// The jobs of `Shape` on a scheduler (the admin, or the peer).
    Scheduled(Shape),
    RawCeiling,
    Workflow,
}

fn plans(options: &Options) -> Vec<Plan> {
    let mut plans = Vec::new();
    if let (Some(_), Workload::Sustained { jobs, .. }) = (&options.peer, &options.workload) {
        let shape = Kind::Scheduled(Shape::Sustained(Phase::Aligned));
        plans.extend(jobs.iter().map(|&jobs| Plan { scheduler: Scheduler::Peer, kind: shape, jobs }));
    }
    for &storage in &options.storages {
        let scheduler = Scheduler::Admin(storage);
        match &options.workload {
            Workload::Sustained { jobs, phases } => {
                for &phase in phases {
                    plans.extend(jobs.iter().map(|&jobs| Plan {
                        scheduler,
                        kind: Kind::Scheduled(Shape::Sustained(phase)),
                        jobs,
                    }));
                }
            }
            Workload::Burst(sizes) => plans.extend(sizes.iter().map(|&jobs| Plan {
                scheduler,
                kind: Kind::Scheduled(Shape::Burst),
                jobs,
            })),
            Workload::RawCeiling(jobs) => {
                plans.extend(jobs.iter().map(|&jobs| Plan { scheduler, kind: Kind::RawCeiling, jobs }))
            }
            &Workload::Workflow { runs } => plans.push(Plan { scheduler, kind: Kind::Workflow, jobs: runs }),
        }
    }
    plans
}

fn progress(message: impl AsRef<str>) {
    eprintln!("[bench {}] {}", chrono::Local::now().format("%H:%M:%S"), message.as_ref());
}

async fn bench(options: Options) -> u8 {
    let load = load_average();
    let context = match prepare(&options).await {
        Ok(context) => context,
        Err(e) => {
            eprintln!("xxl-job-bench: {e}");
            return 1;
        }
    };
    let machine = machine_facts(&context, &load).await;
    if cfg!(debug_assertions) {
        progress("this is a debug build: use `cargo build --release` for meaningful numbers");
    }
    // Before any admin runs, so nothing else shares the cores.
    let validation = match options.workload {
        Workload::Workflow { .. } => {
            progress("timing the validation of a 500-node workflow definition");
            Some(workflow::time_validation())
        }
        _ => None,
    };
    let (rows, mut code) = run_rows(&options, &context).await;
    if let Some(Err(e)) = &validation {
        progress(format!("the validation timing failed: {e}"));
        code = code.max(1);
    }
    if options.keep {
        progress(format!(
            "kept the databases (xxl_bench_{}_<row>) and {}",
            std::process::id(),
            context.workdir.display()
        ));
    } else {
        let _ = std::fs::remove_dir_all(&context.workdir);
    }
    context.servers.close().await;
    let validation = validation.and_then(Result::ok);
    print!("{}", report::render(&machine, &settings(&options), &rows, validation.as_ref()));
    code
}

/// The load average as the kernel shows it, warning when the machine is not quiet.
fn load_average() -> String {
    match process::load_average() {
        Some((text, one_minute)) => {
            progress(format!("load average: {text}"));
            if one_minute > QUIET_LOAD {
                progress(format!(
                    "WARNING: 1-minute load {one_minute} > {QUIET_LOAD}: the machine is not quiet"
                ));
            }
            text
        }
        None => "unknown".into(),
    }
}

/// Measures each planned row in turn; the rows measured and the exit code (1 when a row failed, 130 when
/// interrupted, which ends the run).
async fn run_rows(options: &Options, context: &Context) -> (Vec<Row>, u8) {
    let mut rows = Vec::new();
    let mut code = 0;
    for (n, plan) in plans(options).into_iter().enumerate() {
        let name = format!("xxl_bench_{}_{n}", std::process::id());
        let label = match plan.kind {
            Kind::Workflow => report::workflow_label(plan.scheduler, plan.jobs),
            _ => report::label(plan.scheduler, kind_name(plan.kind), plan.jobs),
        };
        progress(format!("{label}: {name}"));
        let outcome = tokio::select! {
            outcome = run_row(options, context, plan, &name, &label) => Some(outcome),
            _ = tokio::signal::ctrl_c() => None,
        };
        // The row's admin process and executor were stopped (or killed, when dropped) by now.
        if let (false, Scheduler::Admin(storage)) = (options.keep, plan.scheduler) {
            if let Err(e) = context.servers.drop_database(storage, &name).await {
                progress(e);
            }
        }
        match outcome {
            Some(Ok(measured)) => rows.push(Row { scheduler: plan.scheduler, jobs: plan.jobs, measured }),
            Some(Err(e)) => {
                progress(format!("{label} failed: {e}"));
                code = 1;
            }
            None => {
                progress("interrupted");
                code = 130;
                break;
            }
        }
    }
    (rows, code)
}

/// The report's line of how the rows were run.
fn settings(options: &Options) -> String {
    let datasource = match options.storages.contains(&Storage::Postgres) {
        true => "serverTimezone=UTC (PostgreSQL: also sslmode=disable)",
        false => "serverTimezone=UTC",
    };
    let settings = match options.workload {
        Workload::Sustained { .. } => format!(
            "window {} s after {} s of warm-up; admin: default configuration, datasource {datasource}, logging warn",
            options.seconds, options.warmup
        ),
        Workload::Burst(_) => format!(
            "burst: all jobs due once at one instant {} s after activation, measured until no /run for {} s; admin: \
             default configuration, datasource {datasource}, logging warn",
            LEAD_MS / 1000,
            BURST_QUIET.as_secs()
        ),
        Workload::RawCeiling(_) => format!("raw ceiling: {} s after {} s of ramp-up, {} connections", options.seconds, raw::RAMP.as_secs(), raw::CONNECTIONS),
        Workload::Workflow { runs } => format!(
            "workflow: one 10-node DAG (a → b1..b5 → c → d → e → f) of one BEAN job, {runs} runs started at once \
             through the storage API and measured until every run is over (at most {} s); admin: default \
             configuration, datasource {datasource}, logging warn",
            workflow::TIME_LIMIT.as_secs()
        ),
    };
    match &options.peer {
        Some(exe) => format!("{settings}\n{}", peer::settings(exe)),
        None => settings,
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Scheduled(Shape::Sustained(phase)) => phase.name(),
        Kind::Scheduled(Shape::Burst) => "burst",
        Kind::RawCeiling => "raw",
        Kind::Workflow => "workflow",
    }
}

async fn prepare(options: &Options) -> Result<Context, String> {
    let admin_exe = match &options.admin {
        Some(path) => path.clone(),
        None => std::env::current_exe()
            .map_err(|e| format!("cannot find this executable: {e}"))?
            .with_file_name(ADMIN_EXE),
    };
    let raw_only = matches!(options.workload, Workload::RawCeiling(_));
    if !raw_only && !admin_exe.is_file() {
        return Err(format!(
            "no admin at {}: build both programs (`cargo build --release`) or pass --admin PATH",
            admin_exe.display()
        ));
    }
    if let Some(peer) = options.peer.as_ref().filter(|p| !p.is_file()) {
        return Err(format!("--peer: no ratch-job executable at {}", peer.display()));
    }
    let (servers, notes) = Servers::connect(options).await?;
    notes.into_iter().for_each(progress);
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
    let workdir = std::env::temp_dir().join(format!("xxl-job-bench-{}", std::process::id()));
    std::fs::create_dir_all(&workdir).map_err(|e| format!("cannot create {}: {e}", workdir.display()))?;
    Ok(Context { admin_exe, servers, client, workdir })
}

async fn machine_facts(context: &Context, load: &str) -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_gib = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or_else(|| "?".into(), |kib| format!("{:.1}", kib / 1024.0 / 1024.0));
    let build = if cfg!(debug_assertions) { "debug build (numbers not meaningful)" } else { "release build" };
    let mut facts = format!(
        "machine: {cores} cores ({model}), {mem_gib} GiB RAM; {build}; load average at start: {load}"
    );
    for server in context.servers.facts().await {
        facts.push_str(&format!("\n{server}"));
    }
    facts
}

async fn run_row(
    options: &Options,
    context: &Context,
    plan: Plan,
    name: &str,
    label: &str,
) -> Result<Measured, String> {
    let Scheduler::Admin(storage) = plan.scheduler else {
        return measure_peer(options, context, plan.jobs, name, label).await;
    };
    let (db, datasource) =
        RowDb::create(storage, &context.servers, &context.workdir, name, raw::CONNECTIONS).await?;
    let measured = measure_row(options, context, plan, storage, &db, datasource, label).await;
    db.close().await;
    measured
}

/// ratch-job with `jobs` aligned every-second jobs, measured over the same window as an admin row.
async fn measure_peer(
    options: &Options,
    context: &Context,
    jobs: usize,
    name: &str,
    label: &str,
) -> Result<Measured, String> {
    let exe = options.peer.as_deref().ok_or("no --peer executable")?;
    let token = format!("{:032x}", rand::random::<u128>());
    let ports = peer::Ports { api: free_port()?, console: free_port()?, cluster: free_port()? };
    let base = format!("http://127.0.0.1:{}", ports.api);
    let mut executor = FastExecutor::start(
        &token,
        format!("{base}{}/api/callback", peer::XXL_PREFIX),
        context.client.clone(),
    )
    .await?;
    let mut process = peer::spawn(exe, &context.workdir.join(name), &ports, &token)?;
    executor.register(
        context.client.clone(),
        format!("{base}{}/api/registry", peer::XXL_PREFIX),
        peer::APP_NAME.into(),
    );
    process
        .wait_until("accept the executor's registration", STARTUP_TIMEOUT, || async { executor.registered() })
        .await?;
    let creating = std::time::Instant::now();
    let ids = peer::create_jobs(&context.client, &base, jobs).await?;
    progress(format!(
        "{label}: {jobs} jobs created in {:.1} s; executor at {}",
        creating.elapsed().as_secs_f64(),
        executor.address
    ));
    // Each job fires from the whole second after its creation on, so all are due from the next one.
    let start_ms = chrono::Utc::now().timestamp_millis().div_euclid(1000) * 1000 + 1000;
    let grid = Grid { start_ms, jobs, first_job_id: db::FIRST_JOB_ID, phase: Phase::Aligned };
    let run = Run { db: None, executor: &executor, admin_pid: process.pid(), db_process: None, grid, label };
    let window = run.sustained(options.warmup, options.seconds).await;
    let result =
        finish(process, executor, &grid, window, label, |fires| peer::planned(fires, &ids, db::FIRST_JOB_ID))
            .await?;
    Ok(Measured::Sustained(result))
}

async fn measure_row(
    options: &Options,
    context: &Context,
    plan: Plan,
    storage: Storage,
    db: &RowDb,
    datasource: db::Datasource,
    label: &str,
) -> Result<Measured, String> {
    let port = free_port()?;
    let token = format!("{:032x}", rand::random::<u128>());
    let executor =
        FastExecutor::start(&token, format!("{}/api/callback", admin_base(port)), context.client.clone())
            .await?;
    let seeding = std::time::Instant::now();
    let (shape, jobs) = match plan.kind {
        Kind::Scheduled(shape) => (shape, plan.jobs),
        // The ceiling only needs job rows to write for; their schedule is its own.
        Kind::RawCeiling => (Shape::Sustained(Phase::Spread), plan.jobs),
        // One job, never scheduled (it stays stopped): the workflow's nodes are its only triggers.
        Kind::Workflow => (Shape::Burst, 1),
    };
    db.seed(shape, jobs, &executor.address).await?;
    progress(format!(
        "{label}: seeded in {:.1} s; executor at {}",
        seeding.elapsed().as_secs_f64(),
        executor.address
    ));
    let shape = match plan.kind {
        Kind::Scheduled(shape) => shape,
        Kind::RawCeiling => return measure_raw(options, context, db, executor, label).await,
        Kind::Workflow => {
            let setup =
                workflow::Setup { context, storage, row_db: db, datasource: &datasource, port, label };
            let result = setup.measure(executor, &token, plan.jobs).await?;
            return Ok(Measured::Workflow(Box::new(result)));
        }
    };
    let admin = start_admin(context, port, &token, &datasource).await?;
    let now = chrono::Utc::now().timestamp_millis();
    let grid = Grid {
        start_ms: (now + LEAD_MS).div_euclid(1000) * 1000 + 1000,
        jobs: plan.jobs,
        first_job_id: db::FIRST_JOB_ID,
        phase: shape.phase(),
    };
    let db_process = context.servers.process(storage);
    let run = Run { db: Some(db), executor: &executor, admin_pid: admin.pid(), db_process, grid, label };
    let measured = match shape {
        Shape::Sustained(_) => run.sustained(options.warmup, options.seconds).await,
        Shape::Burst => run.burst().await,
    };
    let result = finish(admin, executor, &grid, measured, label, |fires| fires).await?;
    Ok(match shape {
        Shape::Sustained(_) => Measured::Sustained(result),
        Shape::Burst => Measured::Burst(result),
    })
}

/// The raw ceiling on the seeded jobs; the executor only lent them its address.
async fn measure_raw(
    options: &Options,
    context: &Context,
    db: &RowDb,
    executor: FastExecutor,
    label: &str,
) -> Result<Measured, String> {
    let pool = db.mysql().ok_or("the raw ceiling needs MariaDB")?;
    db.activate(chrono::Utc::now().timestamp_millis()).await?;
    let workload =
        raw::Workload { executor_address: executor.address.clone(), jobs: db::next_times(pool).await? };
    executor.stop().await;
    let server = context.servers.mysql.as_ref().ok_or("the raw ceiling needs MariaDB")?;
    progress(format!("{label}: raw ceiling for {} s with {} connections", options.seconds, raw::CONNECTIONS));
    Ok(Measured::Raw(raw::measure(pool, &server.pool, workload, options.seconds, server.process).await?))
}

/// Where the admin listening on `port` answers.
fn admin_base(port: u16) -> String {
    format!("http://127.0.0.1:{port}/xxl-job-admin")
}

/// The admin on `datasource` as a child process, on `port` of 127.0.0.1 with `token`, once healthy.
async fn start_admin(
    context: &Context,
    port: u16,
    token: &str,
    datasource: &db::Datasource,
) -> Result<AdminProcess, String> {
    let mut args = vec![
        format!("--server.port={port}"),
        "--server.address=127.0.0.1".to_string(),
        format!("--xxl.job.accessToken={token}"),
        "--logging.level.root=warn".to_string(),
    ];
    args.extend(datasource.args.iter().cloned());
    let mut admin = AdminProcess::spawn(
        "the admin",
        &context.admin_exe,
        &args,
        &datasource.env,
        &context.workdir,
        LogStreams::Both,
    )?;
    let health = format!("{}/actuator/health", admin_base(port));
    admin.wait_healthy(&context.client, &health, STARTUP_TIMEOUT).await?;
    Ok(admin)
}

/// Stops the scheduler and the executor and analyses the window's fires, once `planned` has given each
/// its planned instant (the admin sends it in a header; the peer's is derived).
async fn finish(
    mut scheduler: AdminProcess,
    executor: FastExecutor,
    grid: &Grid,
    window: Result<Window, String>,
    label: &str,
    planned: impl FnOnce(Vec<Fire>) -> Vec<Fire>,
) -> Result<RunResult, String> {
    progress(format!("{label}: stopping the scheduler"));
    let exit = match scheduler.stop().await {
        Ok(status) => format!("{status} after SIGTERM"),
        Err(e) => e,
    };
    let fires = planned(executor.take_fires());
    executor.stop().await;
    let window = window?;
    Ok(RunResult {
        phase: grid.phase,
        fires: stats::analyse(grid, window.planned_ms, &fires),
        seconds: window.seconds,
        usage: window.usage,
        peak_rss_kib: window.peak_rss_kib,
        logs: window.logs,
        backlog_at_end: window.backlog_at_end,
        executor: window.executor,
        log: scheduler.log_summary(),
        exit,
    })
}

/// What a row measured while its admin ran; its fires are analysed once the admin has stopped.
struct Window {
    /// The planned instants that count: `[from, to)`.
    planned_ms: (i64, i64),
    seconds: u64,
    usage: Usage,
    peak_rss_kib: Option<u64>,
    logs: Option<db::LogCounts>,
    /// Callbacks still queued in the executor when the window closed.
    backlog_at_end: u64,
    /// Taken before the admin stops: callbacks refused during its shutdown are not the row's.
    executor: ExecutorCounts,
}

/// A row whose scheduler is up and whose jobs are seeded (or, for the peer, created and firing already).
struct Run<'a> {
    /// None for the peer, whose records are its own.
    db: Option<&'a RowDb>,
    executor: &'a FastExecutor,
    admin_pid: u32,
    db_process: Option<ServerProcess>,
    grid: Grid,
    label: &'a str,
}

impl Run<'_> {
    /// N jobs every second: the window's planned instants, after a warm-up; returns the window.
    async fn sustained(&self, warmup: u64, seconds: u64) -> Result<Window, String> {
        let from = self.grid.start_ms + warmup as i64 * 1000;
        let to = from + seconds as i64 * 1000;
        // Fires are released at their planned millisecond, so none of the window's arrives before it; the
        // analysis picks the window's by planned instant.
        self.executor.record_between((from - 1000) * 1000, (to + SETTLE_MS) * 1000);
        self.activate(self.grid.start_ms).await?;
        progress(format!(
            "{}: scheduler pid {} up; first fire in {:.1} s, window {seconds} s after a {warmup} s warm-up",
            self.label,
            self.admin_pid,
            (self.grid.start_ms - chrono::Utc::now().timestamp_millis()) as f64 / 1000.0,
        ));
        sleep_until_ms(from).await;
        let before = self.snapshot().await?;
        sleep_until_ms(to).await;
        let after = self.snapshot().await?;
        let backlog_at_end = self.executor.counts().backlog;
        sleep_until_ms(to + SETTLE_MS).await;
        let logs = match self.db {
            Some(db) => Some(db.count_logs(db::utc_datetime(from), db::utc_datetime(to)).await?),
            None => None,
        };
        let peak_rss_kib = peak_rss_kib(self.admin_pid);
        let usage = after.usage_since(&before);
        let executor = self.executor.counts();
        Ok(Window { planned_ms: (from, to), seconds, usage, peak_rss_kib, logs, backlog_at_end, executor })
    }

    /// N jobs due once at the grid's start: measured from the activation (planning included) until
    /// no `/run` has come for a while after the misfire threshold.
    async fn burst(&self) -> Result<Window, String> {
        let at = self.grid.start_ms;
        self.executor.record_between(chrono::Utc::now().timestamp_micros(), (at + BURST_MAX_MS) * 1000);
        let before = self.snapshot().await?;
        self.activate(at).await?;
        progress(format!(
            "{}: admin pid {} up; {} jobs due at once in {:.1} s",
            self.label,
            self.admin_pid,
            self.grid.jobs,
            (at - chrono::Utc::now().timestamp_millis()) as f64 / 1000.0
        ));
        sleep_until_ms(at + MISFIRE_THRESHOLD_MS).await;
        let mut runs = self.executor.counts().runs;
        let mut quiet_since = tokio::time::Instant::now();
        while quiet_since.elapsed() < BURST_QUIET && chrono::Utc::now().timestamp_millis() < at + BURST_MAX_MS
        {
            tokio::time::sleep(POLL).await;
            let now_runs = self.executor.counts().runs;
            if now_runs != runs {
                (runs, quiet_since) = (now_runs, tokio::time::Instant::now());
            }
        }
        let after = self.snapshot().await?;
        let peak_rss_kib = peak_rss_kib(self.admin_pid);
        let usage = after.usage_since(&before);
        let executor = self.executor.counts();
        Ok(Window {
            planned_ms: (at, at + 1000),
            seconds: 1,
            usage,
            peak_rss_kib,
            logs: None,
            backlog_at_end: 0,
            executor,
        })
    }

    /// Lets the seeded jobs fire from `start_ms`; the peer's fire from their creation.
    async fn activate(&self, start_ms: i64) -> Result<(), String> {
        match self.db {
            Some(db) => db.activate(start_ms).await,
            None => Ok(()),
        }
    }

    async fn snapshot(&self) -> Result<Snapshot, String> {
        snapshot(self.db, self.admin_pid, self.db_process).await
    }
}

/// The resources used so far by the admin, the database server (and `db`'s statement counters), this
/// process and the machine.
async fn snapshot(
    db: Option<&RowDb>,
    admin_pid: u32,
    db_process: Option<ServerProcess>,
) -> Result<Snapshot, String> {
    let counters = match db {
        Some(db) => db.counters().await?,
        None => None,
    };
    Ok(Snapshot {
        at_ms: chrono::Utc::now().timestamp_millis(),
        counters,
        admin: cpu_ticks(admin_pid),
        db: db_process.and_then(ServerProcess::cpu_ticks),
        own: own_cpu_ticks(),
        machine: MachineTicks::read(),
    })
}

/// The resources used so far by the admin, the database server, this process and the machine.
struct Snapshot {
    at_ms: i64,
    counters: Option<Counters>,
    admin: Option<u64>,
    db: Option<u64>,
    own: Option<u64>,
    machine: Option<MachineTicks>,
}

impl Snapshot {
    fn usage_since(&self, before: &Snapshot) -> Usage {
        let delta = |pick: fn(&Snapshot) -> Option<u64>| Some(pick(self)?.saturating_sub(pick(before)?));
        Usage {
            elapsed_ms: self.at_ms - before.at_ms,
            admin_ticks: delta(|s| s.admin),
            db_ticks: delta(|s| s.db),
            own_ticks: delta(|s| s.own),
            machine_busy_ticks: delta(|s| s.machine.map(|m| m.busy)),
            machine_iowait_ticks: delta(|s| s.machine.map(|m| m.iowait)),
            statements: match (&self.counters, &before.counters) {
                (Some(after), Some(before)) => db::COUNTERS.iter().map(|c| after.delta(before, c)).collect(),
                _ => Vec::new(),
            },
        }
    }
}

async fn sleep_until_ms(epoch_ms: i64) {
    let wait = epoch_ms - chrono::Utc::now().timestamp_millis();
    if wait > 0 {
        tokio::time::sleep(Duration::from_millis(wait as u64)).await;
    }
}

/// A port nobody listens on right now (the admin binds it moments later).
fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free port: {e}"))
}
