//! Logging in and out, the session cookie, the login throttle, and the refusal of cross-site and
//! foreign-origin requests.

use crate::support::console::{admin, en, job_form, ConsoleClient};
use crate::support::{Backend, Context, TestApp, TestDb};
use crate::{ensure, ensure_eq, TestResult};
use serde_json::json;
use xxl_job_admin::domain::codes::TriggerStatus;

pub(super) async fn login_gate_and_logout(backend: Backend) -> TestResult {
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

pub(super) async fn forged_and_legacy_cookies_never_authenticate(backend: Backend) -> TestResult {
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

pub(super) async fn cross_site_requests_are_refused(backend: Backend) -> TestResult {
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

pub(super) async fn password_change_ends_every_session(backend: Backend) -> TestResult {
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

pub(super) async fn login_throttle(backend: Backend) -> TestResult {
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

/// A foreign `Origin` (or a browser's cross-site fetch) is refused on every state-changing endpoint, before
/// anything happens; the same origin and scripts without one pass.
pub(super) async fn foreign_origin_is_refused_everywhere(backend: Backend) -> TestResult {
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
    ensure_eq!(
        store.load_job(1).await.context("load")?.context("job")?.trigger_status,
        TriggerStatus::Stopped,
        "not started"
    );
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
