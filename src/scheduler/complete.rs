//! Finishing executions: executor callbacks, the lost-result monitor and console kills all end here
//! (spec 1.6, 1.7).

use super::TriggerSink;
use crate::domain::callback::{append_handle_msg, plan_children, truncate_utf16, MAX_HANDLE_MSG_UTF16};
use crate::domain::{HandleCallbackParam, TriggerRequest, TriggerType};
use crate::i18n::I18n;
use crate::storage::{Db, JobLog, Result};
use crate::time::Clock;
use std::sync::Arc;

#[derive(Clone)]
pub struct Completer {
    db: Db,
    i18n: I18n,
    triggers: Arc<dyn TriggerSink>,
    clock: Arc<dyn Clock>,
}

/// What became of one callback item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallbackOutcome {
    Finished,
    UnknownLog,
    AlreadyFinished,
}

impl Completer {
    pub fn new(db: Db, i18n: I18n, triggers: Arc<dyn TriggerSink>, clock: Arc<dyn Clock>) -> Completer {
        Completer { db, i18n, triggers, clock }
    }

    /// Applies a callback batch in order. Unknown and already finished logs are reported, not failed:
    /// executors resend every batch not acknowledged with 200, forever. Only a database error fails the
    /// batch, so the executor keeps it and resends it later instead of it being lost.
    pub async fn callback(&self, items: &[HandleCallbackParam]) -> Result<Vec<CallbackOutcome>> {
        let mut outcomes = Vec::with_capacity(items.len());
        for item in items {
            let outcome = match self.db.load_log(item.log_id).await? {
                None => CallbackOutcome::UnknownLog,
                Some(log) if log.handle_code > 0 => CallbackOutcome::AlreadyFinished,
                Some(log) => {
                    let msg = append_handle_msg(log.handle_msg.as_deref(), item.handle_msg.as_deref());
                    if self.finish(&log, item.handle_code, msg, true).await? {
                        CallbackOutcome::Finished
                    } else {
                        CallbackOutcome::AlreadyFinished
                    }
                }
            };
            match outcome {
                CallbackOutcome::Finished => {}
                CallbackOutcome::UnknownLog => tracing::warn!(log_id = item.log_id, "callback for an unknown log"),
                CallbackOutcome::AlreadyFinished => {
                    tracing::warn!(log_id = item.log_id, "repeated callback for a finished log ignored")
                }
            }
            outcomes.push(outcome);
        }
        Ok(outcomes)
    }

    /// The finish procedure: appends the child-job report on success, writes the result and starts the
    /// children. With `only_if_unfinished` the write happens only while the row has no result, so two
    /// racing finishers cannot both win (and start the children twice). Returns whether it was written.
    pub async fn finish(&self, log: &JobLog, handle_code: i32, mut handle_msg: String, only_if_unfinished: bool) -> Result<bool> {
        let mut children = Vec::new();
        if handle_code == 200 {
            if let Some(job) = self.db.load_job(log.job_id).await? {
                if let Some(plan) = plan_children(job.child_jobid.as_deref(), &self.i18n) {
                    handle_msg.push_str(&plan.message);
                    children = plan.job_ids;
                }
            }
        }
        let handle_msg = truncate_utf16(handle_msg, MAX_HANDLE_MSG_UTF16);
        let now = self.clock.now_ms();
        let written = self.db.update_handle_info(log.id, now, handle_code, &handle_msg, only_if_unfinished).await? > 0;
        if written {
            for child in children {
                self.triggers.submit(TriggerRequest::of_job(child, TriggerType::Parent));
            }
        }
        Ok(written)
    }
}
