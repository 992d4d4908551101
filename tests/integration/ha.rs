//! Database high availability through multi-host URLs (issue 21): an admin whose first database host dies
//! goes on with the next one without a restart, and on PostgreSQL `targetServerType=primary` passes over a
//! standby listed first.
//!
//! The servers are the test's own: two MariaDB servers, the second a replica of the first (a primary with
//! a failover host), and a PostgreSQL primary with a streaming standby. The admin runs as a child process.

use crate::support::console::ConsoleClient;
use crate::support::fixtures;
use crate::support::private_mariadb::{stable_free_ports, PrivateMariaDb};
use crate::support::private_postgres::PrivatePostgres;
use crate::support::recorder::{Fire, Recorder};
use crate::support::{eventually, now_ms, AdminProcess, Backend, Context, TOKEN};
use crate::{cases, Case, TestResult, MYSQL_ONLY, POSTGRES_ONLY};
use libtest_mimic::Failed;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

pub fn cases() -> Vec<Case> {
    cases! {
        "ha" {
            MYSQL_ONLY => mariadb_admin_goes_on_with_the_next_host_when_the_first_dies needs [PrivateMariadb],
            POSTGRES_ONLY => postgres_target_server_type_primary_passes_over_a_standby needs [PrivatePostgres],
        }
    }
}

const DATABASE: &str = "xxl_job";
const APP_NAME: &str = "xxl-job-ha";
/// After the crash of the first host, the admin works on the second within this long: the watcher checks
/// every second, and a pass comes every half second.
pub const TAKEOVER_MS: i64 = 5_000;
/// How long the job is watched after the takeover.
const WATCHED_MS: i64 = 8_000;
/// A `/run` already on the wire when the console's stop was answered.
const STOP_WIRE_MS: i64 = 50;

/// (job, planned second) → the fires received for it.
pub fn by_plan(fires: &[Fire]) -> BTreeMap<(i64, i64), Vec<&Fire>> {
    let mut plans: BTreeMap<(i64, i64), Vec<&Fire>> = BTreeMap::new();
    for fire in fires {
        if let Some(planned) = fire.planned_ms {
            plans.entry((fire.job_id, planned)).or_default().push(fire);
        }
    }
    plans
}

/// Waits until the admin's health check answers 200; how long that took.
pub async fn health_up_within(admin: &AdminProcess, limit: Duration) -> Result<Duration, Failed> {
    let http = reqwest::Client::builder().timeout(Duration::from_secs(2)).build().context("client")?;
    let started = Instant::now();
    let url = admin.health_url();
    eventually(limit, &format!("{} healthy", admin.name), || async {
        http.get(&url).send().await.ok().filter(|r| r.status().is_success()).map(drop)
    })
    .await?;
    Ok(started.elapsed())
}

/// How long after `since_ms` the admin logged its move to another server, reading its log from `mark`.
pub fn moved_after(admin: &AdminProcess, mark: u64, since_ms: i64) -> Option<i64> {
    let log = admin.log_since(mark);
    let line = log.lines().find(|line| line.contains("moved to another server"))?;
    let at = chrono::DateTime::parse_from_rfc3339(line.split_whitespace().next()?).ok()?;
    Some(at.timestamp_millis() - since_ms)
}

/// SIGTERM, and how long the exit took (issue 25 item 9: a stop after a database crash may hang).
pub async fn stop_and_time(admin: &mut AdminProcess) -> String {
    let started = Instant::now();
    if let Err(e) = admin.send_term() {
        return format!("{}: SIGTERM not sent: {}", admin.name, e.message().unwrap_or(""));
    }
    match admin.wait_exit().await {
        Ok(()) => format!("{} exited {:.1} s after SIGTERM", admin.name, started.elapsed().as_secs_f64()),
        Err(_) => format!(
            "{} did not exit within {:.0} s of SIGTERM (killed)",
            admin.name,
            started.elapsed().as_secs_f64()
        ),
    }
}

async fn mariadb_admin_goes_on_with_the_next_host_when_the_first_dies(_: Backend) -> TestResult {
    let ports = stable_free_ports(2)?;
    let binlog = ["--server-id=1", "--log-bin=binlog", "--binlog-format=ROW"];
    let mut primary = PrivateMariaDb::start_with(ports[0], binlog.map(String::from).to_vec()).await?;
    let replica = PrivateMariaDb::start_with(ports[1], vec!["--server-id=2".to_string()]).await?;
    let mut conn = replica.connect("mysql").await?;
    let follow = format!(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='root', MASTER_PASSWORD='', \
         MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1",
        primary.port
    );
    for sql in [follow.as_str(), "START SLAVE"] {
        sqlx::query(sql).execute(&mut conn).await.context(sql)?;
    }

    let url = format!(
        "jdbc:mysql://127.0.0.1:{},127.0.0.1:{}/{DATABASE}?serverTimezone=UTC",
        primary.port, replica.port
    );
    let logs = tempfile::tempdir().context("temp dir")?;
    let recorder = Recorder::start(APP_NAME, TOKEN).await?;
    let mut admin = AdminProcess::spawn("admin-ha", &url, TOKEN, logs.path())?;
    let outcome = async {
        admin.wait_ready().await?;
        recorder.set_admins(&[&admin.base]);
        let db = fixtures::db_at(&primary.jdbc_url(DATABASE)).await?;
        let group = fixtures::manual_group(&db, APP_NAME, &[&recorder.address]).await?;
        let job = i64::from(fixtures::insert(&db, &fixtures::every_second_job(group, 2)).await?);
        db.close().await;
        let status_sql = "SELECT trigger_status FROM xxl_job_info WHERE id = ?";
        let replica = &replica;
        eventually(Duration::from_secs(10), "the job on the replica", || async move {
            let mut conn = replica.connect(DATABASE).await.ok()?;
            sqlx::query_scalar::<_, i32>(status_sql).bind(job).fetch_optional(&mut conn).await.ok().flatten()
        })
        .await
        .map_err(|e| Failed::from(format!("{}\n--- replica:\n{}", e.message().unwrap_or(""), replica.log_tail(15))))?;
        eventually(Duration::from_secs(15), "the job firing", || async {
            (recorder.fires().iter().filter(|f| f.job_id == job).count() >= 3).then_some(())
        })
        .await?;

        let mark = admin.log_len();
        let crash_at = now_ms();
        primary.kill();
        let health = health_up_within(&admin, Duration::from_millis(TAKEOVER_MS as u64)).await;
        tokio::time::sleep(Duration::from_millis((TAKEOVER_MS + WATCHED_MS) as u64)).await;
        let health = health?;

        // A console write after the takeover lands on the second host.
        let mut console = ConsoleClient::new(&admin.base);
        crate::ensure_eq!(console.login("admin", "123456", false).await?["code"], 200, "console login after the takeover");
        let stopped = console.post("/jobinfo/stop", &[("id", &job.to_string())]).await?;
        let stopped_at = now_ms();
        crate::ensure_eq!(stopped["code"], 200, "stop the job in the console after the takeover: {stopped}");
        let mut on_replica = replica.connect(DATABASE).await?;
        let status: i32 = sqlx::query_scalar(status_sql).bind(job).fetch_one(&mut on_replica).await.context("job status on the replica")?;
        crate::ensure_eq!(status, 0, "the console's stop on the second host");
        tokio::time::sleep(Duration::from_secs(2)).await;

        let log = admin.log_since(mark);
        let moved = moved_after(&admin, mark, crash_at).ok_or_else(|| format!("the admin did not log its move to the second host:\n{log}"))?;
        crate::ensure!(moved <= TAKEOVER_MS, "the admin moved to the second host {moved} ms after the crash");
        let fires = recorder.fires();
        let plans = by_plan(&fires);
        let doubled: Vec<String> = plans.iter().filter(|(_, f)| f.len() > 1).map(|((_, at), f)| format!("{at} ×{}", f.len())).collect();
        let first = (crash_at + TAKEOVER_MS) / 1000 * 1000 + 1000;
        let missed: Vec<i64> =
            (first..stopped_at - 1000).step_by(1000).filter(|at| !plans.contains_key(&(job, *at))).collect();
        let late_stop = fires.iter().filter(|f| f.at_ms > stopped_at + STOP_WIRE_MS).count();
        let lost = (crash_at / 1000 * 1000..first).step_by(1000).filter(|at| !plans.contains_key(&(job, *at))).count();
        eprintln!(
            "ha: moved {moved} ms and health UP {:.1} s after the crash of the first host; {lost} of the job's seconds in the first \
             {TAKEOVER_MS} ms without a fire (DO_NOTHING); {} fires in all",
            health.as_secs_f64(),
            fires.len()
        );
        if !doubled.is_empty() || !missed.is_empty() || late_stop > 0 {
            return Err(format!(
                "after the takeover: doubled {doubled:?}; seconds without a fire {missed:?}; {late_stop} fire(s) after the stop\n{log}"
            )
            .into());
        }
        eprintln!("ha: {}", stop_and_time(&mut admin).await);
        Ok(())
    }
    .await;
    outcome.map_err(|e| {
        Failed::from(format!("{}\n--- {}:\n{}", e.message().unwrap_or(""), admin.name, admin.tail(30)))
    })
}

async fn postgres_target_server_type_primary_passes_over_a_standby(_: Backend) -> TestResult {
    let primary = PrivatePostgres::primary().await?;
    let standby = PrivatePostgres::standby_of(&primary).await?;
    let mut on_standby = standby.connect("postgres").await?;
    let in_recovery: bool = sqlx::query_scalar("SELECT pg_is_in_recovery()")
        .fetch_one(&mut on_standby)
        .await
        .context("standby role")?;
    crate::ensure_eq!(in_recovery, true, "the standby is in recovery");

    // A host that does not answer, then the standby: a driver that took the first host that answers would
    // start on the standby.
    let nobody = stable_free_ports(1)?[0];
    let url = format!(
        "jdbc:postgresql://127.0.0.1:{nobody},127.0.0.1:{},127.0.0.1:{}/{DATABASE}?targetServerType=primary&user=postgres&serverTimezone=UTC",
        standby.port, primary.port
    );
    let logs = tempfile::tempdir().context("temp dir")?;
    let mut admin = AdminProcess::spawn("admin-pg-ha", &url, TOKEN, logs.path())?;
    let outcome = async {
        admin.wait_ready().await?;
        let mut console = ConsoleClient::new(&admin.base);
        crate::ensure_eq!(console.login("admin", "123456", false).await?["code"], 200, "console login");
        let form = [
            ("appname", "ha-primary"),
            ("title", "primary"),
            ("addressType", "1"),
            ("addressList", "http://127.0.0.1:9/"),
        ];
        let saved = console.post("/jobgroup/save", &form).await?;
        crate::ensure_eq!(saved["code"], 200, "a console write: {saved}");
        let mut on_primary = primary.connect(DATABASE).await?;
        let sql = "SELECT COUNT(*) FROM xxl_job_group WHERE app_name = 'ha-primary'";
        let groups: i64 =
            sqlx::query_scalar(sql).fetch_one(&mut on_primary).await.context("the group on the primary")?;
        crate::ensure_eq!(groups, 1, "the console's write on the primary");
        // Every connection of the admin is on the primary.
        let sessions =
            "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = 'xxl_job' AND pid <> pg_backend_pid()";
        let on_standby_count: i64 =
            sqlx::query_scalar(sessions).fetch_one(&mut on_standby).await.context("standby sessions")?;
        let on_primary_count: i64 =
            sqlx::query_scalar(sessions).fetch_one(&mut on_primary).await.context("primary sessions")?;
        if on_standby_count != 0 || on_primary_count == 0 {
            return Err(format!(
                "admin sessions: {on_primary_count} on the primary, {on_standby_count} on the standby"
            )
            .into());
        }
        Ok(())
    }
    .await;
    outcome.map_err(|e| {
        Failed::from(format!(
            "{}\n--- {}:\n{}\n--- primary:\n{}\n--- standby:\n{}",
            e.message().unwrap_or(""),
            admin.name,
            admin.tail(30),
            primary.log_tail(10),
            standby.log_tail(10)
        ))
    })
}
