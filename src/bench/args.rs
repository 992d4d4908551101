//! The command line of `xxl-job-admin bench`.

use percent_encoding::percent_decode_str;
use std::net::Ipv4Addr;

pub const USAGE: &str = "\
Usage: xxl-job-admin bench [OPTIONS]

Measures the scheduler end to end against MariaDB/MySQL on this machine: for each job count it creates
a fresh database, starts an in-process executor and the admin as a child process, schedules that many
FIX_RATE 1 s jobs, and reports sustained triggers/s, fire lateness, CPU, memory and SQL per trigger,
next to the raw ceiling of the same statements without the admin.

Options:
  --jobs N[,N...]   job counts to run, one row each            [default: 1000,10000,100000]
  --seconds S       length of the measured window              [default: 30]
  --warmup S        seconds between the first fire and the window [default: 10]
  --mysql URL       server to use (loopback only); a database is created per row
                                                               [default: mysql://root@127.0.0.1:3306]
  --raw-only        measure only the raw database ceiling (no admin)
  --keep            keep the databases (xxl_bench_<pid>_<jobs>) afterwards
  -h, --help        show this text

Build with --release for meaningful numbers: cargo run --release -- bench --jobs 1000,10000
";

const DEFAULT_JOBS: [usize; 3] = [1_000, 10_000, 100_000];
const DEFAULT_SECONDS: u64 = 30;
const DEFAULT_WARMUP: u64 = 10;
const DEFAULT_MYSQL: &str = "mysql://root@127.0.0.1:3306";
/// Past this the job table alone outgrows a small machine; nothing else depends on it.
const MAX_JOBS: usize = 1_000_000;
const MAX_SECONDS: u64 = 3_600;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub jobs: Vec<usize>,
    pub seconds: u64,
    pub warmup: u64,
    pub mysql: MySqlTarget,
    pub raw_only: bool,
    pub keep: bool,
}

/// Where MariaDB listens, and as whom the benchmark and the admin connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MySqlTarget {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Run(Options),
    Help,
}

pub fn parse(args: &[String]) -> Result<Command, String> {
    let mut options = Options {
        jobs: DEFAULT_JOBS.to_vec(),
        seconds: DEFAULT_SECONDS,
        warmup: DEFAULT_WARMUP,
        mysql: parse_mysql(DEFAULT_MYSQL)?,
        raw_only: false,
        keep: false,
    };
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = || inline.clone().or_else(|| rest.next().cloned()).ok_or_else(|| format!("{name} needs a value"));
        match name {
            "-h" | "--help" => return Ok(Command::Help),
            "--jobs" => options.jobs = parse_jobs(&value()?)?,
            "--seconds" => options.seconds = parse_count(name, &value()?, 1, MAX_SECONDS)?,
            "--warmup" => options.warmup = parse_count(name, &value()?, 0, MAX_SECONDS)?,
            "--mysql" => options.mysql = parse_mysql(&value()?)?,
            "--raw-only" | "--keep" if inline.is_some() => return Err(format!("{name} takes no value")),
            "--raw-only" => options.raw_only = true,
            "--keep" => options.keep = true,
            _ => return Err(format!("unknown argument `{arg}`")),
        }
    }
    Ok(Command::Run(options))
}

fn parse_jobs(text: &str) -> Result<Vec<usize>, String> {
    text.split(',')
        .map(|item| parse_count("--jobs", item, 1, MAX_JOBS as u64).map(|n| n as usize))
        .collect()
}

fn parse_count(name: &str, text: &str, min: u64, max: u64) -> Result<u64, String> {
    let value: u64 = text.trim().parse().map_err(|_| format!("{name}: `{text}` is not a whole number"))?;
    if !(min..=max).contains(&value) {
        return Err(format!("{name}: {value} is outside {min}..={max}"));
    }
    Ok(value)
}

/// `mysql://user[:password]@host[:port]`; the host must be this machine, whose CPU the report attributes.
fn parse_mysql(text: &str) -> Result<MySqlTarget, String> {
    let url = url::Url::parse(text).map_err(|e| format!("--mysql: `{text}` is not a URL: {e}"))?;
    if !matches!(url.scheme(), "mysql" | "mariadb") {
        return Err(format!("--mysql: expected mysql://user@127.0.0.1:3306, got scheme `{}`", url.scheme()));
    }
    if !matches!(url.path(), "" | "/") || url.query().is_some() {
        return Err("--mysql: give no database or parameters; each row creates its own database".into());
    }
    // `mysql:` is not a scheme the URL standard knows, so its host comes back as an unparsed name.
    let host = match url.host_str() {
        Some("localhost") => "127.0.0.1".to_string(),
        Some(host) if host.parse::<Ipv4Addr>().is_ok_and(|ip| ip.is_loopback()) => host.to_string(),
        _ => return Err("--mysql: the server must be on this machine (127.0.0.1)".into()),
    };
    let decode = |s: &str| percent_decode_str(s).decode_utf8().map(|s| s.into_owned()).map_err(|_| "--mysql: credentials are not UTF-8".to_string());
    let user = decode(url.username())?;
    Ok(MySqlTarget {
        host,
        port: url.port().unwrap_or(3306),
        user: if user.is_empty() { "root".into() } else { user },
        password: url.password().map(decode).transpose()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn run(list: &[&str]) -> Options {
        match parse(&args(list)).unwrap() {
            Command::Run(options) => options,
            Command::Help => panic!("unexpected help"),
        }
    }

    #[test]
    fn defaults() {
        let o = run(&[]);
        assert_eq!(o.jobs, vec![1_000, 10_000, 100_000]);
        assert_eq!((o.seconds, o.warmup, o.raw_only, o.keep), (30, 10, false, false));
        assert_eq!(o.mysql, MySqlTarget { host: "127.0.0.1".into(), port: 3306, user: "root".into(), password: None });
    }

    #[test]
    fn values_with_space_or_equals() {
        let o = run(&["--jobs", "1000,10000", "--seconds=20", "--warmup", "0", "--raw-only", "--keep"]);
        assert_eq!(o.jobs, vec![1_000, 10_000]);
        assert_eq!((o.seconds, o.warmup, o.raw_only, o.keep), (20, 0, true, true));
    }

    #[test]
    fn mysql_urls() {
        let o = run(&["--mysql", "mysql://bench:p%40ss@localhost:3307"]);
        assert_eq!(o.mysql, MySqlTarget { host: "127.0.0.1".into(), port: 3307, user: "bench".into(), password: Some("p@ss".into()) });
        for bad in ["mysql://root@10.0.0.5:3306", "postgres://root@127.0.0.1", "mysql://root@127.0.0.1/xxl_job", "nonsense"] {
            assert!(parse(&args(&["--mysql", bad])).is_err(), "{bad}");
        }
    }

    #[test]
    fn rejects_bad_input() {
        for bad in [
            &["--jobs", "0"][..],
            &["--jobs", "10,x"],
            &["--jobs", "2000000"],
            &["--seconds", "0"],
            &["--warmup", "-1"],
            &["--seconds"],
            &["--keep=yes"],
            &["--verbose"],
        ] {
            assert!(parse(&args(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn help() {
        assert_eq!(parse(&args(&["--jobs", "5", "-h"])).unwrap(), Command::Help);
    }
}
