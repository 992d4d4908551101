//! The commands that act on the configured database without serving it: `export` and `apply`
//! (docs/jobs-as-code.md). They read the server's configuration from the same sources (file, environment,
//! `--key=value`) and act as an administrator: whoever holds the database's configuration holds its rows.

use crate::config::Config;
use crate::i18n::I18n;
use crate::service::jobs_as_code::{self, read_documents, ApplyOptions, Format, Setting};
use crate::service::ServiceError;
use crate::storage;
use crate::time::{Clock, SystemClock};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Exit status of a refused command line (a usage or configuration error).
const USAGE: i32 = 2;
/// Exit status of a command that ran and failed (the database, the file, a refused document).
const FAILED: i32 = 1;

const USAGE_TEXT: &str = "\
Usage: xxl-job-admin export [--group APP]... [--glue-history] [-o FILE.json|FILE.toml] [--KEY=VALUE ...]
       xxl-job-admin apply -f FILE|FOLDER [--dry-run] [--prune] [--KEY=VALUE ...]

export writes the executors (all, or each --group) and their jobs as a document, JSON on standard output
without -o; --glue-history adds each GLUE job's version history. apply creates what the document has and the database lacks, updates what differs and, with
--prune, deletes the jobs of its executors that it does not list; --dry-run prints the plan only.
The database is the server's: the same configuration file, environment and --KEY=VALUE arguments.
Exit status: 0 done or planned, 1 failed, 2 bad arguments. See docs/jobs-as-code.md.
";

/// What the command line asks, apart from the configuration.
#[derive(Debug, Default)]
struct Request {
    groups: Vec<String>,
    glue_history: bool,
    output: Option<PathBuf>,
    file: Option<PathBuf>,
    options: ApplyOptions,
    /// Everything else: configuration arguments.
    config: Vec<String>,
}

fn parse(command: &str, args: &[String], cwd: &Path) -> Result<Request, String> {
    let mut request = Request::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = |what: &str| {
            inline.clone().or_else(|| args.next().cloned()).ok_or_else(|| format!("{name} needs {what}"))
        };
        match (command, name) {
            ("export", "--group" | "-g") => request.groups.push(value("an app_name")?),
            ("export", "--glue-history") => request.glue_history = true,
            ("export", "--output" | "-o") => request.output = Some(cwd.join(value("a file name")?)),
            ("apply", "--file" | "-f") => request.file = Some(cwd.join(value("a file or folder")?)),
            ("apply", "--dry-run") => request.options.dry_run = true,
            ("apply", "--prune") => request.options.prune = true,
            _ if arg.starts_with("--") && arg.len() > 2 && arg.contains('.') || arg == "--config" => {
                request.config.push(arg.clone());
                // `--config PATH` takes the next argument as its value.
                if arg == "--config" {
                    request.config.extend(args.next().cloned());
                }
            }
            _ => return Err(format!("unknown argument {arg:?}")),
        }
    }
    if command == "apply" && request.file.is_none() {
        return Err("apply needs -f FILE (or a folder of .json and .toml files)".into());
    }
    Ok(request)
}

/// Runs `export` or `apply`; returns the exit status: 0 done (or planned), 1 failed, 2 refused usage.
pub fn run(
    command: &str,
    args: &[String],
    env: impl IntoIterator<Item = (String, String)>,
    cwd: &Path,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        let _ = out.write_all(USAGE_TEXT.as_bytes());
        return 0;
    }
    let request = match parse(command, args, cwd) {
        Ok(request) => request,
        Err(reason) => {
            let _ = writeln!(
                err,
                "xxl-job-admin {command}: {reason}\nRun `xxl-job-admin --help` for the commands and keys."
            );
            return USAGE;
        }
    };
    let format = match &request.output {
        None => Format::Json,
        Some(path) => match Format::of_path(path) {
            Some(format) => format,
            None => {
                let _ = writeln!(
                    err,
                    "xxl-job-admin export: {}: the name must end in .json or .toml",
                    path.display()
                );
                return USAGE;
            }
        },
    };
    let config = match Config::load(&request.config, env, cwd) {
        Ok(loaded) => loaded.config,
        Err(e) => {
            let _ = writeln!(err, "xxl-job-admin {command}: configuration error: {e}");
            return USAGE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = writeln!(err, "xxl-job-admin {command}: cannot start the async runtime: {e}");
            return FAILED;
        }
    };
    let outcome = runtime.block_on(async {
        let (db, _) = storage::connect(&config.datasource).await.map_err(|e| e.to_string())?;
        let i18n = I18n::new(config.i18n.code());
        let channels: Vec<String> = config.alarm.webhooks.iter().map(|w| w.name.clone()).collect();
        let setting =
            Setting { db: &db, i18n: &i18n, alarm_channels: &channels, now_ms: SystemClock.now_ms() };
        let user = jobs_as_code::operator();
        let done = match command {
            "export" => jobs_as_code::export(&setting, &user, &request.groups, request.glue_history)
                .await
                .map(|doc| doc.render(format)),
            _ => match read_documents(request.file.as_deref().unwrap_or(Path::new(""))) {
                Ok(doc) => jobs_as_code::apply(&setting, &user, &doc, request.options).await.map(|plan| {
                    let verb = match (request.options.dry_run, plan.changes()) {
                        (true, _) => "planned (dry run, nothing written)",
                        (false, 0) => "nothing to change",
                        (false, _) => "applied",
                    };
                    format!("{plan}{verb}\n")
                }),
                Err(e) => Err(ServiceError::Invalid(e.to_string())),
            },
        };
        db.close().await;
        done.map_err(|e| e.to_string())
    });
    match (outcome, &request.output) {
        (Ok(text), Some(path)) if command == "export" => match std::fs::write(path, text) {
            Ok(()) => 0,
            Err(e) => {
                let _ = writeln!(err, "xxl-job-admin export: {}: {e}", path.display());
                FAILED
            }
        },
        (Ok(text), _) => {
            let _ = out.write_all(text.as_bytes());
            0
        }
        (Err(reason), _) => {
            let _ = writeln!(err, "xxl-job-admin {command}: {reason}");
            FAILED
        }
    }
}

/// Columns of the terminal `--help` is printed to; 80 when it goes to a file or a pipe.
pub fn terminal_width() -> usize {
    const PIPED: usize = 80;
    // Narrower than this, wrapped help is harder to read than overlong lines.
    const NARROWEST: usize = 40;
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return PIPED;
    }
    // A terminal that does not know its size (a serial line, some emulators) reports 0 columns.
    let columns = window_columns()
        .filter(|c| *c > 0)
        .or_else(|| std::env::var("COLUMNS").ok()?.trim().parse().ok().filter(|c: &usize| *c > 0));
    columns.map_or(PIPED, |c| c.max(NARROWEST))
}

/// The width the kernel reports for stdout's terminal.
#[cfg(unix)]
fn window_columns() -> Option<usize> {
    let mut size = libc::winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct we pass, which lives across the call.
    let status = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) };
    (status == 0).then_some(usize::from(size.ws_col))
}

#[cfg(not(unix))]
fn window_columns() -> Option<usize> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn tool_arguments_are_told_from_configuration_arguments() {
        let cwd = Path::new("/w");
        let r = parse(
            "export",
            &args(&["--group", "a", "--group=b", "-o", "x.toml", "--spring.datasource.url=sqlite:d"]),
            cwd,
        )
        .unwrap();
        assert_eq!(
            (r.groups.as_slice(), r.glue_history),
            (["a".to_string(), "b".to_string()].as_slice(), false)
        );
        assert!(parse("export", &args(&["--glue-history"]), cwd).unwrap().glue_history);
        assert!(parse("apply", &args(&["-f", "x", "--glue-history"]), cwd).is_err());
        assert_eq!(r.output, Some(PathBuf::from("/w/x.toml")));
        assert_eq!(r.config, ["--spring.datasource.url=sqlite:d"]);
        let r =
            parse("apply", &args(&["-f", "jobs", "--dry-run", "--prune", "--config", "a.properties"]), cwd)
                .unwrap();
        assert_eq!(
            (r.file, r.options.dry_run, r.options.prune),
            (Some(PathBuf::from("/w/jobs")), true, true)
        );
        assert_eq!(r.config, ["--config", "a.properties"]);
        assert!(parse("apply", &args(&["--dry-run"]), cwd).unwrap_err().contains("-f FILE"));
        assert!(parse("export", &args(&["--prune"]), cwd).unwrap_err().contains("--prune"));
        assert!(parse("export", &args(&["--group"]), cwd).unwrap_err().contains("needs"));
    }
}
