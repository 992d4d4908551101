//! The command line of `xxl-job-bench`.

use clap::{ArgAction, Parser};
use percent_encoding::percent_decode_str;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use xxl_job_admin::cli::misuse::{self, Misuse};

pub const USAGE: &str = "\
Usage: xxl-job-bench [OPTIONS]

Measures the scheduler end to end on this machine. For each row it creates a fresh database, starts an
in-process executor that records every /run with its planned instant (header Xxl-Job-Planned-Time) and
the admin (xxl-job-admin, found beside this program) as a child process, activates the bench jobs, and
reports fires sent, lateness (arrival − planned instant), duplicates and missing fires counted by planned
instant, CPU of the admin and of the database server (% of a core and µs per trigger) and peak RSS.

Modes (one per run):
  sustained (default): N jobs firing every second, one row per storage × phase × job count
  --burst N[,N...]    N jobs all due once at the same instant, one row per storage × N
  --raw-only          the MariaDB ceiling: the admin's per-trigger writes issued without the admin
  --workflow          one 10-node workflow (a → b1..b5 → c → d → e → f, each node a run of one job) started
                      --runs times at once, one row per storage: from each node's callback to the /run of
                      each successor it made ready (a join: from its last upstream callback), runs
                      finished, wall time, CPU, peak RSS; and the validation time of a 500-node definition
  --peer PATH         sustained, aligned, beside the peer: first the ratch-job executable at PATH (started
                      in a fresh temporary data directory, the executor registered to it, the jobs created
                      through its open API), then the admin rows, then the ratios ours / peer
                      [jobs default: 10000]

Options:
  --jobs N[,N...]     job counts of the sustained mode          [default: 1000,5000,10000]
  --phase P[,P...]    aligned: every job `* * * * * ?` (CRON), all due at the top of each second;
                      spread: FIX_RATE 1 s jobs spread evenly over the second  [default: aligned,spread]
  --storage S[,S...]  mysql: a database on the local MariaDB (--mysql);
                      postgres: a database on the local PostgreSQL (--postgres);
                      sqlite: an SQLite file in a temporary directory          [default: mysql,sqlite]
  --seconds S         length of the measured window              [default: 30]
  --runs N            runs of the workflow mode, all started at once [default: 1000]
  --warmup S          seconds between the first fire and the window [default: 10]
  --mysql URL         MariaDB/MySQL server (loopback only)       [default: mysql://root@127.0.0.1:3306]
  --postgres URL      PostgreSQL server (loopback only)          [default: postgres://postgres@127.0.0.1:5432]
  --admin PATH        the admin executable                       [default: xxl-job-admin beside this one]
  --keep              keep the databases afterwards (xxl_bench_<pid>_<row>, or the SQLite files)
  -h, --help          show this text

Build both programs with --release for meaningful numbers:
  cargo build --release && target/release/xxl-job-bench --jobs 10000 --phase aligned
";

const DEFAULT_JOBS: [usize; 3] = [1_000, 5_000, 10_000];
/// The shape the peer's figures are quoted at (issue 22): 10,000 jobs due at the top of every second.
const DEFAULT_PEER_JOBS: [usize; 1] = [10_000];
const DEFAULT_SECONDS: u64 = 30;
const DEFAULT_WARMUP: u64 = 10;
/// The servers, with the superuser and port each is installed with.
const MYSQL: ServerKind =
    ServerKind { option: "--mysql", schemes: &["mysql", "mariadb"], user: "root", port: 3306 };
const POSTGRES: ServerKind =
    ServerKind { option: "--postgres", schemes: &["postgres", "postgresql"], user: "postgres", port: 5432 };
/// Past this the job table alone outgrows a small machine; nothing else depends on it.
const MAX_JOBS: usize = 1_000_000;
/// The workflow mode's run count as the issue states its figures.
const DEFAULT_WORKFLOW_RUNS: usize = 1_000;
/// A million node runs; past it admitting the runs (one transaction each) alone would take minutes.
const MAX_WORKFLOW_RUNS: usize = 100_000;
const MAX_SECONDS: u64 = 3_600;

/// Where the admin keeps its data. A new backend is one more variant here, one more arm in
/// `db::RowDb`, its datasource URL in `db::RowDb::create`, and its server (if any) in `db::Servers`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    MySql,
    Postgres,
    Sqlite,
}

impl Storage {
    pub const ALL: [Storage; 3] = [Storage::MySql, Storage::Postgres, Storage::Sqlite];
    /// Without `--storage`: the backends of the README's figures, which need no PostgreSQL server.
    const DEFAULT: [Storage; 2] = [Storage::MySql, Storage::Sqlite];

    pub fn name(self) -> &'static str {
        match self {
            Storage::MySql => "mysql",
            Storage::Postgres => "postgres",
            Storage::Sqlite => "sqlite",
        }
    }
}

/// When in the second the jobs of a sustained row are due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// All at the top of every second.
    Aligned,
    /// Job `i` of `N` at `i·1000/N` ms into every second.
    Spread,
}

impl Phase {
    pub const ALL: [Phase; 2] = [Phase::Aligned, Phase::Spread];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Aligned => "aligned",
            Phase::Spread => "spread",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Workload {
    Sustained {
        jobs: Vec<usize>,
        phases: Vec<Phase>,
    },
    Burst(Vec<usize>),
    RawCeiling(Vec<usize>),
    /// `runs` runs of the bench workflow started at once.
    Workflow {
        runs: usize,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub workload: Workload,
    pub storages: Vec<Storage>,
    pub seconds: u64,
    pub warmup: u64,
    pub mysql: ServerTarget,
    pub postgres: ServerTarget,
    pub admin: Option<PathBuf>,
    /// The ratch-job executable to measure first (sustained, aligned rows only).
    pub peer: Option<PathBuf>,
    pub keep: bool,
}

/// Where a database server (MariaDB, PostgreSQL) listens, and as whom the benchmark and the admin connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerTarget {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Run(Box<Options>),
    Help,
}

/// The command line as clap reads it, each value checked by its own parser.
#[derive(Parser, Debug)]
#[command(no_binary_name = true, disable_help_flag = true, args_override_self = true)]
struct BenchLine {
    #[arg(short = 'h', long = "help", action = ArgAction::Help)]
    help: Option<bool>,
    // `std::vec::Vec` spelled out: clap then reads one value that is a list (`--jobs 1000,5000`), where a
    // plain `Vec` would collect one value per occurrence.
    #[arg(long, allow_hyphen_values = true, value_parser = |text: &str| parse_jobs("--jobs", text))]
    jobs: Option<std::vec::Vec<usize>>,
    #[arg(long, allow_hyphen_values = true, value_parser = |text: &str| parse_jobs("--burst", text))]
    burst: Option<std::vec::Vec<usize>>,
    #[arg(
        long,
        allow_hyphen_values = true,
        value_parser = |text: &str| parse_list("--phase", text, &Phase::ALL, Phase::name)
    )]
    phase: Option<std::vec::Vec<Phase>>,
    #[arg(
        long,
        allow_hyphen_values = true,
        value_parser = |text: &str| parse_list("--storage", text, &Storage::ALL, Storage::name)
    )]
    storage: Option<std::vec::Vec<Storage>>,
    #[arg(
        long,
        allow_hyphen_values = true,
        value_parser = |text: &str| parse_count("--seconds", text, 1, MAX_SECONDS)
    )]
    seconds: Option<u64>,
    #[arg(
        long,
        allow_hyphen_values = true,
        value_parser = |text: &str| parse_count("--warmup", text, 0, MAX_SECONDS)
    )]
    warmup: Option<u64>,
    #[arg(long, allow_hyphen_values = true, value_parser = |text: &str| MYSQL.parse(text))]
    mysql: Option<ServerTarget>,
    #[arg(long, allow_hyphen_values = true, value_parser = |text: &str| POSTGRES.parse(text))]
    postgres: Option<ServerTarget>,
    #[arg(long, allow_hyphen_values = true)]
    admin: Option<PathBuf>,
    #[arg(long, allow_hyphen_values = true)]
    peer: Option<PathBuf>,
    #[arg(long)]
    raw_only: bool,
    #[arg(long)]
    workflow: bool,
    #[arg(
        long,
        allow_hyphen_values = true,
        value_parser = |text: &str| parse_count("--runs", text, 1, MAX_WORKFLOW_RUNS as u64).map(|n| n as usize)
    )]
    runs: Option<usize>,
    #[arg(long)]
    keep: bool,
}

pub fn parse(args: &[String]) -> Result<Command, String> {
    let mut line = match misuse::parse::<BenchLine>(args) {
        Ok(line) => line,
        Err(Misuse::Help) => return Ok(Command::Help),
        Err(Misuse::Unknown(arg)) => return Err(format!("unknown argument `{arg}`")),
        Err(Misuse::NoValue(name)) => return Err(format!("{name} needs a value")),
        Err(Misuse::TakesNoValue(name)) => return Err(format!("{name} takes no value")),
        Err(Misuse::Refused(reason) | Misuse::Other(reason)) => return Err(reason),
    };
    if line.peer.is_some() {
        if line.burst.is_some() || line.raw_only || line.workflow {
            return Err("--peer measures the sustained mode: drop --burst, --raw-only and --workflow".into());
        }
        // The peer's CRON has whole seconds only, so its jobs cannot be spread over the second.
        if line.phase.as_ref().is_some_and(|p| p != &[Phase::Aligned]) {
            return Err("--peer measures the aligned phase only: drop --phase or give --phase aligned".into());
        }
        line.phase = Some(vec![Phase::Aligned]);
        line.jobs = line.jobs.or_else(|| Some(DEFAULT_PEER_JOBS.to_vec()));
    }
    let workload = workload(&mut line)?;
    Ok(Command::Run(Box::new(Options {
        workload,
        storages: line.storage.unwrap_or_else(|| Storage::DEFAULT.to_vec()),
        seconds: line.seconds.unwrap_or(DEFAULT_SECONDS),
        warmup: line.warmup.unwrap_or(DEFAULT_WARMUP),
        mysql: line.mysql.unwrap_or_else(|| MYSQL.default_target()),
        postgres: line.postgres.unwrap_or_else(|| POSTGRES.default_target()),
        admin: line.admin,
        peer: line.peer,
        keep: line.keep,
    })))
}

/// The mode the options choose, refusing options the mode sets itself; the raw ceiling pins the storage.
fn workload(line: &mut BenchLine) -> Result<Workload, String> {
    if usize::from(line.burst.is_some()) + usize::from(line.raw_only) + usize::from(line.workflow) > 1 {
        return Err("--burst, --raw-only and --workflow are different modes; choose one".into());
    }
    if line.runs.is_some() && !line.workflow {
        return Err("--runs is the run count of --workflow: add --workflow or drop --runs".into());
    }
    if line.workflow {
        if line.jobs.is_some() || line.phase.is_some() || line.seconds.is_some() || line.warmup.is_some() {
            return Err(
                "--workflow sets its own job and runs until every run has ended: drop --jobs, --phase, --seconds, --warmup".into()
            );
        }
        return Ok(Workload::Workflow { runs: line.runs.unwrap_or(DEFAULT_WORKFLOW_RUNS) });
    }
    match (line.burst.take(), line.raw_only) {
        (Some(sizes), _) => {
            if line.jobs.is_some() || line.phase.is_some() || line.seconds.is_some() || line.warmup.is_some()
            {
                return Err(
                    "--burst sets its own job counts and timing: drop --jobs, --phase, --seconds, --warmup"
                        .into(),
                );
            }
            Ok(Workload::Burst(sizes))
        }
        (None, true) => {
            if line.phase.is_some() || line.storage.as_ref().is_some_and(|s| s != &[Storage::MySql]) {
                return Err("--raw-only measures MariaDB alone: drop --phase and --storage".into());
            }
            line.storage = Some(vec![Storage::MySql]);
            Ok(Workload::RawCeiling(line.jobs.take().unwrap_or_else(|| DEFAULT_JOBS.to_vec())))
        }
        (None, false) => Ok(Workload::Sustained {
            jobs: line.jobs.take().unwrap_or_else(|| DEFAULT_JOBS.to_vec()),
            phases: line.phase.take().unwrap_or_else(|| Phase::ALL.to_vec()),
        }),
    }
}

fn parse_jobs(name: &str, text: &str) -> Result<Vec<usize>, String> {
    text.split(',').map(|item| parse_count(name, item, 1, MAX_JOBS as u64).map(|n| n as usize)).collect()
}

/// A comma-separated list of names from `all`, each at most once, in the order given.
fn parse_list<T: Copy + PartialEq>(
    name: &str,
    text: &str,
    all: &[T],
    label: fn(T) -> &'static str,
) -> Result<Vec<T>, String> {
    let mut picked = Vec::new();
    for item in text.split(',').map(str::trim) {
        let Some(value) = all.iter().copied().find(|v| label(*v) == item) else {
            let known: Vec<&str> = all.iter().map(|v| label(*v)).collect();
            return Err(format!("{name}: `{item}` is not one of {}", known.join(", ")));
        };
        if picked.contains(&value) {
            return Err(format!("{name}: `{item}` given twice"));
        }
        picked.push(value);
    }
    Ok(picked)
}

fn parse_count(name: &str, text: &str, min: u64, max: u64) -> Result<u64, String> {
    let value: u64 = text.trim().parse().map_err(|_| format!("{name}: `{text}` is not a whole number"))?;
    if !(min..=max).contains(&value) {
        return Err(format!("{name}: {value} is outside {min}..={max}"));
    }
    Ok(value)
}

/// How the URL of a database server option is read.
struct ServerKind {
    option: &'static str,
    schemes: &'static [&'static str],
    user: &'static str,
    port: u16,
}

impl ServerKind {
    fn default_target(&self) -> ServerTarget {
        ServerTarget { host: "127.0.0.1".into(), port: self.port, user: self.user.into(), password: None }
    }

    /// `scheme://user[:password]@host[:port]`; the host must be this machine, whose CPU the report
    /// attributes.
    fn parse(&self, text: &str) -> Result<ServerTarget, String> {
        let option = self.option;
        let url = url::Url::parse(text).map_err(|e| format!("{option}: `{text}` is not a URL: {e}"))?;
        if !self.schemes.contains(&url.scheme()) {
            let example = format!("{}://{}@127.0.0.1:{}", self.schemes[0], self.user, self.port);
            return Err(format!("{option}: expected {example}, got scheme `{}`", url.scheme()));
        }
        if !matches!(url.path(), "" | "/") || url.query().is_some() {
            return Err(format!(
                "{option}: give no database or parameters; each row creates its own database"
            ));
        }
        // Neither scheme is one the URL standard knows, so the host comes back as an unparsed name.
        let host = match url.host_str() {
            Some("localhost") => "127.0.0.1".to_string(),
            Some(host) if host.parse::<Ipv4Addr>().is_ok_and(|ip| ip.is_loopback()) => host.to_string(),
            _ => return Err(format!("{option}: the server must be on this machine (127.0.0.1)")),
        };
        let decode = |s: &str| {
            percent_decode_str(s)
                .decode_utf8()
                .map(|s| s.into_owned())
                .map_err(|_| format!("{option}: credentials are not UTF-8"))
        };
        let user = decode(url.username())?;
        Ok(ServerTarget {
            host,
            port: url.port().unwrap_or(self.port),
            user: if user.is_empty() { self.user.into() } else { user },
            password: url.password().map(decode).transpose()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn run(list: &[&str]) -> Options {
        match parse(&args(list)).unwrap() {
            Command::Run(options) => *options,
            Command::Help => panic!("unexpected help"),
        }
    }

    #[test]
    fn defaults() {
        let o = run(&[]);
        assert_eq!(
            o.workload,
            Workload::Sustained {
                jobs: vec![1_000, 5_000, 10_000],
                phases: vec![Phase::Aligned, Phase::Spread]
            }
        );
        assert_eq!(o.storages, vec![Storage::MySql, Storage::Sqlite]);
        assert_eq!((o.seconds, o.warmup, o.keep, o.admin, o.peer), (30, 10, false, None, None));
        assert_eq!(
            o.mysql,
            ServerTarget { host: "127.0.0.1".into(), port: 3306, user: "root".into(), password: None }
        );
        assert_eq!(
            o.postgres,
            ServerTarget { host: "127.0.0.1".into(), port: 5432, user: "postgres".into(), password: None }
        );
    }

    #[test]
    fn values_with_space_or_equals() {
        let o = run(&[
            "--jobs",
            "1000,10000",
            "--seconds=20",
            "--warmup",
            "0",
            "--keep",
            "--admin=/opt/x",
            "--phase=spread",
        ]);
        assert_eq!(
            o.workload,
            Workload::Sustained { jobs: vec![1_000, 10_000], phases: vec![Phase::Spread] }
        );
        assert_eq!((o.seconds, o.warmup, o.keep, o.admin), (20, 0, true, Some(PathBuf::from("/opt/x"))));
    }

    #[test]
    fn lists_keep_their_order() {
        let o = run(&["--storage", "sqlite,postgres,mysql", "--phase", "spread, aligned"]);
        assert_eq!(o.storages, vec![Storage::Sqlite, Storage::Postgres, Storage::MySql]);
        assert!(
            matches!(o.workload, Workload::Sustained { phases, .. } if phases == vec![Phase::Spread, Phase::Aligned])
        );
    }

    #[test]
    fn burst_mode() {
        let o = run(&["--burst", "10000,50000", "--storage", "mysql"]);
        assert_eq!((o.workload, o.storages), (Workload::Burst(vec![10_000, 50_000]), vec![Storage::MySql]));
        for bad in [
            &["--burst", "10", "--jobs", "5"][..],
            &["--burst", "10", "--phase", "aligned"],
            &["--burst", "10", "--raw-only"],
            &["--burst", "10", "--seconds", "5"],
        ] {
            assert!(parse(&args(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn raw_only_is_mysql_alone() {
        let o = run(&["--raw-only", "--jobs", "500"]);
        assert_eq!((o.workload, o.storages), (Workload::RawCeiling(vec![500]), vec![Storage::MySql]));
        assert_eq!(run(&["--raw-only", "--storage", "mysql"]).storages, vec![Storage::MySql]);
        assert!(parse(&args(&["--raw-only", "--storage", "sqlite"])).is_err());
        assert!(parse(&args(&["--raw-only", "--storage", "postgres"])).is_err());
        assert!(parse(&args(&["--raw-only", "--phase", "spread"])).is_err());
    }

    #[test]
    fn workflow_mode() {
        let o = run(&["--workflow", "--storage", "sqlite,mysql,postgres"]);
        assert_eq!(o.workload, Workload::Workflow { runs: 1_000 });
        assert_eq!(o.storages, vec![Storage::Sqlite, Storage::MySql, Storage::Postgres]);
        assert_eq!(run(&["--runs=250", "--workflow"]).workload, Workload::Workflow { runs: 250 });
        assert_eq!(run(&["--workflow"]).storages, vec![Storage::MySql, Storage::Sqlite]);
        for bad in [
            &["--workflow", "--jobs", "5"][..],
            &["--workflow", "--phase", "aligned"],
            &["--workflow", "--seconds", "5"],
            &["--workflow", "--warmup", "0"],
            &["--workflow", "--burst", "10"],
            &["--workflow", "--raw-only"],
            &["--workflow", "--peer", "x"],
            &["--workflow", "--runs", "0"],
            &["--workflow", "--runs", "100001"],
            &["--workflow=yes"],
            &["--runs", "10"],
        ] {
            assert!(parse(&args(bad)).is_err(), "{bad:?}");
        }
        assert_eq!(
            parse(&args(&["--runs", "10"])).unwrap_err(),
            "--runs is the run count of --workflow: add --workflow or drop --runs"
        );
    }

    #[test]
    fn peer_mode_is_sustained_and_aligned() {
        let o = run(&["--peer", "/tmp/ratchjob", "--storage", "sqlite"]);
        assert_eq!(o.workload, Workload::Sustained { jobs: vec![10_000], phases: vec![Phase::Aligned] });
        assert_eq!((o.peer, o.storages), (Some(PathBuf::from("/tmp/ratchjob")), vec![Storage::Sqlite]));
        let o = run(&["--peer=/tmp/ratchjob", "--jobs", "200", "--phase", "aligned", "--seconds", "10"]);
        assert_eq!(o.workload, Workload::Sustained { jobs: vec![200], phases: vec![Phase::Aligned] });
        for bad in [
            &["--peer", "x", "--phase", "spread"][..],
            &["--peer", "x", "--burst", "10"],
            &["--peer", "x", "--raw-only"],
            &["--peer"],
        ] {
            assert!(parse(&args(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn mysql_urls() {
        let o = run(&["--mysql", "mysql://bench:p%40ss@localhost:3307"]);
        assert_eq!(
            o.mysql,
            ServerTarget {
                host: "127.0.0.1".into(),
                port: 3307,
                user: "bench".into(),
                password: Some("p@ss".into())
            }
        );
        assert_eq!(
            run(&["--mysql=mariadb://127.0.0.2"]).mysql,
            ServerTarget { host: "127.0.0.2".into(), ..MYSQL.default_target() }
        );
        for bad in [
            "mysql://root@10.0.0.5:3306",
            "postgres://root@127.0.0.1",
            "mysql://root@127.0.0.1/xxl_job",
            "nonsense",
        ] {
            assert!(parse(&args(&["--mysql", bad])).is_err(), "{bad}");
        }
    }

    #[test]
    fn postgres_urls() {
        let o = run(&["--storage", "postgres", "--postgres", "postgresql://bench:p%40ss@localhost:5433"]);
        assert_eq!(o.storages, vec![Storage::Postgres]);
        assert_eq!(
            o.postgres,
            ServerTarget {
                host: "127.0.0.1".into(),
                port: 5433,
                user: "bench".into(),
                password: Some("p@ss".into())
            }
        );
        // The user and port default to the server's own, not MariaDB's.
        assert_eq!(run(&["--postgres=postgres://127.0.0.1"]).postgres, POSTGRES.default_target());
        assert_eq!(run(&["--postgres", "postgres://app@127.0.0.1"]).postgres.user, "app");
        for bad in [
            "postgres://postgres@10.0.0.5:5432",
            "postgres://postgres@db.internal",
            "mysql://root@127.0.0.1",
            "postgres://postgres@127.0.0.1/xxl_job",
            "postgres://postgres@127.0.0.1?sslmode=disable",
            "jdbc:postgresql://127.0.0.1:5432",
        ] {
            let error = parse(&args(&["--postgres", bad])).unwrap_err();
            assert!(error.starts_with("--postgres: "), "{bad}: {error}");
        }
    }

    #[test]
    fn rejects_bad_input() {
        for bad in [
            &["--jobs", "0"][..],
            &["--jobs", "10,x"],
            &["--jobs", "2000000"],
            &["--burst", ""],
            &["--seconds", "0"],
            &["--warmup", "-1"],
            &["--seconds"],
            &["--keep=yes"],
            &["--phase", "sometimes"],
            &["--phase", "aligned,aligned"],
            &["--storage", "oracle"],
            &["--storage", "postgres,postgres"],
            &["--postgres"],
            &["--storage", ""],
            &["--verbose"],
        ] {
            assert!(parse(&args(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn messages_name_the_option() {
        for (line, message) in [
            (&["--keep=yes"][..], "--keep takes no value"),
            (&["--seconds"], "--seconds needs a value"),
            (&["--verbose"], "unknown argument `--verbose`"),
            (&["--verbose=3"], "unknown argument `--verbose=3`"),
            (&["positional"], "unknown argument `positional`"),
            (&["--jobs", "10,x"], "--jobs: `x` is not a whole number"),
            (&["--warmup", "-1"], "--warmup: `-1` is not a whole number"),
            (&["--storage", "oracle"], "--storage: `oracle` is not one of mysql, postgres, sqlite"),
        ] {
            assert_eq!(parse(&args(line)).unwrap_err(), message, "{line:?}");
        }
        // The last of a repeated option wins.
        assert_eq!(run(&["--seconds", "5", "--seconds=7"]).seconds, 7);
    }

    #[test]
    fn help() {
        assert_eq!(parse(&args(&["--jobs", "5", "-h"])).unwrap(), Command::Help);
        assert_eq!(parse(&args(&["-h", "--jobs", "0"])).unwrap(), Command::Help);
        assert!(parse(&args(&["--jobs", "0", "-h"])).is_err());
    }
}
