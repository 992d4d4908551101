//! A frozen leader and clocks that disagree (issue 44): the faults every xxl-job admin trusts its own
//! process and clock through. Three admins run as child processes on the shared server; an in-test
//! executor records every `/run` with the planned instant the admin sends beside it.
//!
//! - A leader stopped with SIGSTOP for 12 s keeps its connections open: a standby must take the plan
//!   over within the lease (5 s), and the leader, once it wakes, must send nothing more.
//! - Admins whose clocks are 2 s ahead and 2 s behind lead in turn: every instant runs once, none early,
//!   because every admin schedules on the database server's clock.

use crate::failover::{insert_jobs, leader, owner_of, sleep_until, APP_NAME};
use crate::support::nemesis::{faketime_library, skewed_clock};
use crate::support::recorder::{Fire, Recorder};
use crate::support::{now_ms, AdminProcess, Backend, Context, ServerConnection, TestDb, TOKEN};
use crate::{cases, Case, TestResult, SERVERS};
use libtest_mimic::Failed;
use std::collections::BTreeMap;
use std::time::Duration;

pub fn cases() -> Vec<Case> {
    cases! {
        "fencing" {
            SERVERS => a_frozen_leader_is_replaced_within_its_lease_and_sends_nothing_after,
            SERVERS => admins_with_skewed_clocks_fire_every_instant_once_and_none_early needs [Faketime],
        }
    }
}

const JOBS: usize = 100;
const FREEZE_MS: i64 = 12_000;
/// The lease (5 s from the leader's last renewal, which comes every second) and the standby's one-second
/// look at it.
const TAKEOVER_LIMIT_MS: i64 = 6_500;
/// A fire arriving this long after its instant, once the frozen leader is awake, would be one it sent
/// late: the successor's are on time by then.
const STALE_MS: i64 = 1_000;
/// Earlier than this before its instant is early (the executor's and the test's clocks are one clock).
const EARLY_MS: i64 = 50;
const SKEWS_SECS: [i64; 3] = [2, -2, 0];
/// Hand-overs in the skewed-clock case: a kill, then a graceful stop, in turn.
const HAND_OVERS: usize = 4;
const BETWEEN_HAND_OVERS_MS: i64 = 5_000;
const EXAMPLES: usize = 8;

async fn a_frozen_leader_is_replaced_within_its_lease_and_sends_nothing_after(
    backend: Backend,
) -> TestResult {
    let db = TestDb::fresh(backend)?;
    db.create().await?;
    let logs = tempfile::tempdir().context("temp dir")?;
    let recorder = Recorder::start(APP_NAME, TOKEN).await?;
    let first_fire = (now_ms() + 12_000) / 1000 * 1000;
    let jobs = insert_jobs(&db.url, &recorder.address, JOBS, first_fire).await?;
    let mut admins = Vec::new();
    for n in 1..=3 {
        admins.push(AdminProcess::spawn(&format!("admin-{n}"), &db.url, TOKEN, logs.path())?);
    }
    for admin in &mut admins {
        admin.wait_ready().await?;
    }
    recorder.set_admins(&admins.iter().map(|a| a.base.as_str()).collect::<Vec<_>>());
    sleep_until(first_fire + 3_000).await;
    let owner = leader(&db).await?.context("an admin holding the lease")?;
    let victim = admins
        .iter()
        .position(|a| owner_of(a).as_deref() == Some(owner.as_str()))
        .context("the leader's process")?;
    // Mid-second: after this second's fires, before the next schedule pass.
    sleep_until(now_ms() / 1000 * 1000 + 1_300).await;
    let frozen_at = now_ms();
    let log_mark = admins[victim].log_len();
    admins[victim].freeze()?;
    let mut taken_at = None;
    while now_ms() < frozen_at + FREEZE_MS {
        if taken_at.is_none() && leader(&db).await?.is_some_and(|o| o != owner) {
            taken_at = Some(now_ms());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    admins[victim].thaw()?;
    let woke_at = now_ms();
    sleep_until(woke_at + 8_000).await;
    let end = now_ms() - 1_000;
    for admin in &mut admins {
        let _ = admin.send_term();
    }
    let mut stops = Vec::new();
    for admin in &mut admins {
        stops.push(admin.wait_exit().await);
    }
    let fires = recorder.fires();
    let mut violations = Vec::new();
    match taken_at {
        Some(at) if at - frozen_at <= TAKEOVER_LIMIT_MS => {}
        Some(at) => violations.push(format!("taken over {} ms after the freeze", at - frozen_at)),
        None => violations.push(format!("no admin took over during the {FREEZE_MS} ms freeze")),
    }
    let taken_at = taken_at.unwrap_or(woke_at);
    // Every second once, but those whose fires the frozen leader held when it stopped, which are settled
    // by the successor (at most the lease's seconds).
    let exempt = frozen_at - 1_000..taken_at + 1_000;
    check_once(&fires, &jobs, first_fire + 2_000..end, &exempt, &mut violations);
    let stale: Vec<String> = fires
        .iter()
        .filter(|f| f.at_ms >= woke_at && f.lateness_ms().is_some_and(|l| l > STALE_MS))
        .map(|f| {
            format!(
                "job {} planned {:?} arrived {} ms after the wake",
                f.job_id,
                f.planned_ms,
                f.at_ms - woke_at
            )
        })
        .collect();
    report(&mut violations, "sent late after the wake (by the deposed leader)", stale);
    let woken_log = admins[victim].log_since(log_mark);
    if !woken_log.contains("another admin took the lease over") {
        violations.push("the woken leader did not log that it no longer leads".into());
    }
    let stuck = stuck_rows(&db).await?;
    if stuck > 0 {
        violations.push(format!("{stuck} planned row(s) never sent nor settled"));
    }
    for (admin, stop) in admins.iter().zip(stops) {
        if let Err(e) = stop {
            violations.push(format!("{}: {}", admin.name, e.message().unwrap_or("did not stop")));
        }
    }
    let note = format!(
        "frozen leader ({}): taken over after {} ms; {} row(s) settled by the takeover",
        backend.name(),
        taken_at - frozen_at,
        settled_rows(&db).await?
    );
    verdict(violations, note, &admins)
}

async fn admins_with_skewed_clocks_fire_every_instant_once_and_none_early(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    db.create().await?;
    let logs = tempfile::tempdir().context("temp dir")?;
    let recorder = Recorder::start(APP_NAME, TOKEN).await?;
    let first_fire = (now_ms() + 12_000) / 1000 * 1000;
    let jobs = insert_jobs(&db.url, &recorder.address, JOBS, first_fire).await?;
    let library = faketime_library()?;
    let mut spawned = 0;
    let mut spawn = |skew: i64| -> Result<(AdminProcess, i64), Failed> {
        spawned += 1;
        let name = format!("admin-{spawned}({skew:+}s)");
        let clock = skewed_clock(&library, skew * 1000);
        Ok((AdminProcess::spawn_in(&name, &db.url, TOKEN, logs.path(), &[], &clock)?, skew))
    };
    let mut admins = Vec::new();
    for skew in SKEWS_SECS {
        admins.push(spawn(skew)?);
    }
    for (admin, _) in &mut admins {
        admin.wait_ready().await?;
    }
    recorder.set_admins(&admins.iter().map(|(a, _)| a.base.as_str()).collect::<Vec<_>>());
    sleep_until(first_fire + 3_000).await;
    let mut violations = Vec::new();
    check_offsets(&admins, &mut violations).await;
    let mut gone = Vec::new();
    let mut leaders = Vec::new();
    for round in 0..HAND_OVERS {
        let owner = leader(&db).await?.context("an admin holding the lease")?;
        let index = admins
            .iter()
            .position(|(a, _)| owner_of(a).as_deref() == Some(owner.as_str()))
            .context("the leader's process")?;
        let (mut old, skew) = admins.remove(index);
        leaders.push(skew);
        if round % 2 == 0 {
            old.kill();
        } else {
            old.send_term()?;
            old.wait_exit().await?;
        }
        gone.push(old);
        let (mut fresh, skew) = spawn(skew)?;
        fresh.wait_ready().await?;
        admins.push((fresh, skew));
        recorder.set_admins(&admins.iter().map(|(a, _)| a.base.as_str()).collect::<Vec<_>>());
        tokio::time::sleep(Duration::from_millis(BETWEEN_HAND_OVERS_MS as u64)).await;
    }
    let end = now_ms() - 1_000;
    for (admin, _) in &mut admins {
        let _ = admin.send_term();
    }
    for (admin, _) in &mut admins {
        let _ = admin.wait_exit().await;
    }
    let fires = recorder.fires();
    check_once(&fires, &jobs, first_fire + 2_000..end, &(0..0), &mut violations);
    let early: Vec<String> = fires
        .iter()
        .filter(|f| f.lateness_ms().is_some_and(|l| l < -EARLY_MS))
        .map(|f| {
            format!(
                "job {} planned {:?} arrived {} ms early",
                f.job_id,
                f.planned_ms,
                -f.lateness_ms().unwrap_or(0)
            )
        })
        .collect();
    report(&mut violations, "sent early", early);
    let worst = fires.iter().filter_map(Fire::lateness_ms).max().unwrap_or(0);
    let note = format!(
        "skewed clocks ({}): leaders in turn had clocks {leaders:?} s off; {} fires, the latest {worst} ms late",
        backend.name(),
        fires.len()
    );
    let all: Vec<AdminProcess> = admins.into_iter().map(|(a, _)| a).chain(gone).collect();
    verdict(violations, note, &all)
}

/// Each skewed admin measured its offset from the database server and warned about it.
async fn check_offsets(admins: &[(AdminProcess, i64)], violations: &mut Vec<String>) {
    for (admin, skew) in admins.iter().filter(|(_, skew)| *skew != 0) {
        let metrics = match reqwest::get(format!("{}/actuator/prometheus", admin.base)).await {
            Ok(reply) => reply.text().await.unwrap_or_default(),
            Err(e) => {
                violations.push(format!("{}: metrics not read: {e}", admin.name));
                continue;
            }
        };
        let offset = metrics
            .lines()
            .find_map(|l| l.strip_prefix("xxl_job_clock_offset_seconds "))
            .and_then(|v| v.trim().parse::<f64>().ok());
        if !offset.is_some_and(|o| (o - *skew as f64).abs() < 0.2) {
            violations
                .push(format!("{}: clock offset metric {offset:?}, expected about {skew} s", admin.name));
        }
        if !admin.log_since(0).contains("ms ahead of the database server's")
            && !admin.log_since(0).contains("ms behind the database server's")
        {
            violations.push(format!("{}: no warning about its clock", admin.name));
        }
    }
}

/// Every job ran exactly once for every whole second of `stretch` (at most once within `exempt`), and
/// never twice within one second of arrival.
fn check_once(
    fires: &[Fire],
    jobs: &[i64],
    stretch: std::ops::Range<i64>,
    exempt: &std::ops::Range<i64>,
    violations: &mut Vec<String>,
) {
    let mut by_plan: BTreeMap<(i64, i64), usize> = BTreeMap::new();
    let mut by_arrival: BTreeMap<(i64, i64), usize> = BTreeMap::new();
    for fire in fires {
        if let Some(planned) = fire.planned_ms {
            *by_plan.entry((fire.job_id, planned)).or_default() += 1;
        }
        *by_arrival.entry((fire.job_id, fire.at_ms / 1000)).or_default() += 1;
    }
    let first = (stretch.start + 999) / 1000 * 1000;
    let (mut lost, mut doubled) = (Vec::new(), Vec::new());
    for &job in jobs {
        for second in (first..stretch.end).step_by(1000) {
            match by_plan.get(&(job, second)).copied().unwrap_or(0) {
                1 => {}
                0 if exempt.contains(&second) => {}
                0 => lost.push(format!("job {job} at {second}")),
                n => doubled.push(format!("job {job} at {second} sent {n} times")),
            }
        }
    }
    let bunched: Vec<String> = by_arrival
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|((job, s), n)| format!("job {job}: {n} runs in second {s}"))
        .collect();
    report(violations, "lost", lost);
    report(violations, "sent twice", doubled);
    report(violations, "two runs in one second", bunched);
}

fn report(violations: &mut Vec<String>, what: &str, items: Vec<String>) {
    if !items.is_empty() {
        violations.push(format!(
            "{what}: {} case(s), e.g. {}",
            items.len(),
            items.iter().take(EXAMPLES).cloned().collect::<Vec<_>>().join("; ")
        ));
    }
}

fn verdict(violations: Vec<String>, note: String, admins: &[AdminProcess]) -> TestResult {
    if violations.is_empty() {
        eprintln!("{note}");
        return Ok(());
    }
    let tails: Vec<String> = admins.iter().map(|a| format!("--- {}:\n{}", a.name, a.tail(15))).collect();
    // The verdict last, where a cut log still shows it.
    Err(format!("{}\n{}\n{note}", tails.join("\n"), violations.join("\n")).into())
}

/// Planned rows neither sent nor settled, once every admin has stopped.
async fn stuck_rows(db: &TestDb) -> Result<i64, Failed> {
    count(
        db,
        "SELECT COUNT(*) FROM xxl_job_log WHERE trigger_code = 0 AND trigger_msg LIKE 'planned by admin %'",
    )
    .await
}

/// Rows settled without a run: misfires, collapsed late fires, fires of a deposed leader, results unknown.
async fn settled_rows(db: &TestDb) -> Result<i64, Failed> {
    count(db, "SELECT COUNT(*) FROM xxl_job_log WHERE trigger_code = 500 AND alarm_status <> 0").await
}

async fn count(db: &TestDb, sql: &str) -> Result<i64, Failed> {
    match db.connect().await? {
        ServerConnection::MySql(mut c) => sqlx::query_scalar(sql).fetch_one(&mut c).await,
        ServerConnection::Postgres(mut c) => sqlx::query_scalar(sql).fetch_one(&mut c).await,
    }
    .context("count rows")
}
