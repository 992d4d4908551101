//! The security regression suite: one case (or table row) per finding of the second review (issue 12:
//! throttle, lock-out, CSRF through GET, the session key, sessions, the registry monitor, framing, the
//! default password) and per class the first review found refused (forged cookies, IDOR, SSRF, XSS,
//! CSRF variants, injection, traversal, token checks, body limits). Each row names the defence it checks.

use crate::support::console::{ConsoleClient, PageReply};
use crate::support::fixtures::{insert, job, manual_group, titled_group};
use crate::support::{eventually, now_ms, Backend, Context, ServerConnection, TestApp, TestDb, TOKEN};
use crate::{cases, ensure, ensure_eq, Case, TestResult, ALL, SERVERS, SQLITE};
use libtest_mimic::Failed;
use reqwest::Method;
use serde_json::json;
use std::collections::HashSet;
use std::time::Duration;
use xxl_job_admin::domain::codes::{AddressType, TriggerStatus};
use xxl_job_admin::domain::registry::ADDRESS_LIST_MAX_BYTES;
use xxl_job_admin::i18n::I18n;
use xxl_job_admin::storage::{RegistryKey, LOGOUT_PREFIX, SESSION_SECRET_PREFIX};
use xxl_job_admin::workers::registry::monitor_pass;

pub fn cases() -> Vec<Case> {
    cases! {
        "security" {
            ALL => throttle_counts_the_account_found_not_the_spelling,
            ALL => throttle_is_per_address_and_says_how_long,
            SQLITE => forwarded_for_is_ignored_unless_configured,
            ALL => state_changes_take_get_only_from_the_consoles_pages,
            SQLITE => a_proxy_rewriting_host_and_trusted_origins,
            SQLITE => old_browsers_behind_nginx_need_the_public_origin needs [Nginx],
            ALL => csrf_variants_are_refused,
            SERVERS => the_session_secret_is_shared_through_the_database,
            ALL => admins_starting_together_agree_on_one_secret,
            ALL => sessions_are_encrypted_cookies_bound_to_the_password,
            ALL => one_registry_group_stops_nothing,
            ALL => registrations_are_checked_and_capped,
            SQLITE => every_console_response_is_hardened,
            ALL => the_default_password_is_announced_to_administrators,
            ALL => other_groups_are_out_of_reach,
            ALL => input_stays_data,
            ALL => executor_api_checks_token_and_size,
            SERVERS => logout_ends_the_session_on_every_admin,
            SQLITE => a_refused_post_keeps_its_connection,
        }
    }
}

fn en() -> I18n {
    I18n::new("en")
}

/// The throttle message for a wait of `secs`.
fn throttled(secs: i64) -> String {
    en().format("login_throttled", &[&secs])
}

async fn login_from(
    app: &TestApp,
    name: &str,
    password: &str,
    address: &str,
) -> Result<(serde_json::Value, Option<String>), Failed> {
    let client = ConsoleClient::new(&app.base);
    let reply = client
        .request(
            Method::POST,
            "/login",
            &[("userName", name), ("password", password)],
            &[("X-Forwarded-For", address)],
        )
        .await?;
    let cookie = reply.set_cookie.as_deref().and_then(|c| c.split(';').next()).map(str::to_string);
    Ok((reply.json()?, cookie))
}

async fn admin(app: &TestApp) -> Result<ConsoleClient, Failed> {
    let mut client = ConsoleClient::new(&app.base);
    ensure_eq!(client.login("admin", "123456", false).await?["code"], 200);
    Ok(client)
}

/// Item 1: on MySQL `ädmin`, `ADMIN`… find the admin row; each spelling must not bring fresh guesses.
async fn throttle_counts_the_account_found_not_the_spelling(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    // SQLite and PostgreSQL compare names exactly: there only `admin` finds the row.
    let (spellings, sixth): (&[&str], &str) = match backend {
        Backend::MySql => (&["admin", "ADMIN", "ädmin", "Àdmin", "ADMÏN"], "âdmin"),
        Backend::Sqlite | Backend::Postgres => (&["admin"; 5], "admin"),
    };
    for name in spellings {
        ensure!(
            app.app.db.load_user_by_name(name).await.context("lookup")?.is_some(),
            "{name} finds the admin"
        );
        let (reply, _) = login_from(&app, name, "wrong", "").await?;
        ensure_eq!(reply["msg"], en().get("login_param_unvalid"), "{name}");
    }
    let (reply, cookie) = login_from(&app, sixth, "123456", "").await?;
    ensure_eq!(reply["msg"], throttled(30), "a sixth attempt waits, even with the right password");
    ensure!(cookie.is_none(), "no session");
    app.stop().await;
    Ok(())
}

/// Item 2: the lock-out is per (account, address), grows, says how long, and covers updatePwd.
async fn throttle_is_per_address_and_says_how_long(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &["--server.forward-headers-strategy=native"]).await?;
    let guesser = "203.0.113.66";
    for _ in 0..5 {
        ensure_eq!(
            login_from(&app, "admin", "wrong", guesser).await?.0["msg"],
            en().get("login_param_unvalid")
        );
    }
    let (refused, cookie) = login_from(&app, "admin", "123456", guesser).await?;
    ensure_eq!(
        refused,
        json!({"code": 500, "msg": throttled(30), "content": null}),
        "even the right password waits there"
    );
    ensure!(cookie.is_none(), "no session for the guesser");
    let (owner, cookie) = login_from(&app, "admin", "123456", "198.51.100.7").await?;
    ensure_eq!(owner["code"], 200, "the owner signs in from elsewhere");
    ensure!(cookie.is_some(), "with a session");

    // The old-password check of updatePwd is a password oracle: counted the same way.
    let mut client = ConsoleClient::new(&app.base);
    client.cookie = cookie;
    let from = [("X-Forwarded-For", "198.51.100.8")];
    for _ in 0..5 {
        let reply = client
            .request(
                Method::POST,
                "/user/updatePwd",
                &[("oldPassword", "nope"), ("password", "new-secret")],
                &from,
            )
            .await?;
        ensure_eq!(
            reply.json()?["msg"],
            format!("{}{}", en().get("change_pwd_field_oldpwd"), en().get("system_unvalid"))
        );
    }
    let blocked = client
        .request(
            Method::POST,
            "/user/updatePwd",
            &[("oldPassword", "123456"), ("password", "new-secret")],
            &from,
        )
        .await?;
    ensure_eq!(blocked.json()?["msg"], throttled(30));
    ensure!(
        app.app.db.load_user(1).await.context("load")?.context("admin")?.password.starts_with("e10adc"),
        "unchanged"
    );
    app.stop().await;
    Ok(())
}

/// Item 2: without `server.forward-headers-strategy` a guesser cannot pose as new addresses.
async fn forwarded_for_is_ignored_unless_configured(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    for n in 0..5 {
        login_from(&app, "admin", "wrong", &format!("203.0.113.{n}")).await?;
    }
    ensure_eq!(login_from(&app, "admin", "123456", "203.0.113.99").await?.0["msg"], throttled(30));
    app.stop().await;
    let app = TestApp::start(&db, &["--server.forward-headers-strategy=native"]).await?;
    let spoofed = "203.0.113.1, 10.0.0.5";
    for _ in 0..5 {
        login_from(&app, "admin", "wrong", spoofed).await?;
    }
    let (reply, _) = login_from(&app, "admin", "123456", "192.0.2.1, 203.0.113.1, 10.0.0.5").await?;
    ensure_eq!(reply["msg"], throttled(30), "read from the right: a prepended address changes nothing");
    app.stop().await;
    Ok(())
}

/// Paths that change state, with a form that would succeed.
fn state_changing(job_id: &str) -> Vec<(&'static str, Vec<(&'static str, String)>)> {
    let s = |v: &str| v.to_string();
    vec![
        ("/jobinfo/remove", vec![("id", s(job_id))]),
        ("/jobinfo/stop", vec![("id", s(job_id))]),
        ("/jobinfo/start", vec![("id", s(job_id))]),
        ("/jobinfo/trigger", vec![("id", s(job_id))]),
        (
            "/jobinfo/add",
            vec![
                ("jobGroup", s("1")),
                ("jobDesc", s("csrf")),
                ("author", s("x")),
                ("scheduleType", s("NONE")),
                ("glueType", s("BEAN")),
                ("executorHandler", s("h")),
                ("executorRouteStrategy", s("FIRST")),
                ("misfireStrategy", s("DO_NOTHING")),
                ("executorBlockStrategy", s("SERIAL_EXECUTION")),
            ],
        ),
        ("/jobinfo/update", vec![("id", s(job_id)), ("jobDesc", s("csrf"))]),
        ("/joblog/logKill", vec![("id", s("1"))]),
        ("/joblog/clearLog", vec![("jobGroup", s("1")), ("jobId", s("0")), ("type", s("9"))]),
        ("/jobgroup/save", vec![("appname", s("evil-app")), ("title", s("Evil")), ("addressType", s("0"))]),
        (
            "/jobgroup/update",
            vec![("id", s("1")), ("appname", s("evil-app")), ("title", s("Evil")), ("addressType", s("0"))],
        ),
        ("/jobgroup/remove", vec![("id", s("1"))]),
        ("/user/add", vec![("username", s("mallory")), ("password", s("mallory-pw")), ("role", s("1"))]),
        ("/user/update", vec![("id", s("2")), ("username", s("x")), ("role", s("1"))]),
        ("/user/remove", vec![("id", s("2"))]),
        ("/user/updatePwd", vec![("oldPassword", s("123456")), ("password", s("stolen1"))]),
        ("/jobcode/save", vec![("id", s(job_id)), ("glueSource", s("x")), ("glueRemark", s("takeover"))]),
        (
            "/jobinfo/apply",
            vec![
                ("format", s("toml")),
                ("document", s("[[executor]]\napp_name = \"evil-app\"\ntitle = \"Evil\"\n")),
            ],
        ),
        ("/logout", vec![]),
    ]
}

fn query(form: &[(&str, String)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
        .finish()
}

fn borrowed<'a>(form: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    form.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// Endpoints that change state over POST only: 2.4.2's `/logout` (and `/login`, not in the list), and the
/// jobs-as-code upload 2.4.2 does not have.
const POST_ONLY: &[&str] = &["/logout", "/jobinfo/apply"];

/// The console's JSON envelope of a refusal.
fn envelope(code: u16, msg: String) -> serde_json::Value {
    json!({"code": code, "msg": msg, "content": null})
}

/// Issue 12 item 3 and issue 25 item 3: an `<img>` or a link could change state through GET. The GET
/// forms 2.4.2 accepts (xxl-job-vue3 kills a run with `GET /joblog/logKill`) now work only when the
/// browser marks them as the console's own; a GET with no marker (a script, an old browser's `<img>`)
/// or from another origin's page is refused, other methods get 405, all in the console's envelope.
async fn state_changes_take_get_only_from_the_consoles_pages(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let client = admin(&app).await?;
    let glue =
        insert(&app.app.db, &xxl_job_admin::storage::JobInfo { glue_type: "GLUE_SHELL".into(), ..job(1) })
            .await?
            .to_string();
    let t = en();
    let refusals: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("no browser marker", vec![]),
        (
            "another site's <img>",
            vec![
                ("Sec-Fetch-Site", "cross-site"),
                ("Sec-Fetch-Mode", "no-cors"),
                ("Sec-Fetch-Dest", "image"),
            ],
        ),
        ("a link on a sibling site", vec![("Sec-Fetch-Site", "same-site"), ("Sec-Fetch-Mode", "navigate")]),
        ("a foreign Origin", vec![("Origin", "https://evil.example")]),
    ];
    for (path, form) in state_changing(&glue) {
        let url = format!("{path}?{}", query(&form));
        let post_only = POST_ONLY.contains(&path);
        let methods: &[Method] = if post_only {
            &[Method::GET, Method::PUT, Method::DELETE]
        } else {
            &[Method::PUT, Method::DELETE, Method::PATCH]
        };
        for method in methods {
            let reply =
                client.request(method.clone(), &url, &[], &[("Sec-Fetch-Site", "same-origin")]).await?;
            let (allow, key) = if post_only {
                ("POST", "system_post_only")
            } else {
                ("GET, POST", "system_get_needs_console")
            };
            ensure_eq!(reply.status, 405, "{method} {path}");
            ensure_eq!(
                reply.headers.get("allow").and_then(|v| v.to_str().ok()),
                Some(allow),
                "{method} {path}"
            );
            ensure_eq!(reply.json()?, envelope(405, t.format(key, &[&path])), "{method} {path}");
        }
        if post_only {
            continue;
        }
        for (what, headers) in &refusals {
            let reply = client.request(Method::GET, &url, &[], headers).await?;
            let msg = match *what {
                "no browser marker" => t.format("system_get_needs_console", &[&path]),
                "a foreign Origin" => t.format("system_cross_site_refused", &[&"https://evil.example"]),
                _ => t.format("system_cross_site_refused", &[&format!("Sec-Fetch-Site: {}", headers[0].1)]),
            };
            ensure_eq!((reply.status, reply.json()?), (403, envelope(403, msg)), "GET {path} from {what}");
        }
    }
    ensure_eq!(app.app.db.count_jobs().await.context("count")?, 2, "nothing added or removed");
    ensure!(app.app.db.load_user_by_name("mallory").await.context("user")?.is_none(), "no admin created");
    ensure_eq!(client.get("/").await?.status, 200, "still logged in: no GET /logout did anything");

    // The console's own page (Fetch Metadata), the user's own navigation, and a browser without Fetch
    // Metadata whose Origin is this admin's: the GET form works.
    let own = format!("http://{}", app.app.addr);
    let store = &app.app.db;
    let cron = insert(store, &crate::support::fixtures::every_second_job(1, 3600)).await?;
    let status = |reply: &PageReply| Ok::<_, Failed>((reply.status, reply.json()?["code"].clone()));
    let stopped = client
        .request(Method::GET, &format!("/jobinfo/stop?id={cron}"), &[], &[("Sec-Fetch-Site", "same-origin")])
        .await?;
    ensure_eq!(status(&stopped)?, (200, json!(200)), "GET stop from the console's page");
    ensure_eq!(
        store.load_job(cron).await.context("job")?.context("job")?.trigger_status,
        TriggerStatus::Stopped
    );
    let started = client
        .request(Method::GET, &format!("/jobinfo/start?id={cron}"), &[], &[("Sec-Fetch-Site", "none")])
        .await?;
    ensure_eq!(status(&started)?, (200, json!(200)), "GET start typed into the address bar");
    ensure_eq!(
        store.load_job(cron).await.context("job")?.context("job")?.trigger_status,
        TriggerStatus::Running
    );
    let removed =
        client.request(Method::GET, &format!("/jobinfo/remove?id={cron}"), &[], &[("Origin", &own)]).await?;
    ensure_eq!(status(&removed)?, (200, json!(200)), "GET remove with this admin's Origin");
    ensure!(store.load_job(cron).await.context("job")?.is_none(), "removed");
    let login = ConsoleClient::new(&app.base)
        .request(
            Method::GET,
            "/login?userName=admin&password=123456",
            &[],
            &[("Sec-Fetch-Site", "same-origin")],
        )
        .await?;
    ensure_eq!(
        (login.status, login.json()?),
        (405, envelope(405, t.format("system_post_only", &[&"/login"]))),
        "no GET login"
    );

    // Read-only endpoints keep GET, as scripts use them.
    for path in [
        "/jobinfo/pageList?jobGroup=1&triggerStatus=-1",
        "/joblog/getJobsByGroup?jobGroup=1",
        "/jobgroup/loadById?id=1",
        "/user/pageList?role=-1",
        "/chartInfo",
        "/jobinfo/nextTriggerTime?scheduleType=FIX_RATE&scheduleConf=5",
    ] {
        let reply = client.get(path).await?;
        ensure_eq!(
            (reply.status, reply.json()?.get("recordsTotal").is_some() || reply.json()?["code"] == 200),
            (200, true),
            "GET {path}"
        );
    }
    // Scripts POSTing without Origin or Sec-Fetch-* keep working.
    ensure_eq!(client.post("/jobinfo/stop", &[("id", "1")]).await?["code"], 200);
    app.stop().await;
    Ok(())
}

/// Item 3 and the CSRF class: foreign and null origins, a sibling port, cross-site and same-site fetches.
async fn csrf_variants_are_refused(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let client = admin(&app).await?;
    let port = app.app.addr.port();
    let sibling = format!("http://127.0.0.1:{}", port.wrapping_add(1));
    // Issue 43 item 1: malformed origins that a URL parser reads as this admin's own.
    let userinfo = format!("http://evil.example@127.0.0.1:{port}");
    let escaped = format!("http://evil.example%40127.0.0.1:{port}");
    let path = format!("http://127.0.0.1:{port}/xxl-job-admin");
    let trailing_dot = format!("http://127.0.0.1.:{port}");
    let variants: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("a foreign Origin", vec![("Origin", "https://evil.example")]),
        ("a null Origin", vec![("Origin", "null")]),
        ("a sibling port's Origin", vec![("Origin", sibling.as_str())]),
        ("a cross-site fetch", vec![("Sec-Fetch-Site", "cross-site")]),
        ("a same-site fetch", vec![("Sec-Fetch-Site", "same-site")]),
        ("an Origin with userinfo", vec![("Origin", userinfo.as_str())]),
        ("an Origin with an escaped @", vec![("Origin", escaped.as_str())]),
        ("an Origin with a path", vec![("Origin", path.as_str())]),
        ("an Origin with a trailing dot", vec![("Origin", trailing_dot.as_str())]),
    ];
    for (path, form) in state_changing("1") {
        for (what, headers) in &variants {
            let reply = client.request(Method::POST, path, &borrowed(&form), headers).await?;
            ensure_eq!(reply.status, 403, "{path} from {what}");
            if let Some((_, origin)) = headers.iter().find(|(name, _)| *name == "Origin") {
                let refusal = reply.json()?;
                let message = refusal["msg"].as_str().unwrap_or_default();
                ensure!(
                    message.contains(origin),
                    "{path} from {what}: the refusal names the sender: {refusal}"
                );
            }
        }
    }
    let login = ConsoleClient::new(&app.base)
        .request(
            Method::POST,
            "/login",
            &[("userName", "admin"), ("password", "123456")],
            &[("Sec-Fetch-Site", "same-site")],
        )
        .await?;
    ensure_eq!(login.status, 403, "login CSRF from a sibling site");
    ensure_eq!(app.app.db.count_jobs().await.context("count")?, 1, "nothing changed");
    ensure_eq!(client.get("/").await?.status, 200, "the session survived");
    let own = format!("http://127.0.0.1:{port}");
    let same = client
        .request(
            Method::POST,
            "/jobinfo/stop",
            &[("id", "1")],
            &[("Origin", &own), ("Sec-Fetch-Site", "same-origin")],
        )
        .await?;
    ensure_eq!(same.json()?["code"], 200, "the console itself");
    app.stop().await;
    Ok(())
}

/// Issue 25 item 2: a proxy that sends the upstream's address as `Host` (nginx's default, Vue and React
/// dev servers' `changeOrigin`) no longer makes the console refuse its own pages: Fetch Metadata
/// decides, else `Origin` is compared with what the proxy says the public origin is; configured trusted
/// origins pass; a refusal says what to configure.
async fn a_proxy_rewriting_host_and_trusted_origins(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &["--xxl.job.console.trusted-origins=https://ui.example.com"]).await?;
    let client = admin(&app).await?;
    let public = "http://jobs.example.com";
    let passes: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("the console's page behind the proxy", vec![("Origin", public), ("Sec-Fetch-Site", "same-origin")]),
        ("X-Forwarded-Host", vec![("Origin", public), ("X-Forwarded-Host", "jobs.example.com")]),
        (
            "X-Forwarded-Host and -Proto",
            vec![
                ("Origin", "https://jobs.example.com"),
                ("X-Forwarded-Host", "jobs.example.com"),
                ("X-Forwarded-Proto", "https"),
            ],
        ),
        (
            "Forwarded",
            vec![
                ("Origin", "https://jobs.example.com:8443"),
                ("Forwarded", "for=192.0.2.1;host=\"jobs.example.com:8443\";proto=https"),
            ],
        ),
        ("a trusted front end", vec![("Origin", "https://ui.example.com"), ("Sec-Fetch-Site", "cross-site")]),
        ("a trusted front end in an old browser", vec![("Origin", "https://ui.example.com")]),
    ];
    for (what, headers) in &passes {
        let reply = client.request(Method::POST, "/jobinfo/stop", &[("id", "1")], headers).await?;
        ensure_eq!((reply.status, reply.json()?["code"].clone()), (200, json!(200)), "{what}");
    }
    let kill = client
        .request(
            Method::GET,
            "/joblog/logKill?id=999999",
            &[],
            &[("Origin", "https://ui.example.com"), ("Sec-Fetch-Site", "cross-site")],
        )
        .await?;
    ensure_eq!(
        (kill.status, kill.json()?["code"].clone()),
        (200, json!(500)),
        "a trusted front end's GET kill reaches the kill (of no log)"
    );
    let refusals = [
        ("an old browser behind a proxy that hides the public host", vec![("Origin", public)], public),
        (
            "X-Forwarded-Proto says https, the page is http",
            vec![
                ("Origin", public),
                ("X-Forwarded-Host", "jobs.example.com"),
                ("X-Forwarded-Proto", "https"),
            ],
            public,
        ),
        (
            "another site",
            vec![("Origin", "https://evil.example"), ("Sec-Fetch-Site", "cross-site")],
            "https://evil.example",
        ),
        (
            "another site posing as the public host",
            vec![("Origin", "https://evil.example"), ("X-Forwarded-Host", "jobs.example.com")],
            "https://evil.example",
        ),
    ];
    for (what, headers, sender) in &refusals {
        let reply = client.request(Method::POST, "/jobinfo/start", &[("id", "1")], headers).await?;
        ensure_eq!(
            (reply.status, reply.json()?),
            (403, envelope(403, en().format("system_cross_site_refused", &[sender]))),
            "{what}"
        );
    }
    ensure_eq!(
        app.app.db.load_job(1).await.context("job")?.context("job 1")?.trigger_status,
        TriggerStatus::Stopped,
        "never started"
    );
    app.stop().await;
    Ok(())
}

/// Issue 25 item 2 with a real nginx configured as users write it: Fetch Metadata is enough; a browser
/// without it sends an `Origin` the admin cannot tell from another site's, since nginx hides the public
/// host, until `xxl.job.console.trusted-origins` names it (as the refusal says).
async fn old_browsers_behind_nginx_need_the_public_origin(backend: Backend) -> TestResult {
    use crate::support::nginx::{free_port, Nginx};
    let db = TestDb::fresh(backend)?;
    let port = free_port()?;
    let public = format!("http://127.0.0.1:{port}");
    for trusted in [false, true] {
        let extra = trusted.then(|| format!("--xxl.job.console.trusted-origins={public}"));
        let app = TestApp::start(&db, &extra.iter().map(String::as_str).collect::<Vec<_>>()).await?;
        let nginx = Nginx::start(port, app.app.addr, &[]).await?;
        let mut client = ConsoleClient::new(&nginx.console);
        ensure_eq!(
            client.login("admin", "123456", false).await?["code"],
            200,
            "a script logs in through nginx"
        );
        let modern = client
            .request(
                Method::POST,
                "/jobinfo/stop",
                &[("id", "1")],
                &[("Origin", &public), ("Sec-Fetch-Site", "same-origin")],
            )
            .await?;
        ensure_eq!(
            (modern.status, modern.json()?["code"].clone()),
            (200, json!(200)),
            "a current browser (trusted: {trusted})"
        );
        let old =
            client.request(Method::POST, "/jobinfo/stop", &[("id", "1")], &[("Origin", &public)]).await?;
        if trusted {
            ensure_eq!(
                (old.status, old.json()?["code"].clone()),
                (200, json!(200)),
                "an old browser, its origin trusted"
            );
        } else {
            ensure_eq!(
                (old.status, old.json()?),
                (403, envelope(403, en().format("system_cross_site_refused", &[&public]))),
                "an old browser"
            );
        }
        ensure!(
            nginx.access_log().contains("POST /xxl-job-admin/jobinfo/stop"),
            "through nginx: {}",
            nginx.access_log()
        );
        drop(nginx);
        app.stop().await;
    }
    Ok(())
}

/// The rows of `xxl_job_lock` besides the lock and the leader's lease (`leader:…`, see
/// docs/failure-behaviour.md).
async fn secret_rows(db: &TestDb) -> Result<Vec<String>, Failed> {
    let sql = "SELECT lock_name FROM xxl_job_lock WHERE lock_name <> 'schedule_lock' AND lock_name NOT LIKE 'leader:%'";
    let rows = match db.connect().await? {
        ServerConnection::MySql(mut conn) => sqlx::query_scalar(sql).fetch_all(&mut conn).await,
        ServerConnection::Postgres(mut conn) => sqlx::query_scalar(sql).fetch_all(&mut conn).await,
    };
    rows.context("lock rows")
}

/// Item 4: the key is random, kept in `xxl_job_lock`, shared by every admin on the database; a
/// configured secret wins.
async fn the_session_secret_is_shared_through_the_database(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let first = TestApp::start(&db, &[]).await?;
    let rows = secret_rows(&db).await?;
    ensure_eq!(rows.len(), 1, "one extra row: {rows:?}");
    ensure!(rows[0].starts_with(SESSION_SECRET_PREFIX) && rows[0].len() == 50, "{:?}", rows[0]);
    let second = TestApp::start(&db, &[]).await?;
    ensure_eq!(secret_rows(&db).await?, rows, "read, not replaced");
    let client = admin(&first).await?;
    let mut on_second = ConsoleClient::new(&second.base);
    on_second.cookie = client.cookie.clone();
    ensure_eq!(on_second.get("/").await?.status, 200, "a session of one admin is valid on the other");
    let configured =
        TestApp::start(&db, &["--xxl.job.session.secret=0123456789abcdef0123456789abcdef"]).await?;
    let mut elsewhere = ConsoleClient::new(&configured.base);
    elsewhere.cookie = client.cookie.clone();
    ensure_eq!(elsewhere.get("/").await?.status, 302, "another secret, no session");
    for app in [first, second, configured] {
        app.stop().await;
    }
    Ok(())
}

/// Item 4: the row is created under the schedule lock, so concurrent starts converge on one secret.
async fn admins_starting_together_agree_on_one_secret(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = app.app.db.clone();
    // On a server the start created the row; remove it so that the six calls below race to create it.
    let clean = "DELETE FROM xxl_job_lock WHERE lock_name <> 'schedule_lock'";
    if backend != Backend::Sqlite {
        match db.connect().await? {
            ServerConnection::MySql(mut conn) => sqlx::query(clean).execute(&mut conn).await.map(drop),
            ServerConnection::Postgres(mut conn) => sqlx::query(clean).execute(&mut conn).await.map(drop),
        }
        .context("clean")?;
    }
    let tasks: Vec<_> = (0..6)
        .map(|n| {
            let store = store.clone();
            tokio::spawn(async move { store.shared_session_secret(&format!("{n:043}")).await })
        })
        .collect();
    let mut secrets = HashSet::new();
    for task in tasks {
        secrets.insert(task.await.context("join")?.context("secret")?);
    }
    ensure_eq!(secrets.len(), 1, "{secrets:?}");
    app.stop().await;
    Ok(())
}

/// Item 5 and the forged-cookie class.
async fn sessions_are_encrypted_cookies_bound_to_the_password(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let client = ConsoleClient::new(&app.base);
    let form = [("userName", "admin"), ("password", "123456")];
    let plain = client.request(Method::POST, "/login", &form, &[]).await?.set_cookie.context("cookie")?;
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/"] {
        ensure!(plain.contains(attribute), "{attribute} in {plain}");
    }
    ensure!(
        !plain.contains("Max-Age") && !plain.contains("Secure"),
        "a browser-session cookie over http: {plain}"
    );
    let remembered = client
        .request(
            Method::POST,
            "/login",
            &[("userName", "admin"), ("password", "123456"), ("ifRemember", "on")],
            &[("X-Forwarded-Proto", "https")],
        )
        .await?;
    let remembered = remembered.set_cookie.context("cookie")?;
    ensure!(
        remembered.contains("; Secure") && remembered.contains("Max-Age=12095"),
        "14 days, Secure behind https: {remembered}"
    );
    let value = plain.split(';').next().context("value")?.to_string();
    ensure!(!value.contains("admin") && !value.contains("e10adc"), "nothing readable: {value}");

    let legacy = "7b226964223a312c22757365726e616d65223a2261646d696e222c2270617373776f7264223a226531306164633339343962613539616262653536653035376632306638383365222c22726f6c65223a312c227065726d697373696f6e223a6e756c6c7d";
    let other_db = TestDb::fresh(backend)?;
    let other = TestApp::start(&other_db, &[]).await?;
    let foreign = ConsoleClient::new(&other.base)
        .request(Method::POST, "/login", &form, &[])
        .await?
        .set_cookie
        .context("cookie")?;
    let foreign = foreign.split(';').next().context("value")?.to_string();
    let mut tampered = value.clone().into_bytes();
    let middle = tampered.len() / 2;
    tampered[middle] = if tampered[middle] == b'A' { b'B' } else { b'A' };
    let forged = [
        format!("XXL_JOB_LOGIN_IDENTITY={legacy}"),
        String::from_utf8(tampered).context("utf8")?,
        foreign,
        "XXL_JOB_LOGIN_IDENTITY=garbage".to_string(),
    ];
    for cookie in forged {
        let mut intruder = ConsoleClient::new(&app.base);
        intruder.cookie = Some(cookie.clone());
        ensure_eq!(
            intruder.get("/jobinfo/pageList?jobGroup=1&triggerStatus=-1").await?.status,
            302,
            "{cookie}"
        );
    }
    other.stop().await;

    let mut first = ConsoleClient::new(&app.base);
    first.cookie = Some(value.clone());
    ensure_eq!(first.get("/").await?.status, 200);
    let second = admin(&app).await?;
    let logout = second.request(Method::POST, "/logout", &[], &[]).await?;
    ensure!(logout.set_cookie.unwrap_or_default().contains("Max-Age=0"), "the cookie is cleared");
    ensure_eq!(second.get("/").await?.status, 302, "a copy of the logged-out cookie is refused");
    ensure_eq!(first.get("/").await?.status, 200, "other sessions go on");
    ensure_eq!(
        first.post("/user/updatePwd", &[("oldPassword", "123456"), ("password", "changed-1")]).await?["code"],
        200
    );
    ensure_eq!(first.get("/").await?.status, 302, "a password change ends every session");
    app.stop().await;
    Ok(())
}

/// Item 6: a list longer than `address_list` keeps what fits, and later groups are still written.
async fn one_registry_group_stops_nothing(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let crowded = titled_group(store, "crowded-app", "Crowded", &[]).await?;
    let later = titled_group(store, "later-app", "Later", &[]).await?;
    for id in [crowded, later] {
        let mut group = store.load_group(id).await.context("load")?.context("group")?;
        group.address_type = AddressType::Auto;
        store.update_group(&group).await.context("automatic")?;
    }
    let now = now_ms();
    let address = |n: usize| format!("http://executor-with-a-rather-long-host-name-{n:05}.example:9999/");
    for n in 0..1200 {
        let key = RegistryKey {
            registry_group: "EXECUTOR".into(),
            registry_key: "crowded-app".into(),
            registry_value: address(n),
        };
        store.registry_upsert(&key, now, 5000).await.context("register")?;
    }
    let key = RegistryKey {
        registry_group: "EXECUTOR".into(),
        registry_key: "later-app".into(),
        registry_value: "http://later:1/".into(),
    };
    store.registry_upsert(&key, now, 5000).await.context("register")?;
    monitor_pass(store, now_ms(), &mut HashSet::new()).await;
    let list =
        store.load_group(crowded).await.context("load")?.context("group")?.address_list.context("list")?;
    ensure!(
        list.len() <= ADDRESS_LIST_MAX_BYTES && list.len() > ADDRESS_LIST_MAX_BYTES - 100,
        "{} bytes",
        list.len()
    );
    let kept: Vec<&str> = list.split(',').collect();
    let expected: Vec<String> = (0..kept.len()).map(address).collect();
    ensure_eq!(kept, expected, "the first addresses in order");
    let later_list = store.load_group(later).await.context("load")?.context("group")?.address_list;
    ensure_eq!(later_list.as_deref(), Some("http://later:1/"), "a later group is written too");

    let client = admin(&app).await?;
    let form = |kind: &str, list: &str| {
        vec![
            ("id", crowded.to_string()),
            ("appname", "crowded-app".into()),
            ("title", "Crowded".into()),
            ("addressType", kind.into()),
            ("addressList", list.into()),
        ]
    };
    ensure_eq!(
        client.post("/jobgroup/update", &borrowed(&form("0", ""))).await?["code"],
        200,
        "an automatic list is cut, not refused"
    );
    let long_manual = vec!["http://m:1/"; 7000].join(",");
    let reply = client.post("/jobgroup/update", &borrowed(&form("1", &long_manual))).await?;
    ensure_eq!(
        reply,
        json!({"code": 500, "msg": en().get("jobgroup_field_registryList_length"), "content": null})
    );
    let saved = client
        .post(
            "/jobgroup/save",
            &[("appname", "new-app"), ("title", "New"), ("addressType", "0"), ("addressList", &long_manual)],
        )
        .await?;
    ensure_eq!(
        saved["msg"],
        en().get("jobgroup_field_registryList_length"),
        "no database error on save either"
    );
    app.stop().await;
    Ok(())
}

/// Item 6: `registry_value` against its column, and the cap per AppName.
async fn registrations_are_checked_and_capped(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &["--xxl.job.registry.max-per-app=3"]).await?;
    let executor = app.executor_client();
    let long = format!("http://{}/", "h".repeat(250));
    let reply = executor.registry("capped-app", &long).await?;
    ensure_eq!(reply.msg(), "Illegal Argument: registryValue is longer than 255 characters.");
    let count = || async {
        app.app
            .db
            .live_registrations(3600, now_ms())
            .await
            .unwrap_or_default()
            .iter()
            .filter(|r| r.registry_key == "capped-app")
            .count()
    };
    // One at a time: writers running side by side may overshoot the cap by a row or two.
    for n in 0..5 {
        ensure_eq!(executor.registry("capped-app", &format!("http://10.0.0.{n}:9999/")).await?.code(), 200);
        if n < 3 {
            eventually(Duration::from_secs(5), "the registration", || async {
                (count().await == n + 1).then_some(())
            })
            .await?;
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    ensure_eq!(count().await, 3, "no more than the cap");
    ensure_eq!(
        executor.registry("capped-app", "http://10.0.0.0:9999/").await?.code(),
        200,
        "a registered executor still beats"
    );
    app.stop().await;
    Ok(())
}

fn header<'a>(reply: &'a PageReply, name: &str) -> Option<&'a str> {
    reply.headers.get(name).and_then(|v| v.to_str().ok())
}

/// Item 7: framing and sniffing headers on pages, JSON, redirects, errors and assets.
async fn every_console_response_is_hardened(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let client = admin(&app).await?;
    let anonymous = ConsoleClient::new(&app.base);
    let replies = vec![
        ("the login page", anonymous.get("/toLogin").await?),
        ("a redirect", anonymous.get("/jobinfo").await?),
        ("a page", client.get("/jobinfo").await?),
        (
            "JSON",
            client
                .request(
                    Method::POST,
                    "/jobinfo/pageList",
                    &[("jobGroup", "1"), ("triggerStatus", "-1")],
                    &[],
                )
                .await?,
        ),
        ("a 405", client.request(Method::PUT, "/jobinfo/remove?id=1", &[], &[]).await?),
        ("a refused GET", client.get("/jobinfo/remove?id=1").await?),
        ("an asset", anonymous.get("/static/js/common.js").await?),
        (
            "a login",
            anonymous
                .request(Method::POST, "/login", &[("userName", "admin"), ("password", "x")], &[])
                .await?,
        ),
    ];
    for (what, reply) in &replies {
        ensure_eq!(header(reply, "x-frame-options"), Some("SAMEORIGIN"), "{what}");
        ensure_eq!(header(reply, "content-security-policy"), Some("frame-ancestors 'self'"), "{what}");
        ensure_eq!(header(reply, "x-content-type-options"), Some("nosniff"), "{what}");
        ensure_eq!(header(reply, "referrer-policy"), Some("same-origin"), "{what}");
    }
    app.stop().await;
    Ok(())
}

/// Item 8: while an administrator keeps 123456, administrators see a warning on every page.
async fn the_default_password_is_announced_to_administrators(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    for lang in ["zh_CN", "zh_TC", "en"] {
        let app = TestApp::start(&db, &[&format!("--xxl.job.i18n={lang}")]).await?;
        let text = I18n::new(lang).get("system_default_password_warning").to_string();
        let client = admin(&app).await?;
        for path in ["/", "/jobinfo", "/help"] {
            let page = client.get(path).await?.body;
            ensure!(page.contains("id=\"defaultPasswordWarning\"") && page.contains(&text), "{lang} {path}");
        }
        app.stop().await;
    }
    let app = TestApp::start(&db, &[]).await?;
    let client = admin(&app).await?;
    ensure_eq!(
        client
            .post(
                "/user/add",
                &[("username", "viewer"), ("password", "viewer-pw"), ("role", "0"), ("permission", "1")]
            )
            .await?["code"],
        200
    );
    let mut viewer = ConsoleClient::new(&app.base);
    ensure_eq!(viewer.login("viewer", "viewer-pw", false).await?["code"], 200);
    ensure!(
        !viewer.get("/jobinfo").await?.body.contains("defaultPasswordWarning"),
        "only administrators are told"
    );
    ensure_eq!(
        client.post("/user/updatePwd", &[("oldPassword", "123456"), ("password", "a-real-one")]).await?
            ["code"],
        200
    );
    let mut again = ConsoleClient::new(&app.base);
    ensure_eq!(again.login("admin", "a-real-one", false).await?["code"], 200);
    ensure!(!again.get("/").await?.body.contains("defaultPasswordWarning"), "gone once changed");
    app.stop().await;
    Ok(())
}

/// IDOR and SSRF classes: a user of group 1 cannot reach group 2's jobs, and a manual run cannot
/// target an address outside the job's group.
async fn other_groups_are_out_of_reach(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let other = manual_group(store, "other-app", &["http://10.9.9.9:9999/"]).await?;
    let other_id = other.to_string();
    let foreign = insert(store, &job(other)).await?.to_string();
    let client = admin(&app).await?;
    ensure_eq!(
        client
            .post(
                "/user/add",
                &[("username", "alice"), ("password", "alice-pw"), ("role", "0"), ("permission", "1")]
            )
            .await?["code"],
        200
    );
    let mut alice = ConsoleClient::new(&app.base);
    ensure_eq!(alice.login("alice", "alice-pw", false).await?["code"], 200);
    let limit = en().get("system_permission_limit").to_string();
    for (path, form) in [
        ("/jobinfo/remove", vec![("id", foreign.as_str())]),
        ("/jobinfo/start", vec![("id", foreign.as_str())]),
        ("/jobinfo/trigger", vec![("id", foreign.as_str())]),
        ("/jobcode/save", vec![("id", foreign.as_str()), ("glueSource", "x"), ("glueRemark", "takeover")]),
        ("/jobinfo/pageList", vec![("jobGroup", other_id.as_str()), ("triggerStatus", "-1")]),
        ("/jobgroup/loadById", vec![("id", "1")]),
        ("/user/pageList", vec![("role", "-1")]),
    ] {
        let reply = alice.post(path, &form).await?;
        ensure!(reply["msg"].as_str().unwrap_or_default().contains(&limit), "{path}: {reply}");
    }
    ensure!(store.load_job(foreign.parse().context("id")?).await.context("load")?.is_some(), "not removed");
    let ssrf = client
        .post("/jobinfo/trigger", &[("id", "1"), ("addressList", "http://169.254.169.254/latest/")])
        .await?;
    ensure_eq!(ssrf["code"], 500, "an address outside the group: {ssrf}");
    app.stop().await;
    Ok(())
}

/// XSS, injection and traversal classes: hostile text is stored and shown as text, quotes are data,
/// and static paths stay inside the embedded assets.
async fn input_stays_data(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let client = admin(&app).await?;
    let markup = "<img src=x onerror=alert(1)>";
    let id = insert(
        &app.app.db,
        &xxl_job_admin::storage::JobInfo {
            job_desc: markup.into(),
            glue_type: "GLUE_SHELL".into(),
            ..job(1)
        },
    )
    .await?;
    let ide = client.get(&format!("/jobcode?jobId={id}")).await?.body;
    ensure!(
        !ide.contains(markup) && ide.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "escaped in the page"
    );
    ensure_eq!(
        client
            .post("/jobgroup/save", &[("appname", "xss-app"), ("title", "<b>x</b>"), ("addressType", "0")])
            .await?["msg"],
        format!("{}{}", en().get("jobgroup_field_title"), en().get("system_unvalid"))
    );
    for (path, form) in [
        ("/user/pageList", vec![("role", "-1"), ("username", "' OR ''='")]),
        ("/jobinfo/pageList", vec![("jobGroup", "1"), ("triggerStatus", "-1"), ("jobDesc", "%' OR 1=1 -- ")]),
        ("/jobgroup/pageList", vec![("appname", "' OR 1=1 -- "), ("title", "%")]),
    ] {
        let reply = client.request(Method::POST, path, &form, &[]).await?;
        ensure!(reply.status == 400 || reply.json()?["recordsTotal"] == 0, "{path}: {}", reply.body);
    }
    ensure!(app.app.db.load_user(1).await.context("load")?.is_some(), "the user table is intact");
    for path in [
        "/static/../../Cargo.toml",
        "/static/%2e%2e/%2e%2e/Cargo.toml",
        "/static/..%2f..%2fCargo.toml",
        "/static/js/..%2f..%2f..%2fsrc/main.rs",
        "/static//etc/passwd",
    ] {
        let reply = client.get(path).await?;
        ensure!(reply.status == 404 || reply.status == 400, "{path}: {}", reply.status);
        ensure!(!reply.body.contains("[package]") && !reply.body.contains("root:"), "{path}");
    }
    app.stop().await;
    Ok(())
}

/// Token and body-limit classes on the executor API.
async fn executor_api_checks_token_and_size(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let executor = app.executor_client();
    let prefix = &TOKEN[..TOKEN.len() - 1];
    for token in [None, Some("wrong"), Some(""), Some(prefix)] {
        let reply = executor.with_token(token).registry("token-app", "http://t:1/").await?;
        ensure_eq!(reply.code(), 500, "token {token:?}");
    }
    let huge = format!("[{{\"logId\":1,\"handleCode\":200,\"handleMsg\":\"{}\"}}]", "x".repeat(1024 * 1024));
    let reply = executor.post_raw("callback", huge).await;
    ensure!(reply.map(|r| r.code() != 200).unwrap_or(true), "a body over 1 MiB is refused");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let rows = app.app.db.live_registrations(3600, now_ms()).await.context("rows")?;
    ensure!(rows.iter().all(|r| r.registry_key != "token-app"), "nothing registered without the token");
    app.stop().await;
    Ok(())
}

/// One request on a raw connection: the headers, a pause, then the body (as clients that wait for the
/// socket to drain do); answers the status line and whether the server said `Connection: close`.
async fn late_body(
    stream: &mut tokio::net::TcpStream,
    head: &str,
    body: &str,
) -> Result<(String, bool), Failed> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    stream.write_all(head.as_bytes()).await.context("headers")?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    stream.write_all(body.as_bytes()).await.context("the body, written after the headers")?;
    let mut reply = Vec::new();
    let mut chunk = [0u8; 4096];
    // Every answer here is small: read until its headers and its whole (Content-Length) body are in.
    loop {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut chunk))
            .await
            .context("answer in time")?
            .context("read")?;
        ensure!(n > 0, "connection closed before an answer: {:?}", String::from_utf8_lossy(&reply));
        reply.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&reply).to_string();
        if let Some((head, rest)) = text.split_once("\r\n\r\n") {
            let length = head.lines().find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
            });
            if rest.len() >= length.unwrap_or(0) {
                let close = head.to_ascii_lowercase().contains("connection: close");
                return Ok((head.lines().next().unwrap_or_default().to_string(), close));
            }
        }
    }
}

/// A POST refused before its body was read (no token, no session) must leave the kept-alive connection
/// usable for the next request. (The executor API answers its refusals with `Connection: close`.)
async fn a_refused_post_keeps_its_connection(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let mut stream = tokio::net::TcpStream::connect(app.app.addr).await.context("connect")?;
    let body = r#"{"jobGroup":1}"#;
    for (path, content_type, expected) in [
        ("/xxl-job-admin/openapi/v1/jobs", "application/json", "401"),
        ("/xxl-job-admin/jobinfo/add", "application/x-www-form-urlencoded", "302"),
    ] {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        let (status, close) = late_body(&mut stream, &head, body).await?;
        ensure!(status.contains(expected), "{path}: {status}");
        ensure!(!close, "{path}: the connection stays open");
    }
    let (status, _) =
        late_body(&mut stream, "GET /xxl-job-admin/actuator/health HTTP/1.1\r\nHost: localhost\r\n\r\n", "")
            .await?;
    ensure!(status.contains("200"), "the next request on the same connection: {status}");
    app.stop().await;
    Ok(())
}

/// Two admins of one database: a session ended on one (logout) no longer works on the other, through the
/// `logout:` rows of `xxl_job_lock`; other sessions go on; a password change ends them everywhere.
async fn logout_ends_the_session_on_every_admin(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let (one, two) = (TestApp::start(&db, &[]).await?, TestApp::start(&db, &[]).await?);
    let leaving = admin(&one).await?;
    let staying = admin(&one).await?;
    let mut copy = ConsoleClient::new(&two.base);
    copy.cookie = leaving.cookie.clone();
    ensure_eq!(copy.get("/").await?.status, 200, "one session, both admins");
    ensure_eq!(leaving.request(Method::POST, "/logout", &[], &[]).await?.status, 200);
    ensure_eq!(copy.get("/").await?.status, 302, "ended on the other admin too");
    let mut other = ConsoleClient::new(&two.base);
    other.cookie = staying.cookie.clone();
    ensure_eq!(other.get("/").await?.status, 200, "other sessions go on");
    let rows: Vec<String> =
        secret_rows(&db).await?.into_iter().filter(|r| r.starts_with(LOGOUT_PREFIX)).collect();
    ensure_eq!(rows.len(), 1, "one row per ended session: {rows:?}");
    ensure_eq!(
        staying.post("/user/updatePwd", &[("oldPassword", "123456"), ("password", "changed-1")]).await?
            ["code"],
        200
    );
    ensure_eq!(
        other.get("/").await?.status,
        302,
        "a password change on one admin ends the session on the other"
    );
    one.stop().await;
    two.stop().await;
    Ok(())
}
