//! The log manager: the log list and detail, the rolling log and the kill through the executor, clearing.

use crate::support::console::{
    admin, en, ensure_page, fail, is_error_page, keys_of, msg, ok, sorted, JOB_KEYS,
};
use crate::support::fixtures::{insert, job, json_date, local_ms, log, manual_group};
use crate::support::{
    eventually, now_ms, Backend, Behaviour, Context, FakeExecutor, TestApp, TestDb, LOG_CONTENT,
};
use crate::{ensure, ensure_eq, TestResult};
use serde_json::json;
use std::time::Duration;
use xxl_job_admin::domain::codes::AlarmStatus;

/// A manual trigger, then the log list, the rolling log, kill, the chart and clearing, against an in-test
/// executor over HTTP.
pub(super) async fn log_endpoints_reach_the_executor(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let client = admin(&app).await?;
    let executor = FakeExecutor::start(Behaviour::default()).await?;
    let group = manual_group(&app.app.db, "log-app", &[&executor.address]).await?;
    let id = insert(&app.app.db, &job(group)).await?.to_string();
    let (group, job_id) = (group.to_string(), id.clone());

    let jobs = client.post("/joblog/getJobsByGroup", &[("jobGroup", &group)]).await?;
    ensure_eq!(jobs["content"][0]["id"].to_string(), job_id, "{jobs}");
    ensure_eq!(client.post("/jobinfo/trigger", &[("id", &id), ("executorParam", "p=1")]).await?["code"], 200);
    let log = eventually(Duration::from_secs(10), "a triggered log", || async {
        let page = client
            .post("/joblog/pageList", &[("jobGroup", &group), ("jobId", &job_id), ("logStatus", "-1")])
            .await
            .ok()?;
        (page["data"][0]["triggerCode"] == 200).then(|| page["data"][0].clone())
    })
    .await?;
    ensure_eq!(log["executorParam"], "p=1");
    ensure_eq!(log["executorAddress"], executor.address.as_str());
    let log_id = log["id"].to_string();
    let running = client
        .post("/joblog/pageList", &[("jobGroup", &group), ("jobId", &job_id), ("logStatus", "3")])
        .await?;
    ensure_eq!(running["recordsTotal"], 1, "running filter: {running}");

    let lines = client.post("/joblog/logDetailCat", &[("logId", &log_id), ("fromLineNum", "1")]).await?;
    ensure_eq!(lines["code"], 200, "{lines}");
    ensure_eq!(lines["content"]["fromLineNum"], 1);
    ensure_eq!(lines["content"]["end"], false);
    let escaped =
        LOG_CONTENT.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('\'', "&#39;");
    ensure_eq!(lines["content"]["logContent"], escaped.as_str());
    let asked = executor.calls_to("/log");
    ensure_eq!(asked[0].body["logId"].to_string(), log_id);
    ensure_eq!(asked[0].body["fromLineNum"], 1);
    let page = client.get(&format!("/joblog/logDetailPage?id={log_id}")).await?;
    ensure_eq!(page.status, 200);

    let killed = client.post("/joblog/logKill", &[("id", &log_id)]).await?;
    ensure_eq!(killed["code"], 200, "{killed}");
    ensure_eq!(executor.calls_to("/kill")[0].body["jobId"].to_string(), job_id);
    let stored = app.app.db.load_log(log_id.parse().context("id")?).await.context("load")?.context("log")?;
    ensure_eq!(stored.handle_code, 500, "a killed log ends as failed");
    let failed = client
        .post("/joblog/pageList", &[("jobGroup", &group), ("jobId", &job_id), ("logStatus", "2")])
        .await?;
    ensure_eq!(failed["recordsTotal"], 1, "fail filter: {failed}");

    let today = chrono::Local::now().format("%Y-%m-%d").to_string();
    let chart = client
        .post(
            "/chartInfo",
            &[("startDate", &format!("{today} 00:00:00")), ("endDate", &format!("{today} 23:59:59"))],
        )
        .await?;
    ensure_eq!(chart["code"], 200, "{chart}");
    for key in
        ["triggerDayList", "triggerDayCountRunningList", "triggerDayCountSucList", "triggerDayCountFailList"]
    {
        ensure!(chart["content"][key].is_array(), "{key} in {chart}");
    }

    let bad_type =
        client.post("/joblog/clearLog", &[("jobGroup", &group), ("jobId", &job_id), ("type", "10")]).await?;
    ensure_eq!(bad_type["code"], 500);
    let kept =
        client.post("/joblog/clearLog", &[("jobGroup", &group), ("jobId", &job_id), ("type", "1")]).await?;
    ensure_eq!(kept["code"], 200);
    ensure!(
        app.app.db.load_log(log_id.parse().context("id")?).await.context("load")?.is_some(),
        "a new log survives type 1"
    );
    let cleared =
        client.post("/joblog/clearLog", &[("jobGroup", &group), ("jobId", &job_id), ("type", "9")]).await?;
    ensure_eq!(cleared["code"], 200);
    ensure!(
        app.app.db.load_log(log_id.parse().context("id")?).await.context("load")?.is_none(),
        "type 9 clears all"
    );
    app.stop().await;
    Ok(())
}

pub(super) async fn log_list_detail_kill_and_clear(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let client = admin(&app).await?;
    let group = manual_group(store, "log-list-app", &["http://127.0.0.1:1/"]).await?;
    let (first_job, second_job) = (insert(store, &job(group)).await?, insert(store, &job(group)).await?);
    // Recent (the lost-result monitor waits ten minutes) and on whole seconds.
    use chrono::Timelike;
    let t0 = local_ms(chrono::Local::now().naive_local().with_nanosecond(0).context("time")?) - 240_000;
    let dead = "http://127.0.0.1:1/";
    let success = log(store, group, first_job, t0, 200, 200, dead).await?;
    let running = log(store, group, first_job, t0 + 30_000, 200, 0, dead).await?;
    let trigger_failed = log(store, group, first_job, t0 + 60_000, 500, 0, dead).await?;
    let handle_failed = log(store, group, first_job, t0 + 90_000, 200, 500, dead).await?;
    let not_sent = log(store, group, second_job, t0 + 120_000, 0, 0, "").await?;
    let elsewhere = log(store, 1, 1, t0, 200, 200, dead).await?;
    // The fail monitor alarms the two failures (a blank e-mail list counts as sent): wait for it to settle.
    for id in [trigger_failed, handle_failed] {
        let _ = store.update_alarm_status(id, AlarmStatus::New, AlarmStatus::Sent).await;
        eventually(Duration::from_secs(15), "alarm status settled", || async move {
            (store.load_log(id).await.ok()??.alarm_status == AlarmStatus::Sent).then_some(())
        })
        .await?;
    }
    let (g, j1, j2) = (group.to_string(), first_job.to_string(), second_job.to_string());
    let text = |ms: i64| {
        chrono::DateTime::from_timestamp_millis(ms)
            .map(|t| t.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M:%S").to_string())
            .unwrap_or_default()
    };
    let page = |job_id: &str, status: &str, extra: &[(&'static str, &str)]| {
        let mut form =
            vec![("jobGroup", g.clone()), ("jobId", job_id.to_string()), ("logStatus", status.to_string())];
        form.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
        let client = &client;
        async move {
            let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
            client.post("/joblog/pageList", &pairs).await
        }
    };
    // Newest trigger first; paging; status filters.
    ensure_page(
        &page("0", "-1", &[]).await?,
        5,
        &[not_sent, handle_failed, trigger_failed, running, success],
        "the group's logs",
    )?;
    ensure_page(
        &page("0", "-1", &[("start", "1"), ("length", "2")]).await?,
        5,
        &[handle_failed, trigger_failed],
        "paging",
    )?;
    ensure_page(&page("0", "1", &[]).await?, 1, &[success], "success")?;
    ensure_page(&page("0", "2", &[]).await?, 2, &[handle_failed, trigger_failed], "failure")?;
    ensure_page(&page("0", "3", &[]).await?, 1, &[running], "running")?;
    ensure_page(
        &page("0", "7", &[]).await?,
        5,
        &[not_sent, handle_failed, trigger_failed, running, success],
        "unknown status = all",
    )?;
    ensure_page(
        &page(&j1, "-1", &[]).await?,
        4,
        &[handle_failed, trigger_failed, running, success],
        "one job",
    )?;
    ensure_page(&page(&j2, "-1", &[]).await?, 1, &[not_sent], "the other job")?;
    // filterTime: inclusive on both ends; a malformed range or side is not applied.
    let range = format!("{} - {}", text(t0 + 30_000), text(t0 + 90_000));
    ensure_page(
        &page("0", "-1", &[("filterTime", &range)]).await?,
        3,
        &[handle_failed, trigger_failed, running],
        "inclusive range",
    )?;
    let open_start = format!("junk - {}", text(t0 + 30_000));
    ensure_page(&page("0", "-1", &[("filterTime", &open_start)]).await?, 2, &[running, success], "end only")?;
    ensure_eq!(page("0", "-1", &[("filterTime", "garbage")]).await?["recordsTotal"], 5);
    let admin_all =
        client.post("/joblog/pageList", &[("jobGroup", "0"), ("jobId", "0"), ("logStatus", "-1")]).await?;
    ensure_eq!(admin_all["recordsTotal"], 6, "an admin may list every group");
    ensure_eq!(
        client.post("/joblog/pageList", &[("jobGroup", &g), ("jobId", "0")]).await?["code"],
        500,
        "logStatus is required"
    );

    // The full log row.
    let row = page("0", "2", &[("length", "1")]).await?["data"][0].clone();
    let expected = json!({
        "id": handle_failed, "jobGroup": group, "jobId": first_job, "executorAddress": dead,
        "executorHandler": "demoJobHandler", "executorParam": format!("param {handle_failed}"), "executorShardingParam": null,
        "executorFailRetryCount": 0, "triggerTime": json_date(t0 + 90_000), "triggerCode": 200,
        "triggerMsg": format!("trigger msg of {handle_failed}"), "handleTime": json_date(t0 + 91_000), "handleCode": 500,
        "handleMsg": format!("handle msg of {handle_failed}"), "alarmStatus": 2,
    });
    ensure_eq!(row, expected, "the log row");

    // getJobsByGroup: the group's full job objects.
    let by_group = client.post("/joblog/getJobsByGroup", &[("jobGroup", &g)]).await?;
    ensure_eq!((by_group["code"].clone(), by_group["msg"].clone()), (json!(200), json!(null)));
    let mut listed: Vec<serde_json::Value> = by_group["content"].as_array().cloned().context("a list")?;
    listed.sort_by_key(|j| j["id"].as_i64());
    let jobs_page = client.post("/jobinfo/pageList", &[("jobGroup", &g), ("triggerStatus", "-1")]).await?;
    let mut paged: Vec<serde_json::Value> = jobs_page["data"].as_array().cloned().context("rows")?;
    paged.reverse();
    ensure_eq!(listed, paged, "the same job objects as the job list");
    ensure_eq!(keys_of(&listed[0]), sorted(&JOB_KEYS));
    ensure_eq!(client.post("/joblog/getJobsByGroup", &[("jobGroup", "9999")]).await?, ok(json!([])));

    // Unknown or unfit logs.
    ensure_eq!(
        client.post("/joblog/logDetailCat", &[("logId", "999999"), ("fromLineNum", "1")]).await?,
        fail(msg(&["joblog_logid_unvalid"]))
    );
    let unreachable =
        client.post("/joblog/logDetailCat", &[("logId", &running.to_string()), ("fromLineNum", "1")]).await?;
    ensure_eq!(
        (unreachable["code"].clone(), unreachable["content"].clone()),
        (json!(500), json!(null)),
        "executor down: {unreachable}"
    );
    ensure_eq!(
        client.post("/joblog/logDetailCat", &[("logId", "1")]).await?["code"],
        500,
        "fromLineNum is required"
    );
    ensure_eq!(client.post("/joblog/logKill", &[("id", "999999")]).await?["code"], 500);
    ensure_eq!(
        client.post("/joblog/logKill", &[("id", &not_sent.to_string())]).await?,
        fail(msg(&["joblog_kill_log_limit"]))
    );
    let no_address = client
        .post("/joblog/logDetailCat", &[("logId", &not_sent.to_string()), ("fromLineNum", "1")])
        .await?;
    ensure_eq!(
        (no_address["code"].clone(), no_address["content"].clone()),
        (json!(500), json!(null)),
        "no executor address: {no_address}"
    );
    let orphan = log(store, group, 77_777, t0, 200, 0, dead).await?;
    ensure_eq!(
        client.post("/joblog/logKill", &[("id", &orphan.to_string())]).await?,
        fail(msg(&["jobinfo_glue_jobid_unvalid"]))
    );
    let down = client.post("/joblog/logKill", &[("id", &running.to_string())]).await?;
    ensure_eq!(down["code"], 500, "executor down: {down}");
    ensure_eq!(
        store.load_log(running).await.context("load")?.context("log")?.handle_code,
        0,
        "a failed kill changes nothing"
    );
    let detail = client.get(&format!("/joblog/logDetailPage?id={running}")).await?;
    ensure_eq!(detail.status, 200);
    let missing = client.get("/joblog/logDetailPage?id=999999").await?;
    ensure!(is_error_page(&missing, en().get("joblog_logid_unvalid")), "{}", missing.body);
    let unknown_job = client.get("/joblog?jobId=99999").await?;
    ensure!(
        is_error_page(&unknown_job, &msg(&["jobinfo_field_id", "system_unvalid"])),
        "{}",
        unknown_job.body
    );
    ensure_eq!(client.get(&format!("/joblog?jobId={first_job}")).await?.status, 200);

    // clearLog: types 1–9 only; scoped to the group and job; nothing recent goes for types 1–8.
    for kind in ["0", "10", "-1"] {
        ensure_eq!(
            client.post("/joblog/clearLog", &[("jobGroup", &g), ("jobId", "0"), ("type", kind)]).await?,
            fail(msg(&["joblog_clean_type_unvalid"])),
            "type {kind}"
        );
    }
    ensure_eq!(
        client.post("/joblog/clearLog", &[("jobGroup", &g), ("jobId", "0")]).await?["code"],
        500,
        "type is required"
    );
    for kind in 1..=8 {
        let reply = client
            .post("/joblog/clearLog", &[("jobGroup", &g), ("jobId", "0"), ("type", &kind.to_string())])
            .await?;
        ensure_eq!(reply, ok(json!(null)), "type {kind}");
    }
    ensure_eq!(
        page("0", "-1", &[]).await?["recordsTotal"],
        6,
        "recent logs survive types 1–8 (the orphan included)"
    );
    ensure_eq!(
        client.post("/joblog/clearLog", &[("jobGroup", &g), ("jobId", &j2), ("type", "9")]).await?,
        ok(json!(null))
    );
    ensure!(store.load_log(not_sent).await.context("load")?.is_none(), "the job's log is gone");
    ensure_eq!(page("0", "-1", &[]).await?["recordsTotal"], 5, "the other job's logs stay");
    ensure_eq!(
        client.post("/joblog/clearLog", &[("jobGroup", &g), ("jobId", "0"), ("type", "9")]).await?,
        ok(json!(null))
    );
    ensure_eq!(page("0", "-1", &[]).await?["recordsTotal"], 0);
    ensure!(store.load_log(elsewhere).await.context("load")?.is_some(), "another group's log stays");
    app.stop().await;
    Ok(())
}

/// The rolling log's and the kill's answers against an in-test executor, and what a manual run sends.
pub(super) async fn rolling_log_kill_and_manual_run(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let client = admin(&app).await?;
    let executor = FakeExecutor::start(Behaviour::default()).await?;
    let group = manual_group(store, "rolling-app", &[&executor.address]).await?;
    let job_id = insert(store, &job(group)).await?;
    let at = now_ms() / 1000 * 1000 - 10_000;
    let finished = log(store, group, job_id, at, 200, 200, &executor.address).await?.to_string();
    let running = log(store, group, job_id, at, 200, 0, &executor.address).await?.to_string();
    let escaped =
        LOG_CONTENT.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('\'', "&#39;");
    let cat = |log_id: &str, from: &'static str| {
        let (client, log_id) = (&client, log_id.to_string());
        async move { client.post("/joblog/logDetailCat", &[("logId", &log_id), ("fromLineNum", from)]).await }
    };
    let lines = |from: i64, end: bool| {
        ok(json!({"fromLineNum": from, "toLineNum": 2, "logContent": escaped, "end": end}))
    };
    ensure_eq!(cat(&finished, "1").await?, lines(1, false), "new lines");
    ensure_eq!(cat(&finished, "3").await?, lines(3, true), "nothing new from a finished log: the end");
    ensure_eq!(cat(&running, "3").await?, lines(3, false), "nothing new yet from a running log");
    let asked = executor.calls_to("/log");
    ensure_eq!(asked.len(), 3);
    ensure_eq!(
        (
            asked[0].body["logId"].to_string(),
            asked[0].body["fromLineNum"].clone(),
            asked[0].body["logDateTim"].clone()
        ),
        (finished.clone(), json!(1), json!(at))
    );
    ensure_eq!(asked[0].token.as_deref(), Some(crate::support::TOKEN), "the access token goes along");

    ensure_eq!(
        client.post("/joblog/logKill", &[("id", &running)]).await?,
        ok(json!(null)),
        "the executor's (absent) message is the content"
    );
    let kill = executor.calls_to("/kill");
    ensure_eq!(kill.len(), 1);
    ensure_eq!(kill[0].body["jobId"], job_id);
    let killed = store.load_log(running.parse().context("id")?).await.context("load")?.context("log")?;
    let by_hand = format!("{}:", en().get("joblog_kill_log_byman"));
    ensure_eq!((killed.handle_code, killed.handle_msg.as_deref()), (500, Some(by_hand.as_str())));
    ensure!(killed.handle_time.is_some(), "the kill time is recorded");

    // A manual run: the parameter replaces the job's own, an absent one is empty; addressList targets.
    ensure_eq!(
        client.post("/jobinfo/trigger", &[("id", &job_id.to_string()), ("executorParam", "once=1")]).await?,
        ok(json!(null))
    );
    ensure_eq!(
        client.post(&format!("/jobinfo/trigger?id={job_id}&addressList={}", executor.address), &[]).await?,
        ok(json!(null))
    );
    let runs = eventually(Duration::from_secs(10), "two runs", || async {
        let runs = executor.calls_to("/run");
        (runs.len() >= 2).then_some(runs)
    })
    .await?;
    let mut params: Vec<String> =
        runs.iter().map(|r| r.body["executorParams"].as_str().unwrap_or("?").to_string()).collect();
    params.sort();
    ensure_eq!(params, vec![String::new(), "once=1".to_string()], "the stored parameter \"p\" is never used");
    let triggered = eventually(Duration::from_secs(10), "two manual logs", || async {
        let page = client
            .post(
                "/joblog/pageList",
                &[("jobGroup", &group.to_string()), ("jobId", &job_id.to_string()), ("logStatus", "3")],
            )
            .await
            .ok()?;
        (page["recordsTotal"] == 2).then_some(page)
    })
    .await?;
    for row in triggered["data"].as_array().context("rows")? {
        ensure_eq!(row["executorAddress"], executor.address.as_str());
        ensure!(
            row["triggerMsg"].as_str().is_some_and(|m| m.contains(en().get("jobconf_trigger_type_manual"))),
            "{row}"
        );
    }
    app.stop().await;
    Ok(())
}

/// `/joblog/clearLog` types 1–4 by age and 5–8 by count, within the group and job scope.
pub(super) async fn clear_log_by_age_and_count(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    // Without the retention cleaner, which would take the old logs first.
    let app = TestApp::start(&db, &["--xxl.job.logretentiondays=-1"]).await?;
    let store = &app.app.db;
    let client = admin(&app).await?;
    let group = manual_group(store, "clear-app", &["http://127.0.0.1:1/"]).await?;
    let job_id = insert(store, &job(group)).await?;
    let day = 86_400_000;
    let now = now_ms();
    let mut aged = Vec::new();
    for days in [400, 200, 100, 40, 20] {
        aged.push((days, store.insert_log(group, job_id, now - days * day).await.context("log")?));
    }
    let elsewhere = store.insert_log(1, 1, now - 400 * day).await.context("log")?;
    let g = group.to_string();
    let remaining = |expected: &'static [i64]| {
        let aged = aged.clone();
        async move {
            let mut left = Vec::new();
            for (days, id) in &aged {
                if store.load_log(*id).await.context("load")?.is_some() {
                    left.push(*days);
                }
            }
            ensure_eq!(left, expected.to_vec(), "logs left, by age in days");
            Ok::<(), libtest_mimic::Failed>(())
        }
    };
    let clear = |kind: &'static str| {
        let (client, g) = (&client, g.clone());
        async move {
            client.post("/joblog/clearLog", &[("jobGroup", g.as_str()), ("jobId", "0"), ("type", kind)]).await
        }
    };
    for (kind, left) in
        [("4", &[200, 100, 40, 20][..]), ("3", &[100, 40, 20][..]), ("2", &[40, 20][..]), ("1", &[20][..])]
    {
        ensure_eq!(clear(kind).await?, ok(json!(null)), "type {kind}");
        remaining(left).await?;
    }
    ensure!(store.load_log(elsewhere).await.context("load")?.is_some(), "another group's old log stays");

    // By count: 1 000 newer logs, so type 5 takes exactly the older one; 6–8 keep everything.
    let batch: Vec<(i32, i32)> = vec![(group, job_id); 1_000];
    store.insert_logs(&batch, now - 60_000).await.context("batch")?;
    for kind in ["8", "7", "6"] {
        ensure_eq!(clear(kind).await?, ok(json!(null)), "type {kind}");
        remaining(&[20]).await?;
    }
    let other_job =
        client.post("/joblog/clearLog", &[("jobGroup", g.as_str()), ("jobId", "1"), ("type", "5")]).await?;
    ensure_eq!(other_job, ok(json!(null)));
    remaining(&[20]).await?;
    ensure_eq!(clear("5").await?, ok(json!(null)));
    remaining(&[]).await?;
    let left = client
        .post(
            "/joblog/pageList",
            &[("jobGroup", g.as_str()), ("jobId", "0"), ("logStatus", "-1"), ("length", "1")],
        )
        .await?;
    ensure_eq!(left["recordsTotal"], 1_000, "the newest 1 000 are kept");
    app.stop().await;
    Ok(())
}
