//! The workflow mode (issue 46): one 10-node workflow, a → b1…b5 → c → d → e → f, each node a run of one
//! BEAN job on the bench executor, started many times at once through the storage API (the admin's
//! engine sweep picks each running run up within a second). Measured from outside: the executor traces
//! when each `/run` arrived and when each callback was sent, by log id, and the workflow tables say which
//! (run, node) each log id was sent for. The latency of an edge is its successor's `/run` arrival minus
//! the moment its predecessor's callback was sent; for the join c, the last of b1…b5's callbacks.
//!
//! Also timed here: validating a 500-node definition, which the admin does on every save.

use super::args::Storage;
use super::db::{self, Datasource, RowDb};
use super::executor::{ExecutorCounts, FastExecutor, LogTrace};
use super::process::{peak_rss_kib, LogSummary};
use super::stats::Percentiles;
use super::stats::Usage;
use super::{progress, snapshot, start_admin, Context, POLL};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};
use xxl_job_admin::domain::workflow::{validate, Definition};
use xxl_job_admin::storage::{Db, NewRun, NodeAttempt, NodeLogResult, OnLimit, RunLimits, WorkflowHead};

/// The bench workflow: each node with the nodes it follows.
pub const DAG: [(&str, &[&str]); 10] = [
    ("a", &[]),
    ("b1", &["a"]),
    ("b2", &["a"]),
    ("b3", &["a"]),
    ("b4", &["a"]),
    ("b5", &["a"]),
    ("c", &["b1", "b2", "b3", "b4", "b5"]),
    ("d", &["c"]),
    ("e", &["d"]),
    ("f", &["e"]),
];
/// Longer than any healthy run of the mode needs by far; past it the row fails, saying how far it got.
pub const TIME_LIMIT: Duration = Duration::from_secs(300);
/// Run states that are over.
const OVER: [&str; 4] = ["succeeded", "failed", "stopped", "discarded"];
/// The definition the validation is timed on: `LAYERS` layers of `WIDTH` nodes, each node past the
/// first layer following three of the layer before (fan-outs and joins of three).
const LAYERS: usize = 50;
const WIDTH: usize = 10;
const UPSTREAM_OFFSETS: [usize; 3] = [0, 1, 3];
/// Validations timed; the first is cold.
const VALIDATIONS: usize = 10;

/// What a row of the workflow mode measured.
pub struct WorkflowResult {
    pub runs: usize,
    /// How long admitting the runs took (one transaction each).
    pub admission_ms: i64,
    /// The runs by final state (or the state they were left in).
    pub states: BTreeMap<String, u64>,
    /// From the first admission to the end of the last run.
    pub wall_ms: Option<i64>,
    /// Each run from its start to its end, µs.
    pub run_time: Option<Percentiles>,
    pub edges: EdgeAnalysis,
    pub usage: Usage,
    pub peak_rss_kib: Option<u64>,
    pub executor: ExecutorCounts,
    pub log: LogSummary,
    pub exit: String,
}

impl WorkflowResult {
    pub fn succeeded(&self) -> u64 {
        self.states.get("succeeded").copied().unwrap_or(0)
    }

    pub fn finished(&self) -> u64 {
        OVER.iter().filter_map(|s| self.states.get(*s)).sum()
    }
}

/// The edges of the runs, measured from the executor's trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EdgeAnalysis {
    /// Successor `/run` arrival − the predecessors' last callback, µs, one per (run, node with upstream).
    pub latency: Option<Percentiles>,
    pub measured: u64,
    /// (run, node with upstream) pairs without a `/run` of the node or a callback of a predecessor.
    pub unmeasured: u64,
    /// Log rows the runs' node attempts wrote; of them, those the executor received, and `/run`s beyond
    /// the first for one log row.
    pub node_logs: u64,
    pub received: u64,
    pub doubled: u64,
    /// (run, node) pairs without any log row: nodes never sent.
    pub unsent: u64,
    /// `/run`s for log rows of no run.
    pub foreign: u64,
    /// Log rows whose callback the executor sent more than once (its batch unanswered in time).
    pub resent: u64,
    pub split: EdgeSplit,
}

/// The measured edges cut at the times the engine wrote on its node attempts (ms, the admin's clock: the
/// same host's), µs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EdgeSplit {
    /// From the callback's sending to the engine's end of the node before (`end_time`): the callback
    /// taken, its log row written, the run reconciled.
    pub noticed: Option<Percentiles>,
    /// From there to the successor's attempt sent to the trigger lanes (`send_time`): made ready, its
    /// parameter rendered, the attempt and its log row written.
    pub sent: Option<Percentiles>,
    /// From there to its `/run` at the executor: the lanes and the HTTP request.
    pub arrived: Option<Percentiles>,
}

/// What the workflow tables hold of one run: its node attempts with the engine's times, and their log
/// rows.
pub struct RunRecord {
    pub attempts: Vec<NodeAttempt>,
    pub logs: Vec<NodeLogResult>,
}

/// How long validating the 500-node definition takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Validation {
    pub nodes: usize,
    pub edges: usize,
    /// Reading the JSON document into a definition, µs.
    pub parse_us: u64,
    /// Each validation, µs, the first (cold) first.
    pub validate_us: Vec<u64>,
}

impl Validation {
    pub fn median_us(&self) -> Option<u64> {
        let mut sorted = self.validate_us.clone();
        sorted.sort_unstable();
        sorted.get(sorted.len().checked_sub(1)? / 2).copied()
    }

    pub fn max_us(&self) -> Option<u64> {
        self.validate_us.iter().max().copied()
    }
}

/// Builds the 500-node definition and times its validation (refused definitions are an error: they
/// would time a different path).
pub fn time_validation() -> Result<Validation, String> {
    let document = large_definition().to_string();
    let parsing = Instant::now();
    let definition: Definition =
        serde_json::from_str(&document).map_err(|e| format!("the 500-node definition: {e}"))?;
    let parse_us = parsing.elapsed().as_micros() as u64;
    let mut validate_us = Vec::with_capacity(VALIDATIONS);
    for _ in 0..VALIDATIONS {
        let validating = Instant::now();
        let outcome = validate(&definition);
        validate_us.push(validating.elapsed().as_micros() as u64);
        outcome.map_err(|errors| refused("the 500-node definition", &errors))?;
    }
    let edges = definition.nodes.iter().map(|n| n.upstream.len()).sum();
    Ok(Validation { nodes: definition.nodes.len(), edges, parse_us, validate_us })
}

fn refused(what: &str, errors: &[impl std::fmt::Display]) -> String {
    let errors: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    format!("{what} is refused by validation: {}", errors.join("; "))
}

/// A job node as the bench's workflows write it: a parameter template, as real ones have.
fn job_node(name: &str, upstream: &[String], job_id: i32) -> serde_json::Value {
    json!({"name": name, "upstream": upstream, "kind": {"type": "job", "jobId": job_id, "param": format!("{name} {{{{ ds }}}} {{{{ run_id }}}}")}})
}

/// `LAYERS` × `WIDTH` job nodes; node j of a layer follows nodes j, j+1 and j+3 (mod `WIDTH`) of the
/// layer before, so each node past the first layer joins three and each before the last fans out to three.
fn large_definition() -> serde_json::Value {
    let name = |layer: usize, j: usize| format!("n{layer}_{j}");
    let mut nodes = Vec::with_capacity(LAYERS * WIDTH);
    for layer in 0..LAYERS {
        for j in 0..WIDTH {
            let upstream: Vec<String> = match layer {
                0 => Vec::new(),
                _ => UPSTREAM_OFFSETS.iter().map(|o| name(layer - 1, (j + o) % WIDTH)).collect(),
            };
            nodes.push(job_node(&name(layer, j), &upstream, db::FIRST_JOB_ID));
        }
    }
    json!({"name": "bench-500", "jobGroup": db::GROUP_ID, "nodes": nodes})
}

/// The bench workflow's definition, with room for all `runs` at once (none queue).
fn definition(runs: usize) -> serde_json::Value {
    let nodes: Vec<serde_json::Value> = DAG
        .iter()
        .map(|(name, upstream)| {
            let upstream: Vec<String> = upstream.iter().map(|u| u.to_string()).collect();
            job_node(name, &upstream, db::FIRST_JOB_ID)
        })
        .collect();
    json!({"name": "bench", "jobGroup": db::GROUP_ID, "concurrency": {"maxRuns": runs}, "nodes": nodes})
}

/// A row of the mode: its database, seeded with the bench group and its one job, and the port its admin
/// is to listen on.
pub struct Setup<'a> {
    pub context: &'a Context,
    pub storage: Storage,
    pub row_db: &'a RowDb,
    pub datasource: &'a Datasource,
    pub port: u16,
    pub label: &'a str,
}

impl Setup<'_> {
    /// The workflow inserted, the admin started, `runs` runs admitted at once, and measured until every
    /// run is over (or [`TIME_LIMIT`] has passed, which fails the row). `executor` listens already.
    pub async fn measure(
        &self,
        executor: FastExecutor,
        token: &str,
        runs: usize,
    ) -> Result<WorkflowResult, String> {
        executor.trace();
        let store = db::open_store(self.datasource, &self.context.workdir).await?;
        let measured = self.measure_on(&store, executor, token, runs).await;
        store.close().await;
        measured
    }

    async fn measure_on(
        &self,
        store: &Db,
        executor: FastExecutor,
        token: &str,
        runs: usize,
    ) -> Result<WorkflowResult, String> {
        let label = self.label;
        let workflow = insert_workflow(store, runs).await?;
        // The tables exist before the admin starts: an admin that found none looks again only every 10 s.
        let mut admin = start_admin(self.context, self.port, token, self.datasource).await?;
        let db_process = self.context.servers.process(self.storage);
        let before = snapshot(Some(self.row_db), admin.pid(), db_process).await?;
        progress(format!("{label}: admin pid {} up; starting {runs} runs", admin.pid()));
        let admitting = chrono::Utc::now().timestamp_millis();
        let ids = admit(store, workflow, runs).await;
        let admission_ms = chrono::Utc::now().timestamp_millis() - admitting;
        progress(format!(
            "{label}: runs started in {:.1} s; waiting for them to end",
            admission_ms as f64 / 1000.0
        ));
        let waited = match &ids {
            Ok(_) => wait_until_over(store, label).await,
            Err(e) => Err(e.clone()),
        };
        let after = snapshot(Some(self.row_db), admin.pid(), db_process).await?;
        let peak_rss_kib = peak_rss_kib(admin.pid());
        let usage = after.usage_since(&before);
        let executor_counts = executor.counts();
        progress(format!("{label}: stopping the admin"));
        let exit = match admin.stop().await {
            Ok(status) => format!("{status} after SIGTERM"),
            Err(e) => e,
        };
        let log = admin.log_summary();
        let trace = executor.take_trace();
        executor.stop().await;
        let e = &executor_counts;
        waited.map_err(|why| {
            format!(
                "{why}; executor: {} /run, {} callbacks applied, {} batches failed; admin log: {} warnings, \
                 {} errors {:?}",
                e.runs, e.callbacks_applied, e.callback_failures, log.warnings, log.errors, log.samples
            )
        })?;
        let ids = ids?;
        let mut states = BTreeMap::new();
        let (mut ended, mut run_time) = (Vec::new(), Vec::new());
        let mut records = Vec::with_capacity(ids.len());
        for id in &ids {
            let run = store.load_run(*id).await.map_err(|e| format!("reading run {id}: {e}"))?;
            let run = run.ok_or_else(|| format!("run {id} is gone"))?;
            *states.entry(run.state).or_default() += 1;
            ended.extend(run.end_time);
            if let (Some(start), Some(end)) = (run.start_time, run.end_time) {
                run_time.push((end - start) * 1000);
            }
            let logs = store
                .run_trigger_results(*id)
                .await
                .map_err(|e| format!("reading run {id}'s log rows: {e}"))?;
            let attempts =
                store.node_attempts(*id).await.map_err(|e| format!("reading run {id}'s nodes: {e}"))?;
            records.push(RunRecord { attempts, logs });
        }
        Ok(WorkflowResult {
            runs,
            admission_ms,
            states,
            wall_ms: ended.iter().max().map(|end| end - admitting),
            run_time: Percentiles::of(run_time),
            edges: analyse(&records, &trace),
            usage,
            peak_rss_kib,
            executor: executor_counts,
            log,
            exit,
        })
    }
}

/// The workflow's tables and the workflow, its definition checked as the admin would check it on a save.
async fn insert_workflow(store: &Db, runs: usize) -> Result<i64, String> {
    let document = definition(runs);
    let parsed: Definition =
        serde_json::from_value(document.clone()).map_err(|e| format!("the bench workflow: {e}"))?;
    validate(&parsed).map_err(|errors| refused("the bench workflow", &errors))?;
    store.ensure_extension_tables().await.map_err(|e| format!("creating the workflow tables: {e}"))?;
    let head = WorkflowHead {
        name: parsed.name.clone(),
        job_group: db::GROUP_ID,
        schedule_type: "NONE".into(),
        schedule_conf: None,
        misfire_strategy: "DO_NOTHING".into(),
    };
    let now = chrono::Utc::now().timestamp_millis();
    store
        .insert_workflow(&head, &document.to_string(), Some("xxl-job-bench"), now)
        .await
        .map_err(|e| format!("inserting the bench workflow: {e}"))
}

/// Admits `runs` runs, each `running` at once (the limit leaves room for all); their ids.
async fn admit(store: &Db, workflow: i64, runs: usize) -> Result<Vec<i64>, String> {
    let limits = RunLimits { max_runs: runs as u32, on_limit: OnLimit::Queue { max_queued: 0 } };
    let mut ids = Vec::with_capacity(runs);
    for _ in 0..runs {
        let now = chrono::Utc::now().timestamp_millis();
        let run = NewRun {
            workflow_id: workflow,
            version: 1,
            state: "running".into(),
            trigger_type: "api".into(),
            logical_time: now,
            params: "{}".into(),
            started_by: Some("xxl-job-bench".into()),
            parent_run_id: None,
            parent_node: None,
            backfill_id: None,
            add_time: now,
            deadline_time: None,
        };
        let admitted = store
            .admit_run(&run, limits, now)
            .await
            .map_err(|e| format!("starting a run: {e}"))?
            .ok_or("the bench workflow is gone")?;
        if admitted.state != "running" {
            return Err(format!("run {} was admitted {}, not running", admitted.id, admitted.state));
        }
        ids.push(admitted.id);
    }
    Ok(ids)
}

/// Waits until no run is active, or fails after [`TIME_LIMIT`] naming how many were left in which state.
async fn wait_until_over(store: &Db, label: &str) -> Result<(), String> {
    let deadline = tokio::time::Instant::now() + TIME_LIMIT;
    let mut reported = tokio::time::Instant::now();
    loop {
        let active = store.active_run_counts().await.map_err(|e| format!("counting active runs: {e}"))?;
        let left: i64 = active.iter().map(|(_, n)| n).sum();
        if left == 0 {
            return Ok(());
        }
        let states = || active.iter().map(|(s, n)| format!("{n} {s}")).collect::<Vec<_>>().join(", ");
        if tokio::time::Instant::now() >= deadline {
            return Err(format!("runs not over after {} s: {}", TIME_LIMIT.as_secs(), states()));
        }
        if reported.elapsed() >= Duration::from_secs(10) {
            progress(format!("{label}: runs still active: {}", states()));
            reported = tokio::time::Instant::now();
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The edges of each run (its log rows by node) against the executor's trace. A node's latest attempt
/// counts (a retried node's successor follows its last attempt); with shards, a node starts at its first
/// shard's `/run` and ends at its last shard's callback.
pub fn analyse(runs: &[RunRecord], trace: &LogTrace) -> EdgeAnalysis {
    let mut arrivals: HashMap<i64, (i64, u64)> = HashMap::new();
    for (log_id, at_us) in &trace.runs {
        let seen = arrivals.entry(*log_id).or_insert((*at_us, 0));
        seen.0 = seen.0.min(*at_us);
        seen.1 += 1;
    }
    // A log row's callback counts from its first sending: a batch sent again after no answer in time
    // may have been applied by the first (measuring from it never flatters the admin).
    let mut callbacks: HashMap<i64, (i64, u64)> = HashMap::new();
    for (log_id, sent_us) in &trace.callbacks {
        let seen = callbacks.entry(*log_id).or_insert((*sent_us, 0));
        seen.0 = seen.0.min(*sent_us);
        seen.1 += 1;
    }
    let mut a = EdgeAnalysis::default();
    let mut latencies = Vec::new();
    let (mut noticed, mut sent, mut arrived) = (Vec::new(), Vec::new(), Vec::new());
    let mut known = std::collections::HashSet::new();
    for RunRecord { attempts, logs } in runs {
        let mut latest: HashMap<&str, i32> = HashMap::new();
        for log in logs {
            known.insert(log.log_id);
            a.node_logs += 1;
            if let Some((_, n)) = arrivals.get(&log.log_id) {
                a.received += 1;
                a.doubled += n - 1;
            }
            let attempt = latest.entry(log.node.as_str()).or_insert(log.attempt);
            *attempt = (*attempt).max(log.attempt);
        }
        // A node's latest attempt: its first shard's /run and its last shard's callback (`None` when a
        // shard has none traced).
        let span = |node: &str| -> (Option<i64>, Option<i64>) {
            let Some(attempt) = latest.get(node) else { return (None, None) };
            let shards: Vec<i64> =
                logs.iter().filter(|l| l.node == node && l.attempt == *attempt).map(|l| l.log_id).collect();
            let starts: Option<Vec<i64>> = shards.iter().map(|id| arrivals.get(id).map(|s| s.0)).collect();
            let ends: Option<Vec<i64>> = shards.iter().map(|id| callbacks.get(id).map(|c| c.0)).collect();
            (starts.and_then(|s| s.into_iter().min()), ends.and_then(|e| e.into_iter().max()))
        };
        // The engine's record of a node's latest attempt.
        let attempt = |node: &str| {
            let number = latest.get(node)?;
            attempts.iter().find(|a| a.node == node && a.attempt == *number)
        };
        for (node, upstream) in DAG {
            if !latest.contains_key(node) {
                a.unsent += 1;
            }
            if upstream.is_empty() {
                continue;
            }
            let ends: Option<Vec<i64>> = upstream.iter().map(|u| span(u).1).collect();
            let (Some(started), Some(called_back)) = (span(node).0, ends.and_then(|e| e.into_iter().max()))
            else {
                a.unmeasured += 1;
                continue;
            };
            latencies.push(started - called_back);
            let engine_ends: Option<Vec<i64>> = upstream.iter().map(|u| attempt(u)?.end_time).collect();
            let engine_end = engine_ends.and_then(|e| e.into_iter().max());
            if let (Some(ended), Some(sent_ms)) = (engine_end, attempt(node).and_then(|a| a.send_time)) {
                noticed.push(ended * 1000 - called_back);
                sent.push((sent_ms - ended) * 1000);
                arrived.push(started - sent_ms * 1000);
            }
        }
    }
    a.foreign = arrivals.keys().filter(|id| !known.contains(*id)).count() as u64;
    a.resent = callbacks.values().filter(|(_, n)| *n > 1).count() as u64;
    a.measured = latencies.len() as u64;
    a.latency = Percentiles::of(latencies);
    a.split = EdgeSplit {
        noticed: Percentiles::of(noticed),
        sent: Percentiles::of(sent),
        arrived: Percentiles::of(arrived),
    };
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(log_id: i64, node: &str, attempt: i32) -> NodeLogResult {
        NodeLogResult {
            log_id,
            node: node.into(),
            attempt,
            shard_index: 0,
            shard_total: 1,
            job_id: db::FIRST_JOB_ID,
            executor_address: None,
            trigger_code: 200,
            handle_code: 200,
            handle_msg: None,
        }
    }

    fn attempt(node: &str, attempt: i32, send_ms: i64, end_ms: i64) -> NodeAttempt {
        NodeAttempt {
            run_id: 1,
            node: node.into(),
            attempt,
            state: "succeeded".into(),
            seq: 3,
            ready_time: Some(send_ms - 1),
            retry_time: None,
            send_time: Some(send_ms),
            end_time: Some(end_ms),
            param: None,
            output: None,
            message: None,
            acted_by: None,
        }
    }

    /// A run whose node `i` of [`DAG`] is log `base + i`, sent by the engine at `i × 100 − 2` ms, arriving
    /// at `i × 100` ms, called back 10 ms later and seen ended by the engine 5 ms after that.
    fn run(base: i64) -> (RunRecord, LogTrace) {
        let mut record = RunRecord { attempts: Vec::new(), logs: Vec::new() };
        let mut trace = LogTrace::default();
        for (i, (node, _)) in DAG.iter().enumerate() {
            let (id, at_ms) = (base + i as i64, i as i64 * 100);
            record.logs.push(log(id, node, 1));
            record.attempts.push(attempt(node, 1, at_ms - 2, at_ms + 15));
            trace.runs.push((id, at_ms * 1000));
            trace.callbacks.push((id, (at_ms + 10) * 1000));
        }
        (record, trace)
    }

    #[test]
    fn an_edge_is_from_the_callback_to_the_successors_run() {
        let (mut record, mut trace) = run(100);
        // b3 (log 103) is called back last of the fan and seen ended at 555 ms: c (arriving at 600 ms)
        // waited for it.
        trace.callbacks.iter_mut().filter(|(id, _)| *id == 103).for_each(|(_, at)| *at = 550_000);
        record.attempts.iter_mut().filter(|a| a.node == "b3").for_each(|a| a.end_time = Some(555));
        let a = analyse(&[record], &trace);
        // b_i: 100·i − 10 ms after a's callback; c: 600 − 550; d, e, f: 90 ms each.
        let mut expected = vec![90_000, 190_000, 290_000, 390_000, 490_000, 50_000, 90_000, 90_000, 90_000];
        expected.sort_unstable();
        assert_eq!(a.latency, Percentiles::of(expected));
        assert_eq!((a.measured, a.unmeasured, a.node_logs, a.received), (9, 0, 10, 10));
        assert_eq!((a.doubled, a.unsent, a.foreign), (0, 0, 0));
        // Every edge: the engine saw the end 5 ms after the callback and sent the successor 2 ms before
        // its /run; b_i was sent 100·i − 2 − 15 ms after a's end, c 598 − 555 = 43 ms after b3's, d, e
        // and f 83 ms after theirs.
        let split = &a.split;
        assert_eq!(split.noticed.map(|p| (p.p50, p.max)), Some((5_000, 5_000)));
        let mut sent = vec![83_000, 183_000, 283_000, 383_000, 483_000, 43_000, 83_000, 83_000, 83_000];
        sent.sort_unstable();
        assert_eq!(split.sent, Percentiles::of(sent));
        assert_eq!(split.arrived.map(|p| (p.p50, p.max)), Some((2_000, 2_000)));
    }

    #[test]
    fn gaps_and_repeats_are_counted_not_guessed() {
        let (mut record, mut trace) = run(100);
        let logs = &mut record.logs;
        // f (log 109) was never sent; e's callback was not traced; d's /run came twice; a /run of no run.
        logs.retain(|l| l.log_id != 109);
        trace.runs.retain(|(id, _)| *id != 109);
        trace.callbacks.retain(|(id, _)| *id != 108);
        trace.runs.push((107, 800_000));
        // c's callback went out again 5 s later: the first sending counts.
        trace.callbacks.push((106, 5_610_000));
        trace.runs.push((999, 1_000));
        // a failed first: its second attempt (log 200, at 50 ms) is the one b1..b5 followed.
        logs.push(log(200, "a", 2));
        trace.runs.push((200, 50_000));
        trace.callbacks.push((200, 60_000));
        let a = analyse(&[record], &trace);
        // f: unsent and unmeasured; b1..b5, c, d measured, e's /run measured from d; f none.
        assert_eq!((a.measured, a.unmeasured, a.unsent, a.doubled, a.foreign, a.resent), (8, 1, 1, 1, 1, 1));
        assert_eq!((a.node_logs, a.received), (10, 10));
        // b1..b5 followed a's second attempt (called back at 60 ms): b5 came 440 ms after it.
        assert_eq!(a.latency.map(|l| l.max), Some(440_000));
        assert_eq!(a.latency.map(|l| l.p50), Some(90_000));
    }

    #[test]
    fn the_definitions_pass_validation() {
        let bench: Definition = serde_json::from_value(definition(1_000)).unwrap();
        assert_eq!(validate(&bench), Ok(()));
        assert_eq!(bench.concurrency.max_runs, 1_000);
        let timed = time_validation().unwrap();
        assert_eq!((timed.nodes, timed.edges, timed.validate_us.len()), (500, 1_470, VALIDATIONS));
        assert!(timed.median_us() <= timed.max_us());
    }
}
