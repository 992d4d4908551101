//! Statements that keep the promise of planned fires through faults: log rows of fires of deleted jobs,
//! and the sweep of rows whose trigger result was lost.
//!
//! Every write here is conditional on the row still having no trigger result (`trigger_code = 0` and
//! `handle_code = 0`), so admins sharing the database, and a late result of a live admin, never undo one
//! another: the first to act on a row wins, and a real result always overwrites a "lost" verdict.

use super::{placeholders, Arg, Db, Result, IN_LIST_MAX};
use super::sql::{self, On};
use chrono::NaiveDateTime;

/// A row without a trigger result or a handle result: planned, or being sent.
pub(super) const UNSENT: &str = "trigger_code = 0 AND handle_code = 0";

impl Db {
    /// Removes the rows of planned fires that will not be sent (the job was stopped, or the misfire rule
    /// dropped them); a row another admin already settled is left alone. Returns the rows removed.
    pub async fn delete_unsent_logs(&self, ids: &[i64]) -> Result<u64> {
        let mut removed = 0;
        for chunk in ids.chunks(IN_LIST_MAX) {
            let sql = format!("DELETE FROM xxl_job_log WHERE id IN ({}) AND {UNSENT}", placeholders(chunk.len()));
            let args: Vec<Arg> = chunk.iter().map(|id| Arg::Int(*id)).collect();
            removed += self.execute(&sql, &args).await?;
        }
        Ok(removed)
    }

    /// Jobs with rows still without a trigger result whose trigger time is before `before_ms`.
    pub async fn find_unsettled_jobs(&self, before_ms: i64, limit: i64) -> Result<Vec<i32>> {
        let sql = format!("SELECT DISTINCT job_id FROM xxl_job_log WHERE {UNSENT} AND trigger_time < ? LIMIT ?");
        let jobs: Vec<(i32,)> = self.fetch_all(&sql, &[Arg::DateTime(self.datetime(before_ms)), Arg::Int(limit)]).await?;
        Ok(jobs.into_iter().map(|(id,)| id).collect())
    }

    /// Settles job `job_id`'s rows from before `before_ms` whose trigger result was lost: each gets a failed
    /// result with `message`, except, when `keep_newest`, the newest, which is returned (id and trigger
    /// time, the planned instant of an unsent planned fire) to be sent as the job's compensation, marked
    /// `planned` by this admin. Returns how many rows this call settled: rows settled meanwhile by another
    /// admin, or given their real result, are not counted, so only one admin acts on each loss. Done under
    /// the schedule lock, which the settlement of late fires takes too, so sweeps and late fires of all
    /// admins never interleave on a job's rows (they deadlocked, see docs/failure-behaviour.md).
    pub async fn settle_lost_logs(
        &self,
        job_id: i32,
        before_ms: i64,
        keep_newest: bool,
        message: &str,
        planned: &str,
    ) -> Result<(u64, Option<(i64, NaiveDateTime)>)> {
        let mut lock = self.lock_schedule().await?;
        let before = Arg::DateTime(self.datetime(before_ms));
        let (tx, dialect) = lock.parts();
        let newest: Option<(i64, NaiveDateTime)> = if keep_newest {
            let sql = format!(
                "SELECT id, trigger_time FROM xxl_job_log WHERE job_id = ? AND {UNSENT} AND trigger_time < ? ORDER BY id DESC LIMIT 1"
            );
            sql::fetch_optional(On::Tx(tx), dialect, &sql, &[Arg::Int(job_id.into()), before.clone()]).await?
        } else {
            None
        };
        let sql = format!(
            "UPDATE xxl_job_log SET trigger_code = 500, trigger_msg = ? WHERE job_id = ? AND {UNSENT} AND trigger_time < ? AND id <> ?"
        );
        let except = newest.as_ref().map_or(0, |(id, _)| *id);
        let args = [Arg::Text(message.to_string()), Arg::Int(job_id.into()), before, Arg::Int(except)];
        let settled = sql::execute(On::Tx(tx), dialect, &sql, &args).await?;
        if let Some((id, _)) = &newest {
            let own = "UPDATE xxl_job_log SET trigger_msg = ? WHERE id = ?";
            sql::execute(On::Tx(tx), dialect, own, &[Arg::Text(planned.to_string()), Arg::Int(*id)]).await?;
        }
        lock.commit().await?;
        Ok((settled, newest))
    }
}
