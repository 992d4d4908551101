//! The raw database ceiling: the writes of triggers and their callbacks, batched as the admin batches
//! them at full load, issued back to back with no admin logic, from as many connections as the admin's
//! pool has. Each task keeps its connection:
//! sqlx pings a connection whenever it goes back to the pool, and that is the pool's cost, not the
//! database's.

use super::db::{self, Counters, DML, HANDLER};
use super::process::{own_cpu_ticks, MachineTicks, ServerProcess};
use super::stats::{cpu_percent, us_per_trigger};
use sqlx::{MySqlConnection, MySqlPool};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::task::JoinSet;
use xxl_job_admin::domain::trigger_msg::{block_title_key, call_report, TriggerReport};
use xxl_job_admin::i18n::I18n;

/// The admin's default `spring.datasource.hikari.maximum-pool-size`.
pub const CONNECTIONS: u32 = 30;
/// Rows per schedule UPDATE in the admin (`storage::schedule_lock`): each fire carries 1/500 of one.
const SCHEDULE_BATCH: usize = 500;
/// Not measured: connections opening and statements being prepared.
pub const RAMP: Duration = Duration::from_secs(1);

// The statements of `storage::logs` (insert_logs, update_trigger_results, update_handle_infos), copied
// so the ceiling does not depend on the data layer's connection handling. At full load the admin's
// batches reach these sizes; the raw workload always uses them.
const INSERT_LOG_PREFIX: &str =
    "INSERT INTO xxl_job_log (job_group, job_id, trigger_time, trigger_code, handle_code) VALUES";
const UPDATE_TRIGGER_INFO_PREFIX: &str =
    "UPDATE xxl_job_log SET trigger_time = ?, trigger_code = ?, trigger_msg = ?, \
     executor_address = ?, executor_handler = ?, executor_param = ?, executor_sharding_param = ?, \
     executor_fail_retry_count = ?";
const UPDATE_HANDLE_INFO_PREFIX: &str =
    "UPDATE xxl_job_log SET handle_time = ?, handle_code = ?, handle_msg = ?";
/// Rows per log statement: the admin's `storage::logs` batch size.
const RAW_BATCH: usize = 200;

/// What the bench jobs look like to the raw workload.
pub struct Workload {
    pub executor_address: String,
    /// `(id, trigger_next_time)` of every bench job, in id order.
    pub jobs: Vec<(i32, i64)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RawResult {
    pub triggers_per_s: f64,
    /// Triggers abandoned because a statement was chosen as a deadlock victim (or timed out on a lock).
    pub lock_failures: u64,
    pub sql_per_trigger: f64,
    pub fsyncs_per_trigger: f64,
    pub db_cpu: Option<f64>,
    pub db_us_per_trigger: Option<f64>,
    pub bench_cpu: Option<f64>,
    pub machine_busy: Option<f64>,
}

/// The schedule side: next times as last written, and where the next batch starts.
struct Schedules {
    jobs: Vec<(i32, i64)>,
    cursor: usize,
}

struct Shared {
    workload: Workload,
    trigger_msg: String,
    schedules: Mutex<Schedules>,
    started: AtomicU64,
    done: AtomicU64,
    lock_failures: AtomicU64,
}

/// Runs the workload for `RAMP + seconds` and measures the last `seconds`.
pub async fn measure(
    pool: &MySqlPool,
    server: &MySqlPool,
    workload: Workload,
    seconds: u64,
    db_process: Option<ServerProcess>,
) -> Result<RawResult, String> {
    if workload.jobs.is_empty() {
        return Err("raw ceiling: no bench jobs".into());
    }
    let shared = Arc::new(Shared {
        trigger_msg: trigger_msg(&workload.executor_address),
        schedules: Mutex::new(Schedules { jobs: workload.jobs.clone(), cursor: 0 }),
        workload,
        started: AtomicU64::new(0),
        done: AtomicU64::new(0),
        lock_failures: AtomicU64::new(0),
    });
    let end = tokio::time::Instant::now() + RAMP + Duration::from_secs(seconds);
    let mut tasks = JoinSet::new();
    for _ in 0..CONNECTIONS {
        let shared = shared.clone();
        let mut conn = pool.acquire().await.map_err(|e| format!("raw ceiling: {e}"))?;
        tasks.spawn(async move {
            while tokio::time::Instant::now() < end {
                match one_trigger(&shared, &mut conn).await {
                    Ok(()) => {}
                    // The admin would fail this trigger or callback batch and carry on; so does the ceiling.
                    Err(e) if is_lock_failure(&e) => {
                        shared.lock_failures.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok::<(), sqlx::Error>(())
        });
    }
    tokio::time::sleep(RAMP).await;
    let before = Counters::read(server).await?;
    let (done_before, db_before, own_before) =
        (shared.done.load(Ordering::Relaxed), db_process.and_then(ServerProcess::cpu_ticks), own_cpu_ticks());
    let machine_before = MachineTicks::read();
    let from = chrono::Utc::now().timestamp_millis();
    tokio::time::sleep_until(end).await;
    let after = Counters::read(server).await?;
    let (done_after, db_after, own_after) =
        (shared.done.load(Ordering::Relaxed), db_process.and_then(ServerProcess::cpu_ticks), own_cpu_ticks());
    let machine_after = MachineTicks::read();
    let elapsed_ms = chrono::Utc::now().timestamp_millis() - from;
    while let Some(joined) = tasks.join_next().await {
        joined.map_err(|e| format!("raw ceiling task: {e}"))?.map_err(|e| format!("raw ceiling: {e}"))?;
    }
    let triggers = done_after - done_before;
    let statements: u64 = DML.iter().map(|c| after.delta(&before, c)).sum();
    let per_trigger = |n: u64| if triggers > 0 { n as f64 / triggers as f64 } else { 0.0 };
    let cpu = |a: Option<u64>, b: Option<u64>| Some(cpu_percent(a?.saturating_sub(b?), elapsed_ms));
    Ok(RawResult {
        lock_failures: shared.lock_failures.load(Ordering::Relaxed),
        triggers_per_s: triggers as f64 * 1000.0 / elapsed_ms.max(1) as f64,
        sql_per_trigger: per_trigger(statements),
        fsyncs_per_trigger: per_trigger(after.delta(&before, "Innodb_data_fsyncs")),
        db_cpu: cpu(db_after, db_before),
        db_us_per_trigger: db_after
            .zip(db_before)
            .and_then(|(a, b)| us_per_trigger(a.saturating_sub(b), triggers)),
        bench_cpu: cpu(own_after, own_before),
        machine_busy: cpu(machine_after.map(|m| m.busy), machine_before.map(|m| m.busy)),
    })
}

/// MariaDB's ER_LOCK_DEADLOCK and ER_LOCK_WAIT_TIMEOUT.
fn is_lock_failure(error: &sqlx::Error) -> bool {
    error
        .as_database_error()
        .and_then(|e| e.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>())
        .is_some_and(|e| matches!(e.number(), 1213 | 1205))
}

/// [`RAW_BATCH`] triggers' statements in the admin's order and shapes: one multi-row log INSERT
/// (`RETURNING id`), one trigger-report UPDATE of those rows (equal values bound once), one guarded
/// result UPDATE; and every [`SCHEDULE_BATCH`] triggers one schedule UPDATE.
async fn one_trigger(shared: &Shared, conn: &mut MySqlConnection) -> Result<(), sqlx::Error> {
    let n = shared.started.fetch_add(RAW_BATCH as u64, Ordering::Relaxed);
    let jobs = &shared.workload.jobs;
    let now = db::utc_datetime(chrono::Utc::now().timestamp_millis());
    let insert =
        format!("{INSERT_LOG_PREFIX} {} RETURNING id", vec!["(?, ?, ?, 0, 0)"; RAW_BATCH].join(", "));
    let mut query = sqlx::query_scalar::<_, i64>(&insert);
    for k in 0..RAW_BATCH as u64 {
        let (job_id, _) = jobs[((n + k) % jobs.len() as u64) as usize];
        query = query.bind(db::GROUP_ID).bind(job_id).bind(now);
    }
    let ids = query.fetch_all(&mut *conn).await?;
    let in_list = vec!["?"; ids.len()].join(", ");
    let sql = format!("{UPDATE_TRIGGER_INFO_PREFIX} WHERE id IN ({in_list})");
    let mut query = sqlx::query(&sql)
        .bind(now)
        .bind(200)
        .bind(&shared.trigger_msg)
        .bind(&shared.workload.executor_address)
        .bind(HANDLER)
        .bind("")
        .bind(None::<String>)
        .bind(0);
    for id in &ids {
        query = query.bind(id);
    }
    query.execute(&mut *conn).await?;
    let sql = format!("{UPDATE_HANDLE_INFO_PREFIX} WHERE id IN ({in_list}) AND handle_code <= 0");
    let mut query =
        sqlx::query(&sql).bind(db::utc_datetime(chrono::Utc::now().timestamp_millis())).bind(200).bind("");
    for id in &ids {
        query = query.bind(id);
    }
    query.execute(&mut *conn).await?;
    if (n / SCHEDULE_BATCH as u64) != ((n + RAW_BATCH as u64) / SCHEDULE_BATCH as u64) {
        update_schedules(shared, conn).await?;
    }
    shared.done.fetch_add(ids.len() as u64, Ordering::Relaxed);
    Ok(())
}

/// The batched CASE UPDATE of `storage::schedule_lock::update_schedules`, advancing the next
/// [`SCHEDULE_BATCH`] jobs by one second. Serialised, as the schedule lock serialises it in the admin.
async fn update_schedules(shared: &Shared, conn: &mut MySqlConnection) -> Result<(), sqlx::Error> {
    let mut schedules = shared.schedules.lock().await;
    let total = schedules.jobs.len();
    let indexes: Vec<usize> =
        (0..SCHEDULE_BATCH.min(total)).map(|k| (schedules.cursor + k) % total).collect();
    let case = format!("CASE id {} END", vec!["WHEN ? THEN ?"; indexes.len()].join(" "));
    let sql = format!(
        "UPDATE xxl_job_info SET trigger_status = {case}, trigger_last_time = {case}, \
         trigger_next_time = {case} WHERE id IN ({}) AND trigger_status = 1 AND trigger_next_time = {case}",
        vec!["?"; indexes.len()].join(", "),
    );
    let batch: Vec<(i32, i64)> = indexes.iter().map(|i| schedules.jobs[*i]).collect();
    let mut query = sqlx::query(&sql);
    for (id, _) in &batch {
        query = query.bind(id).bind(1i8);
    }
    for (id, next) in &batch {
        query = query.bind(id).bind(next);
    }
    for (id, next) in &batch {
        query = query.bind(id).bind(next + 1000);
    }
    for (id, _) in &batch {
        query = query.bind(id);
    }
    for (id, next) in &batch {
        query = query.bind(id).bind(next);
    }
    query.execute(conn).await?;
    for i in &indexes {
        schedules.jobs[*i].1 += 1000;
    }
    schedules.cursor = (schedules.cursor + indexes.len()) % total;
    Ok(())
}

/// The report the admin writes for a successful bench trigger, in its default language, so the
/// UPDATE carries the same number of bytes.
fn trigger_msg(address: &str) -> String {
    let i18n = I18n::new("zh_CN");
    let run = call_report(i18n.get("jobconf_trigger_run"), address, 200, None);
    let addresses = [address];
    TriggerReport {
        trigger_type_title: i18n.get("jobconf_trigger_type_cron"),
        admin_address: "127.0.0.1",
        manual_addresses: true,
        address_list: Some(&addresses),
        route_title: i18n.get("jobconf_route_first"),
        sharding: None,
        block_title: i18n.get(block_title_key(Some("SERIAL_EXECUTION"))),
        timeout: 0,
        fail_retry_count: 0,
        route_msg: None,
        run_msg: Some(&run),
    }
    .render(&i18n)
}
