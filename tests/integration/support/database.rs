//! Scratch databases: a SQLite file in a temp dir, or a fresh MySQL or PostgreSQL database dropped
//! afterwards.

use libtest_mimic::Failed;
use sqlx::mysql::MySqlConnectOptions;
use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, MySqlConnection, PgConnection};
use std::str::FromStr;
use std::sync::atomic::{AtomicU32, Ordering};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    MySql,
    Postgres,
}

/// PostgreSQL's maintenance database, where the scratch databases are created and dropped from.
const PG_MAINTENANCE_DB: &str = "postgres";

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::MySql => "mysql",
            Backend::Postgres => "postgres",
        }
    }

    /// The database server this backend's tests use, as a `scheme://user[:password]@host:port` URL
    /// without a database (`XXL_TEST_MYSQL_URL`, `XXL_TEST_POSTGRES_URL`); `None` for SQLite.
    pub fn server_url(self) -> Option<String> {
        let (variable, default) = match self {
            Backend::Sqlite => return None,
            Backend::MySql => ("XXL_TEST_MYSQL_URL", "mysql://root@127.0.0.1:3306"),
            Backend::Postgres => ("XXL_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432"),
        };
        Some(std::env::var(variable).unwrap_or_else(|_| default.to_string()))
    }

    /// Whether the database server answers; the reason when it does not.
    pub fn availability(self) -> Result<(), String> {
        let Some(url) = self.server_url() else { return Ok(()) };
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
        runtime.block_on(async {
            let attempt = async {
                match self {
                    Backend::Postgres => Server::postgres(&url)?.connect().await.map(drop),
                    _ => Server::mysql(&url)?.connect().await.map(drop),
                }
            };
            match tokio::time::timeout(std::time::Duration::from_secs(5), attempt).await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(format!("cannot connect to {url}: {e}")),
                Err(_) => Err(format!("no answer from {url} within 5 s")),
            }
        })
    }
}

/// Connection options for one database (or the server's default one) of a server backend.
enum Server {
    MySql(MySqlConnectOptions),
    Postgres(PgConnectOptions),
}

/// An open connection of either server backend.
pub enum ServerConnection {
    MySql(MySqlConnection),
    Postgres(PgConnection),
}

impl Server {
    fn mysql(url: &str) -> Result<Server, sqlx::Error> {
        Ok(Server::MySql(MySqlConnectOptions::from_str(url)?))
    }

    fn postgres(url: &str) -> Result<Server, sqlx::Error> {
        Ok(Server::Postgres(PgConnectOptions::from_str(url)?.database(PG_MAINTENANCE_DB)))
    }

    fn of(backend: Backend) -> Result<Server, Failed> {
        let url = backend.server_url().ok_or_else(|| Failed::from("SQLite has no server"))?;
        let server = if backend == Backend::Postgres { Server::postgres(&url) } else { Server::mysql(&url) };
        server.map_err(|e| Failed::from(e.to_string()))
    }

    fn database(self, name: &str) -> Server {
        match self {
            Server::MySql(o) => Server::MySql(o.database(name)),
            Server::Postgres(o) => Server::Postgres(o.database(name)),
        }
    }

    async fn connect(&self) -> Result<ServerConnection, sqlx::Error> {
        Ok(match self {
            Server::MySql(o) => ServerConnection::MySql(o.connect().await?),
            Server::Postgres(o) => ServerConnection::Postgres(o.connect().await?),
        })
    }
}

impl ServerConnection {
    /// Runs one statement without arguments.
    pub async fn execute(&mut self, sql: &str) -> Result<(), Failed> {
        let done = match self {
            ServerConnection::MySql(c) => sqlx::query(sql).execute(c).await.map(drop),
            ServerConnection::Postgres(c) => sqlx::query(sql).execute(c).await.map(drop),
        };
        done.map_err(|e| Failed::from(format!("{sql}: {e}")))
    }
}

/// A database for one test. Server databases are dropped when this is dropped.
pub struct TestDb {
    pub backend: Backend,
    /// The `spring.datasource.url` to give the admin.
    pub url: String,
    /// MySQL, PostgreSQL: the database name.
    pub name: String,
    _dir: Option<tempfile::TempDir>,
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

impl TestDb {
    /// The data layer on this database, without an admin running on it: no monitor touches the rows a
    /// test writes. The schema is made as the admin makes it.
    pub async fn open(&self) -> Result<xxl_job_admin::storage::Db, Failed> {
        // A test's own reads and writes need few connections; three tests at once share PostgreSQL's 100.
        let args = vec![
            format!("--spring.datasource.url={}", self.url),
            "--spring.datasource.hikari.maximum-pool-size=5".to_string(),
            "--spring.datasource.hikari.minimum-idle=1".to_string(),
        ];
        let cwd = tempfile::tempdir().map_err(|e| Failed::from(format!("temp dir: {e}")))?;
        let loaded = xxl_job_admin::config::Config::load(&args, Vec::<(String, String)>::new(), cwd.path())
            .map_err(|e| Failed::from(format!("config: {e}")))?;
        let (db, _) = xxl_job_admin::storage::connect(&loaded.config.datasource)
            .await
            .map_err(|e| Failed::from(format!("connect: {e}")))?;
        Ok(db)
    }

    /// A database that does not exist yet (MySQL, PostgreSQL) or an empty file path (SQLite).
    pub fn fresh(backend: Backend) -> Result<TestDb, Failed> {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let Some(server) = backend.server_url() else {
            let dir = tempfile::tempdir().map_err(|e| Failed::from(e.to_string()))?;
            let path = dir.path().join("xxl-job.db");
            return Ok(TestDb {
                backend,
                url: format!("sqlite:{}?serverTimezone=Asia/Shanghai", path.display()),
                name: String::new(),
                _dir: Some(dir),
            });
        };
        let name = format!("xxl_it_{}_{}_{n}", std::process::id(), rand_suffix());
        Ok(TestDb { backend, url: format!("{server}/{name}?serverTimezone=Asia/Shanghai"), name, _dir: None })
    }

    /// A connection to the server's default database (MySQL: none selected).
    pub async fn server(&self) -> Result<ServerConnection, Failed> {
        let server = Server::of(self.backend)?;
        server
            .connect()
            .await
            .map_err(|e| Failed::from(format!("connect to the {} server: {e}", self.backend.name())))
    }

    /// A connection to this database.
    pub async fn connect(&self) -> Result<ServerConnection, Failed> {
        let server = Server::of(self.backend)?.database(&self.name);
        server.connect().await.map_err(|e| Failed::from(format!("connect to {}: {e}", self.name)))
    }

    /// MySQL: a connection to this database, for tests that read MySQL's own catalogue.
    pub async fn mysql(&self) -> Result<MySqlConnection, Failed> {
        match self.connect().await? {
            ServerConnection::MySql(conn) => Ok(conn),
            ServerConnection::Postgres(_) => Err("not a MySQL database".into()),
        }
    }

    /// PostgreSQL: a connection to this database, for tests that read PostgreSQL's own catalogue.
    pub async fn postgres(&self) -> Result<PgConnection, Failed> {
        match self.connect().await? {
            ServerConnection::Postgres(conn) => Ok(conn),
            ServerConnection::MySql(_) => Err("not a PostgreSQL database".into()),
        }
    }

    /// Creates the (empty) database, in the character set the admin would create it with.
    pub async fn create(&self) -> Result<(), Failed> {
        let sql = match self.backend {
            Backend::Postgres => {
                format!("CREATE DATABASE \"{}\" ENCODING 'UTF8' TEMPLATE template0", self.name)
            }
            _ => format!(
                "CREATE DATABASE `{}` DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
                self.name
            ),
        };
        self.server().await?.execute(&sql).await
    }
}

fn rand_suffix() -> u32 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0) % 100_000
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let sql = match self.backend {
            Backend::Sqlite => return,
            // FORCE: an admin's pool may still be closing its connections.
            Backend::Postgres => format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name),
            Backend::MySql => format!("DROP DATABASE IF EXISTS `{}`", self.name),
        };
        let backend = self.backend;
        // Drop runs inside or outside a runtime; a thread with its own runtime works in both cases.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
            runtime.block_on(async {
                let mut conn = Server::of(backend).ok()?.connect().await.ok()?;
                conn.execute(&sql).await.ok()
            })
        })
        .join();
    }
}
