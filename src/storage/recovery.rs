//! Statements that keep the promise of planned fires through faults: log rows of fires of deleted jobs,
//! and the sweep of rows whose trigger result was lost.
//!
//! Every write here is conditional on the row still having no trigger result (`trigger_code = 0` and
//! `handle_code = 0`), so admins sharing the database, and a late result of a live admin, never undo one
//! another: the first to act on a row wins, and a real result always overwrites a "lost" verdict.

use super::{placeholders, Arg, Db, Result, IN_LIST_MAX};

/// A row without a trigger result or a handle result: planned, or being sent.
pub(super) const UNSENT: &str = "trigger_code = 0 AND handle_code = 0";

impl Db {
    /// Removes the rows of planned fires that will not be sent (the job was stopped, or the misfire rule
    /// dropped them); a row another admin already settled is left alone. Returns the rows removed.
    pub async fn delete_unsent_logs(&self, ids: &[i64]) -> Result<u64> {
        let mut removed = 0;
        for chunk in ids.chunks(IN_LIST_MAX) {
            let sql =
                format!("DELETE FROM xxl_job_log WHERE id IN ({}) AND {UNSENT}", placeholders(chunk.len()));
            let args: Vec<Arg> = chunk.iter().map(|id| Arg::Int(*id)).collect();
            removed += self.execute(&sql, &args).await?;
        }
        Ok(removed)
    }

    /// Rows still without a trigger result whose trigger time is before `before_ms`, in id order.
    ///
    /// Ordered by id, not by trigger time: `ORDER BY trigger_time … LIMIT` made MariaDB walk
    /// `I_trigger_time` over every row older than the cut-off, nearly all of them settled (0.5 s at a
    /// million rows, every 10 s, growing with the table); in id order it reads `I_handle_code`'s
    /// `handle_code = 0` entries, the rows in flight and failed triggers. PostgreSQL and SQLite read
    /// that index either way.
    pub async fn find_unsettled_logs(&self, before_ms: i64, limit: i64) -> Result<Vec<i64>> {
        let sql =
            format!("SELECT id FROM xxl_job_log WHERE {UNSENT} AND trigger_time < ? ORDER BY id LIMIT ?");
        let ids: Vec<(i64,)> =
            self.fetch_all(&sql, &[Arg::DateTime(self.datetime(before_ms)), Arg::Int(limit)]).await?;
        Ok(ids.into_iter().map(|(id,)| id).collect())
    }
}
