//! The workflow engine over real HTTP on every backend: runs started and operated on through the REST
//! API, node runs sent to an in-test executor as ordinary triggers and advanced by its callbacks.

use crate::support::console::admin;
use crate::support::rest::RestClient;
use crate::support::scripted_executor::{Answer, Run, ScriptedExecutor};
use crate::support::webhook::WebhookServer;
use crate::support::{eventually, fixtures, Backend, Context, TestApp, TestDb};
use crate::{cases, ensure, ensure_eq, Case, TestResult, ALL};
use libtest_mimic::Failed;
use serde_json::{json, Value};
use std::time::Duration;
use xxl_job_admin::storage::Db;

pub fn cases() -> Vec<Case> {
    cases! {
        "workflows" {
            ALL => fan_out_and_join_pass_outputs_between_nodes,
            ALL => a_failure_cuts_off_only_what_depends_on_it,
            ALL => strategy_end_starts_nothing_after_a_failure,
            ALL => retries_back_off_then_succeed,
            ALL => a_branch_takes_one_way_and_skips_the_other,
            ALL => approval_pause_resume_and_stop,
            ALL => retry_failed_keeps_what_succeeded,
            ALL => runs_beyond_the_limit_queue_or_are_discarded,
            ALL => a_parameter_too_large_fails_its_node_unsent,
            ALL => a_sub_workflow_runs_as_one_step,
            ALL => a_sharded_node_waits_for_every_shard,
            ALL => a_node_past_its_timeout_is_killed,
            ALL => a_backfill_runs_each_instant_n_at_a_time_and_stops_as_a_whole,
            ALL => a_failed_run_and_a_passed_deadline_alarm_once,
        }
    }
}

/// What every test starts from: an admin, a token, an executor scripted by handler, a group listing it.
struct Setup {
    _db: TestDb,
    app: TestApp,
    api: RestClient,
    store: Db,
    executor: ScriptedExecutor,
    group: i32,
}

/// The script most tests use: `ok` echoes its parameter as JSON output, `rows` returns `{"rows": 42}`,
/// `fail` fails, `flaky` fails twice then succeeds, `once` fails once, `slow` takes 1.2 s, `hang` never
/// reports.
fn script(run: &Run) -> Answer {
    let ok = |msg: String| Answer::Callback { code: 200, msg, delay_ms: 30 };
    let fail = Answer::Callback { code: 500, msg: "it broke".into(), delay_ms: 30 };
    match run.handler.as_str() {
        "ok" => ok(json!({"echo": run.param, "shard": run.shard_index}).to_string()),
        "rows" => ok(json!({"rows": 42}).to_string()),
        "fail" => fail,
        "flaky" if run.nth < 2 => fail,
        "once" if run.nth < 1 => fail,
        "slow" => Answer::Callback { code: 200, msg: "slow done".into(), delay_ms: 1_200 },
        "hang" => Answer::Hang,
        _ => ok("done".into()),
    }
}

impl Setup {
    async fn start(backend: Backend) -> Result<Setup, Failed> {
        Setup::start_with(backend, &[]).await
    }

    /// With these admin arguments.
    async fn start_with(backend: Backend, args: &[&str]) -> Result<Setup, Failed> {
        let db = TestDb::fresh(backend)?;
        let app = TestApp::start(&db, args).await?;
        let console = admin(&app).await?;
        let api = RestClient::issued_by(&app.base, &console, None).await?;
        let store = db.open().await?;
        let executor = ScriptedExecutor::start(&app.base, script).await?;
        let group = fixtures::manual_group(&store, "workflow-executor", &[&executor.address]).await?;
        Ok(Setup { _db: db, app, api, store, executor, group })
    }

    /// A job of the group whose handler is `handler`.
    async fn job(&self, handler: &str) -> Result<i32, Failed> {
        let mut job = fixtures::job(self.group);
        job.executor_handler = Some(handler.into());
        job.executor_param = Some(String::new());
        fixtures::insert(&self.store, &job).await
    }

    /// Saves a workflow of this group from `nodes` and the definition's other fields in `extra`, over
    /// the REST API.
    async fn workflow(&self, name: &str, nodes: Value, extra: Value) -> Result<i64, Failed> {
        self.api.save_workflow(self.group, name, nodes, extra).await
    }

    async fn start_run(&self, workflow: i64, params: Value) -> Result<Value, Failed> {
        let reply = self.api.post(&format!("/workflows/{workflow}/runs"), json!({"params": params})).await?;
        ensure_eq!(reply.status, 201, "{}", reply.body);
        let id = reply.body["id"].as_i64().context("run id")?;
        ensure_eq!(reply.header("location"), Some(format!("/xxl-job-admin/openapi/v1/workflow-runs/{id}")));
        Ok(reply.body)
    }

    async fn run(&self, id: i64) -> Result<Value, Failed> {
        self.api.expect(200, self.api.get(&format!("/workflow-runs/{id}"))).await
    }

    /// The run once it is in `state`.
    async fn run_in(&self, id: i64, state: &str, within: Duration) -> Result<Value, Failed> {
        self.poll(id, within, &format!("run {id} {state}"), |run| run["state"] == state).await
    }

    /// The run once it is over, in whichever final state.
    async fn finished(&self, id: i64) -> Result<Value, Failed> {
        let over =
            |run: &Value| ["succeeded", "failed", "stopped"].contains(&run["state"].as_str().unwrap_or(""));
        self.poll(id, Duration::from_secs(30), &format!("run {id} to finish"), over).await
    }

    /// The run once `done` holds for it, read every 100 ms; the last reading in the failure.
    async fn poll(
        &self,
        id: i64,
        within: Duration,
        what: &str,
        done: impl Fn(&Value) -> bool,
    ) -> Result<Value, Failed> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let run = self.run(id).await?;
            if done(&run) {
                return Ok(run);
            }
            if tokio::time::Instant::now() > deadline {
                return Err(Failed::from(format!(
                    "timed out after {within:?} waiting for {what}; last seen: {run}"
                )));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn operate(&self, run: i64, path: &str, status: u16) -> Result<Value, Failed> {
        self.api.expect(status, self.api.post(&format!("/workflow-runs/{run}/{path}"), json!({}))).await
    }

    async fn stop(self) {
        self.app.stop().await;
    }
}

fn node_of<'a>(run: &'a Value, name: &str) -> &'a Value {
    run["nodes"].as_array().and_then(|n| n.iter().find(|n| n["name"] == name)).unwrap_or(&Value::Null)
}

fn states(run: &Value) -> Vec<(String, String)> {
    run["nodes"]
        .as_array()
        .map(|nodes| {
            nodes
                .iter()
                .map(|n| {
                    (
                        n["name"].as_str().unwrap_or("").to_string(),
                        n["state"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn expect_states(run: &Value, expected: &[(&str, &str)]) -> TestResult {
    let expected: Vec<(String, String)> =
        expected.iter().map(|(n, s)| (n.to_string(), s.to_string())).collect();
    ensure_eq!(states(run), expected, "node states of {run}");
    Ok(())
}

fn job_node(name: &str, job: i32, upstream: &[&str], param: &str) -> Value {
    json!({"name": name, "upstream": upstream, "kind": {"type": "job", "jobId": job, "param": param}})
}

/// extract → three transforms → load: each transform gets extract's output through its template, the
/// join waits for all three, and every node run is an ordinary log row sent once.
async fn fan_out_and_join_pass_outputs_between_nodes(backend: Backend) -> TestResult {
    let s = Setup::start(backend).await?;
    let (rows, ok) = (s.job("rows").await?, s.job("ok").await?);
    let nodes = json!([
        job_node("extract", rows, &[], ""),
        job_node("t1", ok, &["extract"], "{{ nodes.extract.output.rows }}-{{ params.region }}-1"),
        job_node("t2", ok, &["extract"], "{{ nodes.extract.output.rows }}-{{ params.region }}-2"),
        job_node("t3", ok, &["extract"], "{{ nodes.extract.output.rows }}-{{ params.region }}-3"),
        job_node("load", ok, &["t1", "t2", "t3"], "{{ nodes.t1.output.echo }}+{{ nodes.t3.output.echo }}"),
    ]);
    let wf = s.workflow("etl", nodes, json!({"params": {"region": "us"}})).await?;
    let started = s.start_run(wf, json!({"region": "eu"})).await?;
    ensure_eq!(started["state"], "running");
    let id = started["id"].as_i64().context("id")?;
    let run = s.run_in(id, "succeeded", Duration::from_secs(30)).await?;
    expect_states(
        &run,
        &[
            ("extract", "succeeded"),
            ("t1", "succeeded"),
            ("t2", "succeeded"),
            ("t3", "succeeded"),
            ("load", "succeeded"),
        ],
    )?;
    ensure_eq!(run["params"], json!({"region": "eu"}), "run parameters lay over the defaults");
    ensure_eq!(run["workflowName"], "etl");
    let mut params: Vec<String> = s.executor.runs_of("ok").iter().map(|r| r.param.clone()).collect();
    params.sort();
    let mut expected = vec!["42-eu-1", "42-eu-2", "42-eu-3", "42-eu-1+42-eu-3"];
    expected.sort();
    ensure_eq!(params, expected);
    let runs = s.executor.runs();
    ensure_eq!(runs.len(), 5, "each node sent once: {runs:?}");
    let extract = &runs[0];
    ensure_eq!(extract.handler, "rows");
    let load = runs.iter().find(|r| r.param.contains('+')).context("load's run")?;
    ensure!(
        runs.iter().all(|r| r.log_id == load.log_id || r.at_ms <= load.at_ms),
        "load ran after every transform"
    );
    ensure_eq!(node_of(&run, "extract")["attempts"][0]["output"], json!({"rows": 42}));
    ensure_eq!(node_of(&run, "t2")["attempts"][0]["param"], "42-eu-2");
    // Each attempt names its log row, an ordinary trigger log that no fail monitor retries.
    let log_id = node_of(&run, "load")["attempts"][0]["logIds"][0].as_i64().context("load's log id")?;
    ensure_eq!(log_id, load.log_id);
    let log = s.api.expect(200, s.api.get(&format!("/logs/{log_id}"))).await?;
    ensure_eq!(log["handleCode"], 200, "{log}");
    ensure_eq!(log["executorFailRetryCount"], 0, "{log}");
    s.stop().await;
    Ok(())
}

/// `continue`: a failed node cuts off what needs its success, its `one_failed` follower runs, and an
/// unrelated branch runs to its end; the run fails.
async fn a_failure_cuts_off_only_what_depends_on_it(backend: Backend) -> TestResult {
    let s = Setup::start(backend).await?;
    // The job's own retries are a fail monitor's (ours, or a Java admin's beside it): never a node's.
    let mut failing = fixtures::job(s.group);
    failing.executor_handler = Some("fail".into());
    failing.executor_fail_retry_count = 3;
    let fail = fixtures::insert(&s.store, &failing).await?;
    let ok = s.job("ok").await?;
    let mut on_failure = job_node("cleanup", ok, &["a"], "cleanup");
    on_failure["triggerRule"] = json!("one_failed");
    let nodes = json!([
        job_node("a", fail, &[], ""),
        job_node("after_a", ok, &["a"], ""),
        on_failure,
        job_node("b", ok, &[], "b"),
        job_node("after_b", ok, &["b"], "after_b"),
    ]);
    let wf = s.workflow("continue", nodes, json!({"failureStrategy": "continue"})).await?;
    let id = s.start_run(wf, json!({})).await?["id"].as_i64().context("id")?;
    let run = s.finished(id).await?;
    ensure_eq!(run["state"], "failed", "{run}");
    expect_states(
        &run,
        &[
            ("a", "failed"),
            ("after_a", "upstream_failed"),
            ("cleanup", "succeeded"),
            ("b", "succeeded"),
            ("after_b", "succeeded"),
        ],
    )?;
    let sent: Vec<String> = s.executor.runs_of("ok").iter().map(|r| r.param.clone()).collect();
    ensure!(!sent.iter().any(|p| p.is_empty()), "after_a was never sent: {sent:?}");
    ensure!(
        node_of(&run, "a")["attempts"][0]["message"].as_str().is_some_and(|m| m.contains("code 500")),
        "{run}"
    );
    let log_id = node_of(&run, "a")["attempts"][0]["logIds"][0].as_i64().context("a's log id")?;
    let log = s.api.expect(200, s.api.get(&format!("/logs/{log_id}"))).await?;
    ensure_eq!(log["executorFailRetryCount"], 0, "a node's row asks no fail monitor to retry it: {log}");
    // The fail monitor passes every 10 s; a retry it made would reach the executor.
    tokio::time::sleep(Duration::from_secs(11)).await;
    ensure_eq!(s.executor.runs_of("fail").len(), 1, "the failed node was not retried by a fail monitor");
    s.stop().await;
    Ok(())
}

/// `end`: once a node fails nothing new starts; the node already running finishes.
async fn strategy_end_starts_nothing_after_a_failure(backend: Backend) -> TestResult {
    let s = Setup::start(backend).await?;
    let (fail, slow, ok) = (s.job("fail").await?, s.job("slow").await?, s.job("ok").await?);
    let nodes = json!([
        job_node("a", fail, &[], ""),
        job_node("b", slow, &[], ""),
        job_node("after_b", ok, &["b"], "never"),
    ]);
    let wf = s.workflow("end", nodes, json!({"failureStrategy": "end"})).await?;
    let id = s.start_run(wf, json!({})).await?["id"].as_i64().context("id")?;
    let run = s.finished(id).await?;
    ensure_eq!(run["state"], "failed", "{run}");
    expect_states(&run, &[("a", "failed"), ("b", "succeeded"), ("after_b", "stopped")])?;
    ensure!(s.executor.runs_of("ok").is_empty(), "nothing started after the failure");
    s.stop().await;
    Ok(())
}

/// A failing node is retried with growing delays and succeeds on its third attempt; one out of retries
/// fails for good.
async fn retries_back_off_then_succeed(backend: Backend) -> TestResult {
    let s = Setup::start(backend).await?;
    let (flaky, fail) = (s.job("flaky").await?, s.job("fail").await?);
    let mut a = job_node("a", flaky, &[], "");
    a["retry"] = json!({"count": 3, "delayMs": 300, "factor": 2.0});
    let mut b = job_node("b", fail, &[], "");
    b["retry"] = json!({"count": 1, "delayMs": 100});
    let wf = s.workflow("retries", json!([a, b]), json!({})).await?;
    let id = s.start_run(wf, json!({})).await?["id"].as_i64().context("id")?;
    let run = s.finished(id).await?;
    expect_states(&run, &[("a", "succeeded"), ("b", "failed")])?;
    let attempts: Vec<&str> = node_of(&run, "a")["attempts"]
        .as_array()
        .context("attempts")?
        .iter()
        .filter_map(|a| a["state"].as_str())
        .collect();
    ensure_eq!(attempts, ["failed", "failed", "succeeded"]);
    ensure_eq!(node_of(&run, "b")["attempts"].as_array().map(Vec::len), Some(2));
    let sent: Vec<i64> = s.executor.runs_of("flaky").iter().map(|r| r.at_ms).collect();
    ensure_eq!(sent.len(), 3);
    ensure!(sent[1] - sent[0] >= 300, "first retry waited its delay: {sent:?}");
    ensure!(sent[2] - sent[1] >= 600, "second retry waited twice as long: {sent:?}");
    s.stop().await;
    Ok(())
}

/// A branch chooses its way from an upstream output; the other way is skipped, and a `none_failed`
/// join after both runs.
async fn a_branch_takes_one_way_and_skips_the_other(backend: Backend) -> TestResult {
    let s = Setup::start(backend).await?;
    let (rows, ok) = (s.job("rows").await?, s.job("ok").await?);
    let mut join = job_node("notify", ok, &["big", "small"], "notify");
    join["triggerRule"] = json!("none_failed");
    let nodes = json!([
        job_node("extract", rows, &[], ""),
        {"name": "check", "upstream": ["extract"], "kind": {"type": "branch",
            "ways": [{"when": "nodes.extract.output.rows > params.threshold", "to": ["big"]}], "default": ["small"]}},
        job_node("big", ok, &["check"], "big"),
        job_node("small", ok, &["check"], "small"),
        join,
    ]);
    let wf = s.workflow("branch", nodes, json!({"params": {"threshold": 10}})).await?;
    let id = s.start_run(wf, json!({})).await?["id"].as_i64().context("id")?;
    let run = s.run_in(id, "succeeded", Duration::from_secs(30)).await?;
    expect_states(
        &run,
        &[
            ("extract", "succeeded"),
            ("check", "succeeded"),
            ("big", "succeeded"),
            ("small", "skipped"),
            ("notify", "succeeded"),
        ],
    )?;
    ensure_eq!(node_of(&run, "check")["attempts"][0]["output"], json!(["big"]));
    let id = s.start_run(wf, json!({"threshold": 100})).await?["id"].as_i64().context("id")?;
    let run = s.run_in(id, "succeeded", Duration::from_secs(30)).await?;
    expect_states(
        &run,
        &[
            ("extract", "succeeded"),
            ("check", "succeeded"),
            ("big", "skipped"),
            ("small", "succeeded"),
            ("notify", "succeeded"),
        ],
    )?;
    s.stop().await;
    Ok(())
}

/// An approval holds the run until approved; a paused run starts nothing until resumed; a stopped run
/// kills its running node and starts nothing more.
async fn approval_pause_resume_and_stop(backend: Backend) -> TestResult {
    let s = Setup::start(backend).await?;
    let (slow, ok, hang) = (s.job("slow").await?, s.job("ok").await?, s.job("hang").await?);
    let nodes = json!([
        {"name": "gate", "kind": {"type": "approval", "approvers": ["admin"]}},
        job_node("first", slow, &["gate"], ""),
        job_node("second", ok, &["first"], "second"),
    ]);
    let wf = s.workflow("approve", nodes, json!({})).await?;
    let id = s.start_run(wf, json!({})).await?["id"].as_i64().context("id")?;
    let run = eventually(Duration::from_secs(10), "the approval to wait", || async {
        let run = s.run(id).await.ok()?;
        (node_of(&run, "gate")["state"] == "waiting_approval").then_some(run)
    })
    .await?;
    ensure!(s.executor.runs().is_empty(), "nothing runs before the approval: {run}");
    s.operate(id, "nodes/first/approve", 409).await?;
    s.operate(id, "nodes/gate/approve", 200).await?;
    eventually(Duration::from_secs(10), "first to run", || async {
        (!s.executor.runs_of("slow").is_empty()).then_some(())
    })
    .await?;
    s.operate(id, "pause", 200).await?;
    s.operate(id, "pause", 409).await?;
    let paused = eventually(Duration::from_secs(10), "first to finish while paused", || async {
        let run = s.run(id).await.ok()?;
        (node_of(&run, "first")["state"] == "succeeded").then_some(run)
    })
    .await?;
    ensure_eq!(paused["state"], "paused");
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    ensure!(s.executor.runs_of("ok").is_empty(), "a paused run starts nothing");
    s.operate(id, "resume", 200).await?;
    let run = s.run_in(id, "succeeded", Duration::from_secs(30)).await?;
    ensure_eq!(node_of(&run, "gate")["attempts"][0]["actedBy"], "admin");

    let wf = s
        .workflow(
            "stop",
            json!([job_node("stuck", hang, &[], ""), job_node("next", ok, &["stuck"], "no")]),
            json!({}),
        )
        .await?;
    let id = s.start_run(wf, json!({})).await?["id"].as_i64().context("id")?;
    eventually(Duration::from_secs(10), "stuck to run", || async {
        (!s.executor.runs_of("hang").is_empty()).then_some(())
    })
    .await?;
    s.operate(id, "stop", 200).await?;
    let run = s.run_in(id, "stopped", Duration::from_secs(20)).await?;
    expect_states(&run, &[("stuck", "stopped"), ("next", "stopped")])?;
    let kills = eventually(Duration::from_secs(10), "the running node's kill", || async {
        Some(s.executor.kills()).filter(|k| !k.is_empty())
    })
    .await?;
    ensure_eq!(kills, vec![i64::from(hang)], "the running node was killed");
    s.operate(id, "stop", 409).await?;
    s.stop().await;
    Ok(())
}

/// Retrying a failed run runs only what did not succeed, and the run ends succeeded.
async fn retry_failed_keeps_what_succeeded(backend: Backend) -> TestResult {
    let s = Setup::start(backend).await?;
    let (ok, once) = (s.job("ok").await?, s.job("once").await?);
    let nodes = json!([
        job_node("first", ok, &[], "first"),
        job_node("second", once, &["first"], ""),
        job_node("third", ok, &["second"], "third")
    ]);
    let wf = s.workflow("retry", nodes, json!({})).await?;
    let id = s.start_run(wf, json!({})).await?["id"].as_i64().context("id")?;
    let run = s.run_in(id, "failed", Duration::from_secs(30)).await?;
    expect_states(&run, &[("first", "succeeded"), ("second", "failed"), ("third", "upstream_failed")])?;
    let retried = s.operate(id, "retry-failed", 200).await?;
    ensure_eq!(retried["nodes"], json!(["second", "third"]));
    let run = s.run_in(id, "succeeded", Duration::from_secs(30)).await?;
    ensure_eq!(
        s.executor.runs_of("ok").iter().filter(|r| r.param == "first").count(),
        1,
        "first kept its success"
    );
    ensure_eq!(node_of(&run, "second")["attempts"][1]["actedBy"], "admin");
    // Rerun from a node: it and what follows run again.
    let rerun = s.operate(id, "nodes/second/rerun", 200).await?;
    ensure_eq!(rerun["nodes"], json!(["second", "third"]));
    s.run_in(id, "succeeded", Duration::from_secs(30)).await?;
    ensure_eq!(s.executor.runs_of("ok").iter().filter(|r| r.param == "third").count(), 2);
    s.stop().await;
    Ok(())
}

/// With `maxRuns` 1 a second run waits and starts when the first ends; under `discard` it is refused
/// with a record that says so.
async fn runs_beyond_the_limit_queue_or_are_discarded(backend: Backend) -> TestResult {
    let s = Setup::start(backend).await?;
    let slow = s.job("slow").await?;
    let queue = s
        .workflow("queue", json!([job_node("work", slow, &[], "")]), json!({"concurrency": {"maxRuns": 1}}))
        .await?;
    let first = s.start_run(queue, json!({})).await?;
    let second = s.start_run(queue, json!({})).await?;
    ensure_eq!((first["state"].as_str(), second["state"].as_str()), (Some("running"), Some("queued")));
    let second_id = second["id"].as_i64().context("id")?;
    s.run_in(second_id, "succeeded", Duration::from_secs(30)).await?;
    let runs = s.executor.runs_of("slow");
    ensure_eq!(runs.len(), 2);
    ensure!(runs[1].at_ms - runs[0].at_ms >= 1_000, "the queued run started after the first ended: {runs:?}");

    let discard = s
        .workflow(
            "discard",
            json!([job_node("work", slow, &[], "")]),
            json!({"concurrency": {"maxRuns": 1, "onLimit": "discard"}}),
        )
        .await?;
    s.start_run(discard, json!({})).await?;
    let refused = s.start_run(discard, json!({})).await?;
    ensure_eq!(refused["state"], "discarded");
    let run = s.run(refused["id"].as_i64().context("id")?).await?;
    ensure!(run["message"].as_str().is_some_and(|m| m.contains("discarded")), "{run}");
    let listed = s.api.expect(200, s.api.get(&format!("/workflows/{discard}/runs?state=discarded"))).await?;
    ensure_eq!(listed["total"], 1, "{listed}");
    s.stop().await;
    Ok(())
}

/// A parameter rendered longer than a log row holds fails its node with a message saying so, and
/// nothing is sent.
async fn a_parameter_too_large_fails_its_node_unsent(backend: Backend) -> TestResult {
    let s = Setup::start(backend).await?;
    let ok = s.job("ok").await?;
    let wf = s.workflow("large", json!([job_node("big", ok, &[], "{{ 'x' * 600 }}")]), json!({})).await?;
    let id = s.start_run(wf, json!({})).await?["id"].as_i64().context("id")?;
    let run = s.run_in(id, "failed", Duration::from_secs(20)).await?;
    let message = node_of(&run, "big")["attempts"][0]["message"].as_str().unwrap_or("").to_string();
    ensure!(message.contains("600 characters") && message.contains("512"), "{message}");
    ensure!(s.executor.runs().is_empty(), "nothing was sent");
    s.stop().await;
    Ok(())
}

/// A sub-workflow node starts a run of the named workflow with rendered parameters and succeeds with it.
async fn a_sub_workflow_runs_as_one_step(backend: Backend) -> TestResult {
    let s = Setup::start(backend).await?;
    let ok = s.job("ok").await?;
    s.workflow("child", json!([job_node("inner", ok, &[], "{{ params.who }}")]), json!({})).await?;
    let nodes = json!([
        {"name": "sub", "kind": {"type": "subworkflow", "workflow": "child", "params": {"who": "{{ params.name }}-x"}}},
        job_node("after", ok, &["sub"], "after"),
    ]);
    let parent = s.workflow("parent", nodes, json!({})).await?;
    let id = s.start_run(parent, json!({"name": "ann"})).await?["id"].as_i64().context("id")?;
    let run = s.run_in(id, "succeeded", Duration::from_secs(30)).await?;
    let output = &node_of(&run, "sub")["attempts"][0]["output"];
    ensure_eq!(output["state"], "succeeded", "{run}");
    let child = s.run(output["runId"].as_i64().context("child run id")?).await?;
    ensure_eq!(child["parentRunId"], id);
    ensure_eq!(child["params"], json!({"who": "ann-x"}));
    let params: Vec<String> = s.executor.runs_of("ok").iter().map(|r| r.param.clone()).collect();
    ensure_eq!(params, ["ann-x", "after"]);
    s.stop().await;
    Ok(())
}

/// A sharded node sends one run per executor and finishes when every shard has; its output is the
/// list of the shards' outputs, in shard order.
async fn a_sharded_node_waits_for_every_shard(backend: Backend) -> TestResult {
    let s = Setup::start(backend).await?;
    let second = ScriptedExecutor::start(&s.app.base, script).await?;
    let group =
        fixtures::manual_group(&s.store, "sharded-executor", &[&s.executor.address, &second.address]).await?;
    let mut job = fixtures::job(group);
    job.executor_handler = Some("ok".into());
    job.executor_route_strategy = Some("SHARDING_BROADCAST".into());
    let sharded = fixtures::insert(&s.store, &job).await?;
    let after = s.job("ok").await?;
    let nodes = json!([
        job_node("shards", sharded, &[], "part"),
        job_node("after", after, &["shards"], "{{ nodes.shards.output | length }}")
    ]);
    let wf = s.workflow("sharded", nodes, json!({})).await?;
    let id = s.start_run(wf, json!({})).await?["id"].as_i64().context("id")?;
    let run = s.run_in(id, "succeeded", Duration::from_secs(30)).await?;
    let attempt = &node_of(&run, "shards")["attempts"][0];
    ensure_eq!(attempt["logIds"].as_array().map(Vec::len), Some(2), "{attempt}");
    ensure_eq!(attempt["output"], json!([{"echo": "part", "shard": 0}, {"echo": "part", "shard": 1}]));
    ensure!(
        s.executor.runs().iter().any(|r| r.param == "2"),
        "after saw both shards: {:?}",
        s.executor.runs()
    );
    s.stop().await;
    Ok(())
}

/// A node running past its timeout fails and its run is killed on the executor.
async fn a_node_past_its_timeout_is_killed(backend: Backend) -> TestResult {
    let s = Setup::start(backend).await?;
    let hang = s.job("hang").await?;
    let mut node = job_node("stuck", hang, &[], "");
    node["timeoutSeconds"] = json!(1);
    let wf = s.workflow("timeout", json!([node]), json!({})).await?;
    let id = s.start_run(wf, json!({})).await?["id"].as_i64().context("id")?;
    let run = s.run_in(id, "failed", Duration::from_secs(20)).await?;
    let message = node_of(&run, "stuck")["attempts"][0]["message"].as_str().unwrap_or("").to_string();
    ensure!(message.contains("timed out after 1 s"), "{message}");
    let kills = eventually(Duration::from_secs(10), "the kill", || async {
        Some(s.executor.kills()).filter(|k| !k.is_empty())
    })
    .await?;
    ensure_eq!(kills, vec![i64::from(hang)]);
    s.stop().await;
    Ok(())
}

/// A backfill makes a run for every instant of the schedule in its range, each with that instant as its
/// logical time, at most `parallel` going at once; stopped, its waiting runs end and its going run is killed.
async fn a_backfill_runs_each_instant_n_at_a_time_and_stops_as_a_whole(backend: Backend) -> TestResult {
    let s = Setup::start(backend).await?;
    let (slow, hang) = (s.job("slow").await?, s.job("hang").await?);
    let hourly = json!({"schedule": {"type": "CRON", "conf": "0 0 * * * ?"}});
    let day = json!([job_node("day", slow, &[], "{{ ds }} {{ logical_time }}")]);
    let wf = s.workflow("backfill", day, hourly.clone()).await?;
    let from = fixtures::local_ms(fixtures::local("2026-01-01 00:00:00"));
    let to = from + 3 * 3_600_000 + 59 * 60_000;
    let reply = s
        .api
        .post(&format!("/workflows/{wf}/backfills"), json!({"from": from, "to": to, "parallel": 2}))
        .await?;
    ensure_eq!(reply.status, 201, "{}", reply.body);
    ensure_eq!(reply.body["runs"], 4);
    let id = reply.body["id"].as_i64().context("backfill id")?;
    let backfill = eventually(Duration::from_secs(30), "the backfill to finish", || async {
        let b = s.api.get(&format!("/workflow-backfills/{id}")).await.ok()?.body;
        (b["state"] == "finished").then_some(b)
    })
    .await?;
    ensure_eq!(backfill["runs"], json!({"succeeded": 4}), "{backfill}");
    let runs = s.executor.runs_of("slow");
    let mut params: Vec<String> = runs.iter().map(|r| r.param.clone()).collect();
    params.sort();
    let expected: Vec<String> = (0..4).map(|h| format!("2026-01-01 {}", from + h * 3_600_000)).collect();
    ensure_eq!(params, expected);
    // At most two at once: the third started after the first ended (each takes 1.2 s).
    ensure!(runs[2].at_ms - runs[0].at_ms >= 1_000, "two at a time: {runs:?}");

    let wf = s.workflow("backfill-stop", json!([job_node("stuck", hang, &[], "")]), hourly).await?;
    let reply = s
        .api
        .post(&format!("/workflows/{wf}/backfills"), json!({"from": from, "to": from + 2 * 3_600_000}))
        .await?;
    let id = reply.body["id"].as_i64().context("backfill id")?;
    eventually(Duration::from_secs(10), "the first run to reach the executor", || async {
        (!s.executor.runs_of("hang").is_empty()).then_some(())
    })
    .await?;
    let stopped = s.api.expect(200, s.api.post(&format!("/workflow-backfills/{id}/stop"), json!({}))).await?;
    ensure_eq!(stopped["state"], "stopped");
    let backfill = eventually(Duration::from_secs(20), "every run to end", || async {
        let b = s.api.get(&format!("/workflow-backfills/{id}")).await.ok()?.body;
        (b["runs"] == json!({"stopped": 3})).then_some(b)
    })
    .await?;
    ensure_eq!(backfill["total"], 3);
    ensure_eq!(s.executor.runs_of("hang").len(), 1, "the waiting runs never started");
    s.api.expect(409, s.api.post(&format!("/workflow-backfills/{id}/stop"), json!({}))).await?;
    let none = s.api.post(&format!("/workflows/{wf}/backfills"), json!({"from": to, "to": from})).await?;
    ensure_eq!(none.status, 409, "{}", none.body);
    s.stop().await;
    Ok(())
}

/// A failed run alarms once through the channels its definition names, and so does a passed deadline
/// (which here also stops its run: a stopped run is not a failed one).
async fn a_failed_run_and_a_passed_deadline_alarm_once(backend: Backend) -> TestResult {
    let hooks = WebhookServer::start().await?;
    let args = [
        "--xxl.job.alarm.webhook.ops.type=json".to_string(),
        format!("--xxl.job.alarm.webhook.ops.url={}/ops", hooks.base),
        "--xxl.job.alarm.console-url=https://jobs.example.test/xxl-job-admin".to_string(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let s = Setup::start_with(backend, &args).await?;
    let (fail, hang, ok) = (s.job("fail").await?, s.job("hang").await?, s.job("ok").await?);
    let alarmed = json!({"alarmEmail": "webhook:ops"});
    let nodes = json!([job_node("a", fail, &[], ""), job_node("b", ok, &[], "")]);
    let failing = s.workflow("alarmed <b>failure</b>", nodes, alarmed.clone()).await?;
    let failed_run = s.start_run(failing, json!({})).await?["id"].as_i64().context("id")?;
    let run = s.finished(failed_run).await?;
    ensure_eq!(run["state"], "failed", "{run}");
    let mut late = alarmed;
    late["deadline"] = json!({"seconds": 1, "stop": true});
    let slow = s.workflow("alarmed deadline", json!([job_node("stuck", hang, &[], "")]), late).await?;
    let late_run = s.start_run(slow, json!({})).await?["id"].as_i64().context("id")?;
    let run = s.run_in(late_run, "stopped", Duration::from_secs(15)).await?;
    ensure!(run["message"].as_str().is_some_and(|m| m.starts_with("deadline passed")), "{run}");
    eventually(Duration::from_secs(10), "both alarms", || async {
        Some(hooks.received("/ops")).filter(|r| r.len() >= 2)
    })
    .await?;
    // Anything doubled would arrive within the reconciles that follow.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let received = hooks.received("/ops").into_iter().map(|r| r.body).collect::<Vec<_>>();
    ensure_eq!(received.len(), 2, "one alarm each: {received:?}");
    let of_run = |id: i64| received.iter().find(|b| b["runId"] == id).cloned().unwrap_or_default();
    let failure = of_run(failed_run);
    ensure_eq!(failure["subject"], "workflow", "{failure}");
    ensure_eq!(failure["workflowName"], "alarmed <b>failure</b>");
    ensure_eq!(failure["failedNodes"], json!(["a"]));
    ensure_eq!(failure["jobGroup"], s.group);
    let url = format!("https://jobs.example.test/xxl-job-admin/workflow/run?id={failed_run}");
    ensure_eq!(failure["runUrl"], url);
    let deadline = of_run(late_run);
    ensure_eq!(deadline["stopped"], true, "{deadline}");
    ensure!(deadline["deadline"].as_i64().is_some(), "{deadline}");
    ensure_eq!(deadline["failedNodes"], Value::Null);
    s.stop().await;
    Ok(())
}
