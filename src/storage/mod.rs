//! One data layer over MySQL/MariaDB, SQLite and PostgreSQL.
//!
//! Every statement is written once and runs through the primitives of [`sql`], which render it for the
//! backend in use; the few places the backends really differ (the schedule lock, schema creation, the
//! case-insensitive LIKE, `RETURNING`) are fields of [`sql::Dialect`].

mod connect;
mod extensions;
mod failover;
mod glue;
mod groups;
mod jobs;
mod logouts;
mod logs;
mod models;
mod ownership;
mod recovery;
mod registry;
mod reports;
mod schedule_lock;
mod schema;
mod session_lock;
mod sql;
#[cfg(test)]
pub(crate) mod testing;
mod users;
mod workflow_engine;
mod workflows;

pub use connect::{connect, connect_existing};
pub use extensions::{extension_ddl, Backend, EXTENSION_TABLES};
pub use jobs::JobFilter;
pub use logouts::{logout_row, LOGOUT_PREFIX};
pub use logs::{HandleInfo, HandleState, IdSpan, LogFilter, LogStatusFilter, NewLog, TriggerInfo};
pub use models::*;
pub use ownership::{Claim, PlannedRow, Takeover};
pub use registry::{Registered, RegistryKey};
pub use schedule_lock::{ScheduleLock, ScheduleUpdate, SESSION_SECRET_PREFIX};
pub use schema::SchemaOutcome;
pub use session_lock::{SessionLock, IDLE_HOLDER_SECS};
pub use sql::ClockReading;
pub use workflow_engine::{
    ActiveRun, Admitted, Backfill, NewBackfill, NodeLogResult, NodeSend, OnLimit, RunLimits,
};
pub use workflows::{
    LastRun, NewRun, NodeAttempt, NodeChange, NodeTrigger, RunChange, RunFilter, VersionInfo, Workflow,
    WorkflowFilter, WorkflowHead, WorkflowRun, WorkflowSchedule, WorkflowVersion, ACTIVE_RUN_STATES,
};

use crate::time::Zone;
pub(crate) use sql::{Arg, Row};
use sql::{Dialect, Pool};
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// Every host of a multi-host URL answered, none in the role `targetServerType` asks for.
    #[error("no server of spring.datasource.url is usable: {0}")]
    NoServer(String),
    #[error(
        "the xxl-job tables do not have the column types this admin reads ({0}); \
         alter them to the types of migrations/postgres.sql"
    )]
    ColumnTypes(String),
    #[error(
        "the database has only some of the xxl-job tables (missing: {0}); \
         create them with the xxl-job 2.4 script or point the admin at an empty database"
    )]
    PartialSchema(String),
    /// Trigger results a callback joined were not written in time (the database is unreachable): the
    /// executor sends the callback again.
    #[error("the trigger results this callback joined were not written yet (the database is unreachable)")]
    Unwritten,
    /// A command that only reads found no xxl-job database where the configuration points (what it looked
    /// for), and created none.
    #[error(
        "{0}; nothing was created (check spring.datasource.url, or start the admin once: it creates the \
         database and the xxl-job schema)"
    )]
    NoDatabase(String),
    /// Another admin held the schema-creation lock for this many seconds without finishing.
    #[error("another admin has been creating the xxl-job schema for {0} s without finishing; is it stuck?")]
    SchemaLockTimeout(u64),
    /// The workflow tables are missing and the database account may not create them: which tables, the
    /// server's refusal, and the script to have run.
    #[error(
        "the workflow tables are missing ({missing}) and this database account may not create them \
         ({reason}); have them created with these statements (`xxl-job-admin ddl` prints them too):\n{ddl}"
    )]
    ExtensionTablesDenied { missing: String, reason: String, ddl: &'static str },
    /// Another admin held the lock for creating the workflow tables this many seconds without finishing.
    #[error("another admin has been creating the workflow tables for {0} s without finishing; is it stuck?")]
    ExtensionLockTimeout(u64),
    #[error("a workflow named {0:?} exists already")]
    WorkflowNameTaken(String),
    /// A workflow is not deleted while it has runs that are not over.
    #[error("workflow {id} has {runs} run(s) not finished (queued, running, paused or stopping); stop them before deleting it")]
    WorkflowBusy { id: i64, runs: i64 },
}

pub type Result<T, E = StorageError> = std::result::Result<T, E>;

impl StorageError {
    /// The database gave up this transaction for another one that touched the same rows: a deadlock, a
    /// serialization failure, or a Galera certification conflict (MySQL error 1213, SQLSTATE 40001 or
    /// 40P01). Another admin got there first; trying again at once reads what it wrote.
    pub fn is_conflict(&self) -> bool {
        match self {
            StorageError::Database(sqlx::Error::Database(e)) => {
                matches!(e.code().as_deref(), Some("40001" | "40P01"))
                    || e.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>()
                        .is_some_and(|e| e.number() == 1213)
            }
            _ => false,
        }
    }
}

/// The database of the admin: a connection pool, how its backend speaks, and the zone its DATETIME
/// columns are written in.
#[derive(Clone)]
pub struct Db {
    pool: Pool,
    /// Connections that only read, where they do not wait behind the writer: an SQLite file in WAL mode
    /// takes readers beside its one writer (whose pool is a single connection).
    readers: Option<Pool>,
    dialect: Dialect,
    zone: Zone,
    /// Set once the workflow tables are known to exist (see [`Db::ensure_extension_tables`]).
    extensions: Arc<tokio::sync::OnceCell<()>>,
}

impl Db {
    pub(crate) fn new(pool: Pool, readers: Option<Pool>, zone: Zone) -> Db {
        Db { dialect: Dialect::of(&pool), pool, readers, zone, extensions: Arc::default() }
    }

    /// The zone DATETIME columns are interpreted in.
    pub fn zone(&self) -> Zone {
        self.zone
    }

    /// The DATETIME value for an instant in this database's convention.
    pub fn datetime(&self, epoch_ms: i64) -> chrono::NaiveDateTime {
        self.zone.to_datetime(epoch_ms)
    }

    /// One page of `SELECT * FROM {table}{clause} {order}` and the number of rows `clause` matches: the
    /// paging map of every console list.
    pub(crate) async fn page<T: Row>(
        &self,
        table: &str,
        clause: &str,
        args: &[Arg],
        order: &str,
        offset: i64,
        limit: i64,
    ) -> Result<(Vec<T>, i64)> {
        let rows_sql = format!("SELECT * FROM {table}{clause} {order} LIMIT ? OFFSET ?");
        let count_sql = format!("SELECT COUNT(*) FROM {table}{clause}");
        let mut rows_args = args.to_vec();
        rows_args.extend([Arg::Int(limit), Arg::Int(offset)]);
        let rows = self.fetch_all(&rows_sql, &rows_args).await?;
        let total = self.scalar(&count_sql, args).await?;
        Ok((rows, total))
    }

    /// `{select} WHERE id IN (…)` for these ids, one statement per [`IN_LIST_MAX`] of them; rows of ids
    /// that do not exist are simply absent.
    pub(crate) async fn load_by_ids<T: Row, I: Copy + Into<i64>>(
        &self,
        select: &str,
        ids: &[I],
    ) -> Result<Vec<T>> {
        let mut rows = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(IN_LIST_MAX) {
            let sql = format!("{select} WHERE id IN ({})", placeholders(chunk.len()));
            let args: Vec<Arg> = chunk.iter().map(|id| Arg::Int((*id).into())).collect();
            rows.extend(self.fetch_all(&sql, &args).await?);
        }
        Ok(rows)
    }

    /// Runs `update`; when it matched no row, `insert`. An insert that hits the unique key means another
    /// admin created the row in between, which is as good.
    pub(crate) async fn update_or_insert(
        &self,
        update: &str,
        update_args: &[Arg],
        insert: &str,
        insert_args: &[Arg],
    ) -> Result<()> {
        if self.execute(update, update_args).await? > 0 {
            return Ok(());
        }
        self.insert_once(insert, insert_args).await
    }

    /// Runs an INSERT; hitting the unique key means another admin inserted the row first, which is as good.
    pub(crate) async fn insert_once(&self, insert: &str, args: &[Arg]) -> Result<()> {
        match self.execute(insert, args).await {
            Err(StorageError::Database(sqlx::Error::Database(e))) if e.is_unique_violation() => Ok(()),
            other => other.map(drop),
        }
    }

    /// `{column} LIKE ?` with the case-insensitive LIKE of this backend.
    pub(crate) fn like(&self, column: &str) -> String {
        format!(" AND {column} {} ?", self.dialect.like)
    }
}

/// Values per `IN (…)` list, well under every backend's placeholder limit.
pub(crate) const IN_LIST_MAX: usize = 1_000;

/// Rows are written by one id list per set of equal values when there are at least this many rows per
/// set: an UPDATE of a 200-row derived table costs MariaDB about 15 µs a row in planning alone.
const ALIKE_FACTOR: usize = 4;

/// The ids of `rows` (values to write, id) grouped by their values, or `None` once more than one row in
/// [`ALIKE_FACTOR`] differs (then each row takes its own values from a derived table).
pub(crate) fn group_alike<K: std::hash::Hash + Eq>(
    rows: impl ExactSizeIterator<Item = (K, i64)>,
) -> Option<HashMap<K, Vec<i64>>> {
    let total = rows.len();
    let mut alike: HashMap<K, Vec<i64>> = HashMap::new();
    for (values, id) in rows {
        alike.entry(values).or_default().push(id);
        if alike.len() * ALIKE_FACTOR > total {
            return None;
        }
    }
    Some(alike)
}

/// `?, ?, ?` for an `IN (…)` list of `n` values.
pub(crate) fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}

/// Limits a query to `job_group IN (groups)` when a restriction is given (none matches an empty list).
pub(crate) fn restrict_groups(sql: &mut String, args: &mut Vec<Arg>, groups: Option<&[i32]>) {
    let Some(groups) = groups else { return };
    if groups.is_empty() {
        sql.push_str(" AND 1 = 0");
    } else {
        sql.push_str(&format!(" AND job_group IN ({})", placeholders(groups.len())));
        args.extend(groups.iter().map(|g| Arg::Int((*g).into())));
    }
}

/// `%value%` for a "contains" filter; only applied to non-empty values, as the Java admin does.
pub(crate) fn contains(value: &Option<String>) -> Option<String> {
    value.as_deref().filter(|v| !v.is_empty()).map(|v| format!("%{v}%"))
}
