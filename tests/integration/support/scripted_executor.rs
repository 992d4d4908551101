//! An in-test executor whose answer to each `/run` a test scripts by job handler: accept it and report a
//! result by callback after a delay (as a Java executor does), or accept it and never report (a hung
//! run, ended only by `/kill`). It speaks the executor protocol as [`super::FakeExecutor`] does.

use super::{now_ms, JavaExecutorClient, TOKEN};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::IntoResponse;
use axum::Router;
use libtest_mimic::Failed;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One `/run` received.
#[derive(Debug, Clone)]
pub struct Run {
    pub log_id: i64,
    pub handler: String,
    pub param: String,
    pub shard_index: i64,
    pub at_ms: i64,
    /// How many `/run`s of this handler came before this one.
    pub nth: usize,
}

/// What the executor does with a run.
#[derive(Debug, Clone)]
pub enum Answer {
    /// Calls back `code` with `msg` after `delay_ms`.
    Callback { code: i32, msg: String, delay_ms: u64 },
    /// Accepts and never calls back.
    Hang,
}

type Script = dyn Fn(&Run) -> Answer + Send + Sync;

struct Inner {
    /// Where callbacks go: tried in turn from the next one each time, until one takes it (as a Java
    /// executor tries its admin addresses).
    admins: Mutex<Vec<String>>,
    turn: std::sync::atomic::AtomicUsize,
    script: Box<Script>,
    runs: Mutex<Vec<Run>>,
    kills: Mutex<Vec<i64>>,
}

pub struct ScriptedExecutor {
    pub address: String,
    inner: Arc<Inner>,
    server: tokio::task::JoinHandle<()>,
}

impl ScriptedExecutor {
    /// Starts on 127.0.0.1, reporting to the admin at `admin_base`.
    pub async fn start(
        admin_base: &str,
        script: impl Fn(&Run) -> Answer + Send + Sync + 'static,
    ) -> Result<ScriptedExecutor, Failed> {
        let listener =
            tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(|e| Failed::from(e.to_string()))?;
        let addr = listener.local_addr().map_err(|e| Failed::from(e.to_string()))?;
        let inner = Arc::new(Inner {
            admins: Mutex::new(vec![admin_base.to_string()]),
            turn: Default::default(),
            script: Box::new(script),
            runs: Mutex::default(),
            kills: Mutex::default(),
        });
        let app = Router::new().fallback(handle).with_state(inner.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(ScriptedExecutor { address: format!("http://{addr}/"), inner, server })
    }

    /// Sends callbacks to these admins from now on.
    pub fn set_admins(&self, bases: &[&str]) {
        *self.inner.admins.lock().unwrap() = bases.iter().map(|b| b.to_string()).collect();
    }

    pub fn runs(&self) -> Vec<Run> {
        self.inner.runs.lock().unwrap().clone()
    }

    pub fn runs_of(&self, handler: &str) -> Vec<Run> {
        self.runs().into_iter().filter(|r| r.handler == handler).collect()
    }

    /// The job ids `/kill` was asked for.
    pub fn kills(&self) -> Vec<i64> {
        self.inner.kills.lock().unwrap().clone()
    }
}

impl Drop for ScriptedExecutor {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn handle(
    State(inner): State<Arc<Inner>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> impl IntoResponse {
    let token = headers.get("XXL-JOB-ACCESS-TOKEN").and_then(|v| v.to_str().ok());
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let reply = if token != Some(TOKEN) {
        json!({"code": 500, "msg": "The access token is wrong."})
    } else {
        match uri.path() {
            "/beat" | "/idleBeat" => json!({"code": 200}),
            "/kill" => {
                inner.kills.lock().unwrap().push(body["jobId"].as_i64().unwrap_or(0));
                json!({"code": 200})
            }
            "/log" => {
                json!({"code": 200, "content": {"fromLineNum": 1, "toLineNum": 1, "logContent": "", "isEnd": true}})
            }
            "/run" => {
                let handler = body["executorHandler"].as_str().unwrap_or("").to_string();
                let run = {
                    let mut runs = inner.runs.lock().unwrap();
                    let run = Run {
                        log_id: body["logId"].as_i64().unwrap_or(0),
                        nth: runs.iter().filter(|r| r.handler == handler).count(),
                        handler,
                        param: body["executorParams"].as_str().unwrap_or("").to_string(),
                        shard_index: body["broadcastIndex"].as_i64().unwrap_or(0),
                        at_ms: now_ms(),
                    };
                    runs.push(run.clone());
                    run
                };
                if let Answer::Callback { code, msg, delay_ms } = (inner.script)(&run) {
                    let inner = inner.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
                        callback(&inner, run.log_id, code, &msg).await;
                    });
                }
                json!({"code": 200})
            }
            other => json!({"code": 500, "msg": format!("invalid request, uri-mapping({other}) not found.")}),
        }
    };
    ([("content-type", "text/html;charset=UTF-8")], reply.to_string())
}

/// Reports a result to the first admin that takes it, starting from the next in turn; tries again each
/// second while none does (an executor keeps a callback until it is acknowledged).
async fn callback(inner: &Inner, log_id: i64, code: i32, msg: &str) {
    for _ in 0..120 {
        let admins = inner.admins.lock().unwrap().clone();
        let first = inner.turn.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        for i in 0..admins.len() {
            let client = JavaExecutorClient::new(&admins[(first + i) % admins.len()], Some(TOKEN));
            if client.callback(&[(log_id, code, Some(msg))]).await.is_ok_and(|r| r.code() == 200) {
                return;
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
