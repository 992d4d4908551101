//! The benchmark's own database work: a fresh database per row on the chosen backend (its schema made
//! by the admin's own data layer), the bench jobs and their activation, the log counts of a window;
//! the database servers (MariaDB, PostgreSQL) and their processes; for MariaDB also the server's
//! statement counters.
//!
//! Every statement the backends share is built with `QueryBuilder::push_bind`, which writes each
//! backend's own placeholders, and written once inside [`on_pool!`].

use super::args::{Options, Phase, ServerTarget, Storage};
use super::process::{self, ServerProcess};
use chrono::NaiveDateTime;
use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};
use sqlx::mysql::{MySqlConnectOptions, MySqlPool, MySqlPoolOptions};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgSslMode};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};
use sqlx::QueryBuilder;
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;
use xxl_job_admin::config::Config;
use xxl_job_admin::storage::Db;

/// Job ids are chosen, not generated, so job `i` of the grid is id `FIRST_JOB_ID + i` (the schema's
/// sample job has id 1). The group's id is chosen too, so no backend's insert-id API is needed.
pub const FIRST_JOB_ID: i32 = 1_000;
pub const GROUP_ID: i32 = 1_000;
pub const HANDLER: &str = "benchJobHandler";
/// Rows per INSERT while seeding: 8,000 placeholders, below every backend's limit (SQLite: 32,766).
const INSERT_BATCH: usize = 1_000;
/// A burst job's FIX_RATE period: one day, so its one fire is the only one a bench run sees.
const BURST_RATE_S: &str = "86400";
const INSERT_GROUP: &str =
    "INSERT INTO xxl_job_group (id, app_name, title, address_type, address_list, update_time) ";
const INSERT_JOBS: &str = "INSERT INTO xxl_job_info (id, job_group, job_desc, add_time, update_time, author, alarm_email, \
     schedule_type, schedule_conf, misfire_strategy, executor_route_strategy, executor_handler, executor_param, \
     executor_block_strategy, executor_timeout, executor_fail_retry_count, glue_type, glue_source, glue_remark, \
     glue_updatetime, child_jobid, trigger_status, trigger_last_time, trigger_next_time) ";
/// Characters of a file path that would change the meaning of a `sqlite:` URL.
const URL_PATH: &AsciiSet = &CONTROLS.add(b'%').add(b'?').add(b'#').add(b' ');
/// The database every PostgreSQL server has, for CREATE/DROP DATABASE.
const PG_MAINTENANCE_DB: &str = "postgres";
/// What the database servers' processes are called (`comm`).
const MYSQL_PROCESS_NAMES: [&str; 2] = ["mariadbd", "mysqld"];
const PG_PROCESS_NAMES: [&str; 2] = ["postgres", "postmaster"];

/// How the bench jobs of a row are scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Every second: aligned jobs as CRON `* * * * * ?`, spread ones as FIX_RATE 1 s.
    Sustained(Phase),
    /// Due once, all at the same instant.
    Burst,
}

impl Shape {
    fn schedule(self) -> (&'static str, &'static str) {
        match self {
            Shape::Sustained(Phase::Aligned) => ("CRON", "* * * * * ?"),
            Shape::Sustained(Phase::Spread) => ("FIX_RATE", "1"),
            Shape::Burst => ("FIX_RATE", BURST_RATE_S),
        }
    }

    pub fn phase(self) -> Phase {
        match self {
            Shape::Sustained(phase) => phase,
            Shape::Burst => Phase::Aligned,
        }
    }
}

/// What the admin child is given to reach the row's database.
pub struct Datasource {
    pub args: Vec<String>,
    /// Kept off the command line, where any local user could read it.
    pub env: Vec<(String, String)>,
}

/// The database of one row.
pub enum RowDb {
    /// `server` has no default database: it reads the server's counters.
    MySql {
        pool: MySqlPool,
        server: MySqlPool,
    },
    Postgres {
        pool: PgPool,
    },
    Sqlite {
        pool: SqlitePool,
    },
}

/// Runs `$body` with `$p` bound to the row's pool, whatever its backend.
macro_rules! on_pool {
    ($db:expr, |$p:ident| $body:expr) => {
        match $db {
            RowDb::MySql { pool: $p, .. } => $body,
            RowDb::Postgres { pool: $p, .. } => $body,
            RowDb::Sqlite { pool: $p, .. } => $body,
        }
    };
}

impl RowDb {
    /// Creates the row's database (on a server through `servers`; SQLite as a file in `workdir`) with
    /// the xxl-job schema, made by the admin's data layer from the datasource the admin will get.
    pub async fn create(
        storage: Storage,
        servers: &Servers,
        workdir: &Path,
        name: &str,
        connections: u32,
    ) -> Result<(RowDb, Datasource), String> {
        match storage {
            Storage::MySql => {
                let Server { target, pool: server, .. } =
                    servers.mysql.as_ref().ok_or("no connection to MariaDB")?;
                servers.create_database(storage, name).await?;
                let datasource = target.datasource(target.jdbc_url(name));
                create_schema(&datasource, workdir).await?;
                let pool = database_pool(target, name, connections).await?;
                Ok((RowDb::MySql { pool, server: server.clone() }, datasource))
            }
            Storage::Postgres => {
                let target = &servers.postgres.as_ref().ok_or("no connection to PostgreSQL")?.target;
                servers.create_database(storage, name).await?;
                let datasource = target.datasource(target.postgres_url(name));
                create_schema(&datasource, workdir).await?;
                // Seeding and counting only: one connection.
                let pool = PgPoolOptions::new()
                    .max_connections(1)
                    .acquire_timeout(Duration::from_secs(30))
                    .connect_with(target.postgres_options().database(name))
                    .await
                    .map_err(|e| format!("cannot open database {name}: {e}"))?;
                Ok((RowDb::Postgres { pool }, datasource))
            }
            Storage::Sqlite => {
                let file = workdir.join(format!("{name}.db"));
                let path = utf8_percent_encode(&file.to_string_lossy(), URL_PATH).to_string();
                // UTC, as for MariaDB: DATETIME text free of DST.
                let datasource = Datasource {
                    args: vec![format!("--spring.datasource.url=sqlite:{path}?serverTimezone=UTC")],
                    env: Vec::new(),
                };
                create_schema(&datasource, workdir).await?;
                // One connection: the bench writes only while seeding and activating.
                let pool = SqlitePoolOptions::new()
                    .max_connections(1)
                    .connect_with(
                        SqliteConnectOptions::new().filename(&file).busy_timeout(Duration::from_secs(30)),
                    )
                    .await
                    .map_err(|e| format!("cannot open {}: {e}", file.display()))?;
                Ok((RowDb::Sqlite { pool }, datasource))
            }
        }
    }

    pub fn mysql(&self) -> Option<&MySqlPool> {
        match self {
            RowDb::MySql { pool, .. } => Some(pool),
            RowDb::Postgres { .. } | RowDb::Sqlite { .. } => None,
        }
    }

    /// The server's statement counters (MariaDB only).
    pub async fn counters(&self) -> Result<Option<Counters>, String> {
        match self {
            RowDb::MySql { server, .. } => Counters::read(server).await.map(Some),
            RowDb::Postgres { .. } | RowDb::Sqlite { .. } => Ok(None),
        }
    }

    /// Closes the bench's connections; the data stays (server databases are dropped by name, SQLite
    /// files go with the work directory).
    pub async fn close(&self) {
        on_pool!(self, |p| p.close().await)
    }

    /// Inserts the bench group (manual address list) and `jobs` stopped DO_NOTHING jobs of `shape`,
    /// each with its offset in the second as `trigger_next_time`, for [`RowDb::activate`] to add to.
    pub async fn seed(&self, shape: Shape, jobs: usize, executor_address: &str) -> Result<(), String> {
        let now = chrono::Utc::now().naive_utc();
        on_pool!(self, |p| {
            let mut group = QueryBuilder::new(INSERT_GROUP);
            group.push_values([()], |mut row, ()| {
                row.push_bind(GROUP_ID)
                    .push_bind("xxl-job-bench")
                    .push_bind("bench")
                    .push_bind(1)
                    .push_bind(executor_address)
                    .push_bind(now);
            });
            group.build().execute(p).await.map(|_| ())
        })
        .map_err(|e| format!("inserting the bench group: {e}"))?;
        let (schedule_type, schedule_conf) = shape.schedule();
        for batch_start in (0..jobs).step_by(INSERT_BATCH) {
            let batch = batch_start..(batch_start + INSERT_BATCH).min(jobs);
            on_pool!(self, |p| {
                let mut insert = QueryBuilder::new(INSERT_JOBS);
                insert.push_values(batch, |mut row, i| {
                    row.push_bind(FIRST_JOB_ID + i as i32)
                        .push_bind(GROUP_ID)
                        .push_bind(format!("bench job {i}"))
                        .push_bind(now)
                        .push_bind(now)
                        .push("'bench', ''")
                        .push_bind(schedule_type)
                        .push_bind(schedule_conf)
                        .push("'DO_NOTHING', 'FIRST'")
                        .push_bind(HANDLER)
                        .push("'', 'SERIAL_EXECUTION', 0, 0, 'BEAN', '', 'bench'")
                        .push_bind(now)
                        .push("'', 0, 0")
                        .push_bind(super::stats::Grid::offset_ms(shape.phase(), i, jobs));
                });
                insert.build().execute(p).await.map(|_| ())
            })
            .map_err(|e| format!("inserting bench jobs: {e}"))?;
        }
        Ok(())
    }

    /// Starts every bench job in one statement: each is next due at `start_ms` plus its offset.
    pub async fn activate(&self, start_ms: i64) -> Result<(), String> {
        on_pool!(self, |p| {
            let mut update = QueryBuilder::new(
                "UPDATE xxl_job_info SET trigger_status = 1, trigger_last_time = 0, trigger_next_time = trigger_next_time + ",
            );
            update.push_bind(start_ms).push(" WHERE job_group = ").push_bind(GROUP_ID);
            update.build().execute(p).await.map(|_| ())
        })
        .map_err(|e| format!("starting the bench jobs: {e}"))
    }

    /// The log rows whose trigger time is in `[from, to)` (DATETIME, UTC).
    pub async fn count_logs(&self, from: NaiveDateTime, to: NaiveDateTime) -> Result<LogCounts, String> {
        let (created, triggered, succeeded) = on_pool!(self, |p| {
            // COUNT is a 64-bit integer on every backend, where SUM is not.
            let mut select = QueryBuilder::new(
                "SELECT COUNT(*), COUNT(CASE WHEN trigger_code = 200 THEN 1 END), \
                 COUNT(CASE WHEN handle_code = 200 THEN 1 END) FROM xxl_job_log WHERE trigger_time >= ",
            );
            select.push_bind(from).push(" AND trigger_time < ").push_bind(to);
            select.build_query_as::<(i64, i64, i64)>().fetch_one(p).await
        })
        .map_err(|e| format!("counting logs: {e}"))?;
        Ok(LogCounts { created, triggered, succeeded })
    }
}

/// The database servers the rows use, each with a small pool on no bench database (PostgreSQL: on
/// its maintenance database): server facts, counters, CREATE/DROP DATABASE.
pub struct Servers {
    pub mysql: Option<Server<MySqlPool>>,
    pub postgres: Option<Server<PgPool>>,
}

pub struct Server<P> {
    pub target: ServerTarget,
    pub pool: P,
    /// Its processes on this machine, whose CPU is the database's share; none if not found.
    pub process: Option<ServerProcess>,
}

impl Servers {
    /// Connects to the servers of `options.storages` and finds their processes; returns what was
    /// found (or not), for the progress log.
    pub async fn connect(options: &Options) -> Result<(Servers, Vec<String>), String> {
        let mut notes = Vec::new();
        let mut note = |what: &str, process: Option<ServerProcess>| {
            notes.push(match process {
                Some(ServerProcess::Threads(pid) | ServerProcess::Postmaster(pid)) => {
                    format!("{what}: pid {pid}")
                }
                None => format!("{what} was not found: its CPU is not measured"),
            })
        };
        let mysql = match options.storages.contains(&Storage::MySql) {
            true => {
                let target = options.mysql.clone();
                let pool = server_pool(target.mysql_options(), "MariaDB", &target).await?;
                let pid_file =
                    sqlx::query_scalar::<_, String>("SELECT @@pid_file").fetch_one(&pool).await.ok();
                let process = process::server_process(pid_file.as_deref(), &MYSQL_PROCESS_NAMES)
                    .map(ServerProcess::Threads);
                note("the MariaDB server process", process);
                Some(Server { target, pool, process })
            }
            false => None,
        };
        let postgres = match options.storages.contains(&Storage::Postgres) {
            true => {
                let target = options.postgres.clone();
                let pool =
                    server_pool(target.postgres_options().database(PG_MAINTENANCE_DB), "PostgreSQL", &target)
                        .await?;
                // The server process of this very connection was forked by the postmaster.
                let backend =
                    sqlx::query_scalar::<_, i32>("SELECT pg_backend_pid()").fetch_one(&pool).await.ok();
                let postmaster = backend
                    .and_then(|pid| process::postmaster_of(u32::try_from(pid).ok()?, &PG_PROCESS_NAMES));
                let process = postmaster.map(ServerProcess::Postmaster);
                note("the PostgreSQL postmaster", process);
                Some(Server { target, pool, process })
            }
            false => None,
        };
        Ok((Servers { mysql, postgres }, notes))
    }

    /// The processes of `storage`'s server; none for SQLite, which runs inside the admin.
    pub fn process(&self, storage: Storage) -> Option<ServerProcess> {
        match storage {
            Storage::MySql => self.mysql.as_ref()?.process,
            Storage::Postgres => self.postgres.as_ref()?.process,
            Storage::Sqlite => None,
        }
    }

    /// Creates a bench database on `storage`'s server, in place of one an earlier run may have kept.
    pub async fn create_database(&self, storage: Storage, database: &str) -> Result<(), String> {
        self.drop_database(storage, database).await?;
        let created = match (storage, &self.mysql, &self.postgres) {
            // The admin's own CREATE DATABASE fallback is not relied on: sqlx reports MariaDB's
            // "unknown database" by SQLSTATE (42000), not by the error number it looks for.
            (Storage::MySql, Some(server), _) => {
                let sql = format!(
                    "CREATE DATABASE `{database}` DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
                );
                sqlx::query(&sql).execute(&server.pool).await.map(drop)
            }
            // UTF8 whatever the cluster's default, as the admin creates a missing database.
            (Storage::Postgres, _, Some(server)) => {
                let sql = format!("CREATE DATABASE \"{database}\" ENCODING 'UTF8' TEMPLATE template0");
                sqlx::query(&sql).execute(&server.pool).await.map(drop)
            }
            _ => return Err(format!("no {} server to create {database} on", storage.name())),
        };
        created.map_err(|e| format!("cannot create database {database}: {e}"))
    }

    /// Drops a bench database on `storage`'s server (SQLite files go with the work directory).
    pub async fn drop_database(&self, storage: Storage, database: &str) -> Result<(), String> {
        let dropped = match (storage, &self.mysql, &self.postgres) {
            (Storage::MySql, Some(server), _) => {
                sqlx::query(&format!("DROP DATABASE IF EXISTS `{database}`"))
                    .execute(&server.pool)
                    .await
                    .map(drop)
            }
            // PostgreSQL waits a few seconds for the sessions of a stopped admin to end.
            (Storage::Postgres, _, Some(server)) => {
                sqlx::query(&format!("DROP DATABASE IF EXISTS \"{database}\""))
                    .execute(&server.pool)
                    .await
                    .map(drop)
            }
            _ => Ok(()),
        };
        dropped.map_err(|e| format!("cannot drop database {database}: {e}"))
    }

    /// Facts about each server for the report header.
    pub async fn facts(&self) -> Vec<String> {
        let mut facts = Vec::new();
        if let Some(server) = &self.mysql {
            facts.push(format!(
                "MariaDB: {}",
                mysql_facts(&server.pool).await.unwrap_or_else(|e| format!("unknown ({e})"))
            ));
        }
        if let Some(server) = &self.postgres {
            facts.push(format!(
                "PostgreSQL: {}",
                postgres_facts(&server.pool).await.unwrap_or_else(|e| format!("unknown ({e})"))
            ));
        }
        facts
    }

    pub async fn close(&self) {
        if let Some(server) = &self.mysql {
            server.pool.close().await;
        }
        if let Some(server) = &self.postgres {
            server.pool.close().await;
        }
    }
}

impl ServerTarget {
    /// The admin's datasource: `url`, and this target's user and password.
    fn datasource(&self, url: String) -> Datasource {
        Datasource {
            args: vec![
                format!("--spring.datasource.url={url}"),
                format!("--spring.datasource.username={}", self.user),
            ],
            env: self
                .password
                .iter()
                .map(|p| ("SPRING_DATASOURCE_PASSWORD".to_string(), p.clone()))
                .collect(),
        }
    }

    fn mysql_options(&self) -> MySqlConnectOptions {
        let mut options = MySqlConnectOptions::new()
            .host(&self.host)
            .port(self.port)
            .username(&self.user)
            .charset("utf8mb4");
        if let Some(password) = &self.password {
            options = options.password(password);
        }
        options
    }

    /// The datasource URL the admin is given; UTC keeps DATETIME arithmetic free of DST.
    fn jdbc_url(&self, database: &str) -> String {
        format!("jdbc:mysql://{}:{}/{database}?serverTimezone=UTC", self.host, self.port)
    }

    /// Without TLS, as MariaDB is reached: on loopback it would only add encryption to both sides' CPU.
    fn postgres_options(&self) -> PgConnectOptions {
        let mut options = PgConnectOptions::new_without_pgpass()
            .host(&self.host)
            .port(self.port)
            .username(&self.user)
            .ssl_mode(PgSslMode::Disable);
        if let Some(password) = &self.password {
            options = options.password(password);
        }
        options
    }

    /// As [`ServerTarget::jdbc_url`], and without TLS as [`ServerTarget::postgres_options`].
    fn postgres_url(&self, database: &str) -> String {
        format!("jdbc:postgresql://{}:{}/{database}?serverTimezone=UTC&sslmode=disable", self.host, self.port)
    }
}

/// A small pool on a server, named `what` in the error: facts, counters, CREATE/DROP DATABASE.
async fn server_pool<DB: sqlx::Database>(
    options: <DB::Connection as sqlx::Connection>::Options,
    what: &str,
    target: &ServerTarget,
) -> Result<sqlx::Pool<DB>, String> {
    sqlx::pool::PoolOptions::<DB>::new()
        .max_connections(2)
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(options)
        .await
        .map_err(|e| format!("cannot connect to {what} at {}:{}: {e}", target.host, target.port))
}

/// A pool on the bench database. No liveness check per acquire: the raw ceiling must measure only the
/// statements themselves.
async fn database_pool(target: &ServerTarget, database: &str, connections: u32) -> Result<MySqlPool, String> {
    MySqlPoolOptions::new()
        .max_connections(connections)
        .acquire_timeout(Duration::from_secs(30))
        .test_before_acquire(false)
        .connect_with(target.mysql_options().database(database))
        .await
        .map_err(|e| format!("cannot open database {database}: {e}"))
}

/// The schema, exactly as the admin would make it, from the admin's own configuration (so the
/// datasource is validated before the child is started).
async fn create_schema(datasource: &Datasource, cwd: &Path) -> Result<(), String> {
    open_store(datasource, cwd).await?.close().await;
    Ok(())
}

/// The admin's own data layer on `datasource` (creating the schema when there is none), for what the
/// bench writes through its API: the workflow mode's workflow and runs.
pub async fn open_store(datasource: &Datasource, cwd: &Path) -> Result<Db, String> {
    let loaded = Config::load(&datasource.args, datasource.env.iter().cloned(), cwd)
        .map_err(|e| format!("admin configuration: {e}"))?;
    let (db, _) = xxl_job_admin::storage::connect(&loaded.config.datasource)
        .await
        .map_err(|e| format!("opening the database with the admin's data layer: {e}"))?;
    Ok(db)
}

/// The version, and the settings that decide what a commit costs.
async fn mysql_facts(server: &MySqlPool) -> Result<String, String> {
    let version: String =
        sqlx::query_scalar("SELECT VERSION()").fetch_one(server).await.map_err(|e| e.to_string())?;
    let vars: Vec<(String, String)> = sqlx::query_as(
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN \
         ('innodb_flush_log_at_trx_commit', 'innodb_buffer_pool_size', 'log_bin', 'max_connections')",
    )
    .fetch_all(server)
    .await
    .map_err(|e| e.to_string())?;
    Ok(describe(&version, vars))
}

/// As [`mysql_facts`].
async fn postgres_facts(server: &PgPool) -> Result<String, String> {
    let version: String =
        sqlx::query_scalar("SHOW server_version").fetch_one(server).await.map_err(|e| e.to_string())?;
    let vars: Vec<(String, String)> = sqlx::query_as(
        "SELECT name, current_setting(name) FROM pg_settings WHERE name IN \
         ('synchronous_commit', 'fsync', 'wal_sync_method', 'shared_buffers', 'max_connections') ORDER BY name",
    )
    .fetch_all(server)
    .await
    .map_err(|e| e.to_string())?;
    Ok(describe(&version, vars))
}

/// `version (name=value, …)`.
fn describe(version: &str, settings: Vec<(String, String)>) -> String {
    let settings: Vec<String> = settings.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{version} ({})", settings.join(", "))
}

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

/// A snapshot of the server's statement counters.
#[derive(Debug, Clone, Default)]
pub struct Counters(HashMap<String, u64>);

impl Counters {
    pub async fn read(server: &MySqlPool) -> Result<Counters, String> {
        let sql = format!(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
            COUNTERS.iter().map(|c| format!("'{c}'")).collect::<Vec<_>>().join(", ")
        );
        let rows: Vec<(String, String)> =
            sqlx::query_as(&sql).fetch_all(server).await.map_err(|e| format!("SHOW GLOBAL STATUS: {e}"))?;
        Ok(Counters(rows.into_iter().filter_map(|(k, v)| Some((k, v.parse().ok()?))).collect()))
    }

    /// `self − before` for one counter.
    pub fn delta(&self, before: &Counters, name: &str) -> u64 {
        let get = |c: &Counters| c.0.get(name).copied().unwrap_or(0);
        get(self).saturating_sub(get(before))
    }
}

/// The log rows of a window (DATETIME, UTC): all of them, those `/run` accepted, those finished with 200.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogCounts {
    pub created: i64,
    pub triggered: i64,
    pub succeeded: i64,
}

/// The current `trigger_next_time` of the bench jobs, by grid index.
pub async fn next_times(pool: &MySqlPool) -> Result<Vec<(i32, i64)>, String> {
    sqlx::query_as("SELECT id, trigger_next_time FROM xxl_job_info WHERE job_group = ? ORDER BY id")
        .bind(GROUP_ID)
        .fetch_all(pool)
        .await
        .map_err(|e| format!("reading the bench jobs: {e}"))
}

/// The UTC DATETIME of an instant (the admin runs with `serverTimezone=UTC`).
pub fn utc_datetime(epoch_ms: i64) -> NaiveDateTime {
    chrono::DateTime::from_timestamp_millis(epoch_ms).unwrap_or_default().naive_utc()
}
