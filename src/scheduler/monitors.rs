//! The fail monitor (retries and alarms; 2.4.2: JobFailMonitorHelper.start) and the lost-result monitor
//! (2.4.2: JobCompleteHelper.start).

use super::complete::Completer;
use super::TriggerSink;
use crate::alarm::Alarms;
use crate::domain::codes::{AddressType, AlarmStatus};
use crate::domain::protocol::FAIL_CODE;
use crate::domain::trigger_msg::retry_block;
use crate::domain::{java_split, TriggerRequest, TriggerType};
use crate::i18n::I18n;
use crate::storage::{Db, JobInfo, JobLog, Result, TriggerInfo};
use crate::time::{sleep_unless_cancelled, Clock};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

const FAIL_BATCH: i64 = 1000;
const FAIL_INTERVAL: Duration = Duration::from_secs(10);
/// Alarms of one pass sent at the same time: a channel that hangs until its timeout delays neither the
/// retries nor the other alarms of the pass.
const ALARMS_IN_FLIGHT: usize = 16;
const LOST_INTERVAL: Duration = Duration::from_secs(60);
/// Lost logs looked up by one statement; a pass reads on until it finds fewer.
const LOST_BATCH: i64 = 1000;
/// A running log older than this on an executor that is no longer registered has lost its result.
const LOST_AFTER_MS: i64 = 10 * 60 * 1000;
/// A row still without a trigger result this long after its trigger time was abandoned by the admin that
/// wrote it (killed, or cut off from the database for good). A live admin settles every row within the
/// misfire threshold (5 s) plus one `/run` (6 s at most) per address it tries, far below this.
pub const LOST_RESULT_AFTER_MS: i64 = 60 * 1000;
const SWEEP_INTERVAL: Duration = Duration::from_secs(10);
const SWEEP_BATCH: i64 = 1000;

pub struct FailMonitor {
    pub db: Db,
    pub i18n: I18n,
    pub triggers: Arc<dyn TriggerSink>,
    pub alarms: Alarms,
    pub cursor: FailCursor,
}

/// Where the fail monitor's search for failed triggers without a result starts. Such a row keeps
/// `handle_code = 0` for ever, beside every trigger still running, so a search from the first row reads
/// more the longer the admin runs; a row whose trigger code is written keeps it, so the search starts
/// after the last row whose trigger had a result when a pass looked.
#[derive(Default)]
pub struct FailCursor {
    /// Below this id, every failed trigger without a result has been found.
    after: i64,
    /// The highest id at each of the last passes, oldest first. Ids are handed out before their rows
    /// commit; only ids [`COMMITTED_PASSES`] passes old are sure to be in the table.
    newest: VecDeque<i64>,
    passes: u32,
}

/// Passes (10 s apart) an id must be old for the cursor to move past it: a minute, as long as a row may
/// wait for its trigger result (`LOST_RESULT_AFTER_MS`).
const COMMITTED_PASSES: usize = 6;
/// Every this many passes (10 minutes) the search starts from the first row again, whatever the cursor
/// says.
const RESCAN_EVERY: u32 = 60;

impl FailCursor {
    /// Where this pass searches from, and where the next may, if this one finds all it looks for. The
    /// second is read before the search, so a trigger failing meanwhile is either found or after it.
    async fn before_pass(&mut self, db: &Db) -> Result<(i64, i64)> {
        if self.passes % RESCAN_EVERY == 0 {
            self.after = 0;
        }
        self.passes = self.passes.wrapping_add(1);
        self.newest.push_back(db.max_log_id().await?);
        let committed = if self.newest.len() > COMMITTED_PASSES { self.newest.pop_front() } else { None };
        let untriggered = db.first_untriggered_log_after(self.after).await?;
        let next = committed.unwrap_or(self.after).min(untriggered.map_or(i64::MAX, |id| id - 1));
        Ok((self.after, next.max(self.after)))
    }
}

impl FailMonitor {
    pub async fn run(mut self, shutdown: CancellationToken) {
        loop {
            if let Err(e) = self.pass().await {
                tracing::error!("fail monitor pass failed: {e}");
            }
            if !sleep_unless_cancelled(&shutdown, FAIL_INTERVAL).await {
                break;
            }
        }
    }

    /// Handles every failed log not yet examined; returns how many this admin claimed. Retries are
    /// submitted in order; alarms go out concurrently and each releases its log when it is done.
    pub async fn pass(&mut self) -> Result<usize> {
        let mut claimed = 0;
        let mut alarms = JoinSet::new();
        let mut alarm_logs = HashMap::new();
        let in_flight = Arc::new(Semaphore::new(ALARMS_IN_FLIGHT));
        let mut outcome = Ok(());
        let (after, next) = self.cursor.before_pass(&self.db).await?;
        let failed = self.db.find_fail_log_ids(after, FAIL_BATCH).await?;
        let all_found = failed.len() < FAIL_BATCH as usize;
        for id in failed {
            // The optimistic claim keeps admins sharing the database from handling a log twice.
            match self.db.update_alarm_status(id, AlarmStatus::New, AlarmStatus::Locked).await {
                Ok(0) => continue,
                Ok(_) => claimed += 1,
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
            match self.retry(id).await {
                Ok(Some((job, log))) => {
                    let (sender, db, in_flight) = (self.alarms.clone(), self.db.clone(), in_flight.clone());
                    let task = alarms.spawn(async move {
                        let _permit = in_flight.acquire_owned().await;
                        let status =
                            if sender.send(job, log).await { AlarmStatus::Sent } else { AlarmStatus::Failed };
                        release(&db, id, status).await
                    });
                    alarm_logs.insert(task.id(), id);
                }
                Ok(None) => outcome = outcome.and(release(&self.db, id, AlarmStatus::NotNeeded).await),
                Err(e) => {
                    tracing::error!(log_id = id, "fail monitor: {e}");
                    // Released even after an error, so no row is left locked for ever (2.4.2 can leave -1).
                    outcome = outcome.and(release(&self.db, id, AlarmStatus::Failed).await);
                }
            }
        }
        // Every claimed log is released before the pass ends, even when one release failed.
        while let Some(joined) = alarms.join_next().await {
            match joined {
                Ok(released) => outcome = outcome.and(released),
                Err(e) => {
                    let id = alarm_logs.get(&e.id()).copied().unwrap_or_default();
                    tracing::error!(log_id = id, "fail monitor: the alarm failed: {e}");
                    outcome = outcome.and(release(&self.db, id, AlarmStatus::Failed).await);
                }
            }
        }
        if all_found && outcome.is_ok() {
            self.cursor.after = next;
        }
        outcome.map(|()| claimed)
    }

    /// Submits the retry of a failed log, if it has retries left; returns the job and log to alarm
    /// about, or `None` when the log or its job no longer exists.
    async fn retry(&self, id: i64) -> Result<Option<(JobInfo, JobLog)>> {
        let Some(log) = self.db.load_log(id).await? else { return Ok(None) };
        let job = self.db.load_job(log.job_id).await?;
        if log.executor_fail_retry_count > 0 {
            self.triggers.submit(TriggerRequest {
                fail_retry_count: log.executor_fail_retry_count - 1,
                sharding_param: log.executor_sharding_param.clone(),
                executor_param: log.executor_param.clone(),
                ..TriggerRequest::of_job(log.job_id, TriggerType::Retry)
            });
            self.note_retry(&log).await?;
        }
        Ok(job.map(|job| (job, log)))
    }

    async fn note_retry(&self, log: &JobLog) -> Result<()> {
        let mut msg = log.trigger_msg.clone().unwrap_or_default();
        msg.push_str(&retry_block(&self.i18n));
        let info = TriggerInfo {
            trigger_time_ms: log.trigger_time.map(|t| self.db.zone().to_epoch_ms(t)).unwrap_or(0),
            trigger_code: log.trigger_code,
            trigger_msg: Some(msg.into()),
            executor_address: log.executor_address.clone(),
            executor_handler: log.executor_handler.clone(),
            executor_param: log.executor_param.clone(),
            executor_sharding_param: log.executor_sharding_param.clone(),
            executor_fail_retry_count: log.executor_fail_retry_count,
        };
        self.db.update_trigger_info(log.id, &info).await?;
        Ok(())
    }
}

/// Ends the claim on a failed log with its outcome.
async fn release(db: &Db, id: i64, status: AlarmStatus) -> Result<()> {
    db.update_alarm_status(id, AlarmStatus::Locked, status).await.map(|_| ())
}

/// Settles rows whose trigger result was lost with the admin that wrote them (2.4.2: XxlJobTrigger.trigger
/// leaves such rows "running" for ever; see docs/differences.md): on every admin, at start and every
/// [`SWEEP_INTERVAL`]. A leader's plan is taken over by its successor, so these are triggers of an admin that
/// died between a row and its result, or a plan nobody could take over in time; a FIRE_ONCE_NOW job's missed
/// instants are compensated by the schedule pass, which finds its next time missed.
pub struct ResultSweeper {
    pub db: Db,
    pub i18n: I18n,
    pub clock: Arc<dyn Clock>,
}

impl ResultSweeper {
    pub async fn run(self, shutdown: CancellationToken) {
        loop {
            match self.pass().await {
                Ok(0) => {}
                Ok(n) => {
                    tracing::warn!("{n} trigger(s) whose result was lost with their admin settled as failed")
                }
                Err(e) => tracing::error!("lost-result sweep failed: {e}"),
            }
            if !sleep_unless_cancelled(&shutdown, SWEEP_INTERVAL).await {
                break;
            }
        }
    }

    /// Settles up to [`SWEEP_BATCH`] abandoned rows; returns how many this admin settled (a row settled
    /// meanwhile by another admin, or given its real result, is not counted).
    pub async fn pass(&self) -> Result<u64> {
        let ids =
            self.db.find_unsettled_logs(self.clock.now_ms() - LOST_RESULT_AFTER_MS, SWEEP_BATCH).await?;
        if ids.is_empty() {
            return Ok(0);
        }
        self.db
            .settle_unsent(&ids, FAIL_CODE, self.i18n.get("joblog_trigger_result_lost"), AlarmStatus::New)
            .await
    }
}

pub struct LostMonitor {
    pub db: Db,
    pub i18n: I18n,
    pub completer: Completer,
    pub clock: Arc<dyn Clock>,
}

impl LostMonitor {
    pub async fn run(self, shutdown: CancellationToken) {
        if !sleep_unless_cancelled(&shutdown, Duration::from_millis(50)).await {
            return;
        }
        loop {
            if let Err(e) = self.pass().await {
                tracing::error!("lost-result monitor pass failed: {e}");
            }
            if !sleep_unless_cancelled(&shutdown, LOST_INTERVAL).await {
                break;
            }
        }
    }

    /// Fails running logs whose executor went away; returns how many were failed.
    pub async fn pass(&self) -> Result<usize> {
        let mut failed = 0;
        let losed_time = self.clock.now_ms() - LOST_AFTER_MS;
        let mut after = 0;
        loop {
            let ids = self.db.find_lost_log_ids(losed_time, after, LOST_BATCH).await?;
            for &id in &ids {
                let Some(log) = self.db.load_log(id).await? else { continue };
                if self.runs_on_manual_address(&log).await? {
                    continue;
                }
                let msg = self.i18n.get("joblog_lost_fail").to_string();
                // Guarded: a callback arriving meanwhile wins over the "lost" verdict.
                if self.completer.finish(&log, 500, msg, true).await? {
                    failed += 1;
                }
            }
            match ids.last() {
                Some(&last) if ids.len() == LOST_BATCH as usize => after = last,
                _ => return Ok(failed),
            }
        }
    }

    /// Executors of manually entered groups need not register, so having no registry row says nothing
    /// about them: 2.4.2 fails their long runs as lost, we leave them running while the address is listed.
    async fn runs_on_manual_address(&self, log: &JobLog) -> Result<bool> {
        let (Some(address), Some(group)) =
            (log.executor_address.as_deref(), self.db.load_group(log.job_group).await?)
        else {
            return Ok(false);
        };
        let listed = group
            .address_list
            .as_deref()
            .is_some_and(|list| java_split(list).iter().any(|a| a.trim() == address.trim()));
        Ok(group.address_type == AddressType::Manual && listed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::testing::memory_db;
    use crate::storage::Arg;

    async fn log(db: &Db, trigger_code: i64, handle_code: i64) -> i64 {
        let insert =
            "INSERT INTO xxl_job_log (job_group, job_id, trigger_code, handle_code) VALUES (1, 1, ?, ?)";
        db.insert_id(insert, &[Arg::Int(trigger_code), Arg::Int(handle_code)]).await.unwrap()
    }

    async fn set_codes(db: &Db, id: i64, trigger_code: i64, alarm_status: i64) {
        let update = "UPDATE xxl_job_log SET trigger_code = ?, alarm_status = ? WHERE id = ?";
        db.execute(update, &[Arg::Int(trigger_code), Arg::Int(alarm_status), Arg::Int(id)]).await.unwrap();
    }

    /// A pass that finds everything it looks for, as `FailMonitor::pass` moves the cursor then.
    async fn pass(cursor: &mut FailCursor, db: &Db) -> Vec<i64> {
        let (after, next) = cursor.before_pass(db).await.unwrap();
        let found = db.find_fail_log_ids(after, FAIL_BATCH).await.unwrap();
        cursor.after = next;
        found
    }

    #[tokio::test]
    async fn the_search_for_failed_triggers_skips_only_rows_whose_trigger_code_is_final() {
        let db = memory_db().await;
        let mut cursor = FailCursor::default();
        let first = log(&db, 200, 200).await;
        let failed = log(&db, 500, 0).await;
        let planned = log(&db, 0, 0).await;
        log(&db, 200, 200).await;
        let failed_run = log(&db, 200, 500).await;
        assert_eq!(pass(&mut cursor, &db).await, [failed, failed_run]);
        set_codes(&db, failed, 500, i64::from(AlarmStatus::Sent.code())).await;
        set_codes(&db, failed_run, 200, i64::from(AlarmStatus::Sent.code())).await;

        // Ids not yet a minute old are not skipped; then the search starts below the planned row.
        for _ in 0..COMMITTED_PASSES {
            assert_eq!(cursor.after, 0);
            assert!(pass(&mut cursor, &db).await.is_empty());
        }
        assert_eq!(cursor.after, planned - 1);

        // The planned row's trigger fails afterwards, and a new row fails: both are found.
        set_codes(&db, planned, 500, 0).await;
        let later = log(&db, 500, 0).await;
        assert_eq!(pass(&mut cursor, &db).await, [planned, later]);

        // Once every row below has its trigger code, the search starts after the ids a minute old.
        set_codes(&db, planned, 500, i64::from(AlarmStatus::Sent.code())).await;
        set_codes(&db, later, 500, i64::from(AlarmStatus::Sent.code())).await;
        for _ in 0..COMMITTED_PASSES {
            pass(&mut cursor, &db).await;
        }
        assert_eq!(cursor.after, later);
        // A late result other than 0 and 200 is found below it too.
        db.execute("UPDATE xxl_job_log SET handle_code = 500 WHERE id = ?", &[Arg::Int(first)])
            .await
            .unwrap();
        assert_eq!(pass(&mut cursor, &db).await, [first]);
        set_codes(&db, first, 200, i64::from(AlarmStatus::Sent.code())).await;

        // Every RESCAN_EVERY passes it starts from the first row again.
        set_codes(&db, failed, 500, 0).await;
        while cursor.passes % RESCAN_EVERY != 0 {
            pass(&mut cursor, &db).await;
        }
        assert_eq!(pass(&mut cursor, &db).await, [failed]);
    }
}
