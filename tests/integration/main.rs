//! Integration tests: the real admin on a random port, against SQLite, a real MariaDB/MySQL and a real
//! PostgreSQL, talked to over real HTTP by executors shaped like the 2.4.2 Java executor.
//!
//! A custom harness (libtest-mimic) so that, on a machine without MySQL or PostgreSQL, their variants are
//! reported as ignored rather than passed. Set `XXL_TEST_MYSQL_URL` (default `mysql://root@127.0.0.1:3306`)
//! or `XXL_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432`) to point them elsewhere;
//! with `CI` set, an unreachable server is a failure, not a skip. The fault suite runs its own MariaDB
//! server instead, and needs `mariadb-install-db` and `mariadbd` (package mariadb-server); so do the
//! high-availability tests, which also start PostgreSQL servers of their own (package postgresql) and a
//! MariaDB Galera cluster (packages galera-4 and rsync). The reverse-proxy tests run a private nginx
//! (package nginx), the LDAP login tests a private OpenLDAP server (packages slapd and ldap-utils).

mod alarm;
mod api;
mod audit;
mod browser;
mod cli;
mod console;
mod failover;
mod faults;
mod galera;
mod ha;
mod jobs_as_code;
mod ldap;
mod metrics;
mod oidc;
mod openapi;
mod reads;
mod scheduler;
mod schema;
mod security;
mod storage;
mod support;
mod webhook;

use libtest_mimic::{Arguments, Failed, Trial};
use std::future::Future;
use std::pin::Pin;
use support::Backend;

pub type TestResult = Result<(), Failed>;
pub type TestFuture = Pin<Box<dyn Future<Output = TestResult> + Send>>;

/// One test, run once per backend it supports.
pub struct Case {
    pub name: &'static str,
    pub backends: &'static [Backend],
    pub run: fn(Backend) -> TestFuture,
}

/// Every backend.
pub const ALL: &[Backend] = &[Backend::Sqlite, Backend::MySql, Backend::Postgres];
/// The database servers, for what needs a network connection to the database.
pub const SERVERS: &[Backend] = &[Backend::MySql, Backend::Postgres];
pub const MYSQL_ONLY: &[Backend] = &[Backend::MySql];
pub const POSTGRES_ONLY: &[Backend] = &[Backend::Postgres];

fn main() {
    let args = Arguments::from_args();
    let servers: Vec<(Backend, Result<(), String>)> =
        SERVERS.iter().map(|&b| (b, b.availability())).collect();
    let unavailable = |backend: Backend| servers.iter().any(|(b, up)| *b == backend && up.is_err());
    let reference = schema::reference_script_path().exists();
    if !reference {
        eprintln!(
            "note: {} not found; the reference comparisons are ignored",
            schema::reference_script_path().display()
        );
    }
    let browser = support::browser::browser_availability();
    // The documented REST examples (docs/rest-api.md) are curl commands, run as written.
    let curl = std::process::Command::new("curl").arg("--version").output().is_ok_and(|o| o.status.success());
    let private_mariadb = support::private_mariadb::availability().map(drop);
    let private_postgres = support::private_postgres::availability().map(drop);
    let galera = support::galera::availability();
    let nginx = support::nginx::availability();
    let slapd = support::slapd::availability();
    // The OpenID Connect tests' real provider: Node and tools/oidc-provider's node_modules.
    let oidc_provider = oidc::provider_availability();
    let promtool = std::process::Command::new(metrics::PROMTOOL)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let cases = alarm::cases()
        .into_iter()
        .chain(api::cases())
        .chain(audit::cases())
        .chain(browser::cases())
        .chain(cli::cases())
        .chain(console::cases())
        .chain(failover::cases())
        .chain(faults::cases())
        .chain(galera::cases())
        .chain(ha::cases())
        .chain(jobs_as_code::cases())
        .chain(ldap::cases())
        .chain(metrics::cases())
        .chain(oidc::cases())
        .chain(openapi::cases())
        .chain(reads::cases())
        .chain(scheduler::cases())
        .chain(schema::cases())
        .chain(security::cases())
        .chain(storage::cases())
        .chain(webhook::cases());
    let mut trials = Vec::new();
    for case in cases {
        for &backend in case.backends {
            let name = format!("{}::{}", case.name, backend.name());
            let run = case.run;
            let alone = RUN_ALONE.iter().any(|suite| case.name.starts_with(suite));
            let trial = Trial::test(name, move || {
                // The timed suites measure lateness in milliseconds: no other test shares the cores meanwhile.
                let _alone = alone.then(|| TURNS.write().unwrap_or_else(|e| e.into_inner()));
                let _shared = (!alone).then(|| TURNS.read().unwrap_or_else(|e| e.into_inner()));
                run_case(run, backend)
            });
            // The reference script lives in shared/, beside the repository, not in it.
            let needs_reference = case.name.contains("reference");
            let needs_browser = case.name.starts_with("browser::");
            let needs_curl = case.name.contains("readme");
            let needs_nginx = case.name.contains("nginx");
            let needs_promtool = case.name.contains("promtool");
            let needs_slapd = case.name.starts_with("ldap::");
            let needs_oidc_provider = case.name.starts_with("oidc::provider_");
            // The fault suite, the read counts and the high-availability tests start servers of their own and
            // do not use the shared ones.
            let needs_private_mariadb = case.name.starts_with("faults::")
                || case.name.starts_with("reads::")
                || case.name.starts_with("ha::mariadb");
            let needs_private_postgres = case.name.starts_with("ha::postgres");
            let skip = if case.name.starts_with("galera::") {
                galera.is_err()
            } else if needs_private_mariadb {
                private_mariadb.is_err()
            } else if needs_private_postgres {
                private_postgres.is_err()
            } else {
                unavailable(backend)
                    || (needs_reference && !reference)
                    || (needs_browser && browser.is_err())
                    || (needs_curl && !curl)
                    || (needs_nginx && nginx.is_err())
                    || (needs_promtool && !promtool)
                    || (needs_slapd && slapd.is_err())
                    || (needs_oidc_provider && oidc_provider.is_err())
            };
            trials.push(trial.with_ignored_flag(skip));
        }
    }
    if let Err(reason) = &browser {
        if std::env::var_os("CI").is_some() {
            eprintln!("Chromium is required in CI but unavailable: {reason}");
            std::process::exit(1);
        }
        eprintln!("note: browser tests are ignored: {reason}");
    }
    if let Err(reason) = &private_mariadb {
        if std::env::var_os("CI").is_some() {
            eprintln!("mariadb-install-db and mariadbd are required in CI but unavailable: {reason}");
            std::process::exit(1);
        }
        eprintln!("note: the fault suite, the read counts and the MariaDB high-availability test are ignored: {reason}");
    }
    if let Err(reason) = &private_postgres {
        if std::env::var_os("CI").is_some() {
            eprintln!("the PostgreSQL programs are required in CI but unavailable: {reason}");
            std::process::exit(1);
        }
        eprintln!("note: the PostgreSQL high-availability test is ignored: {reason}");
    }
    if let Err(reason) = &galera {
        if std::env::var_os("CI").is_some() {
            eprintln!("a MariaDB Galera cluster is required in CI but cannot be started: {reason}");
            std::process::exit(1);
        }
        eprintln!("note: the Galera test is ignored: {reason}");
    }
    if let Err(reason) = &nginx {
        if std::env::var_os("CI").is_some() {
            eprintln!("nginx is required in CI but unavailable: {reason}");
            std::process::exit(1);
        }
        eprintln!("note: the reverse-proxy tests are ignored: {reason}");
    }
    if let Err(reason) = &slapd {
        if std::env::var_os("CI").is_some() {
            eprintln!("slapd and ldapadd are required in CI but unavailable: {reason}");
            std::process::exit(1);
        }
        eprintln!("note: the LDAP login tests are ignored: {reason}");
    }
    if let Err(reason) = &oidc_provider {
        if std::env::var_os("CI").is_some() {
            eprintln!("the OpenID Provider of the OIDC tests is required in CI but unavailable: {reason}");
            std::process::exit(1);
        }
        eprintln!("note: the OpenID Connect tests against a real provider are ignored: {reason}");
    }
    if !promtool {
        if std::env::var_os("CI").is_some() {
            eprintln!("promtool is required in CI but unavailable");
            std::process::exit(1);
        }
        eprintln!(
            "note: the promtool check of the metrics is ignored: {} is not installed",
            metrics::PROMTOOL
        );
    }
    if !curl {
        if std::env::var_os("CI").is_some() {
            eprintln!("curl is required in CI but unavailable");
            std::process::exit(1);
        }
        eprintln!("note: the documented curl examples are ignored: curl is not installed");
    }
    for (backend, up) in &servers {
        if let Err(reason) = up {
            if std::env::var_os("CI").is_some() {
                eprintln!("{} is required in CI but unavailable: {reason}", backend.name());
                std::process::exit(1);
            }
            eprintln!("note: {} tests are ignored: {reason}", backend.name());
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

/// Suites that run with no other test beside them: they kill and start admins and database servers and
/// hold fires to limits of 100 ms, which another test's admins on the same two cores would break.
const RUN_ALONE: [&str; 4] = ["faults::", "failover::", "galera::", "ha::"];

/// Taken for reading by every other test, for writing by those of [`RUN_ALONE`] (writers go first once
/// they wait, so they do not starve).
static TURNS: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn run_case(run: fn(Backend) -> TestFuture, backend: Backend) -> TestResult {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failed::from(format!("runtime: {e}")))?;
    runtime.block_on(run(backend))
}

/// `Err` with a message unless the condition holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(libtest_mimic::Failed::from(format!($($msg)+)));
        }
    };
}

/// `Err` unless the two values are equal.
#[macro_export]
macro_rules! ensure_eq {
    ($left:expr, $right:expr $(,)?) => {{
        let (left, right) = (&$left, &$right);
        if left != right {
            return Err(libtest_mimic::Failed::from(format!(
                "{} != {}\n  left: {:?}\n right: {:?}", stringify!($left), stringify!($right), left, right
            )));
        }
    }};
    ($left:expr, $right:expr, $($msg:tt)+) => {{
        let (left, right) = (&$left, &$right);
        if left != right {
            return Err(libtest_mimic::Failed::from(format!(
                "{}\n  left: {:?}\n right: {:?}", format!($($msg)+), left, right
            )));
        }
    }};
}
