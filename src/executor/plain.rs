//! Plain-HTTP executors over hyper's HTTP/1.1 connections, pooled per address by us: the lean path the
//! leader's `/run`s take (issue: performance round 2). A general client parses the URL, runs it through a
//! stack of layers and looks its pool up per request; here an address is parsed once, a request is its
//! path, four headers and a body, and an idle connection is a pop from a list.
//!
//! What reqwest does for HTTPS executors, this does for HTTP ones, with the same timeouts and failure
//! texts (see `super::ExecutorClient`).

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{HeaderValue, HOST};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::error::Error as StdError;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

/// Idle connections kept per address; beyond them a finished request's connection is closed.
const IDLE_PER_ADDRESS: usize = 512;
/// New connections to one address that may await their first reply at a time. An executor accepts
/// connections at its own pace, and its listen queue is short (Netty and aiohttp take 128 by default):
/// a burst of connections past it is dropped by the kernel and retried a second later. Requests beyond
/// this wait for a connection to come back, or for a connect of their own.
const CONNECTS_PER_ADDRESS: usize = 32;

/// Where an executor address points: what a request to it needs, parsed once.
#[derive(Debug, Clone)]
pub(super) struct Target {
    /// `host:port`, to connect to.
    authority: String,
    /// The `Host` header.
    host: HeaderValue,
    /// The address's path, ending in `/` (usually just `/`).
    base_path: String,
}

impl Target {
    /// An `http://` address as a target; `None` for any other scheme.
    pub(super) fn of(url: &url::Url) -> Option<Target> {
        if url.scheme() != "http" {
            return None;
        }
        let host = url.host_str()?;
        let port = url.port_or_known_default()?;
        let authority = match url.host() {
            Some(url::Host::Ipv6(ip)) => format!("[{ip}]:{port}"),
            _ => format!("{host}:{port}"),
        };
        let host_header = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        };
        let path = url.path();
        let base_path = if path.ends_with('/') { path.to_string() } else { format!("{path}/") };
        Some(Target { authority, host: HeaderValue::from_str(&host_header).ok()?, base_path })
    }
}

/// Why an exchange failed, in the words the failure messages use.
#[derive(Debug)]
pub(super) enum Failure {
    /// A transport failure, described as Java's exceptions word them where one applies.
    Transport(String),
    /// No reply within the read timeout.
    ReadTimeout,
    /// The reply's status was not 200.
    Status(u16),
    /// The reply's body passed the limit.
    TooLarge,
}

/// A connection ready for a request, and since when it has been idle.
type Idle = (SendRequest<Full<Bytes>>, Instant);

/// The connections of one address.
struct Host {
    idle: Vec<Idle>,
    /// Room for new connections awaiting their first reply.
    connecting: Arc<Semaphore>,
    /// A connection came back to `idle`.
    returned: Arc<Notify>,
}

impl Default for Host {
    fn default() -> Self {
        Host {
            idle: Vec::new(),
            connecting: Arc::new(Semaphore::new(CONNECTS_PER_ADDRESS)),
            returned: Arc::new(Notify::new()),
        }
    }
}

/// Connections by address.
#[derive(Default)]
pub(super) struct Pool {
    hosts: Mutex<HashMap<String, Host>>,
}

/// The connections of `target`'s address; its key is copied only when the address is new (this runs twice
/// per request).
fn host_of<'a>(hosts: &'a mut HashMap<String, Host>, target: &Target) -> &'a mut Host {
    if !hosts.contains_key(&target.authority) {
        hosts.insert(target.authority.clone(), Host::default());
    }
    hosts.get_mut(&target.authority).expect("inserted above")
}

/// A connection for one exchange; a new one holds its connect permit until its first reply.
struct Connection {
    sender: SendRequest<Full<Bytes>>,
    first: Option<OwnedSemaphorePermit>,
}

/// The limits of one exchange.
pub(super) struct Limits {
    pub connect: Duration,
    pub read: Duration,
    pub idle: Duration,
    pub max_body: usize,
}

/// A request built and holding its connection, to be written when its time comes.
pub(super) struct Ready {
    request: Request<Full<Bytes>>,
    connection: Connection,
}

impl Pool {
    /// Builds a POST of `body` to `endpoint` of `target` with `headers` (besides `Host` and
    /// `Content-Length`) and takes a connection for it (a new one if none is idle): sending it is then
    /// only the write.
    pub(super) async fn ready(
        &self,
        target: &Target,
        endpoint: &str,
        headers: &[(hyper::header::HeaderName, HeaderValue)],
        body: Bytes,
        limits: &Limits,
    ) -> Result<Ready, Failure> {
        let mut request = Request::post(format!("{}{endpoint}", target.base_path))
            .body(Full::new(body))
            .map_err(|e| Failure::Transport(e.to_string()))?;
        let request_headers = request.headers_mut();
        request_headers.insert(HOST, target.host.clone());
        for (name, value) in headers {
            request_headers.insert(name, value.clone());
        }
        let connection = self.connection(target, limits).await?;
        Ok(Ready { request, connection })
    }

    /// Writes a ready request; returns the reply's body once it is 200 and read whole.
    pub(super) async fn send(
        &self,
        target: &Target,
        ready: Ready,
        limits: &Limits,
    ) -> Result<Bytes, Failure> {
        let Ready { request, connection: Connection { mut sender, first } } = ready;
        // A pooled connection the executor closed while idle fails before anything is written: the
        // request is then sent once, on a new connection.
        let response = match tokio::time::timeout(limits.read, sender.try_send_request(request)).await {
            Err(_) => return Err(Failure::ReadTimeout),
            Ok(Ok(response)) => response,
            Ok(Err(mut failed)) => match failed.take_message() {
                Some(request) if failed.error().is_canceled() => {
                    sender = self.connect(target, limits).await?;
                    match tokio::time::timeout(limits.read, sender.send_request(request)).await {
                        Err(_) => return Err(Failure::ReadTimeout),
                        Ok(sent) => sent.map_err(|e| Failure::Transport(describe(&e)))?,
                    }
                }
                _ => return Err(Failure::Transport(describe(failed.error()))),
            },
        };
        drop(first);
        let body = read(response, limits).await?;
        self.put_back(target, sender, limits).await;
        Ok(body)
    }

    /// A ready request that is not sent after all: its connection, unused, is kept for the next one.
    pub(super) fn unsent(&self, target: &Target, ready: Ready) {
        if !ready.connection.sender.is_closed() {
            self.keep(target, ready.connection.sender);
        }
    }

    /// An idle connection to `target`, or a new one once there is room for it, whichever comes first.
    async fn connection(&self, target: &Target, limits: &Limits) -> Result<Connection, Failure> {
        loop {
            let (connecting, returned) = {
                let mut hosts = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
                let host = host_of(&mut hosts, target);
                while let Some((sender, since)) = host.idle.pop() {
                    if !sender.is_closed() && since.elapsed() < limits.idle {
                        return Ok(Connection { sender, first: None });
                    }
                }
                (host.connecting.clone(), host.returned.clone())
            };
            let notified = returned.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            tokio::select! {
                permit = connecting.acquire_owned() => {
                    let Ok(permit) = permit else { continue };
                    let sender = self.connect(target, limits).await?;
                    return Ok(Connection { sender, first: Some(permit) });
                }
                _ = notified => {}
            }
        }
    }

    async fn connect(&self, target: &Target, limits: &Limits) -> Result<SendRequest<Full<Bytes>>, Failure> {
        let stream = match tokio::time::timeout(limits.connect, TcpStream::connect(&target.authority)).await {
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => return Err(Failure::Transport(describe_io(&e))),
            Err(_) => return Err(Failure::Transport("Connect timed out".into())),
        };
        // Requests are small and written whole: no waiting for more to fill a segment.
        let _ = stream.set_nodelay(true);
        // Header names go out as `Content-Type`, `Xxl-Job-Access-Token`, close to Java's spelling, for
        // third-party executors that compare header names case-sensitively.
        let (sender, connection) = http1::Builder::new()
            .title_case_headers(true)
            .handshake(TokioIo::new(stream))
            .await
            .map_err(|e| Failure::Transport(describe(&e)))?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("executor connection ended: {e}");
            }
        });
        Ok(sender)
    }

    /// Keeps a connection whose exchange is complete for the next request to the same address.
    async fn put_back(&self, target: &Target, mut sender: SendRequest<Full<Bytes>>, limits: &Limits) {
        // Ready once the connection has read the reply's end: at once, the body having been read.
        if tokio::time::timeout(limits.read, sender.ready()).await.is_ok_and(|ready| ready.is_ok()) {
            self.keep(target, sender);
        }
    }

    /// Adds an idle connection to `target`'s, unless enough are kept.
    fn keep(&self, target: &Target, sender: SendRequest<Full<Bytes>>) {
        let mut hosts = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
        let host = host_of(&mut hosts, target);
        if host.idle.len() < IDLE_PER_ADDRESS {
            host.idle.push((sender, Instant::now()));
            host.returned.notify_one();
        }
    }
}

/// The body of a 200 reply, read whole within the limits (each part within the read timeout).
async fn read(response: Response<Incoming>, limits: &Limits) -> Result<Bytes, Failure> {
    if response.status() != hyper::StatusCode::OK {
        return Err(Failure::Status(response.status().as_u16()));
    }
    let declared = response
        .headers()
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limits.max_body as u64) {
        return Err(Failure::TooLarge);
    }
    let mut body = response.into_body();
    let mut bytes = Vec::new();
    loop {
        let frame = match tokio::time::timeout(limits.read, body.frame()).await {
            Err(_) => return Err(Failure::ReadTimeout),
            Ok(None) => break,
            Ok(Some(Err(e))) => return Err(Failure::Transport(describe(&e))),
            Ok(Some(Ok(frame))) => frame,
        };
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > limits.max_body {
                return Err(Failure::TooLarge);
            }
            if bytes.is_empty() && declared == Some(data.len() as u64) {
                // The usual reply: one frame, the whole body.
                return Ok(data);
            }
            bytes.extend_from_slice(&data);
        }
    }
    Ok(Bytes::from(bytes))
}

/// A short reason in the words of Java's exceptions where one applies ("Connection refused",
/// "Connection reset"), else the innermost cause.
fn describe(error: &hyper::Error) -> String {
    let mut innermost: &dyn StdError = error;
    let mut source = error.source();
    while let Some(cause) = source {
        if let Some(io_error) = cause.downcast_ref::<io::Error>() {
            return describe_io(io_error);
        }
        innermost = cause;
        source = cause.source();
    }
    innermost.to_string()
}

fn describe_io(error: &io::Error) -> String {
    match error.kind() {
        io::ErrorKind::ConnectionRefused => "Connection refused".to_string(),
        io::ErrorKind::ConnectionReset => "Connection reset".to_string(),
        _ => error.to_string(),
    }
}
