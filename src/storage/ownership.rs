//! Statements of the leader's lease and of its planned rows (see `crate::domain::ownership`).
//!
//! The lease is one row of `xxl_job_lock`. Every change of it is conditional on what its writer expects
//! (the leader renews only its own row; a takeover replaces the row it read, under the schedule lock and
//! the row's lock), so of two admins that both believe they lead, one finds out at its next write.

use super::recovery::UNSENT;
use super::sql::{self, On};
use super::{placeholders, Arg, Db, Result, IN_LIST_MAX};
use crate::domain::codes::AlarmStatus;
use crate::domain::ownership::{Lease, Owner, PlanMarker};
use chrono::NaiveDateTime;

/// A planned row found by a takeover.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PlannedRow {
    pub id: i64,
    pub job_id: i32,
    pub job_group: i32,
    pub trigger_time: Option<NaiveDateTime>,
    pub trigger_msg: Option<String>,
}

impl PlannedRow {
    pub fn marker(&self) -> Option<PlanMarker> {
        self.trigger_msg.as_deref().and_then(PlanMarker::parse)
    }
}

/// On what condition an admin takes the lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// Whatever the lease says: the admin holds the leader's session lock, so no other leads, or it is
    /// the one admin of an SQLite file.
    Unconditional,
    /// Only if the lease was given up or not renewed for this long (where no session lock tells).
    IfVacant { lease_ms: i64 },
}

/// What taking the lease found.
#[derive(Debug)]
pub struct Takeover {
    /// The lease as this admin now holds it.
    pub lease: Lease,
    /// The lease it replaced, if there was one.
    pub previous: Option<Lease>,
    /// Planned rows released after the previous watermark: never sent, this admin's to send.
    pub planned: Vec<(PlannedRow, PlanMarker)>,
    /// Planned rows released at or before it and still without a result: they may have been sent.
    pub uncertain: Vec<i64>,
}

impl Db {
    /// The lease row, if an admin leads (or led and died).
    pub async fn lease(&self) -> Result<Option<Lease>> {
        let rows: Vec<(String,)> =
            self.fetch_all(LEASE_ROWS, &[Arg::Text(format!("{}%", Lease::PREFIX))]).await?;
        Ok(current_lease(rows))
    }

    /// Replaces the lease row `current` by `next`; `false` when there is no such row (another admin took
    /// the lease over, or an earlier renewal whose answer was lost wrote another: see [`Db::own_lease`]).
    /// The row is matched exactly: a range would lock the `schedule_lock` row beside it (InnoDB locks the
    /// next key), and wait for every schedule pass.
    pub async fn renew_lease(&self, current: &Lease, next: &Lease) -> Result<bool> {
        let args = [Arg::Text(next.row_name()), Arg::Text(current.row_name())];
        Ok(self.execute("UPDATE xxl_job_lock SET lock_name = ? WHERE lock_name = ?", &args).await? > 0)
    }

    /// Removes the lease row `lease`, if it is still as written.
    pub async fn remove_lease(&self, lease: &Lease) -> Result<u64> {
        self.execute("DELETE FROM xxl_job_lock WHERE lock_name = ?", &[Arg::Text(lease.row_name())]).await
    }

    /// `owner`'s lease row as stored, if it still has one.
    pub async fn own_lease(&self, owner: Owner) -> Result<Option<Lease>> {
        let rows: Vec<(String,)> =
            self.fetch_all(LEASE_ROWS, &[Arg::Text(format!("{}%", Lease::prefix_of(owner)))]).await?;
        Ok(current_lease(rows))
    }

    /// Takes the lease for `me` at `now_ms` on `claim`'s condition, under the schedule lock (so no pass
    /// of the previous leader is half seen); `None` when the condition does not hold. Reads the previous
    /// leader's planned rows of the last `since_ms`: those released after its watermark are this admin's
    /// to send, the others may have been sent.
    pub async fn take_lease(
        &self,
        me: Owner,
        now_ms: i64,
        claim: Claim,
        since_ms: i64,
    ) -> Result<Option<Takeover>> {
        let mut lock = self.lock_schedule().await?;
        let (tx, dialect) = lock.parts();
        // The row lock waits for a renewal in flight, and makes the leader's next one wait for this.
        let for_update = if dialect.lock_row.is_some() { " FOR UPDATE" } else { "" };
        let prefix = Arg::Text(format!("{}%", Lease::PREFIX));
        let rows: Vec<(String,)> = sql::fetch_all(
            On::Tx(tx),
            dialect,
            &format!("{LEASE_ROWS}{for_update}"),
            std::slice::from_ref(&prefix),
        )
        .await?;
        let previous = current_lease(rows);
        if let (Claim::IfVacant { lease_ms }, Some(held)) = (claim, previous) {
            if !held.is_vacant(now_ms, lease_ms) {
                return Ok(None);
            }
        }
        let lease =
            Lease { owner: me, watermark_ms: previous.map_or(0, |p| p.watermark_ms), renewed_ms: now_ms };
        sql::execute(On::Tx(tx), dialect, "DELETE FROM xxl_job_lock WHERE lock_name LIKE ?", &[prefix])
            .await?;
        sql::execute(
            On::Tx(tx),
            dialect,
            "INSERT INTO xxl_job_lock (lock_name) VALUES (?)",
            &[Arg::Text(lease.row_name())],
        )
        .await?;
        let select = format!(
            "SELECT id, job_id, job_group, trigger_time, trigger_msg FROM xxl_job_log \
             WHERE trigger_time >= ? AND {UNSENT} AND trigger_msg LIKE ?"
        );
        let args = [Arg::DateTime(lock.zone.to_datetime(since_ms)), Arg::Text(PlanMarker::PATTERN.into())];
        let (tx, dialect) = lock.parts();
        let rows: Vec<PlannedRow> = sql::fetch_all(On::Tx(tx), dialect, &select, &args).await?;
        lock.commit().await?;
        let mut planned = Vec::new();
        let mut uncertain = Vec::new();
        for row in rows {
            match row.marker() {
                Some(marker) if marker.release_ms > lease.watermark_ms => planned.push((row, marker)),
                _ => uncertain.push(row.id),
            }
        }
        Ok(Some(Takeover { lease, previous, planned, uncertain }))
    }

    /// Of these planned rows, those that exist still planned and unsent: a pass whose COMMIT got no
    /// answer may or may not have written them.
    pub async fn planned_rows_present(&self, ids: &[i64]) -> Result<Vec<i64>> {
        let mut present = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(IN_LIST_MAX) {
            let sql = format!(
                "SELECT id FROM xxl_job_log WHERE id IN ({}) AND {UNSENT} AND trigger_msg LIKE ?",
                placeholders(chunk.len())
            );
            let mut args: Vec<Arg> = chunk.iter().map(|id| Arg::Int(*id)).collect();
            args.push(Arg::Text(PlanMarker::PATTERN.into()));
            let rows: Vec<(i64,)> = self.fetch_all(&sql, &args).await?;
            present.extend(rows.into_iter().map(|(id,)| id));
        }
        Ok(present)
    }

    /// Gives rows of `ids` that still have no result a result that says why they were not sent; returns
    /// how many.
    pub async fn settle_unsent(
        &self,
        ids: &[i64],
        code: i32,
        msg: &str,
        alarm_status: AlarmStatus,
    ) -> Result<u64> {
        let mut settled = 0;
        for chunk in ids.chunks(IN_LIST_MAX) {
            let sql = format!(
                "UPDATE xxl_job_log SET trigger_code = ?, trigger_msg = ?, alarm_status = ? WHERE id IN ({}) AND {UNSENT}",
                placeholders(chunk.len())
            );
            let mut args =
                vec![Arg::Int(code.into()), Arg::Text(msg.to_string()), Arg::Int(alarm_status.code().into())];
            args.extend(chunk.iter().map(|id| Arg::Int(*id)));
            settled += self.execute(&sql, &args).await?;
        }
        Ok(settled)
    }
}

/// Every lease row (normally one).
const LEASE_ROWS: &str = "SELECT lock_name FROM xxl_job_lock WHERE lock_name LIKE ?";

/// The lease of these rows: the one with the highest watermark, should a bug ever have left two.
fn current_lease(rows: Vec<(String,)>) -> Option<Lease> {
    rows.iter().filter_map(|(name,)| Lease::parse(name)).max_by_key(|l| (l.watermark_ms, l.renewed_ms))
}
