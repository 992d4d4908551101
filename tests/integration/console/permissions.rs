//! What a restricted (role 0) user may reach: its own groups only, on every endpoint.

use crate::support::console::{
    admin, en, fail, form_with, is_error_page, job_form, msg, ok, ConsoleClient, Form,
};
use crate::support::fixtures::{insert, job, log, manual_group, titled_group};
use crate::support::{eventually, now_ms, Backend, Behaviour, Context, FakeExecutor, TestApp, TestDb};
use crate::{ensure, ensure_eq, TestResult};
use serde_json::json;
use std::time::Duration;
use xxl_job_admin::domain::codes::TriggerStatus;
use xxl_job_admin::storage::Role;

pub(super) async fn restricted_user_is_confined_to_its_groups(backend: Backend) -> TestResult {
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

/// Every group rule (2.4.2: XxlJobUser.validPermission) for a role-0 user, on every endpoint, with the
/// answers' exact JSON; and that the refused requests changed nothing.
pub(super) async fn every_endpoint_checks_the_group(backend: Backend) -> TestResult {
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
        (foreign_group, Some("echo foreign"), TriggerStatus::Stopped)
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
