//! Webhook alarms against an HTTP server that plays DingTalk, WeCom, Feishu, Slack and a JSON endpoint,
//! checking each message's shape and the robots' signatures; and channels that are down or hang.

use crate::alarm::{
    alarmed_log, start_app, trigger_failing_job, APP_NAME, DEAD_EXECUTOR, GROUP_TITLE, JOB_DESC,
};
use crate::metrics::{sample, scrape};
use crate::support::console::ConsoleClient;
use crate::support::console::{is_error_page, job_form};
use crate::support::fixtures::{every_second_job, insert, manual_group};
use crate::support::smtp::closed_port;
use crate::support::webhook::{Received, WebhookServer, SECRET};
use crate::support::{eventually, now_ms, Backend, Behaviour, FakeExecutor, TestDb};
use crate::{cases, ensure, ensure_eq, Case, TestResult, ALL, SQLITE};
use serde_json::Value;
use std::time::{Duration, Instant};
use xxl_job_admin::domain::codes::AlarmStatus;
use xxl_job_admin::i18n::I18n;
use xxl_job_admin::storage::JobLog;

pub fn cases() -> Vec<Case> {
    cases! {
        "webhook" {
            ALL => each_channel_gets_its_own_signed_format,
            SQLITE => a_job_names_only_configured_channels,
            ALL => down_and_hanging_channels_fail_the_alarm_only,
            SQLITE => the_console_lists_channels_and_tests_them,
        }
    }
}

const CONSOLE: &str = "https://jobs.example.test/xxl-job-admin";

fn channel(name: &str, kind: &str, url: &str) -> Vec<String> {
    vec![
        format!("--xxl.job.alarm.webhook.{name}.type={kind}"),
        format!("--xxl.job.alarm.webhook.{name}.url={url}"),
    ]
}

/// The only request `path` received.
fn only(server: &WebhookServer, path: &str) -> Result<Received, libtest_mimic::Failed> {
    let received = server.received(path);
    ensure_eq!(received.len(), 1, "one request to {path}");
    Ok(received[0].clone())
}

fn text<'a>(body: &'a Value, pointer: &str) -> &'a str {
    body.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// What every chat message must say about the failed log, and must not let through.
fn check_markdown(what: &str, message: &str, log: &JobLog, job_id: i32) -> TestResult {
    let i18n = I18n::new("zh_CN");
    for expected in [
        format!("**{}**: B&amp;&lt;i&gt;ops&lt;/i&gt;", i18n.get("jobinfo_field_jobgroup")),
        format!("**{}**: {job_id}", i18n.get("jobinfo_field_id")),
        format!(
            "**{}**: settle &lt;script&gt;alert\\(1\\)&lt;/script&gt; accounts",
            i18n.get("jobinfo_field_jobdesc")
        ),
        format!("Alarm Job LogId={}\n\nTriggerMsg=", log.id),
        format!("[{}]({CONSOLE}/joblog/logDetailPage?id={})", i18n.get("joblog_rolling_log"), log.id),
    ] {
        ensure!(message.contains(&expected), "{what} lacks {expected:?}: {message}");
    }
    ensure!(
        !message.contains("<script") && !message.contains("<br>") && !message.contains("<span"),
        "{what} lets markup through: {message}"
    );
    Ok(())
}

async fn each_channel_gets_its_own_signed_format(backend: Backend) -> TestResult {
    let server = WebhookServer::start().await?;
    let url = |path: &str| format!("{}{path}", server.base);
    let mut args =
        vec!["--xxl.job.i18n=zh_CN".to_string(), format!("--xxl.job.alarm.console-url={CONSOLE}/")];
    // The DingTalk URL has its token in the query already, as real robot URLs do.
    args.extend(channel("ding-talk", "dingtalk", &url("/dingtalk?access_token=T0K3N")));
    args.push(format!("--xxl.job.alarm.webhook.ding-talk.secret={SECRET}"));
    args.extend(channel("wecom", "wecom", &url("/wecom")));
    args.extend(channel("feishu", "feishu", &url("/feishu")));
    args.push(format!("--xxl.job.alarm.webhook.feishu.secret={SECRET}"));
    // Slack and the JSON endpoint are chosen by the job's group, not by the job.
    args.extend(channel("slack", "slack", &url("/slack")));
    args.push(format!("--xxl.job.alarm.webhook.slack.groups=other-app,{APP_NAME}"));
    args.extend(channel("everything", "json", &url("/json")));
    args.push("--xxl.job.alarm.webhook.everything.groups=*".into());
    args.extend(channel("flaky", "json", &url("/flaky")));
    args.extend(channel("unused", "json", &url("/unused")));
    args.push("--xxl.job.alarm.webhook.unused.groups=other-app".into());
    let db = TestDb::fresh(backend)?;
    let app = start_app(&db, &args).await?;
    let job_id =
        trigger_failing_job(&app, "webhook:Ding_Talk, webhook:wecom,webhook:feishu , webhook:flaky").await?;
    let log = alarmed_log(&app, job_id, Duration::from_secs(30)).await?;
    ensure_eq!(
        log.alarm_status,
        AlarmStatus::Sent,
        "every channel delivered (the flaky one on its second attempt)"
    );
    ensure!(server.received("/unused").is_empty(), "a channel for other groups is not told");
    let zh = I18n::new("zh_CN");

    let ding = only(&server, "/dingtalk")?;
    ensure_eq!(ding.query("access_token"), Some("T0K3N"), "the robot's own query is kept");
    ensure!(ding.query("timestamp").is_some() && ding.query("sign").is_some(), "signed: {:?}", ding.query);
    ensure_eq!(text(&ding.body, "/msgtype"), "markdown");
    ensure_eq!(text(&ding.body, "/markdown/title"), zh.get("jobconf_monitor"));
    check_markdown("DingTalk", text(&ding.body, "/markdown/text"), &log, job_id)?;

    let wecom = only(&server, "/wecom")?;
    ensure_eq!(text(&wecom.body, "/msgtype"), "markdown");
    check_markdown("WeCom", text(&wecom.body, "/markdown/content"), &log, job_id)?;
    ensure!(
        wecom.query.is_empty() && wecom.body.get("sign").is_none(),
        "an unsigned robot gets no signature"
    );

    let feishu = only(&server, "/feishu")?;
    ensure_eq!(text(&feishu.body, "/msg_type"), "interactive");
    ensure!(text(&feishu.body, "/sign").len() == 44, "Feishu's signature is in the body: {}", feishu.body);
    ensure_eq!(text(&feishu.body, "/card/header/title/content"), zh.get("jobconf_monitor"));
    let card_text = text(&feishu.body, "/card/elements/0/text/content");
    ensure!(
        card_text.contains(&format!("Alarm Job LogId={}", log.id)) && !card_text.contains("<script"),
        "{card_text}"
    );
    ensure_eq!(
        text(&feishu.body, "/card/elements/1/actions/0/url"),
        format!("{CONSOLE}/joblog/logDetailPage?id={}", log.id)
    );

    let slack = only(&server, "/slack")?;
    ensure_eq!(text(&slack.body, "/blocks/0/type"), "header");
    ensure_eq!(
        text(&slack.body, "/blocks/1/fields/0/text"),
        format!("*{}*\nB&amp;&lt;i&gt;ops&lt;/i&gt;", zh.get("jobinfo_field_jobgroup"))
    );
    ensure!(
        text(&slack.body, "/blocks/2/text/text").contains(DEAD_EXECUTOR),
        "the trigger message: {}",
        slack.body
    );
    ensure_eq!(
        text(&slack.body, "/blocks/3/elements/0/url"),
        format!("{CONSOLE}/joblog/logDetailPage?id={}", log.id)
    );

    let json = only(&server, "/json")?;
    ensure_eq!(json.body["jobId"], job_id);
    ensure_eq!(json.body["logId"], log.id);
    ensure_eq!(text(&json.body, "/jobDesc"), JOB_DESC, "raw values: JSON needs no HTML escaping");
    ensure_eq!(text(&json.body, "/jobGroupTitle"), GROUP_TITLE);
    ensure_eq!(text(&json.body, "/appName"), APP_NAME);
    ensure_eq!(json.body["triggerCode"], 500);
    ensure!(
        text(&json.body, "/triggerMsg").contains(DEAD_EXECUTOR)
            && !text(&json.body, "/triggerMsg").contains("<br>"),
        "{}",
        json.body
    );
    ensure_eq!(json.body["handleMsg"], Value::Null, "no result yet: no handle message");
    ensure!(
        json.body["triggerTime"].as_i64().is_some_and(|t| (now_ms() - t).abs() < 60_000),
        "{}",
        json.body
    );
    ensure_eq!(text(&json.body, "/logUrl"), format!("{CONSOLE}/joblog/logDetailPage?id={}", log.id));

    let flaky = server.received("/flaky");
    ensure_eq!(flaky.len(), 2, "a 503 is retried once it passes");
    ensure!(
        flaky[1].at_ms - flaky[0].at_ms >= 400,
        "the retry waits: {} ms",
        flaky[1].at_ms - flaky[0].at_ms
    );

    let metrics = scrape(&app).await?;
    for channel in [
        "webhook:dingtalk",
        "webhook:wecom",
        "webhook:feishu",
        "webhook:slack",
        "webhook:everything",
        "webhook:flaky",
    ] {
        let series = format!("xxl_job_alarms_total{{channel=\"{channel}\",result=\"sent\"}}");
        ensure_eq!(sample(&metrics, &series), Some(1.0), "{series}");
    }
    app.stop().await;
    Ok(())
}

async fn down_and_hanging_channels_fail_the_alarm_only(backend: Backend) -> TestResult {
    let server = WebhookServer::start().await?;
    let down = closed_port().await?;
    let mut args = Vec::new();
    args.extend(channel("down", "slack", &format!("http://127.0.0.1:{down}/slack")));
    args.extend(channel("hang", "json", &format!("{}/hang", server.base)));
    args.push("--xxl.job.alarm.webhook.hang.timeout=500".into());
    args.extend(channel("fine", "json", &format!("{}/json", server.base)));
    let db = TestDb::fresh(backend)?;
    let app = start_app(&db, &args).await?;
    let executor = FakeExecutor::start(Behaviour::default()).await?;
    let healthy = manual_group(&app.app.db, "healthy", &[&executor.address]).await?;
    insert(&app.app.db, &every_second_job(healthy, 6)).await?;

    let failing = trigger_failing_job(&app, "webhook:down,webhook:hang,webhook:fine").await?;
    let second = trigger_failing_job(&app, "webhook:fine").await?;
    let started = Instant::now();
    let log = alarmed_log(&app, failing, Duration::from_secs(40)).await?;
    ensure_eq!(log.alarm_status, AlarmStatus::Failed, "a channel down and one hanging: the alarm failed");
    // Three attempts of 0.5 s and pauses of 0.5 s and 1 s, after at most one 10 s fail-monitor interval.
    ensure!(started.elapsed() < Duration::from_secs(20), "bounded: {:?}", started.elapsed());
    ensure_eq!(server.received("/hang").len(), 3, "the hanging channel was tried three times");
    ensure_eq!(alarmed_log(&app, second, Duration::from_secs(30)).await?.alarm_status, AlarmStatus::Sent);
    ensure_eq!(server.received("/json").len(), 2, "the working channel got both alarms");

    // The schedule loop was not held up and keeps going.
    let before = executor.calls_to("/run").len();
    eventually(Duration::from_secs(10), "three more fires of the every-second job", || async {
        (executor.calls_to("/run").len() >= before + 3).then_some(())
    })
    .await?;
    let metrics = scrape(&app).await?;
    ensure_eq!(
        sample(&metrics, "xxl_job_alarms_total{channel=\"webhook:down\",result=\"failed\"}"),
        Some(1.0)
    );
    ensure_eq!(
        sample(&metrics, "xxl_job_alarms_total{channel=\"webhook:hang\",result=\"failed\"}"),
        Some(1.0)
    );
    ensure_eq!(sample(&metrics, "xxl_job_alarms_total{channel=\"webhook:fine\",result=\"sent\"}"), Some(2.0));
    app.stop().await;
    Ok(())
}

/// A `webhook:<name>` no channel has would make every alarm of the job fail unseen: saving it is refused
/// with the configured channels, in the job's form and over REST alike (one service).
async fn a_job_names_only_configured_channels(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = start_app(&db, &channel("ops-hook", "json", "http://127.0.0.1:9/hook")).await?;
    let mut console = ConsoleClient::new(&app.base);
    ensure_eq!(console.login("admin", "123456", false).await?["code"], 200);
    let with_alarm = |alarm: &'static str| {
        let mut form = job_form();
        form.retain(|(name, _)| *name != "alarmEmail");
        form.push(("alarmEmail", alarm));
        form
    };
    let refused = console.post("/jobinfo/add", &with_alarm("ops@x.test, webhook:nope")).await?;
    let expected = I18n::new("en").format("jobinfo_alarm_unknown_channel", &[&"nope", &"opshook"]);
    ensure_eq!(
        (refused["code"].clone(), refused["msg"].clone()),
        (serde_json::json!(500), serde_json::json!(expected))
    );
    ensure_eq!(console.post("/jobinfo/add", &with_alarm("ops@x.test, webhook:Ops_Hook")).await?["code"], 200);
    app.stop().await;
    Ok(())
}

/// The alarm channels page: every channel with its type and its URL without the token, a test alarm that
/// reaches the robot signed as a real one, a refusal for a channel that is down or unknown; administrators only.
async fn the_console_lists_channels_and_tests_them(backend: Backend) -> TestResult {
    let server = WebhookServer::start().await?;
    let down = closed_port().await?;
    let db = TestDb::fresh(backend)?;
    let mut args = channel("ops-team", "dingtalk", &format!("{}/dingtalk?access_token=T0K3N", server.base));
    args.push(format!("--xxl.job.alarm.webhook.ops-team.secret={SECRET}"));
    args.extend(channel("audit", "json", &format!("{}/json", server.base)));
    args.push("--xxl.job.alarm.webhook.audit.groups=*".into());
    args.extend(channel("gone", "json", &format!("http://127.0.0.1:{down}/alarm")));
    let app = start_app(&db, &args).await?;
    let t = I18n::new("en");
    let mut admin = ConsoleClient::new(&app.base);
    ensure_eq!(admin.login("admin", "123456", false).await?["code"], 200);

    let page = admin.get("/alarm").await?;
    ensure_eq!(page.status, 200);
    // Every page carries the whole i18n bundle: the rows are recognised by their markup.
    for expected in [
        "<code>webhook:opsteam</code>",
        "<code>webhook:audit</code>",
        "<code>webhook:gone</code>",
        "<td>dingtalk</td>",
        "access_token=***</code>",
        &format!("<td>{}</td>", t.get("alarm_channel_groups_all")),
        "data-name=\"opsteam\"",
    ] {
        ensure!(page.body.contains(expected), "the page shows {expected:?}");
    }
    ensure!(!page.body.contains("T0K3N") && !page.body.contains(SECRET), "the page shows no secret");

    let sent = admin.post("/alarm/test", &[("name", "opsteam")]).await?;
    ensure_eq!(
        (sent["code"].clone(), sent["msg"].clone()),
        (serde_json::json!(200), serde_json::json!(t.format("alarm_channel_test_sent", &[&"opsteam"])))
    );
    // The robot checked the signature; the message says it is a test, sent by whom.
    let received = only(&server, "/dingtalk")?;
    let text = text(&received.body, "/markdown/text");
    ensure!(
        text.contains(t.get("alarm_test_job_desc"))
            && text.contains(&t.format("alarm_test_message", &[&"admin"])),
        "{text}"
    );

    let failed = admin.post("/alarm/test", &[("name", "gone")]).await?;
    // The reason it knows, not a pointer to the log; the channel's URL (a token in real robots) stays out.
    ensure_eq!(failed["msg"], t.format("alarm_channel_test_failed", &[&"gone", &"Connection refused"]));
    let said = failed["msg"].as_str().unwrap_or_default();
    ensure!(said.contains("Connection refused") && !said.contains(&down.to_string()), "{failed}");
    let unknown = admin.post("/alarm/test", &[("name", "nope")]).await?;
    ensure_eq!(unknown["msg"], t.format("alarm_channel_unknown", &[&"nope"]));
    ensure_eq!(server.received("/json").len(), 0, "a test goes to the channel asked for only");

    let added = admin
        .post(
            "/user/add",
            &[("username", "alice"), ("password", "alice-pw"), ("role", "0"), ("permission", "1")],
        )
        .await?;
    ensure_eq!(added["code"], 200);
    let mut alice = ConsoleClient::new(&app.base);
    ensure_eq!(alice.login("alice", "alice-pw", false).await?["code"], 200);
    let refused = alice.post("/alarm/test", &[("name", "opsteam")]).await?;
    ensure_eq!(refused["msg"], t.get("system_permission_limit"));
    let page = alice.get("/alarm").await?;
    ensure!(
        is_error_page(&page, t.get("system_permission_limit")) && !page.body.contains("webhook:opsteam"),
        "not for other users: {}",
        page.body
    );
    ensure!(!alice.get("/jobinfo").await?.body.contains("nav-alarm"), "nor in their menu");
    ensure_eq!(server.received("/dingtalk").len(), 1);
    app.stop().await;
    Ok(())
}
