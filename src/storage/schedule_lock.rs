//! The cluster-wide schedule mutex (spec 4.1, 7.1) and the statements run while holding it.
//!
//! MySQL: `SELECT … FOR UPDATE` on the `schedule_lock` row, the very lock a Java admin takes, so both
//! kinds of admin take turns. SQLite: `BEGIN IMMEDIATE`, which excludes every other writer process.
//! The due jobs are read and their next times written inside the same transaction, after the lock is
//! held, so each holder sees everything the previous one committed.
//!
//! The same table keeps one more row, the console's session secret (see [`SESSION_SECRET_PREFIX`]).

use super::{placeholders, Db, JobInfo, Pool, Result};
use sqlx::{MySql, Sqlite, Transaction};

/// `xxl_job_lock.lock_name` of the row holding the console's session secret is this prefix followed by
/// 43 base64url characters (256 random bits), 50 characters in all: the column is `varchar(50)`. Admins
/// only ever lock the `schedule_lock` row, so the extra row is never locked by anyone.
pub const SESSION_SECRET_PREFIX: &str = "secret:";

/// Rows per batched UPDATE, well under both backends' placeholder limits.
const UPDATE_BATCH: usize = 500;

enum LockTx {
    MySql(Transaction<'static, MySql>),
    Sqlite(Transaction<'static, Sqlite>),
}

macro_rules! on_tx {
    ($lock:expr, |$conn:ident| $body:expr) => {
        match &mut $lock.tx {
            LockTx::MySql(tx) => {
                let $conn = &mut **tx;
                $body
            }
            LockTx::Sqlite(tx) => {
                let $conn = &mut **tx;
                $body
            }
        }
    };
}

/// The schedule lock, held until [`ScheduleLock::commit`] (or released by rollback when dropped).
pub struct ScheduleLock {
    tx: LockTx,
}

/// The new schedule state of a job after a pass; written only if the job was not changed meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScheduleUpdate {
    pub id: i32,
    /// The `trigger_next_time` the pass read; a different stored value means the console rescheduled or
    /// stopped the job during the pass, and the console's write wins.
    pub expected_next_time: i64,
    pub trigger_status: i8,
    pub trigger_last_time: i64,
    pub trigger_next_time: i64,
}

impl Db {
    /// Blocks until this process holds the schedule lock.
    pub async fn lock_schedule(&self) -> Result<ScheduleLock> {
        let tx = match &self.pool {
            Pool::MySql(pool) => {
                let mut tx = pool.begin().await?;
                sqlx::query("SELECT * FROM xxl_job_lock WHERE lock_name = 'schedule_lock' FOR UPDATE")
                    .execute(&mut *tx)
                    .await?;
                LockTx::MySql(tx)
            }
            Pool::Sqlite(pool) => LockTx::Sqlite(pool.begin_with("BEGIN IMMEDIATE").await?),
        };
        Ok(ScheduleLock { tx })
    }
}

impl Db {
    /// The session secret kept in `xxl_job_lock`, stored first as `candidate` when there is none. Read
    /// and created under the schedule lock, so admins starting together on a new database agree.
    pub async fn shared_session_secret(&self, candidate: &str) -> Result<String> {
        let mut lock = self.lock_schedule().await?;
        let pattern = format!("{SESSION_SECRET_PREFIX}%");
        let stored: Option<String> = on_tx!(lock, |conn| sqlx::query_scalar(
            "SELECT lock_name FROM xxl_job_lock WHERE lock_name LIKE ? ORDER BY lock_name LIMIT 1"
        )
        .bind(&pattern)
        .fetch_optional(conn)
        .await)?;
        let name = match stored {
            Some(name) => name,
            None => {
                let name = format!("{SESSION_SECRET_PREFIX}{candidate}");
                on_tx!(lock, |conn| sqlx::query("INSERT INTO xxl_job_lock (lock_name) VALUES (?)")
                    .bind(&name)
                    .execute(conn)
                    .await
                    .map(drop))?;
                name
            }
        };
        lock.commit().await?;
        Ok(name[SESSION_SECRET_PREFIX.len()..].to_string())
    }
}

impl ScheduleLock {
    /// Scheduled jobs due at or before `max_next_time`, by id (spec 7.2 scheduleJobQuery).
    pub async fn due_jobs(&mut self, max_next_time: i64, limit: i64) -> Result<Vec<JobInfo>> {
        Ok(on_tx!(self, |conn| sqlx::query_as(
            "SELECT * FROM xxl_job_info WHERE trigger_status = 1 AND trigger_next_time <= ? ORDER BY id ASC LIMIT ?"
        )
        .bind(max_next_time)
        .bind(limit)
        .fetch_all(conn)
        .await)?)
    }

    /// Writes the pass's results in batches; returns how many rows were written.
    pub async fn update_schedules(&mut self, updates: &[ScheduleUpdate]) -> Result<u64> {
        let mut written = 0;
        for batch in updates.chunks(UPDATE_BATCH) {
            let case = format!("CASE id {} END", vec!["WHEN ? THEN ?"; batch.len()].join(" "));
            let sql = format!(
                "UPDATE xxl_job_info SET trigger_status = {case}, trigger_last_time = {case}, \
                 trigger_next_time = {case} WHERE id IN ({}) AND trigger_status = 1 AND trigger_next_time = {case}",
                placeholders(batch.len()),
            );
            written += on_tx!(self, |conn| {
                let mut query = sqlx::query(&sql);
                for u in batch {
                    query = query.bind(u.id).bind(u.trigger_status);
                }
                for u in batch {
                    query = query.bind(u.id).bind(u.trigger_last_time);
                }
                for u in batch {
                    query = query.bind(u.id).bind(u.trigger_next_time);
                }
                for u in batch {
                    query = query.bind(u.id);
                }
                for u in batch {
                    query = query.bind(u.id).bind(u.expected_next_time);
                }
                query.execute(conn).await.map(|r| r.rows_affected())
            })?;
        }
        Ok(written)
    }

    /// Releases the lock, making the pass's writes visible.
    pub async fn commit(self) -> Result<()> {
        match self.tx {
            LockTx::MySql(tx) => tx.commit().await?,
            LockTx::Sqlite(tx) => tx.commit().await?,
        }
        Ok(())
    }
}
