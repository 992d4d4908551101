//! `xxl_job_log_report` statements (2.4.2: XxlJobLogReportDao).

use super::{Arg, DayCounts, Db, LogReport, ReportTotals, Result};
use chrono::NaiveDateTime;

impl Db {
    /// Writes a day's counters: update by `trigger_day`, insert when no row matched.
    pub async fn save_report(&self, trigger_day: NaiveDateTime, counts: &DayCounts) -> Result<()> {
        let day = Arg::DateTime(trigger_day);
        let (running, success, fail) =
            (Arg::Int(counts.running), Arg::Int(counts.success), Arg::Int(counts.fail()));
        self.update_or_insert(
            "UPDATE xxl_job_log_report SET running_count = ?, suc_count = ?, fail_count = ? WHERE trigger_day = ?",
            &[running.clone(), success.clone(), fail.clone(), day.clone()],
            "INSERT INTO xxl_job_log_report (trigger_day, running_count, suc_count, fail_count) VALUES (?, ?, ?, ?)",
            &[day, running, success, fail],
        )
        .await
    }

    pub async fn reports_between(&self, from: NaiveDateTime, to: NaiveDateTime) -> Result<Vec<LogReport>> {
        self.fetch_all(
            "SELECT * FROM xxl_job_log_report WHERE trigger_day BETWEEN ? AND ? ORDER BY trigger_day ASC",
            &[Arg::DateTime(from), Arg::DateTime(to)],
        )
        .await
    }

    pub async fn report_totals(&self) -> Result<ReportTotals> {
        // MySQL sums into DECIMAL, PostgreSQL into BIGINT: cast to the 64-bit integer of each.
        let sum = |column: &str| format!("CAST(COALESCE(SUM({column}), 0) AS {})", self.dialect.bigint);
        let sql = format!(
            "SELECT {} AS running, {} AS success, {} AS fail FROM xxl_job_log_report",
            sum("running_count"),
            sum("suc_count"),
            sum("fail_count")
        );
        // An aggregate without GROUP BY always yields its one row.
        Ok(self.fetch_optional(&sql, &[]).await?.unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::testing::memory_db;
    use crate::storage::{IdSpan, TriggerInfo};
    use chrono::NaiveDate;

    fn day(n: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(2021, 6, n).unwrap().and_hms_opt(0, 0, 0).unwrap()
    }

    fn end_of(n: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(2021, 6, n).unwrap().and_hms_opt(23, 59, 59).unwrap()
    }

    async fn log_at(db: &Db, at: NaiveDateTime, trigger_code: i32, handle_code: i32) {
        let ms = db.zone().to_epoch_ms(at);
        let id = db.insert_log(1, 1, ms).await.unwrap();
        let info = TriggerInfo {
            trigger_time_ms: ms,
            trigger_code,
            trigger_msg: None,
            executor_address: None,
            executor_handler: None,
            executor_param: None,
            executor_sharding_param: None,
            executor_fail_retry_count: 0,
        };
        db.update_trigger_info(id, &info).await.unwrap();
        db.update_handle_info(id, ms, handle_code, "", false).await.unwrap();
    }

    /// 2.4.2's rules: running = trigger 0/200 without a result, success = result 200, fail = the rest.
    #[tokio::test]
    async fn each_code_pair_counts_as_in_2_4_2() {
        let db = memory_db().await;
        // (trigger_code, handle_code, running, success)
        let cases = [
            (0, 0, 1, 0),
            (200, 0, 1, 0),
            (500, 0, 0, 0),
            (200, 200, 0, 1),
            (500, 200, 0, 1),
            (0, 200, 0, 1),
            (200, 500, 0, 0),
            (200, 502, 0, 0),
            (0, 500, 0, 0),
        ];
        for (n, (trigger_code, handle_code, running, success)) in cases.into_iter().enumerate() {
            let n = n as u32 + 1;
            log_at(&db, day(n) + chrono::Duration::hours(12), trigger_code, handle_code).await;
            let counts = db.day_counts(day(n), end_of(n), IdSpan::ALL).await.unwrap();
            let fail = 1 - running - success;
            assert_eq!(
                (counts.total, counts.running, counts.success, counts.fail()),
                (1, running, success, fail),
                "trigger {trigger_code}, handle {handle_code}"
            );
        }
        // The day's first and last second belong to it; an empty day is all zeros.
        log_at(&db, day(20), 200, 200).await;
        log_at(&db, end_of(20), 500, 0).await;
        log_at(&db, day(21), 200, 0).await;
        let counts = db.day_counts(day(20), end_of(20), IdSpan::ALL).await.unwrap();
        assert_eq!((counts.total, counts.running, counts.success, counts.fail()), (2, 0, 1, 1));
        assert_eq!(db.day_counts(day(25), end_of(25), IdSpan::ALL).await.unwrap(), DayCounts::default());
    }

    #[tokio::test]
    async fn a_days_row_is_inserted_once_then_updated_in_place() {
        let db = memory_db().await;
        let first = DayCounts { total: 6, running: 1, success: 2 };
        db.save_report(day(3), &first).await.unwrap();
        // Unchanged values match no changed row on MySQL; it must still not insert a second row.
        db.save_report(day(3), &first).await.unwrap();
        db.save_report(day(3), &DayCounts { total: 10, running: 0, success: 7 }).await.unwrap();
        db.save_report(day(4), &DayCounts { total: 1, running: 1, success: 0 }).await.unwrap();
        let rows: Vec<_> = db
            .reports_between(day(1), day(30))
            .await
            .unwrap()
            .into_iter()
            .map(|r| (r.trigger_day, r.running_count, r.suc_count, r.fail_count))
            .collect();
        assert_eq!(rows, vec![(Some(day(3)), 0, 7, 3), (Some(day(4)), 1, 0, 0)]);
        assert_eq!(db.report_totals().await.unwrap(), ReportTotals { running: 1, success: 7, fail: 3 });
        assert!(db.reports_between(day(5), day(30)).await.unwrap().is_empty());
    }
}
