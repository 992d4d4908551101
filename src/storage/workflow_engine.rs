//! The workflow engine's transactions: a run admitted under its workflow's concurrency limits, queued
//! runs promoted, a scheduled fire taken, and a node attempt sent together with its xxl_job_log rows.
//!
//! Each is one transaction that first checks, by compare-and-set or under a row lock, that what it
//! decided on still holds: two admins deciding the same step both try, one wins, the other changes
//! nothing. A node attempt and the log rows it sends commit together, so a crash leaves either both
//! (the log row is then settled by the lost-result sweep if it was never sent) or neither.

use super::logs::{log_inserts, NewLog};
use super::sql::{self, On, Tx};
use super::workflows::{lock_workflow_in, NewRun, NodeChange, WorkflowRun, ACTIVE_RUN_STATES};
use super::{Arg, Db, Result};

/// Run states that hold a place under a workflow's `maxRuns`.
const HOLDING_PLACE: [&str; 3] = ["running", "paused", "stopping"];

/// How a new run is admitted when its workflow already has `max_runs` runs going.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnLimit {
    /// It waits (at most `max_queued` runs wait; past that it is discarded).
    Queue {
        max_queued: u32,
    },
    Discard,
    /// The oldest going run is stopped and the new one waits for its place.
    ReplaceOldest,
}

/// A workflow's limits on its runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLimits {
    pub max_runs: u32,
    pub on_limit: OnLimit,
}

/// What became of a new run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    pub id: i64,
    /// `running`, `queued` or `discarded`.
    pub state: &'static str,
    /// The run stopped to make room (replace-oldest).
    pub replaced: Option<i64>,
}

/// A node attempt to send: it changes from the state its counter `seq` stands for to `change`, in the
/// same transaction as its log rows are inserted, provided its run is still `running`.
pub struct NodeSend<'a> {
    pub run_id: i64,
    pub node: &'a str,
    pub attempt: i32,
    pub seq: i32,
    pub change: &'a NodeChange,
}

/// A log row of a node attempt, with what its trigger and the executor said.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct NodeLogResult {
    pub log_id: i64,
    pub node: String,
    pub attempt: i32,
    pub shard_index: i32,
    pub shard_total: i32,
    pub job_id: i32,
    pub executor_address: Option<String>,
    pub trigger_code: i32,
    pub handle_code: i32,
    pub handle_msg: Option<String>,
}

/// A run the engine still has to look after.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ActiveRun {
    pub id: i64,
    pub workflow_id: i64,
    pub state: String,
    pub backfill_id: Option<i64>,
}

/// `xxl_job_ext_workflow_backfill`: the runs of every schedule instant of a range, `parallel` at a time.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Backfill {
    pub id: i64,
    pub workflow_id: i64,
    /// `running`, `finished` or `stopped`.
    pub state: String,
    pub from_time: i64,
    pub to_time: i64,
    pub parallel: i32,
    pub total: i32,
    pub author: Option<String>,
    pub add_time: i64,
    pub end_time: Option<i64>,
}

/// A backfill to insert, with its runs.
pub struct NewBackfill<'a> {
    pub workflow_id: i64,
    pub from_time: i64,
    pub to_time: i64,
    pub parallel: u32,
    pub author: Option<&'a str>,
    /// One per instant, queued; their `backfill_id` is set to the backfill's.
    pub runs: &'a [NewRun],
}

const INSERT_RUN: &str = "INSERT INTO xxl_job_ext_workflow_run (workflow_id, version, state, trigger_type, \
     logical_time, params, started_by, parent_run_id, parent_node, backfill_id, add_time, start_time, \
     end_time, deadline_time, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
const CHANGE_NODE: &str = "UPDATE xxl_job_ext_workflow_node SET state = ?, seq = seq + 1, \
     send_time = COALESCE(?, send_time), param = COALESCE(?, param) \
     WHERE run_id = ? AND node = ? AND attempt = ? AND seq = ?";
const INSERT_TRIGGER: &str = "INSERT INTO xxl_job_ext_workflow_trigger (log_id, run_id, node, attempt, \
     shard_index, shard_total) VALUES (?, ?, ?, ?, ?, ?)";

impl Db {
    /// Inserts a run of an existing workflow, admitted under `limits` (the workflow row locked meanwhile,
    /// so admins starting runs together count each other's); `None` when the workflow is gone.
    pub async fn admit_run(&self, run: &NewRun, limits: RunLimits, now_ms: i64) -> Result<Option<Admitted>> {
        let mut tx = sql::begin(&self.pool, &self.dialect).await?;
        if !lock_workflow_in(&mut tx, &self.dialect, run.workflow_id).await? {
            return Ok(None);
        }
        let admitted = self.admit_in(&mut tx, run, limits, now_ms).await?;
        sql::commit(tx).await?;
        Ok(Some(admitted))
    }

    /// Takes a scheduled fire of a workflow: moves its fire times from `expected_next` on to `next_ms`
    /// (if another admin has not already; no next time stops the schedule) and admits the run the fire
    /// makes, in one transaction. `None` when the fire was taken already or the workflow stopped meanwhile.
    pub async fn fire_workflow(
        &self,
        expected_next: i64,
        next_ms: Option<i64>,
        run: &NewRun,
        limits: RunLimits,
        now_ms: i64,
    ) -> Result<Option<Admitted>> {
        let mut tx = sql::begin(&self.pool, &self.dialect).await?;
        let moved = sql::execute(
            On::Tx(&mut tx),
            &self.dialect,
            "UPDATE xxl_job_ext_workflow SET trigger_status = ?, trigger_next_time = ?, trigger_last_time = ? \
             WHERE id = ? AND trigger_status = 1 AND trigger_next_time = ?",
            &[
                Arg::Int(i64::from(next_ms.is_some())),
                Arg::Int(next_ms.unwrap_or(0)),
                Arg::Int(expected_next),
                Arg::Int(run.workflow_id),
                Arg::Int(expected_next),
            ],
        )
        .await?;
        if moved == 0 {
            return Ok(None);
        }
        let admitted = self.admit_in(&mut tx, run, limits, now_ms).await?;
        sql::commit(tx).await?;
        Ok(Some(admitted))
    }

    /// Moves a workflow's next fire without a run (a fire missed under DO_NOTHING; no next time stops
    /// the schedule); whether it moved.
    pub async fn skip_workflow_fire(
        &self,
        id: i64,
        expected_next: i64,
        next_ms: Option<i64>,
    ) -> Result<bool> {
        let sql = "UPDATE xxl_job_ext_workflow SET trigger_status = ?, trigger_next_time = ? \
                   WHERE id = ? AND trigger_status = 1 AND trigger_next_time = ?";
        let args = [
            Arg::Int(i64::from(next_ms.is_some())),
            Arg::Int(next_ms.unwrap_or(0)),
            Arg::Int(id),
            Arg::Int(expected_next),
        ];
        Ok(self.execute(sql, &args).await? > 0)
    }

    /// Starts the oldest queued runs of a workflow while it has room under `max_runs`; their ids.
    pub async fn promote_queued_runs(
        &self,
        workflow_id: i64,
        max_runs: u32,
        now_ms: i64,
    ) -> Result<Vec<i64>> {
        let mut tx = sql::begin(&self.pool, &self.dialect).await?;
        if !lock_workflow_in(&mut tx, &self.dialect, workflow_id).await? {
            return Ok(Vec::new());
        }
        let going = self.count_runs(&mut tx, workflow_id, &HOLDING_PLACE).await?;
        let room = i64::from(max_runs) - going;
        if room <= 0 {
            return Ok(Vec::new());
        }
        let oldest: Vec<(i64,)> = sql::fetch_all(
            On::Tx(&mut tx),
            &self.dialect,
            "SELECT id FROM xxl_job_ext_workflow_run WHERE workflow_id = ? AND backfill_id IS NULL \
             AND state = 'queued' ORDER BY id LIMIT ?",
            &[Arg::Int(workflow_id), Arg::Int(room)],
        )
        .await?;
        let mut promoted = Vec::with_capacity(oldest.len());
        for (id,) in oldest {
            let sql =
                "UPDATE xxl_job_ext_workflow_run SET state = 'running', seq = seq + 1, start_time = ?, \
                       deadline_time = deadline_time - add_time + ? WHERE id = ? AND state = 'queued'";
            let args = [Arg::Int(now_ms), Arg::Int(now_ms), Arg::Int(id)];
            if sql::execute(On::Tx(&mut tx), &self.dialect, sql, &args).await? > 0 {
                promoted.push(id);
            }
        }
        sql::commit(tx).await?;
        Ok(promoted)
    }

    /// Sends a node attempt: changes its state by compare-and-set, inserts one log row per trigger and
    /// records which attempt and shard each is, in one transaction, while its run is `running`. The ids of
    /// the rows, in the order of `rows`; `None` when the attempt changed meanwhile or the run is no longer
    /// running (nothing written).
    pub async fn send_node_attempt(
        &self,
        send: &NodeSend<'_>,
        rows: &[NewLog],
        shards: &[(i32, i32)],
    ) -> Result<Option<Vec<i64>>> {
        let mut tx = sql::begin(&self.pool, &self.dialect).await?;
        if !self.claim_node(&mut tx, send).await? {
            return Ok(None);
        }
        let mut ids = Vec::with_capacity(rows.len());
        for (insert, args, n) in log_inserts(self.zone(), rows) {
            ids.extend(sql::insert_ids(On::Tx(&mut tx), &self.dialect, &insert, &args, n).await?);
        }
        for (log_id, &(shard_index, shard_total)) in ids.iter().zip(shards) {
            let args = [
                Arg::Int(*log_id),
                Arg::Int(send.run_id),
                Arg::Text(send.node.to_string()),
                Arg::Int(send.attempt.into()),
                Arg::Int(shard_index.into()),
                Arg::Int(shard_total.into()),
            ];
            sql::execute(On::Tx(&mut tx), &self.dialect, INSERT_TRIGGER, &args).await?;
        }
        sql::commit(tx).await?;
        Ok(Some(ids))
    }

    /// Starts a sub-workflow node: changes the attempt as [`Db::send_node_attempt`] does and inserts the
    /// child run (running at once: it runs as a step of its parent, outside its own `maxRuns`), in one
    /// transaction; the child run's id, or `None` as there.
    pub async fn start_child_run(&self, send: &NodeSend<'_>, child: &NewRun) -> Result<Option<i64>> {
        let mut tx = sql::begin(&self.pool, &self.dialect).await?;
        if !self.claim_node(&mut tx, send).await?
            || !lock_workflow_in(&mut tx, &self.dialect, child.workflow_id).await?
        {
            return Ok(None);
        }
        let id = self.insert_run_in(&mut tx, child, "running", Some(child.add_time), None, None).await?;
        sql::commit(tx).await?;
        Ok(Some(id))
    }

    /// The log rows of a run's node attempts with their results, by node, attempt and shard.
    pub async fn run_trigger_results(&self, run_id: i64) -> Result<Vec<NodeLogResult>> {
        let sql = "SELECT t.log_id, t.node, t.attempt, t.shard_index, t.shard_total, l.job_id, \
                   l.executor_address, l.trigger_code, l.handle_code, l.handle_msg \
                   FROM xxl_job_ext_workflow_trigger t JOIN xxl_job_log l ON l.id = t.log_id \
                   WHERE t.run_id = ? ORDER BY t.node, t.attempt, t.shard_index";
        self.fetch_all(sql, &[Arg::Int(run_id)]).await
    }

    /// The runs the given log rows were sent for, as `(log_id, run_id)`; logs of no workflow are left out.
    pub async fn runs_of_logs(&self, log_ids: &[i64]) -> Result<Vec<(i64, i64)>> {
        let mut found = Vec::new();
        for chunk in log_ids.chunks(500) {
            let sql = format!(
                "SELECT log_id, run_id FROM xxl_job_ext_workflow_trigger WHERE log_id IN ({})",
                super::placeholders(chunk.len())
            );
            let args: Vec<Arg> = chunk.iter().map(|id| Arg::Int(*id)).collect();
            found.extend(self.fetch_all::<(i64, i64)>(&sql, &args).await?);
        }
        Ok(found)
    }

    /// Runs not finished yet, oldest first.
    pub async fn active_runs(&self, limit: i64) -> Result<Vec<ActiveRun>> {
        let sql = format!(
            "SELECT id, workflow_id, state, backfill_id FROM xxl_job_ext_workflow_run WHERE state IN ({}) \
             ORDER BY id LIMIT ?",
            super::placeholders(ACTIVE_RUN_STATES.len())
        );
        let mut args: Vec<Arg> = ACTIVE_RUN_STATES.iter().map(|s| Arg::Text(s.to_string())).collect();
        args.push(Arg::Int(limit));
        self.fetch_all(&sql, &args).await
    }

    /// How many runs are in each state not over; none when the workflow tables do not exist.
    pub async fn active_run_counts(&self) -> Result<Vec<(String, i64)>> {
        if !self.extension_tables_present().await? {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT state, COUNT(*) FROM xxl_job_ext_workflow_run WHERE state IN ({}) GROUP BY state",
            super::placeholders(ACTIVE_RUN_STATES.len())
        );
        let args: Vec<Arg> = ACTIVE_RUN_STATES.iter().map(|s| Arg::Text(s.to_string())).collect();
        self.fetch_all(&sql, &args).await
    }

    /// The runs a node of `parent_run_id` started, oldest first.
    pub async fn child_runs(&self, parent_run_id: i64) -> Result<Vec<WorkflowRun>> {
        let sql = "SELECT * FROM xxl_job_ext_workflow_run WHERE parent_run_id = ? ORDER BY id";
        self.fetch_all(sql, &[Arg::Int(parent_run_id)]).await
    }

    /// Scheduled workflows whose next fire is at or before `until_ms`.
    pub async fn due_workflows(&self, until_ms: i64) -> Result<Vec<super::Workflow>> {
        let sql = "SELECT * FROM xxl_job_ext_workflow WHERE trigger_status = 1 AND trigger_next_time <= ? \
                   ORDER BY trigger_next_time";
        self.fetch_all(sql, &[Arg::Int(until_ms)]).await
    }

    /// Inserts a backfill and its runs (queued) in one transaction; its id, or `None` when the workflow is
    /// gone.
    pub async fn insert_backfill(&self, backfill: &NewBackfill<'_>, now_ms: i64) -> Result<Option<i64>> {
        let mut tx = sql::begin(&self.pool, &self.dialect).await?;
        if !lock_workflow_in(&mut tx, &self.dialect, backfill.workflow_id).await? {
            return Ok(None);
        }
        let insert =
            "INSERT INTO xxl_job_ext_workflow_backfill (workflow_id, state, from_time, to_time, parallel, \
                      total, author, add_time) VALUES (?, 'running', ?, ?, ?, ?, ?, ?)";
        let args = [
            Arg::Int(backfill.workflow_id),
            Arg::Int(backfill.from_time),
            Arg::Int(backfill.to_time),
            Arg::Int(backfill.parallel.into()),
            Arg::Int(backfill.runs.len() as i64),
            Arg::OptText(backfill.author.map(str::to_string)),
            Arg::Int(now_ms),
        ];
        let id = sql::insert_ids(On::Tx(&mut tx), &self.dialect, insert, &args, 1).await?[0];
        for run in backfill.runs {
            let run = NewRun { backfill_id: Some(id), ..run.clone() };
            self.insert_run_in(&mut tx, &run, "queued", None, None, None).await?;
        }
        sql::commit(tx).await?;
        Ok(Some(id))
    }

    pub async fn load_backfill(&self, id: i64) -> Result<Option<Backfill>> {
        self.fetch_optional("SELECT * FROM xxl_job_ext_workflow_backfill WHERE id = ?", &[Arg::Int(id)]).await
    }

    /// How many runs of a backfill are in each state.
    pub async fn backfill_run_counts(&self, id: i64) -> Result<Vec<(String, i64)>> {
        let sql = "SELECT state, COUNT(*) FROM xxl_job_ext_workflow_run WHERE backfill_id = ? GROUP BY state";
        self.fetch_all(sql, &[Arg::Int(id)]).await
    }

    /// Starts the oldest queued runs of a running backfill while fewer than its `parallel` go; their ids.
    /// A backfill none of whose runs is left to go is finished.
    pub async fn promote_backfill(&self, id: i64, now_ms: i64) -> Result<Vec<i64>> {
        let mut tx = sql::begin(&self.pool, &self.dialect).await?;
        let lock = format!(
            "SELECT parallel FROM xxl_job_ext_workflow_backfill WHERE id = ? AND state = 'running'{}",
            self.dialect.for_update
        );
        let Some((parallel,)) =
            sql::fetch_optional::<(i32,)>(On::Tx(&mut tx), &self.dialect, &lock, &[Arg::Int(id)]).await?
        else {
            return Ok(Vec::new());
        };
        let count = |states: &[&str]| {
            format!(
                "SELECT COUNT(*) FROM xxl_job_ext_workflow_run WHERE backfill_id = ? AND state IN ({})",
                super::placeholders(states.len())
            )
        };
        let args = |states: &[&str]| {
            let mut args = vec![Arg::Int(id)];
            args.extend(states.iter().map(|s| Arg::Text(s.to_string())));
            args
        };
        let going =
            sql::scalar(On::Tx(&mut tx), &self.dialect, &count(&HOLDING_PLACE), &args(&HOLDING_PLACE))
                .await?;
        let room = i64::from(parallel) - going;
        let mut promoted = Vec::new();
        if room > 0 {
            let oldest: Vec<(i64,)> = sql::fetch_all(
                On::Tx(&mut tx),
                &self.dialect,
                "SELECT id FROM xxl_job_ext_workflow_run WHERE backfill_id = ? AND state = 'queued' ORDER BY id LIMIT ?",
                &[Arg::Int(id), Arg::Int(room)],
            )
            .await?;
            for (run,) in oldest {
                let sql =
                    "UPDATE xxl_job_ext_workflow_run SET state = 'running', seq = seq + 1, start_time = ?, \
                           deadline_time = deadline_time - add_time + ? WHERE id = ? AND state = 'queued'";
                let args = [Arg::Int(now_ms), Arg::Int(now_ms), Arg::Int(run)];
                if sql::execute(On::Tx(&mut tx), &self.dialect, sql, &args).await? > 0 {
                    promoted.push(run);
                }
            }
        }
        if promoted.is_empty() && going == 0 {
            let left =
                sql::scalar(On::Tx(&mut tx), &self.dialect, &count(&["queued"]), &args(&["queued"])).await?;
            if left == 0 {
                let sql =
                    "UPDATE xxl_job_ext_workflow_backfill SET state = 'finished', end_time = ? WHERE id = ?";
                sql::execute(On::Tx(&mut tx), &self.dialect, sql, &[Arg::Int(now_ms), Arg::Int(id)]).await?;
            }
        }
        sql::commit(tx).await?;
        Ok(promoted)
    }

    /// Stops a running backfill: its queued runs end stopped, its going runs are set stopping. The ids of
    /// those, for the engine to stop; `None` when the backfill is not running.
    pub async fn stop_backfill(&self, id: i64, message: &str, now_ms: i64) -> Result<Option<Vec<i64>>> {
        let mut tx = sql::begin(&self.pool, &self.dialect).await?;
        let stop = "UPDATE xxl_job_ext_workflow_backfill SET state = 'stopped', end_time = ? \
                    WHERE id = ? AND state = 'running'";
        if sql::execute(On::Tx(&mut tx), &self.dialect, stop, &[Arg::Int(now_ms), Arg::Int(id)]).await? == 0 {
            return Ok(None);
        }
        let queued = "UPDATE xxl_job_ext_workflow_run SET state = 'stopped', seq = seq + 1, end_time = ?, \
                      message = ? WHERE backfill_id = ? AND state = 'queued'";
        let args = [Arg::Int(now_ms), Arg::Text(message.to_string()), Arg::Int(id)];
        sql::execute(On::Tx(&mut tx), &self.dialect, queued, &args).await?;
        let going: Vec<(i64,)> = sql::fetch_all(
            On::Tx(&mut tx),
            &self.dialect,
            "SELECT id FROM xxl_job_ext_workflow_run WHERE backfill_id = ? AND state IN ('running', 'paused')",
            &[Arg::Int(id)],
        )
        .await?;
        let stopping = "UPDATE xxl_job_ext_workflow_run SET state = 'stopping', seq = seq + 1, message = ? \
                        WHERE backfill_id = ? AND state IN ('running', 'paused')";
        sql::execute(
            On::Tx(&mut tx),
            &self.dialect,
            stopping,
            &[Arg::Text(message.to_string()), Arg::Int(id)],
        )
        .await?;
        sql::commit(tx).await?;
        Ok(Some(going.into_iter().map(|(run,)| run).collect()))
    }

    /// Changes a node attempt by compare-and-set while its run is running (the run's row locked, so a
    /// stop or pause committed first is seen, and one committed later waits for this send).
    async fn claim_node(&self, tx: &mut Tx, send: &NodeSend<'_>) -> Result<bool> {
        let lock =
            format!("SELECT state FROM xxl_job_ext_workflow_run WHERE id = ?{}", self.dialect.for_update);
        let run: Option<(String,)> =
            sql::fetch_optional(On::Tx(tx), &self.dialect, &lock, &[Arg::Int(send.run_id)]).await?;
        if run.is_none_or(|(state,)| state != "running") {
            return Ok(false);
        }
        let args = [
            Arg::Text(send.change.state.clone()),
            Arg::OptInt(send.change.send_time),
            Arg::OptText(send.change.param.clone()),
            Arg::Int(send.run_id),
            Arg::Text(send.node.to_string()),
            Arg::Int(send.attempt.into()),
            Arg::Int(send.seq.into()),
        ];
        Ok(sql::execute(On::Tx(tx), &self.dialect, CHANGE_NODE, &args).await? > 0)
    }

    /// Runs of a workflow in `states`, backfills' apart (they have their own limit).
    async fn count_runs(&self, tx: &mut Tx, workflow_id: i64, states: &[&str]) -> Result<i64> {
        let sql = format!(
            "SELECT COUNT(*) FROM xxl_job_ext_workflow_run WHERE workflow_id = ? AND backfill_id IS NULL \
             AND state IN ({})",
            super::placeholders(states.len())
        );
        let mut args = vec![Arg::Int(workflow_id)];
        args.extend(states.iter().map(|s| Arg::Text(s.to_string())));
        sql::scalar(On::Tx(tx), &self.dialect, &sql, &args).await
    }

    /// Decides and inserts a new run under `limits`, inside a transaction holding its workflow's row.
    async fn admit_in(&self, tx: &mut Tx, run: &NewRun, limits: RunLimits, now_ms: i64) -> Result<Admitted> {
        let going = self.count_runs(tx, run.workflow_id, &HOLDING_PLACE).await?;
        let room = going < i64::from(limits.max_runs);
        let full = |reason: String| format!("{reason} ({going} run(s) going, maxRuns {})", limits.max_runs);
        let (state, message, replaced) = match limits.on_limit {
            _ if room => ("running", None, None),
            OnLimit::Queue { max_queued } => {
                let queued = self.count_runs(tx, run.workflow_id, &["queued"]).await?;
                if queued < i64::from(max_queued) {
                    ("queued", Some(full("queued".into())), None)
                } else {
                    (
                        "discarded",
                        Some(full(format!("discarded: the queue holds its maximum of {max_queued}"))),
                        None,
                    )
                }
            }
            OnLimit::Discard => ("discarded", Some(full("discarded by the concurrency policy".into())), None),
            OnLimit::ReplaceOldest => {
                let replaced = self.stop_oldest(tx, run.workflow_id).await?;
                let why = match replaced {
                    Some(old) => format!("queued: replaces run {old}, which is being stopped"),
                    None => "queued: every going run is being stopped already".to_string(),
                };
                ("queued", Some(full(why)), replaced)
            }
        };
        let start = (state == "running").then_some(now_ms);
        let end = (state == "discarded").then_some(now_ms);
        let id = self.insert_run_in(tx, run, state, start, end, message).await?;
        if let Some(old) = replaced {
            let sql = "UPDATE xxl_job_ext_workflow_run SET message = ? WHERE id = ?";
            let why = Arg::Text(format!("stopped: replaced by run {id} (concurrency policy replace_oldest)"));
            sql::execute(On::Tx(tx), &self.dialect, sql, &[why, Arg::Int(old)]).await?;
        }
        Ok(Admitted { id, state, replaced })
    }

    /// Sets the oldest running or paused run of a workflow stopping; its id.
    async fn stop_oldest(&self, tx: &mut Tx, workflow_id: i64) -> Result<Option<i64>> {
        let oldest: Option<(i64,)> = sql::fetch_optional(
            On::Tx(tx),
            &self.dialect,
            "SELECT id FROM xxl_job_ext_workflow_run WHERE workflow_id = ? AND backfill_id IS NULL \
             AND state IN ('running', 'paused') ORDER BY id LIMIT 1",
            &[Arg::Int(workflow_id)],
        )
        .await?;
        let Some((id,)) = oldest else { return Ok(None) };
        let sql = "UPDATE xxl_job_ext_workflow_run SET state = 'stopping', seq = seq + 1 WHERE id = ?";
        sql::execute(On::Tx(tx), &self.dialect, sql, &[Arg::Int(id)]).await?;
        Ok(Some(id))
    }

    /// Inserts a run in `state` with the times and message given, inside `tx`; its id.
    pub(super) async fn insert_run_in(
        &self,
        tx: &mut Tx,
        run: &NewRun,
        state: &str,
        start_time: Option<i64>,
        end_time: Option<i64>,
        message: Option<String>,
    ) -> Result<i64> {
        let args = [
            Arg::Int(run.workflow_id),
            Arg::Int(run.version.into()),
            Arg::Text(state.to_string()),
            Arg::Text(run.trigger_type.clone()),
            Arg::Int(run.logical_time),
            Arg::Text(run.params.clone()),
            Arg::OptText(run.started_by.clone()),
            Arg::OptInt(run.parent_run_id),
            Arg::OptText(run.parent_node.clone()),
            Arg::OptInt(run.backfill_id),
            Arg::Int(run.add_time),
            Arg::OptInt(start_time),
            Arg::OptInt(end_time),
            Arg::OptInt(run.deadline_time),
            Arg::OptText(message),
        ];
        Ok(sql::insert_ids(On::Tx(tx), &self.dialect, INSERT_RUN, &args, 1).await?[0])
    }
}
