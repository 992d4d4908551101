//! Console logouts shared by every admin of one database, without a new table: one `xxl_job_lock` row per
//! session ended before its expiry, named [`LOGOUT_PREFIX`] + the session's expiry (epoch seconds, ten
//! digits) + `:` + the session id. No admin, Java or ours, locks such a row; the Java admin reads only
//! `schedule_lock`. The fixed-width expiry makes the rows of expired sessions one name range, removed at
//! each logout.

use super::{Arg, Db, Result};

/// `xxl_job_lock.lock_name` of an ended session starts with this.
pub const LOGOUT_PREFIX: &str = "logout:";

/// The row name of the session `id` expiring at `exp_ms` (at most 7 + 10 + 1 + 22 of the column's 50).
pub fn logout_row(exp_ms: i64, id: &str) -> String {
    format!("{LOGOUT_PREFIX}{:010}:{id}", exp_ms.div_euclid(1000).max(0))
}

impl Db {
    /// Records an ended session, and forgets those that have expired anyway.
    pub async fn record_logout(&self, row: &str, now_ms: i64) -> Result<()> {
        self.insert_once("INSERT INTO xxl_job_lock (lock_name) VALUES (?)", &[Arg::Text(row.to_string())])
            .await?;
        let expired_below = logout_row(now_ms, "");
        self.execute(
            "DELETE FROM xxl_job_lock WHERE lock_name LIKE ? AND lock_name < ?",
            &[Arg::Text(format!("{LOGOUT_PREFIX}%")), Arg::Text(expired_below)],
        )
        .await?;
        Ok(())
    }

    /// Whether the session of `row` was ended on any admin.
    pub async fn logout_recorded(&self, row: &str) -> Result<bool> {
        Ok(self
            .scalar("SELECT COUNT(*) FROM xxl_job_lock WHERE lock_name = ?", &[Arg::Text(row.to_string())])
            .await?
            > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_fit_the_column_and_sort_by_expiry() {
        let row = logout_row(1_795_615_030_123, "AAAAAAAAAAAAAAAAAAAAAA");
        assert_eq!(row, "logout:1795615030:AAAAAAAAAAAAAAAAAAAAAA");
        assert!(row.len() <= 50);
        assert!(logout_row(999_000, "z") < logout_row(1_000_000, ""), "fixed width keeps the order numeric");
    }
}
