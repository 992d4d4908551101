//! `xxl-job-admin bench`: the scheduler measured end to end on this machine.
//!
//! For each job count: a fresh database; an in-process executor that acknowledges `/run` at once and
//! reports results by batched callbacks; the admin as a separate child process (so its CPU and memory
//! are its own); N FIX_RATE 1 s jobs whose phases are spread over one second. After a warm-up the
//! window is measured from four sides: the log table (what completed), the executor (when each fire
//! arrived), `/proc` (CPU, memory) and the server's statement counters. Then the same writes are issued
//! without the admin, for the ceiling the database allows.

mod args;
mod db;
mod executor;
mod process;
mod raw;
mod report;
mod stats;

use args::{Command, Options, USAGE};
use db::{Counters, COUNTERS, FIRST_JOB_ID};
use executor::FastExecutor;
use process::{cpu_ticks, own_cpu_ticks, peak_rss_kib, AdminProcess, MachineTicks};
use report::{AdminResult, Row};
use sqlx::MySqlPool;
use stats::{cpu_percent, Grid};
use std::path::PathBuf;
use std::time::Duration;

/// How long the admin may take to answer its health check.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// From activating the jobs to their first planned fire: longer than the admin's pre-read window (5 s)
/// so the schedule loop reads every job before it is due.
const LEAD_MS: i64 = 7_000;
/// After the window, time for the results of its last fires to come back by callback.
const CALLBACK_GRACE: Duration = Duration::from_secs(3);
const DB_PROCESS_NAMES: [&str; 2] = ["mariadbd", "mysqld"];

/// Runs the command; returns the process exit code.
pub fn run(args: &[String]) -> i32 {
    let options = match args::parse(args) {
        Ok(Command::Help) => {
            print!("{USAGE}");
            return 0;
        }
        Ok(Command::Run(options)) => options,
        Err(e) => {
            eprintln!("xxl-job-admin bench: {e}");
            eprintln!("Run `xxl-job-admin bench --help` for the options.");
            return 2;
        }
    };
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime.block_on(bench(options)),
        Err(e) => {
            eprintln!("xxl-job-admin bench: cannot start the async runtime: {e}");
            1
        }
    }
}

/// What every row shares.
struct Context {
    exe: PathBuf,
    server: MySqlPool,
    /// Only ever pointed at 127.0.0.1; proxies from the environment must not apply.
    client: reqwest::Client,
    /// Where the admin runs, so no stray `application.properties` is picked up.
    workdir: PathBuf,
    db_pid: Option<u32>,
}

fn progress(message: impl AsRef<str>) {
    eprintln!("[bench {}] {}", chrono::Local::now().format("%H:%M:%S"), message.as_ref());
}

async fn bench(options: Options) -> i32 {
    let context = match prepare(&options).await {
        Ok(context) => context,
        Err(e) => {
            eprintln!("xxl-job-admin bench: {e}");
            return 1;
        }
    };
    let machine = machine_facts(&context.server).await;
    if cfg!(debug_assertions) {
        progress("this is a debug build: use `cargo run --release -- bench` for meaningful numbers");
    }
    let mut rows = Vec::new();
    let mut code = 0;
    for &jobs in &options.jobs {
        let database = format!("xxl_bench_{}_{jobs}", std::process::id());
        progress(format!("{jobs} jobs: database {database}"));
        let outcome = tokio::select! {
            outcome = run_row(&options, &context, jobs, &database) => Some(outcome),
            _ = tokio::signal::ctrl_c() => None,
        };
        // The row's admin process and executor were stopped (or killed, when dropped) by now.
        if options.keep {
            progress(format!("kept database {database}"));
        } else if let Err(e) = db::drop_database(&context.server, &database).await {
            progress(e);
        }
        match outcome {
            Some(Ok(row)) => rows.push(row),
            Some(Err(e)) => {
                progress(format!("{jobs} jobs failed: {e}"));
                code = 1;
            }
            None => {
                progress("interrupted");
                code = 130;
                break;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&context.workdir);
    context.server.close().await;
    let settings = format!(
        "window {} s after {} s of warm-up; admin: default configuration, jdbc serverTimezone=UTC, logging warn{}",
        options.seconds,
        options.warmup,
        if options.raw_only { " (not run: --raw-only)" } else { "" }
    );
    print!("{}", report::render(&machine, &settings, &rows));
    code
}

async fn prepare(options: &Options) -> Result<Context, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let server = db::server_pool(&options.mysql).await?;
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
    let workdir = std::env::temp_dir().join(format!("xxl-job-bench-{}", std::process::id()));
    std::fs::create_dir_all(&workdir).map_err(|e| format!("cannot create {}: {e}", workdir.display()))?;
    Ok(Context { exe, server, client, workdir, db_pid: process::find_process(&DB_PROCESS_NAMES) })
}

async fn machine_facts(server: &MySqlPool) -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, m)| m.trim().to_string()))
        .unwrap_or_else(|| "unknown CPU".into());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_gib = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or_else(|| "?".into(), |kib| format!("{:.1}", kib / 1024.0 / 1024.0));
    let server = db::server_facts(server).await.unwrap_or_else(|e| format!("unknown ({e})"));
    let build = if cfg!(debug_assertions) { "debug build (numbers not meaningful)" } else { "release build" };
    format!("machine: {cores} cores ({model}), {mem_gib} GiB RAM; {build}\nMariaDB: {server}")
}

async fn run_row(options: &Options, context: &Context, jobs: usize, database: &str) -> Result<Row, String> {
    db::drop_database(&context.server, database).await?;
    let port = free_port()?;
    let token = format!("{:032x}", rand::random::<u128>());
    let admin_args = vec![
        format!("--server.port={port}"),
        "--server.address=127.0.0.1".to_string(),
        format!("--spring.datasource.url={}", options.mysql.jdbc_url(database)),
        format!("--spring.datasource.username={}", options.mysql.user),
        format!("--xxl.job.accessToken={token}"),
        "--logging.level.root=warn".to_string(),
    ];
    // Kept off the command line, where any local user could read it.
    let env: Vec<(String, String)> =
        options.mysql.password.iter().map(|p| ("SPRING_DATASOURCE_PASSWORD".to_string(), p.clone())).collect();
    db::create_schema(&context.server, database, &admin_args, &env, &context.workdir).await?;
    let pool = db::database_pool(&options.mysql, database, raw::CONNECTIONS).await?;
    let base = format!("http://127.0.0.1:{port}/xxl-job-admin");
    let executor = FastExecutor::start(&token, format!("{base}/api/callback"), context.client.clone()).await?;
    let seeding = std::time::Instant::now();
    let group = db::seed(&pool, jobs, &executor.address).await?;
    progress(format!("{jobs} jobs: seeded in {:.1} s; executor at {}", seeding.elapsed().as_secs_f64(), executor.address));

    let admin = if options.raw_only {
        let grid = Grid { start_ms: chrono::Utc::now().timestamp_millis(), jobs, first_job_id: FIRST_JOB_ID };
        db::activate(&pool, group, &grid).await?;
        None
    } else {
        let spawned = AdminProcess::spawn(&context.exe, &admin_args, &env, &context.workdir)?;
        Some(measure_admin(options, context, spawned, &executor, &pool, group, jobs, &base).await?)
    };
    let executor_address = executor.address.clone();
    executor.stop().await;

    progress(format!("{jobs} jobs: raw ceiling for {} s with {} connections", options.seconds, raw::CONNECTIONS));
    let workload = raw::Workload { group, executor_address, jobs: db::next_times(&pool, group).await? };
    let raw = raw::measure(&pool, &context.server, workload, options.seconds, context.db_pid).await?;
    pool.close().await;
    Ok(Row { jobs, admin, raw })
}

/// The resources used so far by the admin, the database server and this process.
struct Snapshot {
    at_ms: i64,
    counters: Counters,
    admin: Option<u64>,
    db: Option<u64>,
    own: Option<u64>,
    machine: Option<MachineTicks>,
}

impl Snapshot {
    async fn take(server: &MySqlPool, admin_pid: u32, db_pid: Option<u32>) -> Result<Snapshot, String> {
        let counters = Counters::read(server).await?;
        Ok(Snapshot {
            at_ms: chrono::Utc::now().timestamp_millis(),
            counters,
            admin: cpu_ticks(admin_pid),
            db: db_pid.and_then(cpu_ticks),
            own: own_cpu_ticks(),
            machine: MachineTicks::read(),
        })
    }

    fn cpu_since(&self, before: &Snapshot, pick: fn(&Snapshot) -> Option<u64>) -> Option<f64> {
        Some(cpu_percent(pick(self)?.saturating_sub(pick(before)?), self.at_ms - before.at_ms))
    }
}

#[allow(clippy::too_many_arguments)]
async fn measure_admin(
    options: &Options,
    context: &Context,
    mut admin: AdminProcess,
    executor: &FastExecutor,
    pool: &MySqlPool,
    group: i32,
    jobs: usize,
    base: &str,
) -> Result<AdminResult, String> {
    admin.wait_healthy(&context.client, &format!("{base}/actuator/health"), STARTUP_TIMEOUT).await?;
    let now = chrono::Utc::now().timestamp_millis();
    let grid = Grid { start_ms: (now + LEAD_MS).div_euclid(1000) * 1000 + 1000, jobs, first_job_id: FIRST_JOB_ID };
    db::activate(pool, group, &grid).await?;
    let lead = grid.start_ms - chrono::Utc::now().timestamp_millis();
    let from = grid.start_ms + options.warmup as i64 * 1000;
    let to = from + options.seconds as i64 * 1000;
    // Every fire from the first on: attributing them follows the admin's delay from its start. Fires of
    // the window arriving after the grace period count as missed.
    executor.record_between(grid.start_ms * 1000, to * 1000 + CALLBACK_GRACE.as_micros() as i64);
    progress(format!(
        "{jobs} jobs: admin pid {} up; first fire in {:.1} s, window {} s after a {} s warm-up",
        admin.pid(),
        lead as f64 / 1000.0,
        options.seconds,
        options.warmup
    ));

    sleep_until_ms(from).await;
    let before = Snapshot::take(&context.server, admin.pid(), context.db_pid).await?;
    sleep_until_ms(to).await;
    let after = Snapshot::take(&context.server, admin.pid(), context.db_pid).await?;
    let backlog_at_end = executor.counts().backlog;
    tokio::time::sleep(CALLBACK_GRACE).await;
    // The admin rounds trigger_time to the second, so [from, to) here is [from − 0.5 s, to − 0.5 s) in
    // milliseconds: a window of the same length.
    let logs = db::count_logs(pool, db::utc_datetime(from), db::utc_datetime(to)).await?;
    let peak_rss_kib = peak_rss_kib(admin.pid());
    // Before the admin goes: callbacks refused during its shutdown are not the window's.
    let executor_counts = executor.counts();
    progress(format!("{jobs} jobs: window done, stopping the admin"));
    let exit = match admin.stop().await {
        Ok(status) => format!("admin {status} after SIGTERM"),
        Err(e) => e,
    };
    let fires = executor.take_fires();
    let runs_in_window = fires.iter().filter(|f| (from * 1000..to * 1000).contains(&f.at_us)).count() as u64;
    Ok(AdminResult {
        seconds: options.seconds,
        logs,
        runs_in_window,
        fires: stats::analyse(&grid, (from, to), &fires),
        admin_cpu: after.cpu_since(&before, |s| s.admin),
        db_cpu: after.cpu_since(&before, |s| s.db),
        bench_cpu: after.cpu_since(&before, |s| s.own),
        machine_busy: after.cpu_since(&before, |s| s.machine.map(|m| m.busy)),
        machine_iowait: after.cpu_since(&before, |s| s.machine.map(|m| m.iowait)),
        peak_rss_kib,
        statements: COUNTERS.iter().map(|c| after.counters.delta(&before.counters, c)).collect(),
        backlog_at_end,
        executor: executor_counts,
        log: admin.log_summary(),
        exit,
    })
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
