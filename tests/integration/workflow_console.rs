//! The console's workflow runs and job dependency graph (issue 47): their JSON endpoints over HTTP, with
//! the jobs' group permissions and the refusals of operations that do not apply; and the pages in a real
//! Chromium, watching a run change live against an in-test executor, with the XSS tripwire armed.

use crate::browser::{in_browser, login, no_injected_script};
use crate::support::browser::Browser;
use crate::support::console::{admin, en, fail, restricted_user, ConsoleClient};
use crate::support::fixtures::{self, insert, job, manual_group};
use crate::support::nginx::{free_port, Nginx};
use crate::support::rest::RestClient;
use crate::support::scripted_executor::{Answer, Run, ScriptedExecutor};
use crate::support::{eventually, now_ms, Backend, Context, TestApp, TestDb};
use crate::{cases, ensure, ensure_eq, Case, TestResult, ALL, SQLITE};
use libtest_mimic::Failed;
use serde_json::{json, Value};
use std::time::Duration;
use xxl_job_admin::storage::Db;

pub fn cases() -> Vec<Case> {
    cases! {
        "workflow_console" {
            ALL => run_endpoints_follow_the_groups_and_refuse_what_does_not_apply,
            ALL => backfill_from_the_console,
            ALL => job_graph_links_children_with_their_last_result,
            SQLITE => run_view_follows_a_run_live_and_acts_on_it needs [Chromium],
            SQLITE => behind_nginx_run_view needs [Chromium, Nginx],
            SQLITE => run_view_of_500_nodes_stays_responsive needs [Chromium],
            SQLITE => runs_list_backfill_dialog_and_filters needs [Chromium],
            SQLITE => job_graph_page_from_the_job_list needs [Chromium],
        }
    }
}

/// Markup that runs if a page renders it as HTML instead of text.
const XSS: &str = "<img src=x onerror=__xss=1>";

/// `once` fails its first run and succeeds after; `ok` succeeds after 300 ms; `hang` never reports.
fn script(run: &Run) -> Answer {
    match run.handler.as_str() {
        "once" if run.nth == 0 => {
            Answer::Callback { code: 500, msg: format!("it broke {XSS}"), delay_ms: 300 }
        }
        "hang" => Answer::Hang,
        _ => Answer::Callback { code: 200, msg: json!({"rows": run.nth}).to_string(), delay_ms: 300 },
    }
}

/// An admin with an executor group served by the scripted executor, a token and a console session.
struct Setup {
    _db: TestDb,
    audit: tempfile::TempDir,
    app: TestApp,
    console: ConsoleClient,
    api: RestClient,
    store: Db,
    _executor: ScriptedExecutor,
    group: i32,
}

impl Setup {
    async fn start(backend: Backend) -> Result<Setup, Failed> {
        let db = TestDb::fresh(backend)?;
        let audit = tempfile::tempdir().context("audit dir")?;
        let audit_file = format!("--xxl.job.audit.file={}", audit.path().join("audit.jsonl").display());
        let app = TestApp::start(&db, &["--xxl.job.i18n=en", &audit_file]).await?;
        let console = admin(&app).await?;
        let api = RestClient::issued_by(&app.base, &console, None).await?;
        let store = db.open().await?;
        let executor = ScriptedExecutor::start(&app.base, script).await?;
        let group = manual_group(&store, "wf-console", &[&executor.address]).await?;
        Ok(Setup { _db: db, audit, app, console, api, store, _executor: executor, group })
    }

    async fn job(&self, handler: &str, desc: &str) -> Result<i32, Failed> {
        let mut job = job(self.group);
        job.executor_handler = Some(handler.into());
        job.executor_param = Some(String::new());
        job.job_desc = desc.into();
        insert(&self.store, &job).await
    }

    async fn start_run(&self, workflow: i64) -> Result<i64, Failed> {
        let started =
            self.api.expect(201, self.api.post(&format!("/workflows/{workflow}/runs"), json!({}))).await?;
        started["id"].as_i64().context("run id")
    }

    /// The run's progress as the run view polls it (the console's envelope).
    async fn progress(&self, client: &ConsoleClient, run: i64) -> Result<Value, Failed> {
        client.get_json(&format!("/workflowrun/progress?id={run}")).await
    }

    /// The latest state of `node` once it is `state`.
    async fn node_in(&self, run: i64, node: &str, state: &str) -> Result<(), Failed> {
        eventually(Duration::from_secs(20), &format!("{node} {state}"), || async {
            let progress = self.progress(&self.console, run).await.ok()?;
            let attempts = progress["content"]["attempts"].as_array()?.clone();
            let latest = attempts.iter().rfind(|a| a["node"] == node)?.clone();
            (latest["state"] == state).then_some(())
        })
        .await
    }
}

fn job_node(name: &str, job: i32, upstream: &[&str]) -> Value {
    json!({"name": name, "upstream": upstream, "kind": {"type": "job", "jobId": job}})
}

/// The refusal every endpoint gives a user without the workflow's group.
fn refused(reply: &Value) -> TestResult {
    ensure_eq!(reply["code"], 500, "{reply}");
    let msg = reply["msg"].as_str().unwrap_or("");
    ensure!(msg.contains(en().get("system_permission_limit")), "{reply}");
    Ok(())
}

/// Reads answer the run and its attempts; a user of another group reads and changes nothing; an unknown
/// operation, or one the run's state refuses, is an error that changes nothing; a foreign page is refused.
async fn run_endpoints_follow_the_groups_and_refuse_what_does_not_apply(backend: Backend) -> TestResult {
    let s = Setup::start(backend).await?;
    let (ok, hang) = (s.job("ok", "ok").await?, s.job("hang", "hang").await?);
    let nodes = json!([job_node("first", ok, &[]), job_node("stuck", hang, &["first"])]);
    let wf = s.api.save_workflow(s.group, "console-runs", nodes, json!({})).await?;
    let run = s.start_run(wf).await?;
    s.node_in(run, "stuck", "running").await?;

    let progress = s.progress(&s.console, run).await?;
    ensure_eq!(progress["content"]["run"]["state"], "running", "{progress}");
    ensure_eq!(progress["content"]["run"]["triggerType"], "api");
    let listed = s.console.get_json("/workflowrun/pageList").await?;
    ensure_eq!(listed["recordsTotal"], 1, "{listed}");
    ensure_eq!(listed["data"][0]["workflowName"], "console-runs");
    for (filter, count) in [
        ("state=running", 1),
        ("state=succeeded", 0),
        ("triggerType=api", 1),
        ("triggerType=schedule", 0),
        (&format!("workflowId={wf}&from={}", now_ms() + 3_600_000) as &str, 0),
        (&format!("workflowId={wf}&from=0&to={}", now_ms() + 3_600_000), 1),
    ] {
        let page = s.console.get_json(&format!("/workflowrun/pageList?{filter}")).await?;
        ensure_eq!(page["recordsTotal"], count, "{filter}: {page}");
    }
    let first = s.console.get_json(&format!("/workflowrun/node?id={run}&node=first")).await?;
    ensure_eq!(first["content"][0]["state"], "succeeded", "{first}");
    ensure_eq!(first["content"][0]["output"], json!({"rows": 0}));
    ensure_eq!(first["content"][0]["logIds"].as_array().map(Vec::len), Some(1));

    // Another group's user: refused everywhere, and the run goes on untouched.
    let alice = restricted_user(&s.app, &s.console, "alice", "alice-pw", "1").await?;
    refused(&s.progress(&alice, run).await?)?;
    refused(&alice.get_json(&format!("/workflowrun/node?id={run}&node=first")).await?)?;
    refused(&alice.get_json(&format!("/workflowrun/pageList?workflowId={wf}")).await?)?;
    refused(&alice.post("/workflowrun/operate", &[("id", &run.to_string()), ("operation", "stop")]).await?)?;
    let wf_text = wf.to_string();
    let backfill = [("workflowId", wf_text.as_str()), ("from", "0"), ("to", "3600000")];
    refused(&alice.post("/workflowrun/backfill", &backfill).await?)?;
    ensure_eq!(alice.get_json("/workflowrun/pageList").await?["recordsTotal"], 0);
    let page = alice.get(&format!("/workflow/run?id={run}")).await?;
    ensure!(page.body.contains("System Error"), "the run view refused: {}", page.body);
    ensure_eq!(s.progress(&s.console, run).await?["content"]["run"]["state"], "running");

    // Operations that do not apply: refused with the reason, nothing changed.
    let id = run.to_string();
    let unknown = s.console.post("/workflowrun/operate", &[("id", &id), ("operation", "explode")]).await?;
    ensure_eq!(unknown, fail(en().get("wfrun_operation_unknown")));
    let nodeless = s.console.post("/workflowrun/operate", &[("id", &id), ("operation", "skip")]).await?;
    ensure_eq!(nodeless, fail(en().get("wfrun_operation_unknown")));
    for (operation, node) in [("resume", ""), ("approve", "stuck"), ("skip", "first"), ("rerun", "nowhere")] {
        let reply = s
            .console
            .post("/workflowrun/operate", &[("id", &id), ("operation", operation), ("node", node)])
            .await?;
        ensure_eq!(reply["code"], 500, "{operation} {node}: {reply}");
        ensure!(reply["msg"].as_str().is_some_and(|m| !m.is_empty()), "{operation}: a reason: {reply}");
    }
    ensure_eq!(s.progress(&s.console, run).await?["content"]["run"]["state"], "running");

    // A page of another origin may not act.
    let foreign = s
        .console
        .request(
            reqwest::Method::POST,
            "/workflowrun/operate",
            &[("id", &id), ("operation", "stop")],
            &[("Origin", "http://evil.example")],
        )
        .await?;
    ensure_eq!(foreign.status, 403, "{}", foreign.body);

    // What applies works and is audited as over the REST API.
    let operate = |operation: &'static str, node: &'static str, output: &'static str| {
        let id = id.clone();
        let console = &s.console;
        async move {
            let form = [("id", id.as_str()), ("operation", operation), ("node", node), ("output", output)];
            console.post("/workflowrun/operate", &form).await
        }
    };
    ensure_eq!(operate("pause", "", "").await?["code"], 200);
    ensure_eq!(s.progress(&s.console, run).await?["content"]["run"]["state"], "paused");
    ensure_eq!(operate("resume", "", "").await?["code"], 200);
    ensure_eq!(s.progress(&s.console, run).await?["content"]["run"]["state"], "running");
    let marked = operate("mark-succeeded", "stuck", r#"{"x": 1}"#).await?;
    ensure_eq!(marked["code"], 200, "{marked}");
    eventually(Duration::from_secs(20), "the run to succeed", || async {
        let progress = s.progress(&s.console, run).await.ok()?;
        (progress["content"]["run"]["state"] == "succeeded").then_some(())
    })
    .await?;
    let stuck = s.console.get_json(&format!("/workflowrun/node?id={run}&node=stuck")).await?;
    let attempts = stuck["content"].as_array().context("attempts")?;
    ensure_eq!(attempts.last().map(|a| a["output"].clone()), Some(json!({"x": 1})), "{stuck}");
    ensure_eq!(attempts.last().map(|a| a["actedBy"].clone()), Some(json!("admin")));
    let over = operate("stop", "", "").await?;
    ensure_eq!(over["code"], 500, "a finished run is not stopped: {over}");
    ensure_eq!(s.progress(&s.console, run).await?["content"]["run"]["state"], "succeeded");
    let audit = std::fs::read_to_string(s.audit.path().join("audit.jsonl")).context("audit file")?;
    let operations: Vec<Value> = audit
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["kind"] == "workflow.run.operate")
        .collect();
    ensure_eq!(operations.len(), 9, "each operation asked of the engine, refused or not: {operations:?}");
    for operation in ["pause", "resume", "mark-succeeded"] {
        ensure!(audit.contains(&format!("\"{operation}\"")), "{operation} audited: {audit}");
    }
    s.app.stop().await;
    Ok(())
}

/// A backfill started from the console's dialog: its runs, progress and stop; bad input refused first.
async fn backfill_from_the_console(backend: Backend) -> TestResult {
    let s = Setup::start(backend).await?;
    let hang = s.job("hang", "hang").await?;
    let hourly = json!({"schedule": {"type": "CRON", "conf": "0 0 * * * ?"}});
    let wf = s
        .api
        .save_workflow(s.group, "console-backfill", json!([job_node("stuck", hang, &[])]), hourly)
        .await?;
    let from = fixtures::local_ms(fixtures::local("2026-01-01 00:00:00"));
    let (wf, from_text, to) = (wf.to_string(), from.to_string(), (from + 2 * 3_600_000).to_string());
    let form = |parallel: &'static str, params: &'static str| {
        vec![
            ("workflowId", wf.clone()),
            ("from", from_text.clone()),
            ("to", to.clone()),
            ("parallel", parallel.to_string()),
            ("params", params.to_string()),
        ]
    };
    let console = &s.console;
    let post = |form: Vec<(&'static str, String)>| async move {
        let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        console.post("/workflowrun/backfill", &pairs).await
    };
    ensure_eq!(post(form("0", "")).await?, fail(en().get("wfrun_backfill_parallel_invalid")));
    ensure_eq!(post(form("1", "[1]")).await?, fail(en().get("wfrun_params_invalid")));
    let reversed = vec![("workflowId", wf.clone()), ("from", to.clone()), ("to", from_text.clone())];
    ensure_eq!(post(reversed).await?, fail(en().get("wfrun_backfill_range_invalid")));
    ensure_eq!(s.console.get_json("/workflowrun/pageList").await?["recordsTotal"], 0, "nothing started");

    let started = post(form("1", r#"{"region": "eu"}"#)).await?;
    ensure_eq!(started["content"]["runs"], 3, "{started}");
    let id = started["content"]["id"].as_i64().context("backfill id")?;
    let info = s.console.get_json(&format!("/workflowrun/backfillInfo?id={id}")).await?;
    ensure_eq!(info["content"]["state"], "running", "{info}");
    ensure_eq!(info["content"]["total"], 3);
    let listed = s.console.get_json("/workflowrun/pageList?triggerType=backfill").await?;
    ensure_eq!(listed["recordsTotal"], 3, "{listed}");
    ensure_eq!(listed["data"][0]["backfillId"], id);
    let stop = s.console.post("/workflowrun/backfillStop", &[("id", &id.to_string())]).await?;
    ensure_eq!(stop["code"], 200, "{stop}");
    eventually(Duration::from_secs(20), "every run stopped", || async {
        let info = s.console.get_json(&format!("/workflowrun/backfillInfo?id={id}")).await.ok()?;
        (info["content"]["runs"] == json!({"stopped": 3})).then_some(())
    })
    .await?;
    let again = s.console.post("/workflowrun/backfillStop", &[("id", &id.to_string())]).await?;
    ensure_eq!(again["code"], 500, "stopping a stopped backfill: {again}");
    s.app.stop().await;
    Ok(())
}

/// The graph's jobs, links and last results, by group and permission, on a database that has never had
/// the workflow tables.
async fn job_graph_links_children_with_their_last_result(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &["--xxl.job.i18n=en"]).await?;
    let console = admin(&app).await?;
    let store = db.open().await?;
    let group = manual_group(&store, "graph-app", &["http://127.0.0.1:9/"]).await?;
    let other = manual_group(&store, "graph-other", &["http://127.0.0.1:9/"]).await?;
    let tail = insert(&store, &job(other)).await?;
    let mut middle = job(group);
    middle.child_jobid = Some(format!("{tail},999999,x"));
    let middle = insert(&store, &middle).await?;
    let mut head = job(group);
    head.child_jobid = Some(middle.to_string());
    let head = insert(&store, &head).await?;
    let alone = insert(&store, &job(group)).await?;
    fixtures::log(&store, group, head, now_ms() - 60_000, 200, 200, "a").await?;
    fixtures::log(&store, group, middle, now_ms() - 50_000, 200, 200, "a").await?;
    fixtures::log(&store, group, middle, now_ms() - 40_000, 200, 500, "a").await?;
    fixtures::log(&store, other, tail, now_ms() - 30_000, 200, 0, "a").await?;

    let graph = console.get_json(&format!("/jobinfo/graph/data?jobGroup={group}")).await?;
    let content = &graph["content"];
    let mut ids: Vec<i64> =
        content["jobs"].as_array().context("jobs")?.iter().filter_map(|j| j["id"].as_i64()).collect();
    ids.sort();
    let mut expected = vec![tail, middle, head, alone].into_iter().map(i64::from).collect::<Vec<_>>();
    expected.sort();
    ensure_eq!(ids, expected, "the group's jobs and the child they start elsewhere: {graph}");
    let mut links = content["links"].as_array().context("links")?.clone();
    links.sort_by_key(|l| l[0].as_i64());
    let mut want = vec![json!([middle, tail]), json!([head, middle])];
    want.sort_by_key(|l| l[0].as_i64());
    ensure_eq!(links, want, "unknown and unparsable child ids are left out");
    let result = |id: i32| {
        content["jobs"]
            .as_array()
            .and_then(|jobs| jobs.iter().find(|j| j["id"] == id))
            .map(|j| j["last"]["result"].clone())
    };
    ensure_eq!(result(head), Some(json!("success")));
    ensure_eq!(result(middle), Some(json!("failed")), "the newest run counts");
    ensure_eq!(result(tail), Some(json!("running")));
    ensure_eq!(result(alone), Some(Value::Null), "never run");
    ensure!(!store.extension_tables_present().await.context("tables")?, "no workflow tables were made");

    // A user of the group only: the child in the other group is not shown, the other group refused.
    let bob = restricted_user(&app, &console, "bobby", "bob-pw", &group.to_string()).await?;
    let seen = bob.get_json("/jobinfo/graph/data?jobGroup=0").await?;
    ensure_eq!(seen["content"]["jobs"].as_array().map(Vec::len), Some(3), "{seen}");
    ensure_eq!(seen["content"]["links"], json!([[head, middle]]));
    refused(&bob.get_json(&format!("/jobinfo/graph/data?jobGroup={other}")).await?)?;
    let runs = bob.get_json("/workflowrun/pageList").await?;
    ensure_eq!(runs["recordsTotal"], 0, "no workflow tables, no runs: {runs}");
    app.stop().await;
    Ok(())
}

// ------------------------------------------------------------------------------------------------
// In Chromium

/// No script error on the page since it loaded (the pages' own `window.onerror` records none).
async fn no_script_error(browser: &Browser) -> TestResult {
    let errors = browser.script("return window.__errors || [];", vec![]).await?;
    ensure_eq!(errors, json!([]), "script errors");
    Ok(())
}

/// Records script errors from now on.
async fn catch_errors(browser: &Browser) -> TestResult {
    browser
        .script(
            "window.__errors = []; window.addEventListener('error', function (e) { window.__errors.push(String(e.message)); }); return true;",
            vec![],
        )
        .await
        .map(drop)
}

/// The state the run view shows for a node.
fn state_of(node: &str) -> String {
    format!("return XJ.runView && XJ.runView.stateOf('{node}');")
}

async fn wait_state(browser: &Browser, node: &str, state: &str) -> TestResult {
    let js = format!("return XJ.runView && XJ.runView.stateOf('{node}') === '{state}';");
    browser.until(&format!("{node} {state} in the run view"), &js).await.map(drop)
}

/// Taps a node of the canvas as a click would.
async fn tap(browser: &Browser, node: &str) -> TestResult {
    browser
        .script("XJ.runView.cy.getElementById(arguments[0]).emit('tap'); return true;", vec![json!(node)])
        .await?;
    Ok(())
}

/// Confirms the open confirmation dialog.
async fn confirm(browser: &Browser) -> TestResult {
    browser.click(".layui-layer-dialog .layui-layer-btn0").await
}

/// The run view's scenario on the admin itself.
async fn run_view_follows_a_run_live_and_acts_on_it(backend: Backend) -> TestResult {
    let s = Setup::start(backend).await?;
    run_view_flow(&s, &s.app.base, "workflow_console-run_view").await?;
    s.app.stop().await;
    Ok(())
}

/// The run view's scenario through nginx, under its own host and port: the same pages and operations.
async fn behind_nginx_run_view(backend: Backend) -> TestResult {
    let s = Setup::start(backend).await?;
    let nginx = Nginx::start(free_port()?, s.app.app.addr, &[]).await?;
    run_view_flow(&s, &nginx.console, "workflow_console-nginx-run_view")
        .await
        .map_err(|e| Failed::from(format!("{}; nginx: {}", e.message().unwrap_or("?"), nginx.error_log())))?;
    ensure!(
        nginx.access_log().contains("POST /xxl-job-admin/workflowrun/operate"),
        "operations went through nginx"
    );
    // The runs list and the job dependency graph through the proxy too.
    in_browser!(nginx.console, "workflow_console-nginx-lists", |browser| {
        login(&browser, "admin", "123456").await?;
        browser.goto("/workflow/runs").await?;
        catch_errors(&browser).await?;
        let listed = "return jQuery('#run_list').DataTable().page.info().recordsTotal >= 1;";
        browser.until("the run listed", listed).await?;
        browser.goto(&format!("/jobinfo/graph?jobGroup={}", s.group)).await?;
        catch_errors(&browser).await?;
        // Its jobs have no child links, so the page says so once the data came.
        let loaded = "return jQuery('#jobGraphEmpty').is(':visible');";
        browser.until("the job graph's data", loaded).await?;
        no_injected_script(&browser).await?;
        no_script_error(&browser).await
    })?;
    ensure!(
        nginx.access_log().contains("/xxl-job-admin/jobinfo/graph/data"),
        "the graph's data through nginx"
    );
    s.app.stop().await;
    Ok(())
}

/// extract fails, so the rest is cut off; retrying it in the run view at `base` runs the rest, live, up
/// to an approval that the view approves; the run succeeds without the page ever reloading.
async fn run_view_flow(s: &Setup, base: &str, name: &str) -> TestResult {
    let (once, ok) = (s.job("once", "extract job").await?, s.job("ok", "load job").await?);
    let nodes = json!([
        job_node("extract", once, &[]),
        job_node("load", ok, &["extract"]),
        {"name": "sign_off", "upstream": ["load"], "kind": {"type": "approval"}},
    ]);
    let wf =
        s.api.save_workflow(s.group, &format!("nightly {XSS}"), nodes, json!({"description": XSS})).await?;
    let run = s.start_run(wf).await?;
    in_browser!(base, name, |browser| {
        login(&browser, "admin", "123456").await?;
        browser.goto(&format!("/workflow/run?id={run}")).await?;
        catch_errors(&browser).await?;
        browser.script("window.__samePage = true; return true;", vec![]).await?;
        ensure!(browser.text("#runWorkflowName").await?.contains(XSS), "the name shown as text");
        wait_state(&browser, "extract", "failed").await?;
        wait_state(&browser, "load", "upstream_failed").await?;
        browser
            .until(
                "the run failed",
                "return document.querySelector('#workflowRunPage').dataset.runState === 'failed';",
            )
            .await?;
        no_injected_script(&browser).await?;

        // The failed node's attempt, its message as text, its log.
        tap(&browser, "extract").await?;
        browser
            .until("the attempt", "return document.querySelector('#nodeAttempts .xj-attempt') !== null;")
            .await?;
        let skip = "return document.querySelector('#nodeOps [data-op=skip]').disabled;";
        ensure_eq!(browser.script(skip, vec![]).await?, json!(true), "a failed node cannot be skipped");
        let attempts = browser.text("#nodeAttempts").await?;
        ensure!(attempts.contains(&format!("it broke {XSS}")), "the message as text: {attempts}");
        let href = browser
            .script(
                "return document.querySelector('#nodeAttempts .xj-attempt-log').getAttribute('href');",
                vec![],
            )
            .await?;
        ensure!(href.as_str().is_some_and(|h| h.contains("/joblog/logDetailPage?id=")), "{href}");
        no_injected_script(&browser).await?;

        // Retry: confirmed, then the states move on the same page.
        browser.click("#runRetryFailed").await?;
        confirm(&browser).await?;
        wait_state(&browser, "extract", "succeeded").await?;
        wait_state(&browser, "load", "succeeded").await?;
        wait_state(&browser, "sign_off", "waiting_approval").await?;
        let bars = browser
            .script("var c = document.querySelector('#runTimeline'); return c.height > 40;", vec![])
            .await?;
        ensure_eq!(bars, json!(true), "the timeline has rows");

        tap(&browser, "sign_off").await?;
        browser.click("#nodeOps [data-op=approve]").await?;
        confirm(&browser).await?;
        wait_state(&browser, "sign_off", "succeeded").await?;
        browser
            .until(
                "the run succeeded",
                "return document.querySelector('#workflowRunPage').dataset.runState === 'succeeded';",
            )
            .await?;
        ensure_eq!(browser.script(&state_of("load"), vec![]).await?, json!("succeeded"));
        ensure_eq!(
            browser.script("return window.__samePage === true;", vec![]).await?,
            json!(true),
            "no reload"
        );
        no_script_error(&browser).await?;
        no_injected_script(&browser).await?;

        // The runs list leads back to it.
        browser.click("#runsLink").await?;
        browser.until("the run in the list", &format!("return document.querySelector('#run_list a.run-link') && document.querySelector('#run_list').textContent.includes('#{run}');")).await?;
        catch_errors(&browser).await?;
        ensure!(browser.text("#run_list").await?.contains(XSS), "the workflow name as text");
        no_injected_script(&browser).await?;
        browser.click("#run_list a.run-link").await?;
        browser.until("the run view again", "return !!document.querySelector('#workflowRunPage');").await?;
        Ok(())
    })
}

/// A 500-node run (an approval holding 499 jobs back, so nothing is sent) opens whole, drawn on a canvas
/// with no element per node, and recolours every node at once. How long opening and recolouring take is
/// printed, not asserted (speed is measured on a quiet machine: docs/workflows.md#runs-in-the-console).
async fn run_view_of_500_nodes_stays_responsive(backend: Backend) -> TestResult {
    let s = Setup::start(backend).await?;
    let ok = s.job("ok", "ok").await?;
    let mut nodes = vec![json!({"name": "gate", "kind": {"type": "approval"}})];
    for i in 1..500 {
        let up = if i < 4 { "gate".to_string() } else { format!("n{}", (i - 1) / 3) };
        nodes.push(job_node(&format!("n{i}"), ok, &[&up]));
    }
    let wf = s.api.save_workflow(s.group, "five-hundred", json!(nodes), json!({})).await?;
    let run = s.start_run(wf).await?;
    s.node_in(run, "gate", "waiting_approval").await?;
    in_browser!(s.app.base, "workflow_console-500", |browser| {
        login(&browser, "admin", "123456").await?;
        browser.goto(&format!("/workflow/run?id={run}")).await?;
        catch_errors(&browser).await?;
        wait_state(&browser, "gate", "waiting_approval").await?;
        let opened = browser.script("return performance.now();", vec![]).await?;
        let drawn = browser
            .script(
                "return [XJ.runView.cy.nodes().length, document.querySelectorAll('#runGraph *').length];",
                vec![],
            )
            .await?;
        ensure_eq!(drawn[0], 500);
        ensure!(drawn[1].as_i64().is_some_and(|n| n < 20), "a canvas, no element per node: {drawn}");
        let recolour = browser
            .script(
                "var t = performance.now(), m = {}; for (var i = 1; i < 500; i++) { m['n' + i] = i % 2 ? 'running' : 'succeeded'; } \
                 XJ.runView.setStates(m); return performance.now() - t;",
                vec![],
            )
            .await?;
        ensure_eq!(browser.script(&state_of("n2"), vec![]).await?, json!("succeeded"), "recoloured");
        eprintln!(
            "500-node run: drawn and coloured {opened} ms after the page began, recoloured in {recolour} ms"
        );
        tap(&browser, "n499").await?;
        browser
            .until("the node panel", "return document.querySelector('#nodeTitle').textContent === 'n499';")
            .await?;
        // Marked succeeded through its dialog, with an output, while the rest waits.
        browser.click("#nodeOps [data-op=mark-succeeded]").await?;
        browser.visible("#markModal").await?;
        browser.fill("#markOutput", r#"{"rows": 7}"#).await?;
        browser.click("#markSubmit").await?;
        wait_state(&browser, "n499", "succeeded").await?;
        browser
            .until(
                "its output",
                "return document.querySelector('#nodeAttempts').textContent.includes('\"rows\": 7');",
            )
            .await?;
        no_script_error(&browser).await?;
        Ok(())
    })?;
    s.app.stop().await;
    Ok(())
}

/// The runs list's backfill dialog starts a backfill whose progress box follows it and stops it; the
/// filters narrow the list.
async fn runs_list_backfill_dialog_and_filters(backend: Backend) -> TestResult {
    let s = Setup::start(backend).await?;
    let hang = s.job("hang", "hang").await?;
    let hourly = json!({"schedule": {"type": "CRON", "conf": "0 0 * * * ?"}});
    let wf = s
        .api
        .save_workflow(s.group, &format!("hourly {XSS}"), json!([job_node("stuck", hang, &[])]), hourly)
        .await?;
    let child = json!([{"name": "wait", "kind": {"type": "approval"}}]);
    s.api.save_workflow(s.group, "child", child, json!({})).await?;
    let nodes = json!([{"name": "sub", "kind": {"type": "subworkflow", "workflow": "child"}}]);
    let parent = s.api.save_workflow(s.group, "parent", nodes, json!({})).await?;
    let parent_run = s.start_run(parent).await?;
    s.node_in(parent_run, "sub", "running").await?;
    in_browser!(s.app.base, "workflow_console-backfill", |browser| {
        login(&browser, "admin", "123456").await?;
        browser.goto(&format!("/workflow/runs?workflowId={wf}")).await?;
        catch_errors(&browser).await?;
        let count = "return jQuery('#run_list').DataTable().page.info().recordsTotal;";
        browser.click("#backfillBtn").await?;
        browser.visible("#backfillModal").await?;
        browser
            .script(
                "jQuery('#backfillRange').val('2026-01-01 00:00:00 - 2026-01-01 02:00:00'); \
                 jQuery('#backfillParams').val(arguments[0]); return true;",
                vec![json!(format!(r#"{{"note": "{XSS}"}}"#))],
            )
            .await?;
        browser.click("#backfillSubmit").await?;
        browser
            .until(
                "the progress box",
                "return document.querySelector('#workflowRunsPage').dataset.backfillState === 'running';",
            )
            .await?;
        browser.until("three runs listed", &count.replace("return ", "return 3 === ")).await?;
        ensure!(browser.text("#run_list").await?.contains(XSS), "the workflow name as text");
        no_injected_script(&browser).await?;
        browser.click("#backfillStop").await?;
        confirm(&browser).await?;
        browser
            .until(
                "the backfill stopped",
                "return document.querySelector('#workflowRunsPage').dataset.backfillState === 'stopped';",
            )
            .await?;
        ensure!(browser.text("#backfillCounts").await?.contains("Stopped"), "its state shown");
        browser
            .script("jQuery('#triggerType').val('manual').trigger('change'); return true;", vec![])
            .await?;
        browser.until("no manual run", &count.replace("return ", "return 0 === ")).await?;
        browser
            .script("jQuery('#triggerType').val('backfill').trigger('change'); return true;", vec![])
            .await?;
        browser.until("the backfill's runs", &count.replace("return ", "return 3 === ")).await?;
        no_script_error(&browser).await?;
        no_injected_script(&browser).await?;

        // A sub-workflow's run, found by its trigger type, leads back to its parent's run.
        browser.goto("/workflow/runs").await?;
        browser
            .script("jQuery('#triggerType').val('subworkflow').trigger('change'); return true;", vec![])
            .await?;
        browser.until("the child run", &count.replace("return ", "return 1 === ")).await?;
        browser.click("#run_list a.run-link").await?;
        browser.visible("#runParent").await?;
        browser.click("#runParent").await?;
        let here = format!("return location.search === '?id={parent_run}' && !!(window.XJ && XJ.runView);");
        browser.until("the parent's run view", &here).await?;
        wait_state(&browser, "sub", "running").await?;
        Ok(())
    })?;
    s.app.stop().await;
    Ok(())
}

/// The job list's button opens the graph of its executor; hostile descriptions stay text; a click on a
/// job opens its trigger log.
async fn job_graph_page_from_the_job_list(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &["--xxl.job.i18n=en"]).await?;
    let store = db.open().await?;
    let group = manual_group(&store, "graph-page", &["http://127.0.0.1:9/"]).await?;
    let mut child = job(group);
    child.job_desc = format!("child {XSS}");
    let child = insert(&store, &child).await?;
    let mut parent = job(group);
    parent.job_desc = format!("parent {XSS}");
    parent.child_jobid = Some(child.to_string());
    let parent = insert(&store, &parent).await?;
    fixtures::log(&store, group, parent, now_ms() - 5_000, 200, 500, "a").await?;
    in_browser!(app.base, "workflow_console-job_graph", |browser| {
        login(&browser, "admin", "123456").await?;
        browser.goto(&format!("/jobinfo?jobGroup={group}")).await?;
        browser.click("#jobGraph").await?;
        browser.until("the graph", "return !!(window.XJ && XJ.jobGraph);").await?;
        catch_errors(&browser).await?;
        let drawn = browser
            .script("return [XJ.jobGraph.cy.nodes().length, XJ.jobGraph.cy.edges().length];", vec![])
            .await?;
        ensure_eq!(drawn, json!([2, 1]));
        ensure_eq!(
            browser.script(&format!("return XJ.jobGraph.stateOf({parent});"), vec![]).await?,
            json!("failed")
        );
        ensure_eq!(
            browser.script(&format!("return XJ.jobGraph.stateOf({child});"), vec![]).await?,
            json!("none")
        );
        let label = browser
            .script(&format!("return XJ.jobGraph.cy.getElementById('{parent}').data('label');"), vec![])
            .await?;
        ensure_eq!(label, json!(format!("#{parent} parent {XSS}")));
        no_injected_script(&browser).await?;
        no_script_error(&browser).await?;
        browser
            .script(&format!("XJ.jobGraph.cy.getElementById('{parent}').emit('tap'); return true;"), vec![])
            .await?;
        browser.until("the job's log list", &format!("return location.pathname.endsWith('/joblog') && location.search.includes('jobId={parent}');")).await?;
        no_injected_script(&browser).await?;
        Ok(())
    })?;
    app.stop().await;
    Ok(())
}
