//! PostgreSQL servers of the test's own (never the shared one on 5432): a primary made with `initdb`, and
//! streaming standbys of it made with `pg_basebackup -R`, on loopback ports below the ephemeral range.
//! Run as the `postgres` user when the test runs as root, which PostgreSQL refuses to run as.

use super::daemon::{stable_free_port, tail_file};
use libtest_mimic::Failed;
use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, PgConnection};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The programs this needs, from the newest PostgreSQL installed.
const PROGRAMS: &[&str] = &["initdb", "pg_ctl", "pg_basebackup", "postgres"];

/// The directory holding the PostgreSQL programs, or why there is none. Debian keeps them under
/// /usr/lib/postgresql/VERSION/bin, off the PATH.
pub fn availability() -> Result<PathBuf, String> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|e| format!("/usr/lib/postgresql: {e} (install postgresql)"))?
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let version = path.file_name()?.to_str()?.parse().ok()?;
            Some((version, path.join("bin")))
        })
        .collect();
    versions.sort();
    let (_, bin) = versions.pop().ok_or("no PostgreSQL under /usr/lib/postgresql (install postgresql)")?;
    match PROGRAMS.iter().find(|program| !bin.join(program).is_file()) {
        Some(missing) => Err(format!("{missing} not found in {}", bin.display())),
        None => Ok(bin),
    }
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// A running server; stopped (immediate mode), and its files removed, when dropped.
pub struct PrivatePostgres {
    pub port: u16,
    bin: PathBuf,
    dir: tempfile::TempDir,
}

impl PrivatePostgres {
    /// A new cluster, started.
    pub async fn primary() -> Result<PrivatePostgres, Failed> {
        let server = PrivatePostgres::prepare()?;
        let data = server.data();
        server.run("initdb", &["-D", &data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])?;
        server.start().await?;
        Ok(server)
    }

    /// A streaming standby of `primary`, started: a base backup with its recovery settings written (`-R`).
    pub async fn standby_of(primary: &PrivatePostgres) -> Result<PrivatePostgres, Failed> {
        let server = PrivatePostgres::prepare()?;
        let (data, port) = (server.data(), primary.port.to_string());
        server.run(
            "pg_basebackup",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-D",
                &data,
                "-R",
                "-X",
                "stream",
                "--no-sync",
            ],
        )?;
        server.start().await?;
        Ok(server)
    }

    fn prepare() -> Result<PrivatePostgres, Failed> {
        let bin = availability()?;
        let dir = tempfile::Builder::new()
            .prefix("xxl-ha-postgres")
            .tempdir()
            .map_err(|e| Failed::from(e.to_string()))?;
        if is_root() {
            let chown = Command::new("chown").args(["-R", "postgres:postgres"]).arg(dir.path()).status();
            if !chown.is_ok_and(|s| s.success()) {
                return Err(format!("chown -R postgres {}", dir.path().display()).into());
            }
        }
        Ok(PrivatePostgres { port: stable_free_port()?, bin, dir })
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    /// Runs one of the PostgreSQL programs to its end.
    fn run(&self, program: &str, args: &[&str]) -> Result<(), Failed> {
        run_program(&self.bin, self.dir.path(), program, args)
    }

    /// Starts the server on its port, small and without fsync, and waits until it accepts connections.
    async fn start(&self) -> Result<(), Failed> {
        let (settings, log) = self.start_settings();
        self.run("pg_ctl", &["-D", &self.data(), "-l", &log, "-w", "-t", "60", "-o", &settings, "start"])
    }

    /// The server's options for `pg_ctl -o`, and its log file.
    fn start_settings(&self) -> (String, String) {
        let settings = format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} -c shared_buffers=16MB -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        (settings, self.dir.path().join("server.log").display().to_string())
    }

    /// Stops the server (fast mode: its clients are disconnected, the shutdown is clean) and waits for its
    /// exit, off the runtime's threads.
    pub async fn stop(&self) -> Result<(), Failed> {
        let data = self.data();
        self.run_aside(
            "pg_ctl",
            vec!["-D".into(), data, "-m".into(), "fast".into(), "-w".into(), "stop".into()],
        )
        .await
    }

    /// Starts it again on the same port and data after [`PrivatePostgres::stop`], waiting until it accepts
    /// connections.
    pub async fn resume(&self) -> Result<(), Failed> {
        let (settings, log) = self.start_settings();
        let args = ["-D", &self.data(), "-l", &log, "-w", "-t", "60", "-o", &settings, "start"];
        self.run_aside("pg_ctl", args.iter().map(|a| a.to_string()).collect()).await
    }

    /// [`PrivatePostgres::run`] on a blocking thread, so the runtime's threads go on meanwhile.
    async fn run_aside(&self, program: &'static str, args: Vec<String>) -> Result<(), Failed> {
        let (bin, dir) = (self.bin.clone(), self.dir.path().to_path_buf());
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run_program(&bin, &dir, program, &args)
        })
        .await
        .map_err(|e| Failed::from(format!("{program}: {e}")))?
    }

    /// A connection to `database` as `postgres`.
    pub async fn connect(&self, database: &str) -> Result<PgConnection, Failed> {
        let options = PgConnectOptions::new_without_pgpass()
            .host("127.0.0.1")
            .port(self.port)
            .username("postgres")
            .database(database);
        match tokio::time::timeout(Duration::from_secs(10), options.connect()).await {
            Ok(Ok(conn)) => Ok(conn),
            Ok(Err(e)) => Err(format!("connect to the private PostgreSQL on {}: {e}", self.port).into()),
            Err(_) => {
                Err(format!("connect to the private PostgreSQL on {}: no answer within 10 s", self.port)
                    .into())
            }
        }
    }

    pub fn log_tail(&self, lines: usize) -> String {
        tail_file(&self.dir.path().join("server.log"), lines)
    }
}

/// Runs one of the PostgreSQL programs of `bin` in `dir` to its end (as `postgres` when the test runs as root).
fn run_program(bin: &Path, dir: &Path, program: &str, args: &[&str]) -> Result<(), Failed> {
    let path = bin.join(program);
    let mut command = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(&path);
        c
    } else {
        Command::new(&path)
    };
    let output =
        command.args(args).current_dir(dir).output().map_err(|e| Failed::from(format!("{program}: {e}")))?;
    if !output.status.success() {
        return Err(format!(
            "{program} {args:?} failed ({}):\n{}\n{}\nserver log:\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
            tail_file(&dir.join("server.log"), 20)
        )
        .into());
    }
    Ok(())
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let _ = self.run("pg_ctl", &["-D", &self.data(), "-m", "immediate", "-w", "stop"]);
    }
}
