//! A randomized fault campaign (issue 44): every (job, planned instant) runs exactly once, or is settled by
//! its misfire rule with a row that says so inside a fault's window; nothing runs twice, through faults
//! that strike at random and may overlap.
//!
//! Three admins run as child processes on a private MariaDB or PostgreSQL server, each through a TCP
//! proxy of its own (`support/proxy.rs`), with jobs of every schedule type and misfire strategy on two
//! in-test executors that record every `/run` with the planned instant and trigger type the admin sends
//! beside it. A nemesis (`support/nemesis.rs`) draws a schedule of faults from a seed: `kill -9` of an
//! admin (restarted later), SIGSTOP/SIGCONT, the database stopped and started, one admin's database link
//! delayed, cut or black-holed, an admin's clock off by up to 2 s (libfaketime), the second executor
//! hanging or slow. After a calm tail the checker (`support/checker.rs`) reads the fires and the log
//! table; then the admins are stopped with SIGTERM, each within its grace. On SQLite one admin is killed
//! and restarted. Settings come from the environment (docs/failure-behaviour.md): `XXL_CAMPAIGN_SECONDS`,
//! `XXL_CAMPAIGN_SEED` (a number, or `random`), `XXL_CAMPAIGN_JOBS`, `XXL_CAMPAIGN_FAULTS`.

use crate::support::checker::{self, Evidence, Finding, Job, Row, Schedule, Verdict, Window};
use crate::support::nemesis::{
    faketime_library, schedule, skewed_clock, Fault, FaultKind, Target, BEFORE_MS, RECOVERY_MS,
};
use crate::support::private_mariadb::PrivateMariaDb;
use crate::support::private_postgres::PrivatePostgres;
use crate::support::proxy::{Link, Proxy};
use crate::support::recorder::{Answer, Fire, Recorder};
use crate::support::{now_ms, AdminProcess, Backend, Context, TOKEN};
use crate::{cases, Case, TestResult, MYSQL_ONLY, POSTGRES_ONLY, SQLITE};
use libtest_mimic::Failed;
use sqlx::ConnectOptions;
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use xxl_job_admin::domain::codes::{AddressType, TriggerStatus};
use xxl_job_admin::storage::{Db, JobGroup, JobInfo};
use xxl_job_admin::time::Zone;

pub fn cases() -> Vec<Case> {
    cases! {
        "campaign" {
            MYSQL_ONLY => exactly_once needs [PrivateMariadb, Faketime, CampaignAsked],
            POSTGRES_ONLY => exactly_once needs [PrivatePostgres, Faketime, CampaignAsked],
            SQLITE => exactly_once,
        }
    }
}

/// The CI run: half a minute of faults, then the calm tail (the lost-result sweep's reach).
const DEFAULT_SECONDS: i64 = 30;
/// Issue 44's.
const DEFAULT_SEED: u64 = 44;
/// Enough jobs of every kind for 2 cores shared with three debug admins and a database.
const DEFAULT_JOBS: usize = 100;
const DATABASE: &str = "xxl_job";
const ADMINS: usize = 3;
/// The jobs' first fire, this long after they are inserted (the admins are up by then).
const FIRST_FIRE_AFTER_MS: i64 = 6_000;
/// Calm before the first fault.
const WARM_UP_MS: i64 = 10_000;
/// Calm after the last fault is healed: at least the lost-result sweep's reach, so that every row of the
/// faults has its last word when the rows are read.
const TAIL_MS: i64 = checker::SWEEP_REACH_MS + 5_000;
/// The newest instants checked are this old when the rows are read.
const NEWEST_CHECKED_MS: i64 = 3_000;
/// An admin's grace for a stop (`spring.lifecycle.timeout-per-shutdown-phase`) and what exiting may take
/// beyond it.
const SHUTDOWN_BOUND_MS: i64 = 10_000 + 3_000;
/// After a new leader took the lease: its first passes, which send or settle what waited.
const TAKEOVER_SETTLE_MS: i64 = 2_000;
/// The window of a cluster where no admin could lead.
const NO_ADMIN: &str = "no admin able to lead";
/// The report lists the faults one by one up to this many.
const TIMELINE_FAULTS: usize = 40;
/// How often the test reads who holds the lease, and how long a read may take.
const LEASE_WATCH: Duration = Duration::from_millis(250);
const LEASE_READ_LIMIT: Duration = Duration::from_millis(1_000);
/// Schedules of the jobs (each with both misfire strategies, on both executors).
const SHAPES: [(&str, &str); 5] = [
    ("CRON", "* * * * * ?"),
    ("CRON", "0/2 * * * * ?"),
    ("CRON", "3/5 * * * * ?"),
    ("FIX_RATE", "1"),
    ("FIX_RATE", "3"),
];

/// What a run does, from the environment.
struct Settings {
    seconds: i64,
    seed: u64,
    random_seed: bool,
    jobs: usize,
    kinds: Vec<FaultKind>,
}

impl Settings {
    fn from_env(backend: Backend) -> Result<Settings, Failed> {
        let number = |key: &str, default: i64| -> Result<i64, Failed> {
            match std::env::var(key) {
                Ok(v) => v.trim().parse().map_err(|_| format!("{key}={v}: a whole number is wanted").into()),
                Err(_) => Ok(default),
            }
        };
        let (seed, random_seed) = match std::env::var("XXL_CAMPAIGN_SEED") {
            Ok(v) if v.trim() == "random" => (rand::random(), true),
            Ok(v) => {
                (v.trim().parse().map_err(|_| format!("XXL_CAMPAIGN_SEED={v}: a number or random"))?, false)
            }
            Err(_) => (DEFAULT_SEED, false),
        };
        // SQLite has one admin process per file and no server: its faults are crashes.
        let possible: &[FaultKind] =
            if backend == Backend::Sqlite { &[FaultKind::Kill] } else { &FaultKind::ALL };
        let kinds = match std::env::var("XXL_CAMPAIGN_FAULTS") {
            Ok(list) => {
                let mut kinds = Vec::new();
                for name in list.split(',').filter(|n| !n.trim().is_empty()) {
                    let kind = FaultKind::parse(name).ok_or_else(|| {
                        let known: Vec<&str> = FaultKind::ALL.iter().map(|k| k.name()).collect();
                        format!("XXL_CAMPAIGN_FAULTS: unknown fault {name:?} (known: {})", known.join(", "))
                    })?;
                    kinds.extend(Some(kind).filter(|k| possible.contains(k)));
                }
                kinds
            }
            Err(_) => possible.to_vec(),
        };
        let seconds = number("XXL_CAMPAIGN_SECONDS", DEFAULT_SECONDS)?;
        let jobs = number("XXL_CAMPAIGN_JOBS", DEFAULT_JOBS as i64)?.max(SHAPES.len() as i64 * 4) as usize;
        Ok(Settings { seconds, seed, random_seed, jobs, kinds })
    }

    /// The command that plays this run's faults again.
    fn replay(&self, backend: Backend) -> String {
        let kinds: Vec<&str> = self.kinds.iter().map(|k| k.name()).collect();
        format!(
            "XXL_CAMPAIGN_SEED={} XXL_CAMPAIGN_SECONDS={} XXL_CAMPAIGN_JOBS={} XXL_CAMPAIGN_FAULTS={} \
             cargo test --test integration -- campaign::exactly_once::{} --exact",
            self.seed,
            self.seconds,
            self.jobs,
            kinds.join(","),
            backend.name()
        )
    }
}

/// The database of a run: a private server the nemesis may stop, or an SQLite file.
enum Server {
    MariaDb(PrivateMariaDb),
    Postgres(PrivatePostgres),
    Sqlite(PathBuf),
}

impl Server {
    async fn start(backend: Backend, dir: &Path) -> Result<Server, Failed> {
        Ok(match backend {
            Backend::MySql => Server::MariaDb(PrivateMariaDb::start().await?),
            Backend::Postgres => Server::Postgres(PrivatePostgres::primary().await?),
            Backend::Sqlite => Server::Sqlite(dir.join("campaign.db")),
        })
    }

    fn direct(&self) -> Direct {
        match self {
            Server::MariaDb(db) => Direct::MySql(db.port),
            Server::Postgres(db) => Direct::Postgres(db.port),
            Server::Sqlite(path) => Direct::Sqlite(path.clone()),
        }
    }

    async fn stop(&mut self) -> Result<(), Failed> {
        match self {
            Server::MariaDb(db) => db.stop().await,
            Server::Postgres(db) => db.stop().await,
            Server::Sqlite(_) => Err("an SQLite file has no server to stop".into()),
        }
    }

    async fn resume(&mut self) -> Result<(), Failed> {
        match self {
            Server::MariaDb(db) => db.resume().await,
            Server::Postgres(db) => db.resume().await,
            Server::Sqlite(_) => Err("an SQLite file has no server to start".into()),
        }
    }

    fn log_tail(&self) -> String {
        match self {
            Server::MariaDb(db) => db.log_tail(20),
            Server::Postgres(db) => db.log_tail(20),
            Server::Sqlite(_) => String::new(),
        }
    }
}

/// How the test reaches the database itself, past the proxies.
#[derive(Clone)]
enum Direct {
    MySql(u16),
    Postgres(u16),
    Sqlite(PathBuf),
}

enum Conn {
    MySql(sqlx::MySqlConnection),
    Postgres(sqlx::PgConnection),
    Sqlite(sqlx::SqliteConnection),
}

/// `xxl_job_log`'s columns the checker reads.
type RawRow = (i64, i32, Option<chrono::NaiveDateTime>, i32, i32, Option<String>);

impl Direct {
    /// The `spring.datasource.url` of the database at `port` (the server's or a proxy's).
    fn url(&self, port: Option<u16>) -> String {
        match self {
            Direct::MySql(p) => {
                format!("jdbc:mysql://127.0.0.1:{}/{DATABASE}?serverTimezone=UTC", port.unwrap_or(*p))
            }
            Direct::Postgres(p) => format!(
                "jdbc:postgresql://127.0.0.1:{}/{DATABASE}?user=postgres&serverTimezone=UTC",
                port.unwrap_or(*p)
            ),
            Direct::Sqlite(path) => format!("sqlite:{}?serverTimezone=UTC", path.display()),
        }
    }

    fn port(&self) -> Option<u16> {
        match self {
            Direct::MySql(port) | Direct::Postgres(port) => Some(*port),
            Direct::Sqlite(_) => None,
        }
    }

    async fn connect(&self) -> Result<Conn, Failed> {
        let connected = async {
            Ok::<Conn, sqlx::Error>(match self {
                Direct::MySql(port) => Conn::MySql(
                    sqlx::mysql::MySqlConnectOptions::new()
                        .host("127.0.0.1")
                        .port(*port)
                        .username("root")
                        .database(DATABASE)
                        .connect()
                        .await?,
                ),
                Direct::Postgres(port) => Conn::Postgres(
                    sqlx::postgres::PgConnectOptions::new_without_pgpass()
                        .host("127.0.0.1")
                        .port(*port)
                        .username("postgres")
                        .database(DATABASE)
                        .connect()
                        .await?,
                ),
                Direct::Sqlite(path) => Conn::Sqlite(
                    sqlx::sqlite::SqliteConnectOptions::new()
                        .filename(path)
                        .read_only(true)
                        .connect()
                        .await?,
                ),
            })
        };
        match tokio::time::timeout(Duration::from_secs(10), connected).await {
            Ok(connected) => connected.context("connect to the campaign's database"),
            Err(_) => Err("connect to the campaign's database: no answer within 10 s".into()),
        }
    }

    /// The owner id in the lease, if any, read on `conn` (opened when `None`).
    async fn lease_owner(&self, conn: &mut Option<Conn>) -> Result<Option<String>, Failed> {
        const SQL: &str = "SELECT lock_name FROM xxl_job_lock WHERE lock_name LIKE 'leader:%'";
        if conn.is_none() {
            *conn = Some(self.connect().await?);
        }
        let lease: Option<String> = match conn.as_mut().context("a connection")? {
            Conn::MySql(c) => sqlx::query_scalar(SQL).fetch_optional(c).await,
            Conn::Postgres(c) => sqlx::query_scalar(SQL).fetch_optional(c).await,
            Conn::Sqlite(c) => sqlx::query_scalar(SQL).fetch_optional(c).await,
        }
        .context("the lease")?;
        Ok(lease.and_then(|l| l.strip_prefix("leader:").map(|rest| rest.chars().take(8).collect())))
    }

    /// Every row of `xxl_job_log`, by id.
    async fn rows(&self) -> Result<Vec<Row>, Failed> {
        const PAGE: i64 = 20_000;
        let mut conn = self.connect().await?;
        let (mut rows, mut after) = (Vec::new(), 0i64);
        loop {
            let sql =
                "SELECT id, job_id, trigger_time, trigger_code, handle_code, trigger_msg FROM xxl_job_log \
                       WHERE id > ? ORDER BY id LIMIT ?";
            let page: Vec<RawRow> = match &mut conn {
                Conn::MySql(c) => sqlx::query_as(sql).bind(after).bind(PAGE).fetch_all(c).await,
                Conn::Postgres(c) => {
                    let sql = sql.replacen('?', "$1", 1).replacen('?', "$2", 1);
                    sqlx::query_as(&sql).bind(after).bind(PAGE).fetch_all(c).await
                }
                Conn::Sqlite(c) => sqlx::query_as(sql).bind(after).bind(PAGE).fetch_all(c).await,
            }
            .context("the log rows")?;
            let full = page.len() as i64 == PAGE;
            for (id, job_id, trigger_time, trigger_code, handle_code, trigger_msg) in page {
                after = id;
                rows.push(Row {
                    id,
                    job_id: job_id.into(),
                    trigger_ms: trigger_time.map(|t| t.and_utc().timestamp_millis()),
                    trigger_code,
                    handle_code,
                    trigger_msg: trigger_msg.unwrap_or_default(),
                });
            }
            if !full {
                return Ok(rows);
            }
        }
    }
}

/// What the fault tasks share.
struct Run {
    log_dir: PathBuf,
    direct: Direct,
    faketime: Option<PathBuf>,
    /// The healthy executor, and the one the nemesis disturbs.
    recorders: [Recorder; 2],
    /// The running admin of each slot, for the executors' callbacks and registrations.
    bases: Mutex<Vec<Option<String>>>,
}

impl Run {
    fn set_base(&self, slot: usize, base: Option<String>) {
        let mut bases = self.bases.lock().unwrap_or_else(|e| e.into_inner());
        bases[slot] = base;
        let live: Vec<&str> = bases.iter().flatten().map(String::as_str).collect();
        for recorder in &self.recorders {
            recorder.set_admins(&live);
        }
    }
}

/// How long a slot keeps starting an admin that exits at start because the database is down.
const RESTART_FOR: Duration = Duration::from_secs(120);

/// Whether an admin's failed start was the database's doing (refused, shutting down, starting up).
fn database_down_at_start(error: &Failed) -> bool {
    error
        .message()
        .is_some_and(|m| m.contains("while starting") && m.contains("start-up failed: database error"))
}

/// One admin's place in the cluster: its link to the database and the admin processes it ran in turn.
struct Slot {
    index: usize,
    url: String,
    proxy: Option<Proxy>,
    admin: Option<AdminProcess>,
    /// Processes of this slot that were killed or stopped: kept for their logs.
    gone: Vec<AdminProcess>,
    starts: usize,
}

impl Slot {
    /// Starts an admin, its clock `skew_ms` off; [`Slot::ready`] waits for it.
    fn spawn(&mut self, run: &Run, skew_ms: i64) -> Result<(), Failed> {
        self.starts += 1;
        let name = format!("admin-{}.{}", self.index + 1, self.starts);
        let env = match (&run.faketime, skew_ms) {
            (_, 0) => Vec::new(),
            (Some(library), skew) => skewed_clock(library, skew),
            (None, _) => return Err("a clock fault needs libfaketime".into()),
        };
        self.admin = Some(AdminProcess::spawn_in(&name, &self.url, TOKEN, &run.log_dir, &[], &env)?);
        Ok(())
    }

    /// Starts an admin, its clock `skew_ms` off, and waits until it answers; returns when. An admin that
    /// exits at start because the database is down (a database fault under way) is started again a second
    /// later, as a service manager restarts a failed service, for at most [`RESTART_FOR`].
    async fn start(&mut self, run: &Run, skew_ms: i64) -> Result<i64, Failed> {
        let deadline = now_ms() + RESTART_FOR.as_millis() as i64;
        loop {
            self.spawn(run, skew_ms)?;
            match self.ready(run).await {
                Err(e) if now_ms() < deadline && database_down_at_start(&e) => {
                    if let Some(failed) = self.admin.take() {
                        self.gone.push(failed);
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                other => return other,
            }
        }
    }

    /// Waits until the admin answers; returns when.
    async fn ready(&mut self, run: &Run) -> Result<i64, Failed> {
        let admin = self.admin.as_mut().context("a running admin")?;
        admin.wait_ready().await?;
        run.set_base(self.index, Some(admin.base.clone()));
        Ok(now_ms())
    }

    fn admin(&mut self) -> Result<&mut AdminProcess, Failed> {
        self.admin.as_mut().context("a running admin")
    }

    fn proxy(&self) -> Result<&Proxy, Failed> {
        self.proxy.as_ref().context("the admin's proxy")
    }

    fn kill(&mut self, run: &Run) {
        if let Some(mut admin) = self.admin.take() {
            admin.kill();
            self.gone.push(admin);
        }
        run.set_base(self.index, None);
    }

    /// SIGTERM, and the wait for the exit (a stopping admin still takes callbacks); returns the name and
    /// how long the exit took (the admin is killed after 30 s).
    async fn stop(&mut self, run: &Run) -> Result<(String, i64), Failed> {
        let mut admin = self.admin.take().context("a running admin")?;
        let sent = now_ms();
        admin.send_term()?;
        let _ = admin.wait_exit().await;
        let took = now_ms() - sent;
        run.set_base(self.index, None);
        let name = admin.name.clone();
        self.gone.push(admin);
        Ok((name, took))
    }
}

/// A fault as it was played.
struct Played {
    fault: Fault,
    /// A fault on an admin: whether it led (or the lease could not be read) from a second before the
    /// fault to its end. Only then does its window count: a standby's faults move no fire.
    led: bool,
    started_ms: i64,
    ended_ms: i64,
    /// Where it may settle fires (see the kinds in `support/nemesis.rs`).
    windows: Vec<Range<i64>>,
}

/// What one fault task played.
#[derive(Default)]
struct TaskLog {
    faults: Vec<Played>,
    /// When the slot's admin could not lead (killed or restarting, frozen, its link cut or black-holed),
    /// for the windows of a cluster where none could.
    unable: Vec<Range<i64>>,
    /// SIGTERMs sent meanwhile (the restarts of clock faults): the admin and how long its exit took.
    exits: Vec<(String, i64)>,
}

/// Who held the lease when the test looked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lead {
    Slot(usize),
    Nobody,
    /// The lease or its owner could not be read (the database was down, or the admin not yet known).
    Unknown,
}

/// Reads who holds the lease every [`LEASE_WATCH`] until `done`; returns each change and when it was seen.
async fn watch_lease(run: Arc<Run>, done: Arc<AtomicBool>) -> Vec<(i64, Lead)> {
    let mut seen: Vec<(i64, Lead)> = Vec::new();
    let mut owners: HashMap<String, usize> = HashMap::new();
    let mut conn = None;
    while !done.load(Ordering::Relaxed) {
        let at = now_ms();
        let lead = match tokio::time::timeout(LEASE_READ_LIMIT, run.direct.lease_owner(&mut conn)).await {
            Ok(Ok(None)) => Lead::Nobody,
            Ok(Ok(Some(owner))) => {
                if !owners.contains_key(&owner) {
                    if let Some(slot) = slot_of_owner(&run.log_dir, &owner) {
                        owners.insert(owner.clone(), slot);
                    }
                }
                owners.get(&owner).map_or(Lead::Unknown, |&slot| Lead::Slot(slot))
            }
            _ => {
                conn = None;
                Lead::Unknown
            }
        };
        if seen.last().map(|s| s.1) != Some(lead) {
            seen.push((at, lead));
        }
        tokio::time::sleep(LEASE_WATCH).await;
    }
    seen
}

/// The slot whose admin logged that it plans as `owner` (its log is `admin-<slot>.<start>.log`).
fn slot_of_owner(log_dir: &Path, owner: &str) -> Option<usize> {
    use std::io::Read;
    let needle = format!("this admin plans as admin {owner}");
    std::fs::read_dir(log_dir).ok()?.filter_map(|e| e.ok()).find_map(|entry| {
        let name = entry.file_name().into_string().ok()?;
        let slot: usize = name.strip_prefix("admin-")?.split('.').next()?.parse().ok()?;
        // The line comes among the first of a log.
        let mut start = String::new();
        std::fs::File::open(entry.path()).ok()?.take(64 * 1024).read_to_string(&mut start).ok()?;
        start.contains(&needle).then_some(slot - 1)
    })
}

/// Whether `slot` held the lease, or nobody could tell who did, at some time in `span`.
/// A leader's fault that loses its lease lasts, for the fires, until another admin (or its own restart)
/// holds the lease and has settled: [`nemesis::TAKEOVER_MS`] after the fault when a healthy survivor takes
/// over, later when the survivors are themselves impaired (a link cut or delayed at the same time), as the
/// lease watcher saw it.
fn extend_to_takeover(played: &mut Played, seen: &[(i64, Lead)]) {
    let Some(&(taken, _)) =
        seen.iter().find(|(at, lead)| *at > played.started_ms && matches!(lead, Lead::Slot(_)))
    else {
        return;
    };
    if let Some(last) = played.windows.last_mut() {
        last.end = last.end.max(taken + TAKEOVER_SETTLE_MS);
    }
}

fn led(seen: &[(i64, Lead)], slot: usize, span: Range<i64>) -> bool {
    let first = seen.partition_point(|s| s.0 <= span.start).saturating_sub(1);
    seen[first..]
        .iter()
        .take_while(|s| s.0 < span.end)
        .any(|s| s.1 == Lead::Unknown || s.1 == Lead::Slot(slot))
}

async fn sleep_until(at_ms: i64) {
    let wait = (at_ms - now_ms()).max(0);
    tokio::time::sleep(Duration::from_millis(wait as u64)).await;
}

/// Plays the faults of one admin slot in turn; gives the slot back with what happened.
async fn play_slot(
    run: Arc<Run>,
    mut slot: Slot,
    faults: Vec<Fault>,
    origin_ms: i64,
) -> (Slot, Result<TaskLog, Failed>) {
    let mut log = TaskLog::default();
    for fault in faults {
        sleep_until(origin_ms + fault.at_ms).await;
        if let Err(e) = strike_admin(&run, &mut slot, fault, &mut log).await {
            let what = format!(
                "{} of admin slot {}: {}",
                fault.kind.name(),
                slot.index + 1,
                e.message().unwrap_or("")
            );
            return (slot, Err(what.into()));
        }
    }
    (slot, Ok(log))
}

async fn strike_admin(run: &Run, slot: &mut Slot, fault: Fault, log: &mut TaskLog) -> Result<(), Failed> {
    let start = now_ms();
    let heal_at = start + fault.length_ms;
    let (ended, windows) = match fault.kind {
        FaultKind::Kill => {
            slot.kill(run);
            sleep_until(heal_at).await;
            let ready = slot.start(run, 0).await?;
            log.unable.push(start..ready);
            (ready, vec![fault.kind.window(start, ready)])
        }
        FaultKind::Freeze => {
            slot.admin()?.freeze()?;
            sleep_until(heal_at).await;
            slot.admin()?.thaw()?;
            let end = now_ms();
            log.unable.push(start..end);
            (end, vec![fault.kind.window(start, end)])
        }
        FaultKind::LinkDelay | FaultKind::LinkCut | FaultKind::LinkBlackHole => {
            let link = match fault.kind {
                FaultKind::LinkDelay => Link::Delay(Duration::from_millis(fault.amount_ms as u64)),
                FaultKind::LinkCut => Link::Refuse,
                _ => Link::BlackHole,
            };
            slot.proxy()?.set_link(link);
            sleep_until(heal_at).await;
            slot.proxy()?.set_link(Link::Pass);
            let end = now_ms();
            if link != Link::Pass && !matches!(link, Link::Delay(_)) {
                log.unable.push(start..end);
            }
            (end, vec![fault.kind.window(start, end)])
        }
        FaultKind::ClockSkew => {
            log.exits.push(slot.stop(run).await?);
            let skewed = slot.start(run, fault.amount_ms).await?;
            log.unable.push(start..skewed);
            sleep_until(heal_at).await;
            let heal = now_ms();
            log.exits.push(slot.stop(run).await?);
            let end = slot.start(run, 0).await?;
            log.unable.push(heal..end);
            (end, vec![fault.kind.window(start, skewed), fault.kind.window(heal, end)])
        }
        other => return Err(format!("{} does not strike an admin", other.name()).into()),
    };
    log.faults.push(Played { fault, led: true, started_ms: start, ended_ms: ended, windows });
    Ok(())
}

/// Plays the database's faults in turn.
async fn play_database(
    mut server: Server,
    faults: Vec<Fault>,
    origin_ms: i64,
) -> (Server, Result<TaskLog, Failed>) {
    let mut log = TaskLog::default();
    for fault in faults {
        sleep_until(origin_ms + fault.at_ms).await;
        let start = now_ms();
        let outcome = async {
            server.stop().await?;
            sleep_until(start + fault.length_ms).await;
            server.resume().await
        }
        .await;
        if let Err(e) = outcome {
            return (server, Err(format!("db-stop: {}", e.message().unwrap_or("")).into()));
        }
        let end = now_ms();
        let windows = vec![fault.kind.window(start, end)];
        log.faults.push(Played { fault, led: true, started_ms: start, ended_ms: end, windows });
    }
    (server, Ok(log))
}

/// Plays the disturbed executor's faults in turn.
async fn play_executor(run: Arc<Run>, faults: Vec<Fault>, origin_ms: i64) -> TaskLog {
    let mut log = TaskLog::default();
    let executor = &run.recorders[1];
    for fault in faults {
        sleep_until(origin_ms + fault.at_ms).await;
        let start = now_ms();
        executor.answer(match fault.kind {
            FaultKind::ExecutorSlow => Answer::Slowly(Duration::from_millis(fault.amount_ms as u64)),
            _ => Answer::Hang,
        });
        sleep_until(start + fault.length_ms).await;
        executor.answer(Answer::Promptly);
        let end = now_ms();
        let windows = vec![fault.kind.window(start, end)];
        log.faults.push(Played { fault, led: true, started_ms: start, ended_ms: end, windows });
    }
    log
}

/// Two executor groups (the healthy executor's and the disturbed one's) and the jobs, first due at
/// `first_fire`: every shape of [`SHAPES`] with both misfire strategies on both executors, and two jobs of
/// schedule type NONE, stopped as the console makes them.
async fn insert_jobs(db: &Db, run: &Run, count: usize, first_fire: i64) -> Result<Vec<Job>, Failed> {
    let mut groups = Vec::new();
    for (n, recorder) in run.recorders.iter().enumerate() {
        let group = JobGroup {
            id: 0,
            app_name: format!("xxl-job-campaign-{n}"),
            title: format!("campaign {n}"),
            address_type: AddressType::Manual,
            address_list: Some(recorder.address.clone()),
            update_time: None,
        };
        groups.push(db.insert_group(&group).await.context("insert a group")?);
    }
    let mut jobs = Vec::with_capacity(count + 2);
    for n in 0..count + 2 {
        let (schedule_type, conf) = if n < count { SHAPES[n % SHAPES.len()] } else { ("NONE", "") };
        let fire_once_now = (n / SHAPES.len()) % 2 == 1;
        let schedule = match schedule_type {
            "CRON" => Schedule::Cron(conf.to_string()),
            "FIX_RATE" => Schedule::FixRate(conf.parse::<i64>().context("a rate")? * 1000),
            _ => Schedule::Never,
        };
        // A CRON job's first fire is its expression's first instant from then.
        let next = match &schedule {
            Schedule::Cron(expression) => xxl_job_admin::domain::schedule::next_time(
                "CRON",
                Some(expression),
                first_fire - 1,
                Zone::System,
            )
            .context("a cron expression")?
            .context("a cron instant")?,
            Schedule::FixRate(_) => first_fire,
            Schedule::Never => 0,
        };
        let misfire = if fire_once_now { "FIRE_ONCE_NOW" } else { "DO_NOTHING" };
        let info = JobInfo {
            job_group: groups[(n / (2 * SHAPES.len())) % 2],
            job_desc: format!("{schedule_type} {conf} {misfire} {n}"),
            author: Some("campaign".into()),
            alarm_email: Some(String::new()),
            schedule_type: schedule_type.into(),
            schedule_conf: Some(conf.into()),
            misfire_strategy: misfire.into(),
            executor_route_strategy: Some("FIRST".into()),
            executor_handler: Some("campaignJob".into()),
            executor_param: Some(String::new()),
            executor_block_strategy: Some("SERIAL_EXECUTION".into()),
            glue_source: Some(String::new()),
            glue_remark: Some(String::new()),
            child_jobid: Some(String::new()),
            trigger_status: if next > 0 { TriggerStatus::Running } else { TriggerStatus::Stopped },
            trigger_next_time: next,
            ..JobInfo::sample(0)
        };
        let id = db.insert_job(&info).await.context("insert a job")?;
        jobs.push(Job { id: id.into(), schedule, fire_once_now });
    }
    Ok(jobs)
}

/// The storage layer on the campaign's database, past the proxies; it makes the schema when missing.
async fn open_storage(direct: &Direct) -> Result<Db, Failed> {
    let args =
        [format!("--spring.datasource.url={}", direct.url(None)), "--spring.datasource.username=root".into()];
    let loaded =
        xxl_job_admin::config::Config::load(&args, std::iter::empty(), Path::new("/")).context("config")?;
    let (db, _) = xxl_job_admin::storage::connect(&loaded.config.datasource).await.context("connect")?;
    Ok(db)
}

/// The windows of a cluster where no admin could lead (each killed or restarting, frozen, or cut off from
/// the database) at once, until the first that can again has taken the plan over.
fn no_admin_windows(unable: &[Range<i64>], slots: usize) -> Vec<Window> {
    let mut events: Vec<(i64, i64)> = unable.iter().flat_map(|r| [(r.start, 1), (r.end, -1)]).collect();
    events.sort_unstable();
    let (mut count, mut since, mut windows) = (0, 0, Vec::new());
    for (at, delta) in events {
        let before = count;
        count += delta;
        if count == slots as i64 && before < count {
            since = at;
        } else if before == slots as i64 && count < before {
            windows.push(Window { what: NO_ADMIN, span: since - BEFORE_MS..at + RECOVERY_MS });
        }
    }
    windows
}

async fn exactly_once(backend: Backend) -> TestResult {
    let settings = Settings::from_env(backend)?;
    let seed_source = if settings.random_seed { "random" } else { "fixed" };
    eprintln!(
        "campaign ({}): seed {} ({seed_source}); replay with: {}",
        backend.name(),
        settings.seed,
        settings.replay(backend)
    );
    let started = std::time::Instant::now();
    let logs = tempfile::tempdir().context("temp dir")?;
    let server = Server::start(backend, logs.path()).await?;
    let direct = server.direct();
    let faketime = if backend == Backend::Sqlite { None } else { Some(faketime_library()?) };
    let recorders = [
        Recorder::start("xxl-job-campaign-0", TOKEN).await?,
        Recorder::start("xxl-job-campaign-1", TOKEN).await?,
    ];
    let slots = if backend == Backend::Sqlite { 1 } else { ADMINS };
    let run = Arc::new(Run {
        log_dir: logs.path().to_path_buf(),
        direct: direct.clone(),
        faketime,
        recorders,
        bases: Mutex::new(vec![None; slots]),
    });
    // The schema first, then the admins.
    let db = open_storage(&direct).await?;
    let mut cluster = Vec::new();
    for index in 0..slots {
        let proxy = match direct.port() {
            Some(port) => Some(Proxy::start(([127, 0, 0, 1], port).into()).await?),
            None => None,
        };
        let url = direct.url(proxy.as_ref().map(|p| p.addr.port()));
        let mut slot = Slot { index, url, proxy, admin: None, gone: Vec::new(), starts: 0 };
        slot.spawn(&run, 0)?;
        cluster.push(slot);
    }
    let outcome = campaign(&settings, &run, &mut cluster, db, server).await;
    conclude(&settings, backend, &run, &cluster, outcome, started.elapsed().as_secs())
}

/// What a campaign saw.
struct Outcome {
    /// Who held the lease, as the test saw it (each change).
    leases: Vec<(i64, Lead)>,
    /// When the fault phase began: times in the report count from here.
    origin_ms: i64,
    jobs: usize,
    drawn: usize,
    played: Vec<Played>,
    windows: Vec<Window>,
    fires: Vec<Fire>,
    rows: Vec<Row>,
    verdict: Verdict,
    /// SIGTERMs of the clock faults' restarts, and at the end: the admin and how long its exit took.
    restarts: Vec<(String, i64)>,
    last: Vec<(String, i64)>,
    server: Server,
}

/// Starts the jobs, plays the faults, waits out the tail, reads what happened and stops the admins.
async fn campaign(
    settings: &Settings,
    run: &Arc<Run>,
    cluster: &mut Vec<Slot>,
    db: Db,
    server: Server,
) -> Result<Outcome, Failed> {
    for slot in cluster.iter_mut() {
        slot.ready(run).await?;
    }
    let first_fire = (now_ms() + FIRST_FIRE_AFTER_MS) / 1000 * 1000;
    let jobs = insert_jobs(&db, run, settings.jobs, first_fire).await?;
    db.close().await;
    let origin = first_fire + WARM_UP_MS;
    let span = settings.seconds * 1000;
    let faults = schedule(settings.seed, &settings.kinds, cluster.len(), span);
    let of =
        |target: Target| -> Vec<Fault> { faults.iter().filter(|f| f.target == target).copied().collect() };
    let done = Arc::new(AtomicBool::new(false));
    let watcher = tokio::spawn(watch_lease(run.clone(), done.clone()));
    let slot_tasks: Vec<_> = cluster
        .drain(..)
        .map(|slot| {
            let faults = of(Target::Admin(slot.index));
            tokio::spawn(play_slot(run.clone(), slot, faults, origin))
        })
        .collect();
    let database = tokio::spawn(play_database(server, of(Target::Database), origin));
    let executor = tokio::spawn(play_executor(run.clone(), of(Target::Executor), origin));
    let mut logs = Vec::new();
    let mut errors = Vec::new();
    for task in slot_tasks {
        let (slot, log) = task.await.context("an admin's faults")?;
        cluster.push(slot);
        log.map_or_else(|e| errors.push(e.message().unwrap_or("").to_string()), |l| logs.push(l));
    }
    let (server, log) = database.await.context("the database's faults")?;
    log.map_or_else(|e| errors.push(e.message().unwrap_or("").to_string()), |l| logs.push(l));
    logs.push(executor.await.context("the executor's faults")?);
    done.store(true, Ordering::Relaxed);
    let leases = watcher.await.context("the lease watcher")?;
    if !errors.is_empty() {
        return Err(format!("the nemesis could not play its faults: {}", errors.join("; ")).into());
    }
    let unable: Vec<Range<i64>> = logs.iter().flat_map(|l| l.unable.iter().cloned()).collect();
    let restarts: Vec<(String, i64)> = logs.iter().flat_map(|l| l.exits.iter().cloned()).collect();
    let mut played: Vec<Played> = logs.into_iter().flat_map(|l| l.faults).collect();
    played.sort_by_key(|p| p.started_ms);
    for p in &mut played {
        if let Target::Admin(slot) = p.fault.target {
            p.led = led(&leases, slot, p.started_ms - BEFORE_MS..p.ended_ms);
            if p.led && p.fault.kind.loses_the_lease() {
                extend_to_takeover(p, &leases);
            }
        }
    }
    let healed = played.iter().map(|p| p.ended_ms).max().unwrap_or(origin).max(origin + span);
    sleep_until(healed + TAIL_MS).await;

    let fires = [run.recorders[0].fires(), run.recorders[1].fires()].concat();
    let mut called_back = run.recorders[0].called_back();
    called_back.extend(run.recorders[1].called_back());
    let read_at = now_ms();
    let rows = run.direct.rows().await?;
    let last = stop_all(run, cluster).await;
    let mut windows: Vec<Window> = played
        .iter()
        .filter(|p| p.led)
        .flat_map(|p| p.windows.iter().map(|span| Window { what: p.fault.kind.name(), span: span.clone() }))
        .collect();
    windows.extend(no_admin_windows(&unable, cluster.len()));
    // Findings are attributed to the faults they happened in, whole (a clock fault's too).
    let mut spans: Vec<Window> = played
        .iter()
        .map(|p| Window {
            what: p.fault.kind.name(),
            span: p.started_ms - BEFORE_MS..p.ended_ms + RECOVERY_MS,
        })
        .collect();
    spans.extend(no_admin_windows(&unable, cluster.len()));
    let verdict = checker::check(&Evidence {
        jobs: &jobs,
        fires: &fires,
        rows: &rows,
        called_back: &called_back,
        windows: &windows,
        faults: &spans,
        first_fire_ms: first_fire,
        checked: first_fire + 1_000..read_at - NEWEST_CHECKED_MS,
        read_at_ms: read_at,
        origin_ms: origin,
    });
    Ok(Outcome {
        leases,
        origin_ms: origin,
        jobs: jobs.len(),
        drawn: faults.len(),
        played,
        windows,
        fires,
        rows,
        verdict,
        restarts,
        last,
        server,
    })
}

/// SIGTERM to every admin at once; how long each took to exit (killed after 30 s).
async fn stop_all(run: &Run, cluster: &mut [Slot]) -> Vec<(String, i64)> {
    let sent = now_ms();
    let mut stopping: Vec<(usize, AdminProcess)> = Vec::new();
    for slot in cluster.iter_mut() {
        if let Some(mut admin) = slot.admin.take() {
            let _ = admin.send_term();
            stopping.push((slot.index, admin));
        }
    }
    let mut exits: Vec<Option<i64>> = vec![None; stopping.len()];
    while exits.iter().any(Option::is_none) && now_ms() - sent < 30_000 {
        for ((_, admin), exit) in stopping.iter_mut().zip(exits.iter_mut()) {
            if exit.is_none() && admin.has_exited() {
                *exit = Some(now_ms() - sent);
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut took = Vec::new();
    for ((index, admin), exit) in stopping.into_iter().zip(exits) {
        took.push((admin.name.clone(), exit.unwrap_or(now_ms() - sent)));
        cluster[index].gone.push(admin);
        run.set_base(index, None);
    }
    took
}

/// Prints the report; on a finding, keeps the evidence and fails with the verdict last.
fn conclude(
    settings: &Settings,
    backend: Backend,
    run: &Run,
    cluster: &[Slot],
    outcome: Result<Outcome, Failed>,
    took_s: u64,
) -> TestResult {
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(e) => {
            let kept = keep_evidence(backend, &run.log_dir, None, "");
            return Err(format!(
                "{}\n{kept}\n{}\nreplay with: {}",
                log_tails(cluster),
                e.message().unwrap_or(""),
                settings.replay(backend)
            )
            .into());
        }
    };
    let mut findings: Vec<&Finding> = outcome.verdict.findings.iter().collect();
    let slow_exits = [slow_exits(&outcome.restarts, "clock-skew"), slow_exits(&outcome.last, "the end")];
    findings.extend(slow_exits.iter().flatten());
    let report = report(settings, backend, &outcome, took_s);
    if findings.is_empty() {
        eprintln!("campaign ({}): no finding\n{report}", backend.name());
        return Ok(());
    }
    let listed: Vec<String> = findings
        .iter()
        .map(|f| {
            let near: Vec<String> = f.near.iter().map(|(kind, n)| format!("{kind} {n}")).collect();
            format!(
                "- {}: {} case(s); in or near: {}; e.g.\n    {}",
                f.rule,
                f.count,
                near.join(", "),
                f.examples.join("\n    ")
            )
        })
        .collect();
    let text = format!(
        "{report}\n{} finding(s):\n{}\nreplay with: {}",
        findings.len(),
        listed.join("\n"),
        settings.replay(backend)
    );
    let kept = keep_evidence(backend, &run.log_dir, Some(&outcome), &text);
    // The verdict last, where a cut log (CI prints a run's end) still shows it.
    Err(format!(
        "{}\n--- database server:\n{}\n{kept}\n{text}",
        log_tails(cluster),
        outcome.server.log_tail()
    )
    .into())
}

/// A finding for each admin that took longer than its bound to exit after SIGTERM.
fn slow_exits(exits: &[(String, i64)], near: &'static str) -> Option<Finding> {
    let slow: Vec<String> = exits
        .iter()
        .filter(|(_, took)| *took > SHUTDOWN_BOUND_MS)
        .map(|(name, took)| format!("{name} exited {took} ms after SIGTERM"))
        .collect();
    (!slow.is_empty()).then(|| Finding {
        rule: "an admin took longer than its grace and 3 s to exit after SIGTERM",
        count: slow.len(),
        near: BTreeMap::from([(near, slow.len())]),
        examples: slow,
    })
}

/// The end of the running admins' logs and of the last ones gone.
fn log_tails(cluster: &[Slot]) -> String {
    let mut tails = Vec::new();
    for slot in cluster {
        let recent = slot.gone.iter().rev().take(2).rev().chain(&slot.admin);
        tails.extend(recent.map(|a| format!("--- {} ({}), last lines:\n{}", a.name, a.base, a.tail(15))));
    }
    tails.join("\n")
}

/// Seed, faults of each kind, the (job, instant) counts, lateness and exit times.
fn report(settings: &Settings, backend: Backend, outcome: &Outcome, took_s: u64) -> String {
    let mut kinds: BTreeMap<FaultKind, (usize, usize)> = BTreeMap::new();
    for played in &outcome.played {
        let (count, on_leader) = kinds.entry(played.fault.kind).or_default();
        *count += 1;
        *on_leader += usize::from(played.led);
    }
    let kinds: Vec<String> = kinds
        .iter()
        .map(|(kind, (count, on_leader))| match kind {
            FaultKind::DatabaseStop | FaultKind::ExecutorHang | FaultKind::ExecutorSlow => {
                format!("{} {count}", kind.name())
            }
            _ => format!("{} {count} ({on_leader} on the leader)", kind.name()),
        })
        .collect();
    let c = &outcome.verdict.counts;
    let exits = |exits: &[(String, i64)]| -> String {
        let worst = exits.iter().map(|e| e.1).max().unwrap_or(0);
        format!("{} admin(s), the slowest in {:.1} s", exits.len(), worst as f64 / 1000.0)
    };
    [
        format!(
            "seed {} ({}), {} s of faults, {} jobs on {} admin(s) on {}; the run took {took_s} s",
            settings.seed,
            if settings.random_seed { "random" } else { "fixed" },
            settings.seconds,
            outcome.jobs,
            outcome.last.len(),
            backend.name()
        ),
        format!("faults played: {} of {} drawn: {}", outcome.played.len(), outcome.drawn, kinds.join(", ")),
        format!(
            "(job, instant) pairs checked: {}: {} run once, {} settled by a row, {} never planned (a late pass \
             fired once for them), {} doubled, {} missing, {} off time outside the windows; {} misfire \
             compensations",
            c.instants, c.run, c.settled, c.skipped, c.doubled, c.missing, c.off_time, c.compensations
        ),
        format!(
            "fires received {}, log rows {}: {} stuck planned, {} stuck running",
            c.fires, c.rows, c.stuck_planned, c.stuck_running
        ),
        format!(
            "worst lateness: {} ms outside the fault windows, {} ms overall (compensations aside)",
            outcome.verdict.worst_calm_ms, outcome.verdict.worst_ms
        ),
        format!("SIGTERM: at the end {}; in clock faults' restarts {}", exits(&outcome.last), exits(&outcome.restarts)),
    ]
    .into_iter()
    .chain((outcome.played.len() <= TIMELINE_FAULTS).then(|| timeline(outcome)))
    .collect::<Vec<_>>()
    .join("\n")
}

/// The faults played, with their times in seconds from the fault phase's start.
fn timeline(outcome: &Outcome) -> String {
    let at = |ms: i64| format!("{:+.1}", (ms - outcome.origin_ms) as f64 / 1000.0);
    let lines: Vec<String> = outcome
        .played
        .iter()
        .map(|p| {
            let target = match p.fault.target {
                Target::Admin(slot) => {
                    format!(" of admin {} ({})", slot + 1, if p.led { "leader" } else { "standby" })
                }
                _ => String::new(),
            };
            let amount =
                if p.fault.amount_ms != 0 { format!(", {} ms", p.fault.amount_ms) } else { String::new() };
            let windows: Vec<String> =
                p.windows.iter().map(|w| format!("{}..{}", at(w.start), at(w.end))).collect();
            format!(
                "  {}..{} s: {}{target}{amount}; window {} s",
                at(p.started_ms),
                at(p.ended_ms),
                p.fault.kind.name(),
                windows.join(", ")
            )
        })
        .collect();
    let none_able = outcome.windows.iter().filter(|w| w.what == NO_ADMIN);
    let none_able: Vec<String> = none_able
        .map(|w| format!("  window {}..{} s: {NO_ADMIN}", at(w.span.start), at(w.span.end)))
        .collect();
    format!("faults (t+0 = the fault phase's start):\n{}", [lines, none_able].concat().join("\n"))
}

/// Copies the admins' logs, the fires and rows (CSV), the faults played and the report to
/// `target/tmp/campaign-<backend>`, replacing an earlier run's; says where, or why not.
fn keep_evidence(backend: Backend, log_dir: &Path, outcome: Option<&Outcome>, report: &str) -> String {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("campaign-{}", backend.name()));
    let _ = std::fs::remove_dir_all(&dir);
    let copy = || -> std::io::Result<()> {
        std::fs::create_dir_all(&dir)?;
        for entry in std::fs::read_dir(log_dir)? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "log") {
                std::fs::copy(&path, dir.join(path.file_name().unwrap_or_default()))?;
            }
        }
        std::fs::write(dir.join("report.txt"), report)?;
        let Some(outcome) = outcome else { return Ok(()) };
        let mut fires = String::from("received_ms,job_id,log_id,planned_ms,trigger_type\n");
        for f in &outcome.fires {
            let planned = f.planned_ms.map(|p| p.to_string()).unwrap_or_default();
            let kind = f.trigger_type.as_deref().unwrap_or("");
            fires.push_str(&format!("{},{},{},{planned},{kind}\n", f.at_ms, f.job_id, f.log_id));
        }
        std::fs::write(dir.join("fires.csv"), fires)?;
        let mut rows = String::from("id,job_id,trigger_ms,trigger_code,handle_code,trigger_msg\n");
        for r in &outcome.rows {
            let msg: String = r.trigger_msg.chars().take(60).collect::<String>().replace(['"', '\n'], " ");
            let at = r.trigger_ms.map(|t| t.to_string()).unwrap_or_default();
            rows.push_str(&format!(
                "{},{},{at},{},{},\"{msg}\"\n",
                r.id, r.job_id, r.trigger_code, r.handle_code
            ));
        }
        std::fs::write(dir.join("rows.csv"), rows)?;
        // Times in ms from the fault phase's start (the findings' t+).
        let at = |ms: i64| ms - outcome.origin_ms;
        let mut faults = String::from("kind,target,led,started_ms,ended_ms,amount_ms,windows\n");
        for p in &outcome.played {
            let windows: Vec<String> =
                p.windows.iter().map(|w| format!("{}..{}", at(w.start), at(w.end))).collect();
            faults.push_str(&format!(
                "{},{:?},{},{},{},{},{}\n",
                p.fault.kind.name(),
                p.fault.target,
                p.led,
                at(p.started_ms),
                at(p.ended_ms),
                p.fault.amount_ms,
                windows.join(" ")
            ));
        }
        for w in outcome.windows.iter().filter(|w| w.what == NO_ADMIN) {
            let (from, to) = (at(w.span.start), at(w.span.end));
            faults.push_str(&format!("{NO_ADMIN},,,{from},{to},0,{from}..{to}\n"));
        }
        std::fs::write(dir.join("faults.csv"), faults)?;
        let mut leases = String::from("seen_ms,lease\n");
        for (seen, lead) in &outcome.leases {
            let lead = match lead {
                Lead::Slot(slot) => format!("admin {}", slot + 1),
                other => format!("{other:?}"),
            };
            leases.push_str(&format!("{},{lead}\n", at(*seen)));
        }
        std::fs::write(dir.join("leases.csv"), leases)
    };
    match copy() {
        Ok(()) => format!(
            "admin logs, fires.csv, rows.csv, faults.csv, leases.csv and report.txt kept in {}",
            dir.display()
        ),
        Err(e) => format!("the evidence could not be kept in {}: {e}", dir.display()),
    }
}
