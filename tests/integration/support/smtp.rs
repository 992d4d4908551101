//! An SMTP server for the alarm tests: EHLO/HELO, STARTTLS or TLS from the first byte, AUTH PLAIN and
//! LOGIN, MAIL FROM, RCPT TO, DATA with dot-unstuffing, RSET, NOOP, QUIT. It records every accepted
//! message with its envelope and decodes what the tests check (subject, HTML body).

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use libtest_mimic::Failed;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::{self, ServerConfig};
use tokio_rustls::TlsAcceptor;

/// How the server speaks TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmtpTls {
    /// Plain text; STARTTLS is not offered.
    None,
    /// Plain text until the client says STARTTLS; mail is refused before that.
    StartTls,
    /// TLS from the first byte (SMTPS).
    Implicit,
}

#[derive(Debug, Clone)]
pub struct SmtpOptions {
    pub tls: SmtpTls,
    /// When set, AUTH with these credentials is required before MAIL FROM.
    pub credentials: Option<(String, String)>,
}

impl Default for SmtpOptions {
    fn default() -> SmtpOptions {
        SmtpOptions { tls: SmtpTls::None, credentials: None }
    }
}

/// One accepted message.
#[derive(Debug, Clone)]
pub struct Received {
    pub mail_from: String,
    pub rcpt_to: Vec<String>,
    /// The DATA content after dot-unstuffing, CRLF line ends, without the final ".".
    pub data: String,
    /// Whether the session was encrypted when the message was sent.
    pub tls: bool,
    /// The user that authenticated, if any.
    pub user: Option<String>,
}

impl Received {
    /// The first header of that name, unfolded.
    pub fn header(&self, name: &str) -> Option<String> {
        let (head, _) = split_message(&self.data);
        let mut found: Option<String> = None;
        let mut in_it = false;
        for line in head.split("\r\n") {
            if line.starts_with([' ', '\t']) {
                if in_it {
                    if let Some(value) = found.as_mut() {
                        value.push_str(line);
                    }
                }
                continue;
            }
            if found.is_some() {
                break;
            }
            in_it = line.split_once(':').is_some_and(|(n, _)| n.trim().eq_ignore_ascii_case(name));
            if in_it {
                found = line.split_once(':').map(|(_, v)| v.trim().to_string());
            }
        }
        found
    }

    /// The subject with RFC 2047 encoded words decoded.
    pub fn subject(&self) -> Option<String> {
        self.header("Subject").map(|s| decode_words(&s))
    }

    /// The body decoded from its Content-Transfer-Encoding (single-part messages).
    pub fn body(&self) -> String {
        let (_, body) = split_message(&self.data);
        let encoding = self.header("Content-Transfer-Encoding").unwrap_or_default().to_ascii_lowercase();
        let bytes = match encoding.as_str() {
            "base64" => B64.decode(body.split_whitespace().collect::<String>()).unwrap_or_default(),
            "quoted-printable" => decode_quoted_printable(body),
            _ => body.as_bytes().to_vec(),
        };
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

fn split_message(data: &str) -> (&str, &str) {
    data.split_once("\r\n\r\n").unwrap_or((data, ""))
}

/// Decodes quoted-printable text: soft line breaks and `=XX` escapes.
pub fn decode_quoted_printable(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'=' {
            if bytes[i + 1..].starts_with(b"\r\n") {
                i += 3;
                continue;
            }
            if bytes[i + 1..].starts_with(b"\n") {
                i += 2;
                continue;
            }
            if let Some(hex) = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok()) {
                if let Ok(byte) = u8::from_str_radix(hex, 16) {
                    out.push(byte);
                    i += 3;
                    continue;
                }
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// Decodes `=?charset?B|Q?text?=` words (UTF-8 assumed); whitespace between two words is dropped.
pub fn decode_words(value: &str) -> String {
    let mut out = String::new();
    let mut rest = value;
    let mut last_was_word = false;
    while let Some(start) = rest.find("=?") {
        let before = &rest[..start];
        if !(last_was_word && before.trim().is_empty()) {
            out.push_str(before);
        }
        let word = &rest[start + 2..];
        let parts: Vec<&str> = word.splitn(3, '?').collect();
        let Some(end) = parts.get(2).and_then(|p| p.find("?=")) else {
            out.push_str(&rest[start..]);
            return out;
        };
        let text = &parts[2][..end];
        let decoded = match parts[1].to_ascii_uppercase().as_str() {
            "B" => B64.decode(text).unwrap_or_default(),
            _ => decode_quoted_printable(&text.replace('_', " ")),
        };
        out.push_str(&String::from_utf8_lossy(&decoded));
        let consumed = 2 + parts[0].len() + 1 + parts[1].len() + 1 + end + 2;
        rest = &rest[start + consumed..];
        last_was_word = true;
    }
    out.push_str(rest);
    out
}

/// The server; stops accepting when dropped.
pub struct SmtpServer {
    pub port: u16,
    received: Arc<Mutex<Vec<Received>>>,
    accept: JoinHandle<()>,
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl SmtpServer {
    pub async fn start(options: SmtpOptions) -> Result<SmtpServer, Failed> {
        let listener =
            TcpListener::bind("127.0.0.1:0").await.map_err(|e| Failed::from(format!("smtp bind: {e}")))?;
        let port = listener.local_addr().map_err(|e| Failed::from(e.to_string()))?.port();
        let acceptor = match options.tls {
            SmtpTls::None => None,
            _ => Some(tls_acceptor()?),
        };
        let received = Arc::new(Mutex::new(Vec::new()));
        let sink = received.clone();
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let session =
                    Session { options: options.clone(), acceptor: acceptor.clone(), received: sink.clone() };
                tokio::spawn(async move {
                    let _ = session.serve(stream).await;
                });
            }
        });
        Ok(SmtpServer { port, received, accept })
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().expect("smtp record").clone()
    }
}

/// A loopback port with nothing listening on it.
pub async fn closed_port() -> Result<u16, Failed> {
    let listener = TcpListener::bind("127.0.0.1:0").await.map_err(|e| Failed::from(format!("bind: {e}")))?;
    let port = listener.local_addr().map_err(|e| Failed::from(e.to_string()))?.port();
    drop(listener);
    Ok(port)
}

/// A fresh self-signed certificate for 127.0.0.1 and localhost, served with the ring provider.
fn tls_acceptor() -> Result<TlsAcceptor, Failed> {
    let certified =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string(), "localhost".to_string()])
            .map_err(|e| Failed::from(format!("certificate: {e}")))?;
    let cert: CertificateDer<'static> = certified.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certified.key_pair.serialize_der()));
    let config = ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| Failed::from(format!("tls versions: {e}")))?
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .map_err(|e| Failed::from(format!("tls config: {e}")))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

struct Session {
    options: SmtpOptions,
    acceptor: Option<TlsAcceptor>,
    received: Arc<Mutex<Vec<Received>>>,
}

#[derive(Default)]
struct State {
    greeted: bool,
    user: Option<String>,
    mail_from: Option<String>,
    rcpt_to: Vec<String>,
}

enum Next {
    Quit,
    StartTls,
}

impl Session {
    async fn serve(self, stream: TcpStream) -> std::io::Result<()> {
        let mut io: Box<dyn Io> = if self.options.tls == SmtpTls::Implicit {
            let acceptor = self.acceptor.clone().expect("acceptor");
            Box::new(acceptor.accept(stream).await?)
        } else {
            Box::new(stream)
        };
        let mut tls = self.options.tls == SmtpTls::Implicit;
        io.write_all(b"220 smtp.test ESMTP ready\r\n").await?;
        loop {
            let mut reader = BufReader::new(io);
            match self.converse(&mut reader, tls).await? {
                Next::Quit => return Ok(()),
                Next::StartTls => {
                    let stream = reader.into_inner();
                    let acceptor = self.acceptor.clone().expect("acceptor");
                    io = Box::new(acceptor.accept(stream).await?);
                    tls = true;
                }
            }
        }
    }

    /// Serves commands until QUIT, a closed connection or an accepted STARTTLS.
    async fn converse(&self, reader: &mut BufReader<Box<dyn Io>>, tls: bool) -> std::io::Result<Next> {
        let mut state = State::default();
        loop {
            let Some(line) = read_line(reader).await? else { return Ok(Next::Quit) };
            let upper = line.to_ascii_uppercase();
            let verb = upper.split_whitespace().next().unwrap_or("").to_string();
            let reply: String = match verb.as_str() {
                "EHLO" => {
                    state = State { greeted: true, ..State::default() };
                    let mut lines = vec!["250-smtp.test greets you".to_string(), "250-8BITMIME".to_string()];
                    if self.options.tls == SmtpTls::StartTls && !tls {
                        lines.push("250-STARTTLS".to_string());
                    }
                    lines.push("250 AUTH PLAIN LOGIN".to_string());
                    lines.join("\r\n")
                }
                "HELO" => {
                    state = State { greeted: true, ..State::default() };
                    "250 smtp.test".to_string()
                }
                "STARTTLS" if self.options.tls == SmtpTls::StartTls && !tls => {
                    write(reader, "220 go ahead").await?;
                    return Ok(Next::StartTls);
                }
                "AUTH" => {
                    let words: Vec<&str> = line.split_whitespace().collect();
                    let mechanism = words.get(1).map(|m| m.to_ascii_uppercase()).unwrap_or_default();
                    let credentials = match mechanism.as_str() {
                        "PLAIN" => {
                            let initial = match words.get(2) {
                                Some(initial) => initial.to_string(),
                                None => {
                                    write(reader, "334 ").await?;
                                    read_line(reader).await?.unwrap_or_default()
                                }
                            };
                            let decoded = B64.decode(initial.trim()).unwrap_or_default();
                            let parts: Vec<String> = decoded
                                .split(|b| *b == 0)
                                .map(|p| String::from_utf8_lossy(p).into_owned())
                                .collect();
                            (parts.len() == 3).then(|| (parts[1].clone(), parts[2].clone()))
                        }
                        "LOGIN" => {
                            let user = match words.get(2) {
                                Some(user) => user.to_string(),
                                None => {
                                    write(reader, "334 VXNlcm5hbWU6").await?;
                                    read_line(reader).await?.unwrap_or_default()
                                }
                            };
                            write(reader, "334 UGFzc3dvcmQ6").await?;
                            let password = read_line(reader).await?.unwrap_or_default();
                            let decode = |s: &str| {
                                String::from_utf8_lossy(&B64.decode(s.trim()).unwrap_or_default())
                                    .into_owned()
                            };
                            Some((decode(&user), decode(&password)))
                        }
                        _ => None,
                    };
                    match (credentials, &self.options.credentials) {
                        (Some(given), Some(expected)) if &given == expected => {
                            state.user = Some(given.0);
                            "235 2.7.0 authenticated".to_string()
                        }
                        (Some(given), None) => {
                            state.user = Some(given.0);
                            "235 2.7.0 authenticated".to_string()
                        }
                        _ => "535 5.7.8 authentication failed".to_string(),
                    }
                }
                "MAIL" if !state.greeted => "503 5.5.1 EHLO first".to_string(),
                "MAIL" if self.options.tls == SmtpTls::StartTls && !tls => {
                    "530 5.7.0 STARTTLS first".to_string()
                }
                "MAIL" if self.options.credentials.is_some() && state.user.is_none() => {
                    "530 5.7.0 authentication required".to_string()
                }
                "MAIL" => {
                    state.mail_from = Some(angle_address(&line));
                    state.rcpt_to.clear();
                    "250 2.1.0 sender ok".to_string()
                }
                "RCPT" if state.mail_from.is_none() => "503 5.5.1 MAIL first".to_string(),
                "RCPT" => {
                    state.rcpt_to.push(angle_address(&line));
                    "250 2.1.5 recipient ok".to_string()
                }
                "DATA" if state.rcpt_to.is_empty() => "503 5.5.1 RCPT first".to_string(),
                "DATA" => {
                    write(reader, "354 end with <CRLF>.<CRLF>").await?;
                    let mut data = String::new();
                    loop {
                        let Some(line) = read_line(reader).await? else { return Ok(Next::Quit) };
                        if line == "." {
                            break;
                        }
                        let line = line.strip_prefix('.').unwrap_or(&line);
                        data.push_str(line);
                        data.push_str("\r\n");
                    }
                    self.received.lock().expect("smtp record").push(Received {
                        mail_from: state.mail_from.take().unwrap_or_default(),
                        rcpt_to: std::mem::take(&mut state.rcpt_to),
                        data,
                        tls,
                        user: state.user.clone(),
                    });
                    "250 2.0.0 queued".to_string()
                }
                "RSET" => {
                    state.mail_from = None;
                    state.rcpt_to.clear();
                    "250 2.0.0 reset".to_string()
                }
                "NOOP" => "250 2.0.0 ok".to_string(),
                "QUIT" => {
                    write(reader, "221 2.0.0 bye").await?;
                    return Ok(Next::Quit);
                }
                _ => "502 5.5.2 command not recognised".to_string(),
            };
            write(reader, &reply).await?;
        }
    }
}

/// The address between `<` and `>` of a MAIL FROM / RCPT TO line.
fn angle_address(line: &str) -> String {
    match (line.find('<'), line.rfind('>')) {
        (Some(start), Some(end)) if start < end => line[start + 1..end].to_string(),
        _ => line.split_once(':').map(|(_, a)| a.trim().to_string()).unwrap_or_default(),
    }
}

/// One line without its CRLF; `None` at end of stream.
async fn read_line(reader: &mut BufReader<Box<dyn Io>>) -> std::io::Result<Option<String>> {
    let mut line = Vec::new();
    if reader.read_until(b'\n', &mut line).await? == 0 {
        return Ok(None);
    }
    while line.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        line.pop();
    }
    Ok(Some(String::from_utf8_lossy(&line).into_owned()))
}

async fn write(reader: &mut BufReader<Box<dyn Io>>, reply: &str) -> std::io::Result<()> {
    let stream = reader.get_mut();
    stream.write_all(reply.as_bytes()).await?;
    stream.write_all(b"\r\n").await?;
    stream.flush().await
}
