//! What every endpoint shares: content types, the paging map, parameter binding, and text taken as data.

use crate::support::console::{
    admin, ensure_page, fail, form_with, is_error_page, job_form, keys_of, msg, ok, sorted, ConsoleClient,
};
use crate::support::fixtures::manual_group;
use crate::support::{Backend, Context, TestApp, TestDb};
use crate::{ensure, ensure_eq, TestResult};
use serde_json::json;
use xxl_job_admin::storage::Role;

/// 2.4.2's envelopes, binding and login gate: content types, the paging map without `draw`, parameters from
/// the query string, url-encoded and multipart bodies merged, trailing slashes, logout without a session.
pub(super) async fn envelopes_and_binding(backend: Backend) -> TestResult {
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

/// Markup and SQL in every text field are data: stored and returned verbatim, matched literally, escaped
/// in pages.
pub(super) async fn hostile_text_is_data(backend: Backend) -> TestResult {
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
