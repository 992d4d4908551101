//! Scratch databases: a SQLite file in a temp dir, or a fresh MySQL database dropped afterwards.

use libtest_mimic::Failed;
use sqlx::mysql::MySqlConnectOptions;
use sqlx::{ConnectOptions, Connection, MySqlConnection};
use std::str::FromStr;
use std::sync::atomic::{AtomicU32, Ordering};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    MySql,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::MySql => "mysql",
        }
    }
}

/// The server the MySQL tests use, as a `mysql://user[:password]@host:port` URL without a database.
pub fn mysql_url() -> String {
    std::env::var("XXL_TEST_MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306".to_string())
}

/// Whether the MySQL server answers; the reason when it does not.
pub fn mysql_availability() -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let options = MySqlConnectOptions::from_str(&mysql_url()).map_err(|e| e.to_string())?;
        let connect = options.connect();
        match tokio::time::timeout(std::time::Duration::from_secs(5), connect).await {
            Ok(Ok(conn)) => {
                let _ = conn.close().await;
                Ok(())
            }
            Ok(Err(e)) => Err(format!("cannot connect to {}: {e}", mysql_url())),
            Err(_) => Err(format!("no answer from {} within 5 s", mysql_url())),
        }
    })
}

/// A database for one test. MySQL ones are dropped when this is dropped.
pub struct TestDb {
    pub backend: Backend,
    /// The `spring.datasource.url` to give the admin.
    pub url: String,
    /// MySQL: the database name.
    pub name: String,
    _dir: Option<tempfile::TempDir>,
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

impl TestDb {
    /// A database that does not exist yet (MySQL) or an empty file path (SQLite).
    pub fn fresh(backend: Backend) -> Result<TestDb, Failed> {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().map_err(|e| Failed::from(e.to_string()))?;
                let path = dir.path().join("xxl-job.db");
                Ok(TestDb {
                    backend,
                    url: format!("sqlite:{}?serverTimezone=Asia/Shanghai", path.display()),
                    name: String::new(),
                    _dir: Some(dir),
                })
            }
            Backend::MySql => {
                let name = format!("xxl_it_{}_{}_{n}", std::process::id(), rand_suffix());
                let host = mysql_url().replace("mysql://", "");
                Ok(TestDb {
                    backend,
                    url: format!("mysql://{host}/{name}?serverTimezone=Asia/Shanghai"),
                    name,
                    _dir: None,
                })
            }
        }
    }

    /// A connection to the server without selecting the database (MySQL only).
    pub async fn server(&self) -> Result<MySqlConnection, Failed> {
        let options = MySqlConnectOptions::from_str(&mysql_url()).map_err(|e| Failed::from(e.to_string()))?;
        options.connect().await.map_err(|e| Failed::from(format!("connect to MySQL: {e}")))
    }

    /// A connection to this database (MySQL only).
    pub async fn connect(&self) -> Result<MySqlConnection, Failed> {
        let options = MySqlConnectOptions::from_str(&mysql_url())
            .map_err(|e| Failed::from(e.to_string()))?
            .database(&self.name);
        options.connect().await.map_err(|e| Failed::from(format!("connect to {}: {e}", self.name)))
    }

    /// Creates the (empty) database (MySQL only).
    pub async fn create(&self) -> Result<(), Failed> {
        let mut conn = self.server().await?;
        sqlx::query(&format!(
            "CREATE DATABASE `{}` DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
            self.name
        ))
        .execute(&mut conn)
        .await
        .map_err(|e| Failed::from(format!("create database: {e}")))?;
        Ok(())
    }
}

fn rand_suffix() -> u32 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0) % 100_000
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if self.backend != Backend::MySql {
            return;
        }
        let name = self.name.clone();
        // Drop runs inside or outside a runtime; a thread with its own runtime works in both cases.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
            runtime.block_on(async {
                let options = MySqlConnectOptions::from_str(&mysql_url()).ok()?;
                let mut conn = options.connect().await.ok()?;
                sqlx::query(&format!("DROP DATABASE IF EXISTS `{name}`")).execute(&mut conn).await.ok()
            })
        })
        .join();
    }
}
