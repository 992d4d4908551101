//! The cluster-wide schedule mutex (spec 4.1, 7.1) and the statements run while holding it.
//!
//! MySQL: `SELECT … FOR UPDATE` on the `schedule_lock` row, the very lock a Java admin takes, so both
//! kinds of admin take turns. SQLite: `BEGIN IMMEDIATE`, which excludes every other writer process.
//! The due jobs are read and their next times written inside the same transaction, after the lock is
//! held, so each holder sees everything the previous one committed.

use super::logs::{insert_log_rows, LogConn, NewLog};
use super::{placeholders, Db, Pool, Result, ScheduledJob};
use crate::time::Zone;
use sqlx::{MySql, Sqlite, Transaction};

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
    zone: Zone,
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
        Ok(ScheduleLock { tx, zone: self.zone() })
    }
}

impl ScheduleLock {
    /// Scheduled jobs due at or before `max_next_time` (spec 7.2 scheduleJobQuery), the most urgent first.
    /// 2.4.2 orders by id: when more jobs are due than a page holds, its next pages re-read the first
    /// jobs' following fires and leave the rest to miss their time (10,000 jobs due at one instant lost
    /// thousands of fires); by next time, every page takes the fires that are due soonest.
    pub async fn due_jobs(&mut self, max_next_time: i64, limit: i64) -> Result<Vec<ScheduledJob>> {
        Ok(on_tx!(self, |conn| sqlx::query_as(
            "SELECT id, job_group, schedule_type, schedule_conf, misfire_strategy, trigger_status, trigger_last_time, \
             trigger_next_time FROM xxl_job_info WHERE trigger_status = 1 AND trigger_next_time <= ? \
             ORDER BY trigger_next_time ASC, id ASC LIMIT ?"
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

    /// Inserts the log rows of the fires this pass plans, in its transaction: a plan becomes visible
    /// (the jobs' next times advance) together with the rows that stand for its fires, so an admin that
    /// dies holding a plan leaves rows behind for the lost-result sweep, never silently lost fires.
    pub async fn insert_logs(&mut self, rows: &[NewLog]) -> Result<Vec<i64>> {
        let zone = self.zone;
        match &mut self.tx {
            LockTx::MySql(tx) => insert_log_rows(LogConn::MySql(&mut **tx), zone, rows).await,
            LockTx::Sqlite(tx) => insert_log_rows(LogConn::Sqlite(&mut **tx), zone, rows).await,
        }
    }

    /// Whether the job has a fire that stands for its missed instant `missed_ms`: a row triggered since
    /// then, or a row not yet sent (whose admin settles it by the misfire rule) since `recent_ms`.
    pub async fn has_fire_since(&mut self, job_id: i32, missed_ms: i64, recent_ms: i64) -> Result<bool> {
        let missed = self.zone.to_datetime(missed_ms - missed_ms.rem_euclid(1000));
        let recent = self.zone.to_datetime(recent_ms);
        let count: i64 = on_tx!(self, |conn| sqlx::query_scalar(
            "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = ? AND trigger_time >= ? \
             AND (trigger_time >= ? OR (trigger_code = 0 AND handle_code = 0))"
        )
        .bind(job_id)
        .bind(recent.min(missed))
        .bind(missed)
        .fetch_one(conn)
        .await)?;
        Ok(count > 0)
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
