//! Integration tests: the real admin on a random port, against SQLite, a real MariaDB/MySQL and a real
//! PostgreSQL, talked to over real HTTP by executors shaped like the 2.4.2 Java executor.
//!
//! A custom harness (libtest-mimic) so that a case whose needs this machine lacks is reported as ignored
//! rather than passed: each case declares them ([`Need`]; the shared MySQL or PostgreSQL server of its
//! backend goes without saying), `needs.rs` probes each once and prints what it ignores, and with `CI` set a
//! missing one fails the run instead. Set `XXL_TEST_MYSQL_URL` (default `mysql://root@127.0.0.1:3306`) or
//! `XXL_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432`) to point at other servers. The
//! fault suite, the fault campaign, the read counts and the high-availability tests start MariaDB servers
//! of their own (`mariadb-install-db` and `mariadbd`, package mariadb-server), PostgreSQL servers (package
//! postgresql) or a MariaDB Galera cluster (packages galera-4 and rsync); the campaign's clock faults
//! preload libfaketime (package faketime). The reverse-proxy tests run a private nginx
//! (package nginx), the LDAP login tests a private OpenLDAP server (packages slapd and ldap-utils).
//! `TEST_LOG=1` prints the in-process admins' log lines (see `support/test_log.rs`).

mod alarm;
mod api;
mod audit;
mod browser;
mod campaign;
mod cli;
mod console;
mod failover;
mod faults;
mod fencing;
mod galera;
mod ha;
mod jobs_as_code;
mod ldap;
mod metrics;
mod needs;
mod oidc;
mod openapi;
mod reads;
mod scheduler;
mod schema;
mod security;
mod storage;
mod support;
mod webhook;
mod workflow_api;
mod workflow_console;
mod workflow_editor;
mod workflow_faults;
mod workflow_storage;
mod workflows;

use libtest_mimic::{Arguments, Failed, Trial};
use needs::Available;
pub use needs::Need;
use std::future::Future;
use std::pin::Pin;
use support::Backend;

pub type TestResult = Result<(), Failed>;
pub type TestFuture = Pin<Box<dyn Future<Output = TestResult> + Send>>;

/// One test, run once per backend it supports.
pub struct Case {
    /// `module::function`: what CI and people filter by.
    pub name: &'static str,
    pub backends: &'static [Backend],
    /// What it needs beyond the shared database server of each of its backends.
    pub needs: &'static [Need],
    pub run: fn(Backend) -> TestFuture,
}

/// Every backend.
pub const ALL: &[Backend] = &[Backend::Sqlite, Backend::MySql, Backend::Postgres];
/// The database servers, for what needs a network connection to the database.
pub const SERVERS: &[Backend] = &[Backend::MySql, Backend::Postgres];
pub const SQLITE: &[Backend] = &[Backend::Sqlite];
pub const MYSQL_ONLY: &[Backend] = &[Backend::MySql];
pub const POSTGRES_ONLY: &[Backend] = &[Backend::Postgres];

/// Tests at once beside those of [`RUN_ALONE`], unless `--test-threads` says: most of them wait on
/// timers, executors and fail monitors far more than they compute, so more than the two cores' worth run
/// at once (the in-process admins' pools are kept small for it: `support::TestApp`).
const TEST_THREADS: usize = 3;

fn main() {
    let mut args = Arguments::from_args();
    args.test_threads.get_or_insert(TEST_THREADS);
    support::test_log::install();
    let available = Available::probe();
    let cases = alarm::cases()
        .into_iter()
        .chain(api::cases())
        .chain(audit::cases())
        .chain(browser::cases())
        .chain(campaign::cases())
        .chain(cli::cases())
        .chain(console::cases())
        .chain(failover::cases())
        .chain(faults::cases())
        .chain(fencing::cases())
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
        .chain(webhook::cases())
        .chain(workflow_api::cases())
        .chain(workflow_console::cases())
        .chain(workflow_editor::cases())
        .chain(workflow_faults::cases())
        .chain(workflow_storage::cases())
        .chain(workflows::cases());
    let mut trials = Vec::new();
    for case in cases {
        for &backend in case.backends {
            let name = format!("{}::{}", case.name, backend.name());
            let run = case.run;
            let alone = RUN_ALONE.iter().any(|suite| case.name.starts_with(suite));
            let timed_name = name.clone();
            let trial = Trial::test(name, move || {
                // The timed suites measure lateness in milliseconds: no other test shares the cores meanwhile.
                let _alone = alone.then(|| TURNS.write().unwrap_or_else(|e| e.into_inner()));
                let _shared = (!alone).then(|| TURNS.read().unwrap_or_else(|e| e.into_inner()));
                let started = std::time::Instant::now();
                let result = run_case(run, backend);
                DURATIONS.lock().unwrap_or_else(|e| e.into_inner()).push((started.elapsed(), timed_name));
                result
            });
            trials.push(trial.with_ignored_flag(available.lacks(&case, backend)));
        }
    }
    available.report();
    let conclusion = libtest_mimic::run(&args, trials);
    report_slowest();
    conclusion.exit();
}

/// How long each test took, for the slowest-tests report that keeps CI's time budget in view.
static DURATIONS: std::sync::Mutex<Vec<(std::time::Duration, String)>> = std::sync::Mutex::new(Vec::new());

/// Prints the slowest tests and the time of those that ran alone (which adds to the run's wall time whole).
fn report_slowest() {
    let mut durations = std::mem::take(&mut *DURATIONS.lock().unwrap_or_else(|e| e.into_inner()));
    if durations.len() < 2 {
        return;
    }
    durations.sort_by_key(|d| std::cmp::Reverse(d.0));
    let alone: std::time::Duration = durations
        .iter()
        .filter(|(_, name)| RUN_ALONE.iter().any(|suite| name.starts_with(suite)))
        .map(|(took, _)| *took)
        .sum();
    let all: std::time::Duration = durations.iter().map(|(took, _)| *took).sum();
    println!(
        "\nslowest tests (all {} took {:.0} s; those run alone {:.0} s):",
        durations.len(),
        all.as_secs_f64(),
        alone.as_secs_f64()
    );
    for (took, name) in durations.iter().take(25) {
        println!("{:>8.1} s  {name}", took.as_secs_f64());
    }
}

/// Suites that run with no other test beside them: they kill and start admins and database servers and
/// hold fires to limits of 100 ms, which another test's admins on the same two cores would break.
const RUN_ALONE: [&str; 7] =
    ["campaign::", "faults::", "failover::", "fencing::", "galera::", "ha::", "workflow_faults::"];

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

/// The cases of one module or more, each named `module::function` so that a name is typed once:
/// `cases! { "metrics" { ALL => counters_move_after_triggers, SQLITE => promtool_check needs [Promtool] } }`.
#[macro_export]
macro_rules! cases {
    ($($module:literal { $($backends:expr => $test:ident $(needs [$($need:ident),+])?),* $(,)? })+) => {
        vec![$($($crate::Case {
            name: concat!($module, "::", stringify!($test)),
            backends: $backends,
            needs: &[$($($crate::Need::$need),+)?],
            run: |backend| Box::pin($test(backend)),
        }),*),+]
    };
}
