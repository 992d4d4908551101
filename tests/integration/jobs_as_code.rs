//! Jobs as code (docs/jobs-as-code.md): `xxl-job-admin export` and `apply` on a real database, the REST
//! API's `/export` and `/apply`, `xxl.job.apply.file` at start, a restricted user's limits, and workflows
//! in the document.

use crate::support::console::ConsoleClient;
use crate::support::rest::RestClient;
use crate::support::{Backend, Context, TestApp, TestDb};
use crate::{cases, ensure, ensure_eq, Case, TestResult, ALL};
use libtest_mimic::Failed;
use reqwest::Method;
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output};
use xxl_job_admin::domain::codes::TriggerStatus;
use xxl_job_admin::storage::{NewRun, RunChange};

pub fn cases() -> Vec<Case> {
    cases! {
        "jobs_as_code" {
            ALL => cli_round_trip_dry_run_idempotence_and_exit_status,
            ALL => rest_apply_plan_prune_and_refusals_change_nothing,
            ALL => apply_file_at_start_once_for_two_admins,
            ALL => restricted_user_stays_within_granted_executors,
            ALL => workflows_round_trip_version_only_when_changed_and_refuse_unknown_jobs,
            ALL => workflows_follow_trigger_status_and_prune_spares_a_busy_one,
        }
    }
}

const BINARY: &str = env!("CARGO_BIN_EXE_xxl-job-admin");

/// The command as an operator runs it, on `db`, with no configuration from this process's environment.
fn cli(db: &TestDb, args: &[&str], dir: &Path) -> Result<Output, Failed> {
    Command::new(BINARY)
        .args(args)
        .arg(format!("--spring.datasource.url={}", db.url))
        .arg("--xxl.job.i18n=en")
        .current_dir(dir)
        .env_clear()
        .output()
        .context("run xxl-job-admin")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

async fn admin_api(app: &TestApp) -> Result<RestClient, Failed> {
    let mut admin = ConsoleClient::new(&app.base);
    ensure_eq!(admin.login("admin", "123456", false).await?["code"], 200);
    RestClient::issued_by(&app.base, &admin, None).await
}

fn job_body(group: &Value, desc: &str, handler: &str, cron: &str) -> Value {
    json!({
        "jobGroup": group, "jobDesc": desc, "author": "ops", "alarmEmail": "ops@example.com",
        "scheduleType": "CRON", "scheduleConf": cron, "misfireStrategy": "FIRE_ONCE_NOW",
        "executorRouteStrategy": "ROUND", "executorHandler": handler, "executorParam": "p=1",
        "executorBlockStrategy": "DISCARD_LATER", "executorTimeout": 30, "executorFailRetryCount": 2,
        "glueType": "BEAN", "glueRemark": "first version"
    })
}

/// Jobs made in one database through the API, exported by the command, applied to an empty database and
/// exported again: the same document. A second apply changes nothing; a dry run plans and writes nothing;
/// a bad file fails with its line and exit status 1, a bad command line with 2.
async fn cli_round_trip_dry_run_idempotence_and_exit_status(backend: Backend) -> TestResult {
    let dir = tempfile::tempdir().context("temp dir")?;
    let a = TestDb::fresh(backend)?;
    let app = TestApp::start(&a, &[]).await?;
    let api = admin_api(&app).await?;
    let group = api
        .expect(201, api.post("/groups", json!({"appname": "billing-app", "title": "Billing", "addressType": 1, "addressList": "http://10.0.0.1:9999,http://10.0.0.2:9999"})))
        .await?;
    let mailer = api
        .expect(201, api.post("/jobs", job_body(&group["id"], "send mail", "mailer", "0 0 3 * * ?")))
        .await?;
    let mut parent = job_body(&group["id"], "invoices", "invoicer", "0 0 2 * * ?");
    parent["childJobId"] = json!(mailer["id"].to_string());
    let parent = api.expect(201, api.post("/jobs", parent)).await?;
    api.expect(200, api.post(&format!("/jobs/{}/start", parent["id"]), json!({}))).await?;
    let shell = json!({
        "jobGroup": 1, "jobDesc": "clean tmp", "author": "ops", "scheduleType": "FIX_RATE", "scheduleConf": "60",
        "misfireStrategy": "DO_NOTHING", "executorRouteStrategy": "FIRST", "executorBlockStrategy": "SERIAL_EXECUTION",
        "glueType": "GLUE_SHELL", "glueSource": "#!/bin/sh\nrm -rf /tmp/x\n", "glueRemark": "shell v1"
    });
    let shell = api.expect(201, api.post("/jobs", shell)).await?;
    // A child declared after its parent in the document: mailer's child is the shell job of the sample executor.
    let mut mailer_update = job_body(&group["id"], "send mail", "mailer", "0 0 3 * * ?");
    mailer_update["childJobId"] = json!(shell["id"].to_string());
    api.expect(200, api.put(&format!("/jobs/{}", mailer["id"]), mailer_update)).await?;
    // Two versions saved in the GLUE IDE: the shell job's history, exported with --glue-history.
    let mut console = ConsoleClient::new(&app.base);
    console.login("admin", "123456", false).await?;
    for (source, remark) in
        [("#!/bin/sh\nrm -rf /tmp/x\n", "shell v2"), ("#!/bin/sh\nrm -rf /tmp/x\n", "shell v3")]
    {
        let saved = console
            .post(
                "/jobcode/save",
                &[("id", &shell["id"].to_string()), ("glueSource", source), ("glueRemark", remark)],
            )
            .await?;
        ensure_eq!(saved["code"], 200, "{saved}");
    }
    app.stop().await;

    let exported = cli(&a, &["export", "--glue-history", "-o", "a.toml"], dir.path())?;
    ensure_eq!(exported.status.code(), Some(0), "{}", text(&exported.stderr));
    let document = std::fs::read_to_string(dir.path().join("a.toml")).context("a.toml")?;
    ensure!(document.contains("child_jobs = [\"billing-app/send mail/mailer\"]"), "{document}");
    ensure!(
        document.contains("addresses = [\n    \"http://10.0.0.1:9999\",")
            || document.contains("addresses = [\"http://10.0.0.1:9999\""),
        "{document}"
    );
    ensure!(document.contains("#!/bin/sh") && document.contains("glue_remark = \"shell v3\""), "{document}");
    let history_at = document.find("[[executor.job.glue_history]]").context("a history")?;
    ensure!(
        document[history_at..].find("shell v3") < document[history_at..].find("shell v2"),
        "newest first: {document}"
    );
    ensure_eq!(document.matches("[[executor.job.glue_history]]").count(), 2, "{document}");
    let json_out = cli(&a, &["export", "--group", "billing-app"], dir.path())?;
    let json_doc: Value = serde_json::from_slice(&json_out.stdout).context("JSON on stdout")?;
    ensure_eq!(json_doc["executor"].as_array().map(Vec::len), Some(1));

    let b = TestDb::fresh(backend)?;
    let applied = cli(&b, &["apply", "-f", "a.toml"], dir.path())?;
    let out = text(&applied.stdout);
    ensure_eq!(applied.status.code(), Some(0), "{out}{}", text(&applied.stderr));
    ensure!(
        out.contains("+ executor billing-app: create")
            && out.contains("+ job billing-app/invoices/invoicer: create"),
        "{out}"
    );
    ensure!(
        out.contains("= job xxl-job-executor-sample/测试任务1/demoJobHandler: unchanged")
            && out.contains("4 change(s)"),
        "{out}"
    );
    let again = cli(&b, &["export", "--glue-history", "-o", "b.toml"], dir.path())?;
    ensure_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    ensure_eq!(std::fs::read_to_string(dir.path().join("b.toml")).context("b.toml")?, document);

    // Stored as the console stores: '' where the form sent nothing, times set, the started job scheduled.
    let app_b = TestApp::start(&b, &[]).await?;
    let groups = app_b.app.db.all_groups().await.context("groups")?;
    let billing = groups.iter().find(|g| g.app_name == "billing-app").context("billing-app")?;
    ensure_eq!(billing.address_list.as_deref(), Some("http://10.0.0.1:9999,http://10.0.0.2:9999"));
    let jobs = app_b.app.db.jobs_by_group(billing.id).await.context("jobs")?;
    let invoices = jobs.iter().find(|j| j.job_desc == "invoices").context("invoices")?;
    ensure_eq!(invoices.glue_source.as_deref(), Some(""));
    ensure_eq!(invoices.glue_remark.as_deref(), Some("first version"));
    ensure!(
        invoices.add_time.is_some() && invoices.update_time.is_some() && invoices.glue_updatetime.is_some(),
        "{invoices:?}"
    );
    ensure!(
        invoices.trigger_status == TriggerStatus::Running && invoices.trigger_next_time > 0,
        "{invoices:?}"
    );
    let mailer_b = jobs.iter().find(|j| j.job_desc == "send mail").context("send mail")?;
    ensure_eq!(invoices.child_jobid, Some(mailer_b.id.to_string()));
    let shell_b = app_b
        .app
        .db
        .jobs_by_group(1)
        .await
        .context("jobs")?
        .into_iter()
        .find(|j| j.job_desc == "clean tmp")
        .context("clean tmp")?;
    ensure_eq!(mailer_b.child_jobid, Some(shell_b.id.to_string()), "a child created after its parent");
    ensure_eq!(shell_b.glue_source.as_deref(), Some("#!/bin/sh\nrm -rf /tmp/x\n"));
    ensure_eq!((mailer_b.trigger_status, mailer_b.trigger_next_time), (TriggerStatus::Stopped, 0));
    app_b.stop().await;

    let second = cli(&b, &["apply", "-f", "a.toml"], dir.path())?;
    ensure_eq!(second.status.code(), Some(0));
    ensure!(text(&second.stdout).contains("\n0 change(s)"), "{}", text(&second.stdout));

    std::fs::write(dir.path().join("c.toml"), document.replace("0 0 3 * * ?", "0 30 3 * * ?"))
        .context("c.toml")?;
    let planned = cli(&b, &["apply", "-f", "c.toml", "--dry-run"], dir.path())?;
    let out = text(&planned.stdout);
    ensure_eq!(planned.status.code(), Some(0), "{}", text(&planned.stderr));
    ensure!(out.contains("~ job billing-app/send mail/mailer: update\n    schedule_conf: \"0 0 3 * * ?\" -> \"0 30 3 * * ?\""), "{out}");
    ensure!(out.contains("1 change(s)") && out.contains("dry run"), "{out}");
    std::fs::write(
        dir.path().join("h.toml"),
        document.replace("glue_remark = \"shell v2\"", "glue_remark = \"shell 2\""),
    )
    .context("h.toml")?;
    let planned = cli(&b, &["apply", "-f", "h.toml", "--dry-run"], dir.path())?;
    let out = text(&planned.stdout);
    ensure!(out.contains("~ job xxl-job-executor-sample/clean tmp/: update\n    glue_history: \"2 version(s): \\\"shell v3\\\" "), "{out}");
    ensure!(out.contains(", \\\"shell 2\\\" ") && out.contains("1 change(s)"), "{out}");
    let versions = "[[executor.job.glue_history]]\nglue_remark = \"v\"\n".repeat(30);
    let long = document.replacen(
        "[[executor.job.glue_history]]",
        &format!("{versions}[[executor.job.glue_history]]"),
        1,
    );
    std::fs::write(dir.path().join("long.toml"), long).context("long.toml")?;
    let long = cli(&b, &["apply", "-f", "long.toml"], dir.path())?;
    ensure!(
        long.status.code() == Some(1) && text(&long.stderr).contains("glue_history: 32 versions"),
        "{}",
        text(&long.stderr)
    );

    std::fs::write(dir.path().join("bad.toml"), "[[executor]]\napp_name = \"billing-app\"\ntitle = \n")
        .context("bad.toml")?;
    let bad = cli(&b, &["apply", "-f", "bad.toml"], dir.path())?;
    ensure_eq!(bad.status.code(), Some(1));
    ensure!(text(&bad.stderr).contains("bad.toml: line 3"), "{}", text(&bad.stderr));
    // A bad cron: after the job and the field, the reason `xxl-job-admin cron` gives for the expression.
    std::fs::write(dir.path().join("cron.toml"), document.replace("0 0 3 * * ?", "0 0 3 * * 8"))
        .context("cron.toml")?;
    let bad_cron = cli(&b, &["apply", "-f", "cron.toml"], dir.path())?;
    let checked = Command::new(BINARY).args(["cron", "0 0 3 * * 8"]).output().context("cron")?;
    let reason = text(&checked.stderr);
    let reason = reason.lines().next().and_then(|l| l.split("\"0 0 3 * * 8\": ").nth(1)).unwrap_or_default();
    ensure!(!reason.is_empty(), "{}", text(&checked.stderr));
    ensure!(
        bad_cron.status.code() == Some(1)
            && text(&bad_cron.stderr).contains("billing-app/send mail/mailer")
            && text(&bad_cron.stderr).contains(&format!("): Cron is invalid: {reason}")),
        "{}",
        text(&bad_cron.stderr)
    );
    let usage = cli(&b, &["apply", "-f", "a.toml", "--force"], dir.path())?;
    ensure_eq!(usage.status.code(), Some(2), "{}", text(&usage.stderr));
    let help = cli(&b, &["apply", "--help"], dir.path())?;
    ensure!(help.status.success() && text(&help.stdout).contains("--dry-run"), "{}", text(&help.stdout));
    let yaml = cli(&b, &["export", "-o", "a.yaml"], dir.path())?;
    ensure_eq!(yaml.status.code(), Some(2));

    let after = cli(&b, &["export", "--glue-history", "-o", "after.toml"], dir.path())?;
    ensure_eq!(after.status.code(), Some(0));
    ensure_eq!(
        std::fs::read_to_string(dir.path().join("after.toml")).context("after.toml")?,
        document,
        "dry run and bad files wrote nothing"
    );

    // A document without history leaves the stored one alone, and a changed GLUE source is saved as the
    // GLUE IDE saves it: with a history version, beside the two applied.
    let plain = cli(&b, &["export", "-o", "plain.toml"], dir.path())?;
    ensure_eq!(plain.status.code(), Some(0));
    let plain = std::fs::read_to_string(dir.path().join("plain.toml")).context("plain.toml")?;
    ensure!(!plain.contains("glue_history"), "{plain}");
    std::fs::write(dir.path().join("d.toml"), plain.replace("rm -rf /tmp/x", "rm -rf /tmp/y"))
        .context("d.toml")?;
    let glue = cli(&b, &["apply", "-f", "d.toml"], dir.path())?;
    ensure!(
        glue.status.success() && text(&glue.stdout).contains("    glue_source: "),
        "{}",
        text(&glue.stdout)
    );
    let app_b = TestApp::start(&b, &[]).await?;
    let shell_b = app_b
        .app
        .db
        .jobs_by_group(1)
        .await
        .context("jobs")?
        .into_iter()
        .find(|j| j.job_desc == "clean tmp")
        .context("clean tmp")?;
    ensure_eq!(shell_b.glue_source.as_deref(), Some("#!/bin/sh\nrm -rf /tmp/y\n"));
    let history = app_b.app.db.glues_of_job(shell_b.id).await.context("history")?;
    let remarks: Vec<&str> = history.iter().map(|v| v.glue_remark.as_str()).collect();
    ensure_eq!(remarks, ["shell v3", "shell v3", "shell v2"]);
    ensure_eq!(history[0].glue_source.as_deref(), Some("#!/bin/sh\nrm -rf /tmp/y\n"));
    // The REST API's export with glueHistory=true is the command's.
    let with_history = cli(&b, &["export", "--glue-history", "-o", "e.toml"], dir.path())?;
    ensure_eq!(with_history.status.code(), Some(0));
    let (status, body) =
        admin_api(&app_b).await?.text(Method::GET, "/export?format=toml&glueHistory=true", None).await?;
    ensure_eq!(status, 200, "{body}");
    ensure_eq!(body, std::fs::read_to_string(dir.path().join("e.toml")).context("e.toml")?);
    app_b.stop().await;
    Ok(())
}

const REPORTS: &str = r#"
[[executor]]
app_name = "reports-app"
title = "Reports"

[[executor.job]]
description = "daily report"
author = "ops"
schedule_type = "CRON"
schedule_conf = "0 0 6 * * ?"
route_strategy = "ROUND"
handler = "dailyReport"
block_strategy = "DISCARD_LATER"
child_jobs = ["archive"]
trigger_status = 1

[[executor.job]]
key = "archive"
description = "archive"
author = "ops"
schedule_type = "NONE"
route_strategy = "FIRST"
handler = "archiver"
block_strategy = "SERIAL_EXECUTION"
"#;

const TOML: &str = "application/toml";

async fn export_all(api: &RestClient) -> Result<String, Failed> {
    let (status, body) = api.text(Method::GET, "/export?format=toml", None).await?;
    ensure_eq!(status, 200, "{body}");
    Ok(body)
}

/// `400` whose message contains `part`, and the database as it was.
async fn refused(api: &RestClient, doc: &str, part: &str, before: &str) -> TestResult {
    refused_with(api, "/apply", 400, doc, part, before).await
}

/// `status` from `POST path` whose message contains `part`, and the database as it was.
async fn refused_with(
    api: &RestClient,
    path: &str,
    expected: u16,
    doc: &str,
    part: &str,
    before: &str,
) -> TestResult {
    let (status, body) = api.text(Method::POST, path, Some((TOML, doc))).await?;
    ensure_eq!(status, expected, "{body}");
    let message = serde_json::from_str::<Value>(&body).context("error body")?["message"]
        .as_str()
        .unwrap_or("")
        .to_string();
    ensure!(message.contains(part), "{part:?} in {message}");
    ensure_eq!(export_all(api).await?, before, "a refused document changes nothing");
    Ok(())
}

/// The REST API: a dry run plans without writing, an apply creates (children by key, started state), a
/// second apply changes nothing, prune deletes only within the named executor, and refused documents
/// (malformed, a bad cron, an unknown child, a schedule that never fires while the executor would already
/// have been created) leave everything as it was.
async fn rest_apply_plan_prune_and_refusals_change_nothing(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let api = admin_api(&app).await?;
    let empty = export_all(&api).await?;

    let (status, body) = api.text(Method::POST, "/apply?dryRun=true", Some((TOML, REPORTS))).await?;
    ensure_eq!(status, 200, "{body}");
    let plan: Value = serde_json::from_str(&body).context("plan")?;
    ensure_eq!(plan["applied"], false);
    ensure_eq!(plan["changes"], 3);
    ensure_eq!(plan["executors"][0], json!({"app_name": "reports-app", "action": "create", "diffs": []}));
    ensure_eq!(export_all(&api).await?, empty, "a dry run writes nothing");

    let applied = api.text(Method::POST, "/apply", Some((TOML, REPORTS))).await?;
    let plan: Value = serde_json::from_str(&applied.1).context("plan")?;
    ensure_eq!((plan["applied"].clone(), plan["changes"].clone()), (json!(true), json!(3)), "{plan}");
    let jobs = api.expect(200, api.get("/jobs?jobDesc=r")).await?;
    let daily = jobs["items"]
        .as_array()
        .context("items")?
        .iter()
        .find(|j| j["jobDesc"] == "daily report")
        .context("daily")?
        .clone();
    let archive = jobs["items"]
        .as_array()
        .context("items")?
        .iter()
        .find(|j| j["jobDesc"] == "archive")
        .context("archive")?
        .clone();
    ensure_eq!(daily["childJobId"], archive["id"].to_string());
    ensure_eq!(daily["triggerStatus"], 1);
    ensure_eq!(archive["triggerStatus"], 0);
    // A Java admin reads these rows as its console's: '' wherever the file left a text out, never NULL.
    let archive_id = archive["id"].as_i64().context("archive id")? as i32;
    let row = app.app.db.load_job(archive_id).await.context("archive row")?.context("archive row")?;
    let texts = [
        &row.author,
        &row.alarm_email,
        &row.schedule_conf,
        &row.executor_route_strategy,
        &row.executor_handler,
        &row.executor_param,
        &row.executor_block_strategy,
        &row.glue_source,
        &row.glue_remark,
        &row.child_jobid,
    ];
    ensure!(texts.iter().all(|t| t.is_some()), "no NULL text: {row:?}");
    ensure!(row.add_time.is_some() && row.update_time.is_some() && row.glue_updatetime.is_some(), "{row:?}");

    let again: Value =
        serde_json::from_str(&api.text(Method::POST, "/apply", Some((TOML, REPORTS))).await?.1)
            .context("plan")?;
    ensure_eq!((again["applied"].clone(), again["changes"].clone()), (json!(false), json!(0)), "{again}");
    let (status, exported_json) = api.text(Method::GET, "/export?group=reports-app", None).await?;
    ensure_eq!(status, 200);
    let round: Value = serde_json::from_str(
        &api.text(Method::POST, "/apply", Some(("application/json", &exported_json))).await?.1,
    )
    .context("plan")?;
    ensure_eq!(round["changes"], 0, "{round}");

    let before = export_all(&api).await?;
    refused(&api, "[[executor]]\napp_name = \"reports-app\"\ntitle = [\n", "line 3", &before).await?;
    refused(
        &api,
        &REPORTS.replace("0 0 6 * * ?", "0 0 6 * *"),
        "job \"reports-app/daily report/dailyReport\" (line 6): Cron",
        &before,
    )
    .await?;
    // A name that finds nothing is a 404 and names that collide a 409, as the job form's child ids and the
    // stored job's version are.
    refused_with(
        &api,
        "/apply",
        404,
        &REPORTS.replace("[\"archive\"]", "[\"nowhere-app/x/y\"]"),
        "child_jobs: \"nowhere-app/x/y\" names no job",
        &before,
    )
    .await?;
    refused_with(
        &api,
        "/apply",
        409,
        &REPORTS
            .replace(
                "key = \"archive\"\ndescription = \"archive\"",
                "key = \"archive\"\ndescription = \"daily report\"",
            )
            .replace("handler = \"archiver\"", "handler = \"dailyReport\""),
        "declared twice",
        &before,
    )
    .await?;
    // Beyond the console's checks: what the columns would refuse with a database error, and an address that
    // the comma-joined column would split.
    refused(
        &api,
        &REPORTS.replace(
            "author = \"ops\"\nschedule_type = \"CRON\"",
            &format!("author = \"{}\"\nschedule_type = \"CRON\"", "o".repeat(65)),
        ),
        "author: longer than the column's 64 characters",
        &before,
    )
    .await?;
    let manual = "[[executor]]\napp_name = \"manual-app\"\ntitle = \"Manual\"\naddress_type = \"manual\"\naddresses = [\"http://127.0.0.1:9999,http://127.0.0.1:9998\"]\n";
    refused(&api, manual, "addresses: \"http://127.0.0.1:9999,http://127.0.0.1:9998\"", &before).await?;
    // The flags and the format as the OpenAPI document spells them: true or false, json or toml; a bare flag
    // is refused rather than guessed.
    for flag in ["dryRun", "dryRun=", "dryRun=yes", "prune=TRUE"] {
        refused_with(&api, &format!("/apply?{flag}"), 400, REPORTS, "must be true or false", &before).await?;
    }
    for format in ["format=", "format=TOML", "format=yaml"] {
        let (status, body) = api.text(Method::GET, &format!("/export?{format}"), None).await?;
        ensure_eq!(status, 400, "{format}: {body}");
    }
    refused(
        &api,
        &REPORTS.replace(
            "author = \"ops\"\nschedule_type = \"NONE\"",
            "author = \"ops\"\nowner = \"x\"\nschedule_type = \"NONE\"",
        ),
        "unknown field `owner`",
        &before,
    )
    .await?;
    // Checked only while writing, after the new executor's row: the whole apply is rolled back.
    let never = REPORTS.replace("reports-app", "later-app").replace("0 0 6 * * ?", "0 0 0 1 1 ? 2020");
    refused(&api, &never, "trigger_status", &before).await?;
    let (status, _) = api.text(Method::POST, "/apply", Some(("text/plain", REPORTS))).await?;
    ensure_eq!(status, 415);
    // JSON Schema's integers include 1.0, so the document's do too.
    let mut integral: Value = serde_json::from_str(&exported_json).context("export")?;
    integral["executor"][0]["job"][0]["timeout"] = json!(0.0);
    let (status, body) = api
        .text(Method::POST, "/apply?dryRun=false", Some(("application/json", &integral.to_string())))
        .await?;
    ensure_eq!(status, 200, "{body}");
    ensure_eq!(serde_json::from_str::<Value>(&body).context("plan")?["changes"], 0, "{body}");

    let pruned_doc = REPORTS
        .split("[[executor.job]]\nkey = \"archive\"")
        .next()
        .context("first part")?
        .replace("child_jobs = [\"archive\"]\n", "");
    let (status, body) =
        api.text(Method::POST, "/apply?prune=true&dryRun=true", Some((TOML, &pruned_doc))).await?;
    ensure_eq!(status, 200, "{body}");
    let plan: Value = serde_json::from_str(&body).context("plan")?;
    ensure_eq!(
        plan["jobs"][1],
        json!({"job": "reports-app/archive/archiver", "action": "delete", "diffs": []})
    );
    ensure_eq!(
        plan["jobs"][0]["diffs"],
        json!([{"field": "child_jobs", "from": "reports-app/archive/archiver", "to": ""}])
    );
    ensure_eq!(export_all(&api).await?, before);
    let (status, body) = api.text(Method::POST, "/apply?prune=true", Some((TOML, &pruned_doc))).await?;
    ensure_eq!(status, 200, "{body}");
    let all = api.expect(200, api.get("/jobs")).await?;
    let names: Vec<&str> =
        all["items"].as_array().context("items")?.iter().filter_map(|j| j["jobDesc"].as_str()).collect();
    ensure_eq!(names, vec!["daily report", "测试任务1"], "prune kept the other executor's job");
    app.stop().await;
    Ok(())
}

/// `xxl.job.apply.file` naming a folder: applied at start; two admins starting at once on the same
/// database apply it one after the other under the schedule lock, so the second finds nothing to change
/// and creates no duplicate.
async fn apply_file_at_start_once_for_two_admins(backend: Backend) -> TestResult {
    let dir = tempfile::tempdir().context("temp dir")?;
    std::fs::write(dir.path().join("reports.toml"), REPORTS).context("write")?;
    std::fs::write(dir.path().join("notes.txt"), "not a document").context("write")?;
    let db = TestDb::fresh(backend)?;
    let setting = format!("--xxl.job.apply.file={}", dir.path().display());
    let audit_dir = tempfile::tempdir().context("temp dir")?;
    let audit_file = audit_dir.path().join("audit.jsonl");
    let audit = format!("--xxl.job.audit.file={}", audit_file.display());
    // The schema first: admins creating it together is schema::admins_starting_together_on_a_new_database_all_start.
    TestApp::start(&db, &[]).await?.stop().await;
    let args = [setting.as_str(), audit.as_str()];
    let (first, second) = tokio::join!(TestApp::start(&db, &args), TestApp::start(&db, &args));
    let (first, second) = (first?, second?);
    let groups = first.app.db.all_groups().await.context("groups")?;
    let reports: Vec<_> = groups.iter().filter(|g| g.app_name == "reports-app").collect();
    ensure_eq!(reports.len(), 1);
    ensure_eq!(first.app.db.jobs_by_group(reports[0].id).await.context("jobs")?.len(), 2);
    second.stop().await;
    first.stop().await;
    // Each admin's apply is an audit event by the configuration; one of them created the jobs.
    let events: Vec<Value> = std::fs::read_to_string(&audit_file)
        .context("audit file")?
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|e: &Value| e["kind"] == "code.apply")
        .collect();
    ensure_eq!(events.len(), 2, "{events:?}");
    ensure!(
        events.iter().all(|e| e["actor"]["via"] == "configuration" && e["outcome"] == "success"),
        "{events:?}"
    );
    ensure!(events.iter().any(|e| e.to_string().contains("reports-app")), "{events:?}");
    std::fs::write(dir.path().join("broken.toml"), "[[executor]\n").context("write")?;
    let refused = TestApp::start(&db, &[&setting]).await;
    ensure!(
        refused.as_ref().err().is_some_and(|e| format!("{e:?}").contains("broken.toml")),
        "a bad file stops the start"
    );
    Ok(())
}

/// A role-0 user granted the sample executor exports only it, applies within it, and is refused the
/// executor not granted, a new executor, and a child job in a foreign executor.
async fn restricted_user_stays_within_granted_executors(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let admin_api = admin_api(&app).await?;
    let other = admin_api
        .expect(201, admin_api.post("/groups", json!({"appname": "other-app", "title": "Other"})))
        .await?;
    admin_api
        .expect(201, admin_api.post("/jobs", job_body(&other["id"], "secret", "hidden", "0 0 1 * * ?")))
        .await?;
    let mut admin = ConsoleClient::new(&app.base);
    admin.login("admin", "123456", false).await?;
    let added = admin
        .post(
            "/user/add",
            &[("username", "ops-user"), ("password", "secret-1"), ("role", "0"), ("permission", "1")],
        )
        .await?;
    ensure_eq!(added["code"], 200, "{added}");
    let mut ops = ConsoleClient::new(&app.base);
    ensure_eq!(ops.login("ops-user", "secret-1", false).await?["code"], 200);
    let api = RestClient::issued_by(&app.base, &ops, None).await?;

    let mine = export_all(&api).await?;
    ensure!(mine.contains("xxl-job-executor-sample") && !mine.contains("other-app"), "{mine}");
    ensure_eq!(api.text(Method::GET, "/export?group=other-app", None).await?.0, 403);
    ensure_eq!(api.text(Method::GET, "/export?group=missing-app", None).await?.0, 404);
    let everything = export_all(&admin_api).await?;

    let foreign = "[[executor]]\napp_name = \"other-app\"\ntitle = \"Other\"\n";
    let (status, body) = api.text(Method::POST, "/apply", Some((TOML, foreign))).await?;
    ensure_eq!(status, 403, "{body}");
    ensure!(body.contains("executor \\\"other-app\\\""), "{body}");
    let (status, body) = api
        .text(
            Method::POST,
            "/apply",
            Some((TOML, "[[executor]]\napp_name = \"brand-new-app\"\ntitle = \"New\"\n")),
        )
        .await?;
    ensure_eq!(status, 403, "only administrators create executors: {body}");
    let with_foreign_child =
        mine.replace("trigger_status = 0", "trigger_status = 0\nchild_jobs = [\"other-app/secret/hidden\"]");
    let (status, body) = api.text(Method::POST, "/apply", Some((TOML, &with_foreign_child))).await?;
    ensure_eq!(status, 403, "{body}");
    // A workflow in an executor not granted, or running a job of one.
    for app in ["other-app", "xxl-job-executor-sample"] {
        let workflow = format!(
            "[[workflow]]\nname = \"w\"\nexecutor = \"{app}\"\n[[workflow.node]]\nname = \"a\"\njob = \"other-app/secret/hidden\"\n"
        );
        let (status, body) = api.text(Method::POST, "/apply", Some((TOML, &workflow))).await?;
        ensure!(status == 403 && body.contains("workflow \\\"w\\\""), "{app}: {status} {body}");
    }
    ensure_eq!(export_all(&admin_api).await?, everything, "refused applies changed nothing");

    // The console's export and upload: the same limits.
    let foreign_export = ops.get(&format!("/jobinfo/export?jobGroup={}", other["id"])).await?;
    ensure_eq!(foreign_export.json()?["code"], 500, "{}", foreign_export.body);
    let own_export = ops.get("/jobinfo/export?jobGroup=1").await?;
    ensure_eq!(
        own_export.headers.get("content-disposition").and_then(|v| v.to_str().ok()),
        Some("attachment; filename=\"xxl-job-executor-sample.toml\"")
    );
    ensure_eq!(own_export.body, mine);
    let upload =
        ops.post("/jobinfo/apply", &[("document", foreign), ("format", "toml"), ("dryRun", "true")]).await?;
    ensure_eq!(upload["code"], 500, "{upload}");
    ensure!(upload["msg"].as_str().is_some_and(|m| m.contains("other-app")), "{upload}");

    let changed = mine.replace("author = \"XXL\"", "author = \"ops-user\"");
    let (status, body) = api.text(Method::POST, "/apply", Some((TOML, &changed))).await?;
    ensure_eq!(status, 200, "{body}");
    ensure!(body.contains("\"field\":\"author\""), "{body}");
    ensure_eq!(export_all(&api).await?, changed);
    app.stop().await;
    Ok(())
}

/// The worked example of docs/workflows.md as a document, with its executor and jobs.
const EXAMPLE: &str = include_str!("../../docs/examples/workflow.toml");

/// The version numbers of the workflow `name`, newest first, read on a connection of their own.
async fn versions(db: &TestDb, name: &str) -> Result<Vec<i32>, Failed> {
    let store = db.open().await?;
    let workflow =
        store.load_workflow_by_name(name).await.context("workflow")?.context("no such workflow")?;
    let versions = store.workflow_versions(workflow.id).await.context("versions")?;
    store.close().await;
    Ok(versions.iter().map(|v| v.version).collect())
}

/// The example document applied by the command to an empty database, exported, applied to another empty
/// database and exported again: the same document. Applied again it makes no version; a changed node
/// makes exactly one, which a dry run only plans; a node naming a job nothing has is refused, naming it,
/// and writes nothing.
async fn workflows_round_trip_version_only_when_changed_and_refuse_unknown_jobs(
    backend: Backend,
) -> TestResult {
    let dir = tempfile::tempdir().context("temp dir")?;
    std::fs::write(dir.path().join("example.toml"), EXAMPLE).context("example.toml")?;
    let a = TestDb::fresh(backend)?;
    let applied = cli(&a, &["apply", "-f", "example.toml"], dir.path())?;
    let out = text(&applied.stdout);
    ensure_eq!(applied.status.code(), Some(0), "{out}{}", text(&applied.stderr));
    ensure!(out.contains("+ workflow daily-sales: create\n7 change(s)\napplied"), "{out}");
    let exported = cli(&a, &["export", "-o", "a.toml"], dir.path())?;
    ensure_eq!(exported.status.code(), Some(0), "{}", text(&exported.stderr));
    let document = std::fs::read_to_string(dir.path().join("a.toml")).context("a.toml")?;
    ensure!(
        document.contains("[[workflow]]\nname = \"daily-sales\"\nexecutor = \"sales-app\""),
        "{document}"
    );
    ensure!(
        document.contains("job = \"sales-app/extract sales/salesExtract\""),
        "by natural key: {document}"
    );

    let b = TestDb::fresh(backend)?;
    let applied = cli(&b, &["apply", "-f", "a.toml"], dir.path())?;
    ensure_eq!(applied.status.code(), Some(0), "{}", text(&applied.stderr));
    let again = cli(&b, &["export", "-o", "b.toml"], dir.path())?;
    ensure_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    ensure_eq!(std::fs::read_to_string(dir.path().join("b.toml")).context("b.toml")?, document);
    let second = cli(&b, &["apply", "-f", "a.toml"], dir.path())?;
    let out = text(&second.stdout);
    ensure!(out.contains("= workflow daily-sales: unchanged\n0 change(s)"), "{out}");
    ensure_eq!(versions(&b, "daily-sales").await?, vec![1], "an equal definition makes no version");

    std::fs::write(
        dir.path().join("c.toml"),
        document.replace("timeout_seconds = 1800", "timeout_seconds = 900"),
    )
    .context("c.toml")?;
    let planned = cli(&b, &["apply", "-f", "c.toml", "--dry-run"], dir.path())?;
    let out = text(&planned.stdout);
    ensure_eq!(planned.status.code(), Some(0), "{}", text(&planned.stderr));
    ensure!(
        out.contains(
            "~ workflow daily-sales: update\n    node.load.timeout_seconds: \"1800\" -> \"900\"\n1 change(s)"
        ),
        "{out}"
    );
    ensure_eq!(versions(&b, "daily-sales").await?, vec![1], "a dry run writes nothing");
    for round in [1, 2] {
        let changed = cli(&b, &["apply", "-f", "c.toml"], dir.path())?;
        ensure_eq!(changed.status.code(), Some(0), "{}", text(&changed.stderr));
        ensure_eq!(versions(&b, "daily-sales").await?, vec![2, 1], "round {round}: one new version");
    }

    let current = cli(&b, &["export", "-o", "current.toml"], dir.path())?;
    ensure_eq!(current.status.code(), Some(0));
    let current = std::fs::read_to_string(dir.path().join("current.toml")).context("current.toml")?;
    // Beside other changes, which are not written either.
    let unknown = current
        .replace("job = \"sales-app/load sales/salesLoad\"", "job = \"sales-app/load/nobody\"")
        .replace("timeout_seconds = 900", "timeout_seconds = 60")
        .replace(
            "description = \"load sales\"\nauthor = \"data\"",
            "description = \"load sales\"\nauthor = \"ops\"",
        );
    std::fs::write(dir.path().join("unknown.toml"), unknown).context("unknown.toml")?;
    let refused = cli(&b, &["apply", "-f", "unknown.toml"], dir.path())?;
    let err = text(&refused.stderr);
    ensure_eq!(refused.status.code(), Some(1), "{err}");
    ensure!(
        err.starts_with("xxl-job-admin apply: workflow \"daily-sales\" (line ")
            && err.contains(
                "): node \"load\": job: \"sales-app/load/nobody\" names no job of the file or the database"
            ),
        "{err}"
    );
    let after = cli(&b, &["export", "-o", "after.toml"], dir.path())?;
    ensure_eq!(after.status.code(), Some(0));
    ensure_eq!(std::fs::read_to_string(dir.path().join("after.toml")).context("after.toml")?, current);
    ensure_eq!(versions(&b, "daily-sales").await?, vec![2, 1]);
    Ok(())
}

/// A workflow waiting for an approval, beside the example's.
const REVIEW: &str = r#"
[[workflow]]
name = "sales-review"
executor = "sales-app"

[[workflow.node]]
name = "review"
approvers = ["admin"]
"#;

/// The workflows over the REST API, by name, as `(name, triggerStatus, triggerNextTime)`.
async fn workflow_states(api: &RestClient) -> Result<Vec<(String, i64, i64)>, Failed> {
    let list = api.expect(200, api.get("/workflows")).await?;
    let items = list["items"].as_array().context("items")?;
    Ok(items
        .iter()
        .map(|w| {
            let number = |field: &str| w[field].as_i64().unwrap_or(-1);
            (w["name"].as_str().unwrap_or("").to_string(), number("triggerStatus"), number("triggerNextTime"))
        })
        .collect())
}

/// Over the REST API: the plan lists workflows beside jobs; a workflow is scheduled and stopped as its
/// `trigger_status` says; prune deletes an idle workflow of the document's executor and refuses, naming
/// it, one with a run not over, in a dry run too, changing nothing.
async fn workflows_follow_trigger_status_and_prune_spares_a_busy_one(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let api = admin_api(&app).await?;
    let running = format!("{EXAMPLE}{REVIEW}").replace("# trigger_status = 1 ", "trigger_status = 1 #");
    let (status, body) = api.text(Method::POST, "/apply?dryRun=true", Some((TOML, &running))).await?;
    ensure_eq!(status, 200, "{body}");
    let plan: Value = serde_json::from_str(&body).context("plan")?;
    ensure_eq!(
        (plan["changes"].clone(), plan["workflows"].clone()),
        (
            json!(8),
            json!([{"workflow": "daily-sales", "action": "create", "diffs": []},
                   {"workflow": "sales-review", "action": "create", "diffs": []}])
        )
    );
    let (status, body) = api.text(Method::POST, "/apply", Some((TOML, &running))).await?;
    ensure_eq!(status, 200, "{body}");
    // Exported as JSON and applied back: nothing to change.
    let (status, exported) = api.text(Method::GET, "/export?group=sales-app", None).await?;
    ensure_eq!(status, 200, "{exported}");
    ensure_eq!(
        serde_json::from_str::<Value>(&exported).context("export")?["workflow"][0]["node"][5]["branch"][0]
            ["to"],
        json!(["notify_ok"])
    );
    let (status, body) = api.text(Method::POST, "/apply", Some(("application/json", &exported))).await?;
    ensure_eq!(
        (status, serde_json::from_str::<Value>(&body).context("plan")?["changes"].clone()),
        (200, json!(0)),
        "{body}"
    );
    let states = workflow_states(&api).await?;
    ensure!(
        states.len() == 2
            && states[0].0 == "daily-sales"
            && states[0].1 == 1
            && states[0].2 > 0
            && states[1] == ("sales-review".to_string(), 0, 0),
        "{states:?}"
    );
    // Stopped by the file that takes its schedule away: no "stop it first".
    let unscheduled = running.replace("trigger_status = 1 #", "trigger_status = 0 #").replace(
        "schedule = { type = \"CRON\", conf = \"0 30 2 * * ?\", misfire = \"FIRE_ONCE_NOW\" }",
        "schedule = { type = \"NONE\" }",
    );
    let (status, body) = api.text(Method::POST, "/apply", Some((TOML, &unscheduled))).await?;
    ensure_eq!(status, 200, "{body}");
    ensure_eq!(workflow_states(&api).await?[0], ("daily-sales".to_string(), 0, 0));
    let (status, body) = api.text(Method::POST, "/apply", Some((TOML, &running))).await?;
    ensure_eq!(status, 200, "{body}");
    ensure_eq!(workflow_states(&api).await?[0].1, 1, "scheduled again");
    let stopped = running.replace("trigger_status = 1 #", "trigger_status = 0 #");
    let (status, body) = api.text(Method::POST, "/apply", Some((TOML, &stopped))).await?;
    ensure_eq!(status, 200, "{body}");
    let plan: Value = serde_json::from_str(&body).context("plan")?;
    ensure_eq!(
        plan["workflows"][0]["diffs"],
        json!([{"field": "trigger_status", "from": "1", "to": "0"}]),
        "{plan}"
    );
    ensure_eq!(workflow_states(&api).await?[0], ("daily-sales".to_string(), 0, 0));

    // A run of sales-review not over: prune would delete it, and is refused.
    let review =
        app.app.db.load_workflow_by_name("sales-review").await.context("review")?.context("review")?;
    let run = NewRun {
        workflow_id: review.id,
        version: 1,
        state: "paused".into(),
        trigger_type: "MANUAL".into(),
        logical_time: 0,
        params: "{}".into(),
        started_by: Some("admin".into()),
        parent_run_id: None,
        parent_node: None,
        backfill_id: None,
        add_time: 0,
        deadline_time: None,
    };
    let run_id = app.app.db.insert_run(&run).await.context("run")?.context("run id")?;
    let before = export_all(&api).await?;
    let without_review = stopped.replace(REVIEW, "");
    for path in ["/apply?prune=true&dryRun=true", "/apply?prune=true"] {
        refused_with(
            &api,
            path,
            409,
            &without_review,
            "workflow \"sales-review\": 1 run(s) not finished (queued, running, paused or stopping)",
            &before,
        )
        .await?;
    }
    // daily-sales is idle: prune deletes it, its jobs stay (the document lists them).
    let only_review = format!("{}{REVIEW}", EXAMPLE.split("[[workflow]]").next().context("executors")?);
    let (status, body) = api.text(Method::POST, "/apply?prune=true", Some((TOML, &only_review))).await?;
    ensure_eq!(status, 200, "{body}");
    let plan: Value = serde_json::from_str(&body).context("plan")?;
    ensure_eq!(
        (plan["changes"].clone(), plan["workflows"][1].clone()),
        (json!(1), json!({"workflow": "daily-sales", "action": "delete", "diffs": []})),
        "{plan}"
    );
    ensure_eq!(workflow_states(&api).await?, vec![("sales-review".to_string(), 0, 0)]);
    let over = RunChange { state: "stopped".into(), end_time: Some(1), ..RunChange::default() };
    ensure!(app.app.db.change_run_state(run_id, 0, &over).await.context("run state")?, "the run ended");
    let (status, body) = api.text(Method::POST, "/apply?prune=true", Some((TOML, &without_review))).await?;
    ensure_eq!(status, 200, "{body}");
    ensure_eq!(workflow_states(&api).await?.len(), 1, "the example's workflow back, the review gone");
    app.stop().await;
    Ok(())
}
