//! The executor (group) manager, and groups, users and GLUE together.

use crate::support::console::{admin, en, ensure_page, fail, form_with, msg, ok, FormCase};
use crate::support::fixtures::{insert, job};
use crate::support::{now_ms, Backend, Context, TestApp, TestDb};
use crate::{ensure, ensure_eq, TestResult};
use serde_json::json;

pub(super) async fn groups_users_and_glue(backend: Backend) -> TestResult {
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

pub(super) async fn executor_manager_endpoints(backend: Backend) -> TestResult {
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
