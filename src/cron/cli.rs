//! `xxl-job-admin cron`: prints the next fire times of an expression, to check a schedule by hand.

use std::io::Write;

use chrono::{DateTime, Local, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;

use super::{zone, CronExpression};

const USAGE: &str = "\
Usage: xxl-job-admin cron \"EXPRESSION\" [--from TIME] [--count N] [--tz ZONE] [--epoch-ms]

Prints the next fire times of a Quartz cron expression (seconds first, 6 or 7 fields), one per line,
each strictly after the one before; fewer when the schedule ends.

Options:
  --from TIME   start strictly after TIME: epoch milliseconds, or \"yyyy-MM-dd HH:mm:ss\" in the zone
                (default: now)
  --count N     how many fire times to print (default: 5)
  --tz ZONE     IANA time zone to evaluate in, e.g. Asia/Shanghai (default: the system zone)
  --epoch-ms    print epoch milliseconds instead of \"yyyy-MM-dd HH:mm:ss\"
  -h, --help    print this help
";

const TIME_FORMAT: &str = "%Y-%m-%d %H:%M:%S";

/// Runs `xxl-job-admin cron ...`; `args` are the words after "cron". Returns the process exit code:
/// 0 on success, 2 for bad usage or an invalid expression, 1 when the output cannot be written.
pub fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let request = match Request::parse(args) {
        Ok(Some(request)) => request,
        Ok(None) => return if out.write_all(USAGE.as_bytes()).is_ok() { 0 } else { 1 },
        Err(problem) => {
            // If stderr is gone there is nobody left to tell.
            let _ = write!(err, "xxl-job-admin cron: {problem}\n\n{USAGE}");
            return 2;
        }
    };
    let cron = match CronExpression::parse(&request.expression) {
        Ok(cron) => cron,
        Err(e) => {
            let _ = writeln!(err, "xxl-job-admin cron: invalid cron expression \"{}\": {e}", request.expression);
            return 2;
        }
    };
    let printed = match &request.zone {
        Some(zone) => request.print(&cron, zone, out),
        None => request.print(&cron, &Local, out),
    };
    match printed {
        Ok(()) => 0,
        Err(problem) => {
            let _ = writeln!(err, "xxl-job-admin cron: {problem}");
            if problem.usage { 2 } else { 1 }
        }
    }
}

/// A failure after the arguments were read: a `--from` that the zone cannot place, or a write error.
struct Failure {
    message: String,
    usage: bool,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

enum Start {
    Now,
    EpochMillis(i64),
    Local(NaiveDateTime),
}

struct Request {
    expression: String,
    from: Start,
    count: usize,
    zone: Option<Tz>,
    epoch_ms: bool,
}

impl Request {
    /// The request, or None when help was asked for.
    fn parse(args: &[String]) -> Result<Option<Request>, String> {
        let mut expression = None;
        let mut from = Start::Now;
        let mut count = 5;
        let mut zone = None;
        let mut epoch_ms = false;
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let (name, inline) = match arg.split_once('=') {
                Some((name, value)) if name.starts_with("--") => (name, Some(value.to_string())),
                _ => (arg.as_str(), None),
            };
            let mut value = || inline.clone().or_else(|| args.next().cloned()).ok_or(format!("{name} needs a value"));
            match name {
                "-h" | "--help" => return Ok(None),
                "--epoch-ms" if inline.is_some() => return Err("--epoch-ms takes no value".to_string()),
                "--epoch-ms" => epoch_ms = true,
                "--from" => from = parse_from(&value()?)?,
                "--count" => {
                    let text = value()?;
                    count = text.parse().map_err(|_| format!("--count must be a non-negative integer, got \"{text}\""))?;
                }
                "--tz" => {
                    let text = value()?;
                    zone = Some(text.parse::<Tz>().map_err(|_| format!("unknown time zone \"{text}\""))?);
                }
                _ if name.starts_with("--") => return Err(format!("unknown option {arg}")),
                _ if expression.is_none() => expression = Some(arg.clone()),
                _ => return Err(format!("unexpected argument \"{arg}\" (quote the expression as one argument)")),
            }
        }
        let expression = expression.ok_or("missing the cron expression")?;
        Ok(Some(Request { expression, from, count, zone, epoch_ms }))
    }

    fn print<Z: TimeZone>(&self, cron: &CronExpression, zone: &Z, out: &mut dyn Write) -> Result<(), Failure> {
        let mut at = self.start(zone)?;
        for _ in 0..self.count {
            let Some(next) = cron.next_after(&at) else { break };
            let line = if self.epoch_ms {
                next.timestamp_millis().to_string()
            } else {
                next.naive_local().format(TIME_FORMAT).to_string()
            };
            writeln!(out, "{line}").map_err(|e| Failure { message: format!("cannot write output: {e}"), usage: false })?;
            at = next;
        }
        Ok(())
    }

    fn start<Z: TimeZone>(&self, zone: &Z) -> Result<DateTime<Z>, Failure> {
        let unplaceable = |what: String| Failure { message: format!("--from {what} is out of range"), usage: true };
        match &self.from {
            Start::Now => Ok(Utc::now().with_timezone(zone)),
            Start::EpochMillis(ms) => zone.timestamp_millis_opt(*ms).single().ok_or_else(|| unplaceable(ms.to_string())),
            // Read the way xxl-job's Java date parsing reads it, DST corners included.
            Start::Local(wall) => zone::resolve(zone, *wall).ok_or_else(|| unplaceable(wall.to_string())),
        }
    }
}

fn parse_from(text: &str) -> Result<Start, String> {
    if let Ok(ms) = text.parse::<i64>() {
        return Ok(Start::EpochMillis(ms));
    }
    NaiveDateTime::parse_from_str(text, TIME_FORMAT)
        .map(Start::Local)
        .map_err(|_| format!("--from must be epoch milliseconds or \"yyyy-MM-dd HH:mm:ss\", got \"{text}\""))
}
