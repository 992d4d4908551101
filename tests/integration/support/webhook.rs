//! An HTTP server that plays the chat robots and webhook endpoints alarms are sent to. Each path is
//! one vendor and answers as that vendor does, checking signatures as the vendor would:
//! `/dingtalk`, `/wecom`, `/feishu`, `/slack`, `/json`; `/flaky` fails its first request with 503,
//! `/hang` never answers.

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{StatusCode, Uri};
use axum::response::IntoResponse;
use axum::Router;
use libtest_mimic::Failed;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use xxl_job_admin::alarm::webhook::{dingtalk_sign, feishu_sign};

/// The secret both signed robots are configured with.
pub const SECRET: &str = "SECwebhook-test";

/// One request received.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    /// Query pairs, decoded.
    pub query: Vec<(String, String)>,
    pub body: Value,
    pub at_ms: i64,
}

impl Received {
    pub fn query(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

pub struct WebhookServer {
    /// `http://127.0.0.1:PORT`
    pub base: String,
    received: Arc<Mutex<Vec<Received>>>,
    server: tokio::task::JoinHandle<()>,
}

impl WebhookServer {
    pub async fn start() -> Result<WebhookServer, Failed> {
        let listener =
            tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(|e| Failed::from(e.to_string()))?;
        let addr = listener.local_addr().map_err(|e| Failed::from(e.to_string()))?;
        let received = Arc::new(Mutex::new(Vec::new()));
        let app = Router::new().fallback(handle).with_state(received.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(WebhookServer { base: format!("http://{addr}"), received, server })
    }

    pub fn received(&self, path: &str) -> Vec<Received> {
        self.received.lock().unwrap().iter().filter(|r| r.path == path).cloned().collect()
    }
}

impl Drop for WebhookServer {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn handle(
    State(received): State<Arc<Mutex<Vec<Received>>>>,
    uri: Uri,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> impl IntoResponse {
    let query: Vec<(String, String)> = url::form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let request = Received {
        path: uri.path().to_string(),
        query,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        at_ms: super::now_ms(),
    };
    let earlier = {
        let mut all = received.lock().unwrap();
        all.push(request.clone());
        all.iter().filter(|r| r.path == request.path).count() - 1
    };
    let now_ms = super::now_ms();
    match request.path.as_str() {
        "/dingtalk" => {
            let signed = request.query("timestamp").and_then(|t| t.parse::<i64>().ok()).is_some_and(|t| {
                (now_ms - t).abs() < 60_000
                    && request.query("sign") == Some(dingtalk_sign(SECRET, t).as_str())
            });
            let reply = if signed {
                json!({"errcode": 0, "errmsg": "ok"})
            } else {
                json!({"errcode": 310000, "errmsg": "sign not match"})
            };
            (StatusCode::OK, reply.to_string())
        }
        "/feishu" => {
            let timestamp = request.body["timestamp"].as_str().and_then(|t| t.parse::<i64>().ok());
            let signed = timestamp.is_some_and(|t| {
                (now_ms / 1000 - t).abs() < 60
                    && request.body["sign"].as_str() == Some(feishu_sign(SECRET, t).as_str())
            });
            let reply = if signed {
                json!({"code": 0, "msg": "success"})
            } else {
                json!({"code": 19021, "msg": "sign match fail"})
            };
            (StatusCode::OK, reply.to_string())
        }
        "/wecom" => (StatusCode::OK, json!({"errcode": 0, "errmsg": "ok"}).to_string()),
        "/slack" => (StatusCode::OK, "ok".to_string()),
        "/flaky" if earlier == 0 => (StatusCode::SERVICE_UNAVAILABLE, "busy".to_string()),
        "/hang" => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            (StatusCode::OK, String::new())
        }
        _ => (StatusCode::OK, String::new()),
    }
}
