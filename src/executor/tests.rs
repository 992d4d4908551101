//! Against fake executors over real HTTP on 127.0.0.1: an axum one that records what it receives, and raw
//! TCP ones for what axum would hide or refuse to send (header spelling, trickled and oversized bodies).

use super::*;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, State};
use axum::http::{header, HeaderMap, Method, Uri};
use axum::response::{IntoResponse, Response};
use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as the fake executor saw it.
#[derive(Debug, Clone)]
struct Seen {
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: String,
    peer: SocketAddr,
}

type Reply = Arc<dyn Fn(&Seen) -> Response + Send + Sync>;

#[derive(Clone)]
struct Fake {
    seen: Arc<Mutex<Vec<Seen>>>,
    reply: Reply,
}

struct FakeExecutor {
    /// `http://127.0.0.1:<port>` without a trailing slash.
    base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl FakeExecutor {
    fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn only_request(&self) -> Seen {
        let requests = self.requests();
        assert_eq!(requests.len(), 1, "{requests:?}");
        requests[0].clone()
    }
}

async fn record(
    State(fake): State<Fake>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let seen = Seen { method, uri, headers, body: String::from_utf8_lossy(&body).into_owned(), peer };
    let response = (fake.reply)(&seen);
    fake.seen.lock().unwrap().push(seen);
    response
}

/// An executor answering every request with `reply`.
async fn fake_executor(reply: impl Fn(&Seen) -> Response + Send + Sync + 'static) -> FakeExecutor {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let fake = Fake { seen: seen.clone(), reply: Arc::new(reply) };
    let app = axum::Router::new().fallback(record).with_state(fake);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await.unwrap();
    });
    FakeExecutor { base, seen }
}

/// What a Java executor sends: always HTTP 200, `text/html;charset=UTF-8`.
fn java_reply(body: &str) -> Response {
    ([(header::CONTENT_TYPE, "text/html;charset=UTF-8")], body.to_string()).into_response()
}

/// A raw TCP executor: reads one request, stores its bytes, then runs `respond` on the socket.
async fn raw_executor<F, Fut>(respond: F) -> (String, Arc<Mutex<Vec<u8>>>)
where
    F: FnOnce(TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let request = Arc::new(Mutex::new(Vec::new()));
    let sink = request.clone();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        *sink.lock().unwrap() = read_request(&mut socket).await;
        respond(socket).await;
    });
    (base, request)
}

/// One request as the client wrote it. Its bodies are small JSON: the head and body arrive before the
/// client waits for the reply.
async fn read_request(socket: &mut TcpStream) -> Vec<u8> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    while !request_complete(&buffer) {
        let n = socket.read(&mut chunk).await.unwrap();
        if n == 0 {
            break;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
    buffer
}

fn request_complete(buffer: &[u8]) -> bool {
    let text = String::from_utf8_lossy(buffer);
    let Some(head_end) = text.find("\r\n\r\n") else { return false };
    let length = text[..head_end]
        .lines()
        .find_map(|line| {
            line.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse::<usize>().unwrap())
        })
        .unwrap_or(0);
    buffer.len() >= head_end + 4 + length
}

const MANUAL: FireHeaders = FireHeaders { planned_ms: None, trigger_type: "MANUAL" };

fn trigger_param() -> TriggerParam {
    TriggerParam {
        job_id: 1,
        executor_handler: Some("demoJobHandler".into()),
        executor_params: Some("".into()),
        executor_block_strategy: Some("SERIAL_EXECUTION".into()),
        executor_timeout: 0,
        log_id: 42,
        log_date_time: 1_700_000_000_123,
        glue_type: "BEAN".into(),
        glue_source: Some("".into()),
        glue_updatetime: 1_541_254_891_000,
        broadcast_index: 0,
        broadcast_total: 1,
    }
}

#[test]
fn trigger_param_serializes_with_gson_names_and_omits_nulls() {
    let json = serde_json::to_string(&trigger_param()).unwrap();
    assert_eq!(
        json,
        r#"{"jobId":1,"executorHandler":"demoJobHandler","executorParams":"","executorBlockStrategy":"SERIAL_EXECUTION","executorTimeout":0,"logId":42,"logDateTime":1700000000123,"glueType":"BEAN","glueSource":"","glueUpdatetime":1541254891000,"broadcastIndex":0,"broadcastTotal":1}"#
    );
    let sparse = TriggerParam {
        executor_handler: None,
        executor_params: None,
        executor_block_strategy: None,
        glue_source: None,
        glue_type: "GLUE_SHELL".into(),
        broadcast_index: 2,
        broadcast_total: 3,
        ..trigger_param()
    };
    assert_eq!(
        serde_json::to_string(&sparse).unwrap(),
        r#"{"jobId":1,"executorTimeout":0,"logId":42,"logDateTime":1700000000123,"glueType":"GLUE_SHELL","glueUpdatetime":1541254891000,"broadcastIndex":2,"broadcastTotal":3}"#
    );
}

#[test]
fn log_result_reads_gson_and_tolerates_gaps() {
    let full: LogResult = serde_json::from_str(
        r#"{"fromLineNum":1,"toLineNum":3,"logContent":"a\nb\n","isEnd":true,"extra":1}"#,
    )
    .unwrap();
    assert_eq!(
        full,
        LogResult { from_line_num: 1, to_line_num: 3, log_content: Some("a\nb\n".into()), is_end: true }
    );
    let sparse: LogResult = serde_json::from_str(r#"{"fromLineNum":5,"toLineNum":null,"end":true}"#).unwrap();
    assert_eq!(sparse, LogResult { from_line_num: 5, to_line_num: 0, log_content: None, is_end: true });
    assert_eq!(
        serde_json::to_string(&full).unwrap(),
        r#"{"fromLineNum":1,"toLineNum":3,"logContent":"a\nb\n","isEnd":true}"#
    );
}

#[tokio::test]
async fn run_posts_the_trigger_to_the_exact_path_with_headers() {
    let executor = fake_executor(|_| java_reply(r#"{"code":200}"#)).await;
    let client = ExecutorClient::new("secret-token");
    let result = client.run(&executor.base, &trigger_param(), MANUAL).await;
    assert_eq!(result, ReturnT::success());

    let seen = executor.only_request();
    assert_eq!(seen.method, Method::POST);
    assert_eq!(seen.uri.to_string(), "/run");
    assert_eq!(seen.headers["content-type"], "application/json;charset=UTF-8");
    assert_eq!(seen.headers["accept-charset"], "application/json;charset=UTF-8");
    assert_eq!(seen.headers["xxl-job-access-token"], "secret-token");
    assert_eq!(seen.headers["xxl-job-trigger-type"], "MANUAL");
    assert!(!seen.headers.contains_key("xxl-job-planned-time"), "only planned fires carry an instant");
    assert_eq!(seen.body, serde_json::to_string(&trigger_param()).unwrap());
}

#[tokio::test]
async fn a_planned_fire_carries_its_instant_and_type() {
    let executor = fake_executor(|_| java_reply(r#"{"code":200}"#)).await;
    let fire = FireHeaders { planned_ms: Some(1_700_000_000_000), trigger_type: "MISFIRE" };
    assert!(ExecutorClient::new("").run(&executor.base, &trigger_param(), fire).await.is_success());
    let seen = executor.only_request();
    assert_eq!(seen.headers["xxl-job-planned-time"], "1700000000000");
    assert_eq!(seen.headers["xxl-job-trigger-type"], "MISFIRE");
}

#[tokio::test]
async fn beat_sends_an_empty_json_string_and_no_token_when_blank() {
    let executor = fake_executor(|_| java_reply(r#"{"code":200}"#)).await;
    for token in ["", " \t"] {
        let result = ExecutorClient::new(token).beat(&executor.base).await;
        assert!(result.is_success(), "{result:?}");
    }
    for seen in executor.requests() {
        assert_eq!(seen.uri.to_string(), "/beat");
        assert_eq!(seen.body, r#""""#);
        assert!(!seen.headers.contains_key("xxl-job-access-token"));
    }
}

#[tokio::test]
async fn idle_beat_kill_and_log_send_their_bodies() {
    let executor = fake_executor(|seen| match seen.uri.path() {
        "/idleBeat" => java_reply(r#"{"code":500,"msg":"job thread is running or has trigger queue."}"#),
        "/kill" => java_reply(r#"{"code":200,"msg":"job thread already killed."}"#),
        _ => java_reply(
            r#"{"code":200,"content":{"fromLineNum":1,"toLineNum":2,"logContent":"one\ntwo\n","isEnd":false}}"#,
        ),
    })
    .await;
    let client = ExecutorClient::new("t");

    let idle = client.idle_beat(&executor.base, 5).await;
    assert_eq!(idle, ReturnT::fail("job thread is running or has trigger queue."));
    let kill = client.kill(&executor.base, 6).await;
    assert_eq!((kill.code, kill.msg.as_deref()), (200, Some("job thread already killed.")));
    let log = client.log(&executor.base, 1_700_000_000_000, 42, 1).await;
    assert_eq!(
        log.content,
        Some(LogResult {
            from_line_num: 1,
            to_line_num: 2,
            log_content: Some("one\ntwo\n".into()),
            is_end: false
        })
    );

    let bodies: Vec<(String, String)> =
        executor.requests().into_iter().map(|s| (s.uri.to_string(), s.body)).collect();
    assert_eq!(
        bodies,
        [
            ("/idleBeat".to_string(), r#"{"jobId":5}"#.to_string()),
            ("/kill".to_string(), r#"{"jobId":6}"#.to_string()),
            (
                "/log".to_string(),
                r#"{"logDateTim":1700000000000,"logId":42,"fromLineNum":1,"logDateTime":1700000000000}"#
                    .to_string()
            ),
        ]
    );
}

#[tokio::test]
async fn log_reports_the_end_of_a_missing_file() {
    let executor = fake_executor(|_| {
        java_reply(r#"{"code":200,"content":{"fromLineNum":1,"toLineNum":0,"logContent":"readLog fail, logFile not exists","isEnd":true}}"#)
    })
    .await;
    let result = ExecutorClient::new("").log(&executor.base, 0, 9, 1).await;
    let content = result.content.unwrap();
    assert!(content.is_end);
    assert_eq!(content.to_line_num, 0);
}

#[tokio::test]
async fn replies_are_read_leniently() {
    let cases = [
        // Missing code passes through as 0, as in 2.4.2.
        (r#"{}"#, ReturnT { code: 0, msg: None, content: None }),
        (r#"{"code":"200","msg":null,"content":null,"unknown":[1]}"#, ReturnT::success()),
        (
            r#"{"code":502,"msg":"job execute timeout "}"#,
            ReturnT { code: 502, msg: Some("job execute timeout ".into()), content: None },
        ),
        // A number where a string belongs is read as its text, as Gson does.
        (r#"{"code":200,"content":7}"#, ReturnT::with_content("7".to_string())),
        // Pretty-printed replies: Java joins the lines without separators.
        (
            "{\r\n  \"code\": 200,\n  \"msg\": \"ok\"\n}\n",
            ReturnT { code: 200, msg: Some("ok".into()), content: None },
        ),
    ];
    for (body, expected) in cases {
        let executor = fake_executor(move |_| java_reply(body)).await;
        let result = ExecutorClient::new("").run(&executor.base, &trigger_param(), MANUAL).await;
        assert_eq!(result, expected, "{body}");
    }
}

#[tokio::test]
async fn a_non_200_status_is_a_remoting_failure() {
    let executor = fake_executor(|_| (axum::http::StatusCode::NOT_FOUND, "nope").into_response()).await;
    let result = ExecutorClient::new("").run(&executor.base, &trigger_param(), MANUAL).await;
    assert_eq!(
        result,
        ReturnT::fail(format!(
            "xxl-job remoting fail, StatusCode(404) invalid. for url : {}/run",
            executor.base
        ))
    );
}

#[tokio::test]
async fn unparsable_replies_are_echoed_in_the_failure() {
    for body in [
        "<html>busy</html>",
        "",
        "[200]",
        r#""text""#,
        r#"{"code":200} trailing"#,
        r#"{"code":200,"content":{"a":1}}"#,
    ] {
        let executor = fake_executor(move |_| java_reply(body)).await;
        let result = ExecutorClient::new("").beat(&executor.base).await;
        let expected =
            format!("xxl-job remoting (url={}/beat) response content invalid({body}).", executor.base);
        assert_eq!(result, ReturnT::fail(expected));
    }
}

#[tokio::test]
async fn a_long_unparsable_reply_is_cut_in_the_message() {
    let executor = fake_executor(|_| java_reply(&"é".repeat(10_000))).await;
    let result = ExecutorClient::new("").beat(&executor.base).await;
    let msg = result.msg.unwrap();
    assert!(msg.contains(&format!("invalid({}...).", "é".repeat(MAX_ECHOED_BODY_CHARS))), "{}", msg.len());
}

#[tokio::test]
async fn a_hanging_executor_times_out_after_the_read_timeout() {
    let executor = fake_executor(|_| java_reply(r#"{"code":200}"#)).await;
    let hanging = axum::Router::new().fallback(|| async {
        tokio::time::sleep(Duration::from_secs(60)).await;
        "late"
    });
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, hanging).await.unwrap() });

    let client = ExecutorClient::new("");
    let started = Instant::now();
    let result = client.run(&base, &trigger_param(), MANUAL).await;
    let elapsed = started.elapsed();
    assert_eq!(
        result,
        ReturnT::fail(format!("xxl-job remoting error(Read timed out), for url : {base}/run"))
    );
    // 3 s, with slack for a loaded CI machine.
    assert!(elapsed >= Duration::from_millis(2900) && elapsed < Duration::from_millis(4500), "{elapsed:?}");
    // The same client still works for other executors.
    assert!(client.beat(&executor.base).await.is_success());
}

#[tokio::test]
async fn a_trickling_body_is_cut_by_the_total_timeout() {
    let (base, _) = raw_executor(|mut socket| async move {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/html;charset=UTF-8\r\nContent-Length: 100\r\n\r\n";
        socket.write_all(head.as_bytes()).await.unwrap();
        for _ in 0..100 {
            if socket.write_all(b" ").await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(1000)).await;
        }
    })
    .await;
    let started = Instant::now();
    let result = ExecutorClient::new("").run(&base, &trigger_param(), MANUAL).await;
    assert_eq!(
        result,
        ReturnT::fail(format!(
            "xxl-job remoting error(Request timed out after 6000 ms), for url : {base}/run"
        ))
    );
    let elapsed = started.elapsed();
    assert!(elapsed >= Duration::from_millis(5900) && elapsed < Duration::from_millis(7500), "{elapsed:?}");
}

#[tokio::test]
async fn connection_refused_is_reported_readably() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/", listener.local_addr().unwrap());
    drop(listener);
    let result = ExecutorClient::new("").beat(&base).await;
    assert_eq!(
        result,
        ReturnT::fail(format!("xxl-job remoting error(Connection refused), for url : {base}beat"))
    );
}

#[tokio::test]
async fn an_executor_closing_without_reply_is_a_remoting_error() {
    let (base, _) = raw_executor(|socket| async move { drop(socket) }).await;
    let result = ExecutorClient::new("").beat(&base).await;
    let msg = result.msg.unwrap();
    assert_eq!(result.code, 500);
    assert!(
        msg.starts_with("xxl-job remoting error(") && msg.ends_with(&format!("), for url : {base}/beat")),
        "{msg}"
    );
}

#[tokio::test]
async fn addresses_without_scheme_or_blank_fail_without_a_call() {
    let client = ExecutorClient::new("");
    assert_eq!(
        client.beat("127.0.0.1:9999").await,
        ReturnT::fail(
            "xxl-job remoting error(no protocol: 127.0.0.1:9999/beat), for url : 127.0.0.1:9999/beat"
        )
    );
    assert_eq!(
        client.beat("localhost:9999/").await,
        ReturnT::fail("xxl-job remoting error(unknown protocol: localhost), for url : localhost:9999/beat")
    );
    for blank in ["", "  "] {
        assert_eq!(
            client.beat(blank).await,
            ReturnT::fail("xxl-job remoting error(executor address is blank).")
        );
    }
}

#[tokio::test]
async fn addresses_are_trimmed_and_get_exactly_one_slash() {
    let executor = fake_executor(|_| java_reply(r#"{"code":200}"#)).await;
    let client = ExecutorClient::new("");
    for address in [executor.base.clone(), format!("{}/", executor.base), format!(" {}/ \n", executor.base)] {
        assert!(client.kill(&address, 1).await.is_success(), "{address:?}");
    }
    let paths: Vec<String> = executor.requests().iter().map(|s| s.uri.to_string()).collect();
    assert_eq!(paths, ["/kill", "/kill", "/kill"]);
}

#[tokio::test]
async fn connections_are_kept_alive_and_reused() {
    let executor = fake_executor(|_| java_reply(r#"{"code":200}"#)).await;
    let client = ExecutorClient::new("");
    for _ in 0..3 {
        assert!(client.beat(&executor.base).await.is_success());
    }
    let peers: Vec<SocketAddr> = executor.requests().iter().map(|s| s.peer).collect();
    assert!(peers.iter().all(|p| *p == peers[0]), "{peers:?}");
}

#[tokio::test]
async fn a_run_made_ready_holds_its_connection_and_an_unsent_one_gives_it_back() {
    let executor = fake_executor(|_| java_reply(r#"{"code":200}"#)).await;
    let client = ExecutorClient::new("");
    let ready = client.ready_run(client.prepare_run(&executor.base, &trigger_param(), MANUAL)).await;
    assert!(executor.requests().is_empty(), "nothing is written until it is sent");
    client.unsent(ready);
    // Two at once: the one given back serves one, the other connects anew; both are then reused.
    let (a, b) = tokio::join!(
        client.ready_run(client.prepare_run(&executor.base, &trigger_param(), MANUAL)),
        client.ready_run(client.prepare_run(&executor.base, &trigger_param(), MANUAL)),
    );
    let (a, b) = tokio::join!(client.send_run(a), client.send_run(b));
    assert!(a.is_success() && b.is_success(), "{a:?} {b:?}");
    assert!(client.run(&executor.base, &trigger_param(), MANUAL).await.is_success());
    let peers: HashSet<SocketAddr> = executor.requests().iter().map(|s| s.peer).collect();
    assert_eq!(peers.len(), 2, "{peers:?}");
}

#[tokio::test]
async fn a_run_whose_connection_fails_when_made_ready_fails_when_sent() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/", listener.local_addr().unwrap());
    drop(listener);
    let client = ExecutorClient::new("");
    let ready = client.ready_run(client.prepare_run(&base, &trigger_param(), MANUAL)).await;
    assert_eq!(
        client.send_run(ready).await,
        ReturnT::fail(format!("xxl-job remoting error(Connection refused), for url : {base}run"))
    );
}

#[tokio::test]
async fn a_connection_the_executor_closed_while_idle_is_replaced() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let served = Arc::new(Mutex::new(0));
    let count = served.clone();
    tokio::spawn(async move {
        // Each connection serves one request, then the executor closes it (a restart, an idle timeout).
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            read_request(&mut socket).await;
            let body = r#"{"code":200}"#;
            socket
                .write_all(
                    format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len()).as_bytes(),
                )
                .await
                .unwrap();
            *count.lock().unwrap() += 1;
            drop(socket);
        }
    });
    let client = ExecutorClient::new("");
    for _ in 0..3 {
        assert!(client.beat(&base).await.is_success());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(*served.lock().unwrap(), 3);
}

#[tokio::test]
async fn header_names_go_out_in_java_like_spelling() {
    let (base, request) = raw_executor(|mut socket| async move {
        let body = r#"{"code":200}"#;
        let reply = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len());
        socket.write_all(reply.as_bytes()).await.unwrap();
    })
    .await;
    assert!(ExecutorClient::new("tok").beat(&format!("{base}/")).await.is_success());
    let request = String::from_utf8(request.lock().unwrap().clone()).unwrap();
    assert!(request.starts_with("POST /beat HTTP/1.1\r\n"), "{request}");
    for line in [
        "Content-Type: application/json;charset=UTF-8\r\n",
        "Accept-Charset: application/json;charset=UTF-8\r\n",
        "Xxl-Job-Access-Token: tok\r\n",
        "Content-Length: 2\r\n",
    ] {
        assert!(request.contains(line), "{line:?} missing in {request}");
    }
    assert!(request.ends_with("\r\n\r\n\"\""), "{request}");
}

#[tokio::test]
async fn oversized_replies_are_refused() {
    let declared = fake_executor(|_| java_reply(&" ".repeat(MAX_BODY_BYTES + 1))).await;
    let result = ExecutorClient::new("").log(&declared.base, 0, 1, 1).await;
    let expected = format!(
        "xxl-job remoting error(response body larger than {MAX_BODY_BYTES} bytes), for url : {}/log",
        declared.base
    );
    assert_eq!(result, ReturnT::fail(expected));

    // Chunked, so the size is only known while reading.
    let (base, _) = raw_executor(|mut socket| async move {
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        socket.write_all(head.as_bytes()).await.unwrap();
        let chunk = format!("{:x}\r\n{}\r\n", 1 << 20, " ".repeat(1 << 20));
        for _ in 0..12 {
            if socket.write_all(chunk.as_bytes()).await.is_err() {
                return;
            }
        }
    })
    .await;
    let result = ExecutorClient::new("").log(&base, 0, 1, 1).await;
    assert_eq!(
        result,
        ReturnT::fail(format!(
            "xxl-job remoting error(response body larger than {MAX_BODY_BYTES} bytes), for url : {base}/log"
        ))
    );
}

#[tokio::test]
async fn https_addresses_speak_tls() {
    // No TLS server here: a listener that takes the first bytes and hangs up shows the client opened a TLS
    // handshake (its rustls setup works) and reports the aborted handshake as a remoting error.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("https://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut first = [0u8; 1];
        socket.read_exact(&mut first).await.unwrap();
        first[0]
    });
    let result = ExecutorClient::new("").beat(&base).await;
    assert_eq!(result.code, 500);
    assert!(result.msg.unwrap().starts_with("xxl-job remoting error("));
    // A TLS ClientHello starts with the handshake record type 0x16.
    assert_eq!(server.await.unwrap(), 0x16);
}

#[tokio::test]
async fn replies_of_3x_executors_carry_data_instead_of_content() {
    let executor = fake_executor(|seen| match seen.uri.path() {
        "/log" => java_reply(
            r#"{"code":200,"msg":"Success","data":{"fromLineNum":1,"toLineNum":2,"logContent":"one\ntwo\n","isEnd":false}}"#,
        ),
        _ => java_reply(r#"{"code":200,"msg":"Success","data":"job thread already killed."}"#),
    })
    .await;
    let client = ExecutorClient::new("");
    let log = client.log(&executor.base, 0, 9, 1).await;
    assert_eq!(
        log,
        ReturnT {
            code: 200,
            msg: Some("Success".into()),
            content: Some(LogResult {
                from_line_num: 1,
                to_line_num: 2,
                log_content: Some("one\ntwo\n".into()),
                is_end: false
            })
        }
    );
    let kill = client.kill(&executor.base, 6).await;
    assert_eq!(kill.content.as_deref(), Some("job thread already killed."));
    // `content` wins when both are present.
    assert_eq!(
        parse_reply("u", r#"{"code":200,"content":"c","data":"d"}"#, string_content)
            .unwrap()
            .content
            .as_deref(),
        Some("c")
    );
}

#[tokio::test]
async fn a_read_past_the_end_keeps_its_place() {
    let executor = fake_executor(|_| {
        java_reply(r#"{"code":200,"msg":"Success","data":{"fromLineNum":5,"toLineNum":0,"logContent":"","isEnd":false}}"#)
    })
    .await;
    let content = ExecutorClient::new("").log(&executor.base, 0, 9, 5).await.content.unwrap();
    assert_eq!((content.from_line_num, content.to_line_num), (5, 4));
}
