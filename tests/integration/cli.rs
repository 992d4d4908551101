//! The `xxl-job-admin` binary as a person runs it: what it prints at start, `--help`, the `cron` tool.

use crate::support::{Backend, Context, TestApp, TestDb};
use crate::{cases, ensure, ensure_eq, Case, TestResult};
use libtest_mimic::Failed;
use std::io::{BufRead, BufReader};
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
