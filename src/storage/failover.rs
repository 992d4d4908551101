//! The hosts of a multi-host URL: which server the pool connects to, and moving to another when it
//! fails, as Connector/J's failover and pgJDBC's host list do.
//!
//! The server in use is always the one in the pool's connect options (`Pool::connect_options`), so
//! whatever opens a connection of its own from them reaches the same server as the pool. A watcher checks
//! that server every second on a connection of its own; when the check fails it moves the pool to the
//! next server of the list that answers (and has the role `targetServerType` asks for). Pooled
//! connections opened before a move are dropped when next acquired, so the pool never mixes servers
//! for long.

use super::{Result, StorageError};
use crate::config::{HostPort, Servers, TargetServer};
use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, Connection, Database, MySql, Postgres};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the server in use is checked: the bound, with [`ATTEMPT_TIMEOUT`], on how long the admin
/// keeps using a server that is gone.
const CHECK_EVERY: Duration = Duration::from_secs(1);
/// A check, or a connection to a candidate server, that takes longer counts as failed.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(3);

/// PostgreSQL's SQLSTATE for "database does not exist".
pub(super) const PG_INVALID_CATALOG_NAME: &str = "3D000";
/// The database a PostgreSQL server always has, to connect to while ours is created.
pub(super) const PG_MAINTENANCE_DB: &str = "postgres";

type Options<DB> = <<DB as Database>::Connection as Connection>::Options;
type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What differs between the server databases when choosing a host.
pub(super) trait MultiHost: Database {
    /// `options` pointed at `host`.
    fn at(options: &Options<Self>, host: &HostPort) -> Options<Self>;

    /// A connection for checking a server: before the admin's database exists it may be another one.
    fn open(options: Options<Self>) -> BoxFuture<'static, Result<Self::Connection, sqlx::Error>> {
        Box::pin(async move { options.connect().await })
    }

    /// Whether the server behind `conn` answers and may take the admin's connections; `Ok(false)` for one
    /// that answers with the wrong role.
    fn suits(conn: &mut Self::Connection, target: TargetServer) -> BoxFuture<'_, Result<bool, sqlx::Error>>;
}

impl MultiHost for MySql {
    fn at(options: &Options<Self>, host: &HostPort) -> Options<Self> {
        options.clone().host(&host.host).port(host.port)
    }

    fn suits(conn: &mut Self::Connection, _: TargetServer) -> BoxFuture<'_, Result<bool, sqlx::Error>> {
        // A statement, not a ping: a Galera node cut off from its cluster answers pings but refuses
        // statements until it is back in the primary component.
        Box::pin(async move { sqlx::query("SELECT 1").execute(conn).await.map(|_| true) })
    }
}

impl MultiHost for Postgres {
    fn at(options: &Options<Self>, host: &HostPort) -> Options<Self> {
        options.clone().host(&host.host).port(host.port)
    }

    fn open(options: PgConnectOptions) -> BoxFuture<'static, Result<Self::Connection, sqlx::Error>> {
        Box::pin(async move {
            match options.connect().await {
                Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some(PG_INVALID_CATALOG_NAME) => {
                    options.database(PG_MAINTENANCE_DB).connect().await
                }
                other => other,
            }
        })
    }

    fn suits(conn: &mut Self::Connection, target: TargetServer) -> BoxFuture<'_, Result<bool, sqlx::Error>> {
        Box::pin(async move {
            match target {
                TargetServer::Any => sqlx::query("SELECT 1").execute(conn).await.map(|_| true),
                // A standby is a server in recovery; a promoted one leaves it at once.
                TargetServer::Primary | TargetServer::PreferPrimary => {
                    let in_recovery: bool =
                        sqlx::query_scalar("SELECT pg_is_in_recovery()").fetch_one(conn).await?;
                    Ok(!in_recovery)
                }
            }
        })
    }
}

/// Whether the URL needs choosing at all: a single host without a role condition is simply connected to.
pub(super) fn is_needed(servers: &Servers) -> bool {
    servers.hosts.len() > 1 || servers.target != TargetServer::Any
}

/// When the pool last moved to another server: connections opened before are dropped at their next
/// acquire (they lead to the server that failed, or to the one left for the first host).
#[derive(Clone, Default)]
pub(super) struct LastMove(Arc<Mutex<Option<Instant>>>);

impl LastMove {
    /// Whether a connection of this age was opened before the last move.
    pub(super) fn predates(&self, age: Duration) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).is_some_and(|at| age > at.elapsed())
    }

    fn mark(&self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    }
}

/// The first server of `order` that answers and suits `servers.target` (for `PreferPrimary`, else the
/// first that answers), with a checking connection to it; `base` gives everything but the host.
pub(super) async fn choose<DB: MultiHost>(
    base: &Options<DB>,
    servers: &Servers,
    order: impl IntoIterator<Item = usize>,
) -> Result<(usize, DB::Connection)> {
    let mut fallback = None;
    let mut last_error = None;
    let mut wrong_role = Vec::new();
    for index in order {
        let host = &servers.hosts[index];
        let attempt = async {
            let mut conn = DB::open(DB::at(base, host)).await?;
            let suits = DB::suits(&mut conn, servers.target).await?;
            Ok::<_, sqlx::Error>((suits, conn))
        };
        match tokio::time::timeout(ATTEMPT_TIMEOUT, attempt).await {
            Ok(Ok((true, conn))) => return Ok((index, conn)),
            Ok(Ok((false, conn))) => {
                wrong_role.push(host.to_string());
                if servers.target == TargetServer::PreferPrimary && fallback.is_none() {
                    fallback = Some((index, conn));
                }
            }
            Ok(Err(e)) => {
                tracing::debug!(host = %host, "database server not usable: {e}");
                last_error = Some(e);
            }
            Err(_) => {
                tracing::debug!(host = %host, "database server: no answer within {ATTEMPT_TIMEOUT:?}");
                last_error = Some(sqlx::Error::Io(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("{host}: no answer within {ATTEMPT_TIMEOUT:?}"),
                )));
            }
        }
    }
    if let Some(chosen) = fallback {
        return Ok(chosen);
    }
    match (wrong_role.is_empty(), last_error) {
        (false, _) => Err(StorageError::NoServer(format!("{} answered as standby", wrong_role.join(", ")))),
        (true, Some(e)) => Err(e.into()),
        (true, None) => Err(StorageError::NoServer("no host to try".into())),
    }
}

/// Checks the server in use (`hosts[current]`) every second for as long as the pool is open, and moves
/// the pool on when it fails; after a move away from the first host, the hosts before the one in use
/// are tried again every `retry_first_after_secs`.
pub(super) fn watch<DB: MultiHost>(
    pool: sqlx::Pool<DB>,
    servers: Servers,
    mut current: usize,
    last_move: LastMove,
) {
    let retry_every = servers.retry_first_after_secs.map(Duration::from_secs);
    tokio::spawn(async move {
        let mut conn: Option<DB::Connection> = None;
        let mut last_retry = Instant::now();
        let mut reported_down = false;
        loop {
            tokio::time::sleep(CHECK_EVERY).await;
            if pool.is_closed() {
                return;
            }
            let healthy = match conn.as_mut() {
                Some(c) => matches!(
                    tokio::time::timeout(ATTEMPT_TIMEOUT, DB::suits(c, servers.target)).await,
                    Ok(Ok(true))
                ),
                None => false,
            };
            let base = pool.connect_options();
            if healthy {
                reported_down = false;
                if current > 0 && retry_every.is_some_and(|every| last_retry.elapsed() >= every) {
                    last_retry = Instant::now();
                    if let Ok((earlier, c)) = choose::<DB>(&base, &servers, 0..current).await {
                        move_pool(&pool, &base, &servers, current, earlier, &last_move);
                        (current, conn) = (earlier, Some(c));
                    }
                }
                continue;
            }
            // The server in use first (a checking connection may fail alone), then the next ones in order.
            let n = servers.hosts.len();
            match choose::<DB>(&base, &servers, (0..n).map(|k| (current + k) % n)).await {
                Ok((next, c)) => {
                    if next != current {
                        move_pool(&pool, &base, &servers, current, next, &last_move);
                        last_retry = Instant::now();
                    }
                    (current, conn) = (next, Some(c));
                }
                Err(e) => {
                    conn = None;
                    if !reported_down {
                        tracing::error!(hosts = %servers, "no database server of spring.datasource.url is usable: {e}");
                        reported_down = true;
                    }
                }
            }
        }
    });
}

fn move_pool<DB: MultiHost>(
    pool: &sqlx::Pool<DB>,
    base: &Options<DB>,
    servers: &Servers,
    from: usize,
    to: usize,
    last_move: &LastMove,
) {
    pool.set_connect_options(DB::at(base, &servers.hosts[to]));
    last_move.mark();
    tracing::warn!(from = %servers.hosts[from], to = %servers.hosts[to], "database: moved to another server of spring.datasource.url");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::HostPort;

    #[test]
    fn connections_opened_before_a_move_are_dropped() {
        let last_move = LastMove::default();
        assert!(!last_move.predates(Duration::from_secs(3600)), "no move yet");
        last_move.mark();
        std::thread::sleep(Duration::from_millis(20));
        assert!(last_move.predates(Duration::from_secs(1)));
        assert!(!last_move.predates(Duration::from_millis(1)));
    }

    #[test]
    fn only_multi_host_or_role_conditioned_urls_are_watched() {
        let one = Servers::single("db", 3306);
        assert!(!is_needed(&one));
        assert!(is_needed(&Servers { target: TargetServer::Primary, ..one.clone() }));
        let two =
            Servers { hosts: vec![one.first().clone(), HostPort { host: "db2".into(), port: 3306 }], ..one };
        assert!(is_needed(&two));
    }
}
