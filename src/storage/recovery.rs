//! Statements that keep the promise of planned fires through faults: log rows of fires that were planned
//! but are not to be sent, claims on late fires, and the sweep of rows whose trigger result was lost.
//!
//! Every write here is conditional on the row still having no trigger result (`trigger_code = 0` and
//! `handle_code = 0`), so admins sharing the database, and a late result of a live admin, never undo one
//! another: the first to act on a row wins, and a real result always overwrites a "lost" verdict.

use super::{placeholders, Arg, Db, Result, IN_LIST_MAX};
use chrono::NaiveDateTime;

const UNSENT: &str = "trigger_code = 0 AND handle_code = 0";

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

    /// Claims a late planned fire for sending (as a misfire compensation): its trigger time becomes now,
    /// out of reach of the lost-result sweep. False when the sweep (of any admin) settled it first.
    pub async fn claim_unsent_log(&self, id: i64, now_ms: i64) -> Result<bool> {
        let sql = format!("UPDATE xxl_job_log SET trigger_time = ? WHERE id = ? AND {UNSENT}");
        Ok(self.execute(&sql, &[Arg::DateTime(self.datetime(now_ms)), Arg::Int(id)]).await? == 1)
    }

    /// Jobs with rows still without a trigger result whose trigger time is before `before_ms`, each with
    /// the latest such trigger time.
    pub async fn find_unsettled_jobs(&self, before_ms: i64, limit: i64) -> Result<Vec<(i32, NaiveDateTime)>> {
        let sql = format!(
            "SELECT job_id, MAX(trigger_time) FROM xxl_job_log WHERE {UNSENT} AND trigger_time < ? GROUP BY job_id LIMIT ?"
        );
        self.fetch_all(&sql, &[Arg::DateTime(self.datetime(before_ms)), Arg::Int(limit)]).await
    }

    /// Whether the job has a row triggered after `after`: a fire that already stands for a lost one.
    pub async fn has_fire_after(&self, job_id: i32, after: NaiveDateTime) -> Result<bool> {
        let sql = "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = ? AND trigger_time > ?";
        Ok(self.scalar(sql, &[Arg::Int(job_id.into()), Arg::DateTime(after)]).await? > 0)
    }

    /// Gives the job's rows from before `before_ms` whose trigger result was lost a failed result with
    /// `message`; returns how many this call settled (rows settled meanwhile by another admin, or given
    /// their real result, are not counted), so only one admin acts on each loss.
    pub async fn settle_lost_logs(&self, job_id: i32, before_ms: i64, message: &str) -> Result<u64> {
        let sql = format!(
            "UPDATE xxl_job_log SET trigger_code = 500, trigger_msg = ? WHERE job_id = ? AND {UNSENT} AND trigger_time < ?"
        );
        let args = [Arg::Text(message.to_string()), Arg::Int(job_id.into()), Arg::DateTime(self.datetime(before_ms))];
        self.execute(&sql, &args).await
    }
}
