//! The cluster-wide schedule mutex (2.4.2: JobScheduleHelper) and the statements run while holding it.
//!
//! MySQL and PostgreSQL: `SELECT … FOR UPDATE` on the `schedule_lock` row, the very lock a Java admin
//! takes, so every admin on the database takes turns. SQLite: `BEGIN IMMEDIATE`, which excludes every
//! other writer process. [`super::sql::Dialect`] says which.
//! The due jobs are read and their next times written inside the same transaction, after the lock is
//! held, so each holder sees everything the previous one committed.
//!
//! The same table keeps one more row, the console's session secret (see [`SESSION_SECRET_PREFIX`]).

use super::logs::{log_inserts, NewLog};
use super::sql::{self, Dialect, On, RowsUpdate, Tx};
use super::{group_alike, placeholders, Arg, Db, Result, ScheduledJob, IN_LIST_MAX};
use crate::domain::codes::TriggerStatus;
use crate::domain::ownership::{Lease, Owner};
use crate::time::Zone;

/// `xxl_job_lock.lock_name` of the row holding the console's session secret is this prefix followed by
/// 43 base64url characters (256 random bits), 50 characters in all: the column is `varchar(50)`. Admins
/// only ever lock the `schedule_lock` row, so the extra row is never locked by anyone.
pub const SESSION_SECRET_PREFIX: &str = "secret:";

const SCHEDULE_LOCK: &str = "schedule_lock";
/// The lock row's name for a moment inside a Galera pass (never committed).
const WRITING_LOCK: &str = "schedule_lock#";

/// The schedule lock, held until [`ScheduleLock::commit`] (or released by rollback when dropped).
pub struct ScheduleLock {
    pub(super) tx: Tx,
    pub(super) dialect: Dialect,
    pub(super) zone: Zone,
}

/// The new schedule state of a job after a pass; written only if the job was not changed meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScheduleUpdate {
    pub id: i32,
    /// The `trigger_next_time` the pass read; a different stored value means the console rescheduled or
    /// stopped the job during the pass, and the console's write wins.
    pub expected_next_time: i64,
    pub trigger_status: TriggerStatus,
    pub trigger_last_time: i64,
    pub trigger_next_time: i64,
}

impl ScheduleUpdate {
    /// What the update writes, then the next time it expects to find.
    fn values(&self) -> [i64; 4] {
        [
            self.trigger_status.code().into(),
            self.trigger_last_time,
            self.trigger_next_time,
            self.expected_next_time,
        ]
    }
}

impl Db {
    /// Blocks until this process holds the schedule lock.
    pub async fn lock_schedule(&self) -> Result<ScheduleLock> {
        let mut tx = sql::begin(&self.pool, &self.dialect).await?;
        if let Some(lock) = self.dialect.lock_row {
            sql::execute(On::Tx(&mut tx), &self.dialect, lock, &[]).await?;
        }
        if self.dialect.galera {
            // A Galera node locks the row for its own clients only. Writing it puts the row in this
            // transaction's write set, so of two holders on different nodes only the first to commit
            // survives certification; the other's commit fails (1213) and it sends nothing. The name is
            // changed and changed back: an UPDATE that changes nothing writes nothing.
            for (from, to) in [(SCHEDULE_LOCK, WRITING_LOCK), (WRITING_LOCK, SCHEDULE_LOCK)] {
                let write = "UPDATE xxl_job_lock SET lock_name = ? WHERE lock_name = ?";
                sql::execute(
                    On::Tx(&mut tx),
                    &self.dialect,
                    write,
                    &[Arg::Text(to.into()), Arg::Text(from.into())],
                )
                .await?;
            }
        }
        Ok(ScheduleLock { tx, dialect: self.dialect, zone: self.zone() })
    }
}

impl Db {
    /// The session secret kept in `xxl_job_lock`, stored first as `candidate` when there is none. Read
    /// first without the lock (the row, once made, never changes); created under the schedule lock, so
    /// admins starting together on a new database agree. On a Galera cluster the lock's transaction can
    /// lose certification to a running pass (error 1213): it is tried again.
    pub async fn shared_session_secret(&self, candidate: &str) -> Result<String> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.try_shared_session_secret(candidate).await {
                Err(e) if attempt < SECRET_ATTEMPTS => {
                    tracing::debug!("session secret not settled yet ({e}); trying again");
                    tokio::time::sleep(std::time::Duration::from_millis(200 * attempt)).await;
                }
                outcome => return outcome,
            }
        }
    }

    async fn try_shared_session_secret(&self, candidate: &str) -> Result<String> {
        let pattern = format!("{SESSION_SECRET_PREFIX}%");
        let find = "SELECT lock_name FROM xxl_job_lock WHERE lock_name LIKE ? ORDER BY lock_name LIMIT 1";
        if let Some((name,)) = self.fetch_optional::<(String,)>(find, &[Arg::Text(pattern.clone())]).await? {
            return Ok(name[SESSION_SECRET_PREFIX.len()..].to_string());
        }
        let mut lock = self.lock_schedule().await?;
        let stored: Option<(String,)> =
            sql::fetch_optional(On::Tx(&mut lock.tx), &lock.dialect, find, &[Arg::Text(pattern)]).await?;
        let name = match stored {
            Some((name,)) => name,
            None => {
                let name = format!("{SESSION_SECRET_PREFIX}{candidate}");
                let insert = "INSERT INTO xxl_job_lock (lock_name) VALUES (?)";
                sql::execute(On::Tx(&mut lock.tx), &lock.dialect, insert, &[Arg::Text(name.clone())]).await?;
                name
            }
        };
        lock.commit().await?;
        Ok(name[SESSION_SECRET_PREFIX.len()..].to_string())
    }
}

/// Attempts at settling the session secret at start.
const SECRET_ATTEMPTS: u64 = 10;

impl ScheduleLock {
    /// Scheduled jobs due at or before `max_next_time` (2.4.2: XxlJobInfoDao.scheduleJobQuery), the most
    /// urgent first.
    /// 2.4.2 orders by id: when more jobs are due than a page holds, its next pages re-read the first
    /// jobs' following fires and leave the rest to miss their time (10,000 jobs due at one instant lost
    /// thousands of fires); by next time, every page takes the fires that are due soonest.
    pub async fn due_jobs(&mut self, max_next_time: i64, limit: i64) -> Result<Vec<ScheduledJob>> {
        sql::fetch_all(
            On::Tx(&mut self.tx),
            &self.dialect,
            "SELECT id, job_group, schedule_type, schedule_conf, misfire_strategy, trigger_status, trigger_last_time, \
             trigger_next_time FROM xxl_job_info WHERE trigger_status = 1 AND trigger_next_time <= ? \
             ORDER BY trigger_next_time ASC, id ASC LIMIT ?",
            &[Arg::Int(max_next_time), Arg::Int(limit)],
        )
        .await
    }

    /// Writes the pass's results; returns how many rows were written. Only a job still as the pass read
    /// it is written: a console change meanwhile wins. Jobs planned alike (the same times, as every job
    /// of one cron is) are written by one UPDATE of an id list per set of values, which costs MariaDB
    /// half of what a derived table of their values does; when most jobs differ (spread schedules), one
    /// UPDATE per 200 jobs takes each job's values from a derived table.
    pub async fn update_schedules(&mut self, updates: &[ScheduleUpdate]) -> Result<u64> {
        let mut written = 0;
        if let Some(alike) = group_alike(updates.iter().map(|u| (u.values(), i64::from(u.id)))) {
            for ([status, last, next, expected], ids) in alike {
                for chunk in ids.chunks(IN_LIST_MAX) {
                    let sql = format!(
                        "UPDATE xxl_job_info SET trigger_status = ?, trigger_last_time = ?, trigger_next_time = ? \
                         WHERE id IN ({}) AND trigger_status = 1 AND trigger_next_time = ?",
                        placeholders(chunk.len())
                    );
                    let args: Vec<Arg> = [status, last, next]
                        .iter()
                        .chain(chunk)
                        .chain([&expected])
                        .map(|v| Arg::Int(*v))
                        .collect();
                    written += sql::execute(On::Tx(&mut self.tx), &self.dialect, &sql, &args).await?;
                }
            }
            return Ok(written);
        }
        for batch in updates.chunks(RowsUpdate::MAX_ROWS) {
            let rows =
                batch.iter().map(|u| (u.id.into(), u.values().into_iter().map(Arg::Int).collect())).collect();
            let sets = ["trigger_status = v.c0", "trigger_last_time = v.c1", "trigger_next_time = v.c2"]
                .map(String::from);
            let condition = "xxl_job_info.trigger_status = 1 AND xxl_job_info.trigger_next_time = v.c3";
            let (sql, args) =
                RowsUpdate { table: "xxl_job_info", sets: &sets, set_args: Vec::new(), rows, condition }
                    .build(&self.dialect);
            written += sql::execute(On::Tx(&mut self.tx), &self.dialect, &sql, &args).await?;
        }
        Ok(written)
    }

    /// Inserts the log rows of the fires this pass plans, in its transaction: a plan becomes visible
    /// (the jobs' next times advance) together with the rows that stand for its fires, so an admin that
    /// dies holding a plan leaves rows behind for the lost-result sweep, never silently lost fires.
    pub async fn insert_logs(&mut self, rows: &[NewLog]) -> Result<Vec<i64>> {
        let mut ids = Vec::with_capacity(rows.len());
        for (insert, args, n) in log_inserts(self.zone, rows) {
            ids.extend(sql::insert_ids(On::Tx(&mut self.tx), &self.dialect, &insert, &args, n).await?);
        }
        Ok(ids)
    }

    /// Whether `owner` still holds the lease: a pass of an admin whose lease was taken over (it has not
    /// noticed yet) plans nothing.
    pub async fn leads(&mut self, owner: Owner) -> Result<bool> {
        let args = [Arg::Text(format!("{}%", Lease::prefix_of(owner)))];
        let n = sql::scalar(
            On::Tx(&mut self.tx),
            &self.dialect,
            "SELECT COUNT(*) FROM xxl_job_lock WHERE lock_name LIKE ?",
            &args,
        )
        .await?;
        Ok(n > 0)
    }

    /// The transaction and its dialect, for statements of other storage files run under the lock.
    pub(super) fn parts(&mut self) -> (&mut Tx, &Dialect) {
        (&mut self.tx, &self.dialect)
    }

    /// Releases the lock, making the pass's writes visible.
    pub async fn commit(self) -> Result<()> {
        sql::commit(self.tx).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::testing::memory_db;

    /// Each job's id, status, last and next time, by id.
    async fn jobs(db: &Db) -> Vec<(i32, i64, i64, i64)> {
        let sql =
            "SELECT id, trigger_status, trigger_last_time, trigger_next_time FROM xxl_job_info ORDER BY id";
        db.fetch_all(sql, &[]).await.unwrap()
    }

    /// Each job's status, last and next time, by id.
    async fn times(db: &Db) -> Vec<(i64, i64, i64)> {
        jobs(db).await.into_iter().map(|(_, s, l, n)| (s, l, n)).collect()
    }

    #[tokio::test]
    async fn schedules_are_written_alike_or_each_its_own_and_a_console_change_wins() {
        let db = memory_db().await;
        db.execute("DELETE FROM xxl_job_info", &[]).await.unwrap();
        let insert = "INSERT INTO xxl_job_info (job_group, job_desc, glue_type, trigger_status, trigger_next_time) VALUES (1, 'j', 'BEAN', 1, 1000)";
        for _ in 0..300 {
            db.execute(insert, &[]).await.unwrap();
        }
        let ids: Vec<i32> = jobs(&db).await.iter().map(|t| t.0).collect();
        // The console stopped the 7th job and rescheduled the 8th after the pass read them.
        db.execute(
            "UPDATE xxl_job_info SET trigger_status = 0, trigger_next_time = 0 WHERE id = ?",
            &[Arg::Int(ids[6].into())],
        )
        .await
        .unwrap();
        db.execute("UPDATE xxl_job_info SET trigger_next_time = 99 WHERE id = ?", &[Arg::Int(ids[7].into())])
            .await
            .unwrap();
        let plan = |id: i32, expected: i64, next: i64| ScheduleUpdate {
            id,
            expected_next_time: expected,
            trigger_status: TriggerStatus::Running,
            trigger_last_time: expected,
            trigger_next_time: next,
        };

        // A cron's jobs come out alike (one id list; the last job stopped by its plan) ...
        let mut alike: Vec<ScheduleUpdate> = ids.iter().map(|id| plan(*id, 1000, 2000)).collect();
        alike[299].trigger_status = TriggerStatus::Stopped;
        let mut lock = db.lock_schedule().await.unwrap();
        assert_eq!(lock.update_schedules(&alike).await.unwrap(), 298);
        lock.commit().await.unwrap();
        let after = times(&db).await;
        assert_eq!((after[0], after[298], after[299]), ((1, 1000, 2000), (1, 1000, 2000), (0, 1000, 2000)));
        assert_eq!((after[6], after[7]), ((0, 0, 0), (1, 0, 99)));

        // ... spread ones each their own (derived tables of 200 rows).
        let spread: Vec<ScheduleUpdate> =
            ids[..299].iter().map(|id| plan(*id, 2000, 3000 + i64::from(*id))).collect();
        let mut lock = db.lock_schedule().await.unwrap();
        assert_eq!(lock.update_schedules(&spread).await.unwrap(), 297);
        lock.commit().await.unwrap();
        let after = times(&db).await;
        assert_eq!(
            (after[0], after[298]),
            ((1, 2000, 3000 + i64::from(ids[0])), (1, 2000, 3000 + i64::from(ids[298])))
        );
        assert_eq!((after[6], after[7], after[299]), ((0, 0, 0), (1, 0, 99), (0, 1000, 2000)));
    }
}
