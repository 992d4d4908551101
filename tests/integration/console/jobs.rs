//! The job manager: the job lifecycle, its list, its messages and operations with 2.4.2's JSON.

use crate::support::console::{
    admin, en, ensure_page, fail, form_with, is_error_page, job_form, keys_of, msg, ok, sorted, FormCase,
    JOB_KEYS,
};
use crate::support::fixtures::{insert, job, json_date, local, local_ms, manual_group};
use crate::support::{now_ms, Backend, Context, TestApp, TestDb};
use crate::{ensure, ensure_eq, TestResult};
use serde_json::json;
use xxl_job_admin::domain::codes::TriggerStatus;

pub(super) async fn job_lifecycle(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let client = admin(&app).await?;
    let form = [
        ("jobGroup", "1"),
        ("jobDesc", "nightly <b>report</b>"),
        ("author", "ops"),
        ("alarmEmail", ""),
        ("scheduleType", "CRON"),
        ("scheduleConf", "0 0 2 * * ?"),
        ("misfireStrategy", "DO_NOTHING"),
        ("executorRouteStrategy", "ROUND"),
        ("executorHandler", "reportHandler"),
        ("executorParam", "x=1"),
        ("executorBlockStrategy", "SERIAL_EXECUTION"),
        ("executorTimeout", "0"),
        ("executorFailRetryCount", "1"),
        ("childJobId", ""),
        ("glueType", "BEAN"),
        ("glueSource", ""),
        ("glueRemark", "GLUE init"),
    ];
    let added = client.post("/jobinfo/add", &form).await?;
    ensure_eq!(added["code"], 200, "{added}");
    let id = added["content"].as_str().context("id as a string")?.to_string();
    let job = app.app.db.load_job(id.parse().context("id")?).await.context("load")?.context("job")?;
    ensure_eq!(
        (job.trigger_status, job.job_desc.as_str()),
        (TriggerStatus::Stopped, "nightly <b>report</b>")
    );

    let started = client.post("/jobinfo/start", &[("id", &id)]).await?;
    ensure_eq!(started["code"], 200);
    let job = app.app.db.load_job(job.id).await.context("load")?.context("job")?;
    ensure_eq!(job.trigger_status, TriggerStatus::Running);
    ensure!(
        job.trigger_next_time >= chrono::Utc::now().timestamp_millis() + 4_000,
        "first fire at least 5 s away"
    );

    let mut update: Vec<(&str, &str)> = form.to_vec();
    update.push(("id", &id));
    update.retain(|(k, _)| *k != "scheduleConf");
    update.push(("scheduleConf", "0 30 3 * * ?"));
    let updated = client.post("/jobinfo/update", &update).await?;
    ensure_eq!(updated["code"], 200, "{updated}");
    let rescheduled = app.app.db.load_job(job.id).await.context("load")?.context("job")?;
    ensure!(
        rescheduled.trigger_next_time != job.trigger_next_time,
        "a running job's new schedule is applied"
    );

    let next = client
        .post("/jobinfo/nextTriggerTime", &[("scheduleType", "FIX_RATE"), ("scheduleConf", "60")])
        .await?;
    ensure_eq!(next["content"].as_array().map(Vec::len), Some(5));
    let bad =
        client.post("/jobinfo/nextTriggerTime", &[("scheduleType", "CRON"), ("scheduleConf", "bad")]).await?;
    ensure_eq!(bad["code"], 500);

    let triggered = client.post("/jobinfo/trigger", &[("id", &id), ("executorParam", "once")]).await?;
    ensure_eq!(triggered, json!({"code": 200, "msg": null, "content": null}));
    let stopped = client.post("/jobinfo/stop", &[("id", &id)]).await?;
    ensure_eq!(stopped["code"], 200);
    let unknown = client.post("/jobinfo/stop", &[("id", "99999")]).await?;
    ensure_eq!(unknown["code"], 500, "a clear failure, not a crash");
    let missing = client.post("/jobinfo/stop", &[]).await?;
    ensure_eq!(missing["code"], 500);
    let not_a_number = client.request(reqwest::Method::POST, "/jobinfo/stop", &[("id", "abc")], &[]).await?;
    ensure_eq!(not_a_number.status, 400);

    let logs =
        client.post("/joblog/pageList", &[("jobGroup", "1"), ("jobId", &id), ("logStatus", "-1")]).await?;
    ensure!(logs["recordsTotal"].as_i64().is_some(), "{logs}");
    let removed = client.post("/jobinfo/remove", &[("id", &id)]).await?;
    ensure_eq!(removed["code"], 200);
    ensure!(app.app.db.load_job(job.id).await.context("load")?.is_none(), "removed");
    app.stop().await;
    Ok(())
}

pub(super) async fn validation_messages_follow_2_4_2(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let client = admin(&app).await?;
    let t = en();
    let base = [
        ("jobGroup", "1"),
        ("jobDesc", "d"),
        ("author", "a"),
        ("scheduleType", "CRON"),
        ("scheduleConf", "0 0 0 * * ?"),
        ("misfireStrategy", "DO_NOTHING"),
        ("executorRouteStrategy", "FIRST"),
        ("executorBlockStrategy", "SERIAL_EXECUTION"),
        ("executorHandler", "h"),
        ("glueType", "BEAN"),
    ];
    let with = |key: &'static str, value: &'static str| {
        let mut form: Vec<(&str, &str)> = base.iter().copied().filter(|(k, _)| *k != key).collect();
        form.push((key, value));
        form
    };
    let cases = [
        (
            with("jobGroup", "999"),
            format!("{}{}", t.get("system_please_choose"), t.get("jobinfo_field_jobgroup")),
        ),
        (with("jobDesc", " "), format!("{}{}", t.get("system_please_input"), t.get("jobinfo_field_jobdesc"))),
        (with("scheduleType", "FIX_DELAY"), format!("{}{}", t.get("schedule_type"), t.get("system_unvalid"))),
        (
            with("scheduleConf", "0 0 0 * * *"),
            "Cron is invalid: day-of-month and day-of-week are both given: exactly one of them must be '?'"
                .to_string(),
        ),
        (with("glueType", "JAVA"), format!("{}{}", t.get("jobinfo_field_gluetype"), t.get("system_unvalid"))),
        (with("executorHandler", ""), format!("{}JobHandler", t.get("system_please_input"))),
        (
            with("executorRouteStrategy", "first"),
            format!("{}{}", t.get("jobinfo_field_executorRouteStrategy"), t.get("system_unvalid")),
        ),
        (
            with("childJobId", "1,x"),
            format!("{}(x){}", t.get("jobinfo_field_childJobId"), t.get("system_unvalid")),
        ),
        (
            with("childJobId", "777"),
            format!("{}(777){}", t.get("jobinfo_field_childJobId"), t.get("system_not_found")),
        ),
    ];
    for (form, expected) in cases {
        let reply = client.post("/jobinfo/add", &form).await?;
        ensure_eq!(reply, json!({"code": 500, "msg": expected, "content": null}), "{form:?}");
    }
    let ok = client.post("/jobinfo/add", &with("childJobId", "1,")).await?;
    ensure_eq!(ok["code"], 200);
    let id: i32 = ok["content"].as_str().context("id")?.parse().context("int")?;
    let stored = app.app.db.load_job(id).await.context("load")?.context("job")?;
    ensure_eq!(stored.child_jobid.as_deref(), Some("1"), "re-joined without the trailing comma");
    app.stop().await;
    Ok(())
}

pub(super) async fn job_list_paging_filters_and_shape(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let client = admin(&app).await?;
    let group = manual_group(store, "paging-app", &["http://127.0.0.1:1/"]).await?;
    let stamp = local("2024-01-02 03:04:05");
    let far = now_ms() + 86_400_000;
    let mut made = Vec::new();
    for n in 0..12 {
        let mut j = job(group);
        j.job_desc = format!("paged job {n:02}");
        j.author = Some(if n % 2 == 0 { "even" } else { "odd" }.into());
        j.executor_handler = Some(format!("handler{}", n % 3));
        j.schedule_type = "CRON".into();
        j.schedule_conf = Some("0 0 0 * * ?".into());
        (j.add_time, j.update_time, j.glue_updatetime) = (Some(stamp), Some(stamp), Some(stamp));
        if n < 4 {
            // Running, but far from due: the scheduler leaves them alone.
            (j.trigger_status, j.trigger_next_time) = (TriggerStatus::Running, far);
        }
        if n == 11 {
            (j.executor_timeout, j.executor_fail_retry_count) = (7, 2);
            (j.glue_type, j.glue_source, j.glue_remark) =
                ("GLUE_SHELL".into(), Some("echo hi".into()), Some("first".into()));
            (j.child_jobid, j.alarm_email, j.trigger_last_time) =
                (Some("1".into()), Some("a@b.c".into()), 1234);
        }
        made.push(insert(store, &j).await? as i64);
    }
    let desc = |range: std::ops::Range<usize>| -> Vec<i64> { made[range].iter().rev().copied().collect() };
    let g = group.to_string();
    let list = |extra: &[(&'static str, &'static str)]| {
        let mut form = vec![("jobGroup", g.clone()), ("triggerStatus", "-1".to_string())];
        for (k, v) in extra {
            form.retain(|(name, _)| name != k);
            form.push((k, v.to_string()));
        }
        form
    };
    let post = |form: Vec<(&'static str, String)>| {
        let client = &client;
        async move {
            let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
            client.post("/jobinfo/pageList", &pairs).await
        }
    };

    // Defaults: start 0, length 10; newest id first.
    ensure_page(&post(list(&[])).await?, 12, &desc(2..12), "defaults")?;
    ensure_page(
        &post(list(&[("start", ""), ("length", "")])).await?,
        12,
        &desc(2..12),
        "empty paging values",
    )?;
    ensure_page(&post(list(&[("start", "10"), ("length", "10")])).await?, 12, &desc(0..2), "second page")?;
    ensure_page(
        &post(list(&[("start", "3"), ("length", "2")])).await?,
        12,
        &desc(7..9),
        "an offset, not a page number",
    )?;
    ensure_page(&post(list(&[("start", "50")])).await?, 12, &[], "beyond the end")?;
    // Filters.
    ensure_page(&post(list(&[("triggerStatus", "1")])).await?, 4, &desc(0..4), "running")?;
    ensure_eq!(post(list(&[("triggerStatus", "0")])).await?["recordsTotal"], 8);
    ensure_eq!(post(list(&[("author", "odd")])).await?["recordsTotal"], 6);
    ensure_eq!(
        post(list(&[("author", "ODD")])).await?["recordsTotal"],
        6,
        "case-insensitive like the reference collation"
    );
    ensure_page(
        &post(list(&[("executorHandler", "handler2")])).await?,
        4,
        &[made[11], made[8], made[5], made[2]],
        "handler",
    )?;
    ensure_page(&post(list(&[("jobDesc", "job 1")])).await?, 2, &desc(10..12), "description")?;
    ensure_page(
        &post(list(&[("author", "odd"), ("executorHandler", "handler2")])).await?,
        2,
        &[made[11], made[5]],
        "filters combine",
    )?;
    ensure_page(&post(list(&[("jobDesc", "' OR '1'='1")])).await?, 0, &[], "quotes are data, not SQL")?;
    ensure_eq!(
        post(list(&[("jobGroup", "0")])).await?["recordsTotal"],
        13,
        "0 = every group, the seed job included"
    );
    ensure_eq!(post(list(&[("jobGroup", "-1")])).await?["recordsTotal"], 13, "negative = every group");
    let missing = client.post("/jobinfo/pageList", &[("jobGroup", "0")]).await?;
    ensure_eq!(missing["code"], 500, "triggerStatus is required: {missing}");
    ensure_eq!(
        client.status_of("/jobinfo/pageList", &[("jobGroup", "x"), ("triggerStatus", "-1")]).await?,
        400
    );
    ensure_eq!(
        client
            .status_of("/jobinfo/pageList", &[("jobGroup", "0"), ("triggerStatus", "-1"), ("length", "ten")])
            .await?,
        400
    );

    // Any method, query string, trailing slash.
    let got = client
        .get_json(&format!("/jobinfo/pageList/?jobGroup={g}&triggerStatus=-1&start=0&length=3"))
        .await?;
    ensure_page(&got, 12, &desc(9..12), "GET with a trailing slash")?;
    for method in [reqwest::Method::PUT, reqwest::Method::DELETE] {
        let reply = client
            .request(method.clone(), &format!("/jobinfo/pageList?jobGroup={g}&triggerStatus=1"), &[], &[])
            .await?;
        ensure_page(&reply.json()?, 4, &desc(0..4), method.as_str())?;
    }

    // The full row, field for field.
    let first = post(list(&[("length", "1")])).await?;
    let row = &first["data"][0];
    ensure_eq!(keys_of(row), sorted(&JOB_KEYS), "job keys");
    let shanghai = chrono::TimeZone::from_local_datetime(&chrono_tz::Asia::Shanghai, &stamp)
        .single()
        .context("instant")?;
    let stamp_json = json_date(shanghai.timestamp_millis());
    let expected = json!({
        "id": made[11], "jobGroup": group, "jobDesc": "paged job 11", "addTime": stamp_json, "updateTime": stamp_json,
        "author": "odd", "alarmEmail": "a@b.c", "scheduleType": "CRON", "scheduleConf": "0 0 0 * * ?",
        "misfireStrategy": "DO_NOTHING", "executorRouteStrategy": "FIRST", "executorHandler": "handler2",
        "executorParam": "p", "executorBlockStrategy": "SERIAL_EXECUTION", "executorTimeout": 7,
        "executorFailRetryCount": 2, "glueType": "GLUE_SHELL", "glueSource": "echo hi", "glueRemark": "first",
        "glueUpdatetime": stamp_json, "childJobId": "1", "triggerStatus": 0, "triggerLastTime": 1234, "triggerNextTime": 0,
    });
    ensure_eq!(*row, expected, "the job row");
    let running = post(list(&[("triggerStatus", "1"), ("length", "1")])).await?;
    ensure_eq!(running["data"][0]["triggerNextTime"], far, "epoch ms as a number");
    ensure_eq!(running["data"][0]["glueSource"], serde_json::Value::Null);
    app.stop().await;
    Ok(())
}

/// A bad schedule gets one message wherever it is checked (add, update, the next-fire-time preview), in
/// the console's language from end to end: 2.4.2's words, the field, and the reason.
pub(super) async fn schedule_messages_give_the_reason_in_the_console_language(
    backend: Backend,
) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &["--xxl.job.i18n=zh_CN"]).await?;
    let client = admin(&app).await?;
    let form = |schedule_type: &'static str, conf: &'static str| {
        let mut form =
            form_with(&job_form(), &[("scheduleType", Some(schedule_type)), ("scheduleConf", Some(conf))]);
        form.push(("id", "1"));
        form
    };
    // Editing the BEAN sample job without a handler: refused as adding refuses it.
    let blank = form_with(&form("CRON", "0 0 0 * * ?"), &[("executorHandler", Some(""))]);
    ensure_eq!(client.post("/jobinfo/update", &blank).await?["msg"], json!("请输入JobHandler"));
    let fix_rate = "调度类型无效：固定频率须为 1 到 2147483647 之间的整数秒";
    let crons = [
        ("0 60 * * * ?", "Cron无效：分字段“60”（第 3 列）：取值须在 0 到 59 之间"),
        ("0 0 0 * * *", "Cron无效：日和周不能同时指定：两者之中须有且只有一个为“?”"),
        ("0 0 0 ? * MON#2#3", "Cron无效：周字段“MON#2#3”（第 11 列）：只能有一个“#”"),
    ];
    let cases = crons.map(|(conf, expected)| ("CRON", conf, expected));
    for (schedule_type, conf, expected) in
        cases.into_iter().chain(["x", "0"].map(|c| ("FIX_RATE", c, fix_rate)))
    {
        let form = form(schedule_type, conf);
        for path in ["/jobinfo/add", "/jobinfo/update", "/jobinfo/nextTriggerTime"] {
            let reply = client.post(path, &form).await?;
            ensure_eq!(reply["msg"], json!(expected), "{path} {schedule_type} {conf:?}: {reply}");
        }
    }
    // Jobs as code in the console: the plan and the refusals in the console's language too.
    let executor = "[[executor]]\napp_name = \"zh-app\"\ntitle = \"Z\"\n";
    let plan = client
        .post("/jobinfo/apply", &[("document", executor), ("format", "toml"), ("dryRun", "true")])
        .await?;
    ensure_eq!(plan["content"]["plan"], json!("+ 执行器 zh-app：新建\n共 1 项更改\n"), "{plan}");
    let job = "[[executor.job]]\ndescription = \"d\"\nauthor = \"me\"\nschedule_type = \"CRON\"\n\
               schedule_conf = \"0 60 * * * ?\"\nroute_strategy = \"FIRST\"\nblock_strategy = \"SERIAL_EXECUTION\"\n\
               handler = \"h\"\n";
    let twice = format!("{executor}{executor}");
    let refused = client
        .post("/jobinfo/apply", &[("document", twice.as_str()), ("format", "toml"), ("dryRun", "true")])
        .await?;
    ensure!(
        refused["msg"].as_str().is_some_and(|m| m.ends_with("：app_name：在文件中出现了两次")),
        "{refused}"
    );
    let document = format!("{executor}\n{job}");
    let refused = client
        .post("/jobinfo/apply", &[("document", document.as_str()), ("format", "toml"), ("dryRun", "true")])
        .await?;
    ensure!(
        refused["msg"]
            .as_str()
            .is_some_and(|m| m.ends_with(": Cron无效：分字段“60”（第 3 列）：取值须在 0 到 59 之间")),
        "{refused}"
    );
    app.stop().await;
    Ok(())
}

pub(super) async fn job_messages_and_operations(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let client = admin(&app).await?;
    let base = job_form();
    let unvalid = |key: &str| msg(&[key, "system_unvalid"]);
    // /jobinfo/add, the rows the older test does not cover, in the order of the checks.
    let add_cases: Vec<FormCase> = vec![
        (vec![("jobGroup", None)], msg(&["system_please_choose", "jobinfo_field_jobgroup"])),
        (vec![("author", Some(" "))], msg(&["system_please_input", "jobinfo_field_author"])),
        (vec![("author", None), ("jobDesc", None)], msg(&["system_please_input", "jobinfo_field_jobdesc"])),
        (vec![("scheduleType", None)], unvalid("schedule_type")),
        (vec![("scheduleType", Some("cron"))], unvalid("schedule_type")),
        (
            vec![("scheduleConf", None)],
            "Cron is invalid: 0 field(s) found, 6 or 7 expected (second minute hour day-of-month month \
             day-of-week [year])"
                .to_string(),
        ),
        (
            vec![("scheduleType", Some("FIX_RATE")), ("scheduleConf", None)],
            msg(&["jobinfo_fix_rate_unvalid"]),
        ),
        (
            vec![("scheduleType", Some("FIX_RATE")), ("scheduleConf", Some("0"))],
            msg(&["jobinfo_fix_rate_unvalid"]),
        ),
        (
            vec![("scheduleType", Some("FIX_RATE")), ("scheduleConf", Some("x"))],
            msg(&["jobinfo_fix_rate_unvalid"]),
        ),
        (
            vec![("scheduleType", Some("FIX_RATE")), ("scheduleConf", Some("2147483648"))],
            msg(&["jobinfo_fix_rate_unvalid"]),
        ),
        (vec![("glueType", None)], unvalid("jobinfo_field_gluetype")),
        (vec![("executorHandler", None)], format!("{}JobHandler", en().get("system_please_input"))),
        (vec![("executorRouteStrategy", None)], unvalid("jobinfo_field_executorRouteStrategy")),
        (vec![("misfireStrategy", Some("NOPE"))], unvalid("misfire_strategy")),
        (vec![("misfireStrategy", None)], unvalid("misfire_strategy")),
        (vec![("executorBlockStrategy", Some("serial"))], unvalid("jobinfo_field_executorBlockStrategy")),
        (
            vec![("childJobId", Some("1, 2"))],
            format!("{}( 2){}", en().get("jobinfo_field_childJobId"), en().get("system_unvalid")),
        ),
    ];
    for (changes, expected) in add_cases {
        let reply = client.post("/jobinfo/add", &form_with(&base, &changes)).await?;
        ensure_eq!(reply, fail(expected), "add with {changes:?}");
    }
    ensure_eq!(
        client.status_of("/jobinfo/add", &form_with(&base, &[("executorTimeout", Some("abc"))])).await?,
        400
    );
    // Empty ints of the form fall back to 0 (the shared add/edit form sends an empty hidden `id`).
    let empty_group = client.post("/jobinfo/add", &form_with(&base, &[("jobGroup", Some(""))])).await?;
    ensure_eq!(empty_group, fail(msg(&["system_please_choose", "jobinfo_field_jobgroup"])));

    // What add stores: \r stripped from shell sources, no handler needed for GLUE, the trigger state not bindable.
    let shell = form_with(
        &base,
        &[
            ("glueType", Some("GLUE_SHELL")),
            ("executorHandler", None),
            ("glueSource", Some("echo a\r\necho b\r\n")),
            ("scheduleType", Some("FIX_RATE")),
            ("scheduleConf", Some("30")),
            ("executorTimeout", Some("-5")),
            ("triggerStatus", Some("1")),
            ("triggerNextTime", Some("1")),
            ("triggerLastTime", Some("2")),
        ],
    );
    let added = client.post("/jobinfo/add", &shell).await?;
    let shell_id = added["content"].as_str().context("id as a string")?.to_string();
    ensure_eq!(added, ok(json!(shell_id)));
    let stored = store.load_job(shell_id.parse().context("id")?).await.context("load")?.context("job")?;
    ensure_eq!(stored.glue_source.as_deref(), Some("echo a\necho b\n"), "carriage returns removed");
    ensure_eq!(
        (stored.trigger_status, stored.trigger_next_time, stored.trigger_last_time),
        (TriggerStatus::Stopped, 0, 0),
        "a new job is stopped"
    );
    ensure_eq!((stored.executor_timeout, stored.executor_handler.clone()), (-5, None));
    ensure_eq!(stored.glue_remark.as_deref(), Some("GLUE代码初始化"));
    ensure!(store.glues_of_job(stored.id).await.context("history")?.is_empty(), "add writes no GLUE history");

    // /jobinfo/update, in its own order of checks.
    let update = form_with(&base, &[("id", Some("1"))]);
    let update_cases: Vec<FormCase> = vec![
        (vec![("jobDesc", Some(""))], msg(&["system_please_input", "jobinfo_field_jobdesc"])),
        (vec![("author", None)], msg(&["system_please_input", "jobinfo_field_author"])),
        (vec![("scheduleType", Some("FIX_DELAY"))], unvalid("schedule_type")),
        (
            vec![("scheduleConf", Some("* * *"))],
            "Cron is invalid: 3 field(s) found, 6 or 7 expected (second minute hour day-of-month month \
             day-of-week [year])"
                .to_string(),
        ),
        (
            vec![("scheduleType", Some("FIX_RATE")), ("scheduleConf", None)],
            msg(&["jobinfo_fix_rate_unvalid"]),
        ),
        // Adding refuses a BEAN job without a handler; so does editing one (the stored GLUE type decides).
        (vec![("executorHandler", Some(""))], format!("{}JobHandler", en().get("system_please_input"))),
        (vec![("executorHandler", None)], format!("{}JobHandler", en().get("system_please_input"))),
        (vec![("executorBlockStrategy", None)], unvalid("jobinfo_field_executorBlockStrategy")),
        (
            vec![("childJobId", Some("4242"))],
            format!("{}(4242){}", en().get("jobinfo_field_childJobId"), en().get("system_not_found")),
        ),
        (vec![("jobGroup", Some("999"))], unvalid("jobinfo_field_jobgroup")),
        (vec![("id", Some("99999"))], msg(&["jobinfo_field_id", "system_not_found"])),
    ];
    for (changes, expected) in update_cases {
        let reply = client.post("/jobinfo/update", &form_with(&update, &changes)).await?;
        ensure_eq!(reply, fail(expected), "update with {changes:?}");
    }
    // Update copies the editable fields and never the GLUE fields or the trigger state.
    let before = store.load_job(1).await.context("load")?.context("seed job")?;
    let edited = form_with(
        &update,
        &[
            ("jobDesc", Some("renamed")),
            ("author", Some("ops")),
            ("alarmEmail", Some("x@y.z")),
            ("executorParam", Some("k=v")),
            ("executorRouteStrategy", Some("ROUND")),
            ("childJobId", Some(&shell_id)),
            ("executorTimeout", Some("9")),
            ("glueType", Some("GLUE_PYTHON")),
            ("glueSource", Some("print(1)")),
            ("glueRemark", Some("sneaky")),
            ("triggerStatus", Some("1")),
        ],
    );
    ensure_eq!(client.post("/jobinfo/update", &edited).await?, ok(json!(null)));
    let after = store.load_job(1).await.context("load")?.context("seed job")?;
    ensure_eq!(
        (after.job_desc.as_str(), after.author.as_deref(), after.alarm_email.as_deref()),
        ("renamed", Some("ops"), Some("x@y.z"))
    );
    ensure_eq!(
        (after.executor_param.as_deref(), after.executor_route_strategy.as_deref(), after.executor_timeout),
        (Some("k=v"), Some("ROUND"), 9)
    );
    ensure_eq!(after.child_jobid.as_deref(), Some(shell_id.as_str()));
    ensure_eq!(
        (&after.glue_type, &after.glue_source, &after.glue_remark, after.glue_updatetime),
        (&before.glue_type, &before.glue_source, &before.glue_remark, before.glue_updatetime)
    );
    ensure_eq!((after.trigger_status, after.add_time), (before.trigger_status, before.add_time));

    // start / stop / trigger / remove answers.
    let mut none = job(1);
    none.schedule_type = "NONE".into();
    let none_id = insert(store, &none).await?.to_string();
    ensure_eq!(
        client.post("/jobinfo/start", &[("id", &none_id)]).await?,
        fail(msg(&["schedule_type_none_limit_start"]))
    );
    ensure_eq!(client.post("/jobinfo/start", &[("id", "99999")]).await?["code"], 500);
    ensure_eq!(
        client.post("/jobinfo/trigger", &[("id", "99999")]).await?,
        fail(msg(&["jobinfo_glue_jobid_unvalid"]))
    );
    ensure_eq!(client.post("/jobinfo/trigger", &[]).await?["code"], 500, "id is required");
    ensure_eq!(
        client.post("/jobinfo/remove", &[("id", "99999")]).await?,
        ok(json!(null)),
        "unknown ids are a success"
    );
    ensure_eq!(client.post("/jobinfo/start", &[("id", &shell_id)]).await?, ok(json!(null)));
    let started = store.load_job(stored.id).await.context("load")?.context("job")?;
    ensure_eq!(started.trigger_status, TriggerStatus::Running);
    ensure_eq!(client.post("/jobinfo/stop", &[("id", &shell_id)]).await?, ok(json!(null)));
    let stopped = store.load_job(stored.id).await.context("load")?.context("job")?;
    ensure_eq!(
        (stopped.trigger_status, stopped.trigger_last_time, stopped.trigger_next_time),
        (TriggerStatus::Stopped, 0, 0)
    );

    // GLUE IDE: the save checks in order, and the page's refusals.
    let glue_cases: Vec<(Vec<(&str, &str)>, String)> = vec![
        (vec![("id", &shell_id), ("glueSource", "x")], msg(&["system_please_input", "jobinfo_glue_remark"])),
        (
            vec![("id", &shell_id), ("glueSource", "x"), ("glueRemark", "")],
            msg(&["jobinfo_glue_remark_limit"]),
        ),
        (
            vec![("id", "99999"), ("glueSource", "x"), ("glueRemark", "valid remark")],
            msg(&["jobinfo_glue_jobid_unvalid"]),
        ),
    ];
    for (form, expected) in &glue_cases {
        ensure_eq!(client.post("/jobcode/save", form).await?, fail(expected.clone()), "{form:?}");
    }
    let long_remark = "r".repeat(101);
    ensure_eq!(
        client.post("/jobcode/save", &[("id", &shell_id), ("glueRemark", &long_remark)]).await?,
        fail(msg(&["jobinfo_glue_remark_limit"]))
    );
    ensure!(
        is_error_page(&client.get("/jobcode?jobId=1").await?, en().get("jobinfo_glue_gluetype_unvalid")),
        "a BEAN job has no GLUE page"
    );
    ensure!(
        is_error_page(&client.get("/jobcode?jobId=99999").await?, en().get("jobinfo_glue_jobid_unvalid")),
        "unknown job"
    );
    ensure_eq!(
        client.get("/jobcode").await?.content_type.starts_with("text/html"),
        true,
        "jobId is required: an error page"
    );

    // A running job's new schedule: recomputed from now + 5 s; one that never fires is refused.
    let mut rate = job(1);
    (rate.schedule_type, rate.schedule_conf) = ("FIX_RATE".into(), Some("30".into()));
    let rate_id = insert(store, &rate).await?.to_string();
    ensure_eq!(client.post("/jobinfo/start", &[("id", &rate_id)]).await?, ok(json!(null)));
    let rate_form = form_with(
        &base,
        &[("id", Some(&rate_id)), ("scheduleType", Some("FIX_RATE")), ("scheduleConf", Some("3600"))],
    );
    let asked_ms = now_ms();
    ensure_eq!(client.post("/jobinfo/update", &rate_form).await?, ok(json!(null)));
    let next = store
        .load_job(rate_id.parse().context("id")?)
        .await
        .context("load")?
        .context("job")?
        .trigger_next_time;
    ensure!(
        next >= asked_ms + 3_605_000 && next <= now_ms() + 3_605_000,
        "now + 5 s + 3600 s, got {} ms from now",
        next - asked_ms
    );
    let never =
        form_with(&rate_form, &[("scheduleType", Some("CRON")), ("scheduleConf", Some("0 0 0 30 2 ?"))]);
    ensure_eq!(
        client.post("/jobinfo/update", &never).await?,
        fail(unvalid("schedule_type")),
        "February 30 never comes"
    );
    let unchanged = store.load_job(rate_id.parse().context("id")?).await.context("load")?.context("job")?;
    ensure_eq!(
        (unchanged.schedule_conf.as_deref(), unchanged.trigger_next_time),
        (Some("3600"), next),
        "nothing was written"
    );
    ensure_eq!(client.post("/jobinfo/stop", &[("id", &rate_id)]).await?, ok(json!(null)));

    // Remove takes the job's logs and GLUE history with it, and nothing else.
    ensure_eq!(
        client
            .post("/jobcode/save", &[("id", &shell_id), ("glueSource", "echo c"), ("glueRemark", "second")])
            .await?,
        ok(json!(null))
    );
    let own_log = store.insert_log(1, stored.id, now_ms()).await.context("log")?;
    let other_log = store.insert_log(1, 1, now_ms()).await.context("log")?;
    ensure_eq!(client.post("/jobinfo/remove", &[("id", &shell_id)]).await?, ok(json!(null)));
    ensure!(store.load_job(stored.id).await.context("load")?.is_none(), "job removed");
    ensure!(store.load_log(own_log).await.context("load")?.is_none(), "its log removed");
    ensure!(store.load_log(other_log).await.context("load")?.is_some(), "another job's log kept");
    ensure!(store.glues_of_job(stored.id).await.context("history")?.is_empty(), "its GLUE history removed");

    // nextTriggerTime: five times, each from the previous one; errors carry the parser's text.
    let parse = |v: &serde_json::Value| -> Vec<chrono::NaiveDateTime> {
        v["content"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str())
                    .filter_map(|s| chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").ok())
                    .collect()
            })
            .unwrap_or_default()
    };
    let before_ms = now_ms();
    let rate = client
        .post("/jobinfo/nextTriggerTime", &[("scheduleType", "FIX_RATE"), ("scheduleConf", "90")])
        .await?;
    ensure_eq!((rate["code"].clone(), rate["msg"].clone()), (json!(200), json!(null)), "{rate}");
    let times = parse(&rate);
    ensure_eq!(times.len(), 5, "{rate}");
    ensure!(times.windows(2).all(|w| (w[1] - w[0]).num_seconds() == 90), "90 s apart: {rate}");
    let first_ms = local_ms(times[0]);
    ensure!(
        first_ms >= before_ms + 89_000 && first_ms <= now_ms() + 90_000,
        "first one 90 s from now (local time): {rate}"
    );
    let cron = client
        .get_json("/jobinfo/nextTriggerTime?scheduleType=CRON&scheduleConf=0%200%203%20*%20*%20%3F")
        .await?;
    let days = parse(&cron);
    ensure_eq!(days.len(), 5, "{cron}");
    ensure!(days.iter().all(|d| d.format("%H:%M:%S").to_string() == "03:00:00"), "{cron}");
    ensure!(days.windows(2).all(|w| (w[1] - w[0]).num_hours() == 24), "daily: {cron}");
    for form in [
        vec![("scheduleType", "NONE"), ("scheduleConf", "5")],
        vec![],
        vec![("scheduleType", "FIX_DELAY"), ("scheduleConf", "5")],
    ] {
        ensure_eq!(client.post("/jobinfo/nextTriggerTime", &form).await?, ok(json!([])), "{form:?}");
    }
    // The messages add and update give: 2.4.2's words, then the reason.
    let cron_prefix = "Cron is invalid: ";
    for (form, prefix) in [
        (vec![("scheduleType", "FIX_RATE"), ("scheduleConf", "x")], en().get("jobinfo_fix_rate_unvalid")),
        (vec![("scheduleType", "CRON"), ("scheduleConf", "bad")], cron_prefix),
        (vec![("scheduleType", "CRON")], cron_prefix),
    ] {
        let reply = client.post("/jobinfo/nextTriggerTime", &form).await?;
        ensure_eq!(
            (reply["code"].clone(), reply["content"].clone()),
            (json!(500), json!(null)),
            "{form:?}: {reply}"
        );
        ensure!(reply["msg"].as_str().is_some_and(|m| m.starts_with(prefix)), "{form:?}: {reply}");
    }
    app.stop().await;
    Ok(())
}
