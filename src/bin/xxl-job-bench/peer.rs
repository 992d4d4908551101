//! The peer: ratch-job, a Rust scheduler that speaks the xxl-job executor protocol and keeps its state in
//! its own Raft store. It is started as a child process in a fresh data directory, finds the bench's
//! executor by the executor's own registration, and gets its jobs through its open API
//! (`POST /ratch/v1/job/create`), so the same executor, job shape and window measure both schedulers.
//!
//! ratch-job sends no `Xxl-Job-Planned-Time`. Its `/run` carries `logDateTime` = the second of its time
//! wheel the fire was taken from, times 1000: for every-second CRON jobs that is the whole second the fire
//! stands for, however late it arrives. A fire whose `logDateTime` is not a whole second, or lies after
//! its arrival, has no planned instant and is reported as such instead of being guessed.

use super::process::{AdminProcess, LogStreams};
use super::stats::Fire;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use xxl_job_admin::domain::ReturnT;

/// Where ratch-job serves the xxl-job admin API (`/api/registry`, `/api/callback`).
pub const XXL_PREFIX: &str = "/xxl-job-admin";
/// The executor's app name, which the jobs name; it registers without a namespace, so it lands in
/// ratch-job's default one.
pub const APP_NAME: &str = "xxl-job-bench";
const NAMESPACE: &str = "xxl";
/// Creations in flight at once: each is a Raft write of the peer, so a few keep it busy.
const CREATE_CONCURRENCY: usize = 8;
const CREATE_TIMEOUT: Duration = Duration::from_secs(30);

/// The ports ratch-job listens on (all on 127.0.0.1).
pub struct Ports {
    pub api: u16,
    pub console: u16,
    /// gRPC between Raft nodes; a single node still binds it.
    pub cluster: u16,
}

/// The job ratch-job's `create_jobs.py` creates: every second (`* * * * * *`, six fields), enabled.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JobParam {
    app_name: &'static str,
    namespace: &'static str,
    handle_name: &'static str,
    schedule_type: &'static str,
    cron_value: &'static str,
    router_strategy: &'static str,
    blocking_strategy: &'static str,
    past_due_strategy: &'static str,
    description: String,
    enable: bool,
}

#[derive(Deserialize)]
struct CreatedJob {
    id: i64,
}

/// One line for the report's settings.
pub fn settings(exe: &Path) -> String {
    let name =
        exe.file_name().map_or_else(|| exe.display().to_string(), |n| n.to_string_lossy().into_owned());
    format!(
        "peer: {name} (ratch-job), default configuration, RUST_LOG=warn, a fresh data directory; jobs CRON \
         `* * * * * *` created through its open API; lateness from its logDateTime (the wheel second it fired for)"
    )
}

/// Starts ratch-job with its data in `dir` (created here).
pub fn spawn(exe: &Path, dir: &Path, ports: &Ports, token: &str) -> Result<AdminProcess, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let env: Vec<(String, String)> = [
        ("RATCH_HTTP_API_PORT", ports.api.to_string()),
        ("RATCH_HTTP_CONSOLE_PORT", ports.console.to_string()),
        ("RATCH_GRPC_CLUSTER_PORT", ports.cluster.to_string()),
        ("RATCH_RAFT_NODE_ADDR", format!("127.0.0.1:{}", ports.cluster)),
        ("RATCH_DATA_DIR", dir.join("data").display().to_string()),
        ("RATCH_XXL_DEFAULT_ACCESS_TOKEN", token.to_string()),
        ("RUST_LOG", "warn".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    // Run in `dir` so no stray `.env` of the working directory configures it.
    AdminProcess::spawn("ratch-job", exe, &[], &env, dir, LogStreams::Stderr)
}

/// Creates `jobs` jobs through the open API at `base`, a few at a time; returns ratch-job's id of each,
/// in the bench's order (the `i`-th stands for the bench's job `first_job_id + i`).
pub async fn create_jobs(client: &reqwest::Client, base: &str, jobs: usize) -> Result<Vec<i64>, String> {
    let url = format!("{base}/ratch/v1/job/create");
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = tokio::task::JoinSet::<Result<Vec<(usize, i64)>, String>>::new();
    for _ in 0..CREATE_CONCURRENCY.min(jobs) {
        let (client, url, next) = (client.clone(), url.clone(), next.clone());
        workers.spawn(async move {
            let mut created = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= jobs {
                    return Ok(created);
                }
                created.push((i, create_job(&client, &url, i).await?));
            }
        });
    }
    let mut ids = vec![0; jobs];
    while let Some(done) = workers.join_next().await {
        let created = done.map_err(|e| format!("ratch-job: job creation failed: {e}"))??;
        for (i, id) in created {
            ids[i] = id;
        }
    }
    Ok(ids)
}

async fn create_job(client: &reqwest::Client, url: &str, i: usize) -> Result<i64, String> {
    let job = JobParam {
        app_name: APP_NAME,
        namespace: NAMESPACE,
        handle_name: "demoJobHandler",
        schedule_type: "CRON",
        cron_value: "* * * * * *",
        router_strategy: "FIRST",
        blocking_strategy: "SERIAL_EXECUTION",
        past_due_strategy: "DEFAULT",
        description: format!("bench job {i}"),
        enable: true,
    };
    let fail = |e: String| format!("ratch-job: creating job {i}: {e}");
    let response =
        client.post(url).json(&job).timeout(CREATE_TIMEOUT).send().await.map_err(|e| fail(e.to_string()))?;
    let answer: ReturnT<CreatedJob> = response.json().await.map_err(|e| fail(e.to_string()))?;
    match answer.content {
        Some(job) if answer.is_success() => Ok(job.id),
        _ => Err(fail(format!("code {}: {}", answer.code, answer.msg.unwrap_or_default()))),
    }
}

/// The fires with the bench's job ids (`first_job_id + i` for ratch-job's `ids[i]`, others left unknown)
/// and their planned instants derived from `logDateTime` (see the module's doc).
pub fn planned(fires: Vec<Fire>, ids: &[i64], first_job_id: i32) -> Vec<Fire> {
    let index: HashMap<i64, i32> =
        ids.iter().enumerate().map(|(i, id)| (*id, first_job_id + i as i32)).collect();
    fires
        .into_iter()
        .map(|fire| {
            let whole_second =
                fire.log_date_time_ms.rem_euclid(1000) == 0 && fire.log_date_time_ms * 1000 <= fire.at_us;
            Fire {
                job_id: index.get(&i64::from(fire.job_id)).copied().unwrap_or(i32::MIN),
                planned_ms: whole_second.then_some(fire.log_date_time_ms),
                ..fire
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planned_instant_is_the_whole_second_ratch_job_fired_for() {
        let fire = |job_id, log_date_time_ms, at_us| Fire {
            job_id,
            at_us,
            planned_ms: None,
            misfire: false,
            log_date_time_ms,
        };
        let fires = vec![
            fire(7, 12_000, 12_140_000),  // 140 ms late
            fire(8, 12_000, 13_600_000),  // 1.6 s late: still the instant 12 s
            fire(7, 12_500, 12_600_000),  // not a whole second
            fire(8, 14_000, 13_900_000),  // before its instant: not ratch-job's wheel second
            fire(99, 12_000, 12_001_000), // a job the bench did not create
        ];
        let got = planned(fires, &[8, 7], 1_000);
        let summary: Vec<(i32, Option<i64>)> = got.iter().map(|f| (f.job_id, f.planned_ms)).collect();
        assert_eq!(
            summary,
            vec![
                (1_001, Some(12_000)),
                (1_000, Some(12_000)),
                (1_001, None),
                (1_000, None),
                (i32::MIN, Some(12_000))
            ]
        );
    }
}
