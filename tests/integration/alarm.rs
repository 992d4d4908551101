//! E-mail alarms (beside a webhook channel) against an SMTP server run by the test (plain, STARTTLS with AUTH, TLS from the first
//! byte, down, silent), the daily log report and `/chartInfo`, and log retention.

use crate::support::console::ConsoleClient;
use crate::support::fixtures::{every_second_job, insert, job};
use crate::support::smtp::{closed_port, SmtpOptions, SmtpServer, SmtpTls};
use crate::support::webhook::WebhookServer;
use crate::support::{eventually, Backend, Behaviour, Context, FakeExecutor, TestApp, TestDb};
use crate::{cases, ensure, ensure_eq, Case, TestResult, ALL, SQLITE};
use chrono::{NaiveDate, NaiveDateTime};
use libtest_mimic::Failed;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use xxl_job_admin::domain::codes::{AddressType, AlarmStatus};
use xxl_job_admin::domain::{TriggerRequest, TriggerType};
use xxl_job_admin::i18n::I18n;
use xxl_job_admin::storage::{DayCounts, Db, IdSpan, JobGroup, JobLog, LogFilter, TriggerInfo};
use xxl_job_admin::time::Clock;
use xxl_job_admin::workers::report::ReportWorker;

pub fn cases() -> Vec<Case> {
    cases! {
        "alarm" {
            ALL => failed_trigger_mails_each_address_once,
            SQLITE => starttls_with_auth_in_the_configured_language,
            SQLITE => implicit_tls_from_the_socket_factory,
            SQLITE => untrusted_certificate_fails_the_alarm,
            ALL => smtp_down_fails_the_alarm_and_scheduling_goes_on,
            SQLITE => silent_smtp_server_times_out,
        }
        "report" {
            ALL => counts_today_and_two_days_before,
        }
        "retention" {
            ALL => deletes_old_logs_in_batches,
            ALL => cleans_at_start_and_not_below_seven_days,
        }
    }
}

const FROM: &str = "alarm@admin.test";
/// Port 1 on loopback refuses connections: every trigger to it fails.
pub(crate) const DEAD_EXECUTOR: &str = "http://127.0.0.1:1/";
/// The AppName of the failing job's group.
pub(crate) const APP_NAME: &str = "alarm-test";
/// Twelve characters: the length of `xxl_job_group.title`.
pub(crate) const GROUP_TITLE: &str = "B&<i>ops</i>";
pub(crate) const JOB_DESC: &str = "settle <script>alert(1)</script> accounts";

fn mail_args(port: u16) -> Vec<String> {
    vec![
        "--spring.mail.host=127.0.0.1".into(),
        format!("--spring.mail.port={port}"),
        format!("--spring.mail.from={FROM}"),
    ]
}

pub(crate) async fn start_app(db: &TestDb, args: &[String]) -> Result<TestApp, Failed> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    TestApp::start(db, &args).await
}

/// A group on the dead executor and a job with `alarm_email`, triggered once; returns the job id.
pub(crate) async fn trigger_failing_job(app: &TestApp, alarm_email: &str) -> Result<i32, Failed> {
    let group = JobGroup {
        id: 0,
        app_name: APP_NAME.into(),
        title: GROUP_TITLE.into(),
        address_type: AddressType::Manual,
        address_list: Some(DEAD_EXECUTOR.into()),
        update_time: None,
    };
    let group = app.app.db.insert_group(&group).await.context("insert group")?;
    let mut j = job(group);
    j.job_desc = JOB_DESC.into();
    j.alarm_email = Some(alarm_email.into());
    let job_id = insert(&app.app.db, &j).await?;
    app.app.triggers.submit(TriggerRequest::of_job(job_id, TriggerType::Manual));
    Ok(job_id)
}

/// The job's only log once the fail monitor has released it (alarm_status 2 or 3).
pub(crate) async fn alarmed_log(app: &TestApp, job_id: i32, within: Duration) -> Result<JobLog, Failed> {
    eventually(within, "the log's alarm outcome", || {
        let db = app.app.db.clone();
        async move {
            let (logs, _) = db.page_logs(&LogFilter { job_id, ..Default::default() }, 0, 10).await.ok()?;
            logs.into_iter().find(|l| matches!(l.alarm_status, AlarmStatus::Sent | AlarmStatus::Failed))
        }
    })
    .await
}

/// Checks the messages of one alarm: one per address, and what each says.
fn check_messages(
    server: &SmtpServer,
    log: &JobLog,
    job_id: i32,
    lang: &str,
    addresses: &[&str],
) -> TestResult {
    let received = server.received();
    let mut recipients: Vec<Vec<String>> = received.iter().map(|m| m.rcpt_to.clone()).collect();
    recipients.sort();
    let expected: Vec<Vec<String>> = addresses.iter().map(|a| vec![a.to_string()]).collect();
    ensure_eq!(recipients, expected, "one message to each address");
    let i18n = I18n::new(lang);
    for message in &received {
        ensure_eq!(message.mail_from, FROM);
        let from = message.header("From").unwrap_or_default();
        ensure!(from.contains(FROM), "From header {from:?}");
        let to = message.header("To").unwrap_or_default();
        ensure!(to.contains(&message.rcpt_to[0]), "To header {to:?} names the recipient");
        let subject = message.subject();
        ensure_eq!(subject.as_deref(), Some(i18n.get("jobconf_monitor")), "subject in {lang}");
        let content_type = message.header("Content-Type").unwrap_or_default();
        ensure!(content_type.starts_with("text/html"), "HTML message: {content_type:?}");
        let body = message.body();
        let cells = [
            "<td>B&amp;&lt;i&gt;ops&lt;/i&gt;</td>".to_string(),
            format!("<td>{job_id}</td>"),
            "<td>settle &lt;script&gt;alert(1)&lt;/script&gt; accounts</td>".to_string(),
            format!("<td>{}</td>", i18n.get("jobconf_monitor_alarm_type")),
            format!("<td>Alarm Job LogId={}<br>TriggerMsg=<br>", log.id),
            format!("<h5>{}：</h5>", i18n.get("jobconf_monitor_detail")),
        ];
        for cell in cells {
            ensure!(body.contains(&cell), "body lacks {cell:?}: {body}");
        }
        ensure!(!body.contains("<script>") && !body.contains("<i>"), "unescaped markup in {body}");
        // The stored trigger message names the dead address; its own markup is kept.
        ensure!(body.contains(DEAD_EXECUTOR), "trigger message in {body}");
        ensure!(!body.contains("HandleCode="), "no result, so no handle message: {body}");
    }
    Ok(())
}

async fn failed_trigger_mails_each_address_once(backend: Backend) -> TestResult {
    let server = SmtpServer::start(SmtpOptions::default()).await?;
    let hooks = WebhookServer::start().await?;
    let db = TestDb::fresh(backend)?;
    let mut args = mail_args(server.port);
    args.extend([
        "--xxl.job.alarm.webhook.hook.type=json".to_string(),
        format!("--xxl.job.alarm.webhook.hook.url={}/json", hooks.base),
    ]);
    let app = start_app(&db, &args).await?;
    let started = std::time::Instant::now();
    // A repeated address gets one message; the webhook entry is another channel, not an address.
    let job_id = trigger_failing_job(&app, "a@x.test,webhook:hook,b@x.test,a@x.test").await?;
    let log = alarmed_log(&app, job_id, Duration::from_secs(30)).await?;
    ensure!(started.elapsed() < Duration::from_secs(30), "alarm took {:?}", started.elapsed());
    ensure_eq!(log.trigger_code, 500, "the trigger failed");
    ensure_eq!(log.alarm_status, AlarmStatus::Sent, "every message was accepted");
    check_messages(&server, &log, job_id, "en", &["a@x.test", "b@x.test"])?;
    ensure_eq!(hooks.received("/json").len(), 1, "the webhook named beside the addresses");
    for message in server.received() {
        ensure!(!message.tls && message.user.is_none(), "plain SMTP without AUTH");
    }
    app.stop().await;
    Ok(())
}

async fn starttls_with_auth_in_the_configured_language(backend: Backend) -> TestResult {
    let credentials = ("alarm-user".to_string(), "s3cret pass".to_string());
    let server =
        SmtpServer::start(SmtpOptions { tls: SmtpTls::StartTls, credentials: Some(credentials.clone()) })
            .await?;
    let db = TestDb::fresh(backend)?;
    let mut args = mail_args(server.port);
    args.extend([
        "--xxl.job.i18n=zh_CN".to_string(),
        format!("--spring.mail.username={}", credentials.0),
        format!("--spring.mail.password={}", credentials.1),
        "--spring.mail.properties.mail.smtp.auth=true".into(),
        "--spring.mail.properties.mail.smtp.starttls.enable=true".into(),
        "--spring.mail.properties.mail.smtp.starttls.required=true".into(),
        // The server's certificate is self-signed: trusted for this host only, as JavaMail's ssl.trust.
        "--spring.mail.properties.mail.smtp.ssl.trust=127.0.0.1".into(),
    ]);
    let app = start_app(&db, &args).await?;
    let job_id = trigger_failing_job(&app, "ops@x.test").await?;
    let log = alarmed_log(&app, job_id, Duration::from_secs(30)).await?;
    ensure_eq!(log.alarm_status, AlarmStatus::Sent);
    check_messages(&server, &log, job_id, "zh_CN", &["ops@x.test"])?;
    let message = &server.received()[0];
    ensure!(message.tls, "sent after STARTTLS");
    ensure_eq!(message.user.as_deref(), Some("alarm-user"), "authenticated");
    let from = message.header("From").map(|f| crate::support::smtp::decode_words(&f)).unwrap_or_default();
    ensure!(
        from.contains(I18n::new("zh_CN").get("admin_name_full")),
        "display name in the language: {from:?}"
    );
    app.stop().await;
    Ok(())
}

async fn implicit_tls_from_the_socket_factory(backend: Backend) -> TestResult {
    let server = SmtpServer::start(SmtpOptions { tls: SmtpTls::Implicit, credentials: None }).await?;
    let db = TestDb::fresh(backend)?;
    let mut args = mail_args(server.port);
    args.extend([
        "--spring.mail.properties.mail.smtp.socketFactory.class=javax.net.ssl.SSLSocketFactory".to_string(),
        "--spring.mail.properties.mail.smtp.ssl.trust=*".into(),
    ]);
    let app = start_app(&db, &args).await?;
    let job_id = trigger_failing_job(&app, "ops@x.test").await?;
    let log = alarmed_log(&app, job_id, Duration::from_secs(30)).await?;
    ensure_eq!(log.alarm_status, AlarmStatus::Sent);
    check_messages(&server, &log, job_id, "en", &["ops@x.test"])?;
    ensure!(server.received()[0].tls, "TLS from the first byte");
    app.stop().await;
    Ok(())
}

async fn untrusted_certificate_fails_the_alarm(backend: Backend) -> TestResult {
    let server = SmtpServer::start(SmtpOptions { tls: SmtpTls::StartTls, credentials: None }).await?;
    let db = TestDb::fresh(backend)?;
    let mut args = mail_args(server.port);
    args.extend([
        "--spring.mail.properties.mail.smtp.starttls.enable=true".to_string(),
        "--spring.mail.properties.mail.smtp.starttls.required=true".into(),
        // Another host is trusted, not this one: its self-signed certificate must be refused.
        "--spring.mail.properties.mail.smtp.ssl.trust=smtp.elsewhere.test".into(),
    ]);
    let app = start_app(&db, &args).await?;
    let job_id = trigger_failing_job(&app, "ops@x.test").await?;
    let log = alarmed_log(&app, job_id, Duration::from_secs(30)).await?;
    ensure_eq!(
        log.alarm_status,
        AlarmStatus::Failed,
        "the certificate is checked unless the host is trusted"
    );
    ensure_eq!(server.received().len(), 0);
    app.stop().await;
    Ok(())
}

async fn smtp_down_fails_the_alarm_and_scheduling_goes_on(backend: Backend) -> TestResult {
    let port = closed_port().await?;
    let db = TestDb::fresh(backend)?;
    let app = start_app(&db, &mail_args(port)).await?;
    let executor = FakeExecutor::start(Behaviour::default()).await?;
    let healthy_group =
        crate::support::fixtures::manual_group(&app.app.db, "healthy", &[&executor.address]).await?;
    insert(&app.app.db, &every_second_job(healthy_group, 6)).await?;
    let job_id = trigger_failing_job(&app, "a@x.test,b@x.test").await?;
    let log = alarmed_log(&app, job_id, Duration::from_secs(30)).await?;
    ensure_eq!(log.alarm_status, AlarmStatus::Failed, "no SMTP server: the alarm failed");
    // The schedule loop and the other job were not held up, and keep going after the failed alarm.
    let before = executor.calls_to("/run").len();
    eventually(Duration::from_secs(10), "three more fires of the every-second job", || async {
        (executor.calls_to("/run").len() >= before + 3).then_some(())
    })
    .await?;
    // A second failure is alarmed on the next pass too: the monitor survived.
    let second = trigger_failing_job(&app, "c@x.test").await?;
    let log = alarmed_log(&app, second, Duration::from_secs(30)).await?;
    ensure_eq!(log.alarm_status, AlarmStatus::Failed);
    app.stop().await;
    Ok(())
}

async fn silent_smtp_server_times_out(backend: Backend) -> TestResult {
    // Accepts connections and never says a word.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.context("bind")?;
    let port = listener.local_addr().context("addr")?.port();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            open.push(stream);
        }
    });
    let db = TestDb::fresh(backend)?;
    let mut args = mail_args(port);
    args.push("--spring.mail.properties.mail.smtp.timeout=1000".into());
    let app = start_app(&db, &args).await?;
    let job_id = trigger_failing_job(&app, "a@x.test").await?;
    let log = alarmed_log(&app, job_id, Duration::from_secs(30)).await?;
    ensure_eq!(log.alarm_status, AlarmStatus::Failed, "a silent server times out as a failure");
    held.abort();
    app.stop().await;
    Ok(())
}

/// A clock fixed at one instant, for the report and retention passes.
struct FixedClock(i64);

impl Clock for FixedClock {
    fn now_ms(&self) -> i64 {
        self.0
    }
}

type Day = (i32, u32, u32);
type Time = (u32, u32, u32);

fn at(date: Day, time: Time) -> NaiveDateTime {
    NaiveDate::from_ymd_opt(date.0, date.1, date.2)
        .and_then(|d| d.and_hms_opt(time.0, time.1, time.2))
        .expect("valid date")
}

/// Inserts a log triggered at the wall-clock `time` with the given codes; returns its id.
async fn insert_log(
    db: &Db,
    time: NaiveDateTime,
    trigger_code: i32,
    handle_code: i32,
) -> Result<i64, Failed> {
    let ms = db.zone().to_epoch_ms(time);
    let id = db.insert_log(1, 1, ms).await.context("insert log")?;
    if trigger_code != 0 {
        let info = TriggerInfo {
            trigger_time_ms: ms,
            trigger_code,
            trigger_msg: Some("test".into()),
            executor_address: None,
            executor_handler: None,
            executor_param: None,
            executor_sharding_param: None,
            executor_fail_retry_count: 0,
        };
        db.update_trigger_info(id, &info).await.context("trigger info")?;
    }
    if handle_code != 0 {
        db.update_handle_info(id, ms, handle_code, "result", false).await.context("handle info")?;
    }
    Ok(id)
}

fn report_worker(db: &Db, now: NaiveDateTime, retention_days: Option<u32>) -> ReportWorker {
    let clock: Arc<dyn Clock> = Arc::new(FixedClock(db.zone().to_epoch_ms(now)));
    ReportWorker::new(db.clone(), clock, retention_days)
}

/// (running, success, fail) of each report row between the two days, by day.
async fn report_rows(
    db: &Db,
    from: NaiveDateTime,
    to: NaiveDateTime,
) -> Result<Vec<(String, i32, i32, i32)>, Failed> {
    let rows = db.reports_between(from, to).await.context("reports")?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let day = r.trigger_day.map(|d| d.format("%Y-%m-%d %H:%M:%S").to_string()).unwrap_or_default();
            (day, r.running_count, r.suc_count, r.fail_count)
        })
        .collect())
}

async fn counts_today_and_two_days_before(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let store = db.open().await?;
    let now = at((2020, 3, 15), (10, 30, 0));
    // (day, time, trigger_code, handle_code)
    let logs: &[(Day, Time, i32, i32)] = &[
        // 03-12, three days before "today": never recomputed.
        ((2020, 3, 12), (12, 0, 0), 200, 200),
        ((2020, 3, 12), (13, 0, 0), 500, 0),
        // 03-13: one success, one failed trigger, one result other than 200.
        ((2020, 3, 13), (0, 0, 0), 200, 200),
        ((2020, 3, 13), (8, 0, 0), 500, 0),
        ((2020, 3, 13), (9, 0, 0), 200, 502),
        // 03-14: running (triggered, no result yet), pending (not yet triggered), success at the last second.
        ((2020, 3, 14), (1, 0, 0), 200, 0),
        ((2020, 3, 14), (2, 0, 0), 0, 0),
        ((2020, 3, 14), (23, 59, 59), 200, 200),
        // 03-15: two successes, a failed trigger, a failed result, a running one.
        ((2020, 3, 15), (0, 0, 0), 200, 200),
        ((2020, 3, 15), (9, 0, 0), 200, 200),
        ((2020, 3, 15), (9, 1, 0), 500, 0),
        ((2020, 3, 15), (9, 2, 0), 200, 500),
        ((2020, 3, 15), (9, 3, 0), 200, 0),
        // A failed trigger that still got a success result counts as success.
        ((2020, 3, 15), (9, 4, 0), 500, 200),
        // The next day is outside every window.
        ((2020, 3, 16), (0, 0, 0), 200, 200),
    ];
    for (day, time, trigger_code, handle_code) in logs {
        insert_log(&store, at(*day, *time), *trigger_code, *handle_code).await?;
    }
    // An older day's row stays as it is; a stale row of yesterday is updated in place.
    store
        .save_report(at((2020, 3, 12), (0, 0, 0)), &DayCounts { total: 27, running: 9, success: 9 })
        .await
        .context("old row")?;
    store
        .save_report(at((2020, 3, 14), (0, 0, 0)), &DayCounts { total: 15, running: 5, success: 5 })
        .await
        .context("stale row")?;

    let mut worker = report_worker(&store, now, None);
    worker.refresh_reports().await.context("refresh")?;
    // A second pass with nothing changed must neither fail nor add rows.
    worker.refresh_reports().await.context("second refresh")?;
    let rows = report_rows(&store, at((2020, 3, 1), (0, 0, 0)), at((2020, 3, 31), (0, 0, 0))).await?;
    ensure_eq!(
        rows,
        vec![
            ("2020-03-12 00:00:00".to_string(), 9, 9, 9),
            ("2020-03-13 00:00:00".to_string(), 0, 1, 2),
            ("2020-03-14 00:00:00".to_string(), 2, 1, 0),
            ("2020-03-15 00:00:00".to_string(), 1, 3, 2),
        ]
    );
    let today = store
        .day_counts(at((2020, 3, 15), (0, 0, 0)), at((2020, 3, 15), (23, 59, 59)), IdSpan::ALL)
        .await
        .context("counts")?;
    ensure_eq!((today.total, today.running, today.success, today.fail()), (6, 1, 3, 2));

    // A new result moves today's counts on the next pass.
    insert_log(&store, at((2020, 3, 15), (10, 0, 0)), 200, 500).await?;
    worker.refresh_reports().await.context("third refresh")?;
    let rows = report_rows(&store, at((2020, 3, 15), (0, 0, 0)), at((2020, 3, 15), (0, 0, 0))).await?;
    ensure_eq!(rows, vec![("2020-03-15 00:00:00".to_string(), 1, 3, 3)]);

    store.close().await;
    // The admin only serves the rows; its own pass refreshes the real today, not 2020.
    let app = TestApp::start(&db, &["--xxl.job.logretentiondays=-1"]).await?;
    let mut console = ConsoleClient::new(&app.base);
    ensure_eq!(console.login("admin", "123456", false).await?["code"], 200);
    let chart = console
        .post("/chartInfo", &[("startDate", "2020-03-12 00:00:00"), ("endDate", "2020-03-15 23:59:59")])
        .await?;
    ensure_eq!(chart["code"], 200);
    ensure_eq!(
        chart["content"],
        serde_json::json!({
            "triggerDayList": ["2020-03-12", "2020-03-13", "2020-03-14", "2020-03-15"],
            "triggerDayCountRunningList": [9, 0, 2, 1],
            "triggerDayCountSucList": [9, 1, 1, 3],
            "triggerDayCountFailList": [9, 2, 0, 3],
            "triggerCountRunningTotal": 12,
            "triggerCountSucTotal": 14,
            "triggerCountFailTotal": 14,
        })
    );
    // A range that ends before the 15th leaves it out.
    let chart = console
        .post("/chartInfo", &[("startDate", "2020-03-13 00:00:00"), ("endDate", "2020-03-14 23:59:59")])
        .await?;
    ensure_eq!(chart["content"]["triggerDayList"], serde_json::json!(["2020-03-13", "2020-03-14"]));
    ensure_eq!(chart["content"]["triggerCountFailTotal"], 2);
    app.stop().await;
    Ok(())
}

async fn log_count(db: &Db) -> Result<i64, Failed> {
    Ok(db.page_logs(&LogFilter::default(), 0, 1).await.context("count logs")?.1)
}

async fn deletes_old_logs_in_batches(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let store = db.open().await?;
    let now = at((2020, 3, 15), (10, 30, 0));
    // 2 500 old logs: three delete batches of at most 1 000.
    let old_ms = store.zone().to_epoch_ms(at((2020, 2, 1), (12, 0, 0)));
    let rows: Vec<(i32, i32)> = vec![(1, 1); 500];
    for _ in 0..5 {
        store.insert_logs(&rows, old_ms).await.context("insert old logs")?;
    }
    // With 7 days kept, everything up to 03-08 00:00:00 goes.
    let edge = insert_log(&store, at((2020, 3, 8), (0, 0, 0)), 200, 200).await?;
    let kept = [
        insert_log(&store, at((2020, 3, 8), (0, 0, 1)), 200, 200).await?,
        insert_log(&store, at((2020, 3, 14), (12, 0, 0)), 500, 0).await?,
        insert_log(&store, at((2020, 3, 15), (9, 0, 0)), 200, 0).await?,
    ];
    ensure_eq!(log_count(&store).await?, 2504);
    let shutdown = CancellationToken::new();
    let deleted = report_worker(&store, now, Some(7)).clean(7, &shutdown).await.context("clean")?;
    ensure_eq!(deleted, 2501);
    ensure_eq!(log_count(&store).await?, 3);
    ensure!(store.load_log(edge).await.context("edge")?.is_none(), "a log at the limit is deleted");
    for id in kept {
        ensure!(store.load_log(id).await.context("kept")?.is_some(), "log {id} is newer than the limit");
    }
    // Reports are not touched by retention.
    store
        .save_report(at((2020, 2, 1), (0, 0, 0)), &DayCounts { total: 2500, running: 0, success: 0 })
        .await
        .context("report")?;
    report_worker(&store, now, Some(7)).clean(7, &shutdown).await.context("clean again")?;
    let rows = report_rows(&store, at((2020, 2, 1), (0, 0, 0)), at((2020, 2, 1), (0, 0, 0))).await?;
    ensure_eq!(rows, vec![("2020-02-01 00:00:00".to_string(), 0, 0, 2500)]);
    ensure_eq!(log_count(&store).await?, 3);
    store.close().await;
    Ok(())
}

async fn cleans_at_start_and_not_below_seven_days(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let first = TestApp::start(&db, &["--xxl.job.logretentiondays=-1"]).await?;
    let store = first.app.db.clone();
    let now_ms = chrono::Utc::now().timestamp_millis();
    let day_ms = 24 * 60 * 60 * 1000;
    let today = store.zone().start_of_day(now_ms, 0);
    let old = [
        store.insert_log(1, 1, now_ms - 40 * day_ms).await.context("log")?,
        store.insert_log(1, 1, store.zone().to_epoch_ms(today) - 8 * day_ms).await.context("log")?,
    ];
    let recent = [
        store.insert_log(1, 1, store.zone().to_epoch_ms(today) - 6 * day_ms + 1000).await.context("log")?,
        store.insert_log(1, 1, now_ms).await.context("log")?,
    ];
    first.stop().await;

    // Six days is below the minimum: cleaning is off.
    let second = TestApp::start(&db, &["--xxl.job.logretentiondays=6"]).await?;
    // The first pass refreshes today's report (now counting the log above) and then would clean.
    eventually(Duration::from_secs(10), "the first report pass", || {
        let db = second.app.db.clone();
        async move {
            let rows = db.reports_between(today, today).await.ok()?;
            rows.into_iter().find(|r| r.running_count >= 1).map(|_| ())
        }
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    ensure_eq!(log_count(&second.app.db).await?, 4, "nothing is cleaned with fewer than 7 days");
    second.stop().await;

    let third = TestApp::start(&db, &["--xxl.job.logretentiondays=7"]).await?;
    eventually(Duration::from_secs(15), "the clean at start", || {
        let db = third.app.db.clone();
        async move { (log_count(&db).await.ok()? == 2).then_some(()) }
    })
    .await?;
    for id in old {
        ensure!(third.app.db.load_log(id).await.context("old")?.is_none(), "log {id} is older than 7 days");
    }
    for id in recent {
        ensure!(third.app.db.load_log(id).await.context("recent")?.is_some(), "log {id} is within 7 days");
    }
    third.stop().await;
    Ok(())
}
