//! The daily log report and log retention (spec 4.7).

use super::Shutdown;
use crate::storage::{Db, Result};
use crate::time::Clock;
use chrono::Duration as Days;
use std::sync::Arc;
use std::time::Duration;

const PASS_INTERVAL: Duration = Duration::from_secs(60);
const CLEAN_INTERVAL_MS: i64 = 24 * 60 * 60 * 1000;
const CLEAN_BATCH: i64 = 1000;
/// A short pause between delete batches so other writers get the log table in between.
const CLEAN_PAUSE: Duration = Duration::from_millis(20);

pub struct ReportWorker {
    pub db: Db,
    pub clock: Arc<dyn Clock>,
    /// `xxl.job.logretentiondays` when cleaning is enabled (>= 7).
    pub retention_days: Option<u32>,
}

impl ReportWorker {
    pub async fn run(self, mut shutdown: Shutdown) {
        let mut last_clean: Option<i64> = None;
        loop {
            if let Err(e) = self.refresh_reports().await {
                tracing::error!("log report refresh failed: {e}");
            }
            let now = self.clock.now_ms();
            if let Some(days) = self.retention_days {
                if last_clean.is_none_or(|at| now - at > CLEAN_INTERVAL_MS) {
                    match self.clean(days, &shutdown).await {
                        Ok(deleted) => {
                            last_clean = Some(now);
                            tracing::info!(deleted, "log retention: removed logs older than {days} days");
                        }
                        Err(e) => tracing::error!("log retention failed: {e}"),
                    }
                }
            }
            if !shutdown.sleep(PASS_INTERVAL).await {
                break;
            }
        }
    }

    /// Recomputes today and the two days before from the log table.
    pub async fn refresh_reports(&self) -> Result<()> {
        let now = self.clock.now_ms();
        for offset in 0..3 {
            let from = self.db.zone().start_of_day(now, -offset);
            let to = from + Days::days(1) - Days::seconds(1);
            let counts = self.db.day_counts(from, to).await?;
            self.db.save_report(from, &counts).await?;
        }
        Ok(())
    }

    /// Deletes logs triggered before local midnight `days` days ago, in batches; returns how many.
    pub async fn clean(&self, days: u32, shutdown: &Shutdown) -> Result<u64> {
        let before = self.db.zone().start_of_day(self.clock.now_ms(), -i64::from(days));
        let mut deleted = 0;
        loop {
            let ids = self.db.find_clear_log_ids(0, 0, Some(before), 0, CLEAN_BATCH).await?;
            if ids.is_empty() || shutdown.is_triggered() {
                return Ok(deleted);
            }
            deleted += self.db.delete_logs(&ids).await?;
            tokio::time::sleep(CLEAN_PAUSE).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{NaiveDate, NaiveDateTime};

    struct Fixed(i64);

    impl Clock for Fixed {
        fn now_ms(&self) -> i64 {
            self.0
        }
    }

    async fn memory_db() -> Db {
        let args = vec!["--spring.datasource.url=sqlite::memory:?serverTimezone=Asia/Shanghai".to_string()];
        let loaded = crate::config::Config::load(&args, std::iter::empty(), std::path::Path::new("/")).unwrap();
        crate::storage::connect(&loaded.config.datasource).await.unwrap().0
    }

    fn at(d: u32, h: u32, m: u32, s: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(2022, 1, d).unwrap().and_hms_opt(h, m, s).unwrap()
    }

    fn worker(db: &Db, now: NaiveDateTime) -> ReportWorker {
        ReportWorker { db: db.clone(), clock: Arc::new(Fixed(db.zone().to_epoch_ms(now))), retention_days: Some(7) }
    }

    #[tokio::test]
    async fn refresh_writes_today_and_the_two_days_before_only() {
        let db = memory_db().await;
        for (day, hour) in [(7, 1), (8, 2), (10, 23), (11, 0)] {
            db.insert_log(1, 1, db.zone().to_epoch_ms(at(day, hour, 0, 0))).await.unwrap();
        }
        // Just after midnight local time: "today" is the 10th in Shanghai, whatever the process zone.
        worker(&db, at(10, 0, 0, 5)).refresh_reports().await.unwrap();
        let rows: Vec<_> = db
            .reports_between(at(1, 0, 0, 0), at(31, 0, 0, 0))
            .await
            .unwrap()
            .into_iter()
            .map(|r| (r.trigger_day, r.running_count, r.suc_count, r.fail_count))
            .collect();
        assert_eq!(
            rows,
            vec![(Some(at(8, 0, 0, 0)), 1, 0, 0), (Some(at(9, 0, 0, 0)), 0, 0, 0), (Some(at(10, 0, 0, 0)), 1, 0, 0)]
        );
    }

    #[tokio::test]
    async fn clean_deletes_up_to_local_midnight_days_ago_in_batches() {
        let db = memory_db().await;
        let old = db.zone().to_epoch_ms(at(1, 12, 0, 0));
        for _ in 0..5 {
            db.insert_logs(&vec![(1, 1); 500], old).await.unwrap();
        }
        let edge = db.insert_log(1, 1, db.zone().to_epoch_ms(at(13, 0, 0, 0))).await.unwrap();
        let kept = db.insert_log(1, 1, db.zone().to_epoch_ms(at(13, 0, 0, 1))).await.unwrap();
        let (_trigger, shutdown) = crate::workers::shutdown_channel();
        let deleted = worker(&db, at(20, 8, 0, 0)).clean(7, &shutdown).await.unwrap();
        assert_eq!(deleted, 2501);
        assert!(db.load_log(edge).await.unwrap().is_none());
        assert!(db.load_log(kept).await.unwrap().is_some());
        // A stop request ends the loop between batches.
        db.insert_logs(&vec![(1, 1); 500], old).await.unwrap();
        let (trigger, shutdown) = crate::workers::shutdown_channel();
        trigger.trigger();
        assert_eq!(worker(&db, at(20, 8, 0, 0)).clean(7, &shutdown).await.unwrap(), 0);
    }
}
