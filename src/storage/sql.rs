//! The one way statements reach the database, and the one place the three backends differ.
//!
//! Every statement of the storage layer is SQL text plus a list of [`Arg`]s, run by one of the primitives
//! below; only this file matches on the backend. The SQL is written once, in the common subset of
//! MySQL/MariaDB, SQLite and PostgreSQL: `?` placeholders (numbered `$1…` here for PostgreSQL),
//! `LIMIT ? OFFSET ?`, no server-side date arithmetic. What cannot be common is a field of [`Dialect`].

use super::{Db, Result, StorageError};
use sqlx::mysql::MySqlRow;
use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use sqlx::{FromRow, MySql, MySqlPool, PgPool, Postgres, Sqlite, SqlitePool, Transaction};
use std::borrow::Cow;

#[derive(Clone)]
pub(crate) enum Pool {
    MySql(MySqlPool),
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// An open transaction (the schedule lock's).
pub(crate) enum Tx {
    MySql(Transaction<'static, MySql>),
    Sqlite(Transaction<'static, Sqlite>),
    Postgres(Transaction<'static, Postgres>),
}

/// Where a statement runs: any pooled connection, or inside a transaction.
pub(crate) enum On<'a> {
    Pool(&'a Pool),
    Tx(&'a mut Tx),
}

impl On<'_> {
    /// The same place for one more statement.
    pub(crate) fn reborrow(&mut self) -> On<'_> {
        match self {
            On::Pool(pool) => On::Pool(pool),
            On::Tx(tx) => On::Tx(tx),
        }
    }
}

/// Runs `$body` with `$e` bound to the concrete executor of whichever backend `$on` is.
macro_rules! on {
    ($on:expr, |$e:ident| $body:expr) => {
        match $on {
            On::Pool(Pool::MySql($e)) => $body,
            On::Pool(Pool::Sqlite($e)) => $body,
            On::Pool(Pool::Postgres($e)) => $body,
            On::Tx(Tx::MySql(tx)) => {
                let $e = &mut **tx;
                $body
            }
            On::Tx(Tx::Sqlite(tx)) => {
                let $e = &mut **tx;
                $body
            }
            On::Tx(Tx::Postgres(tx)) => {
                let $e = &mut **tx;
                $body
            }
        }
    };
}

/// Binds a list of [`Arg`]s, in order.
macro_rules! bind_args {
    ($query:expr, $args:expr) => {{
        let mut query = $query;
        for arg in $args {
            query = match arg {
                Arg::Int(v) => query.bind(*v),
                Arg::Text(v) => query.bind(v.as_str()),
                Arg::DateTime(v) => query.bind(*v),
                Arg::OptText(v) => query.bind(v.as_deref()),
                Arg::OptInt(v) => query.bind(*v),
                Arg::OptDateTime(v) => query.bind(*v),
            };
        }
        query
    }};
}

/// A value bound to a statement. Integers are all bound as 64-bit: every backend narrows them on
/// assignment and compares across widths, and PostgreSQL has no one-byte integer to bind an `i8` as.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Arg {
    Int(i64),
    Text(String),
    DateTime(chrono::NaiveDateTime),
    /// A nullable column's value.
    OptText(Option<String>),
    OptInt(Option<i64>),
    OptDateTime(Option<chrono::NaiveDateTime>),
}

/// A row type every backend can decode: the one bound the generic queries need, named once.
pub(crate) trait Row:
    for<'r> FromRow<'r, MySqlRow> + for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow> + Send + Unpin
{
}

impl<T> Row for T where
    T: for<'r> FromRow<'r, MySqlRow>
        + for<'r> FromRow<'r, SqliteRow>
        + for<'r> FromRow<'r, PgRow>
        + Send
        + Unpin
{
}

/// What differs between the backends, fixed when the pool is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dialect {
    /// Placeholders are `$1, $2, …` instead of `?`.
    numbered: bool,
    /// How the schedule lock's transaction starts.
    pub begin: &'static str,
    /// The row lock taken inside it; `None` when starting the transaction already excludes other writers.
    pub lock_row: Option<&'static str>,
    /// The schema script for an empty database.
    pub ddl: &'static str,
    /// The script of the workflow tables (`xxl_job_ext_*`), idempotent.
    pub ext_ddl: &'static str,
    /// What ends a SELECT that locks the rows it reads until the transaction ends; empty where starting the
    /// transaction already excludes other writers (SQLite).
    pub for_update: &'static str,
    /// One text column: the names of the tables of the current database/schema.
    pub tables: &'static str,
    /// Three text columns: table, column and type of every column of the current schema, where the
    /// driver decodes only the exact column types (PostgreSQL); `None` where any integer or text type
    /// decodes as any other.
    pub columns: Option<&'static str>,
    /// Whether `INSERT … RETURNING` works; probed at start for MySQL-protocol servers.
    pub returning: bool,
    /// The case-insensitive LIKE, as MySQL's default collations compare.
    pub like: &'static str,
    /// The type name that makes `CAST(x AS …)` a 64-bit integer.
    pub bigint: &'static str,
    /// How an UPDATE joins the table of per-row values it takes its values from.
    pub update_join: UpdateJoin,
    /// A MariaDB Galera node (`wsrep_on`), probed at start: row locks hold on one node only, so the schedule
    /// lock also writes its row (see [`super::ScheduleLock`]) and session locks say nothing about admins on
    /// other nodes.
    pub galera: bool,
}

/// One reading of the database server's clock (epoch microseconds) and when it was asked for here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockReading {
    /// This process's clock just before the query was sent.
    pub sent_us: i64,
    /// From the query's send to its answer, on the monotonic clock.
    pub round_trip_us: i64,
    pub server_us: i64,
}

/// The two spellings of an UPDATE that reads another table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UpdateJoin {
    /// MySQL/MariaDB: `UPDATE t JOIN (…) v ON t.id = v.id SET …`.
    Join,
    /// PostgreSQL and SQLite (3.33+): `UPDATE t SET … FROM (…) v WHERE t.id = v.id`.
    From,
}

/// An UPDATE of many rows, each with values of its own, taken from a derived table `v(id, c0, c1, …)`
/// joined on the key: one key lookup per row, where `CASE id WHEN …` lists made the database compare
/// every row with every id (their cost grew with the square of the batch).
pub(crate) struct RowsUpdate<'a> {
    pub table: &'static str,
    /// The assignments; `v.c0`, `v.c1`, … are a row's own values.
    pub sets: &'a [String],
    /// The arguments of `sets`, in order.
    pub set_args: Vec<Arg>,
    /// Each row's id and values (`c0`, `c1`, …); at most [`RowsUpdate::MAX_ROWS`].
    pub rows: Vec<(i64, Vec<Arg>)>,
    /// More conditions on the row, without arguments (`v.cN` allowed); empty for none.
    pub condition: &'a str,
}

impl RowsUpdate<'_> {
    /// SQLite allows 500 terms in a compound SELECT.
    pub const MAX_ROWS: usize = 200;

    /// The statement and its arguments as `dialect` spells them.
    pub fn build(self, dialect: &Dialect) -> (String, Vec<Arg>) {
        let width = self.rows.first().map_or(0, |(_, values)| values.len());
        // The key is cast so that it compares as the primary key's type and the join uses the key.
        let first = std::iter::once(format!("CAST(? AS {}) AS id", dialect.bigint))
            .chain((0..width).map(|k| format!("? AS c{k}")))
            .collect::<Vec<_>>()
            .join(", ");
        let other = format!("SELECT {}", vec!["?"; width + 1].join(", "));
        let derived = std::iter::once(format!("SELECT {first}"))
            .chain(std::iter::repeat_n(other, self.rows.len().saturating_sub(1)))
            .collect::<Vec<_>>()
            .join(" UNION ALL ");
        let values =
            self.rows.into_iter().flat_map(|(id, values)| std::iter::once(Arg::Int(id)).chain(values));
        let (table, sets) = (self.table, self.sets.join(", "));
        let condition =
            if self.condition.is_empty() { String::new() } else { format!(" AND {}", self.condition) };
        match dialect.update_join {
            UpdateJoin::Join => (
                format!("UPDATE {table} JOIN ({derived}) v ON {table}.id = v.id SET {sets} WHERE 1 = 1{condition}"),
                values.chain(self.set_args).collect(),
            ),
            UpdateJoin::From => (
                format!("UPDATE {table} SET {sets} FROM ({derived}) v WHERE {table}.id = v.id{condition}"),
                self.set_args.into_iter().chain(values).collect(),
            ),
        }
    }
}

/// The schedule lock row, the very lock the Java admin takes (2.4.2: JobScheduleHelper).
const LOCK_ROW: &str = "SELECT * FROM xxl_job_lock WHERE lock_name = 'schedule_lock' FOR UPDATE";

impl Dialect {
    pub(super) const MYSQL: Dialect = Dialect {
        numbered: false,
        begin: "BEGIN",
        lock_row: Some(LOCK_ROW),
        ddl: include_str!("../../migrations/mysql.sql"),
        ext_ddl: include_str!("../../migrations/ext/mysql.sql"),
        for_update: " FOR UPDATE",
        // CAST: MySQL 8 reports information_schema names as binary strings.
        tables:
            "SELECT CAST(table_name AS CHAR) FROM information_schema.tables WHERE table_schema = DATABASE()",
        columns: None,
        // MariaDB ≥ 10.5 accepts it, MySQL does not: see [`Db::probe_returning`].
        returning: false,
        like: "LIKE",
        bigint: "SIGNED",
        update_join: UpdateJoin::Join,
        galera: false,
    };

    pub(super) const SQLITE: Dialect = Dialect {
        numbered: false,
        // Excludes every other writer process for the whole transaction.
        begin: "BEGIN IMMEDIATE",
        lock_row: None,
        ddl: include_str!("../../migrations/sqlite.sql"),
        ext_ddl: include_str!("../../migrations/ext/sqlite.sql"),
        for_update: "",
        tables: "SELECT name FROM sqlite_master WHERE type = 'table'",
        columns: None,
        returning: true,
        // ASCII-case-insensitive already.
        like: "LIKE",
        bigint: "INTEGER",
        update_join: UpdateJoin::From,
        galera: false,
    };

    pub(super) const POSTGRES: Dialect = Dialect {
        numbered: true,
        begin: "BEGIN",
        lock_row: Some(LOCK_ROW),
        ddl: include_str!("../../migrations/postgres.sql"),
        ext_ddl: include_str!("../../migrations/ext/postgres.sql"),
        for_update: " FOR UPDATE",
        tables: "SELECT CAST(table_name AS TEXT) FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
        columns: Some(
            "SELECT CAST(table_name AS TEXT), CAST(column_name AS TEXT), CAST(data_type AS TEXT) \
             FROM information_schema.columns WHERE table_schema = current_schema()",
        ),
        returning: true,
        like: "ILIKE",
        bigint: "BIGINT",
        update_join: UpdateJoin::From,
        galera: false,
    };

    pub(crate) fn of(pool: &Pool) -> Dialect {
        match pool {
            Pool::MySql(_) => Dialect::MYSQL,
            Pool::Sqlite(_) => Dialect::SQLITE,
            Pool::Postgres(_) => Dialect::POSTGRES,
        }
    }

    /// The statement as this backend spells it.
    fn render<'s>(&self, sql: &'s str) -> Cow<'s, str> {
        if self.numbered {
            Cow::Owned(number_placeholders(sql))
        } else {
            Cow::Borrowed(sql)
        }
    }
}

/// `?` → `$1, $2, …` in order; a `?` inside a quoted literal or identifier is text and stays.
fn number_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    let mut quote = None;
    for c in sql.chars() {
        match (quote, c) {
            // A doubled quote inside a literal closes and reopens it, which comes out the same.
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '?') => {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
                continue;
            }
            (None, _) => {}
        }
        out.push(c);
    }
    out
}

/// Runs a statement; returns the rows it matched.
pub(crate) async fn execute(on: On<'_>, dialect: &Dialect, sql: &str, args: &[Arg]) -> Result<u64> {
    let sql = dialect.render(sql);
    Ok(on!(on, |e| bind_args!(sqlx::query(&sql), args).execute(e).await.map(|r| r.rows_affected()))?)
}

pub(crate) async fn fetch_all<T: Row>(
    on: On<'_>,
    dialect: &Dialect,
    sql: &str,
    args: &[Arg],
) -> Result<Vec<T>> {
    let sql = dialect.render(sql);
    Ok(on!(on, |e| bind_args!(sqlx::query_as(&sql), args).fetch_all(e).await)?)
}

pub(crate) async fn fetch_optional<T: Row>(
    on: On<'_>,
    dialect: &Dialect,
    sql: &str,
    args: &[Arg],
) -> Result<Option<T>> {
    let sql = dialect.render(sql);
    Ok(on!(on, |e| bind_args!(sqlx::query_as(&sql), args).fetch_optional(e).await)?)
}

/// A query of one 64-bit integer (a `COUNT(*)`).
pub(crate) async fn scalar(on: On<'_>, dialect: &Dialect, sql: &str, args: &[Arg]) -> Result<i64> {
    let sql = dialect.render(sql);
    Ok(on!(on, |e| bind_args!(sqlx::query_scalar(&sql), args).fetch_one(e).await)?)
}

/// Opens a transaction the way the dialect starts the schedule lock's.
pub(crate) async fn begin(pool: &Pool, dialect: &Dialect) -> Result<Tx> {
    Ok(match pool {
        Pool::MySql(p) => Tx::MySql(p.begin_with(dialect.begin).await?),
        Pool::Sqlite(p) => Tx::Sqlite(p.begin_with(dialect.begin).await?),
        Pool::Postgres(p) => Tx::Postgres(p.begin_with(dialect.begin).await?),
    })
}

pub(crate) async fn commit(tx: Tx) -> Result<()> {
    match tx {
        Tx::MySql(tx) => tx.commit().await?,
        Tx::Sqlite(tx) => tx.commit().await?,
        Tx::Postgres(tx) => tx.commit().await?,
    }
    Ok(())
}

/// Runs an INSERT of `rows` rows into a table with an `id` key; returns the generated ids, ascending
/// (the rows of one statement get increasing ids in the order of the VALUES list).
///
/// The ids come from `RETURNING`. A server without it (MySQL) reports the first id; a "simple insert"
/// gets consecutive ids in every `innodb_autoinc_lock_mode`, stepping by `auto_increment_increment`.
pub(crate) async fn insert_ids(
    on: On<'_>,
    dialect: &Dialect,
    insert: &str,
    args: &[Arg],
    rows: usize,
) -> Result<Vec<i64>> {
    let mut ids: Vec<i64> = match on {
        On::Pool(Pool::MySql(p)) if !dialect.returning => {
            mysql_insert_ids(&mut *p.acquire().await?, insert, args, rows).await?
        }
        On::Tx(Tx::MySql(tx)) if !dialect.returning => mysql_insert_ids(tx, insert, args, rows).await?,
        on => {
            let returning = format!("{insert} RETURNING CAST(id AS {})", dialect.bigint);
            let sql = dialect.render(&returning);
            on!(on, |e| bind_args!(sqlx::query_scalar(&sql), args).fetch_all(e).await)?
        }
    };
    if ids.len() != rows {
        return Err(StorageError::Database(sqlx::Error::Protocol(format!(
            "inserted {rows} rows but got {} ids",
            ids.len()
        ))));
    }
    ids.sort_unstable();
    Ok(ids)
}

/// The MySQL path without RETURNING: the INSERT and the increment are read on one connection, the one
/// whose session counts.
async fn mysql_insert_ids(
    conn: &mut sqlx::MySqlConnection,
    insert: &str,
    args: &[Arg],
    rows: usize,
) -> Result<Vec<i64>> {
    let result = bind_args!(sqlx::query(insert), args).execute(&mut *conn).await?;
    let step: i64 =
        sqlx::query_scalar("SELECT CAST(@@auto_increment_increment AS SIGNED)").fetch_one(&mut *conn).await?;
    let first = result.last_insert_id() as i64;
    Ok((0..rows as i64).map(|k| first + k * step.max(1)).collect())
}

/// MySQL's "syntax error" number, what MySQL answers to `RETURNING`.
const ER_PARSE_ERROR: u16 = 1064;

impl Db {
    pub(crate) async fn execute(&self, sql: &str, args: &[Arg]) -> Result<u64> {
        execute(On::Pool(&self.pool), &self.dialect, sql, args).await
    }

    pub(crate) async fn fetch_all<T: Row>(&self, sql: &str, args: &[Arg]) -> Result<Vec<T>> {
        fetch_all(On::Pool(self.reading()), &self.dialect, sql, args).await
    }

    pub(crate) async fn fetch_optional<T: Row>(&self, sql: &str, args: &[Arg]) -> Result<Option<T>> {
        fetch_optional(On::Pool(self.reading()), &self.dialect, sql, args).await
    }

    pub(crate) async fn scalar(&self, sql: &str, args: &[Arg]) -> Result<i64> {
        scalar(On::Pool(self.reading()), &self.dialect, sql, args).await
    }

    /// Where a query that only reads goes.
    fn reading(&self) -> &Pool {
        self.readers.as_ref().unwrap_or(&self.pool)
    }

    /// Runs a one-row INSERT into a table with an `id` key; returns the generated id.
    pub(crate) async fn insert_id(&self, insert: &str, args: &[Arg]) -> Result<i64> {
        Ok(self.insert_ids(insert, args, 1).await?[0])
    }

    /// Runs an INSERT of `rows` rows into a table with an `id` key; see [`insert_ids`].
    pub(crate) async fn insert_ids(&self, insert: &str, args: &[Arg], rows: usize) -> Result<Vec<i64>> {
        insert_ids(On::Pool(&self.pool), &self.dialect, insert, args, rows).await
    }

    /// Finds out whether a MySQL-protocol server takes `INSERT … RETURNING` (MariaDB ≥ 10.5), with an
    /// INSERT of no rows; other backends' answer is fixed.
    pub(crate) async fn probe_returning(&mut self) -> Result<()> {
        let Pool::MySql(pool) = &self.pool else { return Ok(()) };
        let probe = "INSERT INTO xxl_job_lock (lock_name) SELECT lock_name FROM xxl_job_lock WHERE 1 = 0 RETURNING lock_name";
        self.dialect.returning = match sqlx::query(probe).execute(pool).await {
            Ok(_) => true,
            Err(sqlx::Error::Database(e))
                if e.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>()
                    .is_some_and(|e| e.number() == ER_PARSE_ERROR) =>
            {
                false
            }
            Err(e) => return Err(e.into()),
        };
        Ok(())
    }

    /// Finds out whether a MySQL-protocol server is a Galera node with replication on (`@@wsrep_on`, which
    /// servers without Galera support do not know).
    pub(crate) async fn probe_galera(&mut self) -> Result<()> {
        let Pool::MySql(pool) = &self.pool else { return Ok(()) };
        let on: std::result::Result<i64, _> =
            sqlx::query_scalar("SELECT CAST(@@wsrep_on AS SIGNED)").fetch_one(pool).await;
        self.dialect.galera = on.is_ok_and(|on| on == 1);
        if self.dialect.galera {
            tracing::info!("the database is a Galera node: schedule passes write their lock row, so certification orders them");
        }
        Ok(())
    }

    /// The pool's connections: (in use, idle, maximum).
    pub fn pool_stats(&self) -> (u32, u32, u32) {
        fn stats<DB: sqlx::Database>(p: &sqlx::Pool<DB>) -> (u32, u32, u32) {
            let idle = u32::try_from(p.num_idle()).unwrap_or(u32::MAX);
            (p.size().saturating_sub(idle), idle, p.options().get_max_connections())
        }
        match &self.pool {
            Pool::MySql(p) => stats(p),
            Pool::Sqlite(p) => stats(p),
            Pool::Postgres(p) => stats(p),
        }
    }

    /// A cheap round trip, for the health check.
    pub async fn ping(&self) -> Result<()> {
        self.execute("SELECT 1", &[]).await.map(drop)
    }

    /// `count` readings of the database server's clock, read without a time zone in between, on one
    /// connection taken first: a connection's own set-up or ping (round trips before the query's) must
    /// not count in a reading's round trip. Empty on SQLite, whose clock is this process's own.
    pub async fn server_clock_readings(&self, count: usize) -> Result<Vec<ClockReading>> {
        // Futures start when awaited: the timing covers the query alone.
        async fn timed(
            query: impl std::future::Future<Output = std::result::Result<i64, sqlx::Error>>,
        ) -> Result<ClockReading> {
            let sent_us = chrono::Utc::now().timestamp_micros();
            let started = std::time::Instant::now();
            let server_us = query.await?;
            let round_trip_us = started.elapsed().as_micros().min(i64::MAX as u128) as i64;
            Ok(ClockReading { sent_us, round_trip_us, server_us })
        }
        let mut readings = Vec::with_capacity(count);
        match &self.pool {
            Pool::MySql(pool) => {
                let mut conn = pool.acquire().await?;
                for _ in 0..count {
                    let sql = "SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))";
                    readings.push(timed(sqlx::query_scalar(sql).fetch_one(&mut *conn)).await?);
                }
            }
            Pool::Postgres(pool) => {
                let mut conn = pool.acquire().await?;
                for _ in 0..count {
                    let sql = "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)";
                    readings.push(timed(sqlx::query_scalar(sql).fetch_one(&mut *conn)).await?);
                }
            }
            Pool::Sqlite(_) => {}
        }
        Ok(readings)
    }

    /// Closes the pools, once every statement has finished; an SQLite file's writer last, so that SQLite
    /// copies its write-ahead log into the file when no other process has it open (a read-only connection
    /// closing last leaves the log as it is).
    pub async fn close(&self) {
        self.close_with(false).await
    }

    /// [`Db::close`] at the server's stop: before the writer closes, an SQLite file's write-ahead log is
    /// copied into the file and emptied even while other processes have the file open, so that the `.db`
    /// file alone holds the whole database (a young database has every page in the log).
    pub async fn close_checkpointed(&self) {
        self.close_with(true).await
    }

    async fn close_with(&self, checkpointed: bool) {
        for pool in self.readers.iter().chain(std::iter::once(&self.pool)) {
            match pool {
                Pool::MySql(p) => p.close().await,
                Pool::Sqlite(p) => {
                    // The writer, last: only a file database has readers.
                    if checkpointed && self.readers.is_some() && std::ptr::eq(pool, &self.pool) {
                        checkpoint(p).await;
                    }
                    p.close().await
                }
                Pool::Postgres(p) => p.close().await,
            }
        }
    }

    /// Writes a consistent copy of an SQLite file database into `file`, which must not exist, while other
    /// processes read and write it (SQLite's `VACUUM INTO`): one file, without a write-ahead log. `None` for
    /// a server database (its own tools back it up) and an in-memory one.
    pub async fn copy_sqlite_into(&self, file: &std::path::Path) -> Option<Result<()>> {
        let (Pool::Sqlite(writer), Some(_)) = (&self.pool, &self.readers) else { return None };
        let file = file.to_string_lossy().into_owned();
        Some(sqlx::query("VACUUM INTO ?").bind(file).execute(writer).await.map(drop).map_err(Into::into))
    }
}

/// Copies an SQLite file's write-ahead log into the file and truncates the log. Another process reading
/// the file (a backup, the sqlite3 shell) keeps part of the log alive: that is logged, as the log's file then
/// has to be copied with the database.
async fn checkpoint(writer: &SqlitePool) {
    let done: std::result::Result<(i64, i64, i64), _> =
        sqlx::query_as("PRAGMA wal_checkpoint(TRUNCATE)").fetch_one(writer).await;
    match done {
        Ok((0, _, _)) => tracing::debug!("SQLite: the write-ahead log is copied into the database file"),
        Ok(_) => tracing::warn!(
            "SQLite: another process is reading the database, so the write-ahead log could not be emptied: \
             copy its -wal file together with the .db file"
        ),
        Err(e) => {
            tracing::warn!("SQLite: the write-ahead log could not be copied into the database file: {e}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_outside_quotes_only() {
        assert_eq!(
            number_placeholders("SELECT * FROM t WHERE a = ? AND b IN (?, ?)"),
            "SELECT * FROM t WHERE a = $1 AND b IN ($2, $3)"
        );
        assert_eq!(
            number_placeholders("SELECT '?', \"a?\" FROM t WHERE a = ?"),
            "SELECT '?', \"a?\" FROM t WHERE a = $1"
        );
        assert_eq!(
            number_placeholders("SELECT 'it''s ?' WHERE x = ? LIMIT ? OFFSET ?"),
            "SELECT 'it''s ?' WHERE x = $1 LIMIT $2 OFFSET $3"
        );
        assert_eq!(number_placeholders("SELECT 1"), "SELECT 1");
        assert_eq!(Dialect::MYSQL.render("a = ?"), "a = ?");
        assert_eq!(Dialect::POSTGRES.render("a = ?"), "a = $1");
    }
}
