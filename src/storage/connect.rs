//! Opening the pool for the configured datasource and preparing the schema.

use super::failover::{self, LastMove, MultiHost, PG_INVALID_CATALOG_NAME, PG_MAINTENANCE_DB};
use super::{schema, Db, Pool, Result, SchemaOutcome, StorageError, IDLE_HOLDER_SECS};
use crate::config::{DataSourceConfig, DbTarget, PoolConfig, Servers, SqlitePath, SslMode};
use crate::time::Zone;
use sqlx::mysql::{MySqlConnectOptions, MySqlSslMode};
use sqlx::pool::PoolOptions;
use sqlx::postgres::{PgConnectOptions, PgSslMode};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{ConnectOptions, MySql, Postgres};
use std::time::Duration;

/// How long start-up keeps retrying a database that is not reachable yet (a container starting beside us).
const STARTUP_RETRY: Duration = Duration::from_secs(30);

/// One connection writes to an embedded database: SQLite runs one writer at a time, and writers
/// contending for its lock sleep in its busy handler (up to 100 ms a try) where the pool's queue costs no
/// sleep.
const SQLITE_CONNECTIONS: u32 = 1;
/// Connections that only read a file database, beside the writer (WAL mode lets them): a read never waits
/// behind a long write (a schedule pass writes thousands of rows in one transaction).
const SQLITE_READERS: u32 = 2;
/// Prepared statements kept per SQLite connection. The batched statements have a text per batch size
/// (and IN lists one per length), each a large program: sqlx's default of 100 kept dozens alive for
/// little gain.
const SQLITE_STATEMENT_CACHE: usize = 12;
/// SQLite's page cache per connection, in KiB when negative: the writer's (SQLite's default), and each
/// reader's. The file's pages stay in the kernel's cache, so a miss costs a read call, not the disk: at
/// 10,000 fires a second, halving them (from 4 and 1 MiB, with 24 statements kept) took SQLite's heap
/// from 13–14 to 8–9 MB at the peak and its CPU did not move beyond the runs' spread.
const SQLITE_PAGE_CACHE: &str = "-2048";
const SQLITE_READER_PAGE_CACHE: &str = "-512";

/// Pooled server connections idle at least this long are pinged before use.
const PING_WHEN_IDLE: Duration = Duration::from_secs(1);

/// MySQL's "unknown database" error code.
const ER_BAD_DB_ERROR: u16 = 1049;

/// PostgreSQL's SQLSTATE for "database already exists".
const PG_DUPLICATE_DATABASE: &str = "42P04";
/// PostgreSQL's "unique_violation": what `CREATE DATABASE` answers when a concurrent one of the same name
/// commits while it runs (the catalogue's unique index, not the existence check, catches it).
const PG_UNIQUE_VIOLATION: &str = "23505";
/// PostgreSQL's setting that ends a session whose transaction has been idle this long.
const IDLE_IN_TRANSACTION: &str = "idle_in_transaction_session_timeout";

/// The user when none is configured: the superuser every cluster starts with (MySQL's is `root`).
const PG_DEFAULT_USER: &str = "postgres";

/// Slow statements are logged at WARN from this duration on.
const SLOW_STATEMENT: Duration = Duration::from_secs(2);

/// What opening the database does when there is none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Missing {
    /// Creates the database (MySQL, PostgreSQL) or file (SQLite), and the schema in an empty one: the server.
    Create,
    /// Refuses, naming what it looked for, and creates nothing: the commands that only read.
    Refuse,
}

/// Connects, creating the database (MySQL, PostgreSQL) or file (SQLite) when missing, and the schema
/// when empty.
pub async fn connect(ds: &DataSourceConfig) -> Result<(Db, SchemaOutcome)> {
    connect_as(ds, Missing::Create).await
}

/// Connects to a database that already holds the xxl-job tables; when there is none (no file, no database,
/// or none of the tables) refuses with [`StorageError::NoDatabase`], having created nothing.
pub async fn connect_existing(ds: &DataSourceConfig) -> Result<Db> {
    connect_as(ds, Missing::Refuse).await.map(|(db, _)| db)
}

async fn connect_as(ds: &DataSourceConfig, missing: Missing) -> Result<(Db, SchemaOutcome)> {
    let zone = Zone::from_option(ds.time_zone);
    let last_move = LastMove::default();
    let (pool, readers) = match &ds.target {
        DbTarget::MySql { servers, .. } => {
            let (pool, current) = with_startup_retry(|| connect_mysql(ds, &last_move, missing)).await?;
            watch_hosts(&pool, servers, current, last_move);
            (Pool::MySql(pool), None)
        }
        DbTarget::Sqlite { path } => {
            let (writer, readers) = connect_sqlite(path, ds, missing).await?;
            (Pool::Sqlite(writer), readers.map(Pool::Sqlite))
        }
        DbTarget::Postgres { servers, .. } => {
            let (pool, current) = with_startup_retry(|| connect_postgres(ds, &last_move, missing)).await?;
            watch_hosts(&pool, servers, current, last_move);
            (Pool::Postgres(pool), None)
        }
    };
    let mut db = Db::new(pool, readers, zone);
    if missing == Missing::Refuse && schema::existing_tables(&db).await?.is_empty() {
        db.close().await;
        return Err(StorageError::NoDatabase(format!("{} has none of the xxl-job tables", described(ds))));
    }
    // Before the schema: whether session locks can guard its creation depends on it.
    db.probe_galera().await?;
    let outcome = schema::ensure(&db).await?;
    db.probe_returning().await?;
    Ok((db, outcome))
}

async fn with_startup_retry<T, F, Fut>(mut attempt: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let deadline = tokio::time::Instant::now() + STARTUP_RETRY;
    loop {
        match attempt().await {
            Err(StorageError::NoServer(reason)) if tokio::time::Instant::now() < deadline => {
                tracing::warn!("no usable database server yet ({reason}); retrying");
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
            Err(StorageError::Database(e)) if is_transient(&e) && tokio::time::Instant::now() < deadline => {
                tracing::warn!("database not reachable yet ({e}); retrying");
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
            other => return other,
        }
    }
}

fn is_transient(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut)
}

/// `options` pointed at the server to start on, and its index in `servers`: the first that answers (in the
/// role asked for) of a multi-host URL.
async fn starting_server<DB: MultiHost>(
    options: <DB::Connection as sqlx::Connection>::Options,
    servers: &Servers,
) -> Result<(<DB::Connection as sqlx::Connection>::Options, usize)> {
    if !failover::is_needed(servers) {
        return Ok((options, 0));
    }
    let (index, _) = failover::choose::<DB>(&options, servers, 0..servers.hosts.len()).await?;
    if index > 0 {
        tracing::warn!(host = %servers.hosts[index], "database: starting on a later server of spring.datasource.url");
    }
    Ok((DB::at(&options, &servers.hosts[index]), index))
}

/// Keeps a multi-host URL's pool on a working server.
fn watch_hosts<DB: MultiHost>(pool: &sqlx::Pool<DB>, servers: &Servers, current: usize, last_move: LastMove) {
    if failover::is_needed(servers) {
        failover::watch(pool.clone(), servers.clone(), current, last_move);
    }
}

fn mysql_options(ds: &DataSourceConfig) -> MySqlConnectOptions {
    let DbTarget::MySql { servers, ssl_mode, .. } = &ds.target else {
        unreachable!("mysql_options is only called for MySQL targets")
    };
    let mut options = MySqlConnectOptions::new()
        .host(&servers.first().host)
        .port(servers.first().port)
        .username(ds.username.as_deref().unwrap_or("root"))
        .charset("utf8mb4")
        // DATETIME columns carry wall-clock values we convert ourselves; leave the session zone alone.
        .timezone(None)
        .ssl_mode(match ssl_mode {
            SslMode::Disabled => MySqlSslMode::Disabled,
            SslMode::Preferred => MySqlSslMode::Preferred,
            SslMode::Required => MySqlSslMode::Required,
            SslMode::VerifyCa => MySqlSslMode::VerifyCa,
            SslMode::VerifyIdentity => MySqlSslMode::VerifyIdentity,
        })
        .log_slow_statements(tracing::log::LevelFilter::Warn, SLOW_STATEMENT);
    if let Some(password) = &ds.password {
        options = options.password(password.expose());
    }
    options
}

/// The pool, and the index of its server in the URL's hosts.
async fn connect_mysql(
    ds: &DataSourceConfig,
    last_move: &LastMove,
    missing: Missing,
) -> Result<(sqlx::MySqlPool, usize)> {
    let DbTarget::MySql { database, servers, .. } = &ds.target else { unreachable!() };
    let (server, current) = starting_server::<MySql>(mysql_options(ds), servers).await?;
    let options = server.clone().database(database);
    // Open one connection first so a missing database is created before the pool starts filling.
    match options.connect().await {
        Ok(conn) => drop(conn),
        Err(sqlx::Error::Database(e))
            if e.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>()
                .is_some_and(|e| e.number() == ER_BAD_DB_ERROR) =>
        {
            if missing == Missing::Refuse {
                return Err(StorageError::NoDatabase(format!("{} does not exist", described(ds))));
            }
            create_mysql_database(server, database).await?;
        }
        Err(e) => return Err(e.into()),
    }
    let pool = server_pool::<MySql>(&ds.pool, last_move)
        // Connector/J (jdbcCompliantTruncation, on by default) adds STRICT_TRANS_TABLES to every session of
        // the Java admin, so an over-long value is an error there, never silently cut; the same here, on
        // servers whose default mode is not strict.
        .after_connect(|conn, _| {
            Box::pin(async move {
                use sqlx::Executor;
                conn.execute("SET SESSION sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'STRICT_TRANS_TABLES')")
                    .await?;
                // MariaDB ends a transaction left idle (its admin frozen or cut off mid-pass), which would
                // otherwise hold the schedule lock from the standbys until the admin wakes. MySQL has no
                // such setting (it answers "unknown system variable"), and keeps the lock until then.
                let idle = format!("SET SESSION idle_transaction_timeout = {IDLE_HOLDER_SECS}");
                if let Err(e) = conn.execute(idle.as_str()).await {
                    tracing::debug!("idle_transaction_timeout not set: {e}");
                }
                Ok(())
            })
        })
        .connect_with(options)
        .await?;
    Ok((pool, current))
}

/// The pool settings of a database server (`spring.datasource.hikari.*`).
/// Connections opened before the pool last moved to another server are dropped instead of used.
fn server_pool<DB: sqlx::Database>(pool: &PoolConfig, last_move: &LastMove) -> PoolOptions<DB> {
    let last_move = last_move.clone();
    PoolOptions::new()
        .max_connections(pool.max_size)
        .min_connections(pool.min_idle.min(pool.max_size))
        .acquire_timeout(Duration::from_millis(pool.connection_timeout_ms))
        .idle_timeout(pool.idle_timeout_ms.map(Duration::from_millis))
        .max_lifetime(pool.max_lifetime_ms.map(Duration::from_millis))
        // A connection that died while idle (server restart) is replaced instead of failing a request.
        // Only connections idle for a while are pinged: under load a ping per statement would double
        // the round trips, and a connection used a moment ago is known to be alive.
        .test_before_acquire(false)
        .before_acquire(move |conn: &mut DB::Connection, meta| {
            let moved_since = last_move.predates(meta.age);
            Box::pin(async move {
                if moved_since {
                    return Ok(false);
                }
                if meta.idle_for >= PING_WHEN_IDLE {
                    use sqlx::Connection;
                    conn.ping().await?;
                }
                Ok(true)
            })
        })
}

async fn create_mysql_database(server: MySqlConnectOptions, database: &str) -> Result<()> {
    tracing::info!(database, "database does not exist; creating it");
    let mut conn = server.connect().await?;
    let sql = format!(
        "CREATE DATABASE IF NOT EXISTS `{}` DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
        database.replace('`', "``")
    );
    sqlx::query(&sql).execute(&mut conn).await?;
    Ok(())
}

fn postgres_options(ds: &DataSourceConfig) -> PgConnectOptions {
    let DbTarget::Postgres { servers, ssl_mode, schema, settings, .. } = &ds.target else {
        unreachable!("postgres_options is only called for PostgreSQL targets")
    };
    let mut options = PgConnectOptions::new_without_pgpass()
        .host(&servers.first().host)
        .port(servers.first().port)
        .username(ds.username.as_deref().unwrap_or(PG_DEFAULT_USER))
        .ssl_mode(match ssl_mode {
            SslMode::Disabled => PgSslMode::Disable,
            SslMode::Preferred => PgSslMode::Prefer,
            SslMode::Required => PgSslMode::Require,
            SslMode::VerifyCa => PgSslMode::VerifyCa,
            SslMode::VerifyIdentity => PgSslMode::VerifyFull,
        })
        .log_slow_statements(tracing::log::LevelFilter::Warn, SLOW_STATEMENT);
    if let Some(password) = &ds.password {
        options = options.password(password.expose());
    }
    // Timestamps are wall-clock values we convert ourselves, so the session TimeZone changes nothing we
    // store; it is passed on as configured, with the rest of `options`.
    let mut run_time: Vec<(&str, &str)> =
        settings.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
    if let Some(schema) = schema {
        run_time.push(("search_path", schema));
    }
    // A transaction left idle (its admin frozen or cut off mid-pass) is ended, so that it does not hold
    // the schedule lock from the standbys until the admin wakes; a configured value wins.
    let idle = format!("{IDLE_HOLDER_SECS}s");
    if !settings.iter().any(|(name, _)| name == IDLE_IN_TRANSACTION) {
        run_time.push((IDLE_IN_TRANSACTION, &idle));
    }
    if !run_time.is_empty() {
        options = options.options(run_time);
    }
    options
}

/// The pool, and the index of its server in the URL's hosts.
async fn connect_postgres(
    ds: &DataSourceConfig,
    last_move: &LastMove,
    missing: Missing,
) -> Result<(sqlx::PgPool, usize)> {
    let DbTarget::Postgres { database, servers, .. } = &ds.target else { unreachable!() };
    let (options, current) =
        starting_server::<Postgres>(postgres_options(ds).database(database), servers).await?;
    // Open one connection first so a missing database is created before the pool starts filling.
    match options.connect().await {
        Ok(conn) => drop(conn),
        Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some(PG_INVALID_CATALOG_NAME) => {
            if missing == Missing::Refuse {
                return Err(StorageError::NoDatabase(format!("{} does not exist", described(ds))));
            }
            create_postgres_database(options.clone(), database).await?;
        }
        Err(e) => return Err(e.into()),
    }
    Ok((server_pool::<Postgres>(&ds.pool, last_move).connect_with(options).await?, current))
}

async fn create_postgres_database(server: PgConnectOptions, database: &str) -> Result<()> {
    tracing::info!(database, "database does not exist; creating it");
    let mut conn = server.database(PG_MAINTENANCE_DB).connect().await?;
    // UTF8 whatever the cluster default: the initial rows hold Chinese text, as on MySQL's utf8mb4.
    let sql =
        format!("CREATE DATABASE \"{}\" ENCODING 'UTF8' TEMPLATE template0", database.replace('"', "\"\""));
    match sqlx::query(&sql).execute(&mut conn).await {
        // Another admin starting beside us created it first.
        Err(sqlx::Error::Database(e))
            if matches!(e.code().as_deref(), Some(PG_DUPLICATE_DATABASE | PG_UNIQUE_VIOLATION)) =>
        {
            Ok(())
        }
        other => other.map(drop).map_err(Into::into),
    }
}

/// What a read-only command names when the database is not there.
fn described(ds: &DataSourceConfig) -> String {
    match &ds.target {
        DbTarget::MySql { database, .. } => format!("the MySQL/MariaDB database `{database}`"),
        DbTarget::Postgres { database, .. } => format!("the PostgreSQL database \"{database}\""),
        DbTarget::Sqlite { path: SqlitePath::File(file) } => format!("the SQLite file {}", file.display()),
        DbTarget::Sqlite { path: SqlitePath::Memory } => "the in-memory SQLite database".to_string(),
    }
}

/// The writer's pool and, for a file, the readers' (created after the writer, which creates the file and
/// puts it in WAL mode).
async fn connect_sqlite(
    path: &SqlitePath,
    ds: &DataSourceConfig,
    missing: Missing,
) -> Result<(sqlx::SqlitePool, Option<sqlx::SqlitePool>)> {
    let busy = Duration::from_millis(ds.pool.connection_timeout_ms.max(5_000));
    let options = SqliteConnectOptions::new().busy_timeout(busy).foreign_keys(false);
    let pools = match path {
        SqlitePath::File(file) => {
            let options = options
                .filename(file)
                .statement_cache_capacity(SQLITE_STATEMENT_CACHE)
                .pragma("cache_size", SQLITE_PAGE_CACHE);
            let writer_options = match missing {
                Missing::Create => {
                    options.clone().create_if_missing(true).journal_mode(SqliteJournalMode::Wal)
                }
                // The server put the file in WAL mode when it made it; setting the mode would write to a file
                // that is no database of ours (an empty one), which the tables' check refuses instead.
                Missing::Refuse if !file.exists() => {
                    return Err(StorageError::NoDatabase(format!("{} does not exist", described(ds))))
                }
                Missing::Refuse => options.clone(),
            };
            let writer = SqlitePoolOptions::new()
                .max_connections(SQLITE_CONNECTIONS)
                .acquire_timeout(busy)
                .connect_with(writer_options.synchronous(SqliteSynchronous::Normal))
                .await?;
            let readers = SqlitePoolOptions::new()
                .max_connections(SQLITE_READERS)
                .acquire_timeout(busy)
                .connect_with(options.read_only(true).pragma("cache_size", SQLITE_READER_PAGE_CACHE))
                .await?;
            (writer, Some(readers))
        }
        // Every connection to ":memory:" is a database of its own: keep exactly one, forever.
        SqlitePath::Memory => {
            let pool = SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
                .acquire_timeout(busy)
                .connect_with(options.in_memory(true))
                .await?;
            (pool, None)
        }
    };
    Ok(pools)
}
