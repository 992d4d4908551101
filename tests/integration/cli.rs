//! The `xxl-job-admin` binary as a person runs it: what it prints at start, `--help`, the `cron` tool,
//! the commands that only read a database (which must never make one), and copies of an SQLite database.

use crate::support::console::{job_form, ConsoleClient};
use crate::support::{AdminProcess, Backend, Context, TestApp, TestDb, TOKEN};
use crate::{cases, ensure, ensure_eq, Case, TestResult, ALL};
use libtest_mimic::Failed;
use sqlx::ConnectOptions;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub fn cases() -> Vec<Case> {
    // The commands need no database; the start-up case uses an SQLite file.
    const ONCE: &[Backend] = &[Backend::Sqlite];
    cases! {
        "cli" {
            ONCE => start_up_prints_console_url_and_default_login,
            ONCE => start_up_under_ldap_advertises_no_local_login,
            ONCE => help_fits_80_columns_and_lists_every_command,
            ONCE => cron_without_fire_time_says_so_and_exits_1,
            ALL => read_only_commands_refuse_without_a_database_and_create_none,
            ONCE => sqlite_copies_hold_the_last_edits_online_and_after_a_stop,
        }
    }
}

const BINARY: &str = env!("CARGO_BIN_EXE_xxl-job-admin");

fn run(args: &[&str]) -> Result<Output, Failed> {
    Command::new(BINARY)
        .args(args)
        .env_remove("COLUMNS")
        .env_remove("RUST_LOG")
        .output()
        .context("run xxl-job-admin")
}

/// The admin started as a process on `db`; it is killed when dropped.
struct Admin(Child);

impl Drop for Admin {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the binary on `db` and collects its output lines until `done` holds for them (or 30 s pass).
/// `extra` are more arguments of the command line.
fn start_and_read(
    db: &TestDb,
    extra: &[&str],
    done: impl Fn(&[String]) -> bool,
) -> Result<(Admin, Vec<String>), Failed> {
    let dir = tempfile::tempdir().context("temp dir")?;
    let mut child = Command::new(BINARY)
        .args(["--server.port=0", "--server.address=0.0.0.0", &format!("--spring.datasource.url={}", db.url)])
        .args(extra)
        .current_dir(dir.path())
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("start xxl-job-admin")?;
    let (lines_tx, lines) = mpsc::channel();
    for stream in [
        child.stdout.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        child.stderr.take().map(|s| Box::new(s) as _),
    ]
    .into_iter()
    .flatten()
    {
        let tx = lines_tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
    }
    let admin = Admin(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    while !done(&seen) {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => seen.push(line),
            Err(_) => {
                return Err(format!("start-up output incomplete after 30 s:\n{}", seen.join("\n")).into())
            }
        }
    }
    Ok((admin, seen))
}

/// The console URL a person can click, and while `admin` has the default password the login to use with
/// a warning; none once it is changed. The bare host redirects to the console.
async fn start_up_prints_console_url_and_default_login(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let url_line = |lines: &[String]| lines.iter().find(|l| l.contains("console: http://")).cloned();
    let (admin, lines) = start_and_read(&db, &[], |lines| {
        url_line(lines).is_some() && lines.iter().any(|l| l.contains("default password"))
    })?;
    let line = url_line(&lines).unwrap_or_default();
    let url = line.split("console: ").nth(1).unwrap_or_default().trim().to_string();
    let port = url
        .strip_prefix("http://localhost:")
        .and_then(|rest| rest.strip_suffix("/xxl-job-admin/"))
        .and_then(|port| port.parse::<u16>().ok())
        .context(&format!("clickable console URL in {line:?}"))?;
    let warning = lines.iter().find(|l| l.contains("default password")).cloned().unwrap_or_default();
    ensure!(
        warning.contains("WARN") && warning.contains("admin / 123456"),
        "default login and a warning: {warning}"
    );

    // The printed URL works, and the bare host leads to it.
    let http =
        reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().context("client")?;
    let console = http.get(&url).send().await.context("GET console")?;
    ensure_eq!(console.status().as_u16(), 302, "the console asks for a login");
    let root = http.get(format!("http://127.0.0.1:{port}/")).send().await.context("GET /")?;
    ensure!(root.status().is_redirection(), "GET / answers {}", root.status());
    ensure_eq!(root.headers().get("location").and_then(|l| l.to_str().ok()), Some("/xxl-job-admin/"));
    drop(admin);

    // With the password changed, no default login is printed.
    let app = TestApp::start(&db, &[]).await?;
    app.app
        .db
        .update_user(1, Some("0123456789abcdef0123456789abcdef"), xxl_job_admin::storage::Role::Admin, None)
        .await
        .context("change password")?;
    app.stop().await;
    let (admin, lines) =
        start_and_read(&db, &[], |lines| lines.iter().any(|l| l.contains("console: http://localhost:")))?;
    // The check runs right after the URL is printed; give it the moment it takes.
    std::thread::sleep(Duration::from_millis(500));
    drop(admin);
    ensure!(
        !lines.iter().any(|l| l.contains("default password")),
        "no warning after the change:\n{}",
        lines.join("\n")
    );
    Ok(())
}

/// With LDAP owning the logins (no fallback to local accounts) the default password opens nothing: the
/// start-up says to use a directory account and advertises no admin / 123456. No directory is needed for
/// that: the admin asks it only at a login.
async fn start_up_under_ldap_advertises_no_local_login(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let ldap = [
        "--xxl.job.auth.ldap.url=ldap://127.0.0.1:1",
        "--xxl.job.auth.ldap.starttls=false",
        "--xxl.job.auth.ldap.user-search-base=ou=people,dc=example,dc=org",
    ];
    let said = |lines: &[String]| lines.iter().any(|l| l.contains("directory account"));
    let (admin, lines) =
        start_and_read(&db, &ldap, |lines| said(lines) || lines.iter().any(|l| l.contains("123456")))?;
    drop(admin);
    ensure!(said(&lines), "the start-up names the directory:\n{}", lines.join("\n"));
    ensure!(!lines.iter().any(|l| l.contains("123456")), "no local login advertised:\n{}", lines.join("\n"));

    // With the fallback the stored password still works, and it is advertised as before.
    let fallback = [&ldap[..], &["--xxl.job.auth.ldap.fallback-to-local=true"]].concat();
    let (admin, lines) =
        start_and_read(&db, &fallback, |lines| lines.iter().any(|l| l.contains("admin / 123456")))?;
    drop(admin);
    ensure!(!said(&lines), "{}", lines.join("\n"));
    Ok(())
}

async fn help_fits_80_columns_and_lists_every_command(_: Backend) -> TestResult {
    let output = run(&["--help"])?;
    ensure!(output.status.success(), "--help failed: {output:?}");
    let help = String::from_utf8(output.stdout).context("UTF-8 help")?;
    for words in [&["help"][..], &["serve", "--help"], &["--server.port=9", "-h"]] {
        let again = run(words)?;
        ensure_eq!(String::from_utf8_lossy(&again.stdout), help, "{words:?} prints the same help");
    }
    let long: Vec<&str> = help.lines().filter(|l| l.chars().count() > 80).collect();
    ensure!(long.is_empty(), "lines over 80 columns when piped: {long:#?}");
    for command in ["serve", "cron", "help", "version"] {
        ensure!(
            help.lines().any(|l| l.starts_with("  ")
                && l.split_whitespace().next() == Some(command)
                && l.split_whitespace().count() > 2),
            "{command} has its line:\n{help}"
        );
    }
    // The commands the help names are the commands the binary runs.
    let cron_help = run(&["cron", "--help"])?;
    ensure!(
        String::from_utf8_lossy(&cron_help.stdout).starts_with("Usage: xxl-job-admin cron"),
        "{cron_help:?}"
    );
    let version = run(&["version"])?;
    ensure!(String::from_utf8_lossy(&version.stdout).starts_with("xxl-job-admin "), "{version:?}");
    Ok(())
}

async fn cron_without_fire_time_says_so_and_exits_1(_: Backend) -> TestResult {
    let output = run(&["cron", "0 0 0 30 2 ?", "--from", "2026-01-01 00:00:00"])?;
    ensure_eq!(output.status.code(), Some(1));
    ensure_eq!(String::from_utf8_lossy(&output.stdout), "");
    ensure_eq!(
        String::from_utf8_lossy(&output.stderr),
        "xxl-job-admin cron: no fire time after 2026-01-01 00:00:00\n"
    );
    let fires =
        run(&["cron", "0 0 0 29 2 ?", "--from", "2026-01-01 00:00:00", "--count", "1", "--tz", "UTC"])?;
    ensure_eq!(
        (fires.status.code(), String::from_utf8_lossy(&fires.stdout).into_owned()),
        (Some(0), "2028-02-29 00:00:00\n".to_string())
    );
    Ok(())
}

/// The command run in `dir` as a newcomer runs it there: no configuration but `args`, none from this
/// process's environment.
fn run_in(dir: &Path, args: &[&str]) -> Result<Output, Failed> {
    Command::new(BINARY).args(args).current_dir(dir).env_clear().output().context("run xxl-job-admin")
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Result<Vec<String>, Failed> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .context("list the folder")?
        .map(|entry| entry.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()
        .context("list the folder")?;
    names.sort();
    Ok(names)
}

/// Exit status 1, nothing on standard output, and the one-line reason on standard error holding `says`.
fn ensure_refused(output: &Output, says: &[&str], what: &str) -> TestResult {
    let stderr = String::from_utf8_lossy(&output.stderr);
    ensure_eq!(output.status.code(), Some(1), "{what}: exit status ({stderr})");
    ensure_eq!(String::from_utf8_lossy(&output.stdout), "", "{what}: nothing printed");
    for part in says {
        ensure!(stderr.contains(part), "{what}: {part:?} in {stderr:?}");
    }
    Ok(())
}

/// `export`, `apply --dry-run` and `backup` on a database that is not there refuse with exit status 1,
/// naming what they looked for, and create nothing: no SQLite file, no server database, no table. Only
/// `apply` proper creates the database, as the server does.
async fn read_only_commands_refuse_without_a_database_and_create_none(backend: Backend) -> TestResult {
    let dir = tempfile::tempdir().context("temp dir")?;
    let doc = "[[executor]]\napp_name = \"billing-app\"\ntitle = \"Billing\"\n";
    std::fs::write(dir.path().join("jobs.toml"), doc).context("write the document")?;
    let commands: [&[&str]; 3] =
        [&["export"], &["apply", "-f", "jobs.toml", "--dry-run"], &["backup", "--to", "copy.db"]];
    if backend == Backend::Sqlite {
        return sqlite_refusals(dir.path(), &commands).await;
    }
    let db = TestDb::fresh(backend)?;
    let url = format!("--spring.datasource.url={}", db.url);
    let quoted = match backend {
        Backend::Postgres => format!("PostgreSQL database \"{}\"", db.name),
        _ => format!("MySQL/MariaDB database `{}`", db.name),
    };
    for command in &commands[..2] {
        let output = run_in(dir.path(), &[*command, &[url.as_str()]].concat())?;
        ensure_refused(&output, &[&quoted, "does not exist", "nothing was created"], &command.join(" "))?;
        ensure!(db.connect().await.is_err(), "{command:?} left the database {} behind", db.name);
    }
    let backup = run_in(dir.path(), &["backup", "--to", "copy.db", &url])?;
    ensure_refused(&backup, &["backup copies an SQLite file database", "pg_dump"], "backup")?;
    // An empty database stays empty.
    db.create().await?;
    for command in &commands[..2] {
        let output = run_in(dir.path(), &[*command, &[url.as_str()]].concat())?;
        ensure_refused(&output, &[&quoted, "has none of the xxl-job tables"], &command.join(" "))?;
        ensure_eq!(tables(&db).await?, 0, "{command:?} on the empty database");
    }
    ensure_eq!(listing(dir.path())?, ["jobs.toml"], "nothing written beside the document");
    Ok(())
}

/// The tables of a server database.
async fn tables(db: &TestDb) -> Result<i64, Failed> {
    match db.backend {
        Backend::Postgres => sqlx::query_scalar(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')",
        )
        .fetch_one(&mut db.postgres().await?)
        .await
        .context("count the tables"),
        _ => sqlx::query_scalar("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()")
            .fetch_one(&mut db.mysql().await?)
            .await
            .context("count the tables"),
    }
}

/// In a folder without a database the default `xxl-job-admin.db` is named and not made; an empty file is
/// no database either, and stays empty. `apply` makes the database, and the others then read it.
async fn sqlite_refusals(dir: &Path, commands: &[&[&str]]) -> TestResult {
    let default_file = dir.join("xxl-job-admin.db");
    let named = format!("the SQLite file {}", default_file.display());
    for command in commands {
        let output = run_in(dir, command)?;
        ensure_refused(&output, &[&named, "does not exist", "nothing was created"], &command.join(" "))?;
        ensure_eq!(listing(dir)?, ["jobs.toml"], "{command:?} created nothing");
    }
    std::fs::write(dir.join("empty.db"), "").context("an empty file")?;
    let empty = format!("--spring.datasource.url=sqlite:{}", dir.join("empty.db").display());
    for command in commands {
        let output = run_in(dir, &[*command, &[empty.as_str()]].concat())?;
        ensure_refused(&output, &["empty.db has none of the xxl-job tables"], &command.join(" "))?;
        ensure_eq!(listing(dir)?, ["empty.db", "jobs.toml"], "{command:?} on an empty file");
        ensure_eq!(std::fs::metadata(dir.join("empty.db")).context("empty.db")?.len(), 0, "{command:?}");
    }
    let applied = run_in(dir, &["apply", "-f", "jobs.toml"])?;
    ensure!(applied.status.success(), "apply creates the database: {applied:?}");
    let exported = run_in(dir, &["export"])?;
    ensure!(
        exported.status.success() && String::from_utf8_lossy(&exported.stdout).contains("billing-app"),
        "export reads it: {exported:?}"
    );
    Ok(())
}

/// Opens an SQLite file as someone restoring it would, and counts the jobs described `description`.
async fn jobs_in_copy(file: &Path, description: &str) -> Result<i64, Failed> {
    let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(file)
        .connect()
        .await
        .context(&format!("open {}", file.display()))?;
    let count = sqlx::query_scalar("SELECT COUNT(*) FROM xxl_job_info WHERE job_desc = ?")
        .bind(description)
        .fetch_one(&mut conn)
        .await
        .context(&format!("read {}", file.display()));
    drop(conn);
    count
}

/// A job added through the console of `admin`.
async fn add_job(console: &ConsoleClient, description: &str) -> TestResult {
    let mut form = job_form();
    form.retain(|(key, _)| *key != "jobDesc");
    form.push(("jobDesc", description));
    let added = console.post("/jobinfo/add", &form).await?;
    ensure_eq!(added["code"], 200, "add {description}: {added}");
    Ok(())
}

/// On a young SQLite database (every page still in the write-ahead log): `backup` while the admin runs
/// writes one file holding the last edit, and refuses to overwrite it; after SIGTERM and "stopped", the
/// `.db` file copied alone holds every edit and the log is empty.
async fn sqlite_copies_hold_the_last_edits_online_and_after_a_stop(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let file = db.url.trim_start_matches("sqlite:").split('?').next().unwrap_or_default().to_string();
    let logs = tempfile::tempdir().context("temp dir")?;
    let mut admin = AdminProcess::spawn("admin-sqlite", &db.url, TOKEN, logs.path())?;
    admin.wait_ready().await?;
    let mut console = ConsoleClient::new(&admin.base);
    console.login("admin", "123456", false).await?;
    add_job(&console, "before the backup").await?;

    let copies = tempfile::tempdir().context("temp dir")?;
    let url = format!("--spring.datasource.url={}", db.url);
    let backup = run_in(copies.path(), &["backup", "--to", "online.db", &url])?;
    ensure!(backup.status.success(), "backup while running: {backup:?}\n{}", admin.tail(20));
    ensure_eq!(listing(copies.path())?, ["online.db"], "one file, no log beside it");
    ensure_eq!(jobs_in_copy(&copies.path().join("online.db"), "before the backup").await?, 1);
    let size = std::fs::metadata(copies.path().join("online.db")).context("online.db")?.len();
    let again = run_in(copies.path(), &["backup", "--to", "online.db", &url])?;
    ensure_refused(&again, &["online.db exists already"], "a second backup to the same file")?;
    ensure_eq!(std::fs::metadata(copies.path().join("online.db")).context("online.db")?.len(), size);

    add_job(&console, "after the backup").await?;
    let before_stop = admin.log_len();
    admin.send_term()?;
    admin.wait_exit().await?;
    let log = admin.log_since(before_stop);
    ensure!(log.contains("stopped"), "a clean stop:\n{log}");
    let wal = std::fs::metadata(format!("{file}-wal")).map(|m| m.len()).unwrap_or(0);
    ensure_eq!(wal, 0, "the write-ahead log after the stop");
    let alone = tempfile::tempdir().context("temp dir")?;
    let copy = alone.path().join("copy.db");
    std::fs::copy(&file, &copy).context("copy the .db file")?;
    for description in ["before the backup", "after the backup"] {
        ensure_eq!(jobs_in_copy(&copy, description).await?, 1, "{description} in the copied .db file");
    }
    Ok(())
}
