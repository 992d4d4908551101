//! Statements of plan ownership between admins (see `crate::domain::ownership`): the owner markers of
//! planned rows, the registry rows of live admins in `xxl_job_lock`, and the takeover of a dead admin's
//! plan.
//!
//! Each write is conditional on the row still being what its writer expects (the marker, no result yet),
//! so two admins never both act on one row, whatever they believe about each other.

use super::sql::{self, Dialect, On};
use super::recovery::UNSENT;
use super::{placeholders, Arg, Db, Result, ScheduleLock, IN_LIST_MAX};
use chrono::NaiveDateTime;


/// A row of a job, as the settlement of a late fire reads it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct JobRowState {
    pub id: i64,
    pub job_id: i32,
    pub trigger_time: Option<NaiveDateTime>,
    pub trigger_code: i32,
    pub handle_code: i32,
    pub trigger_msg: Option<String>,
}

/// A row of a planned fire found by a takeover.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct OwnedRow {
    pub id: i64,
    pub job_id: i32,
    pub trigger_time: Option<NaiveDateTime>,
    pub trigger_msg: Option<String>,
}

/// Marks the rows of `ids` still `planned` as `sending` at `now`; returns the ids now marked `sending`,
/// which includes rows an earlier attempt of the same batch marked (`sending` names the batch).
async fn mark_sending(mut on: On<'_>, dialect: &Dialect, now: NaiveDateTime, ids: &[i64], planned: &str, sending: &str) -> Result<Vec<i64>> {
    let mut marked = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(IN_LIST_MAX) {
        let list = placeholders(chunk.len());
        let update = format!("UPDATE xxl_job_log SET trigger_msg = ?, trigger_time = ? WHERE id IN ({list}) AND trigger_msg = ? AND {UNSENT}");
        let mut args = vec![Arg::Text(sending.to_string()), Arg::DateTime(now)];
        args.extend(chunk.iter().map(|id| Arg::Int(*id)));
        args.push(Arg::Text(planned.to_string()));
        if sql::execute(on.reborrow(), dialect, &update, &args).await? == chunk.len() as u64 {
            marked.extend_from_slice(chunk);
            continue;
        }
        // Some were taken over by another admin (which then sends them), or settled: find which are ours.
        let select = format!("SELECT id FROM xxl_job_log WHERE id IN ({list}) AND trigger_msg = ? AND {UNSENT}");
        let mut args: Vec<Arg> = chunk.iter().map(|id| Arg::Int(*id)).collect();
        args.push(Arg::Text(sending.to_string()));
        let rows: Vec<(i64,)> = sql::fetch_all(on.reborrow(), dialect, &select, &args).await?;
        marked.extend(rows.into_iter().map(|(id,)| id));
    }
    Ok(marked)
}

/// Gives rows of `ids` that still have no result a result that says why they were not sent.
async fn settle_unsent(mut on: On<'_>, dialect: &Dialect, ids: &[i64], code: i32, msg: &str, alarm_status: i16) -> Result<u64> {
    let mut settled = 0;
    for chunk in ids.chunks(IN_LIST_MAX) {
        let sql = format!(
            "UPDATE xxl_job_log SET trigger_code = ?, trigger_msg = ?, alarm_status = ? WHERE id IN ({}) AND {UNSENT}",
            placeholders(chunk.len())
        );
        let mut args = vec![Arg::Int(code.into()), Arg::Text(msg.to_string()), Arg::Int(alarm_status.into())];
        args.extend(chunk.iter().map(|id| Arg::Int(*id)));
        settled += sql::execute(on.reborrow(), dialect, &sql, &args).await?;
    }
    Ok(settled)
}

impl Db {
    /// Marks this admin's planned rows as being sent, just before their `/run`s (one statement per
    /// batch); returns the ids to send. Rows another admin took over are left out.
    pub async fn mark_sending(&self, ids: &[i64], planned: &str, sending: &str, now_ms: i64) -> Result<Vec<i64>> {
        mark_sending(On::Pool(&self.pool), &self.dialect, self.datetime(now_ms), ids, planned, sending).await
    }

    /// Settles unsent rows with `code`, `msg` and `alarm_status` (see [`ScheduleLock::settle_unsent`]).
    pub async fn settle_unsent(&self, ids: &[i64], code: i32, msg: &str, alarm_status: i16) -> Result<u64> {
        settle_unsent(On::Pool(&self.pool), &self.dialect, ids, code, msg, alarm_status).await
    }

    /// Adds this admin's row to the registry of live admins in `xxl_job_lock`.
    pub async fn register_admin(&self, row: &str) -> Result<()> {
        self.insert_once("INSERT INTO xxl_job_lock (lock_name) VALUES (?)", &[Arg::Text(row.to_string())]).await
    }

    pub async fn unregister_admin(&self, row: &str) -> Result<u64> {
        self.execute("DELETE FROM xxl_job_lock WHERE lock_name = ?", &[Arg::Text(row.to_string())]).await
    }

    /// The registry rows of admins (`prefix` followed by an id).
    pub async fn registered_admins(&self, prefix: &str) -> Result<Vec<String>> {
        let rows: Vec<(String,)> =
            self.fetch_all("SELECT lock_name FROM xxl_job_lock WHERE lock_name LIKE ?", &[Arg::Text(format!("{prefix}%"))]).await?;
        Ok(rows.into_iter().map(|(name,)| name).collect())
    }

    /// Unsent rows since `since_ms` whose `trigger_msg` begins with one of `markers` (any owner's, planned or
    /// being sent): on SQLite, whose one admin process outlives no other, the plan of a previous run.
    pub async fn marked_rows(&self, since_ms: i64, markers: [&str; 2]) -> Result<Vec<OwnedRow>> {
        let sql = format!(
            "SELECT id, job_id, trigger_time, trigger_msg FROM xxl_job_log WHERE trigger_time >= ? AND {UNSENT} \
             AND (trigger_msg LIKE ? OR trigger_msg LIKE ?)"
        );
        let args = [Arg::DateTime(self.datetime(since_ms)), Arg::Text(format!("{}%", markers[0])), Arg::Text(format!("{}%", markers[1]))];
        self.fetch_all(&sql, &args).await
    }
}

impl ScheduleLock {
    /// The rows of these jobs triggered (or planned) at or after `since_ms`.
    pub async fn job_rows(&mut self, job_ids: &[i32], since_ms: i64) -> Result<Vec<JobRowState>> {
        let since = Arg::DateTime(self.zone.to_datetime(since_ms));
        let mut rows = Vec::new();
        for chunk in job_ids.chunks(IN_LIST_MAX) {
            let sql = format!(
                "SELECT id, job_id, trigger_time, trigger_code, handle_code, trigger_msg FROM xxl_job_log \
                 WHERE job_id IN ({}) AND trigger_time >= ?",
                placeholders(chunk.len())
            );
            let mut args: Vec<Arg> = chunk.iter().map(|id| Arg::Int((*id).into())).collect();
            args.push(since.clone());
            let (tx, dialect) = self.parts();
            rows.extend(sql::fetch_all::<JobRowState>(On::Tx(tx), dialect, &sql, &args).await?);
        }
        Ok(rows)
    }

    /// [`Db::mark_sending`] under the lock.
    pub async fn mark_sending(&mut self, ids: &[i64], planned: &str, sending: &str, now_ms: i64) -> Result<Vec<i64>> {
        let now = self.zone.to_datetime(now_ms);
        let (tx, dialect) = self.parts();
        mark_sending(On::Tx(tx), dialect, now, ids, planned, sending).await
    }

    /// Gives rows that still have no result a result saying why they were not sent; returns how many.
    pub async fn settle_unsent(&mut self, ids: &[i64], code: i32, msg: &str, alarm_status: i16) -> Result<u64> {
        let (tx, dialect) = self.parts();
        settle_unsent(On::Tx(tx), dialect, ids, code, msg, alarm_status).await
    }

    /// Unsent rows since `since_ms` marked `planned`, or with a marker beginning with `sending_prefix`.
    pub async fn rows_marked(&mut self, planned: &str, sending_prefix: &str, since_ms: i64) -> Result<Vec<OwnedRow>> {
        let sql = format!(
            "SELECT id, job_id, trigger_time, trigger_msg FROM xxl_job_log WHERE trigger_time >= ? AND {UNSENT} \
             AND (trigger_msg = ? OR trigger_msg LIKE ?)"
        );
        let args = [
            Arg::DateTime(self.zone.to_datetime(since_ms)),
            Arg::Text(planned.to_string()),
            Arg::Text(format!("{sending_prefix}%")),
        ];
        let (tx, dialect) = self.parts();
        sql::fetch_all(On::Tx(tx), dialect, &sql, &args).await
    }

    /// Gives unsent rows marked `from` the marker `to`; returns how many.
    pub async fn remark(&mut self, ids: &[i64], from: &str, to: &str) -> Result<u64> {
        let mut changed = 0;
        for chunk in ids.chunks(IN_LIST_MAX) {
            let sql = format!("UPDATE xxl_job_log SET trigger_msg = ? WHERE id IN ({}) AND trigger_msg = ? AND {UNSENT}", placeholders(chunk.len()));
            let mut args = vec![Arg::Text(to.to_string())];
            args.extend(chunk.iter().map(|id| Arg::Int(*id)));
            args.push(Arg::Text(from.to_string()));
            let (tx, dialect) = self.parts();
            changed += sql::execute(On::Tx(tx), dialect, &sql, &args).await?;
        }
        Ok(changed)
    }

    /// Removes an admin's registry row (its owner is dead and its plan taken over).
    pub async fn unregister_admin(&mut self, row: &str) -> Result<u64> {
        let (tx, dialect) = self.parts();
        sql::execute(On::Tx(tx), dialect, "DELETE FROM xxl_job_lock WHERE lock_name = ?", &[Arg::Text(row.to_string())]).await
    }
}
