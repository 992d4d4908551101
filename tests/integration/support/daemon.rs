//! Child processes the fault suite starts, stops and kills itself (a private MariaDB, admins), their
//! output kept in a log file for diagnosis. Signals go through `kill(1)`: the suite needs SIGTERM, which
//! std cannot send, and a libc binding is not worth a dependency for one call.

use libtest_mimic::Failed;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

/// How often an exit is polled for.
const EXIT_POLL: Duration = Duration::from_millis(20);

/// A running child process; SIGKILLed when dropped.
pub struct Daemon {
    name: String,
    child: Child,
    log: PathBuf,
}

impl Daemon {
    /// Starts `command` with stdout and stderr appended to `log`.
    pub fn spawn(name: &str, mut command: Command, log: &Path) -> Result<Daemon, Failed> {
        let out = OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| Failed::from(format!("{}: {e}", log.display())))?;
        let err = out.try_clone().map_err(|e| Failed::from(e.to_string()))?;
        let child = command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| Failed::from(format!("start {name} ({:?}): {e}", command.get_program())))?;
        Ok(Daemon { name: name.to_string(), child, log: log.to_path_buf() })
    }

    /// The exit status, once the process has ended.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Sends SIGTERM and waits up to `grace` for the exit; after that it is SIGKILLed and that is an error.
    pub async fn terminate(&mut self, grace: Duration) -> Result<ExitStatus, Failed> {
        self.send_term()?;
        self.wait_exit(grace).await
    }

    /// Sends SIGTERM without waiting.
    pub fn send_term(&mut self) -> Result<(), Failed> {
        self.signal("TERM")
    }

    /// Sends `signal` (`TERM`, `STOP`, `CONT`, …) to the running process.
    pub fn signal(&mut self, signal: &str) -> Result<(), Failed> {
        if let Some(status) = self.exited() {
            return Err(
                format!("{} had already exited ({status}); log tail:\n{}", self.name, self.tail(30)).into()
            );
        }
        let sent = Command::new("kill").args([&format!("-{signal}"), &self.child.id().to_string()]).status();
        if !sent.as_ref().is_ok_and(|s| s.success()) {
            return Err(format!("kill -{signal} {} ({}) failed: {sent:?}", self.child.id(), self.name).into());
        }
        Ok(())
    }

    /// Waits up to `grace` for the exit; after that the process is SIGKILLed and that is an error.
    pub async fn wait_exit(&mut self, grace: Duration) -> Result<ExitStatus, Failed> {
        let deadline = tokio::time::Instant::now() + grace;
        loop {
            if let Some(status) = self.exited() {
                return Ok(status);
            }
            if tokio::time::Instant::now() > deadline {
                self.kill();
                return Err(format!(
                    "{} did not exit within {grace:?} of SIGTERM; log tail:\n{}",
                    self.name,
                    self.tail(30)
                )
                .into());
            }
            tokio::time::sleep(EXIT_POLL).await;
        }
    }

    /// SIGKILL, and reaps the process.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Bytes written to the log so far: a mark to read from later.
    pub fn log_len(&self) -> u64 {
        std::fs::metadata(&self.log).map(|m| m.len()).unwrap_or(0)
    }

    /// The log from byte `offset` on.
    pub fn log_since(&self, offset: u64) -> String {
        let mut text = Vec::new();
        if let Ok(mut file) = File::open(&self.log) {
            if file.seek(SeekFrom::Start(offset)).is_ok() {
                let _ = file.read_to_end(&mut text);
            }
        }
        String::from_utf8_lossy(&text).into_owned()
    }

    /// The last `lines` lines of the log.
    pub fn tail(&self, lines: usize) -> String {
        tail_file(&self.log, lines)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The last `lines` lines of a text file (empty when it cannot be read).
pub fn tail_file(path: &Path, lines: usize) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// A TCP port on 127.0.0.1 below the kernel's ephemeral range that was free a moment ago: a server
/// restarted on it cannot find it taken by an outgoing connection made while it was down.
pub fn stable_free_port() -> Result<u16, Failed> {
    Ok(stable_free_ports(1)?[0])
}

/// `count` distinct such ports.
pub fn stable_free_ports(count: usize) -> Result<Vec<u16>, Failed> {
    let mut ports = Vec::with_capacity(count);
    for _ in 0..100 * count {
        let port = rand::random_range(20_000..32_000);
        if !ports.contains(&port) && std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            ports.push(port);
            if ports.len() == count {
                return Ok(ports);
            }
        }
    }
    Err(format!("no {count} free ports found between 20000 and 32000").into())
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> Result<u16, Failed> {
    let listener =
        std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| Failed::from(format!("free port: {e}")))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| Failed::from(e.to_string()))
}
