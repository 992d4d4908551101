//! `{context}/actuator/prometheus`: the text format, and counters that move with the work done.

use crate::support::fixtures::{every_second_job, insert, job, manual_group};
use crate::support::{eventually, Backend, Behaviour, Context, FakeExecutor, TestApp, TestDb};
use crate::{cases, ensure, ensure_eq, Case, TestResult, ALL, SQLITE};
use libtest_mimic::Failed;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;
use xxl_job_admin::domain::{TriggerRequest, TriggerType};
use xxl_job_admin::storage::LogFilter;

pub fn cases() -> Vec<Case> {
    cases! {
        "metrics" {
            ALL => counters_move_after_triggers,
            SQLITE => promtool_accepts_the_exposition needs [Promtool],
        }
    }
}

/// The exposition text, after checking the content type.
pub async fn scrape(app: &TestApp) -> Result<String, Failed> {
    let response = app.http.get(app.url("/actuator/prometheus")).send().await.context("scrape")?;
    ensure_eq!(response.status().as_u16(), 200);
    let content_type =
        response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    ensure!(content_type.starts_with("text/plain; version=0.0.4"), "content type {content_type:?}");
    response.text().await.context("scrape body")
}

/// The value of the sample written exactly `series` (name and labels).
pub fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

async fn counters_move_after_triggers(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let before = scrape(&app).await?;
    for family in [
        "# TYPE xxl_job_triggers_total counter",
        "# TYPE xxl_job_fire_lateness_seconds histogram",
        "# TYPE xxl_job_trigger_lane_backlog gauge",
        "# TYPE xxl_job_trigger_rejections_total counter",
        "# TYPE xxl_job_misfires_settled_total counter",
        "# TYPE xxl_job_callbacks_received_total counter",
        "# TYPE xxl_job_callbacks_ignored_total counter",
        "# TYPE xxl_job_job_results_total counter",
        "# TYPE xxl_job_build_info gauge",
        "# TYPE xxl_job_executors_online gauge",
        "# TYPE xxl_job_alarms_total counter",
        "# TYPE xxl_job_schedule_pass_seconds histogram",
        "# TYPE xxl_job_schedule_lock_wait_seconds histogram",
        "# TYPE xxl_job_clock_offset_seconds gauge",
        "# TYPE xxl_job_db_connections gauge",
        "# TYPE process_cpu_seconds_total counter",
        "# TYPE process_resident_memory_bytes gauge",
        "# TYPE process_open_fds gauge",
        "# TYPE process_start_time_seconds gauge",
    ] {
        ensure!(before.contains(family), "{family} missing:\n{before}");
    }
    let manual_ok = "xxl_job_triggers_total{type=\"manual\",result=\"success\"}";
    ensure_eq!(sample(&before, manual_ok), Some(0.0));
    // Every known label set is there before its first event, so `increase()` sees the first one.
    for series in [
        "xxl_job_misfires_settled_total{strategy=\"DO_NOTHING\",reason=\"late\"}",
        "xxl_job_misfires_settled_total{strategy=\"FIRE_ONCE_NOW\",reason=\"collapsed\"}",
        "xxl_job_alarms_total{channel=\"email\",result=\"failed\"}",
        "xxl_job_alarms_total{channel=\"unknown\",result=\"failed\"}",
        "xxl_job_job_results_total{result=\"timeout\"}",
    ] {
        ensure_eq!(sample(&before, series), Some(0.0), "{series}");
    }
    ensure_eq!(
        sample(&before, &format!("xxl_job_build_info{{version=\"{}\"}}", env!("CARGO_PKG_VERSION"))),
        Some(1.0)
    );

    // An executor that registers, accepts /run and calls back.
    let executor =
        FakeExecutor::start(Behaviour { callback: Some((app.base.clone(), 200)), ..Behaviour::default() })
            .await?;
    let client = app.executor_client();
    ensure_eq!(client.registry("metrics-app", &executor.address).await?.code(), 200);
    let group = manual_group(&app.app.db, "metrics-app", &[&executor.address]).await?;
    let job_id = insert(&app.app.db, &job(group)).await?;
    app.app.triggers.submit(TriggerRequest::of_job(job_id, TriggerType::Manual));
    eventually(Duration::from_secs(15), "the manual run's result", || {
        let db = app.app.db.clone();
        async move {
            let (logs, _) = db.page_logs(&LogFilter { job_id, ..Default::default() }, 0, 10).await.ok()?;
            logs.into_iter().find(|l| l.handle_code == 200).map(|_| ())
        }
    })
    .await?;
    // A result for a log that does not exist is received and ignored.
    ensure_eq!(client.callback(&[(987_654_321, 200, None)]).await?.code(), 200);
    // A job on a schedule: its fires are planned, so their lateness is measured. The first pass runs
    // about four seconds after start; a next time before that would be fired late, and measured so.
    insert(&app.app.db, &every_second_job(group, 6)).await?;
    // A job whose time passed a minute ago: the pass settles the misfire (and does nothing, by its strategy).
    insert(&app.app.db, &every_second_job(group, -60)).await?;

    // A fire's lateness counts when its /run goes out, the trigger when the executor answered, the
    // callback when it came: all three are waited for.
    let after = eventually(Duration::from_secs(20), "scheduled fires in the metrics", || async {
        let text = scrape(&app).await.ok()?;
        let counted = [
            "xxl_job_fire_lateness_seconds_count",
            "xxl_job_triggers_total{type=\"cron\",result=\"success\"}",
            "xxl_job_callbacks_received_total",
        ];
        counted.iter().all(|series| sample(&text, series).is_some_and(|n| n >= 2.0)).then_some(text)
    })
    .await?;
    ensure_eq!(sample(&after, manual_ok), Some(1.0));
    ensure_eq!(
        sample(&after, "xxl_job_misfires_settled_total{strategy=\"DO_NOTHING\",reason=\"late\"}"),
        Some(1.0)
    );
    ensure!(
        sample(&after, "xxl_job_triggers_total{type=\"cron\",result=\"success\"}").is_some_and(|n| n >= 2.0),
        "{after}"
    );
    ensure!(sample(&after, "xxl_job_callbacks_received_total").is_some_and(|n| n >= 2.0), "{after}");
    ensure_eq!(sample(&after, "xxl_job_callbacks_ignored_total{reason=\"unknown_log\"}"), Some(1.0));
    // The manual run's success, as its executor reported it; the ignored item is not a result.
    ensure!(
        sample(&after, "xxl_job_job_results_total{result=\"success\"}").is_some_and(|n| n >= 1.0),
        "{after}"
    );
    ensure_eq!(sample(&after, "xxl_job_job_results_total{result=\"failure\"}"), Some(0.0));
    ensure_eq!(sample(&after, "xxl_job_executors_online{appname=\"metrics-app\"}"), Some(1.0));
    ensure!(sample(&after, "xxl_job_schedule_pass_seconds_count").is_some_and(|n| n >= 1.0), "{after}");
    ensure!(sample(&after, "xxl_job_schedule_lock_wait_seconds_count").is_some_and(|n| n >= 1.0), "{after}");
    // Fires on time: well inside the misfire window.
    let lateness_sum = sample(&after, "xxl_job_fire_lateness_seconds_sum").unwrap_or(f64::MAX);
    let lateness_count = sample(&after, "xxl_job_fire_lateness_seconds_count").unwrap_or(1.0);
    let on_time = lateness_sum < lateness_count;
    ensure!(on_time, "mean lateness above a second: {lateness_sum} / {lateness_count}");
    ensure!(sample(&after, "xxl_job_db_connections_max").is_some_and(|n| n >= 1.0), "{after}");
    ensure!(sample(&after, "process_resident_memory_bytes").is_some_and(|n| n > 1e6), "{after}");
    app.stop().await;

    // Under another management path, like health.
    let app = TestApp::start(&db, &["--management.server.servlet.context-path=/manage"]).await?;
    let response = app.http.get(app.url("/manage/prometheus")).send().await.context("scrape /manage")?;
    ensure_eq!(response.status().as_u16(), 200);
    app.stop().await;

    // Switched off as in Spring Boot: no endpoint, health still there.
    let app = TestApp::start(&db, &["--management.endpoint.prometheus.enabled=false"]).await?;
    let response =
        app.http.get(app.url("/actuator/prometheus")).send().await.context("scrape switched off")?;
    ensure_eq!(response.status().as_u16(), 404);
    let response = app.http.get(app.url("/actuator/health")).send().await.context("health")?;
    ensure_eq!(response.status().as_u16(), 200);
    app.stop().await;
    Ok(())
}

/// Prometheus's own checker (`promtool check metrics`, Debian package prometheus) reads the classic
/// exposition without an error or a lint; the family names are checked here too, as Prometheus parses
/// them. A scraper asking for OpenMetrics gets it, with the same series.
async fn promtool_accepts_the_exposition(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(
        &db,
        &["--xxl.job.alarm.webhook.ops.type=json", "--xxl.job.alarm.webhook.ops.url=http://127.0.0.1:9/hook"],
    )
    .await?;
    let text = scrape(&app).await?;
    // Prometheus asks for OpenMetrics first: it gets it, with the same samples.
    let accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    let response = app
        .http
        .get(app.url("/actuator/prometheus"))
        .header("accept", accept)
        .send()
        .await
        .context("scrape OpenMetrics")?;
    let content_type =
        response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    ensure!(
        content_type.starts_with("application/openmetrics-text; version=1.0.0"),
        "content type {content_type:?}"
    );
    let open = response.text().await.context("OpenMetrics body")?;
    app.stop().await;
    ensure!(open.ends_with("# EOF\n") && open.contains("# TYPE xxl_job_triggers counter\n"), "{open}");
    let series = |text: &str| {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.rsplit_once(' '))
            .map(|(s, _)| s.to_string())
            .collect::<std::collections::BTreeSet<_>>()
    };
    ensure_eq!(series(&open).len(), series(&text).len());
    let mut child = Command::new(PROMTOOL)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("run promtool")?;
    child.stdin.take().context("promtool's stdin")?.write_all(text.as_bytes()).context("feed promtool")?;
    let output = child.wait_with_output().context("promtool's verdict")?;
    let said =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    ensure!(output.status.success() && said.trim().is_empty(), "promtool: {said}\n{text}");
    // Each sample belongs to the family declared before it (its name, or a histogram's suffixes).
    let mut family = String::new();
    for line in text.lines() {
        if let Some(declared) = line.strip_prefix("# TYPE ") {
            family = declared.split(' ').next().unwrap_or_default().to_string();
        } else if !line.starts_with('#') {
            let name = line.split(['{', ' ']).next().unwrap_or_default();
            let owned = [
                family.as_str(),
                &format!("{family}_bucket"),
                &format!("{family}_sum"),
                &format!("{family}_count"),
            ]
            .contains(&name);
            ensure!(owned, "sample {name} outside its family {family}");
        }
    }
    Ok(())
}

/// Where Debian's package prometheus installs its checker.
pub const PROMTOOL: &str = "/usr/bin/promtool";
