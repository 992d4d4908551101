//! Test support: databases, the admin under test, and executors that speak the 2.4.2 wire protocol.

mod admin_process;
pub mod browser;
pub mod checker;
pub mod console;
mod daemon;
mod database;
mod executor;
pub mod fixtures;
pub mod galera;
pub mod nemesis;
pub mod nginx;
pub mod private_mariadb;
pub mod private_postgres;
pub mod proxy;
pub mod recorder;
pub mod rest;
pub mod scripted_executor;
pub mod slapd;
pub mod smtp;
pub mod test_log;
pub mod webhook;

pub use admin_process::AdminProcess;
pub use database::{Backend, ServerConnection, TestDb};
pub use executor::{Behaviour, FakeExecutor, JavaExecutorClient, LOG_CONTENT};

use libtest_mimic::Failed;
use std::time::Duration;
use xxl_job_admin::app::RunningApp;
use xxl_job_admin::config::Config;

pub const TOKEN: &str = "test-token-42";

pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// An error with its causes, which reqwest keeps out of its own message.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// Turns any error into a test failure with context.
pub trait Context<T> {
    fn context(self, what: &str) -> Result<T, Failed>;
}

impl<T, E: std::fmt::Display> Context<T> for Result<T, E> {
    fn context(self, what: &str) -> Result<T, Failed> {
        self.map_err(|e| Failed::from(format!("{what}: {e}")))
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, what: &str) -> Result<T, Failed> {
        self.ok_or_else(|| Failed::from(format!("{what}: missing")))
    }
}

/// An admin started in-process on a random port with the given extra `--key=value` arguments.
pub struct TestApp {
    pub app: RunningApp,
    pub base: String,
    pub http: reqwest::Client,
}

impl TestApp {
    pub async fn start(db: &TestDb, extra: &[&str]) -> Result<TestApp, Failed> {
        let mut args = vec![
            "--server.port=0".to_string(),
            "--server.address=127.0.0.1".to_string(),
            format!("--spring.datasource.url={}", db.url),
            format!("--xxl.job.accessToken={TOKEN}"),
            "--xxl.job.i18n=en".to_string(),
            // Three tests at once, some with several admins, stay within PostgreSQL's 100 connections.
            "--spring.datasource.hikari.maximum-pool-size=10".to_string(),
            "--spring.datasource.hikari.minimum-idle=2".to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let cwd = tempfile::tempdir().context("temp dir")?;
        let loaded = Config::load(&args, Vec::<(String, String)>::new(), cwd.path()).context("config")?;
        let app = xxl_job_admin::app::start(loaded.config).await.context("start admin")?;
        let base = format!("http://{}/xxl-job-admin", app.addr);
        let http = reqwest::Client::builder().timeout(Duration::from_secs(20)).build().context("client")?;
        Ok(TestApp { app, base, http })
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn executor_client(&self) -> JavaExecutorClient {
        JavaExecutorClient::new(&self.base, Some(TOKEN))
    }

    pub async fn stop(self) {
        self.app.stop().await;
    }
}

/// Polls `check` every 100 ms until it yields `Some`, or fails after `timeout`.
pub async fn eventually<T, F, Fut>(timeout: Duration, what: &str, mut check: F) -> Result<T, Failed>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(value) = check().await {
            return Ok(value);
        }
        if tokio::time::Instant::now() > deadline {
            return Err(Failed::from(format!("timed out after {timeout:?} waiting for {what}")));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
