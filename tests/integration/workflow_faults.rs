//! Workflow runs survive `kill -9`: runs of a 10-node DAG with fan-out and a join go on while the
//! leading admin (a child process) is killed at moments nobody chose and replaced; callbacks go to any
//! admin. Every run ends, and the executor receives each node of each run exactly once.

use crate::failover::{leader, owner_of};
use crate::support::scripted_executor::{Answer, ScriptedExecutor};
use crate::support::{fixtures, now_ms, AdminProcess, Backend, Context, TestDb, TOKEN};
use crate::{cases, ensure, ensure_eq, Case, TestResult, ALL};
use libtest_mimic::Failed;
use serde_json::json;
use std::collections::HashMap;
use std::time::Duration;
use xxl_job_admin::storage::{Db, NewRun, OnLimit, RunLimits, WorkflowHead};

pub fn cases() -> Vec<Case> {
    cases! {
        "workflow_faults" {
            ALL => killed_leaders_neither_lose_nor_double_a_node,
        }
    }
}

const RUNS: usize = 200;
const KILLS: usize = 3;
const POOL: &str = "--spring.datasource.hikari.maximum-pool-size=20";

/// a → b1…b5 → c → d → e → f: ten nodes, a fan-out of five and a join. Retries cover an attempt whose
/// admin died after writing it and before sending it (settled as lost, never received).
fn dag(job: i32, group: i32) -> serde_json::Value {
    let node = |name: &str, upstream: &[&str]| {
        json!({"name": name, "upstream": upstream, "kind": {"type": "job", "jobId": job, "param": format!("{name}:{{{{ run_id }}}}")},
               "retry": {"count": 3, "delayMs": 200}})
    };
    let fan = ["b1", "b2", "b3", "b4", "b5"];
    let mut nodes = vec![node("a", &[])];
    nodes.extend(fan.iter().map(|b| node(b, &["a"])));
    nodes.extend([node("c", &fan), node("d", &["c"]), node("e", &["d"]), node("f", &["e"])]);
    json!({"name": "dag", "jobGroup": group, "concurrency": {"maxRuns": RUNS}, "nodes": nodes})
}

async fn killed_leaders_neither_lose_nor_double_a_node(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    if backend != Backend::Sqlite {
        db.create().await?;
    }
    let store = db.open().await?;
    let logs = tempfile::tempdir().context("temp dir")?;
    // Only the first admin's address matters until the admins are up.
    let executor = ScriptedExecutor::start("http://127.0.0.1:9/xxl-job-admin", |_| Answer::Callback {
        code: 200,
        msg: "done".into(),
        delay_ms: 20,
    })
    .await?;
    let group = fixtures::manual_group(&store, "workflow-faults", &[&executor.address]).await?;
    let mut job = fixtures::job(group);
    job.executor_handler = Some("node".into());
    let job = fixtures::insert(&store, &job).await?;
    let workflow = insert_workflow(&store, &dag(job, group)).await?;

    let admin_count = if backend == Backend::Sqlite { 1 } else { 3 };
    let mut spawned = 0;
    let mut spawn = || -> Result<AdminProcess, Failed> {
        spawned += 1;
        // Four admins at once (three and a replacement) within PostgreSQL's 100 connections.
        AdminProcess::spawn_with(&format!("admin-{spawned}"), &db.url, TOKEN, logs.path(), &[POOL])
    };
    let mut admins = Vec::new();
    for _ in 0..admin_count {
        admins.push(spawn()?);
    }
    for admin in &mut admins {
        admin.wait_ready().await?;
    }
    executor.set_admins(&admins.iter().map(|a| a.base.as_str()).collect::<Vec<_>>());

    let now = now_ms();
    let limits = RunLimits { max_runs: RUNS as u32, on_limit: OnLimit::Queue { max_queued: 0 } };
    let mut run_ids = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let run = NewRun {
            workflow_id: workflow,
            version: 1,
            state: "running".into(),
            trigger_type: "api".into(),
            logical_time: now,
            params: "{}".into(),
            started_by: Some("tests".into()),
            parent_run_id: None,
            parent_node: None,
            backfill_id: None,
            add_time: now,
            deadline_time: None,
        };
        let admitted =
            store.admit_run(&run, limits, now).await.context("start a run")?.context("the workflow")?;
        ensure_eq!(admitted.state, "running");
        run_ids.push(admitted.id);
    }

    // Kill -9 the leader (the one whose sweep picks runs up) at moments the seed of the clock chooses.
    let mut victims = Vec::new();
    for round in 0..KILLS {
        let wait = 700 + (now_ms() % 900) as u64 + round as u64 * 300;
        tokio::time::sleep(Duration::from_millis(wait)).await;
        let index = if admin_count == 1 {
            0
        } else {
            let owner = leader(&db).await?;
            owner
                .and_then(|o| admins.iter().position(|a| owner_of(a).as_deref() == Some(o.as_str())))
                .unwrap_or(0)
        };
        let mut victim = admins.remove(index);
        victim.kill();
        victims.push(victim);
        executor.set_admins(&admins.iter().map(|a| a.base.as_str()).collect::<Vec<_>>());
        let mut fresh = spawn()?;
        fresh.wait_ready().await?;
        admins.push(fresh);
        executor.set_admins(&admins.iter().map(|a| a.base.as_str()).collect::<Vec<_>>());
    }

    // An attempt written and not sent by a killed admin is settled as lost after a minute, then retried.
    let deadline = now_ms() + 180_000;
    let unfinished = loop {
        let mut open = 0;
        for id in &run_ids {
            let run = store.load_run(*id).await.context("read a run")?.context("the run")?;
            if !["succeeded", "failed", "stopped"].contains(&run.state.as_str()) {
                open += 1;
            }
        }
        if open == 0 || now_ms() > deadline {
            break open;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    let tails: Vec<String> =
        admins.iter().chain(&victims).map(|a| format!("{}:\n{}", a.name, a.tail(15))).collect();
    ensure_eq!(unfinished, 0, "runs still going after the kills; admins' logs:\n{}", tails.join("\n"));

    let mut failed = Vec::new();
    let mut nodes_per_run: HashMap<i64, HashMap<String, usize>> = HashMap::new();
    let triggers = node_of_log(&store, &run_ids).await?;
    let received = executor.runs();
    let mut seen_logs = HashMap::new();
    for call in &received {
        *seen_logs.entry(call.log_id).or_insert(0) += 1;
        let (run, node) = triggers.get(&call.log_id).context("a node's log row for every /run")?;
        *nodes_per_run.entry(*run).or_default().entry(node.clone()).or_insert(0) += 1;
    }
    let doubled_logs: Vec<_> = seen_logs.iter().filter(|(_, n)| **n > 1).collect();
    ensure!(doubled_logs.is_empty(), "log rows sent twice: {doubled_logs:?}");
    for id in &run_ids {
        let run = store.load_run(*id).await.context("read a run")?.context("the run")?;
        if run.state != "succeeded" {
            failed.push((run.id, run.state, run.message));
        }
        let per_node = nodes_per_run.get(id).cloned().unwrap_or_default();
        ensure_eq!(per_node.len(), 10, "run {id}: every node reached the executor: {per_node:?}");
        let doubled: Vec<_> = per_node.iter().filter(|(_, n)| **n != 1).collect();
        ensure!(doubled.is_empty(), "run {id}: nodes the executor received more than once: {doubled:?}");
    }
    ensure!(failed.is_empty(), "runs that did not succeed: {failed:?}");
    for admin in &mut admins {
        admin.send_term()?;
    }
    for admin in &mut admins {
        admin.wait_exit().await?;
    }
    Ok(())
}

async fn insert_workflow(store: &Db, doc: &serde_json::Value) -> Result<i64, Failed> {
    store.ensure_extension_tables().await.context("workflow tables")?;
    let head = WorkflowHead {
        name: "dag".into(),
        job_group: doc["jobGroup"].as_i64().unwrap_or(0) as i32,
        schedule_type: "NONE".into(),
        schedule_conf: None,
        misfire_strategy: "DO_NOTHING".into(),
    };
    store.insert_workflow(&head, &doc.to_string(), Some("tests"), now_ms()).await.context("insert workflow")
}

/// The (run, node) each log row of these runs was sent for.
async fn node_of_log(store: &Db, runs: &[i64]) -> Result<HashMap<i64, (i64, String)>, Failed> {
    let mut found = HashMap::new();
    for run in runs {
        for log in store.run_trigger_results(*run).await.context("a run's log rows")? {
            found.insert(log.log_id, (*run, log.node));
        }
    }
    Ok(found)
}
