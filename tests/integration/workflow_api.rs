//! Workflow definitions over the REST API (`/workflows`), on every backend: reads of a database where no
//! workflow was saved answer nothing and create no table; a definition is created, saved again (a new
//! version only when it differs, never over a stale `baseVersion`), listed, compared, restored, started
//! and stopped with its next fire time, and deleted once no run is active; a refused definition (a cycle,
//! an unknown job, group, field or sub-workflow, workflows that name each other or nest too deep) names
//! each problem and changes nothing; a restricted token keeps to its groups; every change is audited.

use crate::support::console::{admin, ConsoleClient};
use crate::support::fixtures::{insert, job, manual_group};
use crate::support::rest::{RestClient, RestReply};
use crate::support::{eventually, now_ms, Backend, Context, TestApp, TestDb};
use crate::{cases, ensure, ensure_eq, Case, TestResult, ALL};
use libtest_mimic::Failed;
use reqwest::Method;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;
use xxl_job_admin::domain::schedule::next_time;
use xxl_job_admin::storage::{NewRun, RunChange};
use xxl_job_admin::time::CRON_ZONE;

pub fn cases() -> Vec<Case> {
    cases! {
        "workflow_api" {
            ALL => reads_of_a_database_without_workflows_create_no_table,
            ALL => definitions_are_versioned_compared_restored_scheduled_and_deleted,
            ALL => refused_definitions_name_each_problem_and_change_nothing,
            ALL => a_restricted_token_keeps_to_its_groups,
        }
    }
}

fn job_node(name: &str, upstream: &[&str], job_id: i32) -> Value {
    json!({"name": name, "upstream": upstream, "kind": {"type": "job", "jobId": job_id}})
}

fn sub_node(name: &str, upstream: &[&str], workflow: &str) -> Value {
    json!({"name": name, "upstream": upstream, "kind": {"type": "subworkflow", "workflow": workflow}})
}

fn definition(name: &str, group: i32, nodes: Value) -> Value {
    json!({"name": name, "jobGroup": group, "nodes": nodes})
}

/// A token of the initial administrator.
async fn admin_api(app: &TestApp) -> Result<RestClient, Failed> {
    RestClient::issued_by(&app.base, &admin(app).await?, None).await
}

/// Whether the database has the workflow tables, asked on a connection of its own.
async fn tables_present(db: &TestDb) -> Result<bool, Failed> {
    let store = db.open().await?;
    let present = store.extension_tables_present().await.context("catalogue")?;
    store.close().await;
    Ok(present)
}

/// A refusal's `errors`, each as `(node, field, problem)`.
fn problems(reply: &RestReply) -> Vec<(Value, String, String)> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let errors = reply.body["errors"].as_array().cloned().unwrap_or_default();
    errors.iter().map(|e| (e["node"].clone(), text(&e["field"]), text(&e["problem"]))).collect()
}

/// A document refused with 400 and exactly these problems.
async fn refused(api: &RestClient, method: Method, path: &str, doc: Value) -> Result<RestReply, Failed> {
    let reply = api.send(method, path, Some(doc), &[]).await?;
    ensure_eq!(reply.status, 400, "{}", reply.body);
    ensure_eq!(reply.body["error"], "Bad Request");
    let message = reply.body["message"].as_str().unwrap_or_default();
    ensure!(message.starts_with("the workflow definition is refused: "), "{message}");
    Ok(reply)
}

async fn created(api: &RestClient, doc: Value) -> Result<i64, Failed> {
    let body = api.expect(201, api.post("/workflows", doc)).await?;
    body["id"].as_i64().context(&format!("an id in {body}"))
}

async fn reads_of_a_database_without_workflows_create_no_table(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let api = admin_api(&app).await?;
    ensure_eq!(api.expect(200, api.get("/workflows")).await?, json!({"total": 0, "items": []}));
    ensure_eq!(api.expect(200, api.get("/workflows?jobGroup=1&name=x")).await?["total"], 0);
    let valid = definition("nightly", 1, json!([job_node("a", &[], 1)]));
    for (method, path, body) in [
        (Method::GET, "/workflows/1", None),
        (Method::GET, "/workflows/1/versions", None),
        (Method::GET, "/workflows/1/versions/1", None),
        (Method::GET, "/workflows/1/diff?from=1&to=1", None),
        (Method::PUT, "/workflows/1", Some(valid.clone())),
        (Method::POST, "/workflows/1/versions/1/restore", None),
        (Method::POST, "/workflows/1/start", None),
        (Method::POST, "/workflows/1/stop", None),
        (Method::DELETE, "/workflows/1", None),
    ] {
        let reply = api.send(method.clone(), path, body, &[]).await?;
        ensure_eq!(reply.status, 404, "{method} {path}: {}", reply.body);
        ensure_eq!(reply.body["message"], "no workflow has this id", "{method} {path}");
    }
    ensure!(!tables_present(&db).await?, "reads created the workflow tables");
    // A refused document writes nothing either; the first workflow saved brings the tables.
    refused(&api, Method::POST, "/workflows", definition("nightly", 1, json!([job_node("a", &[], 999_999)])))
        .await?;
    ensure!(!tables_present(&db).await?, "a refused document created the workflow tables");
    let id = created(&api, valid).await?;
    ensure!(tables_present(&db).await?, "the first workflow brings the tables");
    ensure_eq!(api.expect(200, api.get(&format!("/workflows/{id}"))).await?["currentVersion"], 1);
    app.stop().await;
    Ok(())
}

/// The events of the audit file, once one of `kind` with `outcome` is there (it is written in the background).
pub async fn audited(file: &Path, kind: &str, outcome: &str) -> Result<Vec<Value>, Failed> {
    eventually(Duration::from_secs(10), &format!("a {kind} event ({outcome})"), || async {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let all: Vec<Value> = text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
        all.iter().any(|e| e["kind"] == kind && e["outcome"] == outcome).then_some(all)
    })
    .await
}

fn of_kind<'a>(events: &'a [Value], kind: &str, outcome: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["kind"] == kind && e["outcome"] == outcome).collect()
}

fn first_of<'a>(events: &'a [Value], kind: &str, outcome: &str) -> Result<&'a Value, Failed> {
    of_kind(events, kind, outcome).first().copied().context(&format!("a {kind} event ({outcome})"))
}

/// The next fire of `conf` for a start at `at` (epoch ms): from five seconds on.
fn cron_next(conf: &str, at: i64) -> Result<i64, Failed> {
    next_time("CRON", Some(conf), at + 5000, CRON_ZONE).context("cron")?.context("a next fire")
}

async fn definitions_are_versioned_compared_restored_scheduled_and_deleted(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let dir = tempfile::tempdir().context("dir")?;
    let audit_file = dir.path().join("audit.jsonl");
    let app = TestApp::start(&db, &[&format!("--xxl.job.audit.file={}", audit_file.display())]).await?;
    let api = admin_api(&app).await?;
    let extract = insert(&app.app.db, &job(1)).await?;
    let load = insert(&app.app.db, &job(1)).await?;

    let first = json!({"name": "nightly", "jobGroup": 1, "description": "first",
        "schedule": {"type": "CRON", "conf": "0 0 2 * * ?"},
        "nodes": [job_node("extract", &[], extract), job_node("load", &["extract"], load)]});
    let reply = api.post("/workflows", first.clone()).await?;
    ensure_eq!(reply.status, 201, "{}", reply.body);
    let id = reply.body["id"].as_i64().context("id")?;
    ensure_eq!(reply.body, json!({"id": id, "version": 1, "changed": true}));
    ensure_eq!(reply.header("location"), Some(format!("/xxl-job-admin/openapi/v1/workflows/{id}")));
    let path = format!("/workflows/{id}");

    // The summary and the current document, its defaults written out.
    let read = api.expect(200, api.get(&path)).await?;
    for (field, value) in [
        ("id", json!(id)),
        ("name", json!("nightly")),
        ("jobGroup", json!(1)),
        ("currentVersion", json!(1)),
        ("triggerStatus", json!(0)),
        ("schedule", json!({"type": "CRON", "conf": "0 0 2 * * ?", "misfire": "DO_NOTHING"})),
        ("triggerNextTime", json!(0)),
        ("author", json!("admin")),
    ] {
        ensure_eq!(read[field], value, "{field} in {read}");
    }
    ensure!(read["addTime"].as_str().is_some_and(|t| t.ends_with("+00:00")), "{read}");
    let def = &read["definition"];
    ensure_eq!(def["description"], "first");
    ensure_eq!(def["concurrency"], json!({"maxRuns": 1, "onLimit": "queue", "maxQueued": 100}));
    ensure_eq!(def["nodes"][1]["upstream"], json!(["extract"]));
    ensure_eq!(def["nodes"][1]["retry"]["count"], 0);

    // The same document again makes no version.
    let same = api.expect(200, api.put(&path, first.clone())).await?;
    ensure_eq!(same, json!({"id": id, "version": 1, "changed": false}));
    // A changed one over version 1 makes version 2.
    let mut second = first.clone();
    second["description"] = json!("second");
    second["nodes"][1]["retry"] = json!({"count": 2});
    second["nodes"].as_array_mut().context("nodes")?.push(json!({"name": "check", "upstream": ["load"],
        "kind": {"type": "approval", "approvers": ["admin"]}}));
    let saved = api.expect(200, api.put(&format!("{path}?baseVersion=1"), second.clone())).await?;
    ensure_eq!(saved, json!({"id": id, "version": 2, "changed": true}));
    // Made from version 1 too, a third one is refused rather than undo the second.
    let mut third = second.clone();
    third["description"] = json!("third");
    let stale = api.expect(409, api.put(&format!("{path}?baseVersion=1"), third)).await?;
    ensure!(stale["message"].as_str().is_some_and(|m| m.contains("current version is 2")), "{stale}");
    let versions = api.expect(200, api.get(&format!("{path}/versions"))).await?;
    ensure_eq!(versions["total"], 2);
    let listed: Vec<(Value, Value, Value)> = versions["items"]
        .as_array()
        .context("items")?
        .iter()
        .map(|v| (v["version"].clone(), v["current"].clone(), v["author"].clone()))
        .collect();
    ensure_eq!(
        listed,
        vec![(json!(2), json!(true), json!("admin")), (json!(1), json!(false), json!("admin"))]
    );
    ensure_eq!(
        api.expect(200, api.get(&format!("{path}/versions?offset=1&limit=1"))).await?["items"][0]["version"],
        1
    );

    // One version, and what changed from one to the other.
    let one = api.expect(200, api.get(&format!("{path}/versions/1"))).await?;
    ensure_eq!(
        (one["workflowId"].clone(), one["version"].clone(), one["current"].clone()),
        (json!(id), json!(1), json!(false))
    );
    ensure_eq!(one["definition"], read["definition"]);
    let diff = api.expect(200, api.get(&format!("{path}/diff?from=1&to=2"))).await?;
    ensure_eq!((diff["from"].clone(), diff["to"].clone()), (json!(1), json!(2)));
    ensure_eq!(diff["fields"], json!([{"field": "description", "old": "first", "new": "second"}]));
    ensure_eq!(diff["nodes"]["added"][0]["name"], "check");
    ensure_eq!(diff["nodes"]["removed"], json!([]));
    let changed = &diff["nodes"]["changed"];
    ensure_eq!(changed.as_array().map(Vec::len), Some(1), "{changed}");
    ensure_eq!(changed[0]["node"], "load");
    ensure_eq!(changed[0]["fields"][0]["field"], "retry");
    ensure_eq!(
        (changed[0]["fields"][0]["old"]["count"].clone(), changed[0]["fields"][0]["new"]["count"].clone()),
        (json!(0), json!(2))
    );
    ensure_eq!(
        api.expect(200, api.get(&format!("{path}/diff"))).await?,
        diff,
        "by default, what the last save changed"
    );
    ensure_eq!(api.get(&format!("{path}/diff?from=1&to=9")).await?.status, 404);

    // Restoring version 1 makes version 3 of its document; restoring the current one changes nothing.
    let restored = api.expect(200, api.post(&format!("{path}/versions/1/restore"), json!({}))).await?;
    ensure_eq!(restored, json!({"id": id, "version": 3, "changed": true}));
    ensure_eq!(api.expect(200, api.get(&path)).await?["definition"], one["definition"]);
    let again = api.expect(200, api.post(&format!("{path}/versions/3/restore"), json!({}))).await?;
    ensure_eq!(again, json!({"id": id, "version": 3, "changed": false}));

    // The list: by name, filtered, paged.
    let hourly = created(&api, definition("hourly", 1, json!([job_node("a", &[], extract)]))).await?;
    let names = |page: &Value| -> Vec<Value> {
        page["items"]
            .as_array()
            .map(|items| items.iter().map(|w| w["name"].clone()).collect())
            .unwrap_or_default()
    };
    let all = api.expect(200, api.get("/workflows")).await?;
    ensure_eq!((all["total"].clone(), names(&all)), (json!(2), vec![json!("hourly"), json!("nightly")]));
    ensure_eq!(all["items"][1]["currentVersion"], 3);
    let found = api.expect(200, api.get("/workflows?name=NIGHT&jobGroup=1")).await?;
    ensure_eq!((found["total"].clone(), names(&found)), (json!(1), vec![json!("nightly")]));
    let page = api.expect(200, api.get("/workflows?offset=1&limit=1")).await?;
    ensure_eq!((page["total"].clone(), names(&page)), (json!(2), vec![json!("nightly")]));

    // Start: the next fire from five seconds on, as a job's; a running workflow whose schedule changes is
    // rescheduled; stop clears it; a workflow without a schedule does not start.
    let before = now_ms();
    let started = api.expect(200, api.post(&format!("{path}/start"), json!({}))).await?;
    let after = now_ms();
    ensure_eq!(started["triggerStatus"], 1);
    let next = started["triggerNextTime"].as_i64().context("next")?;
    ensure!(
        (cron_next("0 0 2 * * ?", before)?..=cron_next("0 0 2 * * ?", after)?).contains(&next),
        "{started}"
    );
    ensure_eq!(api.expect(200, api.get(&path)).await?["triggerNextTime"], next);
    let mut every_minute = first.clone();
    every_minute["schedule"] = json!({"type": "FIX_RATE", "conf": "60"});
    let before = now_ms();
    ensure_eq!(api.expect(200, api.put(&path, every_minute)).await?["version"], 4);
    let after = now_ms();
    let running = api.expect(200, api.get(&path)).await?;
    let next = running["triggerNextTime"].as_i64().context("next")?;
    ensure!((before + 65_000..=after + 65_000).contains(&next), "{running}");
    ensure_eq!(running["triggerStatus"], 1);
    let mut unscheduled = first.clone();
    unscheduled["schedule"] = json!({"type": "NONE"});
    let kept = api.expect(409, api.put(&path, unscheduled)).await?;
    ensure!(kept["message"].as_str().is_some_and(|m| m.contains("stop it first")), "{kept}");
    let stopped = api.expect(200, api.post(&format!("{path}/stop"), json!({}))).await?;
    ensure_eq!((stopped["triggerStatus"].clone(), stopped["triggerNextTime"].clone()), (json!(0), json!(0)));
    let none = api.expect(409, api.post(&format!("/workflows/{hourly}/start"), json!({}))).await?;
    ensure!(none["message"].as_str().is_some_and(|m| m.contains("NONE")), "{none}");

    // Delete: refused while a run is not over, then done, with its versions.
    let run = NewRun {
        workflow_id: id,
        version: 4,
        state: "paused".into(),
        trigger_type: "MANUAL".into(),
        logical_time: now_ms(),
        params: "{}".into(),
        started_by: Some("admin".into()),
        parent_run_id: None,
        parent_node: None,
        backfill_id: None,
        add_time: now_ms(),
        deadline_time: None,
    };
    let run_id = app.app.db.insert_run(&run).await.context("run")?.context("run id")?;
    let busy = api.expect(409, api.delete(&path)).await?;
    ensure!(busy["message"].as_str().is_some_and(|m| m.contains("1 run(s)")), "{busy}");
    ensure_eq!(api.expect(200, api.get(&path)).await?["currentVersion"], 4);
    let over = RunChange { state: "stopped".into(), end_time: Some(now_ms()), ..RunChange::default() };
    ensure!(app.app.db.change_run_state(run_id, 0, &over).await.context("run state")?, "the run ended");
    ensure_eq!(api.delete(&path).await?.status, 204);
    ensure_eq!(api.get(&path).await?.status, 404);
    ensure_eq!(api.get(&format!("{path}/versions/1")).await?.status, 404);
    ensure_eq!(api.expect(200, api.get("/workflows")).await?["total"], 1);

    audit_of_each_change(&audit_file, id).await?;
    app.stop().await;
    Ok(())
}

/// The events the flow above left: who, what, and the fields each change touched.
async fn audit_of_each_change(file: &Path, id: i64) -> TestResult {
    let events = audited(file, "workflow.remove", "success").await?;
    let target = json!({"type": "workflow", "id": id, "name": "nightly"});
    let added = first_of(&events, "workflow.add", "success")?;
    ensure_eq!(added["target"], target);
    ensure_eq!(
        (added["actor"]["userName"].clone(), added["actor"]["via"].clone()),
        (json!("admin"), json!("api"))
    );
    ensure_eq!(added["changes"]["version"], json!({"before": null, "after": 1}));
    ensure_eq!(added["changes"]["description"], json!({"before": null, "after": "first"}));
    let updates = of_kind(&events, "workflow.update", "success");
    ensure_eq!(updates.len(), 3, "the unchanged save, version 2 and version 4: {updates:?}");
    ensure!(updates[0].get("changes").is_none(), "an unchanged save changes nothing: {}", updates[0]);
    ensure_eq!(updates[1]["changes"]["version"], json!({"before": 1, "after": 2}));
    ensure_eq!(updates[1]["changes"]["description"], json!({"before": "first", "after": "second"}));
    let stale = first_of(&events, "workflow.update", "failure")?;
    ensure!(stale["message"].as_str().is_some_and(|m| m.contains("baseVersion")), "{stale}");
    let restored = of_kind(&events, "workflow.restore", "success");
    ensure_eq!(restored.len(), 2);
    ensure_eq!(restored[0]["changes"]["restoredFrom"], json!({"before": null, "after": 1}));
    ensure_eq!(restored[0]["changes"]["description"], json!({"before": "second", "after": "first"}));
    let start = first_of(&events, "workflow.start", "success")?;
    ensure_eq!(start["target"], target);
    ensure_eq!(start["changes"]["triggerStatus"], json!({"before": 0, "after": 1}));
    let unscheduled = first_of(&events, "workflow.start", "failure")?;
    ensure!(unscheduled["message"].as_str().is_some_and(|m| m.contains("NONE")), "{unscheduled}");
    ensure_eq!(
        first_of(&events, "workflow.stop", "success")?["changes"]["triggerStatus"],
        json!({"before": 1, "after": 0})
    );
    first_of(&events, "workflow.remove", "failure")?;
    let removed = first_of(&events, "workflow.remove", "success")?;
    ensure_eq!(removed["target"], target);
    ensure_eq!(removed["changes"]["version"], json!({"before": 4, "after": null}));
    Ok(())
}

async fn refused_definitions_name_each_problem_and_change_nothing(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let api = admin_api(&app).await?;
    let one = insert(&app.app.db, &job(1)).await?;
    let post = Method::POST;

    // Each problem with its node, its field as a path, and what is wrong.
    let cycle = definition("wf", 1, json!([job_node("a", &["b"], one), job_node("b", &["a"], one)]));
    let reply = refused(&api, post.clone(), "/workflows", cycle).await?;
    let want =
        (json!("a"), "nodes[0].upstream[0]".to_string(), "the nodes form a cycle: a → b → a".to_string());
    ensure_eq!(problems(&reply), vec![want]);
    let unknown_job = definition("wf", 1, json!([job_node("a", &[], one), job_node("b", &["a"], 999_999)]));
    let reply = refused(&api, post.clone(), "/workflows", unknown_job).await?;
    ensure_eq!(
        problems(&reply),
        vec![(json!("b"), "nodes[1].kind.jobId".to_string(), "no job has id 999999".to_string())]
    );
    let mut misspelt = definition("wf", 1, json!([job_node("a", &[], one), job_node("b", &[], one)]));
    misspelt["nodes"][1]["upsteam"] = json!(["a"]);
    let reply = refused(&api, post.clone(), "/workflows", misspelt).await?;
    let found = problems(&reply);
    ensure_eq!(found.len(), 1);
    ensure_eq!((found[0].0.clone(), found[0].1.as_str()), (json!("b"), "nodes[1].upsteam"));
    ensure!(found[0].2.contains("unknown field `upsteam`"), "{found:?}");
    // Every problem at once: an unknown group, a job and a sub-workflow that are not there.
    let nowhere = definition("wf", 999, json!([job_node("a", &[], 999_999), sub_node("s", &["a"], "ghost")]));
    let reply = refused(&api, post.clone(), "/workflows", nowhere).await?;
    ensure_eq!(
        problems(&reply),
        vec![
            (Value::Null, "jobGroup".to_string(), "no executor group has id 999".to_string()),
            (json!("a"), "nodes[0].kind.jobId".to_string(), "no job has id 999999".to_string()),
            (json!("s"), "nodes[1].kind.workflow".to_string(), "no workflow is named 'ghost'".to_string()),
        ]
    );
    ensure_eq!(api.expect(200, api.get("/workflows")).await?["total"], 0);

    // Across workflows: one that would run itself through another, and a chain six levels deep.
    let leaf_doc = definition("leaf", 1, json!([job_node("a", &[], one)]));
    let leaf = created(&api, leaf_doc).await?;
    created(&api, definition("middle", 1, json!([sub_node("s", &[], "leaf")]))).await?;
    let looped = definition("leaf", 1, json!([job_node("a", &[], one), sub_node("s", &["a"], "middle")]));
    let reply = refused(&api, Method::PUT, &format!("/workflows/{leaf}"), looped).await?;
    let cycle = "the workflows form a cycle: leaf → middle → leaf".to_string();
    ensure_eq!(problems(&reply), vec![(json!("s"), "nodes[1].kind.workflow".to_string(), cycle)]);
    ensure_eq!(api.expect(200, api.get(&format!("/workflows/{leaf}"))).await?["currentVersion"], 1);
    // A workflow another one runs as a step is not deleted from under it.
    let used = api.expect(409, api.delete(&format!("/workflows/{leaf}"))).await?;
    ensure!(used["message"].as_str().is_some_and(|m| m.contains("is a sub-workflow of middle")), "{used}");
    // d0 → d1 → … → d5 is five levels below d0; one more above is refused.
    let d5 = created(&api, definition("d5", 1, json!([job_node("a", &[], one)]))).await?;
    for level in (0..5).rev() {
        let below = format!("d{}", level + 1);
        created(&api, definition(&format!("d{level}"), 1, json!([sub_node("s", &[], &below)]))).await?;
    }
    let top = definition("top", 1, json!([sub_node("s", &[], "d0")]));
    let reply = refused(&api, post.clone(), "/workflows", top).await?;
    let deep =
        "sub-workflows nest 6 levels deep here (top → d0 → d1 → d2 → d3 → d4 → d5); at most 5 are allowed";
    ensure_eq!(problems(&reply), vec![(json!("s"), "nodes[0].kind.workflow".to_string(), deep.to_string())]);
    // Nor may the bottom one grow a level: d0's runs would go six deep through it.
    let grown = definition("d5", 1, json!([job_node("a", &[], one), sub_node("s", &["a"], "leaf")]));
    let reply = refused(&api, Method::PUT, &format!("/workflows/{d5}"), grown).await?;
    let deep =
        "sub-workflows nest 6 levels deep here (d0 → d1 → d2 → d3 → d4 → d5 → leaf); at most 5 are allowed";
    ensure_eq!(problems(&reply), vec![(json!("s"), "nodes[1].kind.workflow".to_string(), deep.to_string())]);

    // A name another workflow has; a body that is no object; nothing was written by any of them.
    let taken = api
        .expect(409, api.post("/workflows", definition("leaf", 1, json!([job_node("a", &[], one)]))))
        .await?;
    ensure!(taken["message"].as_str().is_some_and(|m| m.contains("\"leaf\" exists already")), "{taken}");
    ensure_eq!(api.post("/workflows", json!([1])).await?.status, 400);
    let (status, _) = api.text(Method::POST, "/workflows", Some(("text/plain", "{}"))).await?;
    ensure_eq!(status, 415);
    let all = api.expect(200, api.get("/workflows?limit=100")).await?;
    ensure_eq!(all["total"], 8, "leaf, middle, d0 to d5: {all}");
    ensure!(
        all["items"].as_array().is_some_and(|items| items.iter().all(|w| w["currentVersion"] == 1)),
        "{all}"
    );
    app.stop().await;
    Ok(())
}

async fn a_restricted_token_keeps_to_its_groups(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let console = admin(&app).await?;
    let api = RestClient::issued_by(&app.base, &console, None).await?;
    let other = manual_group(&app.app.db, "wf-other", &["127.0.0.1:9"]).await?;
    let own_job = insert(&app.app.db, &job(other)).await?;
    let foreign_job = insert(&app.app.db, &job(1)).await?;
    let theirs = created(&api, definition("theirs", 1, json!([job_node("a", &[], foreign_job)]))).await?;

    let added = console
        .post(
            "/user/add",
            &[
                ("username", "wf-user"),
                ("password", "secret-1"),
                ("role", "0"),
                ("permission", &other.to_string()),
            ],
        )
        .await?;
    ensure_eq!(added["code"], 200, "{added}");
    let mut user = ConsoleClient::new(&app.base);
    ensure_eq!(user.login("wf-user", "secret-1", false).await?["code"], 200);
    let restricted = RestClient::issued_by(&app.base, &user, None).await?;

    let denied = |reply: RestReply, what: &str| -> TestResult {
        ensure_eq!(reply.status, 403, "{what}: {}", reply.body);
        let message = reply.body["message"].as_str().unwrap_or_default();
        ensure!(message.contains("[username=wf-user]"), "{what}: {message}");
        Ok(())
    };
    ensure_eq!(restricted.expect(200, restricted.get("/workflows")).await?["total"], 0);
    denied(restricted.get("/workflows?jobGroup=1").await?, "the list of group 1")?;
    let path = format!("/workflows/{theirs}");
    denied(restricted.get(&path).await?, "read")?;
    denied(restricted.get(&format!("{path}/versions")).await?, "versions")?;
    denied(
        restricted.put(&path, definition("theirs", other, json!([job_node("a", &[], own_job)]))).await?,
        "update",
    )?;
    denied(restricted.post(&format!("{path}/start"), json!({})).await?, "start")?;
    denied(restricted.delete(&path).await?, "delete")?;
    // A new workflow: in his group, naming only jobs and sub-workflows of his groups.
    denied(
        restricted.post("/workflows", definition("mine", 1, json!([job_node("a", &[], own_job)]))).await?,
        "group 1",
    )?;
    let foreign =
        definition("mine", other, json!([job_node("a", &[], own_job), job_node("b", &["a"], foreign_job)]));
    denied(restricted.post("/workflows", foreign).await?, "a job of group 1")?;
    let nested =
        definition("mine", other, json!([job_node("a", &[], own_job), sub_node("s", &["a"], "theirs")]));
    denied(restricted.post("/workflows", nested).await?, "a sub-workflow of group 1")?;
    let mine = created(&restricted, definition("mine", other, json!([job_node("a", &[], own_job)]))).await?;
    let listed = restricted.expect(200, restricted.get("/workflows")).await?;
    ensure_eq!((listed["total"].clone(), listed["items"][0]["id"].clone()), (json!(1), json!(mine)));
    ensure_eq!(api.expect(200, api.get("/workflows")).await?["total"], 2, "the refused ones wrote nothing");
    ensure_eq!(api.expect(200, api.get(&path)).await?["currentVersion"], 1);
    app.stop().await;
    Ok(())
}
