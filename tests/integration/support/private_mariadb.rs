//! A MariaDB server of the test's own (never the shared one on 3306): a fresh datadir made with
//! `mariadb-install-db`, `mariadbd` on a free port of 127.0.0.1, so the test can stop it and start it again
//! on the same port and data. Sized small so that start and stop take about a second.

pub use super::daemon::stable_free_ports;
use super::daemon::{stable_free_port, tail_file, Daemon};
use libtest_mimic::Failed;
use sqlx::mysql::MySqlConnectOptions;
use sqlx::{ConnectOptions, MySqlConnection};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// How long the server may take to accept connections after it is started.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a stopping server may take to exit.
const STOP_GRACE: Duration = Duration::from_secs(30);
/// Small buffers and redo log, no binary log: what makes start, stop and the datadir cheap.
const FOOTPRINT: &[&str] =
    &["--innodb-buffer-pool-size=32M", "--innodb-log-file-size=8M", "--skip-log-bin", "--skip-name-resolve"];

/// Where the MariaDB programs are.
#[derive(Debug, Clone)]
pub struct Binaries {
    install_db: PathBuf,
    server: PathBuf,
}

/// The MariaDB programs, or why they cannot be used. Debian puts `mariadbd` in /usr/sbin, often not on
/// the PATH of an ordinary shell.
pub fn availability() -> Result<Binaries, String> {
    let find = |name: &str| {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .chain(["/usr/sbin".into(), "/usr/bin".into(), "/usr/local/sbin".into(), "/usr/local/bin".into()])
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
            .ok_or_else(|| format!("{name} not found (install mariadb-server)"))
    };
    Ok(Binaries { install_db: find("mariadb-install-db")?, server: find("mariadbd")? })
}

/// Whether the test runs as root: mariadbd then refuses to run unless told to switch to `mysql`.
fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// The server; killed, and its datadir removed, when dropped.
pub struct PrivateMariaDb {
    pub port: u16,
    /// Server options of this test, after the footprint's (so they may override it).
    options: Vec<String>,
    // Declared before `dir`: the server goes before its files.
    server: Option<Daemon>,
    binaries: Binaries,
    dir: tempfile::TempDir,
}

impl PrivateMariaDb {
    /// Makes a datadir and starts the server on it.
    pub async fn start() -> Result<PrivateMariaDb, Failed> {
        PrivateMariaDb::start_with(stable_free_port()?, Vec::new()).await
    }

    /// Makes a datadir and starts the server on it, on `port` with `options` beside the footprint's.
    pub async fn start_with(port: u16, options: Vec<String>) -> Result<PrivateMariaDb, Failed> {
        let binaries = availability()?;
        let dir = tempfile::Builder::new()
            .prefix("xxl-faults-mariadb")
            .tempdir()
            .map_err(|e| Failed::from(e.to_string()))?;
        let mut install = Command::new(&binaries.install_db);
        install.arg("--no-defaults").arg(format!("--datadir={}", dir.path().join("data").display()));
        install.args(["--auth-root-authentication-method=normal", "--skip-test-db"]).args(FOOTPRINT);
        if is_root() {
            // The socket, pid file and datadir are written by the `mysql` user the server switches to.
            let chown = Command::new("chown").args(["-R", "mysql:mysql"]).arg(dir.path()).output();
            let chown = chown.map_err(|e| Failed::from(format!("chown: {e}")))?;
            if !chown.status.success() {
                return Err(format!(
                    "chown -R mysql {}: {}",
                    dir.path().display(),
                    String::from_utf8_lossy(&chown.stderr)
                )
                .into());
            }
            install.arg("--user=mysql");
        }
        let output =
            install.output().map_err(|e| Failed::from(format!("{}: {e}", binaries.install_db.display())))?;
        if !output.status.success() {
            return Err(format!(
                "mariadb-install-db failed ({}):\n{}\n{}",
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            )
            .into());
        }
        let mut db = PrivateMariaDb { port, options, server: None, binaries, dir };
        db.resume().await?;
        Ok(db)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Starts the server (again) on the same port and datadir and waits until it accepts connections.
    pub async fn resume(&mut self) -> Result<(), Failed> {
        let mut command = Command::new(&self.binaries.server);
        command.arg("--no-defaults").arg(format!("--datadir={}", self.path("data").display()));
        command.arg(format!("--port={}", self.port)).arg("--bind-address=127.0.0.1");
        command.arg(format!("--socket={}", self.path("sock").display()));
        command.arg(format!("--pid-file={}", self.path("pid").display()));
        command.args(FOOTPRINT).args(&self.options);
        if is_root() {
            command.arg("--user=mysql");
        }
        let mut server = Daemon::spawn("mariadbd", command, &self.path("server.log"))?;
        let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(status) = server.exited() {
                return Err(format!("mariadbd exited ({status}) while starting:\n{}", server.tail(30)).into());
            }
            if let Ok(Ok(_)) = tokio::time::timeout(Duration::from_secs(1), self.options().connect()).await {
                break;
            }
            if tokio::time::Instant::now() > deadline {
                return Err(format!(
                    "mariadbd did not accept connections within {READY_TIMEOUT:?}:\n{}",
                    server.tail(30)
                )
                .into());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.server = Some(server);
        Ok(())
    }

    /// Stops the server with SIGTERM (a clean shutdown) and waits for it to exit.
    pub async fn stop(&mut self) -> Result<(), Failed> {
        let mut server = self.server.take().ok_or("the private MariaDB is not running")?;
        server.terminate(STOP_GRACE).await.map(drop)
    }

    /// SIGKILL: a crash of the server (or of the machine it runs on, as its clients see it).
    pub fn kill(&mut self) {
        if let Some(mut server) = self.server.take() {
            server.kill();
        }
    }

    fn options(&self) -> MySqlConnectOptions {
        MySqlConnectOptions::new().host("127.0.0.1").port(self.port).username("root")
    }

    /// A connection to `database`.
    pub async fn connect(&self, database: &str) -> Result<MySqlConnection, Failed> {
        let options = self.options().database(database);
        match tokio::time::timeout(Duration::from_secs(10), options.connect()).await {
            Ok(Ok(conn)) => Ok(conn),
            Ok(Err(e)) => Err(format!("connect to the private MariaDB: {e}").into()),
            Err(_) => Err("connect to the private MariaDB: no answer within 10 s".into()),
        }
    }

    /// The `spring.datasource.url` of `database` on this server, in UTC.
    pub fn jdbc_url(&self, database: &str) -> String {
        format!("jdbc:mysql://127.0.0.1:{}/{database}?serverTimezone=UTC", self.port)
    }

    /// The end of the server's log, for a failure report.
    pub fn log_tail(&self, lines: usize) -> String {
        tail_file(&self.path("server.log"), lines)
    }
}
