//! The console's endpoints over HTTP: login and sessions, CSRF, permissions on every endpoint, and the
//! job, log, group, user and GLUE operations with 2.4.2's JSON.

use crate::support::console::ConsoleClient;
use crate::support::{Behaviour, FakeExecutor, LOG_CONTENT};
use crate::support::fixtures::{insert, job, manual_group};
use crate::support::{eventually, now_ms, Backend, Context, TestApp, TestDb};
use std::time::Duration;
use crate::{ensure, ensure_eq, Case, TestResult, BOTH};
use serde_json::json;
use xxl_job_admin::i18n::I18n;

pub fn cases() -> Vec<Case> {
    vec![
        Case { name: "console::login_gate_and_logout", backends: BOTH, run: |b| Box::pin(login_gate_and_logout(b)) },
        Case { name: "console::forged_and_legacy_cookies_never_authenticate", backends: BOTH, run: |b| Box::pin(forged_and_legacy_cookies_never_authenticate(b)) },
        Case { name: "console::cross_site_requests_are_refused", backends: BOTH, run: |b| Box::pin(cross_site_requests_are_refused(b)) },
        Case { name: "console::password_change_ends_every_session", backends: BOTH, run: |b| Box::pin(password_change_ends_every_session(b)) },
        Case { name: "console::job_lifecycle", backends: BOTH, run: |b| Box::pin(job_lifecycle(b)) },
        Case { name: "console::restricted_user_is_confined_to_its_groups", backends: BOTH, run: |b| Box::pin(restricted_user_is_confined_to_its_groups(b)) },
        Case { name: "console::validation_messages_follow_2_4_2", backends: &[Backend::Sqlite], run: |b| Box::pin(validation_messages_follow_2_4_2(b)) },
        Case { name: "console::groups_users_and_glue", backends: BOTH, run: |b| Box::pin(groups_users_and_glue(b)) },
        Case { name: "console::log_endpoints_reach_the_executor", backends: BOTH, run: |b| Box::pin(log_endpoints_reach_the_executor(b)) },
        Case { name: "console::login_throttle", backends: &[Backend::Sqlite], run: |b| Box::pin(login_throttle(b)) },
    ]
}

fn en() -> I18n {
    I18n::new("en")
}

async fn admin(app: &TestApp) -> Result<ConsoleClient, libtest_mimic::Failed> {
    let mut client = ConsoleClient::new(&app.base);
    let reply = client.login("admin", "123456", false).await?;
    ensure_eq!(reply, json!({"code": 200, "msg": null, "content": null}));
    Ok(client)
}

async fn login_gate_and_logout(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let mut client = ConsoleClient::new(&app.base);
    for path in ["/jobinfo/pageList?jobGroup=0&triggerStatus=-1", "/jobinfo", "/"] {
        let reply = client.get(path).await?;
        ensure_eq!(reply.status, 302, "{path}");
        ensure_eq!(reply.location.as_deref(), Some("/xxl-job-admin/toLogin"), "{path}");
    }
    let login_page = client.get("/toLogin").await?;
    ensure_eq!(login_page.status, 200);
    ensure!(login_page.content_type.starts_with("text/html"), "{}", login_page.content_type);

    let wrong = client.login("admin", "1234567", false).await?;
    ensure_eq!(wrong, json!({"code": 500, "msg": en().get("login_param_unvalid"), "content": null}));
    let blank = client.login("admin", " ", false).await?;
    ensure_eq!(blank["msg"], en().get("login_param_empty"));
    ensure!(client.cookie.is_none(), "no cookie after failures");

    let reply = client.request(reqwest::Method::POST, "/login", &[("userName", "admin"), ("password", "123456"), ("ifRemember", "on")], &[]).await?;
    ensure_eq!(reply.json()?, json!({"code": 200, "msg": null, "content": null}));
    let set_cookie = reply.set_cookie.context("Set-Cookie")?;
    ensure!(set_cookie.starts_with("XXL_JOB_LOGIN_IDENTITY=v1."), "{set_cookie}");
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age="] {
        ensure!(set_cookie.contains(attribute), "{attribute} in {set_cookie}");
    }
    client.cookie = set_cookie.split(';').next().map(str::to_string);
    let page = client.post("/jobinfo/pageList", &[("jobGroup", "0"), ("triggerStatus", "-1")]).await?;
    ensure_eq!(page["recordsTotal"], 1);
    ensure_eq!(page["recordsFiltered"], 1);
    ensure_eq!(page["data"][0]["jobDesc"], "测试任务1");
    ensure_eq!(page["data"][0]["glueUpdatetime"], "2018-11-03T14:21:31.000+00:00", "Shanghai wall clock as UTC ISO");
    let to_login = client.get("/toLogin").await?;
    ensure_eq!((to_login.status, to_login.location.as_deref()), (303, Some("/xxl-job-admin/")));
    let dashboard = client.get("/").await?;
    ensure_eq!(dashboard.status, 200);
    let help = client.get("/help").await?;
    ensure_eq!(help.status, 200);
    ensure!(help.body.contains(en().get("help_intro")), "the help page's own text is rendered on the server");

    let logout = client.request(reqwest::Method::POST, "/logout", &[], &[]).await?;
    ensure_eq!(logout.json()?["code"], 200);
    ensure!(logout.set_cookie.unwrap_or_default().contains("Max-Age=0"), "the cookie is cleared");
    let replayed = client.get("/").await?;
    ensure_eq!(replayed.status, 302, "a copy of the logged-out cookie no longer authenticates");
    let get_login = client.get("/login").await?;
    ensure_eq!(get_login.status, 405, "GET /login is not allowed");
    app.stop().await;
    Ok(())
}

async fn forged_and_legacy_cookies_never_authenticate(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let legacy = "7b226964223a312c22757365726e616d65223a2261646d696e222c2270617373776f7264223a226531306164633339343962613539616262653536653035376632306638383365222c22726f6c65223a312c227065726d697373696f6e223a6e756c6c7d";
    let genuine = admin(&app).await?.cookie.context("cookie")?;
    let tampered = format!("{}x", genuine);
    for value in [legacy.to_string(), tampered, "v1.e30.AAAA".to_string(), "garbage".to_string()] {
        let mut client = ConsoleClient::new(&app.base);
        client.cookie = Some(format!("XXL_JOB_LOGIN_IDENTITY={value}"));
        let reply = client.get("/jobinfo/pageList?jobGroup=0&triggerStatus=-1").await?;
        ensure_eq!(reply.status, 302, "cookie {value}");
    }
    app.stop().await;
    Ok(())
}

async fn cross_site_requests_are_refused(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let client = admin(&app).await?;
    let host = app.app.addr.to_string();
    let foreign = client
        .request(reqwest::Method::POST, "/jobinfo/remove", &[("id", "1")], &[("Origin", "https://evil.example")])
        .await?;
    ensure_eq!(foreign.status, 403);
    let fetch = client.request(reqwest::Method::GET, "/jobinfo/remove?id=1", &[], &[("Sec-Fetch-Site", "cross-site")]).await?;
    ensure_eq!(fetch.status, 403);
    let login = client
        .request(reqwest::Method::POST, "/login", &[("userName", "admin"), ("password", "123456")], &[("Origin", "https://evil.example")])
        .await?;
    ensure_eq!(login.status, 403, "login CSRF too");
    ensure!(app.app.db.load_job(1).await.context("load")?.is_some(), "nothing was deleted");
    let same = client
        .request(reqwest::Method::POST, "/jobinfo/stop", &[("id", "1")], &[("Origin", &format!("http://{host}"))])
        .await?;
    ensure_eq!(same.json()?["code"], 200, "same-origin requests work");
    app.stop().await;
    Ok(())
}

async fn password_change_ends_every_session(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let first = admin(&app).await?;
    let second = admin(&app).await?;
    let wrong_old = first.post("/user/updatePwd", &[("oldPassword", "nope"), ("password", "new-secret")]).await?;
    ensure_eq!(wrong_old["code"], 500);
    let changed = first.post("/user/updatePwd", &[("oldPassword", "123456"), ("password", "new-secret")]).await?;
    ensure_eq!(changed["code"], 200);
    for client in [&first, &second] {
        ensure_eq!(client.get("/jobinfo/pageList?jobGroup=0&triggerStatus=-1").await?.status, 302);
    }
    let mut again = ConsoleClient::new(&app.base);
    ensure_eq!(again.login("admin", "new-secret", false).await?["code"], 200);
    app.stop().await;
    Ok(())
}

async fn job_lifecycle(backend: Backend) -> TestResult {
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
    ensure_eq!((job.trigger_status, job.job_desc.as_str()), (0, "nightly <b>report</b>"));

    let started = client.post("/jobinfo/start", &[("id", &id)]).await?;
    ensure_eq!(started["code"], 200);
    let job = app.app.db.load_job(job.id).await.context("load")?.context("job")?;
    ensure_eq!(job.trigger_status, 1);
    ensure!(job.trigger_next_time >= chrono::Utc::now().timestamp_millis() + 4_000, "first fire at least 5 s away");

    let mut update: Vec<(&str, &str)> = form.to_vec();
    update.push(("id", &id));
    update.retain(|(k, _)| *k != "scheduleConf");
    update.push(("scheduleConf", "0 30 3 * * ?"));
    let updated = client.post("/jobinfo/update", &update).await?;
    ensure_eq!(updated["code"], 200, "{updated}");
    let rescheduled = app.app.db.load_job(job.id).await.context("load")?.context("job")?;
    ensure!(rescheduled.trigger_next_time != job.trigger_next_time, "a running job's new schedule is applied");

    let next = client.post("/jobinfo/nextTriggerTime", &[("scheduleType", "FIX_RATE"), ("scheduleConf", "60")]).await?;
    ensure_eq!(next["content"].as_array().map(Vec::len), Some(5));
    let bad = client.post("/jobinfo/nextTriggerTime", &[("scheduleType", "CRON"), ("scheduleConf", "bad")]).await?;
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

    let logs = client.post("/joblog/pageList", &[("jobGroup", "1"), ("jobId", &id), ("logStatus", "-1")]).await?;
    ensure!(logs["recordsTotal"].as_i64().is_some(), "{logs}");
    let removed = client.post("/jobinfo/remove", &[("id", &id)]).await?;
    ensure_eq!(removed["code"], 200);
    ensure!(app.app.db.load_job(job.id).await.context("load")?.is_none(), "removed");
    app.stop().await;
    Ok(())
}

async fn restricted_user_is_confined_to_its_groups(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let admin_client = admin(&app).await?;
    let foreign_group = manual_group(store, "foreign-app", &["http://10.9.9.9:9999/"]).await?;
    let foreign_job = insert(store, &job(foreign_group)).await?.to_string();
    let foreign_log = store.insert_log(foreign_group, foreign_job.parse().context("id")?, now_ms()).await.context("log")?.to_string();
    let added = admin_client.post("/user/add", &[("username", "alice"), ("password", "alice-pw"), ("role", "0"), ("permission", "1")]).await?;
    ensure_eq!(added["code"], 200, "{added}");
    let mut alice = ConsoleClient::new(&app.base);
    ensure_eq!(alice.login("alice", "alice-pw", false).await?["code"], 200);

    let listed = alice.post("/jobinfo/pageList", &[("jobGroup", "0"), ("triggerStatus", "-1")]).await?;
    ensure_eq!(listed["recordsTotal"], 1, "only group 1: {listed}");
    let fg = foreign_group.to_string();
    let refused: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("/jobinfo/pageList", vec![("jobGroup", &fg), ("triggerStatus", "-1")]),
        ("/jobinfo/remove", vec![("id", &foreign_job)]),
        ("/jobinfo/start", vec![("id", &foreign_job)]),
        ("/jobinfo/stop", vec![("id", &foreign_job)]),
        ("/joblog/getJobsByGroup", vec![("jobGroup", &fg)]),
        ("/joblog/pageList", vec![("jobGroup", "1"), ("jobId", &foreign_job), ("logStatus", "-1")]),
        ("/joblog/pageList", vec![("jobGroup", "0"), ("jobId", "0"), ("logStatus", "-1")]),
        ("/joblog/logDetailCat", vec![("logId", &foreign_log), ("fromLineNum", "1")]),
        ("/joblog/logKill", vec![("id", &foreign_log)]),
        ("/joblog/clearLog", vec![("jobGroup", &fg), ("jobId", "0"), ("type", "9")]),
        ("/jobgroup/pageList", vec![]),
        ("/jobgroup/loadById", vec![("id", "1")]),
        ("/user/pageList", vec![("role", "-1")]),
        ("/jobcode/save", vec![("id", &foreign_job), ("glueSource", "x"), ("glueRemark", "hack attempt")]),
    ];
    for (path, form) in refused {
        let reply = alice.post(path, &form).await?;
        ensure_eq!(reply["code"], 500, "{path} must be refused: {reply}");
        ensure!(reply["msg"].as_str().unwrap_or("").contains(en().get("system_permission_limit")), "{path}: {reply}");
    }
    let trigger = alice.post("/jobinfo/trigger", &[("id", &foreign_job)]).await?;
    ensure_eq!(trigger, json!({"code": 500, "msg": en().get("system_permission_limit"), "content": null}));
    // Moving a foreign job into a permitted group, or naming it as a child.
    let mut form = vec![
        ("id", foreign_job.as_str()), ("jobGroup", "1"), ("jobDesc", "stolen"), ("author", "a"), ("scheduleType", "NONE"),
        ("misfireStrategy", "DO_NOTHING"), ("executorRouteStrategy", "FIRST"), ("executorBlockStrategy", "SERIAL_EXECUTION"),
        ("executorHandler", "h"), ("glueType", "BEAN"),
    ];
    ensure_eq!(alice.post("/jobinfo/update", &form).await?["code"], 500);
    form.retain(|(k, _)| *k != "id");
    form.push(("childJobId", &foreign_job));
    let child = alice.post("/jobinfo/add", &form).await?;
    ensure!(child["msg"].as_str().unwrap_or("").contains(en().get("system_permission_limit")), "{child}");
    // A manual run may only target the group's own executors.
    let ssrf = admin_client.post("/jobinfo/trigger", &[("id", &foreign_job), ("addressList", "http://169.254.169.254/")]).await?;
    ensure_eq!(ssrf["code"], 500, "{ssrf}");
    let own = admin_client.post("/jobinfo/trigger", &[("id", &foreign_job), ("addressList", "http://10.9.9.9:9999/")]).await?;
    ensure_eq!(own["code"], 200, "{own}");
    let page = alice.get(&format!("/jobcode?jobId={foreign_job}")).await?;
    ensure!(page.body.contains(en().get("system_permission_limit")), "the GLUE page is refused");
    ensure!(store.load_job(foreign_job.parse().context("id")?).await.context("load")?.is_some(), "still there");
    app.stop().await;
    Ok(())
}

async fn validation_messages_follow_2_4_2(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let client = admin(&app).await?;
    let t = en();
    let base = [
        ("jobGroup", "1"), ("jobDesc", "d"), ("author", "a"), ("scheduleType", "CRON"), ("scheduleConf", "0 0 0 * * ?"),
        ("misfireStrategy", "DO_NOTHING"), ("executorRouteStrategy", "FIRST"), ("executorBlockStrategy", "SERIAL_EXECUTION"),
        ("executorHandler", "h"), ("glueType", "BEAN"),
    ];
    let with = |key: &'static str, value: &'static str| {
        let mut form: Vec<(&str, &str)> = base.iter().copied().filter(|(k, _)| *k != key).collect();
        form.push((key, value));
        form
    };
    let cases = [
        (with("jobGroup", "999"), format!("{}{}", t.get("system_please_choose"), t.get("jobinfo_field_jobgroup"))),
        (with("jobDesc", " "), format!("{}{}", t.get("system_please_input"), t.get("jobinfo_field_jobdesc"))),
        (with("scheduleType", "FIX_DELAY"), format!("{}{}", t.get("schedule_type"), t.get("system_unvalid"))),
        (with("scheduleConf", "0 0 0 * * *"), format!("Cron{}", t.get("system_unvalid"))),
        (with("glueType", "JAVA"), format!("{}{}", t.get("jobinfo_field_gluetype"), t.get("system_unvalid"))),
        (with("executorHandler", ""), format!("{}JobHandler", t.get("system_please_input"))),
        (with("executorRouteStrategy", "first"), format!("{}{}", t.get("jobinfo_field_executorRouteStrategy"), t.get("system_unvalid"))),
        (with("childJobId", "1,x"), format!("{}(x){}", t.get("jobinfo_field_childJobId"), t.get("system_unvalid"))),
        (with("childJobId", "777"), format!("{}(777){}", t.get("jobinfo_field_childJobId"), t.get("system_not_found"))),
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

async fn groups_users_and_glue(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let client = admin(&app).await?;
    let t = en();
    let saved = client.post("/jobgroup/save", &[("appname", "billing-app"), ("title", "Billing"), ("addressType", "1"), ("addressList", "http://a:1/,http://b:1/")]).await?;
    ensure_eq!(saved["code"], 200, "{saved}");
    let markup = client.post("/jobgroup/save", &[("appname", "x<script>"), ("title", "t"), ("addressType", "0")]).await?;
    ensure_eq!(markup["msg"], format!("AppName{}", t.get("system_unvalid")));
    let blank_item = client.post("/jobgroup/save", &[("appname", "abcd"), ("title", "t"), ("addressType", "1"), ("addressList", "a,,b")]).await?;
    ensure_eq!(blank_item["msg"], t.get("jobgroup_field_registryList_unvalid"));
    let groups = client.post("/jobgroup/pageList", &[("appname", "billing")]).await?;
    ensure_eq!(groups["recordsTotal"], 1);
    ensure_eq!(groups["data"][0]["registryList"], json!(["http://a:1/", "http://b:1/"]));
    let group_id = groups["data"][0]["id"].to_string();
    let loaded = client.post("/jobgroup/loadById", &[("id", &group_id)]).await?;
    ensure_eq!(loaded["content"]["appname"], "billing-app");
    let in_use = client.post("/jobgroup/remove", &[("id", "1")]).await?;
    ensure_eq!(in_use["msg"], t.get("jobgroup_del_limit_0"));
    ensure_eq!(client.post("/jobgroup/remove", &[("id", &group_id)]).await?["code"], 200);

    let users = client.post("/user/pageList", &[("role", "-1")]).await?;
    ensure_eq!(users["data"][0], json!({"id": 1, "username": "admin", "password": null, "role": 1, "permission": null}));
    ensure_eq!(client.post("/user/add", &[("username", "bob1"), ("password", "pw12")]).await?["code"], 200);
    ensure_eq!(client.post("/user/add", &[("username", "bob1"), ("password", "pw12")]).await?["msg"], t.get("user_username_repeat"));
    ensure_eq!(client.post("/user/add", &[("username", "bob2"), ("password", "pw")]).await?["msg"], format!("{}[4-20]", t.get("system_lengh_limit")));
    ensure_eq!(client.post("/user/update", &[("id", "1"), ("role", "0")]).await?["msg"], t.get("user_update_loginuser_limit"));
    ensure_eq!(client.post("/user/remove", &[("id", "1")]).await?["msg"], t.get("user_update_loginuser_limit"));

    let mut glue_job = job(1);
    glue_job.glue_type = "GLUE_SHELL".into();
    let glue_id = insert(&app.app.db, &glue_job).await?.to_string();
    for n in 0..32 {
        let source = format!("echo {n}");
        let saved = client.post("/jobcode/save", &[("id", &glue_id), ("glueSource", &source), ("glueRemark", &format!("version {n}"))]).await?;
        ensure_eq!(saved["code"], 200, "{saved}");
    }
    let history = app.app.db.glues_of_job(glue_id.parse().context("id")?).await.context("history")?;
    ensure_eq!(history.len(), 30, "30 versions are kept");
    ensure_eq!(history[0].glue_remark, "version 31");
    let short = client.post("/jobcode/save", &[("id", &glue_id), ("glueSource", "x"), ("glueRemark", "abc")]).await?;
    ensure_eq!(short["msg"], t.get("jobinfo_glue_remark_limit"));
    let page = client.get(&format!("/jobcode?jobId={glue_id}")).await?;
    ensure_eq!(page.status, 200);
    let chart = client.post("/chartInfo", &[("startDate", "2000-01-01 00:00:00"), ("endDate", "2000-01-02 00:00:00")]).await?;
    ensure_eq!(chart["content"]["triggerDayList"].as_array().map(Vec::len), Some(7), "seven empty days: {chart}");
    app.stop().await;
    Ok(())
}

async fn login_throttle(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let mut client = ConsoleClient::new(&app.base);
    for _ in 0..5 {
        ensure_eq!(client.login("admin", "guess", false).await?["msg"], en().get("login_param_unvalid"));
    }
    let blocked = client.login("admin", "123456", false).await?;
    ensure_eq!(blocked["code"], 500, "even the right password waits out the window: {blocked}");
    ensure!(client.cookie.is_none(), "no session");
    app.stop().await;
    Ok(())
}

/// A manual trigger, then the log list, the rolling log, kill, the chart and clearing, against an in-test
/// executor over HTTP.
async fn log_endpoints_reach_the_executor(backend: Backend) -> TestResult {
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
        let page = client.post("/joblog/pageList", &[("jobGroup", &group), ("jobId", &job_id), ("logStatus", "-1")]).await.ok()?;
        (page["data"][0]["triggerCode"] == 200).then(|| page["data"][0].clone())
    })
    .await?;
    ensure_eq!(log["executorParam"], "p=1");
    ensure_eq!(log["executorAddress"], executor.address.as_str());
    let log_id = log["id"].to_string();
    let running = client.post("/joblog/pageList", &[("jobGroup", &group), ("jobId", &job_id), ("logStatus", "3")]).await?;
    ensure_eq!(running["recordsTotal"], 1, "running filter: {running}");

    let lines = client.post("/joblog/logDetailCat", &[("logId", &log_id), ("fromLineNum", "1")]).await?;
    ensure_eq!(lines["code"], 200, "{lines}");
    ensure_eq!(lines["content"]["fromLineNum"], 1);
    ensure_eq!(lines["content"]["end"], false);
    let escaped = LOG_CONTENT.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('\'', "&#39;");
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
    let failed = client.post("/joblog/pageList", &[("jobGroup", &group), ("jobId", &job_id), ("logStatus", "2")]).await?;
    ensure_eq!(failed["recordsTotal"], 1, "fail filter: {failed}");

    let today = chrono::Local::now().format("%Y-%m-%d").to_string();
    let chart = client
        .post("/chartInfo", &[("startDate", &format!("{today} 00:00:00")), ("endDate", &format!("{today} 23:59:59"))])
        .await?;
    ensure_eq!(chart["code"], 200, "{chart}");
    for key in ["triggerDayList", "triggerDayCountRunningList", "triggerDayCountSucList", "triggerDayCountFailList"] {
        ensure!(chart["content"][key].is_array(), "{key} in {chart}");
    }

    let bad_type = client.post("/joblog/clearLog", &[("jobGroup", &group), ("jobId", &job_id), ("type", "10")]).await?;
    ensure_eq!(bad_type["code"], 500);
    let kept = client.post("/joblog/clearLog", &[("jobGroup", &group), ("jobId", &job_id), ("type", "1")]).await?;
    ensure_eq!(kept["code"], 200);
    ensure!(app.app.db.load_log(log_id.parse().context("id")?).await.context("load")?.is_some(), "a new log survives type 1");
    let cleared = client.post("/joblog/clearLog", &[("jobGroup", &group), ("jobId", &job_id), ("type", "9")]).await?;
    ensure_eq!(cleared["code"], 200);
    ensure!(app.app.db.load_log(log_id.parse().context("id")?).await.context("load")?.is_none(), "type 9 clears all");
    app.stop().await;
    Ok(())
}
