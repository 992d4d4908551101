//! Trigger results on their way to the database, and the executors' callbacks that arrive before them
//! (issue: performance round 2).
//!
//! A trigger's result (`trigger_*` columns) is written by a writer task, many rows per statement. An
//! executor answers `/run` at once and, for a short job, calls back a few milliseconds later: a callback
//! that finds its row's result still waiting here joins it, and the row gets both in one UPDATE (one row
//! write per fire instead of two: a row's second write grows it, which costs InnoDB a page reorganisation's
//! worth of redo). A batch of joined callbacks is written at once, without waiting for the window, and the
//! callback is answered once that UPDATE is done, so a result the executor was told was taken is in the
//! database; the executor's next batch (it sends one at a time) then comes soon enough to join too.

use super::backlog::Backlog;
use crate::storage::{Db, HandleInfo, StorageError, TriggerInfo};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch, Notify};

/// Results written per round (in chunks of the storage layer's batch size).
const WRITE_BATCH: usize = 2_000;
/// How long a result waits for its callback before it is written alone: a Java executor's callback
/// thread sends one batch at a time, so under load a short job's callback comes one or two batch round
/// trips after its `/run` was answered.
const MERGE_WINDOW: Duration = Duration::from_millis(250);
/// Results whose windows end this close together are written in one round.
const RIPEN_TOGETHER: Duration = Duration::from_millis(10);
/// How long a round waits at most for the burst of fires being sent: its UPDATE would compete with
/// their `/run`s for the cores and the database (callbacks of the burst's first fires come in while
/// its last ones are still to be sent).
const DEFER_LIMIT: Duration = Duration::from_millis(500);
/// Pause between attempts while the database is unreachable.
const RETRY_PAUSE: Duration = Duration::from_secs(1);
/// How long the writer keeps retrying one round; after that the lost-result sweep settles its rows.
const WRITE_RETRY_LIMIT: Duration = Duration::from_secs(120);
/// Outcomes of rounds kept for callbacks still waiting on them.
const OUTCOMES_KEPT: usize = 64;
/// Distinct trigger reports kept for sharing; all are let go when more come (failures that each read
/// differently).
const TEXTS_KEPT: usize = 1_024;
/// A callback waits at most this long for the round it joined (the database may be down): the executor
/// is then told to send it again.
const CALLBACK_WAIT: Duration = Duration::from_secs(5);

/// The results waiting, shared by the triggers that record them and the callbacks that join them.
#[derive(Default)]
pub struct Results {
    state: Mutex<State>,
    /// The number of the last round finished (written or given up).
    done: watch::Sender<u64>,
    /// Wakes the writer for callbacks that joined: their round is written without waiting for the window.
    joined: Notify,
    /// The reports of recent results, one copy of each text.
    texts: Mutex<HashSet<Arc<str>>>,
}

#[derive(Default)]
struct State {
    /// Boxed: the table keeps the capacity of the largest burst (tens of thousands of slots), so its
    /// slots hold a pointer, not a whole result.
    waiting: HashMap<i64, Box<Waiting>>,
    /// Results a callback joined since the last round: all of them are in the next one.
    joined: Vec<i64>,
    /// The number the writer's next round will have: a callback joining now is written in it.
    next_round: u64,
    /// Recent rounds that were not written.
    failed: VecDeque<u64>,
}

struct Waiting {
    info: TriggerInfo,
    /// A callback may join: the job starts no child jobs (their start needs the finish procedure).
    joinable: bool,
    handled: Option<HandleInfo>,
}

/// How a callback item fared against the results waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Join {
    /// Joined: written with the result in round `n`.
    Joined(u64),
    /// The row's result already has a callback joined: a repeat.
    Repeated,
    /// Not waiting here: the callback goes to the database on its own.
    Absent,
}

/// A result handed to the writer: its log, and when, which starts its wait for a callback to join it.
struct Recorded {
    log_id: i64,
    at: Instant,
}

/// Records results for the writer; held by the triggers (the writer ends once every sender is gone).
#[derive(Clone)]
pub struct ResultSender {
    results: Arc<Results>,
    ids: mpsc::UnboundedSender<Recorded>,
}

impl ResultSender {
    /// `text` as a shared copy: the one kept if an equal report came recently. At 10,000 fires a second
    /// the results waiting for their callbacks held 10–20 MB of reports, nearly all alike.
    pub fn shared_text(&self, text: String) -> Arc<str> {
        let mut texts = self.results.texts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(kept) = texts.get(text.as_str()) {
            return kept.clone();
        }
        if texts.len() >= TEXTS_KEPT {
            texts.clear();
        }
        let text: Arc<str> = text.into();
        texts.insert(text.clone());
        text
    }

    /// Hands the result of log `log_id` to the writer; `joinable` when a callback may be written with it.
    /// Gives it back when the writer is gone (the process is stopping).
    pub fn send(&self, log_id: i64, info: TriggerInfo, joinable: bool) -> Option<TriggerInfo> {
        self.results.lock().waiting.insert(log_id, Box::new(Waiting { info, joinable, handled: None }));
        if self.ids.send(Recorded { log_id, at: Instant::now() }).is_err() {
            return self.results.lock().waiting.remove(&log_id).map(|w| w.info);
        }
        None
    }
}

impl Results {
    /// The results, the sender the triggers use and the writer task's input.
    pub fn start(db: Db, backlog: Arc<Backlog>) -> (Arc<Results>, ResultSender, tokio::task::JoinHandle<()>) {
        // Rounds count from 1: `done` starts at 0, which no round may be taken for.
        let results = Arc::new(Results {
            state: Mutex::new(State { next_round: 1, ..State::default() }),
            ..Results::default()
        });
        let (ids, ids_rx) = mpsc::unbounded_channel();
        let writer = tokio::spawn(write(db, results.clone(), ids_rx, backlog));
        (results.clone(), ResultSender { results, ids }, writer)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Joins a callback's result to log `log_id`'s trigger result if it is still waiting here; the round
    /// is written after [`Results::flush_joined`].
    pub fn join(&self, log_id: i64, handled: HandleInfo) -> Join {
        let mut state = self.lock();
        let round = state.next_round;
        match state.waiting.get_mut(&log_id) {
            Some(waiting) if waiting.handled.is_some() => Join::Repeated,
            Some(waiting) if waiting.joinable => {
                waiting.handled = Some(handled);
                state.joined.push(log_id);
                Join::Joined(round)
            }
            _ => Join::Absent,
        }
    }

    /// Has the writer write the joined results now: called once per callback batch, so it is one round.
    pub fn flush_joined(&self) {
        self.joined.notify_one();
    }

    /// Waits for round `round`; `Ok` once it was written.
    pub async fn written(&self, round: u64) -> crate::storage::Result<()> {
        let mut done = self.done.subscribe();
        let finished = tokio::time::timeout(CALLBACK_WAIT, done.wait_for(|last| *last >= round)).await;
        if finished.is_ok() && !self.lock().failed.contains(&round) {
            return Ok(());
        }
        Err(StorageError::Unwritten)
    }

    /// Takes the waiting results of `ids` and every joined one as the next round.
    fn take(&self, ids: &[i64]) -> (u64, Vec<(i64, TriggerInfo, Option<HandleInfo>)>) {
        let mut state = self.lock();
        let round = state.next_round;
        state.next_round += 1;
        let joined = std::mem::take(&mut state.joined);
        // An id both ripe and joined is found once: the first take removes it.
        let rows = ids
            .iter()
            .chain(&joined)
            .filter_map(|id| {
                let Waiting { info, handled, .. } = *state.waiting.remove(id)?;
                Some((*id, info, handled))
            })
            .collect();
        (round, rows)
    }

    fn finish(&self, round: u64, written: bool) {
        if !written {
            let mut state = self.lock();
            state.failed.push_back(round);
            if state.failed.len() > OUTCOMES_KEPT {
                state.failed.pop_front();
            }
        }
        self.done.send_replace(round);
    }
}

/// Writes the results, many rows per statement, after giving their callbacks [`MERGE_WINDOW`] to join
/// (joined ones at once).
/// It ends when every sender is gone, after writing what was recorded. While the database is unreachable
/// a round is retried (for at most [`WRITE_RETRY_LIMIT`]); results that still cannot be written, or that
/// die with the process, are settled by the lost-result sweep.
async fn write(
    db: Db,
    results: Arc<Results>,
    mut ids: mpsc::UnboundedReceiver<Recorded>,
    backlog: Arc<Backlog>,
) {
    // Whether the writer may still wait for the burst being sent: once per burst (a lane that stays
    // backed up, by a hanging executor or a load beyond its permits, must not hold every round back).
    let mut may_defer = true;
    let mut queue: VecDeque<Recorded> = VecDeque::new();
    let mut received = Vec::with_capacity(WRITE_BATCH);
    loop {
        if queue.is_empty() {
            if ids.recv_many(&mut received, WRITE_BATCH).await == 0 {
                break;
            }
        } else {
            while let Ok(id) = ids.try_recv() {
                received.push(id);
            }
        }
        queue.extend(received.drain(..));
        // Each result waits its own window for its callback (the last of a burst as long as the first),
        // unless the process is stopping or callbacks joined.
        if let Some(first) = queue.front() {
            let ripe = first.at + MERGE_WINDOW;
            if !ids.is_closed() && ripe > Instant::now() {
                tokio::select! {
                    // The results recorded just after it ripen with it: one round, not one per millisecond.
                    _ = tokio::time::sleep_until((ripe + RIPEN_TOGETHER).into()) => continue,
                    _ = results.joined.notified() => {}
                }
            }
        }
        if backlog.is_empty() {
            may_defer = true;
        } else if may_defer && !ids.is_closed() {
            may_defer = false;
            let paused_at = Instant::now();
            backlog.cleared(DEFER_LIMIT).await;
            let resumed = Instant::now();
            while let Ok(id) = ids.try_recv() {
                queue.push_back(id);
            }
            // The windows stood still meanwhile: the callbacks that would join were not answered.
            for recorded in queue.iter_mut() {
                recorded.at =
                    if recorded.at < paused_at { recorded.at + (resumed - paused_at) } else { resumed };
            }
        }
        let now = Instant::now();
        let ripe = queue
            .iter()
            .take(WRITE_BATCH)
            .take_while(|recorded| ids.is_closed() || recorded.at + MERGE_WINDOW <= now)
            .count();
        let batch: Vec<i64> = queue.drain(..ripe).map(|recorded| recorded.log_id).collect();
        let first = Instant::now();
        let (round, rows) = results.take(&batch);
        if rows.is_empty() {
            // Their callbacks joined them: written already.
            results.finish(round, true);
            continue;
        }
        let mut written = true;
        while let Err(e) = db.update_trigger_results(&rows).await {
            if first.elapsed() >= WRITE_RETRY_LIMIT {
                tracing::error!(
                    "trigger results of {} log(s) not written, left to the lost-result sweep: {e}",
                    rows.len()
                );
                written = false;
                break;
            }
            tracing::error!("trigger results of {} log(s) waiting for the database: {e}", rows.len());
            tokio::time::sleep(RETRY_PAUSE).await;
        }
        results.finish(round, written);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::testing::{memory_db, trigger_info};

    #[tokio::test]
    async fn a_joined_callback_is_written_with_its_result_without_waiting_for_the_window() {
        let db = memory_db().await;
        let now = 1_700_000_000_000;
        let (joined, alone) =
            (db.insert_log(1, 1, now).await.unwrap(), db.insert_log(1, 1, now).await.unwrap());
        let (results, sender, writer) = Results::start(db.clone(), Arc::default());
        assert!(sender.send(joined, trigger_info(200, "sent"), true).is_none());
        assert!(sender.send(alone, trigger_info(200, "sent"), true).is_none());
        let started = Instant::now();
        let Join::Joined(round) =
            results.join(joined, HandleInfo { time_ms: now + 5, code: 200, msg: String::new() })
        else {
            panic!("the result was waiting")
        };
        results.flush_joined();
        results.written(round).await.unwrap();
        assert!(started.elapsed() < MERGE_WINDOW, "answered after {:?}", started.elapsed());
        let row = db.load_log(joined).await.unwrap().unwrap();
        assert_eq!((row.trigger_code, row.handle_code, row.trigger_msg.as_deref()), (200, 200, Some("sent")));
        // The other result still waits for its callback, then is written alone.
        assert_eq!(db.load_log(alone).await.unwrap().unwrap().trigger_code, 0);
        assert_eq!(
            results.join(joined, HandleInfo { time_ms: now, code: 200, msg: String::new() }),
            Join::Absent
        );
        drop(sender);
        writer.await.unwrap();
        let row = db.load_log(alone).await.unwrap().unwrap();
        assert_eq!((row.trigger_code, row.handle_code), (200, 0));
    }

    #[tokio::test]
    async fn a_round_waits_for_the_burst_being_sent_and_its_callbacks_still_join() {
        let db = memory_db().await;
        let now = 1_700_000_000_000;
        let (first, second) =
            (db.insert_log(1, 1, now).await.unwrap(), db.insert_log(1, 1, now).await.unwrap());
        let backlog = Arc::new(Backlog::default());
        let (results, sender, _writer) = Results::start(db.clone(), backlog.clone());
        let burst = backlog.reserve(1);
        assert!(sender.send(first, trigger_info(200, "sent"), true).is_none());
        let Join::Joined(round) =
            results.join(first, HandleInfo { time_ms: now + 5, code: 200, msg: String::new() })
        else {
            panic!("the result was waiting")
        };
        results.flush_joined();
        assert!(sender.send(second, trigger_info(200, "sent"), true).is_none());
        // Past the callback window, while the burst is still being sent: nothing written yet.
        tokio::time::sleep(MERGE_WINDOW + Duration::from_millis(20)).await;
        assert_eq!(db.load_log(first).await.unwrap().unwrap().trigger_code, 0);
        let sent = Instant::now();
        drop(burst);
        results.written(round).await.unwrap();
        assert!(sent.elapsed() < MERGE_WINDOW, "written {:?} after the burst", sent.elapsed());
        assert_eq!(db.load_log(first).await.unwrap().unwrap().handle_code, 200);
        // The other result's window stood still: its callback, coming after the burst, still joins it.
        assert_eq!(db.load_log(second).await.unwrap().unwrap().trigger_code, 0);
        assert!(matches!(
            results.join(second, HandleInfo { time_ms: now + 9, code: 200, msg: String::new() }),
            Join::Joined(_)
        ));
    }

    #[tokio::test]
    async fn equal_reports_share_one_copy_and_the_copies_kept_are_bounded() {
        let (_results, sender, _writer) = Results::start(memory_db().await, Arc::default());
        let first = sender.shared_text("report".to_string());
        let again = sender.shared_text("report".to_string());
        assert!(Arc::ptr_eq(&first, &again));
        assert!(!Arc::ptr_eq(&first, &sender.shared_text("other".to_string())));
        for n in 0..TEXTS_KEPT {
            sender.shared_text(format!("failure {n}"));
        }
        assert!(sender.results.texts.lock().unwrap().len() <= TEXTS_KEPT);
        // Let go with the others, a report is kept anew; the results already holding it keep theirs.
        let anew = sender.shared_text("report".to_string());
        assert!(!Arc::ptr_eq(&first, &anew));
        assert_eq!((&*first, &*anew), ("report", "report"));
    }
}
