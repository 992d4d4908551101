//! Finishing executions: executor callbacks, the lost-result monitor and console kills all end here
//! (2.4.2: JobCompleteHelper.callback, XxlJobCompleter.updateHandleInfoAndFinish).

use super::results::{Join, Results};
use super::workflow::Workflows;
use super::TriggerSink;
use crate::domain::callback::{append_handle_msg, plan_children, truncate_utf16, MAX_HANDLE_MSG_UTF16};
use crate::domain::{HandleCallbackParam, TriggerRequest, TriggerType};
use crate::i18n::I18n;
use crate::storage::{Db, HandleInfo, HandleState, JobLog, Result};
use crate::time::Clock;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

#[derive(Clone)]
pub struct Completer {
    db: Db,
    i18n: I18n,
    triggers: Arc<dyn TriggerSink>,
    clock: Arc<dyn Clock>,
    /// Trigger results not yet written, which a callback joins (one UPDATE for both).
    results: Arc<Results>,
    /// Told which logs got their result, so that the workflow runs they belong to go on at once.
    workflows: Workflows,
}

/// What became of one callback item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallbackOutcome {
    Finished,
    UnknownLog,
    AlreadyFinished,
}

impl Completer {
    pub fn new(
        db: Db,
        i18n: I18n,
        triggers: Arc<dyn TriggerSink>,
        clock: Arc<dyn Clock>,
        results: Arc<Results>,
        workflows: Workflows,
    ) -> Completer {
        Completer { db, i18n, triggers, clock, results, workflows }
    }

    async fn handle_states(&self, ids: &[i64]) -> Result<HashMap<i64, HandleState>> {
        Ok(self.db.load_handle_states(ids).await?.into_iter().map(|l| (l.id, l)).collect())
    }

    /// Applies a callback batch. Unknown and already finished logs are reported, not failed: executors
    /// resend every batch not acknowledged with 200, forever. Only a database error fails the batch, so
    /// the executor keeps it and resends it later instead of it being lost.
    ///
    /// A result whose trigger result is still waiting to be written joins it (see [`Results`]). The other
    /// logs are read by one statement, and results without child jobs are written by one guarded UPDATE
    /// per distinct (code, message), normally one for the whole batch. Results that start child jobs, and
    /// repeats of a log within the batch, take the one-by-one path after them, in order.
    pub async fn callback(&self, items: &[HandleCallbackParam]) -> Result<Vec<CallbackOutcome>> {
        let mut outcomes = vec![CallbackOutcome::AlreadyFinished; items.len()];
        let joining = self.join_waiting(items, &mut outcomes);
        let sorted = self.sort_rest(items, joining.rest, &mut outcomes).await?;
        self.write_batches(items, sorted.batches, &mut outcomes).await?;
        self.finish_one_by_one(items, sorted.one_by_one, &mut outcomes).await?;
        // Answered once the results it joined are written: the executor keeps the callback until then.
        if let Some(round) = joining.round {
            self.results.written(round).await?;
        }
        log_refused(items, &outcomes);
        let finished = items.iter().zip(&outcomes).filter(|(_, o)| **o == CallbackOutcome::Finished);
        self.workflows.finished_logs(finished.map(|(item, _)| item.log_id).collect());
        Ok(outcomes)
    }

    /// Joins each item whose trigger result is still waiting to be written, and has those written; the
    /// other items are left for the database.
    fn join_waiting(&self, items: &[HandleCallbackParam], outcomes: &mut [CallbackOutcome]) -> Joining {
        let now = self.clock.now_ms();
        let mut round = None;
        let mut joined = HashSet::new();
        let mut seen = HashSet::with_capacity(items.len());
        let mut rest = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            if !seen.insert(item.log_id) {
                // A repeat of a log the batch already joined is finished by then.
                if !joined.contains(&item.log_id) {
                    rest.push(index);
                }
                continue;
            }
            let msg =
                truncate_utf16(append_handle_msg(None, item.handle_msg.as_deref()), MAX_HANDLE_MSG_UTF16);
            match self.results.join(item.log_id, HandleInfo { time_ms: now, code: item.handle_code, msg }) {
                Join::Joined(n) => {
                    outcomes[index] = CallbackOutcome::Finished;
                    joined.insert(item.log_id);
                    round = Some(n);
                }
                Join::Repeated => outcomes[index] = CallbackOutcome::AlreadyFinished,
                Join::Absent => rest.push(index),
            }
        }
        if round.is_some() {
            self.results.flush_joined();
        }
        Joining { round, rest }
    }

    /// Reads the logs of the items left (one statement) and sorts them: unknown and finished logs are
    /// answered at once, the others batched by the result they write or left to the one-by-one path.
    async fn sort_rest(
        &self,
        items: &[HandleCallbackParam],
        rest: Vec<usize>,
        outcomes: &mut [CallbackOutcome],
    ) -> Result<Sorted> {
        let mut ids: Vec<i64> = rest.iter().map(|i| items[*i].log_id).collect();
        ids.sort_unstable();
        ids.dedup();
        let logs = self.handle_states(&ids).await?;
        let has_children =
            |log: &HandleState| log.child_jobid.as_deref().is_some_and(|c| !c.trim().is_empty());
        let mut seen = HashSet::with_capacity(rest.len());
        let mut sorted = Sorted::default();
        for index in rest {
            let item = &items[index];
            if !seen.insert(item.log_id) {
                sorted.one_by_one.push(index);
                continue;
            }
            match logs.get(&item.log_id) {
                None => outcomes[index] = CallbackOutcome::UnknownLog,
                Some(log) if log.handle_code > 0 => outcomes[index] = CallbackOutcome::AlreadyFinished,
                Some(log) if item.handle_code == 200 && has_children(log) => sorted.one_by_one.push(index),
                Some(log) => {
                    let msg = append_handle_msg(log.handle_msg.as_deref(), item.handle_msg.as_deref());
                    let result = HandleResult {
                        code: item.handle_code,
                        msg: truncate_utf16(msg, MAX_HANDLE_MSG_UTF16),
                    };
                    sorted.batches.entry(result).or_default().push(index);
                }
            }
        }
        Ok(sorted)
    }

    /// Writes each batch of items with the same result by one guarded UPDATE.
    async fn write_batches(
        &self,
        items: &[HandleCallbackParam],
        batches: HashMap<HandleResult, Vec<usize>>,
        outcomes: &mut [CallbackOutcome],
    ) -> Result<()> {
        let now = self.clock.now_ms();
        for (HandleResult { code, msg }, indexes) in batches {
            let batch_ids: Vec<i64> = indexes.iter().map(|i| items[*i].log_id).collect();
            let written = self.db.update_handle_infos(&batch_ids, now, code, &msg).await?;
            if written as usize == batch_ids.len() {
                for i in indexes {
                    outcomes[i] = CallbackOutcome::Finished;
                }
            } else {
                // Someone finished some of them between the read and the write: find out which are ours.
                let rows = self.handle_states(&batch_ids).await?;
                for i in indexes {
                    let ours = rows.get(&items[i].log_id).is_some_and(|l| {
                        l.handle_code == code && l.handle_msg.as_deref() == Some(msg.as_str())
                    });
                    outcomes[i] =
                        if ours { CallbackOutcome::Finished } else { CallbackOutcome::AlreadyFinished };
                }
            }
        }
        Ok(())
    }

    /// Finishes the items that start child jobs, and the repeats of a log, one after the other in order.
    async fn finish_one_by_one(
        &self,
        items: &[HandleCallbackParam],
        mut one_by_one: Vec<usize>,
        outcomes: &mut [CallbackOutcome],
    ) -> Result<()> {
        one_by_one.sort_unstable();
        for index in one_by_one {
            let item = &items[index];
            outcomes[index] = match self.db.load_log(item.log_id).await? {
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
        }
        Ok(())
    }

    /// The finish procedure: appends the child-job report on success, writes the result and starts the
    /// children. With `only_if_unfinished` the write happens only while the row has no result, so two
    /// racing finishers cannot both win (and start the children twice). Returns whether it was written.
    pub async fn finish(
        &self,
        log: &JobLog,
        handle_code: i32,
        mut handle_msg: String,
        only_if_unfinished: bool,
    ) -> Result<bool> {
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
        let written =
            self.db.update_handle_info(log.id, now, handle_code, &handle_msg, only_if_unfinished).await? > 0;
        if written {
            self.workflows.finished_logs(vec![log.id]);
            for child in children {
                self.triggers.submit(TriggerRequest::of_job(child, TriggerType::Parent));
            }
        }
        Ok(written)
    }
}

/// The callback items joined to trigger results waiting to be written, and the others.
struct Joining {
    /// The round that writes the joined results.
    round: Option<u64>,
    /// The items left for the database, by index.
    rest: Vec<usize>,
}

/// The items left for the database, sorted by how their results are written.
#[derive(Default)]
struct Sorted {
    /// Items written together, by the result they write.
    batches: HashMap<HandleResult, Vec<usize>>,
    /// Items that start child jobs, and repeats of a log.
    one_by_one: Vec<usize>,
}

/// A result as written to a log row: its `handle_code` and `handle_msg`.
#[derive(PartialEq, Eq, Hash)]
struct HandleResult {
    code: i32,
    msg: String,
}

/// Logs what the callback refused: unknown logs and repeats for finished ones.
fn log_refused(items: &[HandleCallbackParam], outcomes: &[CallbackOutcome]) {
    for (item, outcome) in items.iter().zip(outcomes) {
        match outcome {
            CallbackOutcome::Finished => {}
            CallbackOutcome::UnknownLog => {
                tracing::warn!(log_id = item.log_id, "callback for an unknown log")
            }
            CallbackOutcome::AlreadyFinished => {
                tracing::warn!(log_id = item.log_id, "repeated callback for a finished log ignored")
            }
        }
    }
}
