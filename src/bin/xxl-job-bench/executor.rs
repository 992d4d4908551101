//! An executor that does no work: `/run` is acknowledged at once and its result reported by callback,
//! the way a Java executor answers and reports a job that finishes instantly. It records each `/run`
//! with the planned instant and trigger type the admin sends beside the body; when asked, it also traces
//! each `/run` and each callback by log id (the workflow mode's edge latency). Against the admin its
//! address is written into the jobs' group; against the peer, which finds executors only by
//! registration, it registers the way a Java executor does.

use super::stats::Fire;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use xxl_job_admin::domain::{ReturnT, TriggerType};
use xxl_job_admin::executor::{PLANNED_TIME_HEADER, TRIGGER_TYPE_HEADER};

const TOKEN_HEADER: &str = "XXL-JOB-ACCESS-TOKEN";
/// Java executors send whatever is queued as one batch, back to back; 20 ms makes batches of a realistic size.
const CALLBACK_INTERVAL: Duration = Duration::from_millis(20);
/// The Java executor's read timeout for admin calls.
const CALLBACK_TIMEOUT: Duration = Duration::from_secs(3);
/// Java executors do not cap batches, but the admin refuses bodies over 1 MiB; items are ~60 bytes.
/// The cap keeps a backlog measurable instead of turning it into permanently refused batches.
const MAX_CALLBACK_BATCH: usize = 10_000;
/// The Java executor's registry beat (`RegistryConfig.BEAT_TIMEOUT`).
const REGISTRY_BEAT: Duration = Duration::from_secs(30);
/// Until the first registration is accepted (the scheduler may still be starting), it is tried this often.
const REGISTRY_RETRY: Duration = Duration::from_millis(200);
/// Bounds the memory of the analysis (40 bytes a fire): 100,000 jobs for 100 s.
const MAX_RECORDED_FIRES: usize = 10_000_000;

/// The part of `TriggerParam` the benchmark needs; the rest is ignored.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RunParam {
    job_id: i32,
    log_id: i64,
    log_date_time: i64,
}

/// The body of `/api/registry` (`RegistryParam`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Registration<'a> {
    registry_group: &'static str,
    registry_key: &'a str,
    registry_value: &'a str,
}

/// One `HandleCallbackParam`; the message is omitted, as Gson omits a null success message.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CallbackItem {
    log_id: i64,
    log_date_tim: i64,
    handle_code: i32,
}

#[derive(Default)]
struct Shared {
    token: String,
    runs: AtomicU64,
    refused: AtomicU64,
    /// Arrivals in `[record_from_us, record_until_us)` are kept for the lateness analysis.
    record_from_us: AtomicI64,
    record_until_us: AtomicI64,
    fires: Mutex<Vec<Fire>>,
    /// Arrivals in the recording range beyond [`MAX_RECORDED_FIRES`].
    unrecorded: AtomicU64,
    pending: Mutex<VecDeque<CallbackItem>>,
    callbacks_applied: AtomicU64,
    callback_failures: AtomicU64,
    registrations: AtomicU64,
    /// Set by [`FastExecutor::trace`].
    tracing: AtomicBool,
    trace: Mutex<LogTrace>,
}

/// Each `/run` by its arrival and each callback by the moment its batch was sent, every attempt (a batch
/// the admin did not acknowledge in time may still have been applied), as (log id, µs since the epoch).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogTrace {
    pub runs: Vec<(i64, i64)>,
    pub callbacks: Vec<(i64, i64)>,
}

/// Counters of the executor so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExecutorCounts {
    pub runs: u64,
    pub refused: u64,
    pub callbacks_applied: u64,
    pub callback_failures: u64,
    pub backlog: u64,
    pub unrecorded: u64,
}

/// The running executor; its tasks are aborted when it is dropped.
pub struct FastExecutor {
    pub address: String,
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl FastExecutor {
    /// Listens on a free port of 127.0.0.1 and sends callbacks to `callback_url`.
    pub async fn start(
        token: &str,
        callback_url: String,
        client: reqwest::Client,
    ) -> Result<FastExecutor, String> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("executor: cannot listen on 127.0.0.1: {e}"))?;
        let addr: SocketAddr = listener.local_addr().map_err(|e| format!("executor: {e}"))?;
        let shared = Arc::new(Shared {
            token: token.to_string(),
            record_until_us: AtomicI64::new(i64::MIN),
            ..Shared::default()
        });
        let (stop, stopped) = watch::channel(false);
        let app = Router::new().route("/run", post(run)).with_state(shared.clone());
        let mut server_stop = stopped.clone();
        let server = tokio::spawn(async move {
            let shutdown = async move {
                let _ = server_stop.wait_for(|s| *s).await;
            };
            if let Err(e) = axum::serve(listener, app).with_graceful_shutdown(shutdown).await {
                eprintln!("bench executor: server failed: {e}");
            }
        });
        let sender = tokio::spawn(send_callbacks(shared.clone(), client, callback_url, stopped));
        Ok(FastExecutor { address: format!("http://{addr}/"), shared, stop, tasks: vec![server, sender] })
    }

    /// Keeps the arrivals of `[from_us, until_us)` (and only those) for [`FastExecutor::take_fires`].
    pub fn record_between(&self, from_us: i64, until_us: i64) {
        self.shared.record_from_us.store(from_us, Ordering::Relaxed);
        self.shared.record_until_us.store(until_us, Ordering::Relaxed);
    }

    /// Registers under `app_name` at `registry_url` now and every [`REGISTRY_BEAT`], as the Java
    /// executor's registry thread does; [`FastExecutor::registered`] says when the first was accepted.
    pub fn register(&mut self, client: reqwest::Client, registry_url: String, app_name: String) {
        let (shared, address, mut stop) = (self.shared.clone(), self.address.clone(), self.stop.subscribe());
        self.tasks.push(tokio::spawn(async move {
            let body = Registration {
                registry_group: "EXECUTOR",
                registry_key: &app_name,
                registry_value: &address,
            };
            loop {
                if post_json(&client, &registry_url, &shared.token, &body).await {
                    shared.registrations.fetch_add(1, Ordering::Relaxed);
                }
                let pause = if shared.registrations.load(Ordering::Relaxed) > 0 {
                    REGISTRY_BEAT
                } else {
                    REGISTRY_RETRY
                };
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = stop.wait_for(|s| *s) => return,
                }
            }
        }));
    }

    /// Traces every `/run` and callback from now on, for [`FastExecutor::take_trace`].
    pub fn trace(&self) {
        self.shared.tracing.store(true, Ordering::Relaxed);
    }

    pub fn take_trace(&self) -> LogTrace {
        std::mem::take(&mut *self.shared.trace.lock().unwrap_or_else(|e| e.into_inner()))
    }

    pub fn registered(&self) -> bool {
        self.shared.registrations.load(Ordering::Relaxed) > 0
    }

    pub fn take_fires(&self) -> Vec<Fire> {
        std::mem::take(&mut *self.shared.fires.lock().unwrap_or_else(|e| e.into_inner()))
    }

    pub fn counts(&self) -> ExecutorCounts {
        let s = &self.shared;
        ExecutorCounts {
            runs: s.runs.load(Ordering::Relaxed),
            refused: s.refused.load(Ordering::Relaxed),
            callbacks_applied: s.callbacks_applied.load(Ordering::Relaxed),
            callback_failures: s.callback_failures.load(Ordering::Relaxed),
            backlog: s.pending.lock().unwrap_or_else(|e| e.into_inner()).len() as u64,
            unrecorded: s.unrecorded.load(Ordering::Relaxed),
        }
    }

    /// Stops listening and sending; what is still queued is dropped.
    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        for task in self.tasks.drain(..) {
            let _ = task.await;
        }
    }
}

impl Drop for FastExecutor {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

fn now_us() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

/// Answers like the Java executor: HTTP 200, `text/html;charset=UTF-8`, Gson JSON without null fields.
fn reply(body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, "text/html;charset=UTF-8")], body).into_response()
}

async fn run(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let at_us = now_us();
    if headers.get(TOKEN_HEADER).map(|v| v.as_bytes()) != Some(shared.token.as_bytes()) {
        shared.refused.fetch_add(1, Ordering::Relaxed);
        return reply(r#"{"code":500,"msg":"The access token is wrong."}"#);
    }
    let Ok(param) = serde_json::from_slice::<RunParam>(&body) else {
        shared.refused.fetch_add(1, Ordering::Relaxed);
        return reply(r#"{"code":500,"msg":"request error: unreadable TriggerParam"}"#);
    };
    shared.runs.fetch_add(1, Ordering::Relaxed);
    if shared.tracing.load(Ordering::Relaxed) {
        shared.trace.lock().unwrap_or_else(|e| e.into_inner()).runs.push((param.log_id, at_us));
    }
    let from = shared.record_from_us.load(Ordering::Relaxed);
    let until = shared.record_until_us.load(Ordering::Relaxed);
    if (from..until).contains(&at_us) {
        let header = |name| headers.get(name).and_then(|v: &axum::http::HeaderValue| v.to_str().ok());
        let fire = Fire {
            job_id: param.job_id,
            at_us,
            planned_ms: header(&PLANNED_TIME_HEADER).and_then(|v| v.parse().ok()),
            misfire: header(&TRIGGER_TYPE_HEADER) == Some(TriggerType::Misfire.name()),
            log_date_time_ms: param.log_date_time,
        };
        let mut fires = shared.fires.lock().unwrap_or_else(|e| e.into_inner());
        if fires.len() < MAX_RECORDED_FIRES {
            fires.push(fire);
        } else {
            shared.unrecorded.fetch_add(1, Ordering::Relaxed);
        }
    }
    let item = CallbackItem { log_id: param.log_id, log_date_tim: param.log_date_time, handle_code: 200 };
    shared.pending.lock().unwrap_or_else(|e| e.into_inner()).push_back(item);
    reply(r#"{"code":200}"#)
}

/// The callback thread of a Java executor: one batch at a time, each waiting for the admin's answer; a
/// batch not acknowledged with code 200 is sent again (Java retries it from a file).
async fn send_callbacks(
    shared: Arc<Shared>,
    client: reqwest::Client,
    url: String,
    mut stop: watch::Receiver<bool>,
) {
    let mut tick = tokio::time::interval(CALLBACK_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.wait_for(|s| *s) => return,
        }
        let batch: Vec<CallbackItem> = {
            let mut pending = shared.pending.lock().unwrap_or_else(|e| e.into_inner());
            let n = pending.len().min(MAX_CALLBACK_BATCH);
            pending.drain(..n).collect()
        };
        if batch.is_empty() {
            continue;
        }
        if shared.tracing.load(Ordering::Relaxed) {
            let sent_us = now_us();
            let mut trace = shared.trace.lock().unwrap_or_else(|e| e.into_inner());
            trace.callbacks.extend(batch.iter().map(|item| (item.log_id, sent_us)));
        }
        if post_json(&client, &url, &shared.token, &batch).await {
            shared.callbacks_applied.fetch_add(batch.len() as u64, Ordering::Relaxed);
        } else {
            shared.callback_failures.fetch_add(1, Ordering::Relaxed);
            let mut pending = shared.pending.lock().unwrap_or_else(|e| e.into_inner());
            for item in batch.into_iter().rev() {
                pending.push_front(item);
            }
        }
    }
}

/// Posts `body` as an executor posts to the admin; true when the answer is code 200.
async fn post_json(client: &reqwest::Client, url: &str, token: &str, body: &impl Serialize) -> bool {
    let Ok(body) = serde_json::to_vec(body) else { return false };
    let sent = client
        .post(url)
        .header(TOKEN_HEADER, token)
        .header(header::CONTENT_TYPE, "application/json;charset=UTF-8")
        .body(body)
        .timeout(CALLBACK_TIMEOUT)
        .send()
        .await;
    match sent {
        Ok(response) => response.json::<ReturnT<String>>().await.is_ok_and(|r| r.is_success()),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A registry that records the bodies it is sent and accepts them (after refusing the first, as a
    /// scheduler still starting does).
    async fn registry() -> (String, Arc<Mutex<Vec<(Option<String>, serde_json::Value)>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        let app = Router::new().route(
            "/api/registry",
            post(move |headers: HeaderMap, body: Bytes| async move {
                let token = headers.get(TOKEN_HEADER).and_then(|v| v.to_str().ok()).map(str::to_string);
                let mut seen = record.lock().unwrap();
                seen.push((token, serde_json::from_slice(&body).unwrap()));
                if seen.len() == 1 {
                    r#"{"code":500,"msg":"not ready"}"#
                } else {
                    r#"{"code":200}"#
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/api/registry", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        (url, seen)
    }

    #[tokio::test]
    async fn registers_as_a_java_executor_until_accepted() {
        let (url, seen) = registry().await;
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let mut executor =
            FastExecutor::start("secret", "http://127.0.0.1:9/api/callback".into(), client.clone())
                .await
                .unwrap();
        executor.register(client, url, "bench-app".into());
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while !executor.registered() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(executor.registered());
        let address = executor.address.clone();
        executor.stop().await;
        let seen = seen.lock().unwrap().clone();
        // Refused once, then accepted, then quiet until the next beat.
        assert_eq!(seen.len(), 2);
        let body = serde_json::json!({"registryGroup": "EXECUTOR", "registryKey": "bench-app", "registryValue": address});
        assert!(
            seen.iter().all(|(token, sent)| token.as_deref() == Some("secret") && *sent == body),
            "{seen:?}"
        );
    }
}
