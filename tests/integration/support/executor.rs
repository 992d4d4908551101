//! Both sides of the executor protocol as a Java 2.4.2 executor speaks it.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::IntoResponse;
use axum::Router;
use libtest_mimic::Failed;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Sends executor → admin requests with the Java executor's headers and Gson-shaped bodies.
#[derive(Clone)]
pub struct JavaExecutorClient {
    base: String,
    token: Option<String>,
    http: reqwest::Client,
}

/// What the admin answered.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub body: Value,
}

impl Reply {
    pub fn code(&self) -> i64 {
        self.body["code"].as_i64().unwrap_or(-1)
    }

    pub fn msg(&self) -> String {
        self.body["msg"].as_str().unwrap_or("").to_string()
    }
}

impl JavaExecutorClient {
    pub fn new(admin_base: &str, token: Option<&str>) -> JavaExecutorClient {
        JavaExecutorClient {
            base: admin_base.trim_end_matches('/').to_string(),
            token: token.map(str::to_string),
            http: reqwest::Client::builder().timeout(Duration::from_secs(10)).build().expect("client"),
        }
    }

    pub fn with_token(&self, token: Option<&str>) -> JavaExecutorClient {
        JavaExecutorClient { token: token.map(str::to_string), ..self.clone() }
    }

    /// The same client sending from `source` (another loopback address is another client to the admin).
    pub fn sending_from(&self, source: std::net::IpAddr) -> JavaExecutorClient {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .local_address(source)
            .build()
            .expect("client");
        JavaExecutorClient { http, ..self.clone() }
    }

    /// POSTs a raw body to `{base}/api/{uri}`.
    pub async fn post_raw(&self, uri: &str, body: impl Into<reqwest::Body>) -> Result<Reply, Failed> {
        self.send(reqwest::Method::POST, uri, body.into()).await
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        uri: &str,
        body: reqwest::Body,
    ) -> Result<Reply, Failed> {
        let mut request = self
            .http
            .request(method, format!("{}/api/{uri}", self.base))
            .header("Content-Type", "application/json;charset=UTF-8")
            .header("Accept-Charset", "application/json;charset=UTF-8")
            .header("connection", "Keep-Alive")
            .body(body);
        if let Some(token) = &self.token {
            request = request.header("XXL-JOB-ACCESS-TOKEN", token);
        }
        let response = request
            .send()
            .await
            .map_err(|e| Failed::from(format!("api/{uri}: {}", super::error_chain(&e))))?;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let text = response.text().await.map_err(|e| Failed::from(e.to_string()))?;
        let body = serde_json::from_str(&text)
            .map_err(|e| Failed::from(format!("api/{uri} answered non-JSON {text:?}: {e}")))?;
        Ok(Reply { status, content_type, body })
    }

    pub async fn registry(&self, app_name: &str, address: &str) -> Result<Reply, Failed> {
        let body = json!({"registryGroup": "EXECUTOR", "registryKey": app_name, "registryValue": address});
        self.post_raw("registry", body.to_string()).await
    }

    pub async fn registry_remove(&self, app_name: &str, address: &str) -> Result<Reply, Failed> {
        let body = json!({"registryGroup": "EXECUTOR", "registryKey": app_name, "registryValue": address});
        self.post_raw("registryRemove", body.to_string()).await
    }

    /// A callback batch; `handle_msg: None` is omitted from the JSON as Gson omits nulls.
    pub async fn callback(&self, items: &[(i64, i32, Option<&str>)]) -> Result<Reply, Failed> {
        let items: Vec<Value> = items
            .iter()
            .map(|(log_id, code, msg)| {
                let mut item =
                    json!({"logId": log_id, "logDateTim": 1_700_000_000_000i64, "handleCode": code});
                if let Some(msg) = msg {
                    item["handleMsg"] = json!(msg);
                }
                item
            })
            .collect();
        self.post_raw("callback", Value::Array(items).to_string()).await
    }
}

/// What every in-test executor's `/log` returns: the `<br>` a Java executor writes around its markers,
/// and markup that must never reach a page unescaped.
pub const LOG_CONTENT: &str =
    "line 1\n<br>----------- xxl-job job execute start -----------<br><script>alert('x')</script> & <b>bold</b> done\n";

/// One request an in-test executor received.
#[derive(Debug, Clone)]
pub struct ReceivedCall {
    pub path: String,
    pub token: Option<String>,
    pub content_type: Option<String>,
    pub body: Value,
    pub at_ms: i64,
    /// The `Xxl-Job-Planned-Time` header: the planned instant a `/run` stands for.
    pub planned_ms: Option<i64>,
    /// The `Xxl-Job-Trigger-Type` header.
    pub trigger_type: Option<String>,
}

/// How an in-test executor answers.
#[derive(Debug, Clone)]
pub struct Behaviour {
    pub token: Option<String>,
    pub run_code: i64,
    pub beat_code: i64,
    /// Never answer `/run` (a hung executor).
    pub hang: bool,
    /// After accepting `/run`, report this result to the admin by callback, as a Java executor does.
    pub callback: Option<(String, i32)>,
    /// Answer as executors of 3.3.0 and later: `{"code","msg","data"}`, and `toLineNum: 0` past a log's end.
    pub wire_3x: bool,
}

impl Default for Behaviour {
    fn default() -> Self {
        Behaviour {
            token: Some(super::TOKEN.to_string()),
            run_code: 200,
            beat_code: 200,
            hang: false,
            callback: None,
            wire_3x: false,
        }
    }
}

struct Inner {
    behaviour: Behaviour,
    calls: Mutex<Vec<ReceivedCall>>,
}

/// A Java-executor-shaped HTTP server on 127.0.0.1.
pub struct FakeExecutor {
    pub address: String,
    inner: Arc<Inner>,
    server: tokio::task::JoinHandle<()>,
}

impl FakeExecutor {
    pub async fn start(behaviour: Behaviour) -> Result<FakeExecutor, Failed> {
        let listener =
            tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(|e| Failed::from(e.to_string()))?;
        let addr = listener.local_addr().map_err(|e| Failed::from(e.to_string()))?;
        let inner = Arc::new(Inner { behaviour, calls: Mutex::new(Vec::new()) });
        let app = Router::new().fallback(handle).with_state(inner.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(FakeExecutor { address: format!("http://{addr}/"), inner, server })
    }

    pub fn calls(&self) -> Vec<ReceivedCall> {
        self.inner.calls.lock().unwrap().clone()
    }

    pub fn calls_to(&self, path: &str) -> Vec<ReceivedCall> {
        self.calls().into_iter().filter(|c| c.path == path).collect()
    }
}

impl Drop for FakeExecutor {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// Answers like the Java executor: HTTP 200, `text/html;charset=UTF-8`, JSON without null fields.
async fn handle(
    State(inner): State<Arc<Inner>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> impl IntoResponse {
    let path = uri.path().to_string();
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    inner.calls.lock().unwrap().push(ReceivedCall {
        path: path.clone(),
        token: header("XXL-JOB-ACCESS-TOKEN"),
        content_type: header("content-type"),
        body: body.clone(),
        at_ms: super::now_ms(),
        planned_ms: header("Xxl-Job-Planned-Time").and_then(|t| t.parse().ok()),
        trigger_type: header("Xxl-Job-Trigger-Type"),
    });
    let behaviour = &inner.behaviour;
    let reply = if behaviour.token.is_some() && header("XXL-JOB-ACCESS-TOKEN") != behaviour.token {
        json!({"code": 500, "msg": "The access token is wrong."})
    } else {
        match path.as_str() {
            "/beat" => json!({"code": behaviour.beat_code}),
            "/idleBeat" => json!({"code": behaviour.beat_code}),
            "/kill" => json!({"code": 200}),
            "/log" => json!({"code": 200, "content": {
                "fromLineNum": body["fromLineNum"], "toLineNum": 2, "logContent": LOG_CONTENT, "isEnd": false}}),
            "/run" => {
                if behaviour.hang {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                }
                if let (Some((admin, code)), 200) = (&behaviour.callback, behaviour.run_code) {
                    let client = JavaExecutorClient::new(admin, behaviour.token.as_deref());
                    let (log_id, code) = (body["logId"].as_i64().unwrap_or(0), *code);
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        let _ = client.callback(&[(log_id, code, Some("done by the test executor"))]).await;
                    });
                }
                if behaviour.run_code == 200 {
                    json!({"code": 200})
                } else {
                    json!({"code": behaviour.run_code, "msg": "job handler [missing] not found."})
                }
            }
            other => json!({"code": 500, "msg": format!("invalid request, uri-mapping({other}) not found.")}),
        }
    };
    let reply = if behaviour.wire_3x { in_3x_form(&path, &body, reply) } else { reply };
    (StatusCode::OK, [(header::CONTENT_TYPE, "text/html;charset=UTF-8")], reply.to_string())
}

/// The same reply as a 3.3.0+ executor writes it: xxl-tool's `Response` (`code`, `msg`, `data`; `msg` is
/// "Success" on success) through Gson, which leaves null fields out. Its log reader answers `toLineNum: 0`
/// when asked from past the last line.
fn in_3x_form(path: &str, request: &Value, reply: Value) -> Value {
    let code = reply["code"].clone();
    let mut answer =
        json!({"code": code, "msg": reply.get("msg").cloned().unwrap_or_else(|| json!("Success"))});
    if path == "/log" && request["fromLineNum"].as_i64().is_some_and(|from| from > 2) {
        answer["data"] =
            json!({"fromLineNum": request["fromLineNum"], "toLineNum": 0, "logContent": "", "isEnd": false});
    } else if let Some(content) = reply.get("content") {
        answer["data"] = content.clone();
    }
    answer
}
