//! One data layer over MySQL/MariaDB and SQLite.
//!
//! Every statement is written once; [`on_pool!`] compiles its body for each backend, so the SQL text, the
//! bindings and the row mapping cannot drift apart. The SQL is the common subset of both dialects
//! (`?` placeholders, `LIMIT offset, count`, no server-side date arithmetic); the few places that differ
//! (the schedule lock, schema creation) say so.

mod connect;
mod glue;
mod groups;
mod jobs;
mod logs;
mod models;
mod registry;
mod reports;
mod schedule_lock;
mod schema;
mod users;

pub use connect::connect;
pub use jobs::JobFilter;
pub use logs::{HandleState, LogFilter, LogStatusFilter, TriggerInfo};
pub use registry::{Registered, RegistryKey};
pub use models::*;
pub use schedule_lock::{ScheduleLock, ScheduleUpdate, SESSION_SECRET_PREFIX};
pub use schema::SchemaOutcome;

use crate::time::Zone;
use sqlx::{MySqlPool, SqlitePool};

/// Runs `$body` with `$pool` bound to the concrete pool of whichever backend `$db` uses.
macro_rules! on_pool {
    ($db:expr, |$pool:ident| $body:expr) => {
        match &$db.pool {
            $crate::storage::Pool::MySql($pool) => $body,
            $crate::storage::Pool::Sqlite($pool) => $body,
        }
    };
}
pub(crate) use on_pool;

/// Binds a list of [`Arg`]s, in order, to a query built with a dynamic WHERE clause.
macro_rules! bind_args {
    ($query:expr, $args:expr) => {{
        let mut query = $query;
        for arg in $args {
            query = match arg {
                $crate::storage::Arg::Int(v) => query.bind(*v),
                $crate::storage::Arg::Text(v) => query.bind(v.clone()),
                $crate::storage::Arg::DateTime(v) => query.bind(*v),
                $crate::storage::Arg::OptText(v) => query.bind(v.clone()),
                $crate::storage::Arg::OptDateTime(v) => query.bind(*v),
            };
        }
        query
    }};
}
pub(crate) use bind_args;

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("cannot read the schema script: {0}")]
    Schema(String),
    #[error(
        "the database has only some of the xxl-job tables (missing: {0}); \
         create them with the xxl-job 2.4 script or point the admin at an empty database"
    )]
    PartialSchema(String),
}

pub type Result<T, E = StorageError> = std::result::Result<T, E>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    MySql,
    Sqlite,
}

#[derive(Clone)]
pub(crate) enum Pool {
    MySql(MySqlPool),
    Sqlite(SqlitePool),
}

/// The database of the admin: a connection pool plus the zone its DATETIME columns are written in.
#[derive(Clone)]
pub struct Db {
    pool: Pool,
    zone: Zone,
}

/// A value bound to a dynamically assembled statement.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Arg {
    Int(i64),
    Text(String),
    DateTime(chrono::NaiveDateTime),
    /// A nullable column's value.
    OptText(Option<String>),
    OptDateTime(Option<chrono::NaiveDateTime>),
}

impl Db {
    pub(crate) fn new(pool: Pool, zone: Zone) -> Db {
        Db { pool, zone }
    }

    pub fn backend(&self) -> Backend {
        match self.pool {
            Pool::MySql(_) => Backend::MySql,
            Pool::Sqlite(_) => Backend::Sqlite,
        }
    }

    /// The zone DATETIME columns are interpreted in.
    pub fn zone(&self) -> Zone {
        self.zone
    }

    /// The DATETIME value for an instant in this database's convention.
    pub fn datetime(&self, epoch_ms: i64) -> chrono::NaiveDateTime {
        self.zone.to_datetime(epoch_ms)
    }

    /// A cheap round trip, for the health check.
    pub async fn ping(&self) -> Result<()> {
        on_pool!(self, |p| sqlx::query("SELECT 1").execute(p).await.map(|_| ()))?;
        Ok(())
    }

    pub async fn close(&self) {
        on_pool!(self, |p| p.close().await)
    }

    /// One page of `SELECT * FROM {table}{clause} {order}` and the number of rows `clause` matches: the
    /// paging map of every console list.
    pub(crate) async fn page<T>(&self, table: &str, clause: &str, args: &[Arg], order: &str, offset: i64, limit: i64) -> Result<(Vec<T>, i64)>
    where
        T: for<'r> sqlx::FromRow<'r, sqlx::mysql::MySqlRow> + for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow> + Send + Unpin,
    {
        let rows_sql = format!("SELECT * FROM {table}{clause} {order} LIMIT ?, ?");
        let count_sql = format!("SELECT COUNT(*) FROM {table}{clause}");
        let rows = on_pool!(self, |p| bind_args!(sqlx::query_as(&rows_sql), args)
            .bind(offset)
            .bind(limit)
            .fetch_all(p)
            .await)?;
        let total = on_pool!(self, |p| bind_args!(sqlx::query_scalar(&count_sql), args).fetch_one(p).await)?;
        Ok((rows, total))
    }

    /// `{select} WHERE id IN (…)` for these ids, one statement per [`IN_LIST_MAX`] of them; rows of ids
    /// that do not exist are simply absent.
    pub(crate) async fn load_by_ids<T, I>(&self, select: &str, ids: &[I]) -> Result<Vec<T>>
    where
        T: for<'r> sqlx::FromRow<'r, sqlx::mysql::MySqlRow> + for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow> + Send + Unpin,
        I: Copy + Into<i64>,
    {
        let mut rows = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(IN_LIST_MAX) {
            let sql = format!("{select} WHERE id IN ({})", placeholders(chunk.len()));
            let args: Vec<Arg> = chunk.iter().map(|id| Arg::Int((*id).into())).collect();
            rows.extend(on_pool!(self, |p| bind_args!(sqlx::query_as(&sql), &args).fetch_all(p).await)?);
        }
        Ok(rows)
    }

    /// Runs `update`; when it matched no row, `insert`. An insert that hits the unique key means another
    /// admin created the row in between, which is as good.
    pub(crate) async fn update_or_insert(&self, update: &str, update_args: &[Arg], insert: &str, insert_args: &[Arg]) -> Result<()> {
        if self.execute(update, update_args).await? > 0 {
            return Ok(());
        }
        self.insert_once(insert, insert_args).await
    }

    /// Runs an INSERT; hitting the unique key means another admin inserted the row first, which is as good.
    pub(crate) async fn insert_once(&self, insert: &str, args: &[Arg]) -> Result<()> {
        match on_pool!(self, |p| bind_args!(sqlx::query(insert), args).execute(p).await.map(drop)) {
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Ok(()),
            other => Ok(other?),
        }
    }

    /// Runs a statement with its arguments; returns the rows matched.
    pub(crate) async fn execute(&self, sql: &str, args: &[Arg]) -> Result<u64> {
        Ok(on_pool!(self, |p| bind_args!(sqlx::query(sql), args).execute(p).await.map(|r| r.rows_affected()))?)
    }
}

/// Values per `IN (…)` list, well under both backends' placeholder limits.
pub(crate) const IN_LIST_MAX: usize = 1_000;

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

/// The generated key of an INSERT, whichever backend ran it.
pub(crate) trait InsertId {
    fn insert_id(&self) -> i64;
}

impl InsertId for sqlx::mysql::MySqlQueryResult {
    fn insert_id(&self) -> i64 {
        self.last_insert_id() as i64
    }
}

impl InsertId for sqlx::sqlite::SqliteQueryResult {
    fn insert_id(&self) -> i64 {
        self.last_insert_rowid()
    }
}
