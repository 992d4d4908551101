//! Session locks: a named lock held by a database connection of its own, which the server releases the
//! moment that connection ends (MySQL/MariaDB `GET_LOCK`, PostgreSQL session advisory locks). An admin
//! holds one while it lives, and the others wait on it, so the death of an admin (kill -9, OOM, power) is
//! known to the survivors at once, without heartbeats through the database.
//!
//! Beside [`super::sql`], the one other file that matches on the backend: a session lock lives on one
//! connection outside the pool, so it cannot go through the pooled primitives.

use super::sql::Pool;
use super::{Db, Result};
use sqlx::{ConnectOptions, Connection};
use std::time::Duration;

/// A held session lock; dropping it closes its connection, which releases it.
pub struct SessionLock {
    conn: Conn,
    /// The server it is held on (host and port).
    server: (String, u16),
}

enum Conn {
    MySql(sqlx::MySqlConnection),
    Postgres(sqlx::PgConnection),
}

/// PostgreSQL's "lock_not_available", what a lock wait answers when `lock_timeout` ends it.
const PG_LOCK_NOT_AVAILABLE: &str = "55P03";

/// A held lock's connection left idle this long is ended by the server, which releases the lock: an admin
/// that is frozen (SIGSTOP, a stalled VM) or cut off without a FIN lets its standbys take over within the
/// lease instead of holding them off until it wakes. The holder checks its lock every second.
pub const IDLE_HOLDER_SECS: u32 = 5;

impl Db {
    /// Whether admins can tell one another's death by session locks: a single MySQL/MariaDB or
    /// PostgreSQL server. Not SQLite (one process; no server to hold a lock), nor a Galera node, whose
    /// locks other nodes do not see.
    pub fn has_session_locks(&self) -> bool {
        match self.pool {
            Pool::MySql(_) => !self.dialect.galera,
            Pool::Postgres(_) => true,
            Pool::Sqlite(_) => false,
        }
    }

    /// The server the pool's new connections go to (it changes when a multi-host URL fails over).
    fn current_server(&self) -> (String, u16) {
        match &self.pool {
            Pool::MySql(pool) => {
                let o = pool.connect_options();
                (o.get_host().to_string(), o.get_port())
            }
            Pool::Postgres(pool) => {
                let o = pool.connect_options();
                (o.get_host().to_string(), o.get_port())
            }
            Pool::Sqlite(_) => (String::new(), 0),
        }
    }

    /// Whether `lock` is still held, on the server the pool uses now: after a multi-host URL moved the
    /// pool, a lock left on the old server tells the admins on the new one nothing.
    pub async fn holds(&self, lock: &mut SessionLock) -> bool {
        lock.server == self.current_server() && lock.is_held().await
    }

    pub fn is_sqlite(&self) -> bool {
        matches!(self.pool, Pool::Sqlite(_))
    }

    /// Takes the session lock `name` (MySQL) / `key` (PostgreSQL) on a new connection to the pool's
    /// current server, waiting for it up to `wait` (zero: try once). `None` when another session holds it.
    pub async fn session_lock(
        &self,
        name: &str,
        key: (i32, i32),
        wait: Duration,
    ) -> Result<Option<SessionLock>> {
        let secs = wait.as_secs().max(u64::from(!wait.is_zero())) as i64;
        let server = self.current_server();
        let conn = match &self.pool {
            Pool::MySql(pool) => {
                let mut conn = pool.connect_options().connect().await?;
                // A server's lock names are shared by all its databases, so each is qualified by the database
                // (hashed: names are limited to 64 characters); PostgreSQL's advisory locks are per database.
                let got: Option<i64> =
                    sqlx::query_scalar("SELECT GET_LOCK(CONCAT(?, ':', MD5(DATABASE())), ?)")
                        .bind(name)
                        .bind(secs)
                        .fetch_one(&mut conn)
                        .await?;
                if got != Some(1) {
                    return Ok(None);
                }
                sqlx::query(&format!("SET SESSION wait_timeout = {IDLE_HOLDER_SECS}"))
                    .execute(&mut conn)
                    .await?;
                Conn::MySql(conn)
            }
            Pool::Postgres(pool) => {
                let mut conn = pool.connect_options().connect().await?;
                let got = if wait.is_zero() {
                    sqlx::query_scalar("SELECT pg_try_advisory_lock($1, $2)")
                        .bind(key.0)
                        .bind(key.1)
                        .fetch_one(&mut conn)
                        .await?
                } else {
                    sqlx::query(&format!("SET lock_timeout = '{secs}s'")).execute(&mut conn).await?;
                    match sqlx::query("SELECT pg_advisory_lock($1, $2)")
                        .bind(key.0)
                        .bind(key.1)
                        .execute(&mut conn)
                        .await
                    {
                        Ok(_) => true,
                        Err(sqlx::Error::Database(e))
                            if e.code().as_deref() == Some(PG_LOCK_NOT_AVAILABLE) =>
                        {
                            false
                        }
                        Err(e) => return Err(e.into()),
                    }
                };
                if !got {
                    return Ok(None);
                }
                // PostgreSQL 14 and later; an older server keeps the connection until its TCP keepalive
                // tells, and the standbys see the frozen leader by its lease alone.
                let idle = format!("SET idle_session_timeout = '{IDLE_HOLDER_SECS}s'");
                if let Err(e) = sqlx::query(&idle).execute(&mut conn).await {
                    tracing::debug!("idle_session_timeout not set on the leader's lock connection: {e}");
                }
                Conn::Postgres(conn)
            }
            Pool::Sqlite(_) => return Ok(None),
        };
        Ok(Some(SessionLock { conn, server }))
    }
}

impl SessionLock {
    /// Whether the lock's connection still answers (the lock is gone with it otherwise).
    async fn is_held(&mut self) -> bool {
        let ping = match &mut self.conn {
            Conn::MySql(c) => c.ping().await,
            Conn::Postgres(c) => c.ping().await,
        };
        ping.is_ok()
    }

    /// Ends the session, which releases the lock.
    pub async fn release(self) {
        let _ = match self.conn {
            Conn::MySql(c) => c.close().await,
            Conn::Postgres(c) => c.close().await,
        };
    }
}
