//! The admin as a real child process (the `xxl-job-admin` binary), so a test can SIGTERM or SIGKILL it as
//! an operator or a crash would; its output goes to a log file whose tail a failure report shows.

use super::daemon::{free_port, Daemon};
use libtest_mimic::Failed;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Start-up includes creating the schema on an empty database, in a debug build.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// A graceful stop sends the fires already planned (up to 5 s ahead) and waits for running triggers.
const STOP_GRACE: Duration = Duration::from_secs(30);

pub struct AdminProcess {
    pub name: String,
    /// `http://127.0.0.1:port/xxl-job-admin`
    pub base: String,
    daemon: Daemon,
}

impl AdminProcess {
    /// Starts an admin on a free port against `jdbc_url` (user root, no password), logging into `log_dir`.
    /// It does not wait: see [`AdminProcess::wait_ready`], so that several can start at once.
    pub fn spawn(name: &str, jdbc_url: &str, token: &str, log_dir: &Path) -> Result<AdminProcess, Failed> {
        AdminProcess::spawn_with(name, jdbc_url, token, log_dir, &[])
    }

    /// [`AdminProcess::spawn`] with more `--key=value` arguments.
    pub fn spawn_with(
        name: &str,
        jdbc_url: &str,
        token: &str,
        log_dir: &Path,
        extra: &[&str],
    ) -> Result<AdminProcess, Failed> {
        AdminProcess::spawn_in(name, jdbc_url, token, log_dir, extra, &[])
    }

    /// [`AdminProcess::spawn_with`] with these environment variables too (libfaketime's, say).
    pub fn spawn_in(
        name: &str,
        jdbc_url: &str,
        token: &str,
        log_dir: &Path,
        extra: &[&str],
        env: &[(&str, String)],
    ) -> Result<AdminProcess, Failed> {
        let port = free_port()?;
        let mut command = Command::new(env!("CARGO_BIN_EXE_xxl-job-admin"));
        command.args([
            format!("--server.port={port}"),
            "--server.address=127.0.0.1".to_string(),
            format!("--spring.datasource.url={jdbc_url}"),
            "--spring.datasource.username=root".to_string(),
            format!("--xxl.job.accessToken={token}"),
            "--xxl.job.i18n=en".to_string(),
        ]);
        command.args(extra);
        // Only what the admin reads from the environment on purpose: no stray SPRING_*/XXL_* keys or
        // RUST_LOG of the test's shell, and no application.properties of the test's directory.
        command.env_clear().current_dir(log_dir);
        for key in ["PATH", "TZ", "LANG"] {
            if let Some(value) = std::env::var_os(key) {
                command.env(key, value);
            }
        }
        command.envs(env.iter().map(|(key, value)| (key, value)));
        let daemon = Daemon::spawn(name, command, &log_dir.join(format!("{name}.log")))?;
        Ok(AdminProcess {
            name: name.to_string(),
            base: format!("http://127.0.0.1:{port}/xxl-job-admin"),
            daemon,
        })
    }

    pub fn health_url(&self) -> String {
        format!("{}/actuator/health", self.base)
    }

    /// Waits until the health endpoint answers 200.
    pub async fn wait_ready(&mut self) -> Result<(), Failed> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(2))
            .build()
            .map_err(|e| Failed::from(e.to_string()))?;
        let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(status) = self.daemon.exited() {
                return Err(format!(
                    "{} exited ({status}) while starting:\n{}",
                    self.name,
                    self.daemon.tail(40)
                )
                .into());
            }
            if http.get(self.health_url()).send().await.is_ok_and(|r| r.status().is_success()) {
                return Ok(());
            }
            if tokio::time::Instant::now() > deadline {
                return Err(format!(
                    "{} not ready within {READY_TIMEOUT:?}:\n{}",
                    self.name,
                    self.daemon.tail(40)
                )
                .into());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// SIGTERM, without waiting for the graceful exit.
    pub fn send_term(&mut self) -> Result<(), Failed> {
        self.daemon.send_term()
    }

    /// Waits for the exit after [`AdminProcess::send_term`].
    pub async fn wait_exit(&mut self) -> Result<(), Failed> {
        self.daemon.wait_exit(STOP_GRACE).await.map(drop)
    }

    /// SIGKILL: a crash.
    pub fn kill(&mut self) {
        self.daemon.kill();
    }

    /// SIGSTOP: the process stalls (a frozen VM, a long pause), its connections open.
    pub fn freeze(&mut self) -> Result<(), Failed> {
        self.daemon.signal("STOP")
    }

    /// SIGCONT after [`AdminProcess::freeze`].
    pub fn thaw(&mut self) -> Result<(), Failed> {
        self.daemon.signal("CONT")
    }

    /// Whether the process has ended.
    pub fn has_exited(&mut self) -> bool {
        self.daemon.exited().is_some()
    }

    pub fn log_len(&self) -> u64 {
        self.daemon.log_len()
    }

    pub fn log_since(&self, offset: u64) -> String {
        self.daemon.log_since(offset)
    }

    pub fn tail(&self, lines: usize) -> String {
        self.daemon.tail(lines)
    }
}
