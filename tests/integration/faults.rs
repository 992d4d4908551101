//! The engine's promise through faults (issue 10): every planned fire of every job is sent at most once,
//! on time, or settled by the job's misfire rule when it cannot be.
//!
//! Three admins run as child processes on a private MariaDB server that the test stops and starts; an
//! in-test executor records every `/run` with the planned instant and trigger type the admin sends in the
//! `Xxl-Job-Planned-Time` and `Xxl-Job-Trigger-Type` headers. One case plays the faults in turn on the same
//! servers (start-up is the expensive part): two database outages, a SIGKILL of the admin that holds the
//! plan while it sends, and jobs stopped in the console; then it checks the whole record of fires.

use crate::support::console::ConsoleClient;
use crate::support::private_mariadb::PrivateMariaDb;
use crate::support::recorder::{Fire, Recorder};
use crate::support::{now_ms, AdminProcess, Backend, Context, TOKEN};
use crate::{cases, Case, TestResult, MYSQL_ONLY};
use libtest_mimic::Failed;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Duration;

pub fn cases() -> Vec<Case> {
    cases! {
        "faults" {
            MYSQL_ONLY => planned_fires_are_sent_once_or_settled_through_faults needs [PrivateMariadb],
        }
    }
}

const DATABASE: &str = "xxl_job";
const APP_NAME: &str = "xxl-job-faults";
/// Every-second jobs of each misfire strategy: enough to spread over the lanes, few enough for 2 cores.
const JOBS_PER_STRATEGY: usize = 30;
/// DO_NOTHING jobs whose `/run` the executor never answers: their triggers are in flight for the admin's
/// 3 s read timeout, so a crash always catches some.
const HUNG_JOBS: usize = 4;
/// The jobs' first fire, this long after they are inserted: an admin's first pass comes 4-5 s after its
/// start, and finds them then within its 5 s window, so even the first fire is planned on time.
const FIRST_FIRE_AFTER_MS: i64 = 6_000;
/// A fire sent later than this after its planned instant is a misfire (docs/failure-behaviour.md; 2.4.2's
/// pre-read window).
const MISFIRE_MS: i64 = 5_000;
/// Scheduling and HTTP jitter allowed on top of the misfire limit for DO_NOTHING fires.
const LATE_SLACK_MS: i64 = 1_000;
/// "On time" once the engine has recovered from a fault.
const ON_TIME_MS: i64 = 1_000;
/// Calm weather checked before the first outage.
const CALM_MS: i64 = 5_000;
const SHORT_OUTAGE_MS: i64 = 6_000;
const LONG_OUTAGE_MS: i64 = 20_000;
/// A health probe is sent this long into an outage, and must answer 503 within `HEALTH_LIMIT_MS`.
const HEALTH_PROBE_AFTER_MS: i64 = 1_000;
const HEALTH_LIMIT_MS: i64 = 2_000;
/// After this, every job fires every second on time again (passes resume on the next half-second and
/// the pool replaces its dead connections)...
const RESUMED_AFTER_MS: i64 = 5_000;
/// ...checked over this many seconds.
const RESUME_CHECKED_MS: i64 = 3_000;
/// Time between the end of a fault and the next one.
const RECOVERY_MS: i64 = 12_000;
/// Error lines one admin may log over the long outage: a summary per second and kind, not a line per
/// dropped fire.
const OUTAGE_ERROR_LINES: usize = 60;
/// The outage's log is read until this long after the database is back.
const OUTAGE_LOG_TAIL_MS: i64 = 2_000;
/// How long the victim plans alone before the crash, so that the whole plan is its own.
const SOLO_PLANNING_MS: i64 = 6_000;
/// The victim's plan reaches this far past the crash (the pre-read window, plus the pass's half second).
const PLAN_HORIZON_MS: i64 = 6_000;
/// How long, after the fresh admins are up, the kill may wait for the victim to hold a plan: their first
/// pass comes 4 s after their start.
const PLAN_WAIT_MS: i64 = 2_000;
/// Where within a second the crash lands.
const KILL_WITHIN_SECOND_MS: std::ops::Range<i64> = 300..700;
/// Jobs are stopped in the console this long after the crash, once the survivors plan.
const STOP_AFTER_CRASH_MS: i64 = 30_000;
/// The lost-result sweep settles rows without a trigger result older than 60 s, every 10 s, so none older
/// than this may remain...
const LOST_RESULT_AGE_S: i64 = 70;
/// ...once this long has passed since the crash (the victim's plan reaches 6 s past it)...
const SWEEP_CHECK_FROM_MS: i64 = 80_000;
/// ...or, polling, by this time at the latest.
const SWEEP_DEADLINE_MS: i64 = 90_000;
/// A `/run` already on the wire when the stop was answered.
const STOP_WIRE_MS: i64 = 50;
/// The admin's default grace for a stop, and what exiting may take beyond it.
const SHUTDOWN_GRACE_MS: i64 = 10_000;
const SHUTDOWN_SLACK_MS: i64 = 3_000;
/// Examples quoted per kind of violation.
const EXAMPLES: usize = 8;

/// The jobs, by what the executor does with them and their misfire rule.
struct Jobs {
    /// The planned instant of every job's first fire.
    first_fire: i64,
    do_nothing: Vec<i64>,
    fire_once_now: Vec<i64>,
    hung: Vec<i64>,
}

impl Jobs {
    fn all(&self) -> impl Iterator<Item = i64> + '_ {
        self.do_nothing.iter().chain(&self.fire_once_now).chain(&self.hung).copied()
    }

    fn fires_once_now(&self, job_id: i64) -> bool {
        self.fire_once_now.contains(&job_id)
    }
}

/// When a database outage began (SIGTERM sent), the server was gone, and it accepted connections again.
struct Outage {
    name: &'static str,
    term_at: i64,
    down_at: i64,
    up_at: i64,
}

struct Crash {
    /// When the other admins were sent SIGTERM, leaving the victim to plan alone.
    others_stopped_at: i64,
    /// When the victim was SIGKILLed.
    at: i64,
    /// (job, planned instant) of the victim's rows without a trigger result: its unsent plan, and the
    /// triggers it had sent (which the executor received) without recording their result.
    abandoned: Vec<(i64, i64)>,
}

struct Stop {
    job_id: i64,
    answered_at: i64,
}

/// What the run measured: broken promises, and numbers worth reporting either way.
#[derive(Default)]
struct Findings {
    violations: Vec<String>,
    notes: Vec<String>,
}

impl Findings {
    fn fail(&mut self, what: String) {
        self.violations.push(what);
    }

    fn note(&mut self, what: String) {
        self.notes.push(what);
    }

    /// One violation quoting the first examples of `items`, when there are any.
    fn fail_each(&mut self, what: &str, items: Vec<String>) {
        if !items.is_empty() {
            let shown = items.iter().take(EXAMPLES).cloned().collect::<Vec<_>>().join("; ");
            self.fail(format!("{what}: {} case(s), e.g. {shown}", items.len()));
        }
    }
}

/// The admins of the run, started on the private server and numbered in start order.
struct Cluster {
    jdbc_url: String,
    log_dir: std::path::PathBuf,
    admins: Vec<AdminProcess>,
    /// Stopped or killed: kept for their logs.
    gone: Vec<AdminProcess>,
}

impl Cluster {
    fn spawn(&mut self) -> Result<usize, Failed> {
        let name = format!("admin-{}", self.admins.len() + self.gone.len() + 1);
        self.admins.push(AdminProcess::spawn(&name, &self.jdbc_url, TOKEN, &self.log_dir)?);
        Ok(self.admins.len() - 1)
    }

    fn bases(&self) -> Vec<&str> {
        self.admins.iter().map(|a| a.base.as_str()).collect()
    }

    fn log_tails(&self) -> String {
        self.admins
            .iter()
            .chain(&self.gone)
            .map(|a| format!("--- {} ({}), last lines:\n{}", a.name, a.base, a.tail(25)))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

async fn planned_fires_are_sent_once_or_settled_through_faults(_: Backend) -> TestResult {
    let started = std::time::Instant::now();
    let mut db = PrivateMariaDb::start().await?;
    let logs = tempfile::tempdir().context("temp dir")?;
    let recorder = Recorder::start(APP_NAME, TOKEN).await?;
    let mut cluster = Cluster {
        jdbc_url: db.jdbc_url(DATABASE),
        log_dir: logs.path().to_path_buf(),
        admins: Vec::new(),
        gone: Vec::new(),
    };
    let mut findings = Findings::default();
    let outcome = play_faults(&mut db, &mut cluster, &recorder, &mut findings).await;
    findings.note(format!("run took {:.0} s", started.elapsed().as_secs_f64()));
    let report = format!("measured:\n  {}", findings.notes.join("\n  "));
    if outcome.is_ok() && findings.violations.is_empty() {
        eprintln!("faults: {report}");
        return Ok(());
    }
    let kept = keep_evidence(logs.path(), &recorder.fires());
    match outcome {
        // The verdict last, where a cut log (CI prints a run's end) still shows it.
        Ok(()) => Err(format!(
            "{}\n{kept}\n{} broken promise(s):\n- {}\n{report}",
            cluster.log_tails(),
            findings.violations.len(),
            findings.violations.join("\n- "),
        )
        .into()),
        Err(e) => Err(format!(
            "{}\n--- mariadbd:\n{}\n{kept}\n{}\n{report}",
            cluster.log_tails(),
            db.log_tail(15),
            e.message().unwrap_or("")
        )
        .into()),
    }
}

/// Copies the admins' logs and every fire received (as CSV) to `target/tmp/fault-logs`, replacing those of
/// an earlier failure; says where, or why not.
fn keep_evidence(log_dir: &Path, fires: &[Fire]) -> String {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fault-logs");
    let _ = std::fs::remove_dir_all(&dir);
    let copy = || -> std::io::Result<()> {
        std::fs::create_dir_all(&dir)?;
        for entry in std::fs::read_dir(log_dir)? {
            let path = entry?.path();
            if let Some(name) = path.file_name() {
                std::fs::copy(&path, dir.join(name))?;
            }
        }
        let mut csv = String::from("received_ms,job_id,log_id,planned_ms,trigger_type\n");
        for f in fires {
            let planned = f.planned_ms.map(|p| p.to_string()).unwrap_or_default();
            csv.push_str(&format!(
                "{},{},{},{planned},{}\n",
                f.at_ms,
                f.job_id,
                f.log_id,
                f.trigger_type.as_deref().unwrap_or("")
            ));
        }
        std::fs::write(dir.join("fires.csv"), csv)
    };
    match copy() {
        Ok(()) => format!("admin logs and fires.csv kept in {}", dir.display()),
        Err(e) => format!("the evidence could not be kept in {}: {e}", dir.display()),
    }
}

/// The faults in turn, then the checks over every fire received.
async fn play_faults(
    db: &mut PrivateMariaDb,
    cluster: &mut Cluster,
    recorder: &Recorder,
    findings: &mut Findings,
) -> Result<(), Failed> {
    // The first admin creates the schema on the empty server; the others find it.
    for _ in 0..3 {
        let index = cluster.spawn()?;
        cluster.admins[index].wait_ready().await?;
    }
    recorder.set_admins(&cluster.bases());
    let jobs = insert_jobs(db, &recorder.address).await?;
    for &job_id in &jobs.hung {
        recorder.hang(job_id);
    }
    // Calm first: every job fires every second, on time, planned by every admin in turn.
    sleep_until(jobs.first_fire + CALM_MS).await;

    let mut outages = Vec::new();
    for (name, length_ms) in [("6 s outage", SHORT_OUTAGE_MS), ("20 s outage", LONG_OUTAGE_MS)] {
        outages.push(database_outage(db, cluster, name, length_ms, findings).await?);
    }
    let crash = crash_while_sending(db, cluster, recorder, &jobs, findings).await?;
    sleep_until(crash.at + STOP_AFTER_CRASH_MS).await;
    let stops = stop_in_console(cluster, &jobs).await?;
    lost_results_are_settled(db, &crash, findings).await?;
    keep_rows(db, &jobs, &cluster.log_dir).await?;

    let fires = recorder.fires();
    findings.note(format!("{} fires received", fires.len()));
    check_fires(&fires, &jobs, &outages, &crash, &stops, findings);
    stop_while_the_database_is_down(db, cluster, findings).await
}

/// An admin told to stop while its database is gone and triggers wait for it exits within its grace
/// (`spring.lifecycle.timeout-per-shutdown-phase`, 10 s by default), not when the database comes back.
async fn stop_while_the_database_is_down(
    db: &mut PrivateMariaDb,
    cluster: &mut Cluster,
    findings: &mut Findings,
) -> Result<(), Failed> {
    db.stop().await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let admin = &mut cluster.admins[0];
    let sent = std::time::Instant::now();
    admin.send_term()?;
    admin.wait_exit().await?;
    let took = sent.elapsed().as_millis() as i64;
    if took > SHUTDOWN_GRACE_MS + SHUTDOWN_SLACK_MS {
        findings.fail(format!(
            "{} took {took} ms to exit after SIGTERM with its database down (grace {SHUTDOWN_GRACE_MS} ms)",
            admin.name
        ));
    } else {
        findings.note(format!("{} exited {took} ms after SIGTERM with its database down", admin.name));
    }
    Ok(())
}

/// A manual-address group of the recorder, and the jobs, firing every second from a few seconds on.
async fn insert_jobs(db: &PrivateMariaDb, executor: &str) -> Result<Jobs, Failed> {
    let mut conn = db.connect(DATABASE).await?;
    let group = sqlx::query(
        "INSERT INTO xxl_job_group (app_name, title, address_type, address_list, update_time) \
         VALUES (?, 'faults', 1, ?, UTC_TIMESTAMP())",
    )
    .bind(APP_NAME)
    .bind(executor)
    .execute(&mut conn)
    .await
    .context("insert group")?
    .last_insert_id();
    let first_fire = (now_ms() + FIRST_FIRE_AFTER_MS) / 1000 * 1000;
    let group = group as i64;
    let do_nothing =
        insert_every_second_jobs(&mut conn, group, "DO_NOTHING", JOBS_PER_STRATEGY, first_fire).await?;
    let fire_once_now =
        insert_every_second_jobs(&mut conn, group, "FIRE_ONCE_NOW", JOBS_PER_STRATEGY, first_fire).await?;
    let hung = insert_every_second_jobs(&mut conn, group, "DO_NOTHING", HUNG_JOBS, first_fire).await?;
    Ok(Jobs { first_fire, do_nothing, fire_once_now, hung })
}

/// Running `* * * * * ?` BEAN jobs routed FIRST, first due at `first_fire`.
async fn insert_every_second_jobs(
    conn: &mut sqlx::MySqlConnection,
    group: i64,
    misfire: &str,
    count: usize,
    first_fire: i64,
) -> Result<Vec<i64>, Failed> {
    let mut ids = Vec::new();
    for n in 0..count {
        let id = sqlx::query(
            "INSERT INTO xxl_job_info (job_group, job_desc, add_time, update_time, author, alarm_email, \
             schedule_type, schedule_conf, misfire_strategy, executor_route_strategy, executor_handler, \
             executor_param, executor_block_strategy, executor_timeout, executor_fail_retry_count, glue_type, \
             glue_source, glue_remark, glue_updatetime, child_jobid, trigger_status, trigger_last_time, \
             trigger_next_time) \
             VALUES (?, ?, UTC_TIMESTAMP(), UTC_TIMESTAMP(), 'faults', '', 'CRON', '* * * * * ?', ?, 'FIRST', \
             'faultJob', '', 'SERIAL_EXECUTION', 0, 0, 'BEAN', '', '', UTC_TIMESTAMP(), '', 1, 0, ?)",
        )
        .bind(group)
        .bind(format!("{misfire} {n}"))
        .bind(misfire)
        .bind(first_fire)
        .execute(&mut *conn)
        .await
        .context("insert job")?
        .last_insert_id();
        ids.push(id as i64);
    }
    Ok(ids)
}

/// Stops the database for `length_ms`, probes health meanwhile, and counts the error lines each admin
/// logged; returns once the recovery time has passed.
async fn database_outage(
    db: &mut PrivateMariaDb,
    cluster: &Cluster,
    name: &'static str,
    length_ms: i64,
    findings: &mut Findings,
) -> Result<Outage, Failed> {
    let marks: Vec<u64> = cluster.admins.iter().map(AdminProcess::log_len).collect();
    let term_at = now_ms();
    db.stop().await?;
    let down_at = now_ms();
    let probes: Vec<_> =
        cluster.admins.iter().map(|a| tokio::spawn(probe_health(a.name.clone(), a.health_url()))).collect();
    sleep_until(down_at + length_ms).await;
    db.resume().await?;
    let up_at = now_ms();
    for probe in probes {
        match probe.await.context("health probe")? {
            Ok(note) => findings.note(format!("{name}: {note}")),
            Err(violation) => findings.fail(format!("{name}: {violation}")),
        }
    }
    sleep_until(up_at + OUTAGE_LOG_TAIL_MS).await;
    for (admin, mark) in cluster.admins.iter().zip(marks) {
        let (errors, warnings) = level_counts(&admin.log_since(mark));
        let counted = format!("{} logged {errors} error and {warnings} warning lines from the stop to {OUTAGE_LOG_TAIL_MS} ms after the restart", admin.name);
        if length_ms == LONG_OUTAGE_MS && errors > OUTAGE_ERROR_LINES {
            findings.fail(format!("{name}: {counted} (at most {OUTAGE_ERROR_LINES} error lines)"));
        } else {
            findings.note(format!("{name}: {counted}"));
        }
    }
    findings.note(format!("{name}: SIGTERM to exit {} ms, down {} ms", down_at - term_at, up_at - down_at));
    sleep_until(up_at + RECOVERY_MS).await;
    Ok(Outage { name, term_at, down_at, up_at })
}

/// `GET {context}/actuator/health` a moment into the outage: 503 within the limit.
async fn probe_health(admin: String, url: String) -> Result<String, String> {
    tokio::time::sleep(Duration::from_millis(HEALTH_PROBE_AFTER_MS as u64)).await;
    let http =
        reqwest::Client::builder().timeout(Duration::from_secs(15)).build().map_err(|e| e.to_string())?;
    let sent = std::time::Instant::now();
    let answer = http.get(&url).send().await;
    let took = sent.elapsed().as_millis() as i64;
    match answer {
        Ok(response) if response.status() == 503 && took <= HEALTH_LIMIT_MS => {
            Ok(format!("{admin} health answered 503 in {took} ms"))
        }
        Ok(response) => Err(format!(
            "{admin} health answered {} after {took} ms (503 within {HEALTH_LIMIT_MS} ms wanted)",
            response.status()
        )),
        Err(e) => Err(format!("{admin} health gave no answer within {took} ms: {e}")),
    }
}

/// Lines at ERROR and at WARN level in a stretch of an admin's log (`<timestamp> <LEVEL> <message>`).
fn level_counts(log: &str) -> (usize, usize) {
    let level = |line: &str| line.split_whitespace().nth(1).map(str::to_string);
    let levels: Vec<Option<String>> = log.lines().map(level).collect();
    let count = |name: &str| levels.iter().filter(|l| l.as_deref() == Some(name)).count();
    (count("ERROR"), count("WARN"))
}

/// Leaves the first admin planning alone (the others stop gracefully), starts two fresh admins and
/// SIGKILLs the first before their first pass: it dies holding the next 5 s of fires of every job, with
/// triggers of the hung jobs in flight.
async fn crash_while_sending(
    db: &PrivateMariaDb,
    cluster: &mut Cluster,
    recorder: &Recorder,
    jobs: &Jobs,
    findings: &mut Findings,
) -> Result<Crash, Failed> {
    let others_stopped_at = now_ms();
    for admin in &mut cluster.admins[1..] {
        admin.send_term()?;
    }
    for admin in &mut cluster.admins[1..] {
        admin.wait_exit().await?;
    }
    let stopped = cluster.admins.split_off(1);
    cluster.gone.extend(stopped);
    tokio::time::sleep(Duration::from_millis(SOLO_PLANNING_MS as u64)).await;
    let mut conn = db.connect(DATABASE).await?;
    let reach_before = plan_reach(&unsent_plans(&mut conn).await?);
    let fresh = [cluster.spawn()?, cluster.spawn()?];
    for index in fresh {
        cluster.admins[index].wait_ready().await?;
    }
    recorder.set_admins(&cluster.bases());
    // The victim writes its plan with each pass; kill it once it holds at least a second of it (its
    // passes may wait a moment for the schedule lock while the fresh admins start).
    let spawned_at = now_ms();
    loop {
        // The hung jobs' rows are mostly triggers waiting for the executor, not plans.
        let plans =
            unsent_plans(&mut conn).await?.into_iter().filter(|(job, _)| !jobs.hung.contains(job)).count();
        if plans >= jobs.do_nothing.len() + jobs.fire_once_now.len() || now_ms() > spawned_at + PLAN_WAIT_MS {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Mid-second, away from the moment an instant's fires go out: a kill while they are written loses
    // those not yet written at most once (the failover test's case), and this one is about the plan.
    let into_second = now_ms().rem_euclid(1000);
    if !KILL_WITHIN_SECOND_MS.contains(&into_second) {
        let wait = (KILL_WITHIN_SECOND_MS.start - into_second).rem_euclid(1000);
        tokio::time::sleep(Duration::from_millis(wait as u64)).await;
    }
    let at = now_ms();
    let mut victim = cluster.admins.remove(0);
    victim.kill();
    // Read at once: the fresh admins' first pass is seconds away, so these rows are all the victim's.
    let abandoned = unsent_plans(&mut conn).await?;
    findings.note(format!(
        "crash: {} SIGKILLed with {} log rows without a trigger result, reaching {} ms ahead ({} ms before the fresh admins started)",
        victim.name,
        abandoned.len(),
        plan_reach(&abandoned),
        reach_before
    ));
    cluster.gone.push(victim);
    recorder.set_admins(&cluster.bases());
    Ok(Crash { others_stopped_at, at, abandoned })
}

/// How far ahead of now the latest of `plans` is.
fn plan_reach(plans: &[(i64, i64)]) -> i64 {
    plans.iter().map(|p| p.1).max().map_or(0, |latest| latest - now_ms())
}

/// (job, planned instant) of the log rows without a trigger result: fires planned and not yet sent, and
/// triggers waiting for the executor's answer. Rows are written with the plan; their trigger_time is the
/// planned instant (whole seconds here), stored in UTC.
async fn unsent_plans(conn: &mut sqlx::MySqlConnection) -> Result<Vec<(i64, i64)>, Failed> {
    let rows: Vec<(i32, i64)> = sqlx::query_as(
        "SELECT job_id, TIMESTAMPDIFF(SECOND, '1970-01-01 00:00:00', trigger_time) * 1000 FROM xxl_job_log \
         WHERE trigger_code = 0 AND handle_code = 0",
    )
    .fetch_all(conn)
    .await
    .context("rows without a trigger result")?;
    Ok(rows.into_iter().map(|(job, at)| (i64::from(job), at)).collect())
}

/// Once the sweep has had its time, no row may be left without a trigger result.
async fn lost_results_are_settled(
    db: &PrivateMariaDb,
    crash: &Crash,
    findings: &mut Findings,
) -> Result<(), Failed> {
    sleep_until(crash.at + SWEEP_CHECK_FROM_MS).await;
    let query = format!(
        "SELECT id, job_id, DATE_FORMAT(trigger_time, '%Y-%m-%d %H:%i:%s') FROM xxl_job_log \
         WHERE trigger_code = 0 AND trigger_time < UTC_TIMESTAMP() - INTERVAL {LOST_RESULT_AGE_S} SECOND ORDER BY id"
    );
    loop {
        let mut conn = db.connect(DATABASE).await?;
        let stale: Vec<(i64, i32, String)> =
            sqlx::query_as(&query).fetch_all(&mut conn).await.context("rows without a result")?;
        if stale.is_empty() {
            let settled: Option<(String,)> = sqlx::query_as(
                "SELECT trigger_msg FROM xxl_job_log WHERE trigger_code <> 0 AND trigger_code <> 200 \
                 AND trigger_msg NOT LIKE '%timed out%' ORDER BY id DESC LIMIT 1",
            )
            .fetch_optional(&mut conn)
            .await
            .context("a settled row")?;
            findings.note(format!(
                "crash: no row without a trigger result older than {LOST_RESULT_AGE_S} s, {} ms after the crash; a settled row says {:?}",
                now_ms() - crash.at,
                settled.map(|(msg,)| msg)
            ));
            return Ok(());
        }
        if now_ms() > crash.at + SWEEP_DEADLINE_MS {
            let shown: Vec<String> =
                stale.iter().map(|(id, job, at)| format!("log {id} of job {job} at {at} UTC")).collect();
            findings.fail_each(
                &format!("{} ms after the crash, rows still have trigger_code 0 and a trigger_time older than {LOST_RESULT_AGE_S} s", now_ms() - crash.at),
                shown,
            );
            return Ok(());
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// Writes the FIRE_ONCE_NOW jobs' log rows since shortly before the faults into the log folder, which is
/// kept when the run fails: what each admin did to them (settled, claimed, removed) is read there.
async fn keep_rows(db: &PrivateMariaDb, jobs: &Jobs, log_dir: &Path) -> Result<(), Failed> {
    let ids: Vec<String> = jobs.fire_once_now.iter().map(i64::to_string).collect();
    let query = format!(
        "SELECT id, job_id, DATE_FORMAT(trigger_time, '%Y-%m-%d %H:%i:%s'), trigger_code, handle_code, \
         REPLACE(LEFT(trigger_msg, 60), '\n', ' ') FROM xxl_job_log WHERE job_id IN ({}) ORDER BY job_id, id",
        ids.join(",")
    );
    let mut conn = db.connect(DATABASE).await?;
    let rows: Vec<(i64, i32, String, i32, i32, Option<String>)> =
        sqlx::query_as(&query).fetch_all(&mut conn).await.context("FIRE_ONCE_NOW log rows")?;
    let mut csv = String::from("id,job_id,trigger_time_utc,trigger_code,handle_code,trigger_msg\n");
    for (id, job, at, trigger_code, handle_code, msg) in rows {
        csv.push_str(&format!(
            "{id},{job},{at},{trigger_code},{handle_code},\"{}\"\n",
            msg.unwrap_or_default().replace('"', "'")
        ));
    }
    std::fs::write(log_dir.join("fire-once-now-rows.csv"), csv).context("write the rows")?;
    Ok(())
}

/// Stops one job of each misfire rule in the console of a different admin each.
async fn stop_in_console(cluster: &Cluster, jobs: &Jobs) -> Result<Vec<Stop>, Failed> {
    let mut stops = Vec::new();
    for (admin, job_id) in cluster.admins.iter().zip([jobs.do_nothing[1], jobs.fire_once_now[1]]) {
        let mut console = ConsoleClient::new(&admin.base);
        let login = console.login("admin", "123456", false).await?;
        crate::ensure_eq!(login["code"], 200, "login on {}", admin.name);
        let id = job_id.to_string();
        let reply = console.post("/jobinfo/stop", &[("id", id.as_str())]).await?;
        let answered_at = now_ms();
        crate::ensure_eq!(reply["code"], 200, "stop job {job_id} on {}", admin.name);
        stops.push(Stop { job_id, answered_at });
    }
    Ok(stops)
}

/// The promise, checked over every fire received.
fn check_fires(
    fires: &[Fire],
    jobs: &Jobs,
    outages: &[Outage],
    crash: &Crash,
    stops: &[Stop],
    findings: &mut Findings,
) {
    let untyped = fires.iter().filter(|f| f.trigger_type.is_none()).map(describe_fire).collect();
    findings.fail_each("a /run came without the Xxl-Job-Trigger-Type header", untyped);
    // Every fire here is planned by a schedule (or compensates a planned one): each carries its instant.
    let unplanned = fires.iter().filter(|f| f.planned_ms.is_none()).map(describe_fire).collect();
    findings.fail_each("a /run came without the Xxl-Job-Planned-Time header (times are epoch ms)", unplanned);
    let mut by_plan: BTreeMap<(i64, i64), Vec<&Fire>> = BTreeMap::new();
    for fire in fires {
        if let Some(planned) = fire.planned_ms {
            by_plan.entry((fire.job_id, planned)).or_default().push(fire);
        }
    }
    let doubled = by_plan
        .iter()
        .filter(|(_, sent)| sent.len() > 1)
        .map(|((job, planned), sent)| {
            format!("job {job} planned {planned} sent {} times: {}", sent.len(), describe(sent, *planned))
        })
        .collect();
    findings.fail_each("a planned fire was sent more than once", doubled);
    // Late fires collapse into one run: no job runs twice within one second of arrival, whatever happened.
    let mut by_arrival: BTreeMap<(i64, i64), Vec<&Fire>> = BTreeMap::new();
    for fire in fires {
        by_arrival.entry((fire.job_id, fire.at_ms / 1000)).or_default().push(fire);
    }
    let bunched = by_arrival
        .iter()
        .filter(|(_, sent)| sent.len() > 1)
        .map(|((job, second), sent)| {
            format!(
                "job {job} ran {} times in second {second}: {}",
                sent.len(),
                describe(sent, second * 1000)
            )
        })
        .collect();
    findings.fail_each("a job ran twice within one second", bunched);

    let late_do_nothing = fires
        .iter()
        .filter(|f| !jobs.fires_once_now(f.job_id))
        .filter(|f| {
            f.trigger_type.as_deref() == Some("MISFIRE")
                || f.lateness_ms().unwrap_or(0) > MISFIRE_MS + LATE_SLACK_MS
        })
        .map(describe_fire)
        .collect();
    findings.fail_each(
        &format!(
            "a DO_NOTHING fire was compensated or sent more than {} ms late",
            MISFIRE_MS + LATE_SLACK_MS
        ),
        late_do_nothing,
    );

    if let Some(first_outage) = outages.first() {
        check_on_time(&by_plan, jobs, jobs.first_fire..first_outage.term_at - 1000, "calm weather", findings);
    }
    for outage in outages {
        check_outage(fires, &by_plan, jobs, outage, findings);
    }
    let stopped: Vec<i64> = stops.iter().map(|s| s.job_id).collect();
    check_crash(fires, &by_plan, jobs, crash, &stopped, findings);
    let after_stop = stops
        .iter()
        .flat_map(|stop| {
            fires
                .iter()
                .filter(move |f| f.job_id == stop.job_id && f.at_ms > stop.answered_at + STOP_WIRE_MS)
                .map(move |f| format!("stopped at {}: {}", stop.answered_at, describe_fire(f)))
        })
        .collect();
    findings.fail_each("a stopped job fired after the stop was answered", after_stop);
}

/// A misfire compensation: marked as one, or sent more than the misfire limit after its planned instant.
fn is_compensation(fire: &Fire) -> bool {
    fire.trigger_type.as_deref() == Some("MISFIRE") || fire.lateness_ms().unwrap_or(0) > MISFIRE_MS
}

/// A fire with its absolute times.
fn describe_fire(fire: &Fire) -> String {
    let planned = fire.planned_ms.map_or("none".to_string(), |p| p.to_string());
    let kind = fire.trigger_type.as_deref().unwrap_or("?");
    format!("job {} log {} planned {planned} received {} ({kind})", fire.job_id, fire.log_id, fire.at_ms)
}

/// Each fire's planned and receive instants relative to `reference`, its type and log row.
fn describe(sent: &[&Fire], reference: i64) -> String {
    let parts: Vec<String> = sent
        .iter()
        .map(|f| {
            let planned = f.planned_ms.map_or("none".to_string(), |p| format!("{:+}", p - reference));
            format!(
                "planned {planned} received {:+} ms ({}, log {})",
                f.at_ms - reference,
                f.trigger_type.as_deref().unwrap_or("?"),
                f.log_id
            )
        })
        .collect();
    parts.join(", ")
}

/// Compensations per FIRE_ONCE_NOW job (exactly one for the long outage, at most one for the short), and
/// fires on time again once the database is back.
fn check_outage(
    fires: &[Fire],
    by_plan: &BTreeMap<(i64, i64), Vec<&Fire>>,
    jobs: &Jobs,
    outage: &Outage,
    findings: &mut Findings,
) {
    let missed = outage.term_at - 1000..outage.up_at + RESUMED_AFTER_MS;
    let compensations =
        compensations_per_job(fires, jobs, &missed, &(outage.term_at..outage.up_at + RECOVERY_MS));
    // Every outage is longer than the misfire threshold: each FIRE_ONCE_NOW job's late fires collapse into
    // one run, its compensation.
    let wanted = 1..=1;
    let wrong: Vec<String> = jobs
        .fire_once_now
        .iter()
        .map(|job| (job, compensations.get(job).map_or(0, Vec::len)))
        .filter(|(_, count)| !wanted.contains(count))
        .map(|(job, count)| {
            format!(
                "job {job}: {count} [{}]",
                compensations.get(job).map(|c| describe(c, outage.down_at)).unwrap_or_default()
            )
        })
        .collect();
    findings.fail_each(
        &format!(
            "{}: FIRE_ONCE_NOW jobs not compensated {wanted:?} time(s) (times relative to the server's exit)",
            outage.name
        ),
        wrong,
    );
    let total: usize = compensations.values().map(Vec::len).sum();
    let window = outage.term_at..outage.up_at + RECOVERY_MS;
    let during = fires.iter().filter(|f| window.contains(&f.at_ms));
    let (late, max_late) = during.fold((0, 0), |(n, max), f| {
        let lateness = f.lateness_ms().unwrap_or(0);
        if lateness > ON_TIME_MS && !is_compensation(f) {
            (n + 1, max.max(lateness))
        } else {
            (n, max)
        }
    });
    findings.note(format!(
        "{}: {total} compensations for {} FIRE_ONCE_NOW jobs; {late} fires sent 1-5 s late (at most {max_late} ms)",
        outage.name,
        jobs.fire_once_now.len()
    ));
    check_resumed(by_plan, jobs, outage.up_at, outage.name, findings);
}

/// Each FIRE_ONCE_NOW job's compensations for fires planned within `missed` (by the instant they carry;
/// one that carries none counts when it was received within `received`).
fn compensations_per_job<'a>(
    fires: &'a [Fire],
    jobs: &Jobs,
    missed: &std::ops::Range<i64>,
    received: &std::ops::Range<i64>,
) -> HashMap<i64, Vec<&'a Fire>> {
    let belongs =
        |f: &Fire| f.planned_ms.map_or(received.contains(&f.at_ms), |planned| missed.contains(&planned));
    let mut per_job: HashMap<i64, Vec<&Fire>> = HashMap::new();
    for fire in fires.iter().filter(|f| jobs.fires_once_now(f.job_id) && is_compensation(f) && belongs(f)) {
        per_job.entry(fire.job_id).or_default().push(fire);
    }
    per_job
}

/// Every job fired exactly once, on time, for every whole second of `stretch`.
fn check_on_time(
    by_plan: &BTreeMap<(i64, i64), Vec<&Fire>>,
    jobs: &Jobs,
    stretch: std::ops::Range<i64>,
    what: &str,
    findings: &mut Findings,
) {
    let first = (stretch.start + 999) / 1000 * 1000;
    let mut wrong = Vec::new();
    for job in jobs.all() {
        for second in (first..stretch.end).step_by(1000) {
            match by_plan.get(&(job, second)).map(Vec::as_slice) {
                Some([fire]) if fire.lateness_ms().unwrap_or(0) <= ON_TIME_MS => {}
                Some(sent) => wrong.push(format!("job {job} planned {second}: {}", describe(sent, second))),
                None => wrong.push(format!("job {job} planned {second}: not sent")),
            }
        }
    }
    findings.fail_each(
        &format!("{what}: fires not sent once within {ON_TIME_MS} ms of their planned instant"),
        wrong,
    );
}

/// Fires on time again once the engine has had `RESUMED_AFTER_MS` to recover from a fault that ended at `end_ms`.
fn check_resumed(
    by_plan: &BTreeMap<(i64, i64), Vec<&Fire>>,
    jobs: &Jobs,
    end_ms: i64,
    after: &str,
    findings: &mut Findings,
) {
    let from = end_ms + RESUMED_AFTER_MS;
    check_on_time(
        by_plan,
        jobs,
        from..from + RESUME_CHECKED_MS,
        &format!("{RESUMED_AFTER_MS} ms after the {after}"),
        findings,
    );
}

/// Fires the crashed admin had planned and never sent; FIRE_ONCE_NOW jobs among them get one compensation
/// (not the jobs stopped before the sweep could settle their rows: a stopped job is not compensated).
fn check_crash(
    fires: &[Fire],
    by_plan: &BTreeMap<(i64, i64), Vec<&Fire>>,
    jobs: &Jobs,
    crash: &Crash,
    stopped: &[i64],
    findings: &mut Findings,
) {
    // Lost: no fire sent as planned (a compensation may carry the instant; it does not undo the loss).
    let sent_as_planned = |job: i64, second: i64| {
        by_plan.get(&(job, second)).is_some_and(|sent| sent.iter().any(|f| !is_compensation(f)))
    };
    let mut lost: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for &(job, planned) in crash.abandoned.iter().filter(|&&(job, planned)| !sent_as_planned(job, planned)) {
        lost.entry(job).or_default().push(planned);
    }
    if !crash.abandoned.iter().any(|&(_, planned)| planned > crash.at) {
        findings.fail(
            "crash: the victim held no planned fire at the kill, so lost plans were not exercised"
                .to_string(),
        );
    }
    let first = crash.abandoned.iter().map(|p| p.1).min().unwrap_or(crash.at).min(crash.at) / 1000 * 1000;
    let horizon = first - 1000..crash.at + PLAN_HORIZON_MS + 1;
    let compensations = compensations_per_job(fires, jobs, &horizon, &(crash.at..i64::MAX));
    let counted: Vec<(i64, bool, usize)> = jobs
        .fire_once_now
        .iter()
        .filter(|job| !stopped.contains(job))
        .map(|&job| (job, lost.contains_key(&job), compensations.get(&job).map_or(0, Vec::len)))
        .collect();
    let describe_job = |&(job, _, count): &(i64, bool, usize)| {
        let seconds: Vec<String> =
            lost.get(&job).into_iter().flatten().map(|s| format!("{:+}", s - crash.at)).collect();
        let sent = compensations.get(&job).map(|c| describe(c, crash.at)).unwrap_or_default();
        format!(
            "job {job}: lost planned fires at [{}] ms, {count} compensation(s) [{sent}]",
            seconds.join(", ")
        )
    };
    let doubled: Vec<String> = counted.iter().filter(|&&(_, _, count)| count > 1).map(describe_job).collect();
    findings.fail_each(
        "crash: FIRE_ONCE_NOW jobs compensated more than once for the lost plan (times relative to the kill)",
        doubled,
    );
    let uncompensated: Vec<String> =
        counted.iter().filter(|&&(_, lost, count)| lost && count == 0).map(describe_job).collect();
    findings.fail_each(
        "crash: FIRE_ONCE_NOW jobs with a lost plan never compensated (times relative to the kill)",
        uncompensated,
    );
    let compensated = counted.iter().filter(|&&(_, lost, count)| lost && count == 1).count();
    findings.note(format!("crash: {compensated} FIRE_ONCE_NOW jobs with a lost plan compensated once"));
    // Seconds nobody planned: the survivors' first pass found the jobs late by less than the misfire
    // limit and fired each once for them (2.4.2's rule for a slow planner).
    let skipped = jobs
        .all()
        .flat_map(|job| horizon.clone().step_by(1000).map(move |s| (job, s)))
        .filter(|&(job, s)| {
            s >= first && !by_plan.contains_key(&(job, s)) && !crash.abandoned.contains(&(job, s))
        })
        .count();
    let received = crash.at..crash.at + STOP_AFTER_CRASH_MS;
    let late = fires
        .iter()
        .filter(|f| {
            received.contains(&f.at_ms) && f.lateness_ms().unwrap_or(0) > ON_TIME_MS && !is_compensation(f)
        })
        .count();
    let delays: Vec<i64> = compensations.values().flatten().map(|f| f.at_ms - crash.at).collect();
    findings.note(format!(
        "crash: {} of the victim's planned fires never sent, of {} jobs; {} compensations, received {} to {} ms after the kill; \
         {skipped} seconds never planned; {late} fires sent 1-5 s late",
        lost.values().map(Vec::len).sum::<usize>(),
        lost.len(),
        delays.len(),
        delays.iter().min().unwrap_or(&0),
        delays.iter().max().unwrap_or(&0)
    ));
    check_resumed(by_plan, jobs, crash.at, "crash", findings);
    // A graceful stop loses nothing: the stopping admins send what they planned, the victim plans on.
    check_on_time(
        by_plan,
        jobs,
        crash.others_stopped_at..crash.at - 1000,
        "graceful stop of two admins",
        findings,
    );
}

async fn sleep_until(at_ms: i64) {
    let wait = (at_ms - now_ms()).max(0);
    tokio::time::sleep(Duration::from_millis(wait as u64)).await;
}
