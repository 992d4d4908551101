//! An executor that records every `/run` it receives, with the planned instant and trigger type the admin
//! sends beside the 2.4.2 body, and otherwise behaves like a healthy Java executor: it answers `/run` at once,
//! reports results by callback in batches, and registers itself on every admin it knows. A fault campaign
//! makes it hang or answer slowly for a while ([`Answer`]).

use super::JavaExecutorClient;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::IntoResponse;
use axum::Router;
use libtest_mimic::Failed;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

/// The Java executor's callback thread sends what has accumulated, in batches; this is its rhythm here.
const CALLBACK_PERIOD: Duration = Duration::from_millis(50);
/// The Java executor's registry beat.
const REGISTRY_PERIOD: Duration = Duration::from_secs(30);
/// The planned instant (epoch ms) of the fire a trigger stands for; for a misfire compensation, the
/// instant of the missed fire it compensates.
pub const PLANNED_TIME_HEADER: &str = "xxl-job-planned-time";
/// CRON, MISFIRE, MANUAL, RETRY, PARENT or API.
pub const TRIGGER_TYPE_HEADER: &str = "xxl-job-trigger-type";

/// One `/run` as received.
#[derive(Debug, Clone)]
pub struct Fire {
    /// When it arrived, epoch ms.
    pub at_ms: i64,
    pub job_id: i64,
    pub log_id: i64,
    pub planned_ms: Option<i64>,
    pub trigger_type: Option<String>,
}

impl Fire {
    /// How late it arrived after its planned instant.
    pub fn lateness_ms(&self) -> Option<i64> {
        self.planned_ms.map(|planned| self.at_ms - planned)
    }
}

/// How the executor answers `/run` (every job but those told to [`Recorder::hang`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// At once; the run's result goes with the next callback batch.
    Promptly,
    /// Not while this lasts, as a stalled process: the runs received go ahead when it ends, and their
    /// results are reported then.
    Hang,
    /// After this long; the run goes ahead and its result is reported whether or not the admin still waits.
    Slowly(Duration),
}

struct Shared {
    app_name: String,
    token: String,
    address: String,
    fires: Mutex<Vec<Fire>>,
    /// Jobs whose `/run` is never answered.
    hung: Mutex<HashSet<i64>>,
    /// Log ids whose result is still to be reported.
    pending: Mutex<Vec<i64>>,
    answer: watch::Sender<Answer>,
    /// Log ids received while hanging, reported when the hang ends.
    held: Mutex<Vec<i64>>,
    /// When an admin accepted the result of each log id, epoch ms.
    called_back: Mutex<HashMap<i64, i64>>,
    admins: Mutex<Vec<JavaExecutorClient>>,
}

pub struct Recorder {
    /// `http://127.0.0.1:port/`, as registered.
    pub address: String,
    shared: Arc<Shared>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Recorder {
    pub async fn start(app_name: &str, token: &str) -> Result<Recorder, Failed> {
        let listener =
            tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(|e| Failed::from(e.to_string()))?;
        let addr = listener.local_addr().map_err(|e| Failed::from(e.to_string()))?;
        let address = format!("http://{addr}/");
        let shared = Arc::new(Shared {
            app_name: app_name.to_string(),
            token: token.to_string(),
            address: address.clone(),
            fires: Mutex::default(),
            hung: Mutex::default(),
            pending: Mutex::default(),
            answer: watch::channel(Answer::Promptly).0,
            held: Mutex::default(),
            called_back: Mutex::default(),
            admins: Mutex::default(),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        let tasks = vec![
            server,
            tokio::spawn(send_callbacks(shared.clone())),
            tokio::spawn(register(shared.clone())),
        ];
        Ok(Recorder { address, shared, tasks })
    }

    /// The admins (base URLs) to register on and report results to, in order of preference.
    pub fn set_admins(&self, bases: &[&str]) {
        let clients =
            bases.iter().map(|base| JavaExecutorClient::new(base, Some(&self.shared.token))).collect();
        *self.shared.admins.lock().unwrap() = clients;
        // A new admin learns of this executor now, not at the next beat.
        let shared = self.shared.clone();
        tokio::spawn(async move { register_once(&shared).await });
    }

    /// Never answer `/run` of `job_id` from now on.
    pub fn hang(&self, job_id: i64) {
        self.shared.hung.lock().unwrap().insert(job_id);
    }

    /// How `/run` is answered from now on; the end of a hang lets the runs it held go ahead.
    pub fn answer(&self, answer: Answer) {
        self.shared.answer.send_replace(answer);
        if answer != Answer::Hang {
            let held = std::mem::take(&mut *self.shared.held.lock().unwrap());
            self.shared.pending.lock().unwrap().extend(held);
        }
    }

    pub fn fires(&self) -> Vec<Fire> {
        self.shared.fires.lock().unwrap().clone()
    }

    /// How many fires planned at `planned_ms` have arrived.
    pub fn received_for(&self, planned_ms: i64) -> usize {
        self.shared.fires.lock().unwrap().iter().filter(|f| f.planned_ms == Some(planned_ms)).count()
    }

    /// When an admin accepted each reported result (log id to epoch ms).
    pub fn called_back(&self) -> HashMap<i64, i64> {
        self.shared.called_back.lock().unwrap().clone()
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string)
}

/// Answers like the Java executor: HTTP 200, `text/html;charset=UTF-8`, JSON without null fields.
async fn handle(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> impl IntoResponse {
    let at_ms = super::now_ms();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let reply = if header_text(&headers, "XXL-JOB-ACCESS-TOKEN").as_deref() != Some(shared.token.as_str()) {
        json!({"code": 500, "msg": "The access token is wrong."})
    } else {
        match uri.path() {
            "/run" => {
                let job_id = body["jobId"].as_i64().unwrap_or(0);
                let log_id = body["logId"].as_i64().unwrap_or(0);
                shared.fires.lock().unwrap().push(Fire {
                    at_ms,
                    job_id,
                    log_id,
                    planned_ms: header_text(&headers, PLANNED_TIME_HEADER)
                        .and_then(|v| v.trim().parse().ok()),
                    trigger_type: header_text(&headers, TRIGGER_TYPE_HEADER),
                });
                if shared.hung.lock().unwrap().contains(&job_id) {
                    std::future::pending::<()>().await;
                }
                run(&shared, log_id).await;
                json!({"code": 200})
            }
            "/beat" | "/idleBeat" | "/kill" => json!({"code": 200}),
            "/log" => json!({"code": 200, "content": {
                "fromLineNum": body["fromLineNum"], "toLineNum": 0, "logContent": "", "isEnd": true}}),
            other => json!({"code": 500, "msg": format!("invalid request, uri-mapping({other}) not found.")}),
        }
    };
    (StatusCode::OK, [(header::CONTENT_TYPE, "text/html;charset=UTF-8")], reply.to_string())
}

/// Runs a job as the current [`Answer`] says, returning when `/run` is to be answered.
async fn run(shared: &Arc<Shared>, log_id: i64) {
    // Read under the lock of the held runs, which the end of a hang takes after it changed the answer.
    let answer = {
        let mut held = shared.held.lock().unwrap();
        let answer = *shared.answer.borrow();
        if answer == Answer::Hang {
            held.push(log_id);
        }
        answer
    };
    match answer {
        Answer::Promptly => shared.pending.lock().unwrap().push(log_id),
        Answer::Hang => {
            let _ = shared.answer.subscribe().wait_for(|a| *a != Answer::Hang).await;
        }
        Answer::Slowly(delay) => {
            let later = shared.clone();
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                later.pending.lock().unwrap().push(log_id);
            });
            tokio::time::sleep(delay).await;
        }
    }
}

/// Reports results as the Java executor's callback thread does: what accumulated, to the first admin that
/// accepts it (starting with a different one each time), kept and resent while none does.
async fn send_callbacks(shared: Arc<Shared>) {
    let mut turn = 0usize;
    loop {
        tokio::time::sleep(CALLBACK_PERIOD).await;
        let batch = std::mem::take(&mut *shared.pending.lock().unwrap());
        if batch.is_empty() {
            continue;
        }
        let admins = shared.admins.lock().unwrap().clone();
        let items: Vec<(i64, i32, Option<&str>)> = batch.iter().map(|&log_id| (log_id, 200, None)).collect();
        let mut delivered = false;
        for i in 0..admins.len() {
            let admin = &admins[(turn + i) % admins.len()];
            if admin.callback(&items).await.is_ok_and(|reply| reply.code() == 200) {
                delivered = true;
                let at = super::now_ms();
                shared.called_back.lock().unwrap().extend(batch.iter().map(|&id| (id, at)));
                break;
            }
        }
        turn = turn.wrapping_add(1);
        if !delivered {
            shared.pending.lock().unwrap().splice(0..0, batch);
        }
    }
}

async fn register(shared: Arc<Shared>) {
    loop {
        tokio::time::sleep(REGISTRY_PERIOD).await;
        register_once(&shared).await;
    }
}

/// One registry beat on every admin; a failure waits for the next beat, as in the Java executor.
async fn register_once(shared: &Shared) {
    let admins = shared.admins.lock().unwrap().clone();
    for admin in admins {
        let (app_name, address) = (shared.app_name.clone(), shared.address.clone());
        tokio::spawn(async move {
            let _ = admin.registry(&app_name, &address).await;
        });
    }
}
