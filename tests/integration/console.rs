//! The console's endpoints over HTTP: login and sessions, CSRF, permissions on every endpoint, and the
//! job, log, group, user and GLUE operations with 2.4.2's JSON.

use crate::support::console::ConsoleClient;
use crate::support::fixtures::{insert, job, json_date, local, local_ms, log, manual_group, titled_group};
use crate::support::{eventually, now_ms, Backend, Context, TestApp, TestDb};
use crate::support::{Behaviour, FakeExecutor, LOG_CONTENT};
use crate::{ensure, ensure_eq, Case, TestResult, ALL};
use serde_json::json;
use std::time::Duration;
use xxl_job_admin::i18n::I18n;
use xxl_job_admin::storage::Role;

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "console::login_gate_and_logout",
            backends: ALL,
            run: |b| Box::pin(login_gate_and_logout(b)),
        },
        Case {
            name: "console::the_console_points_to_what_it_offers",
            backends: &[Backend::Sqlite],
            run: |b| Box::pin(the_console_points_to_what_it_offers(b)),
        },
        Case {
            name: "console::forged_and_legacy_cookies_never_authenticate",
            backends: ALL,
            run: |b| Box::pin(forged_and_legacy_cookies_never_authenticate(b)),
        },
        Case {
            name: "console::cross_site_requests_are_refused",
            backends: ALL,
            run: |b| Box::pin(cross_site_requests_are_refused(b)),
        },
        Case {
            name: "console::password_change_ends_every_session",
            backends: ALL,
            run: |b| Box::pin(password_change_ends_every_session(b)),
        },
        Case { name: "console::job_lifecycle", backends: ALL, run: |b| Box::pin(job_lifecycle(b)) },
        Case {
            name: "console::restricted_user_is_confined_to_its_groups",
            backends: ALL,
            run: |b| Box::pin(restricted_user_is_confined_to_its_groups(b)),
        },
        Case {
            name: "console::validation_messages_follow_2_4_2",
            backends: &[Backend::Sqlite],
            run: |b| Box::pin(validation_messages_follow_2_4_2(b)),
        },
        Case {
            name: "console::groups_users_and_glue",
            backends: ALL,
            run: |b| Box::pin(groups_users_and_glue(b)),
        },
        Case {
            name: "console::log_endpoints_reach_the_executor",
            backends: ALL,
            run: |b| Box::pin(log_endpoints_reach_the_executor(b)),
        },
        Case {
            name: "console::login_throttle",
            backends: &[Backend::Sqlite],
            run: |b| Box::pin(login_throttle(b)),
        },
        Case {
            name: "console::job_list_paging_filters_and_shape",
            backends: ALL,
            run: |b| Box::pin(job_list_paging_filters_and_shape(b)),
        },
        Case {
            name: "console::job_messages_and_operations",
            backends: ALL,
            run: |b| Box::pin(job_messages_and_operations(b)),
        },
        Case {
            name: "console::log_list_detail_kill_and_clear",
            backends: ALL,
            run: |b| Box::pin(log_list_detail_kill_and_clear(b)),
        },
        Case {
            name: "console::executor_manager_endpoints",
            backends: ALL,
            run: |b| Box::pin(executor_manager_endpoints(b)),
        },
        Case {
            name: "console::user_manager_endpoints",
            backends: ALL,
            run: |b| Box::pin(user_manager_endpoints(b)),
        },
        Case {
            name: "console::every_endpoint_checks_the_group",
            backends: ALL,
            run: |b| Box::pin(every_endpoint_checks_the_group(b)),
        },
        Case {
            name: "console::dashboard_and_chart",
            backends: ALL,
            run: |b| Box::pin(dashboard_and_chart(b)),
        },
        Case {
            name: "console::hostile_text_is_data",
            backends: ALL,
            run: |b| Box::pin(hostile_text_is_data(b)),
        },
        Case {
            name: "console::rolling_log_kill_and_manual_run",
            backends: ALL,
            run: |b| Box::pin(rolling_log_kill_and_manual_run(b)),
        },
        Case {
            name: "console::foreign_origin_is_refused_everywhere",
            backends: &[Backend::Sqlite],
            run: |b| Box::pin(foreign_origin_is_refused_everywhere(b)),
        },
        Case {
            name: "console::envelopes_and_binding",
            backends: &[Backend::Sqlite],
            run: |b| Box::pin(envelopes_and_binding(b)),
        },
        Case {
            name: "console::clear_log_by_age_and_count",
            backends: ALL,
            run: |b| Box::pin(clear_log_by_age_and_count(b)),
        },
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
    // A page asked for is carried along, to return to after login; a data call or the dashboard is not.
    for (path, login) in [
        ("/jobinfo/pageList?jobGroup=0&triggerStatus=-1", "/xxl-job-admin/toLogin"),
        ("/jobinfo", "/xxl-job-admin/toLogin?redirect=/xxl-job-admin/jobinfo"),
        (
            "/joblog?jobId=3&x=a%20b",
            "/xxl-job-admin/toLogin?redirect=/xxl-job-admin/joblog%3FjobId%3D3%26x%3Da%2520b",
        ),
        ("/", "/xxl-job-admin/toLogin"),
    ] {
        let reply = client.get(path).await?;
        ensure_eq!(reply.status, 302, "{path}");
        ensure_eq!(reply.location.as_deref(), Some(login), "{path}");
    }
    let login_page = client.get("/toLogin").await?;
    ensure_eq!(login_page.status, 200);
    ensure!(login_page.content_type.starts_with("text/html"), "{}", login_page.content_type);

    let wrong = client.login("admin", "1234567", false).await?;
    ensure_eq!(wrong, json!({"code": 500, "msg": en().get("login_param_unvalid"), "content": null}));
    let blank = client.login("admin", " ", false).await?;
    ensure_eq!(blank["msg"], en().get("login_param_empty"));
    ensure!(client.cookie.is_none(), "no cookie after failures");

    let reply = client
        .request(
            reqwest::Method::POST,
            "/login",
            &[("userName", "admin"), ("password", "123456"), ("ifRemember", "on")],
            &[],
        )
        .await?;
    ensure_eq!(reply.json()?, json!({"code": 200, "msg": null, "content": null}));
    let set_cookie = reply.set_cookie.context("Set-Cookie")?;
    ensure!(set_cookie.starts_with("XXL_JOB_LOGIN_IDENTITY="), "{set_cookie}");
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age="] {
        ensure!(set_cookie.contains(attribute), "{attribute} in {set_cookie}");
    }
    client.cookie = set_cookie.split(';').next().map(str::to_string);
    let page = client.post("/jobinfo/pageList", &[("jobGroup", "0"), ("triggerStatus", "-1")]).await?;
    ensure_eq!(page["recordsTotal"], 1);
    ensure_eq!(page["recordsFiltered"], 1);
    ensure_eq!(page["data"][0]["jobDesc"], "测试任务1");
    ensure_eq!(
        page["data"][0]["glueUpdatetime"],
        "2018-11-03T14:21:31.000+00:00",
        "Shanghai wall clock as UTC ISO"
    );
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
        .request(
            reqwest::Method::POST,
            "/jobinfo/remove",
            &[("id", "1")],
            &[("Origin", "https://evil.example")],
        )
        .await?;
    ensure_eq!(foreign.status, 403);
    let fetch = client
        .request(reqwest::Method::GET, "/jobinfo/remove?id=1", &[], &[("Sec-Fetch-Site", "cross-site")])
        .await?;
    ensure_eq!(fetch.status, 403);
    let login = client
        .request(
            reqwest::Method::POST,
            "/login",
            &[("userName", "admin"), ("password", "123456")],
            &[("Origin", "https://evil.example")],
        )
        .await?;
    ensure_eq!(login.status, 403, "login CSRF too");
    ensure!(app.app.db.load_job(1).await.context("load")?.is_some(), "nothing was deleted");
    let same = client
        .request(
            reqwest::Method::POST,
            "/jobinfo/stop",
            &[("id", "1")],
            &[("Origin", &format!("http://{host}"))],
        )
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
    let wrong_old =
        first.post("/user/updatePwd", &[("oldPassword", "nope"), ("password", "new-secret")]).await?;
    ensure_eq!(wrong_old["code"], 500);
    let changed =
        first.post("/user/updatePwd", &[("oldPassword", "123456"), ("password", "new-secret")]).await?;
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

async fn restricted_user_is_confined_to_its_groups(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let admin_client = admin(&app).await?;
    let foreign_group = manual_group(store, "foreign-app", &["http://10.9.9.9:9999/"]).await?;
    let foreign_job = insert(store, &job(foreign_group)).await?.to_string();
    let foreign_log = store
        .insert_log(foreign_group, foreign_job.parse().context("id")?, now_ms())
        .await
        .context("log")?
        .to_string();
    let added = admin_client
        .post(
            "/user/add",
            &[("username", "alice"), ("password", "alice-pw"), ("role", "0"), ("permission", "1")],
        )
        .await?;
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
        ensure!(
            reply["msg"].as_str().unwrap_or("").contains(en().get("system_permission_limit")),
            "{path}: {reply}"
        );
    }
    let trigger = alice.post("/jobinfo/trigger", &[("id", &foreign_job)]).await?;
    ensure_eq!(trigger, json!({"code": 500, "msg": en().get("system_permission_limit"), "content": null}));
    // Moving a foreign job into a permitted group, or naming it as a child.
    let mut form = vec![
        ("id", foreign_job.as_str()),
        ("jobGroup", "1"),
        ("jobDesc", "stolen"),
        ("author", "a"),
        ("scheduleType", "NONE"),
        ("misfireStrategy", "DO_NOTHING"),
        ("executorRouteStrategy", "FIRST"),
        ("executorBlockStrategy", "SERIAL_EXECUTION"),
        ("executorHandler", "h"),
        ("glueType", "BEAN"),
    ];
    ensure_eq!(alice.post("/jobinfo/update", &form).await?["code"], 500);
    form.retain(|(k, _)| *k != "id");
    form.push(("childJobId", &foreign_job));
    let child = alice.post("/jobinfo/add", &form).await?;
    ensure!(child["msg"].as_str().unwrap_or("").contains(en().get("system_permission_limit")), "{child}");
    // A manual run may only target the group's own executors.
    let ssrf = admin_client
        .post("/jobinfo/trigger", &[("id", &foreign_job), ("addressList", "http://169.254.169.254/")])
        .await?;
    ensure_eq!(ssrf["code"], 500, "{ssrf}");
    let own = admin_client
        .post("/jobinfo/trigger", &[("id", &foreign_job), ("addressList", "http://10.9.9.9:9999/")])
        .await?;
    ensure_eq!(own["code"], 200, "{own}");
    let page = alice.get(&format!("/jobcode?jobId={foreign_job}")).await?;
    let refusal = format!("{}[username=alice]", en().get("system_permission_limit"));
    ensure!(is_error_page(&page, &refusal), "the GLUE page is refused");
    ensure!(
        store.load_job(foreign_job.parse().context("id")?).await.context("load")?.is_some(),
        "still there"
    );
    app.stop().await;
    Ok(())
}

async fn validation_messages_follow_2_4_2(backend: Backend) -> TestResult {
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
        (with("scheduleConf", "0 0 0 * * *"), format!("Cron{}", t.get("system_unvalid"))),
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

async fn groups_users_and_glue(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let client = admin(&app).await?;
    let t = en();
    let saved = client
        .post(
            "/jobgroup/save",
            &[
                ("appname", "billing-app"),
                ("title", "Billing"),
                ("addressType", "1"),
                ("addressList", "http://a:1/,http://b:1/"),
            ],
        )
        .await?;
    ensure_eq!(saved["code"], 200, "{saved}");
    let markup = client
        .post("/jobgroup/save", &[("appname", "x<script>"), ("title", "t"), ("addressType", "0")])
        .await?;
    ensure_eq!(markup["msg"], format!("AppName{}", t.get("system_unvalid")));
    let blank_item = client
        .post(
            "/jobgroup/save",
            &[("appname", "abcd"), ("title", "t"), ("addressType", "1"), ("addressList", "a,,b")],
        )
        .await?;
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
    ensure_eq!(
        users["data"][0],
        json!({"id": 1, "username": "admin", "password": null, "role": 1, "permission": null})
    );
    ensure_eq!(client.post("/user/add", &[("username", "bob1"), ("password", "pw12")]).await?["code"], 200);
    ensure_eq!(
        client.post("/user/add", &[("username", "bob1"), ("password", "pw12")]).await?["msg"],
        t.get("user_username_repeat")
    );
    ensure_eq!(
        client.post("/user/add", &[("username", "bob2"), ("password", "pw")]).await?["msg"],
        format!("{}[4-20]", t.get("system_lengh_limit"))
    );
    ensure_eq!(
        client.post("/user/update", &[("id", "1"), ("role", "0")]).await?["msg"],
        t.get("user_update_loginuser_limit")
    );
    ensure_eq!(
        client.post("/user/remove", &[("id", "1")]).await?["msg"],
        t.get("user_update_loginuser_limit")
    );

    let mut glue_job = job(1);
    glue_job.glue_type = "GLUE_SHELL".into();
    let glue_id = insert(&app.app.db, &glue_job).await?.to_string();
    for n in 0..32 {
        let source = format!("echo {n}");
        let saved = client
            .post(
                "/jobcode/save",
                &[("id", &glue_id), ("glueSource", &source), ("glueRemark", &format!("version {n}"))],
            )
            .await?;
        ensure_eq!(saved["code"], 200, "{saved}");
    }
    let history = app.app.db.glues_of_job(glue_id.parse().context("id")?).await.context("history")?;
    ensure_eq!(history.len(), 30, "30 versions are kept");
    ensure_eq!(history[0].glue_remark, "version 31");
    let short =
        client.post("/jobcode/save", &[("id", &glue_id), ("glueSource", "x"), ("glueRemark", "abc")]).await?;
    ensure_eq!(short["msg"], t.get("jobinfo_glue_remark_limit"));
    let page = client.get(&format!("/jobcode?jobId={glue_id}")).await?;
    ensure_eq!(page.status, 200);
    let chart = client
        .post("/chartInfo", &[("startDate", "2000-01-01 00:00:00"), ("endDate", "2000-01-02 00:00:00")])
        .await?;
    ensure_eq!(
        chart["content"]["triggerDayList"].as_array().map(Vec::len),
        Some(7),
        "seven empty days: {chart}"
    );
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

// ---------------------------------------------------------------------------------------------------------
// Every endpoint's JSON, defaults and messages (spec console 1.2–1.7, 8.1), and each permission rule.

/// The messages built from i18n keys, as the console concatenates them.
fn msg(keys: &[&str]) -> String {
    let t = en();
    keys.iter().map(|k| t.get(k)).collect()
}

fn fail(text: impl Into<String>) -> serde_json::Value {
    json!({"code": 500, "msg": text.into(), "content": null})
}

fn ok(content: serde_json::Value) -> serde_json::Value {
    json!({"code": 200, "msg": null, "content": content})
}

/// Whether a page answer is the standalone error page showing `message` (every other page carries the
/// whole i18n bundle, so finding a message's text alone proves nothing).
pub(crate) fn is_error_page(page: &crate::support::console::PageReply, message: &str) -> bool {
    page.status == 200
        && page.content_type.starts_with("text/html")
        && page.body.contains("System Error")
        && page.body.contains(&format!("<p>{}</p>", xxl_job_admin::domain::html::escape(message)))
}

/// The ids of a paging answer's rows, in order.
fn ids(page: &serde_json::Value) -> Vec<i64> {
    page["data"]
        .as_array()
        .map(|rows| rows.iter().filter_map(|r| r["id"].as_i64()).collect())
        .unwrap_or_default()
}

/// The 24 keys of a job object (spec 8.1).
const JOB_KEYS: [&str; 24] = [
    "id",
    "jobGroup",
    "jobDesc",
    "addTime",
    "updateTime",
    "author",
    "alarmEmail",
    "scheduleType",
    "scheduleConf",
    "misfireStrategy",
    "executorRouteStrategy",
    "executorHandler",
    "executorParam",
    "executorBlockStrategy",
    "executorTimeout",
    "executorFailRetryCount",
    "glueType",
    "glueSource",
    "glueRemark",
    "glueUpdatetime",
    "childJobId",
    "triggerStatus",
    "triggerLastTime",
    "triggerNextTime",
];

fn keys_of(value: &serde_json::Value) -> Vec<String> {
    let mut keys: Vec<String> = value.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
    keys.sort();
    keys
}

fn sorted(keys: &[&str]) -> Vec<String> {
    let mut keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    keys.sort();
    keys
}

/// A paging map: exactly the three keys, both counts equal.
fn ensure_page(page: &serde_json::Value, total: i64, ids_expected: &[i64], what: &str) -> TestResult {
    ensure_eq!(keys_of(page), sorted(&["recordsTotal", "recordsFiltered", "data"]), "{what}: {page}");
    ensure_eq!(page["recordsTotal"], total, "{what}: recordsTotal of {page}");
    ensure_eq!(page["recordsFiltered"], total, "{what}: recordsFiltered of {page}");
    ensure_eq!(ids(page), ids_expected.to_vec(), "{what}: row ids");
    Ok(())
}

async fn job_list_paging_filters_and_shape(backend: Backend) -> TestResult {
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
            (j.trigger_status, j.trigger_next_time) = (1, far);
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

/// A complete, valid job form for group 1.
/// What the console shows to find the REST API and to leave the default password: the token dialog's
/// base URL, OpenAPI link, Copy and Close; the warning's link to the password dialog; even dashboard boxes.
async fn the_console_points_to_what_it_offers(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let client = admin(&app).await?;
    let page = client.get("/").await?;
    ensure_eq!(page.status, 200);
    // The templates escape `/` in values.
    let body = page.body.replace("&#x2f;", "/");
    let t = en();
    for expected in [
        r#"data-path="/xxl-job-admin/openapi/v1""#.to_string(),
        format!(
            r#"href="/xxl-job-admin/openapi/v1/openapi.json" target="_blank" rel="noopener">{}</a>"#,
            t.get("api_token_openapi")
        ),
        r#"id="apiTokenCopy""#.to_string(),
        format!(r#"data-dismiss="modal">{}</button>"#, t.get("system_close")),
        format!(r#"id="defaultPasswordChange">{}</a>"#, t.get("change_pwd")),
        r#"class="row xj-even-row""#.to_string(),
    ] {
        ensure!(body.contains(&expected), "the page lacks {expected}");
    }
    let openapi = client.get("/openapi/v1/openapi.json").await?;
    ensure_eq!(openapi.status, 200, "the link leads to the document");
    app.stop().await;
    Ok(())
}

pub(crate) fn job_form() -> Vec<(&'static str, &'static str)> {
    vec![
        ("jobGroup", "1"),
        ("jobDesc", "d"),
        ("author", "a"),
        ("alarmEmail", ""),
        ("scheduleType", "CRON"),
        ("scheduleConf", "0 0 0 * * ?"),
        ("misfireStrategy", "DO_NOTHING"),
        ("executorRouteStrategy", "FIRST"),
        ("executorBlockStrategy", "SERIAL_EXECUTION"),
        ("executorHandler", "h"),
        ("executorParam", ""),
        ("executorTimeout", "0"),
        ("executorFailRetryCount", "0"),
        ("childJobId", ""),
        ("glueType", "BEAN"),
        ("glueSource", ""),
        ("glueRemark", "GLUE代码初始化"),
    ]
}

/// Form pairs.
type Form<'a> = Vec<(&'a str, &'a str)>;
/// Changes to a form (see [`form_with`]) and the message they must produce.
type FormCase<'a> = (Vec<(&'a str, Option<&'a str>)>, String);

/// `base` with `changes` applied: `(key, Some(value))` sets, `(key, None)` removes.
fn form_with<'a>(
    base: &[(&'a str, &'a str)],
    changes: &[(&'a str, Option<&'a str>)],
) -> Vec<(&'a str, &'a str)> {
    let mut form: Vec<(&str, &str)> = base.to_vec();
    for (key, value) in changes {
        form.retain(|(k, _)| k != key);
        if let Some(value) = value {
            form.push((key, value));
        }
    }
    form
}

async fn job_messages_and_operations(backend: Backend) -> TestResult {
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
        (vec![("scheduleConf", None)], format!("Cron{}", en().get("system_unvalid"))),
        (vec![("scheduleType", Some("FIX_RATE")), ("scheduleConf", None)], msg(&["schedule_type"])),
        (vec![("scheduleType", Some("FIX_RATE")), ("scheduleConf", Some("0"))], unvalid("schedule_type")),
        (vec![("scheduleType", Some("FIX_RATE")), ("scheduleConf", Some("x"))], unvalid("schedule_type")),
        (
            vec![("scheduleType", Some("FIX_RATE")), ("scheduleConf", Some("2147483648"))],
            unvalid("schedule_type"),
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
        (0, 0, 0),
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
        (vec![("scheduleConf", Some("* * *"))], format!("Cron{}", en().get("system_unvalid"))),
        (vec![("scheduleType", Some("FIX_RATE")), ("scheduleConf", None)], unvalid("schedule_type")),
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
    ensure_eq!(started.trigger_status, 1);
    ensure_eq!(client.post("/jobinfo/stop", &[("id", &shell_id)]).await?, ok(json!(null)));
    let stopped = store.load_job(stored.id).await.context("load")?.context("job")?;
    ensure_eq!((stopped.trigger_status, stopped.trigger_last_time, stopped.trigger_next_time), (0, 0, 0));

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
    // Our prefix, then the parser's reason, kept apart.
    let prefix = format!("{}: ", unvalid("schedule_type"));
    for form in [
        vec![("scheduleType", "FIX_RATE"), ("scheduleConf", "x")],
        vec![("scheduleType", "CRON"), ("scheduleConf", "bad")],
        vec![("scheduleType", "CRON")],
    ] {
        let reply = client.post("/jobinfo/nextTriggerTime", &form).await?;
        ensure_eq!(
            (reply["code"].clone(), reply["content"].clone()),
            (json!(500), json!(null)),
            "{form:?}: {reply}"
        );
        ensure!(reply["msg"].as_str().is_some_and(|m| m.starts_with(&prefix)), "{form:?}: {reply}");
    }
    app.stop().await;
    Ok(())
}

async fn log_list_detail_kill_and_clear(backend: Backend) -> TestResult {
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
        let _ = store.update_alarm_status(id, 0, 2).await;
        eventually(Duration::from_secs(15), "alarm status settled", || async move {
            (store.load_log(id).await.ok()??.alarm_status == 2).then_some(())
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

async fn executor_manager_endpoints(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let client = admin(&app).await?;
    let unvalid = |key: &str| msg(&[key, "system_unvalid"]);
    let long_name = "a".repeat(65);
    let save =
        [("appname", "valid-app"), ("title", "Valid"), ("addressType", "1"), ("addressList", "http://a:1/")];
    let save_cases: Vec<FormCase> = vec![
        (vec![("appname", None)], format!("{}AppName", en().get("system_please_input"))),
        (vec![("appname", Some("   "))], format!("{}AppName", en().get("system_please_input"))),
        (vec![("appname", Some("abc"))], msg(&["jobgroup_field_appname_length"])),
        (vec![("appname", Some(&long_name))], msg(&["jobgroup_field_appname_length"])),
        (vec![("appname", Some("app>x"))], format!("AppName{}", en().get("system_unvalid"))),
        (vec![("title", None)], msg(&["system_please_input", "jobgroup_field_title"])),
        (vec![("title", Some("a<b"))], unvalid("jobgroup_field_title")),
        (vec![("addressList", None)], msg(&["jobgroup_field_addressType_limit"])),
        (vec![("addressList", Some(" "))], msg(&["jobgroup_field_addressType_limit"])),
        (vec![("addressList", Some("http://a:1/<x>"))], unvalid("jobgroup_field_registryList")),
        (vec![("addressList", Some(",http://a:1/"))], msg(&["jobgroup_field_registryList_unvalid"])),
        (vec![("appname", Some("a😀"))], msg(&["jobgroup_field_appname_length"])),
        // The column holds 12 characters; refused with the form's own message rather than a database error.
        (vec![("title", Some("thirteen-char"))], msg(&["jobgroup_field_title_length"])),
    ];
    for (changes, expected) in &save_cases {
        ensure_eq!(
            client.post("/jobgroup/save", &form_with(&save, changes)).await?,
            fail(expected.clone()),
            "save with {changes:?}"
        );
    }
    ensure_eq!(
        client.status_of("/jobgroup/save", &form_with(&save, &[("addressType", Some("x"))])).await?,
        400
    );
    ensure_eq!(store.all_groups().await.context("groups")?.len(), 1, "nothing was saved");

    for (appname, title, kind, list) in [
        ("gamma-app", "Gamma", "1", "http://g:1/"),
        ("alpha-app", "Alpha", "1", "http://a:1/,http://b:1/,"),
        ("beta-app", "Beta", "0", ""),
    ] {
        let reply = client
            .post(
                "/jobgroup/save",
                &[("appname", appname), ("title", title), ("addressType", kind), ("addressList", list)],
            )
            .await?;
        ensure_eq!(reply, ok(json!(null)), "{appname}");
    }
    // Ordered by appname; filters; an offset and a length.
    let groups = store.all_groups().await.context("groups")?;
    let id_of = |name: &str| groups.iter().find(|g| g.app_name == name).map(|g| g.id as i64).unwrap_or(-1);
    let (alpha, beta, gamma, sample) = (id_of("alpha-app"), id_of("beta-app"), id_of("gamma-app"), 1);
    ensure_page(
        &client.post("/jobgroup/pageList", &[]).await?,
        4,
        &[alpha, beta, gamma, sample],
        "defaults",
    )?;
    ensure_page(
        &client.post("/jobgroup/pageList", &[("start", "1"), ("length", "2")]).await?,
        4,
        &[beta, gamma],
        "paging",
    )?;
    ensure_page(
        &client.post("/jobgroup/pageList", &[("appname", "-app")]).await?,
        3,
        &[alpha, beta, gamma],
        "appname",
    )?;
    ensure_page(&client.post("/jobgroup/pageList", &[("title", "amm")]).await?, 1, &[gamma], "title")?;
    ensure_page(
        &client.post("/jobgroup/pageList", &[("appname", "a"), ("title", "Be")]).await?,
        1,
        &[beta],
        "both",
    )?;
    ensure_page(&client.get_json("/jobgroup/pageList/?appname=nothing").await?, 0, &[], "none")?;

    // The group object: loadById and the list rows alike.
    let loaded = client.post("/jobgroup/loadById", &[("id", &alpha.to_string())]).await?;
    let update_time = loaded["content"]["updateTime"].as_str().context("updateTime")?.to_string();
    ensure!(
        chrono::DateTime::parse_from_rfc3339(&update_time).is_ok() && update_time.ends_with(".000+00:00"),
        "{update_time}"
    );
    let alpha_json = json!({
        "id": alpha, "appname": "alpha-app", "title": "Alpha", "addressType": 1, "addressList": "http://a:1/,http://b:1/,",
        "updateTime": update_time, "registryList": ["http://a:1/", "http://b:1/"],
    });
    ensure_eq!(loaded, ok(alpha_json.clone()));
    ensure_eq!(client.post("/jobgroup/pageList", &[("appname", "alpha")]).await?["data"][0], alpha_json);
    let auto = client.post("/jobgroup/loadById", &[("id", &beta.to_string())]).await?;
    ensure_eq!(
        (auto["content"]["addressType"].clone(), auto["content"]["registryList"].clone()),
        (json!(0), json!(null)),
        "{auto}"
    );
    ensure_eq!(
        client.post("/jobgroup/loadById", &[("id", "99999")]).await?,
        json!({"code": 500, "msg": null, "content": null})
    );
    ensure_eq!(client.post("/jobgroup/loadById", &[]).await?["code"], 500, "id is required");

    // Update: its checks, manual lists as sent, automatic lists from the live registry.
    let update = [
        ("id", "0"),
        ("appname", "gamma-app"),
        ("title", "Gamma2"),
        ("addressType", "1"),
        ("addressList", "http://h:1/"),
    ];
    let gamma_id = gamma.to_string();
    let update = form_with(&update, &[("id", Some(&gamma_id))]);
    let update_cases: Vec<FormCase> = vec![
        (vec![("appname", Some(""))], format!("{}AppName", en().get("system_please_input"))),
        (vec![("appname", Some("ab"))], msg(&["jobgroup_field_appname_length"])),
        (vec![("title", Some(" "))], msg(&["system_please_input", "jobgroup_field_title"])),
        (vec![("addressList", Some(""))], msg(&["jobgroup_field_addressType_limit"])),
        (
            vec![("addressList", Some("http://h:1/, ,http://i:1/"))],
            msg(&["jobgroup_field_registryList_unvalid"]),
        ),
        (vec![("title", Some("<b>x</b>"))], unvalid("jobgroup_field_title")),
    ];
    for (changes, expected) in &update_cases {
        ensure_eq!(
            client.post("/jobgroup/update", &form_with(&update, changes)).await?,
            fail(expected.clone()),
            "update with {changes:?}"
        );
    }
    ensure_eq!(client.post("/jobgroup/update", &update).await?, ok(json!(null)));
    let gamma_row = store.load_group(gamma as i32).await.context("load")?.context("group")?;
    ensure_eq!(
        (gamma_row.title.as_str(), gamma_row.address_list.as_deref()),
        ("Gamma2", Some("http://h:1/"))
    );
    let now = now_ms();
    for address in ["http://z:9/", "http://y:9/"] {
        let key = xxl_job_admin::storage::RegistryKey {
            registry_group: "EXECUTOR".into(),
            registry_key: "gamma-app".into(),
            registry_value: address.into(),
        };
        store.registry_upsert(&key, now, 1000).await.context("registry")?;
    }
    let automatic =
        form_with(&update, &[("addressType", Some("0")), ("addressList", Some("http://ignored:1/"))]);
    ensure_eq!(client.post("/jobgroup/update", &automatic).await?, ok(json!(null)));
    let gamma_auto = client.post("/jobgroup/loadById", &[("id", &gamma_id)]).await?;
    ensure_eq!(
        gamma_auto["content"]["addressList"],
        "http://y:9/,http://z:9/",
        "live registrations, sorted: {gamma_auto}"
    );
    ensure_eq!(gamma_auto["content"]["registryList"], json!(["http://y:9/", "http://z:9/"]));
    let beta_auto = form_with(&automatic, &[("id", Some("0")), ("appname", Some("beta-app"))]);
    let beta_id = beta.to_string();
    let beta_auto = form_with(&beta_auto, &[("id", Some(&beta_id))]);
    ensure_eq!(client.post("/jobgroup/update", &beta_auto).await?, ok(json!(null)));
    let beta_row = client.post("/jobgroup/loadById", &[("id", &beta_id)]).await?;
    ensure_eq!(
        (beta_row["content"]["addressList"].clone(), beta_row["content"]["registryList"].clone()),
        (json!(null), json!(null)),
        "no registrations: {beta_row}"
    );
    let ghost = form_with(&update, &[("id", Some("99999"))]);
    ensure_eq!(
        client.post("/jobgroup/update", &ghost).await?,
        json!({"code": 500, "msg": null, "content": null})
    );

    // Remove: in use, unknown, and never the last group.
    ensure_eq!(client.post("/jobgroup/remove", &[("id", "1")]).await?, fail(msg(&["jobgroup_del_limit_0"])));
    ensure_eq!(
        client.post("/jobgroup/remove", &[("id", "99999")]).await?,
        json!({"code": 500, "msg": null, "content": null})
    );
    for id in [alpha, beta, gamma] {
        ensure_eq!(
            client.post("/jobgroup/remove", &[("id", &id.to_string())]).await?,
            ok(json!(null)),
            "remove {id}"
        );
    }
    ensure_eq!(client.post("/jobinfo/remove", &[("id", "1")]).await?, ok(json!(null)));
    ensure_eq!(client.post("/jobgroup/remove", &[("id", "1")]).await?, fail(msg(&["jobgroup_del_limit_1"])));
    ensure_eq!(store.all_groups().await.context("groups")?.len(), 1);
    let page = client.get("/jobgroup").await?;
    ensure_eq!((page.status, page.content_type.starts_with("text/html")), (200, true));
    app.stop().await;
    Ok(())
}

async fn user_manager_endpoints(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let client = admin(&app).await?;
    let length = format!("{}[4-20]", en().get("system_lengh_limit"));
    let base = [("username", "newuser"), ("password", "secret1"), ("role", "0"), ("permission", "1")];
    let long_password = "p".repeat(21);
    let add_cases: Vec<FormCase> = vec![
        (vec![("username", None)], msg(&["system_please_input", "user_username"])),
        (vec![("username", Some("  "))], msg(&["system_please_input", "user_username"])),
        (vec![("username", Some(" abc "))], length.clone()),
        (vec![("username", Some("abcdefghijklmnopqrstu"))], length.clone()),
        (vec![("password", None)], msg(&["system_please_input", "user_password"])),
        (vec![("password", Some(" "))], msg(&["system_please_input", "user_password"])),
        (vec![("password", Some(" abc "))], length.clone()),
        (vec![("password", Some(&long_password))], length.clone()),
        (vec![("username", Some("admin"))], msg(&["user_username_repeat"])),
        (vec![("username", Some("😀"))], length.clone()),
        (vec![("password", Some("a😀"))], length.clone()),
    ];
    for (changes, expected) in &add_cases {
        ensure_eq!(
            client.post("/user/add", &form_with(&base, changes)).await?,
            fail(expected.clone()),
            "add with {changes:?}"
        );
    }
    ensure_eq!(client.status_of("/user/add", &form_with(&base, &[("role", Some("admin"))])).await?, 400);
    for form in [
        vec![("username", " carol "), ("password", " carol-pw "), ("role", "0"), ("permission", "1")],
        vec![("username", "dave1"), ("password", "dave-pw"), ("role", "1"), ("permission", "")],
        vec![("username", "erin"), ("password", "erin-pw")],
    ] {
        ensure_eq!(client.post("/user/add", &form).await?, ok(json!(null)), "{form:?}");
    }
    // Lengths count UTF-16 units, as Java does: two emoji are four.
    ensure_eq!(
        client.post("/user/add", &[("username", "😀😀"), ("password", "😀😀")]).await?,
        ok(json!(null))
    );
    ensure_eq!(ConsoleClient::new(&app.base).login("😀😀", "😀😀", false).await?, ok(json!(null)));
    ensure_eq!(
        client
            .post(
                "/user/remove",
                &[(
                    "id",
                    &store.load_user_by_name("😀😀").await.context("load")?.context("emoji")?.id.to_string()
                )]
            )
            .await?,
        ok(json!(null))
    );
    let id_of = |name: &'static str| async move {
        store.load_user_by_name(name).await.ok().flatten().map(|u| u.id as i64).unwrap_or(-1)
    };
    let (carol, dave, erin) = (id_of("carol").await, id_of("dave1").await, id_of("erin").await);
    ensure!(carol > 0 && dave > 0 && erin > 0, "the names are stored trimmed");
    let mut carol_login = ConsoleClient::new(&app.base);
    ensure_eq!(
        carol_login.login("carol", "carol-pw", false).await?,
        ok(json!(null)),
        "the password is stored trimmed"
    );

    // pageList: ordered by name, role and name filters, paging, never a password hash.
    let list = client.post("/user/pageList", &[("role", "-1")]).await?;
    ensure_page(&list, 4, &[1, carol, dave, erin], "all users")?;
    ensure_eq!(
        list["data"][1],
        json!({"id": carol, "username": "carol", "password": null, "role": 0, "permission": "1"})
    );
    ensure_eq!(
        list["data"][2],
        json!({"id": dave, "username": "dave1", "password": null, "role": 1, "permission": ""})
    );
    ensure_eq!(
        list["data"][3],
        json!({"id": erin, "username": "erin", "password": null, "role": 0, "permission": null})
    );
    let raw = client.request(reqwest::Method::POST, "/user/pageList", &[("role", "-1")], &[]).await?.body;
    for hash in
        ["e10adc3949ba59abbe56e057f20f883e", &xxl_job_admin::http::console::session::md5_hex("carol-pw")]
    {
        ensure!(!raw.contains(hash), "no password hash in {raw}");
    }
    ensure_page(&client.post("/user/pageList", &[("role", "0")]).await?, 2, &[carol, erin], "role 0")?;
    ensure_page(&client.post("/user/pageList", &[("role", "1")]).await?, 2, &[1, dave], "role 1")?;
    ensure_page(
        &client.post("/user/pageList", &[("role", "-1"), ("username", "ar")]).await?,
        1,
        &[carol],
        "name",
    )?;
    ensure_page(
        &client.post("/user/pageList", &[("role", "-1"), ("start", "1"), ("length", "2")]).await?,
        4,
        &[carol, dave],
        "paging",
    )?;
    ensure_page(
        &client.post("/user/pageList", &[("role", "-1"), ("username", "' OR ''='")]).await?,
        0,
        &[],
        "quotes are data",
    )?;
    ensure_eq!(client.post("/user/pageList", &[]).await?["code"], 500, "role is required");

    // update: role and permission by id, the password only when given, never oneself.
    let carol_id = carol.to_string();
    ensure_eq!(
        client
            .post(
                "/user/update",
                &[("id", &carol_id), ("username", "carol"), ("password", "abc"), ("role", "0")]
            )
            .await?,
        fail(length.clone())
    );
    ensure_eq!(
        client
            .post(
                "/user/update",
                &[
                    ("id", &carol_id),
                    ("username", "carol"),
                    ("password", ""),
                    ("role", "1"),
                    ("permission", "")
                ]
            )
            .await?,
        ok(json!(null))
    );
    let carol_row = store.load_user(carol as i32).await.context("load")?.context("carol")?;
    ensure_eq!(
        (carol_row.role, carol_row.permission.as_deref(), carol_row.username.as_str()),
        (Role::Admin, Some(""), "carol")
    );
    ensure_eq!(
        ConsoleClient::new(&app.base).login("carol", "carol-pw", false).await?["code"],
        200,
        "an empty password keeps the old one"
    );
    ensure_eq!(
        client
            .post(
                "/user/update",
                &[
                    ("id", &carol_id),
                    ("username", "renamed"),
                    ("password", " new-pw "),
                    ("role", "0"),
                    ("permission", "1")
                ]
            )
            .await?,
        ok(json!(null))
    );
    ensure_eq!(
        ConsoleClient::new(&app.base).login("carol", "new-pw", false).await?["code"],
        200,
        "the new password, trimmed"
    );
    ensure_eq!(
        store.load_user(carol as i32).await.context("load")?.context("carol")?.username,
        "carol",
        "the name never changes"
    );
    ensure_eq!(carol_login.get("/").await?.status, 302, "a changed password ends the user's sessions");
    ensure_eq!(
        client.post("/user/update", &[("id", "1"), ("username", "someone"), ("role", "0")]).await?,
        fail(msg(&["user_update_loginuser_limit"])),
        "own id, other name"
    );
    ensure_eq!(
        store.load_user(1).await.context("load")?.context("admin")?.role,
        Role::Admin,
        "the admin was not demoted"
    );

    // Role changes and removal take effect on the user's next request.
    let mut demoted = ConsoleClient::new(&app.base);
    ensure_eq!(demoted.login("dave1", "dave-pw", false).await?["code"], 200);
    ensure!(
        demoted.post("/user/pageList", &[("role", "-1")]).await?["recordsTotal"].is_i64(),
        "an admin lists users"
    );
    ensure_eq!(
        client
            .post(
                "/user/update",
                &[("id", &dave.to_string()), ("username", "dave1"), ("role", "0"), ("permission", "")]
            )
            .await?,
        ok(json!(null))
    );
    ensure_eq!(
        demoted.post("/user/pageList", &[("role", "-1")]).await?,
        fail(msg(&["system_permission_limit"])),
        "demoted at once"
    );
    ensure_eq!(
        client
            .post(
                "/user/update",
                &[("id", &dave.to_string()), ("username", "dave1"), ("role", "1"), ("permission", "")]
            )
            .await?,
        ok(json!(null))
    );
    let mut erin_client = ConsoleClient::new(&app.base);
    ensure_eq!(erin_client.login("erin", "erin-pw", false).await?["code"], 200);

    // remove: others yes (unknown ids too), oneself no.
    ensure_eq!(client.post("/user/remove", &[("id", &erin.to_string())]).await?, ok(json!(null)));
    ensure!(store.load_user(erin as i32).await.context("load")?.is_none(), "erin removed");
    ensure_eq!(erin_client.get("/").await?.status, 302, "a removed user's session ends");
    ensure_eq!(client.post("/user/remove", &[("id", "99999")]).await?, ok(json!(null)));
    ensure_eq!(
        client.post("/user/update", &[("id", "99999"), ("username", "ghost"), ("role", "0")]).await?,
        ok(json!(null)),
        "no row: still a success"
    );
    ensure_eq!(client.post("/user/remove", &[]).await?["code"], 500, "id is required");

    // updatePwd for any user: its checks, in order.
    let mut dave_client = ConsoleClient::new(&app.base);
    ensure_eq!(dave_client.login("dave1", "dave-pw", false).await?["code"], 200);
    let pwd_cases: Vec<(Vec<(&str, &str)>, String)> = vec![
        (vec![("password", "dave-new")], msg(&["system_please_input", "change_pwd_field_oldpwd"])),
        (
            vec![("oldPassword", " "), ("password", "dave-new")],
            msg(&["system_please_input", "change_pwd_field_oldpwd"]),
        ),
        (vec![("oldPassword", "dave-pw")], msg(&["system_please_input", "change_pwd_field_newpwd"])),
        (vec![("oldPassword", "dave-pw"), ("password", " ab ")], length.clone()),
        (
            vec![("oldPassword", "wrong-pw"), ("password", "dave-new")],
            msg(&["change_pwd_field_oldpwd", "system_unvalid"]),
        ),
        (
            vec![("oldPassword", " dave-pw"), ("password", "dave-new")],
            msg(&["change_pwd_field_oldpwd", "system_unvalid"]),
        ),
        (vec![("oldPassword", "dave-pw"), ("password", "dave-pw")], msg(&["change_pwd_same"])),
    ];
    for (form, expected) in &pwd_cases {
        ensure_eq!(dave_client.post("/user/updatePwd", form).await?, fail(expected.clone()), "{form:?}");
    }
    ensure_eq!(
        dave_client
            .post("/user/updatePwd", &[("oldPassword", "dave-pw"), ("password", " dave-new ")])
            .await?,
        ok(json!(null))
    );
    let dave_row = store.load_user(dave as i32).await.context("load")?.context("dave")?;
    ensure_eq!(
        (dave_row.role, dave_row.permission.as_deref()),
        (Role::Admin, Some("")),
        "role and permission unchanged"
    );
    ensure_eq!(ConsoleClient::new(&app.base).login("dave1", "dave-new", false).await?["code"], 200);
    let page = client.get("/user").await?;
    ensure_eq!((page.status, page.content_type.starts_with("text/html")), (200, true));
    app.stop().await;
    Ok(())
}

/// Every rule of spec console 3 for a role-0 user, on every endpoint, with the answers' exact JSON; and
/// that the refused requests changed nothing.
async fn every_endpoint_checks_the_group(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let admin_client = admin(&app).await?;
    let own_executor = FakeExecutor::start(Behaviour::default()).await?;
    let stranger = FakeExecutor::start(Behaviour::default()).await?;
    let own_group = titled_group(store, "own-app", "Own grp", &[&own_executor.address]).await?;
    let foreign_group = titled_group(store, "foreign-app", "Foreign grp", &["http://10.9.9.9:9999/"]).await?;
    let mut glue = job(foreign_group);
    glue.glue_type = "GLUE_SHELL".into();
    glue.glue_source = Some("echo foreign".into());
    let foreign_job = insert(store, &glue).await?;
    let own_job = insert(store, &job(own_group)).await?;
    let foreign_log =
        log(store, foreign_group, foreign_job, now_ms() - 5_000, 200, 0, "http://10.9.9.9:9999/").await?;
    let permission = format!("1,{own_group}");
    let added = admin_client
        .post(
            "/user/add",
            &[("username", "alice"), ("password", "alice-pw"), ("role", "0"), ("permission", &permission)],
        )
        .await?;
    ensure_eq!(added, ok(json!(null)));
    let mut alice = ConsoleClient::new(&app.base);
    ensure_eq!(alice.login("alice", "alice-pw", false).await?, ok(json!(null)));

    let refused = fail(format!("{}[username=alice]", en().get("system_permission_limit")));
    let admin_only = fail(msg(&["system_permission_limit"]));
    let (fg, fj, fl, og, oj) = (
        foreign_group.to_string(),
        foreign_job.to_string(),
        foreign_log.to_string(),
        own_group.to_string(),
        own_job.to_string(),
    );
    fn full_job(group: &str) -> Vec<(&str, &str)> {
        form_with(&job_form(), &[("jobGroup", Some(group))])
    }
    let move_own = form_with(&full_job(&fg), &[("id", Some(&oj))]);
    let pull_foreign = form_with(&full_job(&og), &[("id", Some(&fj))]);
    let cases: Vec<(&str, Form, &serde_json::Value)> = vec![
        ("/jobinfo/pageList", vec![("jobGroup", &fg), ("triggerStatus", "-1")], &refused),
        ("/jobinfo/add", full_job(&fg), &refused),
        ("/jobinfo/update", move_own, &refused),
        ("/jobinfo/update", pull_foreign, &refused),
        ("/jobinfo/remove", vec![("id", &fj)], &refused),
        ("/jobinfo/start", vec![("id", &fj)], &refused),
        ("/jobinfo/stop", vec![("id", &fj)], &refused),
        ("/joblog/getJobsByGroup", vec![("jobGroup", &fg)], &refused),
        ("/joblog/pageList", vec![("jobGroup", &fg), ("jobId", "0"), ("logStatus", "-1")], &refused),
        ("/joblog/pageList", vec![("jobGroup", &og), ("jobId", &fj), ("logStatus", "-1")], &refused),
        ("/joblog/pageList", vec![("jobGroup", "0"), ("jobId", "0"), ("logStatus", "-1")], &refused),
        ("/joblog/logDetailCat", vec![("logId", &fl), ("fromLineNum", "1")], &refused),
        ("/joblog/logKill", vec![("id", &fl)], &refused),
        ("/joblog/clearLog", vec![("jobGroup", &fg), ("jobId", "0"), ("type", "9")], &refused),
        ("/joblog/clearLog", vec![("jobGroup", &og), ("jobId", &fj), ("type", "9")], &refused),
        ("/joblog/clearLog", vec![("jobGroup", "0"), ("jobId", "0"), ("type", "9")], &refused),
        (
            "/jobcode/save",
            vec![("id", &fj), ("glueSource", "echo pwned"), ("glueRemark", "takeover")],
            &refused,
        ),
        ("/jobgroup/pageList", vec![], &admin_only),
        (
            "/jobgroup/save",
            vec![("appname", "evil-app"), ("title", "Evil"), ("addressType", "0")],
            &admin_only,
        ),
        (
            "/jobgroup/update",
            vec![
                ("id", &fg),
                ("appname", "foreign-app"),
                ("title", "Mine"),
                ("addressType", "1"),
                ("addressList", "http://evil:1/"),
            ],
            &admin_only,
        ),
        ("/jobgroup/remove", vec![("id", &fg)], &admin_only),
        ("/jobgroup/loadById", vec![("id", &og)], &admin_only),
        ("/user/pageList", vec![("role", "-1")], &admin_only),
        ("/user/add", vec![("username", "mallory"), ("password", "mallory-pw"), ("role", "1")], &admin_only),
        (
            "/user/update",
            vec![("id", "1"), ("username", "x"), ("password", "hijacked"), ("role", "0")],
            &admin_only,
        ),
        ("/user/remove", vec![("id", "1")], &admin_only),
    ];
    for (path, form, expected) in &cases {
        ensure_eq!(alice.post(path, form).await?, **expected, "{path} {form:?}");
    }
    // Children in a foreign group, on add and on update.
    let child =
        format!("{}({fj}){}", en().get("jobinfo_field_childJobId"), en().get("system_permission_limit"));
    let with_child = form_with(&full_job(&og), &[("childJobId", Some(&fj))]);
    ensure_eq!(alice.post("/jobinfo/add", &with_child).await?, fail(child.clone()));
    let update_child = form_with(&with_child, &[("id", Some(&oj))]);
    ensure_eq!(alice.post("/jobinfo/update", &update_child).await?, fail(child));
    ensure_eq!(
        alice.post("/jobinfo/trigger", &[("id", &fj)]).await?,
        fail(msg(&["system_permission_limit"]))
    );
    // Pages.
    // Every page carries the whole i18n bundle, so a refusal is recognised by the error page itself.
    let with_name = format!("{}[username=alice]", en().get("system_permission_limit"));
    let pages = [
        ("/jobgroup".to_string(), en().get("system_permission_limit").to_string()),
        ("/user".to_string(), en().get("system_permission_limit").to_string()),
        (format!("/joblog?jobId={fj}"), with_name.clone()),
        (format!("/joblog/logDetailPage?id={fl}"), with_name.clone()),
        (format!("/jobcode?jobId={fj}"), with_name.clone()),
    ];
    for (path, message) in pages {
        let page = alice.get(&path).await?;
        ensure!(
            is_error_page(&page, &message) && !page.body.contains("echo foreign"),
            "{path} refused: {}",
            page.body
        );
    }
    for path in ["/jobinfo", "/joblog"] {
        let page = alice.get(path).await?;
        ensure!(page.body.contains("Own grp"), "{path} offers the own group");
        ensure!(!page.body.contains("Foreign grp"), "{path} hides the foreign group");
    }
    // Nothing changed.
    let foreign = store.load_job(foreign_job).await.context("load")?.context("foreign job")?;
    ensure_eq!(
        (foreign.job_group, foreign.glue_source.as_deref(), foreign.trigger_status),
        (foreign_group, Some("echo foreign"), 0)
    );
    ensure_eq!(
        store.load_job(own_job).await.context("load")?.context("own job")?.job_group,
        own_group,
        "not moved out"
    );
    ensure!(
        store.load_log(foreign_log).await.context("load")?.is_some_and(|l| l.handle_code == 0),
        "the foreign log is untouched"
    );
    ensure_eq!(store.all_groups().await.context("groups")?.len(), 3);
    ensure!(store.load_user_by_name("mallory").await.context("load")?.is_none(), "no user added");
    ensure_eq!(store.load_user(1).await.context("load")?.context("admin")?.role, Role::Admin);
    ensure!(store.glues_of_job(foreign_job).await.context("glue")?.is_empty(), "no GLUE version saved");

    // A manual run's addressList may only name the job's own group's executors.
    let foreign_address =
        format!("{}: {}", msg(&["jobgroup_field_registryList", "system_unvalid"]), stranger.address);
    ensure_eq!(
        alice.post("/jobinfo/trigger", &[("id", &oj), ("addressList", &stranger.address)]).await?,
        fail(foreign_address.clone())
    );
    let mixed = format!("{},{}", own_executor.address, stranger.address);
    ensure_eq!(
        alice.post("/jobinfo/trigger", &[("id", &oj), ("addressList", &mixed)]).await?,
        fail(foreign_address)
    );
    ensure_eq!(
        alice.post("/jobinfo/trigger", &[("id", &oj), ("addressList", "http://10.9.9.9:9999/")]).await?
            ["code"],
        500,
        "another group's executor"
    );
    ensure_eq!(
        alice
            .post(
                "/jobinfo/trigger",
                &[("id", &oj), ("addressList", &own_executor.address), ("executorParam", "x")]
            )
            .await?,
        ok(json!(null))
    );
    eventually(Duration::from_secs(10), "the run on the own executor", || async {
        (!own_executor.calls_to("/run").is_empty()).then_some(())
    })
    .await?;
    ensure!(stranger.calls().is_empty(), "nothing was sent elsewhere: {:?}", stranger.calls().len());

    // Alice's own groups work end to end.
    let listed = alice.post("/jobinfo/pageList", &[("jobGroup", "0"), ("triggerStatus", "-1")]).await?;
    ensure_eq!(listed["recordsTotal"], 2, "group 1's seed job and the own job: {listed}");
    let added = alice.post("/jobinfo/add", &full_job(&og)).await?;
    let new_id = added["content"].as_str().context("new id")?.to_string();
    let edit =
        form_with(&full_job("1"), &[("id", Some(&new_id)), ("jobDesc", Some("moved between own groups"))]);
    ensure_eq!(alice.post("/jobinfo/update", &edit).await?, ok(json!(null)));
    ensure_eq!(alice.post("/jobinfo/start", &[("id", &new_id)]).await?, ok(json!(null)));
    ensure_eq!(alice.post("/jobinfo/stop", &[("id", &new_id)]).await?, ok(json!(null)));
    ensure_eq!(alice.post("/joblog/getJobsByGroup", &[("jobGroup", "1")]).await?["code"], 200);
    ensure_eq!(
        alice.post("/joblog/pageList", &[("jobGroup", &og), ("jobId", &oj), ("logStatus", "-1")]).await?
            ["recordsTotal"],
        1
    );
    ensure_eq!(
        alice.post("/joblog/clearLog", &[("jobGroup", "1"), ("jobId", "0"), ("type", "9")]).await?,
        ok(json!(null))
    );
    ensure_eq!(alice.post("/jobinfo/remove", &[("id", &new_id)]).await?, ok(json!(null)));
    ensure_eq!(
        alice
            .post("/jobinfo/nextTriggerTime", &[("scheduleType", "FIX_RATE"), ("scheduleConf", "5")])
            .await?["code"],
        200
    );
    ensure_eq!(alice.post("/chartInfo", &[]).await?["code"], 200);
    ensure_eq!(alice.get("/").await?.status, 200);

    // Permission changes apply on the next request; no permission at all leaves nothing to see.
    let grant = format!("{permission},{fg}");
    let alice_id = store.load_user_by_name("alice").await.context("load")?.context("alice")?.id.to_string();
    ensure_eq!(
        admin_client
            .post(
                "/user/update",
                &[("id", &alice_id), ("username", "alice"), ("role", "0"), ("permission", &grant)]
            )
            .await?,
        ok(json!(null))
    );
    ensure_eq!(alice.post("/joblog/getJobsByGroup", &[("jobGroup", &fg)]).await?["code"], 200);
    ensure_eq!(
        admin_client
            .post(
                "/user/update",
                &[("id", &alice_id), ("username", "alice"), ("role", "0"), ("permission", "")]
            )
            .await?,
        ok(json!(null))
    );
    ensure_eq!(
        alice.post("/jobinfo/pageList", &[("jobGroup", "0"), ("triggerStatus", "-1")]).await?["recordsTotal"],
        0
    );
    let empty = alice.get("/jobinfo").await?;
    ensure!(is_error_page(&empty, en().get("jobgroup_empty")), "no executor to show: {}", empty.body);
    ensure_eq!(
        alice.post("/joblog/pageList", &[("jobGroup", "1"), ("jobId", "0"), ("logStatus", "-1")]).await?,
        refused
    );
    // A password change needs the old password, for every user.
    ensure_eq!(
        alice.post("/user/updatePwd", &[("oldPassword", "guess"), ("password", "alice-new")]).await?,
        fail(msg(&["change_pwd_field_oldpwd", "system_unvalid"]))
    );
    ensure_eq!(
        alice.post("/user/updatePwd", &[("oldPassword", "alice-pw"), ("password", "alice-new")]).await?,
        ok(json!(null))
    );
    app.stop().await;
    Ok(())
}

async fn dashboard_and_chart(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let client = admin(&app).await?;
    manual_group(store, "dash-one", &["http://a:1/", "http://b:1/"]).await?;
    manual_group(store, "dash-two", &["http://b:1/", "http://c:1/"]).await?;
    let day = |text: &str| local(&format!("{text} 00:00:00"));
    let counts = |running, success, fail| xxl_job_admin::storage::DayCounts {
        total: running + success + fail,
        running,
        success,
    };
    store.save_report(day("2001-02-03"), &counts(1, 2, 3)).await.context("report")?;
    store.save_report(day("2001-02-05"), &counts(4, 5, 6)).await.context("report")?;

    let chart = client
        .post("/chartInfo", &[("startDate", "2001-02-01 00:00:00"), ("endDate", "2001-02-28 23:59:59")])
        .await?;
    ensure_eq!(
        chart,
        ok(json!({
            "triggerDayList": ["2001-02-03", "2001-02-05"],
            "triggerDayCountRunningList": [1, 4],
            "triggerDayCountSucList": [2, 5],
            "triggerDayCountFailList": [3, 6],
            "triggerCountRunningTotal": 5,
            "triggerCountSucTotal": 7,
            "triggerCountFailTotal": 9,
        })),
        "rows as stored, no gap filling"
    );
    let one =
        client.get_json("/chartInfo?startDate=2001-02-03%2000:00:00&endDate=2001-02-03%2000:00:00").await?;
    ensure_eq!(one["content"]["triggerDayList"], json!(["2001-02-03"]), "both ends inclusive: {one}");
    ensure_eq!(one["content"]["triggerCountFailTotal"], 3);
    for form in [vec![], vec![("startDate", "2001-02-01 00:00:00")], vec![("startDate", ""), ("endDate", "")]]
    {
        let empty = client.post("/chartInfo", &form).await?;
        let content = &empty["content"];
        let days: Vec<chrono::NaiveDate> = content["triggerDayList"]
            .as_array()
            .context("days")?
            .iter()
            .filter_map(|d| d.as_str().and_then(|d| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").ok()))
            .collect();
        ensure_eq!(days.len(), 7, "{form:?}: {empty}");
        ensure!(days.windows(2).all(|w| (w[1] - w[0]).num_days() == 1), "consecutive days: {empty}");
        ensure!((days[6] - chrono::Local::now().date_naive()).num_days().abs() <= 1, "ending today: {empty}");
        for key in ["triggerDayCountRunningList", "triggerDayCountSucList", "triggerDayCountFailList"] {
            ensure_eq!(content[key], json!([0, 0, 0, 0, 0, 0, 0]), "{key}");
        }
        for key in ["triggerCountRunningTotal", "triggerCountSucTotal", "triggerCountFailTotal"] {
            ensure_eq!(content[key], 0, "{key}");
        }
        ensure_eq!((empty["code"].clone(), empty["msg"].clone()), (json!(200), json!(null)));
    }
    for bad in ["2001-02-30 00:00:00", "2001-02-03", "yesterday"] {
        ensure_eq!(
            client.status_of("/chartInfo", &[("startDate", bad), ("endDate", "2001-02-28 23:59:59")]).await?,
            400,
            "{bad}"
        );
    }

    let dashboard = client.get("/").await?;
    ensure_eq!(dashboard.status, 200);
    for fragment in
        ["id=\"jobInfoCount\">1<", "id=\"jobLogCount\" data-success=\"7\">21<", "id=\"executorCount\">3<"]
    {
        ensure!(dashboard.body.contains(fragment), "{fragment} in the dashboard");
    }
    app.stop().await;
    Ok(())
}

/// Markup and SQL in every text field are data: stored and returned verbatim, matched literally, escaped
/// in pages.
async fn hostile_text_is_data(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let client = admin(&app).await?;
    let desc = "<script>alert('desc')</script>";
    let author = "x'); DROP TABLE xxl_job_info; --";
    let param = "\"; DELETE FROM xxl_job_user; -- <img src=x onerror=alert(1)>";
    let source = "#!/bin/bash\necho '</textarea><script>alert(2)</script>'";
    let remark = "' OR 1=1 -- <b>";
    let form = form_with(
        &job_form(),
        &[
            ("jobDesc", Some(desc)),
            ("author", Some(author)),
            ("executorParam", Some(param)),
            ("alarmEmail", Some("a@b.c'--")),
            ("glueType", Some("GLUE_SHELL")),
            ("glueSource", Some(source)),
            ("glueRemark", Some(remark)),
        ],
    );
    let added = client.post("/jobinfo/add", &form).await?;
    let id = added["content"].as_str().context("id")?.to_string();
    let found = client
        .post("/jobinfo/pageList", &[("jobGroup", "1"), ("triggerStatus", "-1"), ("author", author)])
        .await?;
    ensure_eq!(found["recordsTotal"], 1, "matched literally: {found}");
    let row = &found["data"][0];
    ensure_eq!(
        (row["jobDesc"].as_str(), row["author"].as_str(), row["executorParam"].as_str()),
        (Some(desc), Some(author), Some(param))
    );
    ensure_eq!(
        (row["glueSource"].as_str(), row["glueRemark"].as_str(), row["alarmEmail"].as_str()),
        (Some(source), Some(remark), Some("a@b.c'--"))
    );
    ensure_eq!(
        client.post("/jobinfo/pageList", &[("jobGroup", "0"), ("triggerStatus", "-1")]).await?
            ["recordsTotal"],
        2,
        "the table is intact"
    );
    ensure_eq!(
        client
            .post("/jobcode/save", &[("id", &id), ("glueSource", source), ("glueRemark", "<i>v2</i> '--")])
            .await?,
        ok(json!(null))
    );
    let history = store.glues_of_job(id.parse().context("id")?).await.context("history")?;
    ensure_eq!(
        (history[0].glue_source.as_deref(), history[0].glue_remark.as_str()),
        (Some(source), "<i>v2</i> '--")
    );
    let ide = client.get(&format!("/jobcode?jobId={id}")).await?;
    ensure_eq!(ide.status, 200);
    for raw in ["<script>alert('desc')</script>", "</textarea><script>alert(2)</script>", "<i>v2</i>"] {
        ensure!(!ide.body.contains(raw), "{raw} is escaped in the GLUE page");
    }
    let log_page = client.get(&format!("/joblog?jobId={id}")).await?;
    ensure!(!log_page.body.contains(desc), "the job description is escaped in the log page");

    let title = "t'\"--;x";
    ensure_eq!(
        client
            .post(
                "/jobgroup/save",
                &[
                    ("appname", "quote-app'--"),
                    ("title", title),
                    ("addressType", "1"),
                    ("addressList", "http://q:1/'--")
                ]
            )
            .await?,
        ok(json!(null))
    );
    let group = client.post("/jobgroup/pageList", &[("appname", "quote-app'--")]).await?;
    ensure_eq!(
        (
            group["recordsTotal"].clone(),
            group["data"][0]["title"].clone(),
            group["data"][0]["addressList"].clone()
        ),
        (json!(1), json!(title), json!("http://q:1/'--"))
    );
    let jobs_page = client.get("/jobinfo").await?;
    ensure!(!jobs_page.body.contains(title), "the group title is escaped in the job page");
    ensure_eq!(
        client
            .post(
                "/user/add",
                &[
                    ("username", "o'brien--"),
                    ("password", "pw' OR '1"),
                    ("role", "0"),
                    ("permission", "1' OR '1'='1")
                ]
            )
            .await?,
        ok(json!(null))
    );
    let users = client.post("/user/pageList", &[("role", "-1"), ("username", "o'brien")]).await?;
    ensure_eq!(users["data"][0]["permission"], "1' OR '1'='1");
    // Over-long values: the column's limit on MySQL and PostgreSQL, as a clear failure that names no SQL.
    let long_desc = "d".repeat(300);
    let too_long =
        client.post("/jobinfo/add", &form_with(&job_form(), &[("jobDesc", Some(&long_desc))])).await?;
    if backend != Backend::Sqlite {
        ensure_eq!(too_long["code"], 500, "{too_long}");
        let text = too_long["msg"].as_str().unwrap_or("").to_lowercase();
        ensure!(
            !text.contains("xxl_job_info") && !text.contains("insert") && !text.contains("exception"),
            "no SQL or class names: {too_long}"
        );
    } else {
        ensure_eq!(too_long["code"], 200, "SQLite has no column lengths: {too_long}");
    }
    let mut quoted = ConsoleClient::new(&app.base);
    ensure_eq!(quoted.login("o'brien--", "pw' OR '1", false).await?, ok(json!(null)));
    ensure_eq!(
        ConsoleClient::new(&app.base).login("o'brien--", "' OR '1'='1", false).await?,
        fail(msg(&["login_param_unvalid"]))
    );
    ensure_eq!(
        quoted.post("/joblog/getJobsByGroup", &[("jobGroup", "2")]).await?["code"],
        500,
        "a permission string is not SQL either"
    );
    app.stop().await;
    Ok(())
}

/// The rolling log's and the kill's answers against an in-test executor, and what a manual run sends.
async fn rolling_log_kill_and_manual_run(backend: Backend) -> TestResult {
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

/// A foreign `Origin` (or a browser's cross-site fetch) is refused on every state-changing endpoint, before
/// anything happens; the same origin and scripts without one pass.
async fn foreign_origin_is_refused_everywhere(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let client = admin(&app).await?;
    let port = app.app.addr.port();
    let other_port = format!("http://127.0.0.1:{}", port.wrapping_add(1));
    let attempts: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("/jobinfo/add", job_form()),
        ("/jobinfo/trigger", vec![("id", "1")]),
        ("/jobinfo/start", vec![("id", "1")]),
        ("/joblog/clearLog", vec![("jobGroup", "1"), ("jobId", "0"), ("type", "9")]),
        ("/jobgroup/save", vec![("appname", "evil-app"), ("title", "Evil"), ("addressType", "0")]),
        ("/user/add", vec![("username", "mallory"), ("password", "mallory-pw"), ("role", "1")]),
        ("/user/updatePwd", vec![("oldPassword", "123456"), ("password", "stolen1")]),
        ("/jobcode/save", vec![("id", "1"), ("glueSource", "x"), ("glueRemark", "takeover")]),
        ("/logout", vec![]),
    ];
    for (path, form) in &attempts {
        for origin in ["https://evil.example", "null", other_port.as_str()] {
            let reply = client.request(reqwest::Method::POST, path, form, &[("Origin", origin)]).await?;
            ensure_eq!(reply.status, 403, "{path} from {origin}");
        }
        let fetch =
            client.request(reqwest::Method::POST, path, form, &[("Sec-Fetch-Site", "cross-site")]).await?;
        ensure_eq!(fetch.status, 403, "{path} as a cross-site fetch");
    }
    ensure_eq!(store.count_jobs().await.context("count")?, 1, "no job added");
    ensure_eq!(store.load_job(1).await.context("load")?.context("job")?.trigger_status, 0, "not started");
    ensure_eq!(store.all_groups().await.context("groups")?.len(), 1);
    ensure!(store.load_user_by_name("mallory").await.context("load")?.is_none(), "no user added");
    ensure_eq!(client.get("/").await?.status, 200, "the session and the password survived");
    let same = format!("http://127.0.0.1:{port}");
    let own = client
        .request(
            reqwest::Method::POST,
            "/jobinfo/nextTriggerTime",
            &[("scheduleType", "FIX_RATE"), ("scheduleConf", "5")],
            &[("Origin", &same), ("Sec-Fetch-Site", "same-origin")],
        )
        .await?;
    ensure_eq!((own.status, own.json()?["code"].clone()), (200, json!(200)), "same origin");
    // Reading pages is not state-changing: a link from elsewhere still opens the console.
    let linked =
        client.request(reqwest::Method::GET, "/jobinfo", &[], &[("Sec-Fetch-Site", "cross-site")]).await?;
    ensure_eq!(linked.status, 200, "a cross-site navigation to a page");
    app.stop().await;
    Ok(())
}

/// Spec console 0.1–0.3: content types, the paging map without `draw`, parameters from the query string,
/// url-encoded and multipart bodies merged, trailing slashes, logout without a session.
async fn envelopes_and_binding(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let client = admin(&app).await?;
    let reply = client
        .request(
            reqwest::Method::POST,
            "/jobinfo/pageList?jobGroup=1",
            &[("triggerStatus", "-1"), ("draw", "3")],
            &[],
        )
        .await?;
    ensure!(reply.content_type.starts_with("application/json"), "{}", reply.content_type);
    ensure_page(&reply.json()?, 1, &[1], "query and body merged, draw ignored")?;
    let error = client.request(reqwest::Method::POST, "/jobinfo/stop", &[("id", "99999")], &[]).await?;
    ensure!(
        error.status == 200 && error.content_type.starts_with("application/json"),
        "{} {}",
        error.status,
        error.content_type
    );
    ensure_eq!(
        keys_of(&error.json()?),
        sorted(&["code", "msg", "content"]),
        "all three keys, nulls included"
    );

    let boundary = "----console-test-boundary";
    let mut body = String::new();
    for (name, value) in [("jobGroup", "1"), ("triggerStatus", "0"), ("jobDesc", "测试")] {
        body.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        ));
    }
    body.push_str(&format!("--{boundary}--\r\n"));
    let multipart = app
        .http
        .post(app.url("/jobinfo/pageList/"))
        .header(reqwest::header::COOKIE, client.cookie.clone().context("cookie")?)
        .header(reqwest::header::CONTENT_TYPE, format!("multipart/form-data; boundary={boundary}"))
        .body(body)
        .send()
        .await
        .context("multipart")?;
    let page: serde_json::Value = multipart.json().await.context("JSON")?;
    ensure_page(&page, 1, &[1], "a multipart form")?;
    let json_body = app
        .http
        .post(app.url("/jobinfo/pageList?jobGroup=1&triggerStatus=-1"))
        .header(reqwest::header::COOKIE, client.cookie.clone().context("cookie")?)
        .json(&json!({"triggerStatus": 1}))
        .send()
        .await
        .context("json body")?;
    ensure_page(&json_body.json().await.context("JSON")?, 1, &[1], "a JSON body is not read")?;

    // Pages: the pre-selected executor and job.
    let second = manual_group(&app.app.db, "second-app", &["http://127.0.0.1:1/"]).await?;
    let jobs = client.get(&format!("/jobinfo?jobGroup={second}")).await?;
    ensure!(
        jobs.body.contains(&format!("<option value=\"{second}\" selected>")),
        "the asked executor is pre-selected"
    );
    let unmarked = client.get("/jobinfo").await?.body;
    ensure!(
        !unmarked.contains(&format!("<option value=\"{second}\" selected>"))
            && !unmarked.contains("<option value=\"1\" selected>"),
        "-1: the first option, nothing marked"
    );
    ensure_eq!(client.get("/jobinfo?jobGroup=x").await?.status, 400);
    let logs = client.get("/joblog?jobId=1").await?;
    ensure!(
        logs.body.contains("<option value=\"1\" selected>"),
        "the job's executor and the job are pre-selected"
    );
    ensure!(
        logs.body.contains("<option value=\"1\" selected>测试任务1</option>"),
        "the job by its description"
    );
    ensure!(
        is_error_page(&client.get("/joblog/logDetailPage").await?, "required parameter 'id' is missing"),
        "id is required"
    );
    let to_login = client.get("/toLogin/").await?;
    ensure_eq!((to_login.status, to_login.location.as_deref()), (303, Some("/xxl-job-admin/")));
    let anonymous = ConsoleClient::new(&app.base);
    let logout = anonymous.request(reqwest::Method::POST, "/logout", &[], &[]).await?;
    ensure_eq!((logout.status, logout.set_cookie.clone()), (200, None), "no cookie to clear");
    ensure_eq!(logout.json()?, ok(json!(null)));
    for path in
        ["/chartInfo", "/user/updatePwd", "/jobgroup/loadById?id=1", "/jobcode/save", "/joblog/logDetailCat"]
    {
        let reply = anonymous.get(path).await?;
        ensure_eq!(
            (reply.status, reply.location.as_deref(), reply.body.as_str()),
            (302, Some("/xxl-job-admin/toLogin"), ""),
            "{path}"
        );
    }
    // A name sent twice binds as Spring binds it: a string joins the values with commas, a number takes the first.
    let repeated = [
        ("username", "twice1"),
        ("password", "pw1234"),
        ("role", "0"),
        ("role", "1"),
        ("permission", "1"),
        ("permission", "2"),
    ];
    ensure_eq!(client.post("/user/add", &repeated).await?, ok(json!(null)));
    let twice = app.app.db.load_user_by_name("twice1").await.context("user")?.context("twice1 stored")?;
    ensure_eq!((twice.role, twice.permission.as_deref()), (Role::Normal, Some("1,2")));
    app.stop().await;
    Ok(())
}

/// `/joblog/clearLog` types 1–4 by age and 5–8 by count, within the group and job scope.
async fn clear_log_by_age_and_count(backend: Backend) -> TestResult {
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
