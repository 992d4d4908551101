//! The admin → executor HTTP client (2.4.2: ExecutorBizClient): `run`, `beat`, `idleBeat`, `kill`, `log`.
//!
//! Every call answers a `ReturnT`. Whatever goes wrong (blank address, transport error, HTTP status,
//! unreadable body) becomes `code 500` with the message texts of 2.4.2's `XxlJobRemotingUtil`, so failures
//! read the same in `trigger_msg` and the console as with the Java admin. Nothing here panics.

use std::collections::HashMap;
use std::error::Error as StdError;
use std::io;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue, ACCEPT_CHARSET, CONTENT_TYPE};
use reqwest::{redirect, StatusCode, Url};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::domain::protocol::ReturnT;

mod plain;
#[cfg(test)]
mod tests;

use plain::{Failure, Limits, Pool, Ready, Target};

const TOKEN_HEADER: HeaderName = HeaderName::from_static("xxl-job-access-token");
/// The planned instant (epoch ms) a `/run` stands for; for a misfire compensation, the missed instant.
pub const PLANNED_TIME_HEADER: HeaderName = HeaderName::from_static("xxl-job-planned-time");
/// The trigger type of a `/run` (`CRON`, `MISFIRE`, `MANUAL`, `RETRY`, `PARENT`, `API`).
pub const TRIGGER_TYPE_HEADER: HeaderName = HeaderName::from_static("xxl-job-trigger-type");
const JSON_UTF8: &str = "application/json;charset=UTF-8";
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// 2.4.2 uses 3 s for every call; Java executors answer `/run` at once and run the job afterwards.
const READ_TIMEOUT: Duration = Duration::from_secs(3);
/// A bound 2.4.2 lacks: a server trickling its body a byte at a time would otherwise hold a trigger forever.
const TOTAL_TIMEOUT: Duration = Duration::from_secs(6);
/// Below the Java executor's 90 s idle close, so a pooled connection is not reused just as the executor drops it.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(50);
/// Replies are a few hundred bytes except `/log`; this keeps a hostile or broken executor from exhausting memory.
const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;
/// How much of an unparsable body goes into the error message (and so into `trigger_msg`).
const MAX_ECHOED_BODY_CHARS: usize = 4096;

/// The body of `/run` (2.4.2: TriggerParam), Gson's field names; `None` fields omitted as Gson omits nulls.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TriggerParam {
    pub job_id: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executor_handler: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executor_params: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executor_block_strategy: Option<String>,
    pub executor_timeout: i32,
    pub log_id: i64,
    pub log_date_time: i64,
    pub glue_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub glue_source: Option<String>,
    pub glue_updatetime: i64,
    pub broadcast_index: i32,
    pub broadcast_total: i32,
}

/// What a `/run` stands for, sent beside the body (see [`ExecutorClient::run`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FireHeaders {
    pub planned_ms: Option<i64>,
    pub trigger_type: &'static str,
}

/// The content of a `/log` reply. Missing or null fields read as their defaults, as Gson leaves them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogResult {
    #[serde(default, deserialize_with = "null_as_default")]
    pub from_line_num: i32,
    #[serde(default, deserialize_with = "null_as_default")]
    pub to_line_num: i32,
    #[serde(default)]
    pub log_content: Option<String>,
    /// Gson writes the field name `isEnd`; `end` is what Jackson-based (and some third-party) servers write.
    #[serde(default, alias = "end", deserialize_with = "null_as_default")]
    pub is_end: bool,
}

impl LogResult {
    /// A read from past the last line answers `toLineNum: 0` on 3.x executors (2.x answer the last line's
    /// number). Read as "nothing new up to `fromLineNum - 1`", so the next read asks for the same line again
    /// instead of starting over at line 1.
    fn past_the_end(mut self) -> LogResult {
        if self.to_line_num < self.from_line_num {
            self.to_line_num = self.from_line_num.saturating_sub(1).max(0);
        }
        self
    }
}

/// The body of `/idleBeat` and `/kill`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JobIdParam {
    job_id: i32,
}

/// The body of `/log`; `logDateTim` (sic) is the 2.x field name, `logDateTime` the one of 3.x's `LogRequest`.
/// Both are sent: each executor line reads its own and ignores the other (Gson skips unknown fields).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LogParam {
    log_date_tim: i64,
    log_id: i64,
    from_line_num: i32,
    log_date_time: i64,
}

/// One pooled HTTP client for all executors, cheap to clone.
#[derive(Clone)]
pub struct ExecutorClient {
    /// `Err` holds why no call can be made (the client could not be set up); every call then fails with it.
    transport: Result<Transport, String>,
}

#[derive(Clone)]
struct Transport {
    /// HTTPS executors: built at the first one (its TLS stack is sizeable, and most clusters use none).
    http: std::sync::Arc<std::sync::OnceLock<Result<reqwest::Client, String>>>,
    /// Plain-HTTP executors, the usual ones: the lean path (see [`plain`]).
    plain: std::sync::Arc<Pool>,
    /// Each address as parsed once.
    routes: std::sync::Arc<std::sync::Mutex<HashMap<String, Route>>>,
    token: Option<HeaderValue>,
}

/// A request ready to be written.
struct Call {
    url: String,
    route: Route,
    endpoint: &'static str,
    payload: bytes::Bytes,
    /// Besides `Content-Type`, `Accept-Charset` and the access token.
    headers: Vec<(HeaderName, HeaderValue)>,
}

/// A `/run` ready to be written, or why it cannot be (see [`ExecutorClient::prepare_run`]).
pub struct PreparedRun(Result<Call, String>);

/// A `/run` that, for a plain-HTTP executor, also holds its connection (see [`ExecutorClient::ready_run`]).
pub struct ReadyRun(Result<(Call, Option<Taken>), String>);

impl ReadyRun {
    /// Whether it can be written: its request was built and, over plain HTTP, its connection taken.
    pub fn is_ready(&self) -> bool {
        self.0.is_ok()
    }
}

/// A plain-HTTP request with its connection, and how long taking them took (part of the call's time).
struct Taken {
    ready: Ready,
    spent: Duration,
}

/// How an address is reached.
#[derive(Clone)]
enum Route {
    Plain(Target),
    Tls,
}

/// Addresses whose parse is kept; past this the memo starts over.
const ROUTES_KEPT: usize = 10_000;

/// The plain path's limits, those of the HTTPS client.
const LIMITS: Limits = Limits {
    connect: CONNECT_TIMEOUT,
    read: READ_TIMEOUT,
    idle: POOL_IDLE_TIMEOUT,
    max_body: MAX_BODY_BYTES,
};

impl ExecutorClient {
    /// `access_token` is `xxl.job.accessToken`; the `XXL-JOB-ACCESS-TOKEN` header is sent only when it is
    /// non-blank, exactly as given (executors compare it verbatim).
    pub fn new(access_token: &str) -> ExecutorClient {
        let transport = Transport::new(access_token);
        if let Err(reason) = &transport {
            tracing::error!("executor calls will fail: {reason}");
        }
        ExecutorClient { transport }
    }

    /// Queues one execution on the executor; its result comes back later by callback. `fire` goes in
    /// headers outside 2.4.2's protocol, which executors ignore; an executor that records them can tell
    /// each planned instant and each misfire compensation apart (the fault tests and the bench do).
    pub async fn run(&self, address: &str, param: &TriggerParam, fire: FireHeaders) -> ReturnT<String> {
        self.perform(self.prepare_run(address, param, fire).0, None, string_content).await
    }

    /// A `/run` made ready to be written (address resolved, body serialized), so that sending it, when its
    /// time comes, is only the write.
    pub fn prepare_run(&self, address: &str, param: &TriggerParam, fire: FireHeaders) -> PreparedRun {
        let mut headers = vec![(TRIGGER_TYPE_HEADER, HeaderValue::from_static(fire.trigger_type))];
        if let Some(planned) = fire.planned_ms {
            headers.push((PLANNED_TIME_HEADER, HeaderValue::from(planned)));
        }
        PreparedRun(self.prepare(address, "run", param, headers))
    }

    /// Takes the connection a prepared `/run` to a plain-HTTP executor will be written on (connecting if
    /// none is idle), ahead of its time: sending it is then only the write. A failure to connect is the
    /// `/run`'s result, given when it is sent.
    pub async fn ready_run(&self, prepared: PreparedRun) -> ReadyRun {
        let call = match prepared.0 {
            Ok(call) => call,
            Err(message) => return ReadyRun(Err(message)),
        };
        let (Route::Plain(target), Ok(transport)) = (&call.route, &self.transport) else {
            return ReadyRun(Ok((call, None)));
        };
        let started = std::time::Instant::now();
        let headers = transport.plain_headers(&call.headers);
        let taking = transport.plain.ready(target, call.endpoint, &headers, call.payload.clone(), &LIMITS);
        match tokio::time::timeout(TOTAL_TIMEOUT, taking).await {
            Ok(Ok(ready)) => ReadyRun(Ok((call, Some(Taken { ready, spent: started.elapsed() })))),
            Ok(Err(failure)) => ReadyRun(Err(plain_failure(failure, &call.url))),
            Err(_) => ReadyRun(Err(timed_out(&call.url))),
        }
    }

    /// Sends a `/run` made ready (see [`ExecutorClient::run`]).
    pub async fn send_run(&self, ready: ReadyRun) -> ReturnT<String> {
        match ready.0 {
            Ok((call, taken)) => self.perform(Ok(call), taken, string_content).await,
            Err(message) => self.perform(Err(message), None, string_content).await,
        }
    }

    /// A `/run` made ready and not sent after all: its connection is kept for others.
    pub fn unsent(&self, ready: ReadyRun) {
        if let (Ok((Call { route: Route::Plain(target), .. }, Some(taken))), Ok(transport)) =
            (ready.0, &self.transport)
        {
            transport.plain.unsent(&target, taken.ready);
        }
    }

    /// Liveness probe for FAILOVER routing.
    pub async fn beat(&self, address: &str) -> ReturnT<String> {
        self.call(address, "beat", &"", &[], string_content).await
    }

    /// "Is this job's thread idle?" probe for BUSYOVER routing.
    pub async fn idle_beat(&self, address: &str, job_id: i32) -> ReturnT<String> {
        self.call(address, "idleBeat", &JobIdParam { job_id }, &[], string_content).await
    }

    /// Stops the job's thread on the executor (whatever it is running: 2.4.2 kills by job, not by log).
    pub async fn kill(&self, address: &str, job_id: i32) -> ReturnT<String> {
        self.call(address, "kill", &JobIdParam { job_id }, &[], string_content).await
    }

    /// Lines of an execution's log file from `from_line_num` (1-based) on.
    pub async fn log(
        &self,
        address: &str,
        log_date_tim: i64,
        log_id: i64,
        from_line_num: i32,
    ) -> ReturnT<LogResult> {
        let param = LogParam { log_date_tim, log_id, from_line_num, log_date_time: log_date_tim };
        self.call(address, "log", &param, &[], |value| {
            LogResult::deserialize(value).ok().map(LogResult::past_the_end)
        })
        .await
    }

    async fn call<T>(
        &self,
        address: &str,
        endpoint: &'static str,
        body: &impl Serialize,
        headers: &[(HeaderName, HeaderValue)],
        read_content: fn(Value) -> Option<T>,
    ) -> ReturnT<T> {
        self.perform(self.prepare(address, endpoint, body, headers.to_vec()), None, read_content).await
    }

    /// The request of a call, or the complete failure message when it cannot be made.
    fn prepare(
        &self,
        address: &str,
        endpoint: &'static str,
        body: &impl Serialize,
        headers: Vec<(HeaderName, HeaderValue)>,
    ) -> Result<Call, String> {
        let base = java_trim(address);
        if base.is_empty() {
            return Err("xxl-job remoting error(executor address is blank).".to_string());
        }
        let url =
            if base.ends_with('/') { format!("{base}{endpoint}") } else { format!("{base}/{endpoint}") };
        let transport = self.transport.as_ref().map_err(|reason| remoting_error(reason, &url))?;
        let route = transport.route(base, &url).map_err(|reason| remoting_error(&reason, &url))?;
        let payload = serde_json::to_vec(body).map_err(|e| remoting_error(&e.to_string(), &url))?.into();
        Ok(Call { url, route, endpoint, payload, headers })
    }

    /// Makes `call` (on the connection `taken` for it, if any) within the total timeout, of which taking
    /// the connection spent part.
    async fn perform<T>(
        &self,
        call: Result<Call, String>,
        taken: Option<Taken>,
        read_content: fn(Value) -> Option<T>,
    ) -> ReturnT<T> {
        let outcome = match call {
            Ok(call) => {
                let left = TOTAL_TIMEOUT.saturating_sub(taken.as_ref().map_or(Duration::ZERO, |t| t.spent));
                match tokio::time::timeout(left, self.exchange(&call, taken.map(|t| t.ready))).await {
                    Ok(Ok(text)) => parse_reply(&call.url, &text, read_content),
                    Ok(Err(message)) => Err(message),
                    Err(_) => Err(timed_out(&call.url)),
                }
            }
            Err(message) => Err(message),
        };
        outcome.unwrap_or_else(|message| {
            tracing::debug!("executor call failed: {message}");
            ReturnT::fail(message)
        })
    }

    /// Writes `call` and returns the reply text with line breaks removed; `Err` is the complete failure
    /// message.
    async fn exchange(&self, call: &Call, ready: Option<Ready>) -> Result<String, String> {
        let Call { url, route, endpoint, payload, headers } = call;
        let transport = self.transport.as_ref().map_err(|reason| remoting_error(reason, url))?;
        let bytes = match route {
            Route::Plain(target) => {
                let ready = match ready {
                    Some(ready) => ready,
                    None => transport
                        .plain
                        .ready(target, endpoint, &transport.plain_headers(headers), payload.clone(), &LIMITS)
                        .await
                        .map_err(|failure| plain_failure(failure, url))?,
                };
                transport
                    .plain
                    .send(target, ready, &LIMITS)
                    .await
                    .map_err(|failure| plain_failure(failure, url))?
            }
            Route::Tls => Self::exchange_tls(transport, url, payload.clone(), headers).await?.into(),
        };
        // Java reads the body line by line and concatenates the lines without separators; malformed UTF-8
        // becomes U+FFFD as with Java's decoder.
        Ok(String::from_utf8_lossy(&bytes).replace(['\r', '\n'], ""))
    }

    /// The HTTPS path: reqwest, with the same limits.
    async fn exchange_tls(
        transport: &Transport,
        url: &str,
        payload: bytes::Bytes,
        headers: &[(HeaderName, HeaderValue)],
    ) -> Result<Vec<u8>, String> {
        let target = parse_url(url).map_err(|reason| remoting_error(&reason, url))?;
        let http =
            transport.http.get_or_init(tls_client).as_ref().map_err(|reason| remoting_error(reason, url))?;
        let mut request =
            http.post(target).header(CONTENT_TYPE, JSON_UTF8).header(ACCEPT_CHARSET, JSON_UTF8).body(payload);
        if let Some(token) = &transport.token {
            request = request.header(TOKEN_HEADER, token.clone());
        }
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let mut response = request.send().await.map_err(|e| remoting_error(&describe(&e), url))?;
        if response.status() != StatusCode::OK {
            return Err(format!(
                "xxl-job remoting fail, StatusCode({}) invalid. for url : {url}",
                response.status().as_u16()
            ));
        }
        let too_large = || remoting_error(&format!("response body larger than {MAX_BODY_BYTES} bytes"), url);
        if response.content_length().is_some_and(|length| length > MAX_BODY_BYTES as u64) {
            return Err(too_large());
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| remoting_error(&describe(&e), url))? {
            if bytes.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(too_large());
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }
}

impl Transport {
    fn new(access_token: &str) -> Result<Transport, String> {
        let token = if java_trim(access_token).is_empty() {
            None
        } else {
            let mut value = HeaderValue::from_bytes(access_token.as_bytes()).map_err(|_| {
                "the access token contains characters that cannot be sent in an HTTP header".to_string()
            })?;
            value.set_sensitive(true);
            Some(value)
        };
        Ok(Transport {
            http: Default::default(),
            plain: Default::default(),
            routes: Default::default(),
            token,
        })
    }

    /// The headers of a plain-HTTP request: the content type, the charset, the access token and `extra`.
    fn plain_headers(&self, extra: &[(HeaderName, HeaderValue)]) -> Vec<(HeaderName, HeaderValue)> {
        let mut all = Vec::with_capacity(extra.len() + 3);
        all.push((CONTENT_TYPE, HeaderValue::from_static(JSON_UTF8)));
        all.push((ACCEPT_CHARSET, HeaderValue::from_static(JSON_UTF8)));
        if let Some(token) = &self.token {
            all.push((TOKEN_HEADER, token.clone()));
        }
        all.extend(extra.iter().cloned());
        all
    }

    /// How `base` is reached, parsed at its first use (`url`, a URL on it, words the failures).
    fn route(&self, base: &str, url: &str) -> Result<Route, String> {
        if let Some(route) = self.routes.lock().unwrap_or_else(|e| e.into_inner()).get(base) {
            return Ok(route.clone());
        }
        parse_url(url)?;
        let route = match Url::parse(base).ok().as_ref().and_then(Target::of) {
            Some(target) => Route::Plain(target),
            None => Route::Tls,
        };
        let mut routes = self.routes.lock().unwrap_or_else(|e| e.into_inner());
        if routes.len() >= ROUTES_KEPT {
            routes.clear();
        }
        routes.insert(base.to_string(), route.clone());
        Ok(route)
    }
}

/// The client of HTTPS executors.
fn tls_client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .read_timeout(READ_TIMEOUT)
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
        // Header names go out as `Content-Type`, `Xxl-Job-Access-Token`, close to Java's spelling, for
        // third-party executors that compare header names case-sensitively.
        .http1_title_case_headers()
        // Executors never redirect; a redirect is reported as the non-200 status it is.
        .redirect(redirect::Policy::none())
        // A `/run` is sent once (as Java's client does); no copy of each request is kept for retries.
        .retry(reqwest::retry::never())
        // Java's HttpURLConnection ignores HTTP_PROXY-style variables; executors sit on the internal network.
        .no_proxy()
        // 2.4.2 trusts every certificate and host name for HTTPS executors (XxlJobRemotingUtil). Executors
        // typically use self-signed or IP-address certificates, so verifying would break existing setups;
        // HTTPS here gives encryption against passive listeners, not executor authentication (the access
        // token is the authentication).
        .danger_accept_invalid_certs(true)
        .build()
        .map_err(|e| format!("the HTTP client cannot be set up: {}", describe(&e)))
}

/// `String.trim()` of Java: strips every character up to U+0020, not Unicode white space.
fn java_trim(text: &str) -> &str {
    text.trim_matches(|c: char| c <= ' ')
}

/// The failure message of a plain-HTTP exchange, in 2.4.2's words.
fn plain_failure(failure: Failure, url: &str) -> String {
    match failure {
        Failure::Transport(reason) => remoting_error(&reason, url),
        Failure::ReadTimeout => remoting_error("Read timed out", url),
        Failure::Status(code) => {
            format!("xxl-job remoting fail, StatusCode({code}) invalid. for url : {url}")
        }
        Failure::TooLarge => {
            remoting_error(&format!("response body larger than {MAX_BODY_BYTES} bytes"), url)
        }
    }
}

fn timed_out(url: &str) -> String {
    remoting_error(&format!("Request timed out after {} ms", TOTAL_TIMEOUT.as_millis()), url)
}

fn remoting_error(reason: &str, url: &str) -> String {
    format!("xxl-job remoting error({reason}), for url : {url}")
}

/// Only `http` and `https`; texts as `java.net.URL` words them: 2.4.2 adds no scheme (XxlJobRemotingUtil).
fn parse_url(url: &str) -> Result<Url, String> {
    match Url::parse(url) {
        Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => Ok(parsed),
        Ok(parsed) => Err(format!("unknown protocol: {}", parsed.scheme())),
        Err(_) if !url.contains("://") => Err(format!("no protocol: {url}")),
        Err(e) => Err(format!("{e}: {url}")),
    }
}

/// A short reason in the words of Java's exceptions where one applies: "Read timed out", "Connection refused".
/// Otherwise the innermost cause, which names the problem (reqwest's own text only names the URL).
pub(crate) fn describe(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        // A reply not started within the read timeout also lands here while the connection is still being
        // made (reqwest's read timer covers the whole wait for the headers); the connect timer only wins when
        // the connect attempt itself fails on time.
        return if error.is_connect() { "Connect timed out" } else { "Read timed out" }.to_string();
    }
    let mut innermost: &dyn StdError = error;
    let mut source = error.source();
    while let Some(cause) = source {
        // An `io::Error` wrapping another one (as the TLS layer does) hides the inner one from `source()`.
        let mut io_error = cause.downcast_ref::<io::Error>();
        while let Some(current) = io_error {
            match current.kind() {
                io::ErrorKind::ConnectionRefused => return "Connection refused".to_string(),
                io::ErrorKind::ConnectionReset => return "Connection reset".to_string(),
                _ => io_error = current.get_ref().and_then(|inner| inner.downcast_ref::<io::Error>()),
            }
        }
        innermost = cause;
        source = cause.source();
    }
    innermost.to_string()
}

/// Parses a reply as `ReturnT` whatever its Content-Type (executors answer `text/html`). A missing `code` reads
/// as 0 and is passed on as is, as in 2.4.2. Executors of 3.3.0 and later answer `{"code","msg","data"}`:
/// `data` stands in for a missing or null `content`.
fn parse_reply<T>(url: &str, text: &str, read_content: fn(Value) -> Option<T>) -> Result<ReturnT<T>, String> {
    let reply = serde_json::from_str::<Value>(text)
        .ok()
        .filter(Value::is_object)
        .map(data_as_content)
        .and_then(|object| ReturnT::<Value>::deserialize(object).ok())
        .and_then(|raw| {
            let content = match raw.content {
                Some(value) => Some(read_content(value)?),
                None => None,
            };
            Some(ReturnT { code: raw.code, msg: raw.msg, content })
        });
    reply.ok_or_else(|| format!("xxl-job remoting (url={url}) response content invalid({}).", excerpt(text)))
}

fn data_as_content(mut object: Value) -> Value {
    if object.get("content").is_none_or(Value::is_null) {
        if let Some(data) = object.get_mut("data").map(Value::take) {
            object["content"] = data;
        }
    }
    object
}

/// A string `content`, read as Gson reads a `String` field: numbers and booleans become their text.
fn string_content(value: Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

fn excerpt(text: &str) -> String {
    match text.char_indices().nth(MAX_ECHOED_BODY_CHARS) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

/// A JSON `null` reads as the default, as Gson leaves a primitive field untouched.
fn null_as_default<'de, D: Deserializer<'de>, T: Deserialize<'de> + Default>(
    deserializer: D,
) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}
