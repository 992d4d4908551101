//! The cluster-wide schedule mutex (spec 4.1, 7.1) and the statements run while holding it.
//!
//! MySQL and PostgreSQL: `SELECT … FOR UPDATE` on the `schedule_lock` row, the very lock a Java admin
//! takes, so every admin on the database takes turns. SQLite: `BEGIN IMMEDIATE`, which excludes every
//! other writer process. [`super::sql::Dialect`] says which.
//! The due jobs are read and their next times written inside the same transaction, after the lock is
//! held, so each holder sees everything the previous one committed.

use super::sql::{self, Dialect, On, Tx};
use super::{placeholders, Arg, Db, JobInfo, Result};

/// Rows per batched UPDATE, well under every backend's placeholder limit.
const UPDATE_BATCH: usize = 500;

/// The schedule lock, held until [`ScheduleLock::commit`] (or released by rollback when dropped).
pub struct ScheduleLock {
    tx: Tx,
    dialect: Dialect,
}

/// The new schedule state of a job after a pass; written only if the job was not changed meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScheduleUpdate {
    pub id: i32,
    /// The `trigger_next_time` the pass read; a different stored value means the console rescheduled or
    /// stopped the job during the pass, and the console's write wins.
    pub expected_next_time: i64,
    pub trigger_status: i16,
    pub trigger_last_time: i64,
    pub trigger_next_time: i64,
}

impl Db {
    /// Blocks until this process holds the schedule lock.
    pub async fn lock_schedule(&self) -> Result<ScheduleLock> {
        let mut tx = sql::begin(&self.pool, &self.dialect).await?;
        if let Some(lock) = self.dialect.lock_row {
            sql::execute(On::Tx(&mut tx), &self.dialect, lock, &[]).await?;
        }
        Ok(ScheduleLock { tx, dialect: self.dialect })
    }
}

impl ScheduleLock {
    /// Scheduled jobs due at or before `max_next_time`, by id (spec 7.2 scheduleJobQuery).
    pub async fn due_jobs(&mut self, max_next_time: i64, limit: i64) -> Result<Vec<JobInfo>> {
        sql::fetch_all(
            On::Tx(&mut self.tx),
            &self.dialect,
            "SELECT * FROM xxl_job_info WHERE trigger_status = 1 AND trigger_next_time <= ? ORDER BY id ASC LIMIT ?",
            &[Arg::Int(max_next_time), Arg::Int(limit)],
        )
        .await
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
            let id = |u: &ScheduleUpdate| Arg::Int(u.id.into());
            let mut args = Vec::with_capacity(batch.len() * 9);
            args.extend(batch.iter().flat_map(|u| [id(u), Arg::Int(u.trigger_status.into())]));
            args.extend(batch.iter().flat_map(|u| [id(u), Arg::Int(u.trigger_last_time)]));
            args.extend(batch.iter().flat_map(|u| [id(u), Arg::Int(u.trigger_next_time)]));
            args.extend(batch.iter().map(id));
            args.extend(batch.iter().flat_map(|u| [id(u), Arg::Int(u.expected_next_time)]));
            written += sql::execute(On::Tx(&mut self.tx), &self.dialect, &sql, &args).await?;
        }
        Ok(written)
    }

    /// Releases the lock, making the pass's writes visible.
    pub async fn commit(self) -> Result<()> {
        sql::commit(self.tx).await
    }
}
