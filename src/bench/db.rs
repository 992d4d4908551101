//! The benchmark's own database work: the schema (through the admin's data layer), the bench jobs,
//! the server's statement counters, and the log counts of a window.

use super::args::MySqlTarget;
use super::stats::Grid;
use crate::config::Config;
use chrono::NaiveDateTime;
use sqlx::mysql::{MySqlConnectOptions, MySqlPool, MySqlPoolOptions};
use sqlx::{QueryBuilder, Row};
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

/// Job ids are chosen, not generated, so job `i` of the grid is id `FIRST_JOB_ID + i` (the schema's
/// sample job has id 1).
pub const FIRST_JOB_ID: i32 = 1_000;
pub const HANDLER: &str = "benchJobHandler";
/// Rows per INSERT while seeding: far below the 65,535 placeholders a statement may carry.
const INSERT_BATCH: usize = 1_000;

/// The counters of `SHOW GLOBAL STATUS` the report uses.
pub const COUNTERS: [&str; 10] = [
    "Com_select",
    "Com_insert",
    "Com_update",
    "Com_delete",
    "Com_begin",
    "Com_commit",
    "Com_rollback",
    "Com_admin_commands",
    "Com_stmt_prepare",
    "Innodb_data_fsyncs",
];

/// The statements counted as "SQL per trigger".
pub const DML: [&str; 4] = ["Com_select", "Com_insert", "Com_update", "Com_delete"];

impl MySqlTarget {
    fn options(&self) -> MySqlConnectOptions {
        let mut options = MySqlConnectOptions::new().host(&self.host).port(self.port).username(&self.user).charset("utf8mb4");
        if let Some(password) = &self.password {
            options = options.password(password);
        }
        options
    }

    /// The datasource URL the admin is given; UTC keeps DATETIME arithmetic free of DST.
    pub fn jdbc_url(&self, database: &str) -> String {
        format!("jdbc:mysql://{}:{}/{database}?serverTimezone=UTC", self.host, self.port)
    }
}

/// A small pool without a default database: server facts, counters, CREATE/DROP.
pub async fn server_pool(target: &MySqlTarget) -> Result<MySqlPool, String> {
    MySqlPoolOptions::new()
        .max_connections(2)
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(target.options())
        .await
        .map_err(|e| format!("cannot connect to MariaDB at {}:{}: {e}", target.host, target.port))
}

/// A pool on the bench database. No liveness check per acquire: the raw ceiling must measure only the
/// statements themselves.
pub async fn database_pool(target: &MySqlTarget, database: &str, connections: u32) -> Result<MySqlPool, String> {
    MySqlPoolOptions::new()
        .max_connections(connections)
        .acquire_timeout(Duration::from_secs(30))
        .test_before_acquire(false)
        .connect_with(target.options().database(database))
        .await
        .map_err(|e| format!("cannot open database {database}: {e}"))
}

/// Creates the database, then the xxl-job schema exactly as the admin would, from the admin's own
/// configuration (so the arguments are validated before the child is started).
pub async fn create_schema(
    server: &MySqlPool,
    database: &str,
    admin_args: &[String],
    env: &[(String, String)],
    cwd: &Path,
) -> Result<(), String> {
    // The admin's own CREATE DATABASE fallback is not relied on: sqlx reports MariaDB's "unknown database"
    // by SQLSTATE (42000), not by the error number it looks for.
    sqlx::query(&format!("CREATE DATABASE `{database}` DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"))
        .execute(server)
        .await
        .map_err(|e| format!("cannot create database {database}: {e}"))?;
    let loaded = Config::load(admin_args, env.iter().cloned(), cwd).map_err(|e| format!("admin configuration: {e}"))?;
    let (db, _) = crate::storage::connect(&loaded.config.datasource).await.map_err(|e| format!("creating the schema: {e}"))?;
    db.close().await;
    Ok(())
}

pub async fn drop_database(server: &MySqlPool, database: &str) -> Result<(), String> {
    sqlx::query(&format!("DROP DATABASE IF EXISTS `{database}`"))
        .execute(server)
        .await
        .map(|_| ())
        .map_err(|e| format!("cannot drop database {database}: {e}"))
}

/// Facts about the server for the report header.
pub async fn server_facts(server: &MySqlPool) -> Result<String, String> {
    let version: String = sqlx::query_scalar("SELECT VERSION()").fetch_one(server).await.map_err(|e| e.to_string())?;
    let vars: Vec<(String, String)> = sqlx::query_as(
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN \
         ('innodb_flush_log_at_trx_commit', 'innodb_buffer_pool_size', 'log_bin', 'max_connections')",
    )
    .fetch_all(server)
    .await
    .map_err(|e| e.to_string())?;
    let vars: Vec<String> = vars.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
    Ok(format!("{version} ({})", vars.join(", ")))
}

/// A snapshot of the server's statement counters.
#[derive(Debug, Clone, Default)]
pub struct Counters(HashMap<String, u64>);

impl Counters {
    pub async fn read(server: &MySqlPool) -> Result<Counters, String> {
        let sql = format!(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
            COUNTERS.iter().map(|c| format!("'{c}'")).collect::<Vec<_>>().join(", ")
        );
        let rows: Vec<(String, String)> = sqlx::query_as(&sql).fetch_all(server).await.map_err(|e| format!("SHOW GLOBAL STATUS: {e}"))?;
        Ok(Counters(rows.into_iter().filter_map(|(k, v)| Some((k, v.parse().ok()?))).collect()))
    }

    /// `self − before` for one counter.
    pub fn delta(&self, before: &Counters, name: &str) -> u64 {
        let get = |c: &Counters| c.0.get(name).copied().unwrap_or(0);
        get(self).saturating_sub(get(before))
    }
}

/// Inserts the bench group (manual address list) and `jobs` stopped FIX_RATE 1 s jobs; returns the group id.
pub async fn seed(pool: &MySqlPool, jobs: usize, executor_address: &str) -> Result<i32, String> {
    let now = chrono::Utc::now().naive_utc();
    let group = sqlx::query(
        "INSERT INTO xxl_job_group (app_name, title, address_type, address_list, update_time) VALUES (?, ?, 1, ?, ?)",
    )
    .bind("xxl-job-bench")
    .bind("bench")
    .bind(executor_address)
    .bind(now)
    .execute(pool)
    .await
    .map_err(|e| format!("inserting the bench group: {e}"))?
    .last_insert_id() as i32;
    for batch_start in (0..jobs).step_by(INSERT_BATCH) {
        let batch_end = (batch_start + INSERT_BATCH).min(jobs);
        let mut insert = QueryBuilder::new(
            "INSERT INTO xxl_job_info (id, job_group, job_desc, add_time, update_time, author, alarm_email, \
             schedule_type, schedule_conf, misfire_strategy, executor_route_strategy, executor_handler, \
             executor_param, executor_block_strategy, executor_timeout, executor_fail_retry_count, glue_type, \
             glue_source, glue_remark, glue_updatetime, child_jobid, trigger_status, trigger_last_time, \
             trigger_next_time) ",
        );
        insert.push_values(batch_start..batch_end, |mut row, i| {
            row.push_bind(FIRST_JOB_ID + i as i32)
                .push_bind(group)
                .push_bind(format!("bench job {i}"))
                .push_bind(now)
                .push_bind(now)
                .push_bind("bench")
                .push_bind("")
                .push("'FIX_RATE', '1', 'DO_NOTHING', 'FIRST'")
                .push_bind(HANDLER)
                .push("'', 'SERIAL_EXECUTION', 0, 0, 'BEAN', '', 'bench'")
                .push_bind(now)
                .push("'', 0, 0, 0");
        });
        insert.build().execute(pool).await.map_err(|e| format!("inserting bench jobs: {e}"))?;
    }
    Ok(group)
}

/// Starts every bench job on the grid in one statement, so all phases are relative to the same instant.
pub async fn activate(pool: &MySqlPool, group: i32, grid: &Grid) -> Result<(), String> {
    // Integer arithmetic identical to Grid::phase_ms: start + (index * 1000) DIV jobs.
    sqlx::query(
        "UPDATE xxl_job_info SET trigger_status = 1, trigger_last_time = 0, \
         trigger_next_time = ? + ((id - ?) * 1000) DIV ? WHERE job_group = ?",
    )
    .bind(grid.start_ms)
    .bind(grid.first_job_id)
    .bind(grid.jobs as i64)
    .bind(group)
    .execute(pool)
    .await
    .map(|_| ())
    .map_err(|e| format!("starting the bench jobs: {e}"))
}

/// The log rows of a window (DATETIME, UTC): all of them, those `/run` accepted, those finished with 200.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogCounts {
    pub created: i64,
    pub triggered: i64,
    pub succeeded: i64,
}

pub async fn count_logs(pool: &MySqlPool, from: NaiveDateTime, to: NaiveDateTime) -> Result<LogCounts, String> {
    let row = sqlx::query(
        "SELECT COUNT(*), CAST(COALESCE(SUM(trigger_code = 200), 0) AS SIGNED), \
         CAST(COALESCE(SUM(handle_code = 200), 0) AS SIGNED) \
         FROM xxl_job_log WHERE trigger_time >= ? AND trigger_time < ?",
    )
    .bind(from)
    .bind(to)
    .fetch_one(pool)
    .await
    .map_err(|e| format!("counting logs: {e}"))?;
    Ok(LogCounts { created: row.get(0), triggered: row.get(1), succeeded: row.get(2) })
}

/// The current `trigger_next_time` of the bench jobs, by grid index.
pub async fn next_times(pool: &MySqlPool, group: i32) -> Result<Vec<(i32, i64)>, String> {
    sqlx::query_as("SELECT id, trigger_next_time FROM xxl_job_info WHERE job_group = ? ORDER BY id")
        .bind(group)
        .fetch_all(pool)
        .await
        .map_err(|e| format!("reading the bench jobs: {e}"))
}

/// The UTC DATETIME of an instant (the admin runs with `serverTimezone=UTC`).
pub fn utc_datetime(epoch_ms: i64) -> NaiveDateTime {
    chrono::DateTime::from_timestamp_millis(epoch_ms).unwrap_or_default().naive_utc()
}
