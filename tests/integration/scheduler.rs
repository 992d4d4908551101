//! The scheduling engine end to end: schedule loop, triggers, routing, retries and child jobs, with
//! in-test executors over real HTTP.

use crate::support::fixtures::{every_second_job as every_second, insert, job, log, manual_group};
use crate::support::recorder::{Answer, Recorder};
use crate::support::{eventually, Backend, Behaviour, Context, FakeExecutor, TestApp, TestDb};
use crate::{cases, ensure, ensure_eq, Case, TestResult, ALL, SQLITE};
use std::collections::HashSet;
use std::time::Duration;
use xxl_job_admin::domain::codes::{AlarmStatus, TriggerStatus};
use xxl_job_admin::domain::{TriggerRequest, TriggerType};

pub fn cases() -> Vec<Case> {
    cases! {
        "scheduler" {
            ALL => every_second_cron_fires_once_per_second,
            ALL => two_admins_never_fire_a_second_twice,
            ALL => sharding_broadcast_reaches_every_executor,
            ALL => failover_skips_a_dead_address,
            ALL => failing_job_is_retried_its_retry_count,
            ALL => child_job_runs_after_parent_succeeds,
            ALL => hanging_executor_does_not_delay_others,
            ALL => a_slow_executor_never_gets_a_job_twice_at_once,
            ALL => a_stopped_job_sends_nothing_after_the_stop,
            ALL => lost_trigger_results_are_settled,
            ALL => runs_on_a_vanished_executor_fail_after_ten_minutes,
            SQLITE => missing_group_ends_as_failed_trigger,
        }
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// A scheduled job firing every second on `executor`, starting at the next whole second after 1 s.
async fn every_second_job(app: &TestApp, executor: &FakeExecutor) -> Result<i32, libtest_mimic::Failed> {
    let group = manual_group(&app.app.db, "sched-test", &[&executor.address]).await?;
    let mut j = job(group);
    j.schedule_type = "CRON".into();
    j.schedule_conf = Some("* * * * * ?".into());
    j.trigger_status = TriggerStatus::Running;
    // After the admin's first pass (about 4.5 s after start): a time already passed would rightly fire
    // at once, late, as 2.4.2 does.
    j.trigger_next_time = (now_ms() / 1000 + 7) * 1000;
    insert(&app.app.db, &j).await
}

async fn every_second_cron_fires_once_per_second(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let executor = FakeExecutor::start(Behaviour::default()).await?;
    let job_id = every_second_job(&app, &executor).await?;
    let runs = eventually(Duration::from_secs(20), "five runs", || async {
        let runs = executor.calls_to("/run");
        (runs.len() >= 5).then_some(runs)
    })
    .await?;
    let mut seconds = Vec::new();
    for run in &runs {
        ensure_eq!(run.body["jobId"], job_id);
        ensure_eq!(run.token.as_deref(), Some(crate::support::TOKEN));
        ensure_eq!(run.content_type.as_deref(), Some("application/json;charset=UTF-8"));
        let planned = run.planned_ms.context("the planned instant header")?;
        ensure_eq!(planned % 1000, 0, "a cron fire stands for a whole second");
        ensure_eq!(run.trigger_type.as_deref(), Some("CRON"));
        let sent = run.body["logDateTime"].as_i64().context("logDateTime")?;
        // Fired on the whole second it was planned for, with millisecond precision.
        let lateness = sent - planned;
        ensure!(
            lateness < 300,
            "fire at {planned} is {lateness} ms past its second; all: {:?}",
            runs.iter().map(|r| r.body["logDateTime"].clone()).collect::<Vec<_>>()
        );
        ensure!((0..300).contains(&lateness), "fire for {planned} sent {lateness} ms later");
        seconds.push(planned / 1000);
    }
    let distinct: HashSet<_> = seconds.iter().collect();
    ensure_eq!(distinct.len(), seconds.len(), "one fire per second: {seconds:?}");
    for pair in seconds.windows(2) {
        ensure_eq!(pair[1] - pair[0], 1, "consecutive seconds: {seconds:?}");
    }
    let stored = app.app.db.load_job(job_id).await.context("load")?.context("job")?;
    ensure!(stored.trigger_next_time > now_ms(), "next time moves ahead");
    app.stop().await;
    Ok(())
}

async fn two_admins_never_fire_a_second_twice(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let first = TestApp::start(&db, &[]).await?;
    let second = TestApp::start(&db, &[]).await?;
    let executor = FakeExecutor::start(Behaviour::default()).await?;
    every_second_job(&first, &executor).await?;
    let runs = eventually(Duration::from_secs(25), "eight runs", || async {
        let runs = executor.calls_to("/run");
        (runs.len() >= 8).then_some(runs)
    })
    .await?;
    let seconds: Vec<i64> =
        runs.iter().filter_map(|r| r.body["logDateTime"].as_i64()).map(|t| t / 1000).collect();
    let distinct: HashSet<_> = seconds.iter().collect();
    ensure_eq!(distinct.len(), seconds.len(), "a second fired twice: {seconds:?}");
    let log_ids: HashSet<_> = runs.iter().filter_map(|r| r.body["logId"].as_i64()).collect();
    ensure_eq!(log_ids.len(), runs.len(), "one log per fire");
    first.stop().await;
    second.stop().await;
    Ok(())
}

async fn sharding_broadcast_reaches_every_executor(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let executors = [
        FakeExecutor::start(Behaviour::default()).await?,
        FakeExecutor::start(Behaviour::default()).await?,
        FakeExecutor::start(Behaviour::default()).await?,
    ];
    let addresses: Vec<&str> = executors.iter().map(|e| e.address.as_str()).collect();
    let group = manual_group(&app.app.db, "shard-test", &addresses).await?;
    let mut j = job(group);
    j.executor_route_strategy = Some("SHARDING_BROADCAST".into());
    let job_id = insert(&app.app.db, &j).await?;
    app.app.triggers.submit(TriggerRequest::of_job(job_id, TriggerType::Manual));
    for (index, executor) in executors.iter().enumerate() {
        let run =
            eventually(Duration::from_secs(10), "a shard", || async { executor.calls_to("/run").pop() })
                .await?;
        ensure_eq!(
            (run.body["broadcastIndex"].as_i64(), run.body["broadcastTotal"].as_i64()),
            (Some(index as i64), Some(3))
        );
        let log = app
            .app
            .db
            .load_log(run.body["logId"].as_i64().context("logId")?)
            .await
            .context("log")?
            .context("row")?;
        let expected = format!("{index}/3");
        let log = eventually(Duration::from_secs(5), "trigger info", || {
            let db = app.app.db.clone();
            async move { db.load_log(log.id).await.ok()?.filter(|l| l.trigger_code == 200) }
        })
        .await?;
        ensure_eq!(log.executor_sharding_param.as_deref(), Some(expected.as_str()));
        ensure_eq!(log.executor_address.as_deref(), Some(executor.address.as_str()));
        ensure!(
            log.trigger_msg.as_deref().unwrap_or("").contains(&format!("({index}/3)")),
            "{:?}",
            log.trigger_msg
        );
    }
    app.stop().await;
    Ok(())
}

async fn failover_skips_a_dead_address(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let live = FakeExecutor::start(Behaviour::default()).await?;
    // Port 1 on loopback refuses connections.
    let group = manual_group(&app.app.db, "failover-test", &["http://127.0.0.1:1/", &live.address]).await?;
    let mut j = job(group);
    j.executor_route_strategy = Some("FAILOVER".into());
    let job_id = insert(&app.app.db, &j).await?;
    app.app.triggers.submit(TriggerRequest::of_job(job_id, TriggerType::Manual));
    let run = eventually(Duration::from_secs(10), "the run on the live executor", || async {
        live.calls_to("/run").pop()
    })
    .await?;
    ensure_eq!(live.calls_to("/beat").len(), 1);
    ensure_eq!(
        live.calls_to("/beat")[0].body,
        serde_json::json!(""),
        "the beat body is the JSON string \"\""
    );
    let log_id = run.body["logId"].as_i64().context("logId")?;
    let log = eventually(Duration::from_secs(5), "trigger info", || {
        let db = app.app.db.clone();
        async move { db.load_log(log_id).await.ok()?.filter(|l| l.trigger_code != 0) }
    })
    .await?;
    ensure_eq!(log.trigger_code, 200);
    ensure_eq!(log.executor_address.as_deref(), Some(live.address.as_str()));
    let msg = log.trigger_msg.unwrap_or_default();
    ensure!(
        msg.contains("http://127.0.0.1:1/") && msg.contains("code：500"),
        "the dead probe is reported: {msg}"
    );
    app.stop().await;
    Ok(())
}

async fn failing_job_is_retried_its_retry_count(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let failing = FakeExecutor::start(Behaviour { run_code: 500, ..Behaviour::default() }).await?;
    let group = manual_group(&app.app.db, "retry-test", &[&failing.address]).await?;
    let mut j = job(group);
    j.executor_fail_retry_count = 2;
    j.executor_param = Some("original".into());
    let job_id = insert(&app.app.db, &j).await?;
    let mut request = TriggerRequest::of_job(job_id, TriggerType::Manual);
    request.executor_param = Some("manual-param".into());
    app.app.triggers.submit(request);
    // The fail monitor runs every 10 s: first run, then two retries.
    let runs = eventually(Duration::from_secs(45), "three runs", || async {
        let runs = failing.calls_to("/run");
        (runs.len() >= 3).then_some(runs)
    })
    .await?;
    for run in &runs {
        ensure_eq!(run.body["executorParams"], "manual-param", "retries keep the failed run's parameter");
    }
    // Let a further monitor pass run: the chain must have ended at 0.
    tokio::time::sleep(Duration::from_secs(11)).await;
    ensure_eq!(failing.calls_to("/run").len(), 3);
    let mut counts = Vec::new();
    for run in &runs {
        let log = app
            .app
            .db
            .load_log(run.body["logId"].as_i64().context("logId")?)
            .await
            .context("log")?
            .context("row")?;
        counts.push(log.executor_fail_retry_count);
        ensure_eq!(log.trigger_code, 500);
    }
    ensure_eq!(counts, vec![2, 1, 0]);
    let first = app
        .app
        .db
        .load_log(runs[0].body["logId"].as_i64().context("logId")?)
        .await
        .context("log")?
        .context("row")?;
    ensure!(first.trigger_msg.unwrap_or_default().contains("#F39C12"), "the retry banner is appended");
    ensure_eq!(first.alarm_status, AlarmStatus::Sent, "no alarm address: nothing to send counts as sent");
    app.stop().await;
    Ok(())
}

async fn child_job_runs_after_parent_succeeds(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let executor =
        FakeExecutor::start(Behaviour { callback: Some((app.base.clone(), 200)), ..Behaviour::default() })
            .await?;
    let group = manual_group(&app.app.db, "child-test", &[&executor.address]).await?;
    let child_id = insert(&app.app.db, &job(group)).await?;
    let mut parent = job(group);
    parent.child_jobid = Some(format!("{child_id},abc"));
    let parent_id = insert(&app.app.db, &parent).await?;
    app.app.triggers.submit(TriggerRequest::of_job(parent_id, TriggerType::Manual));
    let child_run = eventually(Duration::from_secs(15), "the child's run", || async {
        executor.calls_to("/run").into_iter().find(|r| r.body["jobId"] == child_id)
    })
    .await?;
    let parent_run =
        executor.calls_to("/run").into_iter().find(|r| r.body["jobId"] == parent_id).context("parent run")?;
    ensure!(parent_run.at_ms <= child_run.at_ms, "the child runs after the parent");
    let parent_log = app
        .app
        .db
        .load_log(parent_run.body["logId"].as_i64().context("logId")?)
        .await
        .context("log")?
        .context("row")?;
    let msg = parent_log.handle_msg.unwrap_or_default();
    ensure!(msg.starts_with("done by the test executor<br><br><span style=\"color:#00c0ef;\" >"), "{msg}");
    ensure!(msg.contains("abc"), "the invalid child id is reported: {msg}");
    let child_log_id = child_run.body["logId"].as_i64().context("logId")?;
    let child_log = eventually(Duration::from_secs(5), "child trigger info", || {
        let db = app.app.db.clone();
        async move { db.load_log(child_log_id).await.ok()?.filter(|l| l.trigger_code != 0) }
    })
    .await?;
    let parent_title = xxl_job_admin::i18n::I18n::new("en").get("jobconf_trigger_type_parent").to_string();
    ensure!(child_log.trigger_msg.unwrap_or_default().contains(&parent_title), "triggered as a child");
    app.stop().await;
    Ok(())
}

async fn hanging_executor_does_not_delay_others(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let hung = FakeExecutor::start(Behaviour { hang: true, ..Behaviour::default() }).await?;
    let healthy = FakeExecutor::start(Behaviour::default()).await?;
    let hung_group = manual_group(&app.app.db, "hung", &[&hung.address]).await?;
    let healthy_group = manual_group(&app.app.db, "healthy", &[&healthy.address]).await?;
    let hung_job = insert(&app.app.db, &job(hung_group)).await?;
    let healthy_job = insert(&app.app.db, &job(healthy_group)).await?;
    for _ in 0..50 {
        app.app.triggers.submit(TriggerRequest::of_job(hung_job, TriggerType::Manual));
    }
    let started = std::time::Instant::now();
    app.app.triggers.submit(TriggerRequest::of_job(healthy_job, TriggerType::Manual));
    eventually(Duration::from_secs(10), "the healthy run", || async { healthy.calls_to("/run").pop() })
        .await?;
    ensure!(started.elapsed() < Duration::from_secs(2), "the healthy job waited {:?}", started.elapsed());
    // The hung calls time out after the 3 s read timeout and are recorded as failed triggers.
    let run =
        eventually(Duration::from_secs(15), "a hung run", || async { hung.calls_to("/run").pop() }).await?;
    let log_id = run.body["logId"].as_i64().context("logId")?;
    let log = eventually(Duration::from_secs(15), "the timed-out trigger", || {
        let db = app.app.db.clone();
        async move { db.load_log(log_id).await.ok()?.filter(|l| l.trigger_code != 0) }
    })
    .await?;
    ensure_eq!(log.trigger_code, 500);
    ensure!(log.trigger_msg.unwrap_or_default().to_lowercase().contains("timed out"), "timeout reported");
    app.stop().await;
    Ok(())
}

/// An executor answering `/run` after 2 s keeps its connections busy: 64 every-second jobs need 128 of
/// them, and new ones come 32 at a time, so for seconds fires wait for a connection, several of one job
/// at once. However late they get one, a job's waiting fires collapse into one run (the fault campaign
/// found two runs of a job 2 ms apart when a fire's last check came before its wait).
async fn a_slow_executor_never_gets_a_job_twice_at_once(backend: Backend) -> TestResult {
    const JOBS: usize = 64;
    const ANSWER_AFTER: Duration = Duration::from_secs(2);
    /// Closer than this, two runs of a job were one fire sent twice, not two fires.
    const MIN_SPACING_MS: i64 = 50;
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let recorder = Recorder::start("slow-executor", crate::support::TOKEN).await?;
    recorder.answer(Answer::Slowly(ANSWER_AFTER));
    let group = manual_group(&app.app.db, "slow-executor", &[&recorder.address]).await?;
    for _ in 0..JOBS {
        insert(&app.app.db, &every_second(group, 7)).await?;
    }
    let first_fire = (now_ms() / 1000 + 7) * 1000;
    tokio::time::sleep(Duration::from_millis((first_fire + 12_000 - now_ms()).max(0) as u64)).await;
    app.stop().await;
    let mut by_job: std::collections::BTreeMap<i64, Vec<i64>> = std::collections::BTreeMap::new();
    for fire in recorder.fires() {
        by_job.entry(fire.job_id).or_default().push(fire.at_ms);
    }
    let late = recorder.fires().iter().filter_map(|f| f.lateness_ms()).max().unwrap_or(0);
    ensure!(late > 1_000, "the executor's connections never ran short: the latest fire {late} ms late");
    let mut twice = Vec::new();
    for (job, arrivals) in &mut by_job {
        arrivals.sort_unstable();
        for pair in arrivals.windows(2) {
            if pair[1] - pair[0] < MIN_SPACING_MS {
                twice.push(format!("job {job}: runs {} ms apart at {}", pair[1] - pair[0], pair[1]));
            }
        }
    }
    ensure!(
        twice.is_empty(),
        "{} pair(s) of runs of one job within {MIN_SPACING_MS} ms, e.g. {:?}",
        twice.len(),
        &twice[..twice.len().min(8)]
    );
    Ok(())
}

async fn missing_group_ends_as_failed_trigger(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let job_id = insert(&app.app.db, &job(4242)).await?;
    app.app.triggers.submit(TriggerRequest::of_job(job_id, TriggerType::Manual));
    let log = eventually(Duration::from_secs(10), "the failed trigger", || {
        let db = app.app.db.clone();
        async move {
            let (logs, _) = db
                .page_logs(&xxl_job_admin::storage::LogFilter { job_id, ..Default::default() }, 0, 10)
                .await
                .ok()?;
            logs.into_iter().find(|l| l.trigger_code != 0)
        }
    })
    .await?;
    ensure_eq!(log.trigger_code, 500, "not stuck as running");
    ensure!(log.trigger_msg.unwrap_or_default().contains("4242"), "the missing group is named");
    app.stop().await;
    Ok(())
}

async fn a_stopped_job_sends_nothing_after_the_stop(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let executor = FakeExecutor::start(Behaviour::default()).await?;
    let job_id = every_second_job(&app, &executor).await?;
    eventually(Duration::from_secs(20), "two runs", || async {
        (executor.calls_to("/run").len() >= 2).then_some(())
    })
    .await?;
    let mut console = crate::support::console::ConsoleClient::new(&app.base);
    console.login("admin", "123456", false).await?;
    // Stopped after the pass of x.500: the next second's fire is planned (its row written) by then.
    let now = now_ms();
    tokio::time::sleep(Duration::from_millis((1_700 - now % 1000) as u64 % 1000)).await;
    let reply = console.post("/jobinfo/stop", &[("id", &job_id.to_string())]).await?;
    ensure_eq!(reply["code"], 200);
    let stopped_at = now_ms();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let late: Vec<i64> =
        executor.calls_to("/run").iter().map(|r| r.at_ms).filter(|at| *at > stopped_at + 50).collect();
    ensure!(late.is_empty(), "runs after the stop at {stopped_at}: {late:?}");
    // The planned fire's row was removed with it: nothing is left "running".
    let unsent = app.app.db.find_unsettled_logs(now_ms() + 60_000, 10).await.context("unsettled")?;
    ensure!(unsent.is_empty(), "rows left without a trigger result: {unsent:?}");
    app.stop().await;
    Ok(())
}

/// Running logs whose executor no longer registers are failed after ten minutes (2.4.2: JobCompleteHelper),
/// more of them than one statement looks up; a listed manual address and a younger run are left running.
async fn runs_on_a_vanished_executor_fail_after_ten_minutes(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    // Written before the admin starts: its lost-result monitor's first pass comes 50 ms after the start.
    let store = db.open().await?;
    let (gone, listed) = ("http://127.0.0.1:9/", "http://127.0.0.1:10/");
    let group = manual_group(&store, "lost-runs", &[listed]).await?;
    let job_id = insert(&store, &job(group)).await?;
    let eleven_minutes_ago = now_ms() - 11 * 60_000;
    let mut vanished = Vec::new();
    for _ in 0..1_005 {
        vanished.push(log(&store, group, job_id, eleven_minutes_ago, 200, 0, gone).await?);
    }
    let on_listed = log(&store, group, job_id, eleven_minutes_ago, 200, 0, listed).await?;
    let younger = log(&store, group, job_id, now_ms() - 60_000, 200, 0, gone).await?;
    let app = TestApp::start(&db, &[]).await?;
    let last = *vanished.last().context("rows")?;
    eventually(Duration::from_secs(30), "the last lost run failed", || async {
        store.load_log(last).await.ok()?.filter(|l| l.handle_code == 500).map(drop)
    })
    .await?;
    let mut unfailed = Vec::new();
    for &id in &vanished {
        let row = store.load_log(id).await.context("load")?.context("row")?;
        if row.handle_code != 500 || !row.handle_msg.as_deref().unwrap_or("").contains("offline") {
            unfailed.push((id, row.handle_code, row.handle_msg));
        }
    }
    ensure!(unfailed.is_empty(), "lost runs not failed as lost: {unfailed:?}");
    for (what, id) in [("on a listed manual address", on_listed), ("younger than ten minutes", younger)] {
        let row = store.load_log(id).await.context("load")?.context("row")?;
        ensure_eq!(row.handle_code, 0, "a run {what} is left running");
    }
    app.stop().await;
    Ok(())
}

async fn lost_trigger_results_are_settled(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let executor = FakeExecutor::start(Behaviour::default()).await?;
    let group = manual_group(store, "lost-test", &[&executor.address]).await?;
    let mut j = job(group);
    j.schedule_type = "CRON".into();
    j.schedule_conf = Some("0 0 0 1 1 ? 2099".into());
    j.misfire_strategy = "FIRE_ONCE_NOW".into();
    j.trigger_status = TriggerStatus::Running;
    j.trigger_next_time = 4_070_908_800_000;
    let once_now = insert(store, &j).await?;
    j.misfire_strategy = "DO_NOTHING".into();
    let do_nothing = insert(store, &j).await?;
    // Rows an admin wrote and never finished (killed between its insert and its result), two minutes
    // ago; and one that a live admin is working on right now.
    let lost = store
        .insert_logs(&[(group, once_now), (group, do_nothing)], now_ms() - 120_000)
        .await
        .context("lost rows")?;
    let live = store.insert_log(group, do_nothing, now_ms()).await.context("live row")?;
    let settled = eventually(Duration::from_secs(20), "the sweep", || async {
        let row = store.load_log(lost[1]).await.ok()??;
        (row.trigger_code == 500).then_some(row)
    })
    .await?;
    ensure!(
        settled.trigger_msg.as_deref().unwrap_or("").contains("Trigger result lost"),
        "{:?}",
        settled.trigger_msg
    );
    ensure_eq!(settled.handle_code, 0);
    // The FIRE_ONCE_NOW job's row too: nothing is sent again for a lost trigger (the schedule pass
    // compensates a missed next time; a trigger that may have reached its executor is not repeated).
    let other = eventually(Duration::from_secs(5), "the other row", || async {
        store.load_log(lost[0]).await.ok()?.filter(|l| l.trigger_code == 500)
    })
    .await?;
    ensure!(
        other.trigger_msg.as_deref().unwrap_or("").contains("Trigger result lost"),
        "{:?}",
        other.trigger_msg
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    ensure_eq!(executor.calls_to("/run").len(), 0, "nothing is sent for lost rows");
    let live_row = store.load_log(live).await.context("load")?.context("row")?;
    ensure_eq!(live_row.trigger_code, 0, "a recent row is left to the admin working on it");
    app.stop().await;
    Ok(())
}
