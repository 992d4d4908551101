//! `xxl-job-admin cron`: prints the next fire times of an expression, to check a schedule by hand.

use std::io::Write;

use chrono::{DateTime, Local, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;

use super::{zone, CronExpression};
use crate::cli::misuse::{self, Misuse};
use clap::{ArgAction, Parser};

const USAGE: &str = "\
Usage: xxl-job-admin cron \"EXPRESSION\" [--from TIME] [--count N] [--tz ZONE] [--epoch-ms]

Prints the next fire times of a Quartz cron expression (seconds first, 6 or 7 fields), one per line,
each strictly after the one before; fewer when the schedule ends. When it never fires after the start,
says so and exits with 1.

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
/// 0 on success, 2 for bad usage or an invalid expression, 1 when the expression never fires after the
/// start or the output cannot be written.
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
            let _ =
                writeln!(err, "xxl-job-admin cron: invalid cron expression \"{}\": {e}", request.expression);
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
            if problem.usage {
                2
            } else {
                1
            }
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

#[derive(Debug, Clone)]
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

/// `cron`'s command line.
#[derive(Parser, Debug)]
#[command(no_binary_name = true, disable_help_flag = true, args_override_self = true)]
struct CronLine {
    #[arg(short = 'h', long = "help", action = ArgAction::Help)]
    help: Option<bool>,
    #[arg(long, allow_hyphen_values = true, value_parser = parse_from)]
    from: Option<Start>,
    #[arg(long, allow_hyphen_values = true, value_parser = parse_count)]
    count: Option<usize>,
    #[arg(long, allow_hyphen_values = true, value_parser = parse_zone)]
    tz: Option<Tz>,
    #[arg(long)]
    epoch_ms: bool,
    expression: Option<String>,
}

impl Request {
    /// The request, or None when help was asked for.
    fn parse(args: &[String]) -> Result<Option<Request>, String> {
        // An expression starting with a minus ("-5 0 12 * * ?") is a wrong expression, not short options:
        // its own error says what is wrong in it.
        let (hyphenated, args): (Vec<String>, Vec<String>) = args
            .iter()
            .cloned()
            .partition(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(char::is_whitespace));
        let mut line = match misuse::parse::<CronLine>(&args) {
            Ok(line) => line,
            Err(Misuse::Help) => return Ok(None),
            Err(Misuse::Unknown(arg)) if arg.starts_with("--") => {
                return Err(format!("unknown option {arg}"))
            }
            Err(Misuse::Unknown(arg)) => {
                return Err(format!("unexpected argument \"{arg}\" (quote the expression as one argument)"))
            }
            Err(Misuse::NoValue(name)) => return Err(format!("{name} needs a value")),
            Err(Misuse::TakesNoValue(name)) => return Err(format!("{name} takes no value")),
            Err(Misuse::Refused(reason) | Misuse::Other(reason)) => return Err(reason),
        };
        if let Some(expression) = hyphenated.into_iter().next() {
            if let Some(first) = line.expression.replace(expression) {
                return Err(format!(
                    "unexpected argument \"{first}\" (quote the expression as one argument)"
                ));
            }
        }
        let expression = line.expression.ok_or("missing the cron expression")?;
        Ok(Some(Request {
            expression,
            from: line.from.unwrap_or(Start::Now),
            count: line.count.unwrap_or(5),
            zone: line.tz,
            epoch_ms: line.epoch_ms,
        }))
    }

    fn print<Z: TimeZone>(
        &self,
        cron: &CronExpression,
        zone: &Z,
        out: &mut dyn Write,
    ) -> Result<(), Failure> {
        let start = self.start(zone)?;
        let mut at = start.clone();
        for printed in 0..self.count {
            let Some(next) = cron.next_after(&at) else {
                // A valid expression that never fires again (`0 0 0 30 2 ?`, a past year) would otherwise
                // print nothing and look like success.
                if printed == 0 {
                    let after = start.naive_local().format(TIME_FORMAT);
                    return Err(Failure { message: format!("no fire time after {after}"), usage: false });
                }
                break;
            };
            let line = if self.epoch_ms {
                next.timestamp_millis().to_string()
            } else {
                next.naive_local().format(TIME_FORMAT).to_string()
            };
            writeln!(out, "{line}")
                .map_err(|e| Failure { message: format!("cannot write output: {e}"), usage: false })?;
            at = next;
        }
        Ok(())
    }

    fn start<Z: TimeZone>(&self, zone: &Z) -> Result<DateTime<Z>, Failure> {
        let unplaceable =
            |what: String| Failure { message: format!("--from {what} is out of range"), usage: true };
        match &self.from {
            Start::Now => Ok(Utc::now().with_timezone(zone)),
            Start::EpochMillis(ms) => {
                zone.timestamp_millis_opt(*ms).single().ok_or_else(|| unplaceable(ms.to_string()))
            }
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

fn parse_count(text: &str) -> Result<usize, String> {
    text.parse().map_err(|_| format!("--count must be a non-negative integer, got \"{text}\""))
}

fn parse_zone(text: &str) -> Result<Tz, String> {
    text.parse::<Tz>().map_err(|_| format!("unknown time zone \"{text}\""))
}

#[cfg(test)]
mod tests {
    use super::run;

    /// Runs the command with `args`; returns the exit code, stdout and stderr.
    fn cron(args: &[&str]) -> (i32, String, String) {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(&args, &mut out, &mut err);
        (code, String::from_utf8(out).expect("UTF-8 output"), String::from_utf8(err).expect("UTF-8 errors"))
    }

    #[test]
    fn prints_local_times_in_the_zone() {
        let (code, out, err) = cron(&[
            "0 0 12 ? * MON-FRI",
            "--from",
            "2025-01-03 12:00:00",
            "--tz",
            "Asia/Shanghai",
            "--count",
            "3",
        ]);
        assert_eq!((code, err.as_str()), (0, ""));
        assert_eq!(out, "2025-01-06 12:00:00\n2025-01-07 12:00:00\n2025-01-08 12:00:00\n");
    }

    #[test]
    fn epoch_milliseconds_in_and_out() {
        let (code, out, _) =
            cron(&["0 0 * * * ?", "--from=1735689600000", "--tz=UTC", "--count=2", "--epoch-ms"]);
        assert_eq!(code, 0);
        assert_eq!(out, "1735693200000\n1735696800000\n");
    }

    #[test]
    fn stops_when_the_schedule_ends() {
        let (code, out, _) =
            cron(&["0 0 0 1 1 ? 2026", "--from", "2025-06-01 00:00:00", "--tz", "UTC", "--count", "5"]);
        assert_eq!((code, out.as_str()), (0, "2026-01-01 00:00:00\n"));
    }

    #[test]
    fn no_fire_time_at_all_is_exit_1_with_the_reason() {
        // 30 February never comes; 2026 is over by June.
        for (expression, from) in
            [("0 0 0 30 2 ?", "2025-01-01 00:00:00"), ("0 0 0 1 1 ? 2026", "2026-06-01 00:00:00")]
        {
            let (code, out, err) = cron(&[expression, "--from", from, "--tz", "UTC"]);
            assert_eq!((code, out.as_str()), (1, ""), "{expression}");
            assert_eq!(err, format!("xxl-job-admin cron: no fire time after {from}\n"), "{expression}");
        }
    }

    #[test]
    fn defaults_to_five_fire_times_from_now() {
        let (code, out, _) = cron(&["* * * * * ?", "--tz", "UTC"]);
        assert_eq!(code, 0);
        assert_eq!(out.lines().count(), 5);
        let (code, out, _) = cron(&["* * * * * ?", "--count", "0"]);
        assert_eq!((code, out.as_str()), (0, ""));
    }

    #[test]
    fn from_reads_local_times_like_java() {
        // 02:30 does not exist on 30 March 2025 in Berlin; Java reads it as 03:30 CEST, so the next hour
        // is 04:00 CEST (02:00 UTC).
        let (code, out, _) = cron(&[
            "0 0 * * * ?",
            "--from",
            "2025-03-30 02:30:00",
            "--tz",
            "Europe/Berlin",
            "--count",
            "1",
            "--epoch-ms",
        ]);
        assert_eq!((code, out.as_str()), (0, "1743300000000\n"));
        // On 26 October 2025 02:45 happens twice; Quartz fires in the second occurrence (CET).
        let (code, out, _) = cron(&[
            "0 45 2 * * ?",
            "--from",
            "2025-10-26 02:30:00",
            "--tz",
            "Europe/Berlin",
            "--count",
            "1",
            "--epoch-ms",
        ]);
        assert_eq!((code, out.as_str()), (0, "1761443100000\n"));
    }

    #[test]
    fn invalid_expression_is_exit_2_with_the_reason() {
        let (code, out, err) = cron(&["0 0 0 * * *", "--tz", "UTC"]);
        assert_eq!((code, out.as_str()), (2, ""));
        assert!(
            err.contains("invalid cron expression \"0 0 0 * * *\"")
                && err.contains("exactly one of them must be '?'"),
            "{err}"
        );
        let (code, _, err) = cron(&["0 0 0 ? * 8"]);
        assert_eq!(code, 2);
        assert!(
            err.contains("values must be between 1 and 7 (in the day-of-week field '8', at column 11)"),
            "{err}"
        );
        // An expression that starts with a minus is an expression, and its error says what is wrong in it.
        let (code, _, err) = cron(&["-5 0 12 * * ?"]);
        assert_eq!(code, 2);
        assert!(err.contains("invalid cron expression \"-5 0 12 * * ?\""), "{err}");
    }

    #[test]
    fn bad_usage_is_exit_2_with_the_usage() {
        for (args, problem) in [
            (&[][..], "missing the cron expression"),
            (&["0 0 12 * * ?", "--count", "many"][..], "--count must be a non-negative integer"),
            (&["0 0 12 * * ?", "--count"][..], "--count needs a value"),
            (&["0 0 12 * * ?", "--tz", "Mars/Olympus"][..], "unknown time zone \"Mars/Olympus\""),
            (&["0 0 12 * * ?", "--from", "tomorrow"][..], "--from must be epoch milliseconds"),
            (&["0 0 12 * * ?", "--epoch-ms=yes"][..], "--epoch-ms takes no value"),
            (&["0 0 12 * * ?", "--verbose"][..], "unknown option --verbose"),
            (&["0", "0", "12", "*", "*", "?"][..], "quote the expression as one argument"),
        ] {
            let (code, out, err) = cron(args);
            assert_eq!((code, out.as_str()), (2, ""), "{args:?}");
            assert!(err.contains(problem) && err.contains("Usage:"), "{args:?}: {err}");
        }
    }

    #[test]
    fn options_are_read_as_before() {
        // The last of a repeated option wins; an option takes the next word as its value, whatever it is.
        let (code, out, _) = cron(&[
            "0 0 12 * * ?",
            "--count",
            "1",
            "--count=2",
            "--from",
            "2025-01-01 00:00:00",
            "--tz",
            "UTC",
        ]);
        assert_eq!((code, out.as_str()), (0, "2025-01-01 12:00:00\n2025-01-02 12:00:00\n"));
        for (args, message) in [
            (&["0 0 12 * * ?", "--count", "-3"][..], "--count must be a non-negative integer, got \"-3\""),
            (&["0 0 12 * * ?", "--count="], "--count must be a non-negative integer, got \"\""),
            (&["0 0 12 * * ?", "--verbose=3"], "unknown option --verbose=3"),
            (&["--verbose", "0 0 12 * * ?"], "unknown option --verbose"),
            (&["0 0 12 * * ?", "-v"], "unexpected argument \"-v\" (quote the expression as one argument)"),
            (&["0 0 12 * * ?", "--tz"], "--tz needs a value"),
        ] {
            let (code, _, err) = cron(args);
            assert_eq!(code, 2, "{args:?}");
            assert!(err.starts_with(&format!("xxl-job-admin cron: {message}\n\nUsage:")), "{args:?}: {err}");
        }
        // Help wins when asked before a mistake, not after one.
        assert_eq!(cron(&["-h", "--count", "x"]).0, 0);
        assert_eq!(cron(&["--count", "x", "-h"]).0, 2);
    }

    #[test]
    fn from_out_of_range_is_exit_2() {
        let (code, _, err) = cron(&["0 0 12 * * ?", "--from", "9223372036854775807", "--tz", "UTC"]);
        assert_eq!(code, 2);
        assert!(err.contains("is out of range"), "{err}");
    }

    #[test]
    fn help_goes_to_stdout() {
        for flag in ["-h", "--help"] {
            let (code, out, err) = cron(&[flag]);
            assert_eq!((code, err.as_str()), (0, ""));
            assert!(out.starts_with("Usage: xxl-job-admin cron"), "{out}");
        }
    }

    #[test]
    fn write_failure_is_exit_1() {
        struct Closed;
        impl std::io::Write for Closed {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let args = ["0 0 12 * * ?".to_string(), "--tz".to_string(), "UTC".to_string()];
        let mut err = Vec::new();
        assert_eq!(run(&args, &mut Closed, &mut err), 1);
        assert!(String::from_utf8_lossy(&err).contains("cannot write output"));
    }
}
