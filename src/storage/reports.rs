//! `xxl_job_log_report` statements (spec 7.4).

use super::{on_pool, Db, DayCounts, LogReport, ReportTotals, Result};
use chrono::NaiveDateTime;

impl Db {
    /// Writes a day's counters: update by `trigger_day`, insert when no row matched.
    pub async fn save_report(&self, trigger_day: NaiveDateTime, counts: &DayCounts) -> Result<()> {
        let (running, success, fail) = (counts.running, counts.success, counts.fail());
        let matched = on_pool!(self, |p| sqlx::query(
            "UPDATE xxl_job_log_report SET running_count = ?, suc_count = ?, fail_count = ? WHERE trigger_day = ?"
        )
        .bind(running)
        .bind(success)
        .bind(fail)
        .bind(trigger_day)
        .execute(p)
        .await
        .map(|r| r.rows_affected()))?;
        if matched < 1 {
            let inserted = on_pool!(self, |p| sqlx::query(
                "INSERT INTO xxl_job_log_report (trigger_day, running_count, suc_count, fail_count) VALUES (?, ?, ?, ?)"
            )
            .bind(trigger_day)
            .bind(running)
            .bind(success)
            .bind(fail)
            .execute(p)
            .await
            .map(|_| ()));
            match inserted {
                // Another admin created the day's row in the meantime; its next pass keeps it current.
                Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {}
                other => {
                    other?;
                }
            }
        }
        Ok(())
    }

    pub async fn reports_between(&self, from: NaiveDateTime, to: NaiveDateTime) -> Result<Vec<LogReport>> {
        Ok(on_pool!(self, |p| sqlx::query_as(
            "SELECT * FROM xxl_job_log_report WHERE trigger_day BETWEEN ? AND ? ORDER BY trigger_day ASC"
        )
        .bind(from)
        .bind(to)
        .fetch_all(p)
        .await)?)
    }

    pub async fn report_totals(&self) -> Result<ReportTotals> {
        Ok(on_pool!(self, |p| sqlx::query_as(
            "SELECT CAST(COALESCE(SUM(running_count), 0) AS SIGNED) AS running, \
             CAST(COALESCE(SUM(suc_count), 0) AS SIGNED) AS success, \
             CAST(COALESCE(SUM(fail_count), 0) AS SIGNED) AS fail FROM xxl_job_log_report"
        )
        .fetch_one(p)
        .await)?)
    }
}
