//! The fail monitor (retries and alarms, spec 4.5) and the lost-result monitor (spec 4.6).

use crate::alarm::Alarms;
use super::complete::Completer;
use super::TriggerSink;
use crate::domain::protocol::FAIL_CODE;
use crate::domain::trigger_msg::retry_block;
use crate::domain::{java_split, TriggerRequest, TriggerType};
use crate::i18n::I18n;
use crate::storage::{Db, JobInfo, JobLog, Result, TriggerInfo};
use crate::time::Clock;
use crate::workers::Shutdown;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// `alarm_status` values (spec 3.7).
pub mod alarm_status {
    pub const NEW: i16 = 0;
    pub const LOCKED: i16 = -1;
    pub const NOT_NEEDED: i16 = 1;
    pub const SENT: i16 = 2;
    pub const FAILED: i16 = 3;
}

const FAIL_BATCH: i64 = 1000;
const FAIL_INTERVAL: Duration = Duration::from_secs(10);
/// Alarms of one pass sent at the same time: a channel that hangs until its timeout delays neither the
/// retries nor the other alarms of the pass.
const ALARMS_IN_FLIGHT: usize = 16;
const LOST_INTERVAL: Duration = Duration::from_secs(60);
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
}

impl FailMonitor {
    pub async fn run(self, mut shutdown: Shutdown) {
        loop {
            if let Err(e) = self.pass().await {
                tracing::error!("fail monitor pass failed: {e}");
            }
            if !shutdown.sleep(FAIL_INTERVAL).await {
                break;
            }
        }
    }

    /// Handles every failed log not yet examined; returns how many this admin claimed. Retries are
    /// submitted in order; alarms go out concurrently and each releases its log when it is done.
    pub async fn pass(&self) -> Result<usize> {
        let mut claimed = 0;
        let mut alarms = JoinSet::new();
        let mut alarm_logs = HashMap::new();
        let in_flight = Arc::new(Semaphore::new(ALARMS_IN_FLIGHT));
        let mut outcome = Ok(());
        for id in self.db.find_fail_log_ids(FAIL_BATCH).await? {
            // The optimistic claim keeps admins sharing the database from handling a log twice.
            match self.db.update_alarm_status(id, alarm_status::NEW, alarm_status::LOCKED).await {
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
                        let status = if sender.send(job, log).await { alarm_status::SENT } else { alarm_status::FAILED };
                        release(&db, id, status).await
                    });
                    alarm_logs.insert(task.id(), id);
                }
                Ok(None) => outcome = outcome.and(release(&self.db, id, alarm_status::NOT_NEEDED).await),
                Err(e) => {
                    tracing::error!(log_id = id, "fail monitor: {e}");
                    // Released even after an error, so no row is left locked for ever (2.4.2 can leave -1).
                    outcome = outcome.and(release(&self.db, id, alarm_status::FAILED).await);
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
                    outcome = outcome.and(release(&self.db, id, alarm_status::FAILED).await);
                }
            }
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
async fn release(db: &Db, id: i64, status: i16) -> Result<()> {
    db.update_alarm_status(id, alarm_status::LOCKED, status).await.map(|_| ())
}

/// Settles rows whose trigger result was lost with the admin that wrote them (spec 4.3 leaves such rows
/// "running" for ever, 2.4.2 issue 5): on every admin, at start and every [`SWEEP_INTERVAL`]. A leader's
/// plan is taken over by its successor, so these are triggers of an admin that died between a row and
/// its result, or a plan nobody could take over in time; a FIRE_ONCE_NOW job's missed instants are
/// compensated by the schedule pass, which finds its next time missed.
pub struct ResultSweeper {
    pub db: Db,
    pub i18n: I18n,
    pub clock: Arc<dyn Clock>,
}

impl ResultSweeper {
    pub async fn run(self, mut shutdown: Shutdown) {
        loop {
            match self.pass().await {
                Ok(0) => {}
                Ok(n) => tracing::warn!("{n} trigger(s) whose result was lost with their admin settled as failed"),
                Err(e) => tracing::error!("lost-result sweep failed: {e}"),
            }
            if !shutdown.sleep(SWEEP_INTERVAL).await {
                break;
            }
        }
    }

    /// Settles up to [`SWEEP_BATCH`] abandoned rows; returns how many this admin settled (a row settled
    /// meanwhile by another admin, or given its real result, is not counted).
    pub async fn pass(&self) -> Result<u64> {
        let ids = self.db.find_unsettled_logs(self.clock.now_ms() - LOST_RESULT_AFTER_MS, SWEEP_BATCH).await?;
        if ids.is_empty() {
            return Ok(0);
        }
        self.db.settle_unsent(&ids, FAIL_CODE, self.i18n.get("joblog_trigger_result_lost"), alarm_status::NEW).await
    }
}

pub struct LostMonitor {
    pub db: Db,
    pub i18n: I18n,
    pub completer: Completer,
    pub clock: Arc<dyn Clock>,
}

impl LostMonitor {
    pub async fn run(self, mut shutdown: Shutdown) {
        if !shutdown.sleep(Duration::from_millis(50)).await {
            return;
        }
        loop {
            if let Err(e) = self.pass().await {
                tracing::error!("lost-result monitor pass failed: {e}");
            }
            if !shutdown.sleep(LOST_INTERVAL).await {
                break;
            }
        }
    }

    /// Fails running logs whose executor went away; returns how many were failed.
    pub async fn pass(&self) -> Result<usize> {
        let mut failed = 0;
        for id in self.db.find_lost_log_ids(self.clock.now_ms() - LOST_AFTER_MS).await? {
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
        Ok(failed)
    }

    /// Executors of manually entered groups need not register, so having no registry row says nothing
    /// about them: 2.4.2 fails their long runs as lost, we leave them running while the address is listed.
    async fn runs_on_manual_address(&self, log: &JobLog) -> Result<bool> {
        let (Some(address), Some(group)) = (log.executor_address.as_deref(), self.db.load_group(log.job_group).await?)
        else {
            return Ok(false);
        };
        let listed = group.address_list.as_deref().is_some_and(|list| {
            java_split(list).iter().any(|a| a.trim() == address.trim())
        });
        Ok(group.address_type == 1 && listed)
    }
}
