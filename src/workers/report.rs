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
