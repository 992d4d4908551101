//! Where audit lines go besides the log: the JSON-lines file and the webhook. Neither makes a request
//! wait: the file is written by a thread of its own, the webhook posted by a task of its own, each fed
//! through a bounded queue. A line that does not fit a full queue is dropped from that sink, counted and
//! logged; the log under the target `audit` still has it.

use crate::config::AuditConfig;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc as std_mpsc;
use std::time::Duration;
use tokio::sync::mpsc;

/// Lines waiting for the disk: a burst of several thousand changes before one is dropped.
const FILE_QUEUE: usize = 4096;
/// Lines waiting for the webhook; a slow endpoint falls behind by at most this many.
const WEBHOOK_QUEUE: usize = 1024;
/// Each POST may take this long before it counts as failed.
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    #[error("xxl.job.audit.file {}: {source}", .path.display())]
    File { path: std::path::PathBuf, source: std::io::Error },
    #[error("xxl.job.audit.webhook.url: cannot set up the HTTP client: {0}")]
    Client(String),
}

pub(super) struct Sinks {
    file: Option<Queue<std_mpsc::SyncSender<String>>>,
    webhook: Option<Queue<mpsc::Sender<String>>>,
}

/// A sink's queue and how many lines it dropped.
struct Queue<S> {
    sender: S,
    dropped: AtomicU64,
    name: &'static str,
}

impl<S> Queue<S> {
    fn dropped_one(&self) {
        let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
        // The first and then every hundredth: a stuck sink must not flood the log it is a copy of.
        if dropped == 1 || dropped % 100 == 0 {
            tracing::error!("audit {}: queue full or closed, {dropped} event(s) dropped so far (the log under target `audit` has them)", self.name);
        }
    }
}

impl Sinks {
    pub(super) fn start(config: &AuditConfig) -> Result<Sinks, SinkError> {
        let file = match &config.file {
            None => None,
            Some(path) => Some(Queue { sender: start_file(path)?, dropped: AtomicU64::new(0), name: "file" }),
        };
        let webhook = match &config.webhook {
            None => None,
            Some(url) => Some(Queue {
                sender: start_webhook(url.expose().to_string())?,
                dropped: AtomicU64::new(0),
                name: "webhook",
            }),
        };
        Ok(Sinks { file, webhook })
    }

    pub(super) fn send(&self, line: String) {
        if let Some(file) = &self.file {
            if file.sender.try_send(line.clone()).is_err() {
                file.dropped_one();
            }
        }
        if let Some(webhook) = &self.webhook {
            if webhook.sender.try_send(line).is_err() {
                webhook.dropped_one();
            }
        }
    }
}

/// Opens (creating) the file for appending, at start so a wrong path stops the admin instead of losing
/// events, and starts the thread that writes each line as it comes, so `tail -f` shows it at once.
fn start_file(path: &Path) -> Result<std_mpsc::SyncSender<String>, SinkError> {
    let failed = |source| SinkError::File { path: path.to_path_buf(), source };
    let file = OpenOptions::new().create(true).append(true).open(path).map_err(failed)?;
    let (sender, receiver) = std_mpsc::sync_channel::<String>(FILE_QUEUE);
    let shown = path.display().to_string();
    std::thread::Builder::new()
        .name("audit-file".into())
        .spawn(move || write_lines(file, receiver, &shown))
        .map_err(failed)?;
    Ok(sender)
}

/// Until every sender is gone (the admin stopped).
fn write_lines(mut file: File, receiver: std_mpsc::Receiver<String>, path: &str) {
    while let Ok(mut line) = receiver.recv() {
        line.push('\n');
        // One write per line in append mode: lines of several admins sharing a file do not interleave.
        if let Err(e) = file.write_all(line.as_bytes()).and_then(|()| file.flush()) {
            tracing::error!(
                "audit file {path}: cannot write an event: {e} (the log under target `audit` has it)"
            );
        }
    }
}

fn start_webhook(url: String) -> Result<mpsc::Sender<String>, SinkError> {
    let http = reqwest::Client::builder()
        .timeout(WEBHOOK_TIMEOUT)
        // A redirect could take the events elsewhere.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| SinkError::Client(e.to_string()))?;
    let (sender, mut receiver) = mpsc::channel::<String>(WEBHOOK_QUEUE);
    tokio::spawn(async move {
        while let Some(line) = receiver.recv().await {
            let sent = http
                .post(&url)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(line)
                .send()
                .await;
            // Named without the URL, which may carry a token.
            match sent {
                Ok(reply) if reply.status().is_success() => {}
                Ok(reply) => {
                    tracing::warn!("audit webhook answered HTTP {}; the event is not resent", reply.status())
                }
                Err(e) => tracing::warn!(
                    "audit webhook not reached ({}); the event is not resent",
                    crate::executor::describe(&e)
                ),
            }
        }
    });
    Ok(sender)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_drops_and_counts_instead_of_waiting() {
        let (sender, _receiver) = mpsc::channel::<String>(1);
        let sinks = Sinks {
            file: None,
            webhook: Some(Queue { sender, dropped: AtomicU64::new(0), name: "webhook" }),
        };
        for n in 0..3 {
            sinks.send(format!("{{\"n\":{n}}}"));
        }
        assert_eq!(sinks.webhook.as_ref().map(|q| q.dropped.load(Ordering::Relaxed)), Some(2));
    }

    #[test]
    fn the_file_gets_one_line_per_event_appended() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        std::fs::write(&path, "{\"old\":true}\n").unwrap();
        let config = AuditConfig { file: Some(path.clone()), webhook: None };
        let sinks = Sinks::start(&config).unwrap();
        sinks.send("{\"a\":1}".into());
        sinks.send("{\"b\":2}".into());
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let text = loop {
            let text = std::fs::read_to_string(&path).unwrap();
            if text.lines().count() == 3 || std::time::Instant::now() > deadline {
                break text;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(text, "{\"old\":true}\n{\"a\":1}\n{\"b\":2}\n");
        let missing =
            AuditConfig { file: Some(dir.path().join("no/such/folder/audit.jsonl")), webhook: None };
        assert!(matches!(Sinks::start(&missing), Err(SinkError::File { .. })));
    }
}
