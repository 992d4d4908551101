//! The audit trail (docs/audit.md): each console and REST operation leaves its event in the JSON-lines
//! file with actor, address, kind, target, outcome and changed fields; failed sign-ins and permission
//! refusals are events; no password, hash, token or cookie reaches the file; the console's audit page
//! reads and filters it; the webhook receives events and a hanging one slows nothing; the address honours
//! `server.forward-headers-strategy`.

use crate::support::console::ConsoleClient;
use crate::support::fixtures::log;
use crate::support::rest::RestClient;
use crate::support::webhook::WebhookServer;
use crate::support::{eventually, now_ms, Backend, Context, TestApp, TestDb};
use crate::{cases, ensure, ensure_eq, Case, TestResult, SQLITE};
use libtest_mimic::Failed;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

/// SQLite, and a server the operations' rows round-trip through.
const BACKENDS: &[Backend] = &[Backend::Sqlite, Backend::Postgres];

pub fn cases() -> Vec<Case> {
    cases! {
        "audit" {
            BACKENDS => console_operations_leave_events,
            BACKENDS => rest_operations_leave_events,
            SQLITE => the_page_reads_and_filters_the_file,
            SQLITE => the_webhook_receives_events_without_slowing_requests,
        }
    }
}

/// The admin with its audit file in `dir`.
async fn audited_app(db: &TestDb, dir: &Path, extra: &[&str]) -> Result<TestApp, Failed> {
    let file = format!("--xxl.job.audit.file={}", dir.join("audit.jsonl").display());
    let mut args = vec![file.as_str()];
    args.extend_from_slice(extra);
    TestApp::start(db, &args).await
}

/// The file's events, oldest first.
fn events(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("audit.jsonl")).unwrap_or_default();
    text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect()
}

/// The events so far, once one of `kind` and `outcome` is there (the file is written in the background).
async fn written(dir: &Path, kind: &str, outcome: &str) -> Result<Vec<Value>, Failed> {
    eventually(Duration::from_secs(10), &format!("a {kind} event ({outcome})"), || async {
        let all = events(dir);
        all.iter().any(|e| e["kind"] == kind && e["outcome"] == outcome).then_some(all)
    })
    .await
}

/// The one event of `kind` whose target (or actor) matches `pick`.
fn one<'a>(
    events: &'a [Value],
    kind: &str,
    outcome: &str,
    pick: impl Fn(&Value) -> bool,
) -> Result<&'a Value, Failed> {
    let found: Vec<&Value> =
        events.iter().filter(|e| e["kind"] == kind && e["outcome"] == outcome && pick(e)).collect();
    match found.as_slice() {
        [event] => Ok(event),
        other => Err(format!("{} {kind} ({outcome}) events instead of one: {other:?}", other.len()).into()),
    }
}

fn by(event: &Value, user: &str, via: &str) -> TestResult {
    ensure_eq!(event["actor"]["userName"], user, "{event}");
    ensure_eq!(event["actor"]["via"], via, "{event}");
    ensure_eq!(event["address"], "127.0.0.1", "{event}");
    // RFC 3339 with an offset, the same instant as epochMs.
    let time = chrono::DateTime::parse_from_rfc3339(event["time"].as_str().unwrap_or("")).context("time")?;
    ensure_eq!(Some(time.timestamp_millis()), event["epochMs"].as_i64(), "{event}");
    ensure!((now_ms() - time.timestamp_millis()).abs() < 600_000, "{event}");
    Ok(())
}

fn change(event: &Value, field: &str, before: Value, after: Value) -> TestResult {
    ensure_eq!(event["changes"][field], json!({"before": before, "after": after}), "{field} in {event}");
    Ok(())
}

async fn logged_in(app: &TestApp, user: &str, password: &str) -> Result<ConsoleClient, Failed> {
    let mut client = ConsoleClient::new(&app.base);
    let reply = client.login(user, password, false).await?;
    ensure_eq!(reply["code"], 200, "login of {user}: {reply}");
    Ok(client)
}

async fn ok(client: &ConsoleClient, path: &str, form: &[(&str, &str)]) -> Result<Value, Failed> {
    let reply = client.post(path, form).await?;
    ensure_eq!(reply["code"], 200, "{path}: {reply}");
    Ok(reply)
}

fn job_form<'a>(group: &'a str, desc: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("jobGroup", group),
        ("jobDesc", desc),
        ("author", "auditor"),
        ("alarmEmail", ""),
        ("scheduleType", "CRON"),
        ("scheduleConf", "0 0 0 * * ?"),
        ("misfireStrategy", "DO_NOTHING"),
        ("executorRouteStrategy", "FIRST"),
        ("executorBlockStrategy", "SERIAL_EXECUTION"),
        ("executorHandler", ""),
        ("executorParam", ""),
        ("executorTimeout", "0"),
        ("executorFailRetryCount", "0"),
        ("childJobId", ""),
        ("glueType", "GLUE_SHELL"),
        ("glueSource", "echo one"),
        ("glueRemark", "first version"),
    ]
}

/// Neither a password, its hash, the session cookie nor a token is in the file.
fn no_secret(dir: &Path, secrets: &[&str]) -> TestResult {
    let text = std::fs::read_to_string(dir.join("audit.jsonl")).context("audit file")?;
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        ensure!(!text.contains(secret), "the audit file holds a secret: {secret}");
    }
    Ok(())
}

fn md5(text: &str) -> String {
    xxl_job_admin::http::console::session::md5_hex(text)
}

async fn console_operations_leave_events(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let dir = tempfile::tempdir().context("dir")?;
    let app = audited_app(&db, dir.path(), &[]).await?;
    let store = &app.app.db;

    // Sign-ins: a wrong password, an unknown name, then the right one.
    let mut admin = ConsoleClient::new(&app.base);
    ensure_eq!(admin.login("admin", "wrong-pass", false).await?["code"], 500);
    ensure_eq!(admin.login("nobody-here", "whatever-pw", false).await?["code"], 500);
    let admin = logged_in(&app, "admin", "123456").await?;

    // Executors.
    ok(
        &admin,
        "/jobgroup/save",
        &[("appname", "audit-app"), ("title", "Audit"), ("addressType", "1"), ("addressList", "127.0.0.1:9")],
    )
    .await?;
    let group = store
        .all_groups()
        .await
        .context("groups")?
        .into_iter()
        .find(|g| g.app_name == "audit-app")
        .context("audit-app")?;
    let gid = group.id.to_string();
    ok(
        &admin,
        "/jobgroup/update",
        &[
            ("id", &gid),
            ("appname", "audit-app"),
            ("title", "Audit two"),
            ("addressType", "1"),
            ("addressList", "127.0.0.1:9"),
        ],
    )
    .await?;

    // A job: add, update, GLUE, start, stop, run once.
    let added = ok(&admin, "/jobinfo/add", &job_form(&gid, "nightly report")).await?;
    let jid = added["content"].as_str().context("job id")?.to_string();
    let mut update = job_form(&gid, "nightly summary");
    update.push(("id", &jid));
    ok(&admin, "/jobinfo/update", &update).await?;
    ok(
        &admin,
        "/jobcode/save",
        &[("id", &jid), ("glueSource", "echo two"), ("glueRemark", "second version")],
    )
    .await?;
    ok(&admin, "/jobinfo/start", &[("id", &jid)]).await?;
    ok(&admin, "/jobinfo/stop", &[("id", &jid)]).await?;
    ok(&admin, "/jobinfo/trigger", &[("id", &jid), ("executorParam", "by hand")]).await?;

    // A run to kill on an executor that is not there, and the logs cleared.
    let job_id: i32 = jid.parse().context("id")?;
    let log_id = log(store, group.id, job_id, now_ms(), 200, 0, "http://127.0.0.1:9/").await?;
    ensure_eq!(admin.post("/joblog/logKill", &[("id", &log_id.to_string())]).await?["code"], 500);
    ok(&admin, "/joblog/clearLog", &[("jobGroup", &gid), ("jobId", "0"), ("type", "9")]).await?;

    // Users; a restricted user refused an administrator's page and another group's job.
    ok(
        &admin,
        "/user/add",
        &[("username", "auditee"), ("password", "first-secret"), ("role", "0"), ("permission", "")],
    )
    .await?;
    let auditee_id =
        store.load_user_by_name("auditee").await.context("load")?.context("auditee")?.id.to_string();
    ok(
        &admin,
        "/user/update",
        &[
            ("id", &auditee_id),
            ("username", "auditee"),
            ("password", "second-secret"),
            ("role", "0"),
            ("permission", "1"),
        ],
    )
    .await?;
    let auditee = logged_in(&app, "auditee", "second-secret").await?;
    ensure_eq!(
        auditee.post("/jobgroup/save", &[("appname", "sneaky-app"), ("title", "x")]).await?["code"],
        500
    );
    ensure_eq!(auditee.post("/jobinfo/stop", &[("id", &jid)]).await?["code"], 500);
    ensure_eq!(
        auditee.post("/joblog/clearLog", &[("jobGroup", &gid), ("jobId", "0"), ("type", "9")]).await?["code"],
        500
    );
    ok(&auditee, "/user/updatePwd", &[("oldPassword", "second-secret"), ("password", "third-secret")])
        .await?;
    let issued = ok(&admin, "/user/apiToken", &[]).await?;
    let token = issued["content"]["token"].as_str().context("token")?.to_string();
    ensure_eq!(admin.post("/alarm/test", &[("name", "nowhere")]).await?["code"], 500);

    // Removals, then the logout.
    ok(&admin, "/jobinfo/remove", &[("id", &jid)]).await?;
    ok(&admin, "/jobgroup/remove", &[("id", &gid)]).await?;
    ok(&admin, "/user/remove", &[("id", &auditee_id)]).await?;
    let cookie = admin.cookie.clone().context("cookie")?;
    ok(&admin, "/logout", &[]).await?;

    let all = written(dir.path(), "signout", "success").await?;
    let admin_id = json!(1);
    let wrong = one(&all, "signin", "failure", |e| e["actor"]["userName"] == "admin")?;
    ensure_eq!(
        (wrong["method"].as_str(), wrong["actor"]["userId"].clone()),
        (Some("password"), admin_id.clone()),
        "{wrong}"
    );
    ensure_eq!(wrong["address"], "127.0.0.1");
    one(&all, "signin", "failure", |e| {
        e["actor"]["userName"] == "nobody-here" && e["actor"]["userId"].is_null()
    })?;
    let signed_in = one(&all, "signin", "success", |e| e["actor"]["userName"] == "admin")?;
    by(signed_in, "admin", "console")?;

    let saved = one(&all, "group.add", "success", |_| true)?;
    by(saved, "admin", "console")?;
    ensure_eq!(saved["target"], json!({"type": "group", "id": group.id, "name": "audit-app"}));
    change(saved, "title", Value::Null, json!("Audit"))?;
    change(one(&all, "group.update", "success", |_| true)?, "title", json!("Audit"), json!("Audit two"))?;

    let job_target = json!({"type": "job", "id": job_id, "name": "nightly report"});
    let job_added = one(&all, "job.add", "success", |_| true)?;
    ensure_eq!(job_added["target"], job_target);
    change(job_added, "glueSource", Value::Null, json!("echo one"))?;
    let job_updated = one(&all, "job.update", "success", |_| true)?;
    by(job_updated, "admin", "console")?;
    change(job_updated, "jobDesc", json!("nightly report"), json!("nightly summary"))?;
    ensure!(job_updated["changes"].get("author").is_none(), "unchanged fields are left out: {job_updated}");
    let glue = one(&all, "glue.save", "success", |_| true)?;
    change(glue, "glueSource", json!("echo one"), json!("echo two"))?;
    change(glue, "glueRemark", json!("first version"), json!("second version"))?;
    change(one(&all, "job.start", "success", |_| true)?, "triggerStatus", json!(0), json!(1))?;
    change(one(&all, "job.stop", "success", |_| true)?, "triggerStatus", json!(1), json!(0))?;
    change(one(&all, "job.trigger", "success", |_| true)?, "executorParam", Value::Null, json!("by hand"))?;
    let killed = one(&all, "log.kill", "failure", |_| true)?;
    ensure_eq!(killed["target"], json!({"type": "log", "id": log_id}));
    ensure!(killed["message"].is_string(), "{killed}");
    let cleared = one(&all, "log.clear", "success", |_| true)?;
    ensure_eq!(cleared["target"]["id"], json!({"jobGroup": group.id, "jobId": 0}));

    let user_added = one(&all, "user.add", "success", |_| true)?;
    ensure_eq!(user_added["target"]["name"], "auditee");
    change(user_added, "password", Value::Null, json!("***"))?;
    let user_updated = one(&all, "user.update", "success", |_| true)?;
    change(user_updated, "password", json!("***"), json!("***"))?;
    change(user_updated, "permission", json!(""), json!("1"))?;
    let page = one(&all, "access.refused", "refused", |e| e["target"]["name"] == "/jobgroup/save")?;
    by(page, "auditee", "console")?;
    ensure_eq!(page["target"]["type"], "endpoint");
    let group_refusals = all
        .iter()
        .filter(|e| e["kind"] == "access.refused" && e["target"] == json!({"type": "group", "id": group.id}))
        .count();
    ensure_eq!(group_refusals, 2, "the stop and the clearing were refused the group");
    by(one(&all, "job.stop", "refused", |_| true)?, "auditee", "console")?;
    by(one(&all, "log.clear", "refused", |_| true)?, "auditee", "console")?;
    change(one(&all, "user.password", "success", |_| true)?, "password", json!("***"), json!("***"))?;
    let issue = one(&all, "token.issue", "success", |_| true)?;
    ensure!(
        issue["target"]["id"].as_str().is_some_and(|id| !id.is_empty()),
        "a token is named by its id: {issue}"
    );
    one(&all, "alarm.test", "failure", |e| e["target"]["name"] == "nowhere")?;
    change(one(&all, "job.remove", "success", |_| true)?, "jobDesc", json!("nightly summary"), Value::Null)?;
    one(&all, "group.remove", "success", |e| e["target"]["id"] == json!(group.id))?;
    one(&all, "user.remove", "success", |e| e["target"]["name"] == "auditee")?;
    by(one(&all, "signout", "success", |_| true)?, "admin", "console")?;

    let session = cookie.split_once('=').context("cookie value")?.1;
    let hashes = [md5("123456"), md5("first-secret"), md5("second-secret"), md5("third-secret")];
    let mut secrets = vec![
        "123456",
        "wrong-pass",
        "whatever-pw",
        "first-secret",
        "second-secret",
        "third-secret",
        token.as_str(),
        session,
    ];
    secrets.extend(hashes.iter().map(String::as_str));
    no_secret(dir.path(), &secrets)?;
    app.stop().await;
    Ok(())
}

async fn rest_operations_leave_events(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let dir = tempfile::tempdir().context("dir")?;
    let app = audited_app(&db, dir.path(), &[]).await?;
    let admin = logged_in(&app, "admin", "123456").await?;
    let api = RestClient::issued_by(&app.base, &admin, None).await?;
    let token = api.token.clone().context("token")?;

    let group = api.expect(201, api.post("/groups", json!({"appname": "rest-app", "title": "Rest", "addressType": 1, "addressList": "127.0.0.1:9"}))).await?;
    let gid = group["id"].as_i64().context("group id")?;
    api.expect(200, api.put(&format!("/groups/{gid}"), json!({"appname": "rest-app", "title": "Rest two", "addressType": 1, "addressList": "127.0.0.1:9"}))).await?;
    let form = json!({"jobGroup": gid, "jobDesc": "api job", "author": "api", "scheduleType": "CRON", "scheduleConf": "0 0 0 * * ?",
        "misfireStrategy": "DO_NOTHING", "executorRouteStrategy": "FIRST", "executorBlockStrategy": "SERIAL_EXECUTION",
        "glueType": "BEAN", "executorHandler": "demo"});
    let job = api.expect(201, api.post("/jobs", form.clone())).await?;
    let jid = job["id"].as_i64().context("job id")?;
    let mut changed = form.clone();
    changed["executorHandler"] = json!("demo2");
    api.expect(200, api.put(&format!("/jobs/{jid}"), changed)).await?;
    api.expect(200, api.post(&format!("/jobs/{jid}/start"), json!({}))).await?;
    api.expect(200, api.post(&format!("/jobs/{jid}/stop"), json!({}))).await?;
    api.expect(202, api.post(&format!("/jobs/{jid}/trigger"), json!({"executorParam": "from api"}))).await?;
    let (status, body) = api
        .text(
            reqwest::Method::POST,
            "/apply",
            Some(("application/toml", "[[executor]]\napp_name = \"code-app\"\ntitle = \"Code\"\n")),
        )
        .await?;
    ensure_eq!(status, 200, "{body}");
    api.expect(204, api.delete(&format!("/jobs/{jid}"))).await?;
    api.expect(204, api.delete(&format!("/groups/{gid}"))).await?;

    // A restricted user's token refused an administrator's operation; a token that is no token.
    ok(
        &admin,
        "/user/add",
        &[("username", "restuser"), ("password", "rest-secret"), ("role", "0"), ("permission", "")],
    )
    .await?;
    let restricted = logged_in(&app, "restuser", "rest-secret").await?;
    let restricted_api = RestClient::issued_by(&app.base, &restricted, None).await?;
    ensure_eq!(
        restricted_api.post("/groups", json!({"appname": "nope-app", "title": "No"})).await?.status,
        403
    );
    ensure_eq!(RestClient::new(&app.base, Some("xxlapi1.forged.token")).get("/jobs").await?.status, 401);

    let all = written(dir.path(), "signin", "failure").await?;
    let issued = one(&all, "token.issue", "success", |e| e["actor"]["userName"] == "admin")?;
    let token_id = issued["target"]["id"].clone();
    let via_api = |event: &Value| -> TestResult {
        by(event, "admin", "api")?;
        ensure_eq!(event["actor"]["tokenId"], token_id, "{event}");
        Ok(())
    };
    let group_added = one(&all, "group.add", "success", |_| true)?;
    via_api(group_added)?;
    ensure_eq!(group_added["target"], json!({"type": "group", "id": gid, "name": "rest-app"}));
    change(one(&all, "group.update", "success", |_| true)?, "title", json!("Rest"), json!("Rest two"))?;
    via_api(one(&all, "job.add", "success", |_| true)?)?;
    let job_updated = one(&all, "job.update", "success", |_| true)?;
    via_api(job_updated)?;
    change(job_updated, "executorHandler", json!("demo"), json!("demo2"))?;
    via_api(one(&all, "job.start", "success", |_| true)?)?;
    via_api(one(&all, "job.stop", "success", |_| true)?)?;
    let triggered = one(&all, "job.trigger", "success", |_| true)?;
    change(triggered, "triggerType", Value::Null, json!("API"))?;
    let applied = one(&all, "code.apply", "success", |_| true)?;
    via_api(applied)?;
    ensure_eq!(applied["target"], json!({"type": "document", "name": "code-app"}));
    ensure_eq!(applied["changes"]["plan"]["after"]["executors"][0]["action"], "create", "{applied}");
    via_api(one(&all, "job.remove", "success", |_| true)?)?;
    via_api(one(&all, "group.remove", "success", |_| true)?)?;
    let refused = one(&all, "group.add", "refused", |_| true)?;
    by(refused, "restuser", "api")?;
    ensure!(refused["actor"]["tokenId"].is_string(), "{refused}");
    let forged = one(&all, "signin", "failure", |e| e["method"] == "token")?;
    ensure_eq!(forged["address"], "127.0.0.1");

    let restricted_token = restricted_api.token.clone().context("token")?;
    no_secret(
        dir.path(),
        &[
            &token,
            &restricted_token,
            "xxlapi1.forged.token",
            "rest-secret",
            &md5("rest-secret"),
            &md5("123456"),
        ],
    )?;
    app.stop().await;
    Ok(())
}

async fn page(client: &ConsoleClient, query: &str) -> Result<Value, Failed> {
    client.get_json(&format!("/audit/pageList?{query}")).await
}

fn kinds(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| e["kind"].as_str().unwrap_or("").to_string())
        .collect()
}

async fn the_page_reads_and_filters_the_file(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let dir = tempfile::tempdir().context("dir")?;
    let app = audited_app(&db, dir.path(), &[]).await?;
    let mut stranger = ConsoleClient::new(&app.base);
    stranger.login("admin", "not-it", false).await?;
    let admin = logged_in(&app, "admin", "123456").await?;
    ok(
        &admin,
        "/user/add",
        &[("username", "reader"), ("password", "reader-pw"), ("role", "0"), ("permission", "")],
    )
    .await?;
    let reader = logged_in(&app, "reader", "reader-pw").await?;
    written(dir.path(), "signin", "success").await?;
    eventually(Duration::from_secs(10), "four events", || async {
        (events(dir.path()).len() >= 4).then_some(())
    })
    .await?;

    // Newest first, paged; the total says whether an older page exists.
    let first = page(&admin, "start=0&length=2").await?;
    ensure_eq!(kinds(&first), ["signin", "user.add"], "{first}");
    ensure_eq!(first["recordsTotal"], 3);
    let second = page(&admin, "start=2&length=2").await?;
    ensure_eq!(kinds(&second), ["signin", "signin"], "{second}");
    ensure_eq!(second["recordsTotal"], 4);
    // By kind, user, text and time.
    ensure_eq!(kinds(&page(&admin, "kind=user").await?), ["user.add"]);
    let reader_events = page(&admin, "user=READ").await?;
    ensure_eq!(kinds(&reader_events), ["signin"], "{reader_events}");
    ensure_eq!(reader_events["data"][0]["actor"]["userName"], "reader");
    let failed = page(&admin, "text=failure").await?;
    ensure_eq!(failed["data"].as_array().map(Vec::len), Some(1), "{failed}");
    ensure_eq!(failed["data"][0]["outcome"], "failure");
    let local = |ms: i64| {
        chrono::DateTime::from_timestamp_millis(ms)
            .expect("instant")
            .with_timezone(&chrono::Local)
            .format("%Y-%m-%d %H:%M:%S")
            .to_string()
    };
    let future = format!("{} - {}", local(now_ms() + 3_600_000), local(now_ms() + 7_200_000));
    ensure_eq!(
        kinds(&page(&admin, &format!("filterTime={}", urlencode(&future))).await?),
        Vec::<String>::new()
    );
    let around = format!("{} - {}", local(now_ms() - 600_000), local(now_ms() + 600_000));
    ensure_eq!(kinds(&page(&admin, &format!("filterTime={}&length=10", urlencode(&around))).await?).len(), 4);

    // Administrators only; the page itself shows where the file is.
    let refused = reader.get_json("/audit/pageList").await?;
    ensure_eq!(refused["code"], 500, "{refused}");
    let html = admin.get("/audit").await?;
    ensure!(
        html.status == 200 && html.body.contains("audit.jsonl") && html.body.contains("audit_list"),
        "{}",
        html.body
    );
    ensure!(
        html.body.contains(">Outcome</th>")
            && html.body.contains("<th>Target</th>")
            && html.body.contains("nav-audit"),
        "{}",
        html.body
    );
    ensure!(!reader.get("/jobinfo").await?.body.contains("nav-audit"), "not in a user's menu");
    app.stop().await;

    // Without a file, the page and its data say so.
    let plain = TestApp::start(&db, &[]).await?;
    let admin = logged_in(&plain, "admin", "123456").await?;
    let html = admin.get("/audit").await?;
    ensure!(html.body.contains("auditNoFile") && html.body.contains("xxl.job.audit.file"), "{}", html.body);
    let answer = page(&admin, "").await?;
    ensure!(
        answer["code"] == 500 && answer["msg"].as_str().is_some_and(|m| m.contains("xxl.job.audit.file")),
        "{answer}"
    );
    plain.stop().await;
    Ok(())
}

fn urlencode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

async fn the_webhook_receives_events_without_slowing_requests(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let receiver = WebhookServer::start().await?;
    let url = format!("--xxl.job.audit.webhook.url={}/json?token=hook-secret", receiver.base);
    // Behind a proxy the admin trusts, the address is the one the proxy names.
    let app = TestApp::start(&db, &[&url, "--server.forward-headers-strategy=framework"]).await?;
    let client = ConsoleClient::new(&app.base);
    let forwarded = [("X-Forwarded-For", "203.0.113.7")];
    client
        .request(
            reqwest::Method::POST,
            "/login",
            &[("userName", "admin"), ("password", "wrong-one")],
            &forwarded,
        )
        .await?;
    logged_in(&app, "admin", "123456").await?;
    let received = eventually(Duration::from_secs(10), "two events at the webhook", || async {
        let received = receiver.received("/json");
        (received.len() >= 2).then_some(received)
    })
    .await?;
    ensure_eq!(received[0].body["kind"], "signin");
    ensure_eq!(received[0].body["outcome"], "failure");
    ensure_eq!(received[0].body["address"], "203.0.113.7");
    ensure_eq!(received[1].body["address"], "127.0.0.1");
    ensure_eq!(received[1].body["outcome"], "success");
    ensure_eq!(received[1].body["actor"]["userName"], "admin");
    app.stop().await;

    // An endpoint that never answers: sign-ins answer as fast as without it.
    let hanging = format!("--xxl.job.audit.webhook.url={}/hang", receiver.base);
    let app = TestApp::start(&db, &[&hanging]).await?;
    let started = Instant::now();
    for _ in 0..20 {
        logged_in(&app, "admin", "123456").await?;
    }
    ensure!(
        started.elapsed() < Duration::from_secs(5),
        "20 sign-ins took {:?} beside a hanging webhook",
        started.elapsed()
    );
    app.stop().await;
    Ok(())
}
