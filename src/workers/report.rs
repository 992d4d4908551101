//! The daily log report and log retention (2.4.2: JobLogReportHelper).

use crate::storage::{DayCounts, Db, IdSpan, Result};
use crate::time::{sleep_unless_cancelled, Clock};
use chrono::{Duration as Days, NaiveDateTime};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const PASS_INTERVAL: Duration = Duration::from_secs(60);
/// Ids counted by one statement, and the pause after it: at thousands of fires a second a minute
/// brings hundreds of thousands of rows to count, and one statement over them (a second on SQLite's
/// reader) took a core from that second's triggers.
const COUNT_CHUNK: i64 = 50_000;
const COUNT_PAUSE: Duration = Duration::from_millis(20);
const CLEAN_INTERVAL_MS: i64 = 24 * 60 * 60 * 1000;
const CLEAN_BATCH: i64 = 1000;
/// A short pause between delete batches so other writers get the log table in between.
const CLEAN_PAUSE: Duration = Duration::from_millis(20);
/// Every this many passes the days are counted again from all their rows, whatever the settled counts
/// say: it catches the changes the per-pass check cannot see (a finished run killed, a failed trigger
/// that gets a late result: a count changes, not a total).
const RECOUNT_EVERY: u32 = 10;

pub struct ReportWorker {
    db: Db,
    clock: Arc<dyn Clock>,
    /// `xxl.job.logretentiondays` when cleaning is enabled (>= 7).
    retention_days: Option<u32>,
    settled: Settled,
}

/// The counts of the settled logs: those with an id up to `upto`, which all have their result. A pass
/// counts only the rows after it, so it costs the rows of the last minute rather than the whole day's
/// (2.4.2 recounts three days every minute). Settled rows change only when deleted (checked each pass by a
/// count from the trigger-time index alone) or, rarely, change result (caught by the recount).
#[derive(Default)]
struct Settled {
    upto: i64,
    days: HashMap<NaiveDateTime, DayCounts>,
    /// The highest id when the previous pass began. Ids are handed out before their rows commit, so
    /// only ids that old are sure to be in the table.
    seen: Option<i64>,
    passes: u32,
}

impl ReportWorker {
    pub fn new(db: Db, clock: Arc<dyn Clock>, retention_days: Option<u32>) -> ReportWorker {
        ReportWorker { db, clock, retention_days, settled: Settled::default() }
    }

    pub async fn run(mut self, shutdown: CancellationToken) {
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
            if !sleep_unless_cancelled(&shutdown, PASS_INTERVAL).await {
                break;
            }
        }
    }

    /// Recomputes today and the two days before from the log table.
    pub async fn refresh_reports(&mut self) -> Result<()> {
        let now = self.clock.now_ms();
        let days: Vec<(NaiveDateTime, NaiveDateTime)> = (0..3)
            .map(|offset| {
                let from = self.db.zone().start_of_day(now, -offset);
                (from, from + Days::days(1) - Days::seconds(1))
            })
            .collect();
        let newest = self.db.max_log_id().await?;
        let db = &self.db;
        let settled = &mut self.settled;
        if settled.passes % RECOUNT_EVERY == 0 {
            settled.upto = 0;
            settled.days.clear();
        }
        settled.passes = settled.passes.wrapping_add(1);
        settled.days.retain(|day, _| days.iter().any(|(from, _)| from == day));
        let upto = IdSpan { after: 0, upto: Some(settled.upto) };
        for (from, to) in &days {
            let valid = match settled.days.get(from) {
                Some(counts) => db.day_total(*from, *to, upto).await? == counts.total,
                None => false,
            };
            if !valid {
                // Rows went away (or the day is new to the window): count its settled rows afresh.
                settled.days.insert(*from, counts_in_chunks(db, (*from, *to), upto, newest).await?);
            }
        }
        // Move the bound up to the first row still running, but not past ids that may not have committed.
        let first_running = db.first_running_log_after(settled.upto).await?;
        let target = settled.seen.unwrap_or(settled.upto).min(first_running.map_or(i64::MAX, |id| id - 1));
        if target > settled.upto {
            let newly = IdSpan { after: settled.upto, upto: Some(target) };
            for (from, to) in &days {
                let counts = counts_in_chunks(db, (*from, *to), newly, newest).await?;
                settled.days.entry(*from).or_default().add(&counts);
            }
            settled.upto = target;
        }
        settled.seen = Some(newest);
        for (from, to) in &days {
            let mut counts =
                counts_in_chunks(db, (*from, *to), IdSpan { after: settled.upto, upto: None }, newest)
                    .await?;
            counts.add(&settled.days[from]);
            db.save_report(*from, &counts).await?;
        }
        Ok(())
    }

    /// Deletes logs triggered before local midnight `days` days ago, in batches; returns how many.
    pub async fn clean(&self, days: u32, shutdown: &CancellationToken) -> Result<u64> {
        let before = self.db.zone().start_of_day(self.clock.now_ms(), -i64::from(days));
        let mut deleted = 0;
        loop {
            let ids = self.db.find_clear_log_ids(0, 0, Some(before), 0, CLEAN_BATCH).await?;
            if ids.is_empty() || shutdown.is_cancelled() {
                return Ok(deleted);
            }
            deleted += self.db.delete_logs(&ids).await?;
            tokio::time::sleep(CLEAN_PAUSE).await;
        }
    }
}

/// The counts of the logs of `day` with an id in `ids`, read [`COUNT_CHUNK`] ids at a time up to
/// `newest` (and, for an open span, the rest in one more statement).
async fn counts_in_chunks(
    db: &Db,
    day: (NaiveDateTime, NaiveDateTime),
    ids: IdSpan,
    newest: i64,
) -> Result<DayCounts> {
    let (from, to) = day;
    let end = ids.upto.unwrap_or(newest);
    let mut counts = DayCounts::default();
    let mut after = ids.after;
    while after < end {
        let upto = end.min(after.saturating_add(COUNT_CHUNK));
        counts.add(&db.day_counts(from, to, IdSpan { after, upto: Some(upto) }).await?);
        after = upto;
        if after < end {
            tokio::time::sleep(COUNT_PAUSE).await;
        }
    }
    if ids.upto.is_none() {
        counts.add(&db.day_counts(from, to, IdSpan { after, upto: None }).await?);
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::Arg;
    use chrono::{NaiveDate, NaiveDateTime};

    struct Fixed(i64);

    impl Clock for Fixed {
        fn now_ms(&self) -> i64 {
            self.0
        }
    }

    async fn memory_db() -> Db {
        crate::storage::testing::memory_db_with("?serverTimezone=Asia/Shanghai").await
    }

    fn at(d: u32, h: u32, m: u32, s: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(2022, 1, d).unwrap().and_hms_opt(h, m, s).unwrap()
    }

    fn worker(db: &Db, now: NaiveDateTime) -> ReportWorker {
        ReportWorker::new(db.clone(), Arc::new(Fixed(db.zone().to_epoch_ms(now))), Some(7))
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
            vec![
                (Some(at(8, 0, 0, 0)), 1, 0, 0),
                (Some(at(9, 0, 0, 0)), 0, 0, 0),
                (Some(at(10, 0, 0, 0)), 1, 0, 0)
            ]
        );
    }

    /// Today's report row beside a count of every row, as 2.4.2's pass makes it.
    async fn pass_and_compare(worker: &mut ReportWorker, db: &Db) -> (i64, i64, i64) {
        worker.refresh_reports().await.unwrap();
        let (from, to) = (at(10, 0, 0, 0), at(10, 23, 59, 59));
        let row = db.reports_between(from, from).await.unwrap().pop().unwrap();
        let counts = db.day_counts(from, to, IdSpan::ALL).await.unwrap();
        let reported = (i64::from(row.running_count), i64::from(row.suc_count), i64::from(row.fail_count));
        assert_eq!(
            reported,
            (counts.running, counts.success, counts.fail()),
            "pass {}",
            worker.settled.passes
        );
        reported
    }

    #[tokio::test]
    async fn counting_in_chunks_of_ids_counts_every_row_once() {
        let db = memory_db().await;
        let day = (at(10, 0, 0, 0), at(10, 23, 59, 59));
        let time = db.datetime(db.zone().to_epoch_ms(at(10, 8, 0, 0)));
        // Ids on both sides of chunk bounds, a row of another day among them, one after `newest`.
        for (id, handle_code) in
            [(1, 200), (50_000, 200), (50_001, 0), (120_000, 500), (170_000, 200), (170_001, 200)]
        {
            db.execute(
                "INSERT INTO xxl_job_log (id, job_group, job_id, trigger_time, trigger_code, handle_code) VALUES (?, 1, 1, ?, 200, ?)",
                &[Arg::Int(id), Arg::DateTime(time), Arg::Int(handle_code)],
            )
            .await
            .unwrap();
        }
        db.execute("UPDATE xxl_job_log SET trigger_time = ? WHERE id = 1", &[Arg::DateTime(at(9, 8, 0, 0))])
            .await
            .unwrap();
        let span = |after, upto| IdSpan { after, upto };
        for (ids, expected) in [
            (span(0, None), (5, 1, 3)),
            (span(1, Some(120_000)), (3, 1, 1)),
            (span(50_000, Some(170_000)), (3, 1, 1)),
        ] {
            let counts = counts_in_chunks(&db, day, ids, 170_000).await.unwrap();
            assert_eq!((counts.total, counts.running, counts.success), expected, "{ids:?}");
        }
    }

    #[tokio::test]
    async fn each_pass_reports_what_counting_every_row_gives() {
        let db = memory_db().await;
        let mut worker = worker(&db, at(10, 12, 0, 0));
        let ms = |hour| db.zone().to_epoch_ms(at(10, hour, 0, 0));
        let mut ids = Vec::new();
        for hour in 0..6 {
            ids.push(db.insert_log(1, 1, ms(hour)).await.unwrap());
        }
        assert_eq!(pass_and_compare(&mut worker, &db).await, (6, 0, 0));
        for id in &ids[..4] {
            db.update_handle_info(*id, ms(7), 200, "", true).await.unwrap();
        }
        // Finished rows settle once their ids are a pass old, up to the first row still running.
        assert_eq!(pass_and_compare(&mut worker, &db).await, (2, 4, 0));
        assert_eq!(worker.settled.upto, ids[3]);
        // A settled row deleted, a new row, a running one finished: all seen on the next pass.
        db.delete_logs(&ids[..1]).await.unwrap();
        ids.push(db.insert_log(1, 1, ms(8)).await.unwrap());
        db.update_handle_info(ids[4], ms(9), 500, "", true).await.unwrap();
        assert_eq!(pass_and_compare(&mut worker, &db).await, (2, 3, 1));
        // A settled result that changes (a finished run killed) keeps the total: the recount finds it.
        db.update_handle_info(ids[1], ms(9), 500, "", false).await.unwrap();
        while worker.settled.passes % RECOUNT_EVERY != 0 {
            worker.refresh_reports().await.unwrap();
        }
        assert_eq!(pass_and_compare(&mut worker, &db).await, (2, 2, 2));
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
        let shutdown = CancellationToken::new();
        let deleted = worker(&db, at(20, 8, 0, 0)).clean(7, &shutdown).await.unwrap();
        assert_eq!(deleted, 2501);
        assert!(db.load_log(edge).await.unwrap().is_none());
        assert!(db.load_log(kept).await.unwrap().is_some());
        // A stop request ends the loop between batches.
        db.insert_logs(&vec![(1, 1); 500], old).await.unwrap();
        shutdown.cancel();
        assert_eq!(worker(&db, at(20, 8, 0, 0)).clean(7, &shutdown).await.unwrap(), 0);
    }
}
