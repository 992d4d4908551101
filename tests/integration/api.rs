//! The executor → admin API (2.4.2: JobApiController) as real executors use it.

use crate::support::console::ConsoleClient;
use crate::support::fixtures::{log, manual_group};
use crate::support::proxy::Proxy;
use crate::support::{
    eventually, now_ms, Backend, Behaviour, Context, FakeExecutor, JavaExecutorClient, TestApp, TestDb,
    LOG_CONTENT, TOKEN,
};
use crate::{cases, ensure, ensure_eq, Case, TestResult, ALL, SERVERS};
use serde_json::json;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;
use xxl_job_admin::domain::codes::AddressType;
use xxl_job_admin::storage::RegistryKey;
use xxl_job_admin::workers::registry::monitor_pass;

pub fn cases() -> Vec<Case> {
    cases! {
        "api" {
            ALL => registry_then_monitor_fills_the_group,
            ALL => registry_twice_in_one_second_keeps_one_row,
            ALL => registry_remove_deletes_the_row,
            ALL => callback_finishes_the_log,
            ALL => callback_repeat_and_unknown_change_nothing,
            ALL => wrong_token_changes_nothing,
            ALL => bad_requests_get_clear_return_t_errors,
            ALL => blank_token_disables_the_check,
            ALL => health_reports_the_database,
            SERVERS => database_restart_is_survived,
            ALL => the_number_of_app_names_is_capped,
            ALL => a_registry_flood_locks_no_executor_out,
            ALL => a_fleet_of_2000_beside_a_normal_group,
            ALL => executors_of_the_3x_line,
            SERVERS => registry_reaches_the_group_within_35_s,
        }
    }
}

const APP: &str = "xxl-job-executor-sample";

fn key(address: &str) -> RegistryKey {
    RegistryKey {
        registry_group: "EXECUTOR".into(),
        registry_key: APP.into(),
        registry_value: address.into(),
    }
}

async fn registrations(app: &TestApp) -> Vec<String> {
    let now = now_ms();
    let mut rows: Vec<String> = app
        .app
        .db
        .live_registrations(3600, now)
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.registry_value)
        .collect();
    rows.sort();
    rows
}

async fn registry_then_monitor_fills_the_group(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let executor = app.executor_client();
    for address in ["http://10.0.0.9:9999/", "http://10.0.0.10:9999/"] {
        let reply = executor.registry(APP, address).await?;
        ensure_eq!(reply.status, 200);
        ensure!(reply.content_type.starts_with("application/json"), "content type {}", reply.content_type);
        ensure_eq!(reply.body, json!({"code": 200, "msg": null, "content": null}));
    }
    eventually(Duration::from_secs(5), "two registry rows", || async {
        (registrations(&app).await.len() == 2).then_some(())
    })
    .await?;
    monitor_pass(&app.app.db, now_ms(), &mut Default::default()).await;
    let group = app.app.db.load_group(1).await.context("load group")?.context("group 1")?;
    // Sorted as plain strings, joined without spaces.
    ensure_eq!(group.address_list.as_deref(), Some("http://10.0.0.10:9999/,http://10.0.0.9:9999/"));
    ensure_eq!(group.title, "示例执行器", "the monitor must not touch the title");
    app.stop().await;
    Ok(())
}

async fn registry_twice_in_one_second_keeps_one_row(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let now = now_ms();
    // The same DATETIME twice: only found-rows update counts stop a duplicate insert here.
    app.app.db.registry_upsert(&key("http://a:1/"), now, 1000).await.context("first")?;
    app.app.db.registry_upsert(&key("http://a:1/"), now, 1000).await.context("second")?;
    ensure_eq!(registrations(&app).await, vec!["http://a:1/".to_string()]);
    app.stop().await;
    Ok(())
}

async fn registry_remove_deletes_the_row(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let executor = app.executor_client();
    executor.registry(APP, "http://127.0.0.1:9999/").await?;
    executor.registry(APP, "http://127.0.0.1:9998/").await?;
    eventually(Duration::from_secs(5), "registry rows", || async {
        (registrations(&app).await.len() == 2).then_some(())
    })
    .await?;
    let reply = executor.registry_remove(APP, "http://127.0.0.1:9999/").await?;
    ensure_eq!(reply.code(), 200);
    eventually(Duration::from_secs(5), "the removal", || async {
        (registrations(&app).await == vec!["http://127.0.0.1:9998/".to_string()]).then_some(())
    })
    .await?;
    app.stop().await;
    Ok(())
}

async fn callback_finishes_the_log(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let before = now_ms();
    let log_id = store.insert_log(1, 1, before).await.context("insert log")?;
    let reply = app.executor_client().callback(&[(log_id, 200, Some("hello <b>world</b>"))]).await?;
    ensure_eq!(reply.body, json!({"code": 200, "msg": null, "content": null}));
    let log = store.load_log(log_id).await.context("load")?.context("log row")?;
    ensure_eq!(log.handle_code, 200);
    ensure_eq!(log.handle_msg.as_deref(), Some("hello <b>world</b>"));
    let handle_time = store.zone().to_epoch_ms(log.handle_time.context("handle_time")?);
    ensure!((handle_time - before).abs() < 5_000, "handle_time {handle_time} should be about {before}");

    // A result with no message on a row without one stores the empty string, not NULL.
    let second = store.insert_log(1, 1, before).await.context("insert log")?;
    app.executor_client().callback(&[(second, 500, None)]).await?;
    let log = store.load_log(second).await.context("load")?.context("log row")?;
    ensure_eq!((log.handle_code, log.handle_msg.as_deref()), (500, Some("")));
    app.stop().await;
    Ok(())
}

async fn callback_repeat_and_unknown_change_nothing(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let log_id = store.insert_log(1, 1, now_ms()).await.context("insert")?;
    let executor = app.executor_client();
    ensure_eq!(executor.callback(&[(log_id, 200, Some("first"))]).await?.code(), 200);
    // Repeated, unknown and empty batches are all acknowledged (executors resend unacknowledged ones forever).
    ensure_eq!(executor.callback(&[(log_id, 500, Some("second")), (987_654, 200, None)]).await?.code(), 200);
    ensure_eq!(executor.post_raw("callback", "[]").await?.code(), 200);
    ensure_eq!(executor.post_raw("callback", "").await?.code(), 200);
    let log = store.load_log(log_id).await.context("load")?.context("row")?;
    ensure_eq!((log.handle_code, log.handle_msg.as_deref()), (200, Some("first")));
    ensure!(store.load_log(987_654).await.context("load")?.is_none(), "no row is invented");
    app.stop().await;
    Ok(())
}

async fn wrong_token_changes_nothing(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let log_id = store.insert_log(1, 1, now_ms()).await.context("insert")?;
    for token in [Some("wrong"), None, Some("test-token-4"), Some("TEST-TOKEN-42")] {
        let executor = app.executor_client().with_token(token);
        for reply in [
            executor.registry(APP, "http://evil:1/").await?,
            executor.registry_remove(APP, "http://evil:1/").await?,
            executor.callback(&[(log_id, 200, Some("forged"))]).await?,
            // The token is checked before the URI.
            executor.post_raw("nope", "{}").await?,
        ] {
            ensure_eq!(reply.status, 200);
            ensure_eq!(
                reply.body,
                json!({"code": 500, "msg": "The access token is wrong.", "content": null}),
                "token {token:?}"
            );
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    ensure!(registrations(&app).await.is_empty(), "no registry row");
    let log = store.load_log(log_id).await.context("load")?.context("row")?;
    ensure_eq!(log.handle_code, 0);
    app.stop().await;
    Ok(())
}

async fn bad_requests_get_clear_return_t_errors(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let executor = app.executor_client();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("registry", b"{\"registryGroup\":".to_vec(), "malformed JSON"),
        ("registry", b"".to_vec(), "Illegal Argument."),
        ("registry", b"null".to_vec(), "Illegal Argument."),
        (
            "registry",
            br#"{"registryGroup":"EXECUTOR","registryKey":" ","registryValue":"http://a/"}"#.to_vec(),
            "Illegal Argument.",
        ),
        (
            "registryRemove",
            br#"{"registryGroup":"EXECUTOR","registryKey":"a"}"#.to_vec(),
            "Illegal Argument.",
        ),
        ("callback", b"{\"logId\":1}".to_vec(), "malformed JSON"),
        ("callback", b"[{\"logId\":\"x\"}]".to_vec(), "malformed JSON"),
        ("callback", vec![0xff, 0xfe], "not UTF-8"),
        ("unknown", b"{}".to_vec(), "invalid request, uri-mapping(unknown) not found."),
        ("callback", vec![b' '; 2 * 1024 * 1024], "body larger than"),
    ];
    for (uri, body, expected) in cases {
        let reply = executor.post_raw(uri, body).await?;
        ensure_eq!(reply.status, 200, "{uri}");
        ensure!(reply.content_type.starts_with("application/json"), "{uri}: {}", reply.content_type);
        ensure_eq!(reply.code(), 500, "{uri} {expected}");
        ensure!(reply.msg().contains(expected), "{uri}: {:?} should contain {expected:?}", reply.msg());
        ensure!(
            reply.body.as_object().is_some_and(|o| o.contains_key("content")),
            "ReturnT shape: {}",
            reply.body
        );
    }
    let reply = executor.send(reqwest::Method::GET, "registry", reqwest::Body::from("")).await?;
    ensure_eq!(
        reply.body,
        json!({"code": 500, "msg": "invalid request, HttpMethod not support.", "content": null})
    );
    // A trailing slash reaches the handler too; unknown fields and charset-less content types are fine.
    let reply = app
        .http
        .post(app.url("/api/registry/"))
        .header("XXL-JOB-ACCESS-TOKEN", TOKEN)
        .header("Content-Type", "application/json")
        .body(r#"{"registryGroup":"EXECUTOR","registryKey":"x","registryValue":"http://x/","extra":[1]}"#)
        .send()
        .await
        .context("post")?;
    let body: serde_json::Value = reply.json().await.context("json")?;
    ensure_eq!(body["code"], 200);
    app.stop().await;
    Ok(())
}

async fn blank_token_disables_the_check(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &["--xxl.job.accessToken="]).await?;
    for token in [None, Some("anything")] {
        let reply = app.executor_client().with_token(token).registry(APP, "http://open:1/").await?;
        ensure_eq!(reply.code(), 200, "token {token:?}");
    }
    app.stop().await;
    Ok(())
}

async fn health_reports_the_database(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let up = app.http.get(app.url("/actuator/health")).send().await.context("health")?;
    ensure_eq!(up.status().as_u16(), 200);
    ensure_eq!(up.json::<serde_json::Value>().await.context("json")?, json!({"status": "UP"}));
    app.app.db.close().await;
    let down = app.http.get(app.url("/actuator/health")).send().await.context("health")?;
    ensure_eq!(down.status().as_u16(), 503);
    ensure_eq!(down.json::<serde_json::Value>().await.context("json")?, json!({"status": "DOWN"}));
    app.stop().await;
    Ok(())
}

/// The acceptance criterion end to end, with the real 30 s monitor: no shortcut.
async fn registry_reaches_the_group_within_35_s(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    ensure_eq!(app.executor_client().registry(APP, "http://192.0.2.7:9999/").await?.code(), 200);
    let started = std::time::Instant::now();
    eventually(Duration::from_secs(35), "the group's address_list", || async {
        let group = app.app.db.load_group(1).await.ok()??;
        (group.address_list.as_deref() == Some("http://192.0.2.7:9999/")).then_some(())
    })
    .await?;
    ensure!(started.elapsed() <= Duration::from_secs(35), "took {:?}", started.elapsed());
    app.stop().await;
    Ok(())
}

/// Every database connection dies at once, as when MariaDB restarts: the admin reconnects by itself and
/// keeps applying callbacks, without a restart.
async fn database_restart_is_survived(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let url = url::Url::parse(&db.url).context("test database URL")?;
    let server = format!(
        "{}:{}",
        url.host_str().context("host")?,
        url.port().context("the test database URL names its port")?
    );
    let upstream = tokio::net::lookup_host(&server).await.context("resolve")?.next().context("address")?;
    // Create the schema directly, then run the admin through the proxy.
    TestApp::start(&db, &[]).await?.stop().await;
    let proxy = Proxy::start(upstream).await?;
    let proxied = db.url.replacen(&server, &proxy.addr.to_string(), 1);
    let app = TestApp::start(&db, &[&format!("--spring.datasource.url={proxied}")]).await?;
    let executor = app.executor_client();
    let store = &app.app.db;
    let first = store.insert_log(1, 1, now_ms()).await.context("insert log")?;
    ensure_eq!(executor.callback(&[(first, 200, None)]).await?.code(), 200);

    let connections = proxy.accepted();
    proxy.cut();
    let second = eventually(Duration::from_secs(20), "a log inserted after the restart", || async {
        store.insert_log(1, 1, now_ms()).await.ok()
    })
    .await?;
    eventually(Duration::from_secs(20), "a callback applied after the restart", || async {
        let reply = executor.callback(&[(second, 200, None)]).await.ok()?;
        (reply.code() == 200).then_some(())
    })
    .await?;
    let log = store.load_log(second).await.context("load")?.context("log")?;
    ensure_eq!(log.handle_code, 200);
    ensure!(proxy.accepted() > connections, "the admin opened new connections");
    let health = app.http.get(app.url("/actuator/health")).send().await.context("health")?;
    ensure_eq!(health.status().as_u16(), 200);
    app.stop().await;
    Ok(())
}

/// A 3.4.1+ executor posts at the root (its default admin address has no context path) and answers
/// `{"code","msg","data"}`; its rolling log must read as a 2.x executor's does.
async fn executors_of_the_3x_line(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let root = JavaExecutorClient::new(&format!("http://{}", app.app.addr), Some(TOKEN));
    let reply = root.registry(APP, "http://10.0.0.31:9999/").await?;
    ensure_eq!((reply.status, reply.body.clone()), (200, json!({"code": 200, "msg": null, "content": null})));
    eventually(Duration::from_secs(5), "the root registration", || async {
        (registrations(&app).await == ["http://10.0.0.31:9999/"]).then_some(())
    })
    .await?;
    let forged = root.with_token(Some("wrong")).registry(APP, "http://10.0.0.32:9999/").await?;
    ensure_eq!((forged.code(), forged.msg()), (500, "The access token is wrong.".to_string()));
    ensure_eq!(root.registry_remove(APP, "http://10.0.0.31:9999/").await?.code(), 200);
    ensure_eq!(root.post_raw("jobinfo", "").await?.msg(), "invalid request, uri-mapping(jobinfo) not found.");

    let store = &app.app.db;
    // Stored times keep whole seconds.
    let at = now_ms() / 1000 * 1000;
    let executor = FakeExecutor::start(Behaviour { wire_3x: true, ..Behaviour::default() }).await?;
    let running = log(store, 1, 1, at, 200, 0, &executor.address).await?;
    let mut console = ConsoleClient::new(&app.base);
    ensure_eq!(console.login("admin", "123456", false).await?["code"], 200);
    let lines = console
        .post("/joblog/logDetailCat", &[("logId", &running.to_string()), ("fromLineNum", "1")])
        .await?;
    ensure_eq!(
        (lines["code"].clone(), lines["content"]["toLineNum"].clone()),
        (json!(200), json!(2)),
        "{lines}"
    );
    let escaped =
        LOG_CONTENT.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('\'', "&#39;");
    ensure_eq!(lines["content"]["logContent"], escaped.as_str());
    // Past the end the executor answers `toLineNum: 0`: the next read stays at line 3, and the run is still on.
    let tail = console
        .post("/joblog/logDetailCat", &[("logId", &running.to_string()), ("fromLineNum", "3")])
        .await?;
    ensure_eq!(
        (
            tail["content"]["fromLineNum"].clone(),
            tail["content"]["toLineNum"].clone(),
            tail["content"]["end"].clone()
        ),
        (json!(3), json!(2), json!(false)),
        "{tail}"
    );
    let asked = executor.calls_to("/log");
    ensure_eq!(
        (asked[0].body["logDateTim"].clone(), asked[0].body["logDateTime"].clone()),
        (json!(at), json!(at))
    );

    // The run's result, reported at the root, ends it; then the tail is the end.
    ensure_eq!(root.callback(&[(running, 200, Some("done"))]).await?.code(), 200);
    let row = store.load_log(running).await.context("load")?.context("log")?;
    ensure_eq!((row.handle_code, row.handle_msg.as_deref()), (200, Some("done")));
    let tail = console
        .post("/joblog/logDetailCat", &[("logId", &running.to_string()), ("fromLineNum", "3")])
        .await?;
    ensure_eq!(tail["content"]["end"], true, "{tail}");
    app.stop().await;
    Ok(())
}

/// A token holder cannot fill the registry with AppNames: past `xxl.job.registry.max-apps` a new one is
/// refused with a message saying why, and counted; the AppNames already there keep registering.
async fn the_number_of_app_names_is_capped(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &["--xxl.job.registry.max-apps=2"]).await?;
    let executor = app.executor_client();
    for name in ["capped-app-a", "capped-app-b"] {
        ensure_eq!(executor.registry(name, "http://10.0.0.40:9999/").await?.code(), 200);
    }
    eventually(Duration::from_secs(5), "two AppNames registered", || async {
        (app.app.db.live_registrations(3600, now_ms()).await.ok()?.len() == 2).then_some(())
    })
    .await?;
    let refused = executor.registry("capped-app-c", "http://10.0.0.40:9999/").await?;
    ensure_eq!(refused.code(), 500);
    ensure!(
        refused.msg().contains("xxl.job.registry.max-apps (2)") && refused.msg().contains("capped-app-c"),
        "{}",
        refused.msg()
    );
    ensure_eq!(
        executor.registry("capped-app-a", "http://10.0.0.41:9999/").await?.code(),
        200,
        "a known AppName grows"
    );
    ensure_eq!(executor.registry("capped-app-b", "http://10.0.0.40:9999/").await?.code(), 200, "and beats");
    let scrape = scrape(&app).await?;
    ensure!(scrape.contains("xxl_job_registrations_refused_total{reason=\"max_apps\"} 1"), "{scrape}");
    app.stop().await;
    Ok(())
}

/// Registers `names` from `client`, 8 at a time as the outside flood did; the replies in order.
async fn register_all(
    client: &JavaExecutorClient,
    names: &[(String, String)],
) -> Result<Vec<(i64, String)>, crate::Failed> {
    let mut replies = Vec::new();
    for chunk in names.chunks(8) {
        let mut sent = tokio::task::JoinSet::new();
        for (index, (app_name, address)) in chunk.iter().cloned().enumerate() {
            let client = client.clone();
            sent.spawn(async move { (index, client.registry(&app_name, &address).await) });
        }
        let mut answered = sent.join_all().await;
        answered.sort_by_key(|(index, _)| *index);
        for (_, reply) in answered {
            let reply = reply?;
            replies.push((reply.code(), reply.msg()));
        }
    }
    Ok(replies)
}

fn loopback(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
}

async fn scrape(app: &TestApp) -> Result<String, crate::Failed> {
    let reply = app.http.get(app.url("/actuator/prometheus")).send().await.context("scrape")?;
    reply.text().await.context("text")
}

/// Issue 43 item 2: one client floods the registry with made-up AppNames, then two others fill the total;
/// the executors of a configured group still register, from the flooding client and from another, and
/// its job runs. Each refusal says why and is counted by reason.
async fn a_registry_flood_locks_no_executor_out(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app =
        TestApp::start(&db, &["--xxl.job.registry.max-apps=12", "--xxl.job.registry.max-apps-per-address=5"])
            .await?;
    let flooder = app.executor_client().sending_from(loopback(1));
    let made_up = |prefix: &str, n: usize| -> Vec<(String, String)> {
        (0..n).map(|i| (format!("{prefix}-{i:03}"), format!("http://10.9.0.{i}:9999/"))).collect()
    };
    let accepted = |replies: &[(i64, String)]| replies.iter().filter(|(code, _)| *code == 200).count();
    let refused_for = |replies: &[(i64, String)], key: &str| {
        replies.iter().filter(|(code, msg)| *code == 500 && msg.contains(key)).count()
    };

    let flood = register_all(&flooder, &made_up("flood", 40)).await?;
    ensure_eq!(accepted(&flood), 5, "{flood:?}");
    ensure_eq!(refused_for(&flood, "xxl.job.registry.max-apps-per-address (5)"), 35, "{flood:?}");
    ensure!(flood.iter().any(|(_, msg)| msg.contains("127.0.0.1") && msg.contains("flood-")), "{flood:?}");
    let second =
        register_all(&app.executor_client().sending_from(loopback(2)), &made_up("second", 10)).await?;
    ensure_eq!((accepted(&second), refused_for(&second, "max-apps-per-address")), (5, 5), "{second:?}");
    let third = register_all(&app.executor_client().sending_from(loopback(3)), &made_up("third", 10)).await?;
    ensure_eq!(
        (accepted(&third), refused_for(&third, "xxl.job.registry.max-apps (12)")),
        (2, 8),
        "{third:?}"
    );

    // The configured group's executors, from the flooder's address and from one the admin has not seen.
    let (first, other) =
        (FakeExecutor::start(Behaviour::default()).await?, FakeExecutor::start(Behaviour::default()).await?);
    let reply = flooder.registry(APP, &first.address).await?;
    ensure_eq!((reply.code(), reply.msg()), (200, String::new()), "from the flooding client");
    let newcomer = app.executor_client().sending_from(loopback(4));
    let reply = newcomer.registry(APP, &other.address).await?;
    ensure_eq!((reply.code(), reply.msg()), (200, String::new()), "from another client");
    ensure_eq!(
        newcomer.registry("newcomer-app", "http://10.9.1.1:9999/").await?.code(),
        500,
        "the total holds"
    );
    let mut expected = vec![first.address.clone(), other.address.clone()];
    expected.sort();
    eventually(Duration::from_secs(10), "the group's two registrations", || async {
        let rows = app.app.db.live_registrations(3600, now_ms()).await.ok()?;
        let mut mine: Vec<String> =
            rows.into_iter().filter(|r| r.registry_key == APP).map(|r| r.registry_value).collect();
        mine.sort();
        (mine == expected).then_some(())
    })
    .await?;
    monitor_pass(&app.app.db, now_ms(), &mut Default::default()).await;
    let group = app.app.db.load_group(1).await.context("load group")?.context("group 1")?;
    ensure_eq!(group.address_list, Some(expected.join(",")));

    let mut console = ConsoleClient::new(&app.base);
    ensure_eq!(console.login("admin", "123456", false).await?["code"], 200);
    ensure_eq!(console.post("/jobinfo/trigger", &[("id", "1"), ("executorParam", "")]).await?["code"], 200);
    eventually(Duration::from_secs(10), "the job's run at one of the group's executors", || async {
        (first.calls_to("/run").len() + other.calls_to("/run").len() == 1).then_some(())
    })
    .await?;

    let metrics = scrape(&app).await?;
    for line in [
        "xxl_job_registrations_refused_total{reason=\"max_apps_per_address\"} 40",
        "xxl_job_registrations_refused_total{reason=\"max_apps\"} 9",
    ] {
        ensure!(metrics.lines().any(|l| l == line), "{line} in\n{metrics}");
    }
    app.stop().await;
    Ok(())
}

/// Issue 43 item 2: 2,000 executors of one AppName (a large Kubernetes fleet) all register with the
/// defaults and all fit its list, and the monitor pass writes the other group's list too.
async fn a_fleet_of_2000_beside_a_normal_group(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let fleet = manual_group(store, "fleet-app", &[]).await?;
    let mut group = store.load_group(fleet).await.context("load")?.context("fleet group")?;
    group.address_type = AddressType::Auto;
    store.update_group(&group).await.context("automatic")?;

    // Pod addresses as a cluster network hands them out, 26 bytes each.
    let addresses: Vec<String> =
        (0..2000).map(|n| format!("http://10.244.{}.{}:9999/", 100 + n / 200, 10 + n % 200)).collect();
    let names: Vec<(String, String)> =
        addresses.iter().map(|a| ("fleet-app".to_string(), a.clone())).collect();
    let replies = register_all(&app.executor_client(), &names).await?;
    ensure!(replies.iter().all(|(code, _)| *code == 200), "{:?}", replies.iter().find(|(c, _)| *c != 200));
    ensure_eq!(app.executor_client().registry(APP, "http://10.0.0.9:9999/").await?.code(), 200);
    let fleet_rows = || async {
        let rows = store.live_registrations(3600, now_ms()).await.unwrap_or_default();
        rows.iter().filter(|r| r.registry_key == "fleet-app").count()
    };
    let stored = eventually(Duration::from_secs(60), "2,000 fleet registrations", || async {
        (fleet_rows().await == 2000).then_some(())
    })
    .await;
    if stored.is_err() {
        return Err(
            format!("not all 2,000 fleet registrations stored within 60 s: {}", fleet_rows().await).into()
        );
    }
    eventually(Duration::from_secs(10), "the sample registration", || async {
        registrations(&app).await.contains(&"http://10.0.0.9:9999/".to_string()).then_some(())
    })
    .await?;

    let started = std::time::Instant::now();
    monitor_pass(store, now_ms(), &mut Default::default()).await;
    eprintln!(
        "api::a_fleet_of_2000_beside_a_normal_group::{backend:?}: monitor pass {:?}",
        started.elapsed()
    );
    let list =
        store.load_group(fleet).await.context("load")?.context("fleet")?.address_list.context("list")?;
    let mut sorted = addresses.clone();
    sorted.sort();
    ensure!(list.len() <= xxl_job_admin::domain::registry::ADDRESS_LIST_MAX_BYTES, "{} bytes", list.len());
    ensure!(list == sorted.join(","), "all 2,000 listed, sorted: {} listed", list.split(',').count());
    let sample = store.load_group(1).await.context("load")?.context("group 1")?;
    ensure_eq!(sample.address_list.as_deref(), Some("http://10.0.0.9:9999/"), "the other group is written");
    app.stop().await;
    Ok(())
}
