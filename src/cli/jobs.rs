//! The commands that act on the configured database without serving it: `export` and `apply`
//! (docs/jobs-as-code.md), `backup` of an SQLite file, and `ddl`, which prints the workflow tables' script
//! for the configured kind of database without connecting to it (docs/operations.md). They read the server's
//! configuration from the same sources (file, environment, `--key=value`) and act as an administrator:
//! whoever holds the database's configuration holds its rows. Only `apply` without `--dry-run` creates the
//! database and its schema when there is none, as the server does; the others refuse.

use super::misuse::{self, Misuse};
use crate::config::{Config, DbTarget, SqlitePath};
use crate::i18n::I18n;
use crate::service::jobs_as_code::{self, read_documents, ApplyOptions, Format, Setting};
use crate::service::ServiceError;
use crate::storage::{self, extension_ddl, Backend};
use crate::time::{Clock, SystemClock};
use clap::{CommandFactory, Parser};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Exit status of a refused command line (a usage or configuration error).
const USAGE: i32 = 2;
/// Exit status of a command that ran and failed (the database, the file, a refused document).
const FAILED: i32 = 1;

const USAGE_TEXT: &str = "\
Usage: xxl-job-admin export [--group APP]... [--glue-history] [-o FILE.json|FILE.toml] [--KEY=VALUE ...]
       xxl-job-admin apply -f FILE|FOLDER [--dry-run] [--prune] [--KEY=VALUE ...]
       xxl-job-admin backup --to FILE [--KEY=VALUE ...]
       xxl-job-admin ddl [--dialect mysql|postgres|sqlite] [--KEY=VALUE ...]

export writes the executors (all, or each --group) with their jobs and workflows as a document,
JSON on standard output without -o; --glue-history adds each GLUE job's version history. apply
creates what the document has and the database lacks, updates what differs (a workflow by a new
version) and, with --prune, deletes the jobs and workflows of its executors that it does not list;
--dry-run prints the plan only.
backup copies an SQLite database into FILE, a new file, while the admin runs (for MySQL/MariaDB
and PostgreSQL use their own dump tools).
ddl prints the statements that create the workflow tables (xxl_job_ext_*), for a DBA to run where the
admin's account may not create tables; for the configured database, or the one --dialect names. It
connects to nothing; the statements may run again.
The database is the server's: the same configuration file, environment and --KEY=VALUE arguments.
Only apply without --dry-run creates the database when there is none; export, apply --dry-run and
backup refuse, naming the database they looked for.
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
    /// `ddl --dialect`.
    dialect: Option<Backend>,
    /// Everything else: configuration arguments.
    config: Vec<String>,
}

/// `export`'s own options.
#[derive(Parser, Debug)]
#[command(no_binary_name = true, disable_help_flag = true, args_override_self = true)]
struct ExportLine {
    #[arg(short = 'g', long = "group", allow_hyphen_values = true)]
    groups: Vec<String>,
    #[arg(long)]
    glue_history: bool,
    #[arg(short = 'o', long, allow_hyphen_values = true)]
    output: Option<PathBuf>,
}

/// `backup`'s own options.
#[derive(Parser, Debug)]
#[command(no_binary_name = true, disable_help_flag = true, args_override_self = true)]
struct BackupLine {
    #[arg(long, allow_hyphen_values = true)]
    to: Option<PathBuf>,
}

/// `ddl`'s own options.
#[derive(Parser, Debug)]
#[command(no_binary_name = true, disable_help_flag = true, args_override_self = true)]
struct DdlLine {
    #[arg(long, allow_hyphen_values = true)]
    dialect: Option<String>,
}

/// `apply`'s own options.
#[derive(Parser, Debug)]
#[command(no_binary_name = true, disable_help_flag = true, args_override_self = true)]
struct ApplyLine {
    #[arg(short = 'f', long, allow_hyphen_values = true)]
    file: Option<PathBuf>,
    #[arg(long)]
    dry_run: bool,
    #[arg(long)]
    prune: bool,
}

fn parse(command: &str, args: &[String], cwd: &Path) -> Result<Request, String> {
    let line = match command {
        "export" => ExportLine::command(),
        "backup" => BackupLine::command(),
        "ddl" => DdlLine::command(),
        _ => ApplyLine::command(),
    };
    let (own, config) = split_settings(&line, args);
    let refused = |misuse: Misuse| match misuse {
        Misuse::Unknown(arg) => format!("unknown argument {arg:?}"),
        Misuse::NoValue(name) => format!("{name} needs {}", value_of(&name)),
        Misuse::TakesNoValue(name) => format!("{name} takes no value"),
        // `run` answers -h and --help before parsing.
        Misuse::Help => "-h and --help take no other argument".to_string(),
        Misuse::Refused(reason) | Misuse::Other(reason) => reason,
    };
    let mut request = Request { config, ..Request::default() };
    if command == "export" {
        let line = misuse::parse::<ExportLine>(&own).map_err(refused)?;
        request.groups = line.groups;
        request.glue_history = line.glue_history;
        request.output = line.output.map(|output| cwd.join(output));
    } else if command == "backup" {
        let line = misuse::parse::<BackupLine>(&own).map_err(refused)?;
        let to = line.to.ok_or("backup needs --to FILE, the new file to write the copy to")?;
        request.output = Some(cwd.join(to));
    } else if command == "ddl" {
        let line = misuse::parse::<DdlLine>(&own).map_err(refused)?;
        request.dialect = match line.dialect {
            Some(name) => Some(
                Backend::parse(&name)
                    .ok_or_else(|| format!("--dialect takes mysql, postgres or sqlite, not {name:?}"))?,
            ),
            None => None,
        };
    } else {
        let line = misuse::parse::<ApplyLine>(&own).map_err(refused)?;
        request.file = line.file.map(|file| cwd.join(file));
        request.options = ApplyOptions { dry_run: line.dry_run, prune: line.prune };
        if request.file.is_none() {
            return Err("apply needs -f FILE (or a folder of .json and .toml files)".into());
        }
    }
    Ok(request)
}

/// What the option `name` takes, for the message when it was given without it.
fn value_of(name: &str) -> &'static str {
    match name {
        "--group" | "-g" => "an app_name",
        "--output" | "-o" | "--to" => "a file name",
        "--dialect" => "mysql, postgres or sqlite",
        _ => "a file or folder",
    }
}

/// Splits `args` into the command's own and the configuration's: a `--key.with.dots[=value]` that is no
/// option of the command (a Spring Boot setting), or `--config PATH`, is the configuration's, in order.
fn split_settings(line: &clap::Command, args: &[String]) -> (Vec<String>, Vec<String>) {
    let (mut own, mut config) = (Vec::new(), Vec::new());
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let option = misuse::option(line, arg);
        match option {
            Some(option) => {
                own.push(arg.clone());
                // Its value, whatever it looks like, unless given as --name=value.
                if option.get_action().takes_values() && !arg.contains('=') {
                    own.extend(args.next().cloned());
                }
            }
            None if arg.starts_with("--") && arg.len() > 2 && arg.contains('.') => config.push(arg.clone()),
            None if arg == "--config" => {
                config.push(arg.clone());
                config.extend(args.next().cloned());
            }
            None => own.push(arg.clone()),
        }
    }
    (own, config)
}

/// Runs `export`, `apply`, `backup` or `ddl`; returns the exit status: 0 done (or planned), 1 failed, 2 refused usage.
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
        Some(path) if command == "export" => match Format::of_path(path) {
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
        _ => Format::Json,
    };
    // The script --dialect names needs no configuration.
    if let Some(backend) = request.dialect {
        let _ = out.write_all(extension_ddl(backend).as_bytes());
        return 0;
    }
    let config = match Config::load(&request.config, env, cwd) {
        Ok(loaded) => loaded.config,
        Err(e) => {
            let _ = writeln!(err, "xxl-job-admin {command}: configuration error: {e}");
            return USAGE;
        }
    };
    if command == "ddl" {
        let _ = out.write_all(extension_ddl(Backend::of(&config.datasource.target)).as_bytes());
        return 0;
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = writeln!(err, "xxl-job-admin {command}: cannot start the async runtime: {e}");
            return FAILED;
        }
    };
    let outcome = runtime.block_on(carry_out(command, &config, &request, format));
    report(command, outcome, &request, out, err)
}

/// Exports or applies on the configured database: the text to print or write.
async fn carry_out(
    command: &str,
    config: &Config,
    request: &Request,
    format: Format,
) -> Result<String, String> {
    if command == "backup" {
        return backup(config, request.output.as_deref().unwrap_or(Path::new(""))).await;
    }
    // Only a real apply writes: it may start from nothing, as the server does.
    let db = if command == "apply" && !request.options.dry_run {
        storage::connect(&config.datasource).await.map(|(db, _)| db)
    } else {
        storage::connect_existing(&config.datasource).await
    }
    .map_err(|e| e.to_string())?;
    let i18n = I18n::new(config.i18n.code());
    let channels: Vec<String> = config.alarm.webhooks.iter().map(|w| w.name.clone()).collect();
    let setting = Setting { db: &db, i18n: &i18n, alarm_channels: &channels, now_ms: SystemClock.now_ms() };
    let user = jobs_as_code::operator();
    let done = match command {
        "export" => jobs_as_code::export(&setting, &user, &request.groups, request.glue_history)
            .await
            .and_then(|doc| doc.render(format).map_err(|e| ServiceError::Invalid(e.to_string()))),
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
}

/// Copies the configured SQLite database into `to`: what to print.
async fn backup(config: &Config, to: &Path) -> Result<String, String> {
    let DbTarget::Sqlite { path: SqlitePath::File(from) } = &config.datasource.target else {
        return Err("backup copies an SQLite file database; back up MySQL/MariaDB with mariadb-dump (or \
                    mysqldump) --single-transaction, PostgreSQL with pg_dump"
            .into());
    };
    // A backup never replaces a file, an older backup least of all.
    if to.exists() {
        return Err(format!("{} exists already; name a new file", to.display()));
    }
    let db = storage::connect_existing(&config.datasource).await.map_err(|e| e.to_string())?;
    let copied = db.copy_sqlite_into(to).await;
    db.close().await;
    match copied {
        Some(Ok(())) => Ok(format!("copied {} into {}\n", from.display(), to.display())),
        Some(Err(e)) => Err(format!("{}: {e}", to.display())),
        None => Err("backup copies an SQLite file database".into()),
    }
}

/// Writes the outcome where it goes (the -o file, standard output, or the error); the exit status.
fn report(
    command: &str,
    outcome: Result<String, String>,
    request: &Request,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
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
        let r = parse("backup", &args(&["--to", "b.db", "--spring.datasource.url=sqlite:d"]), cwd).unwrap();
        assert_eq!(
            (r.output, r.config),
            (Some(PathBuf::from("/w/b.db")), args(&["--spring.datasource.url=sqlite:d"]))
        );
        assert!(parse("backup", &args(&[]), cwd).unwrap_err().contains("--to FILE"));
        let r = parse("ddl", &args(&["--dialect", "PostgreSQL", "--spring.datasource.url=sqlite:d"]), cwd)
            .unwrap();
        assert_eq!((r.dialect, r.config.len()), (Some(Backend::Postgres), 1));
        assert_eq!(parse("ddl", &args(&[]), cwd).unwrap().dialect, None);
        assert_eq!(
            parse("ddl", &args(&["--dialect=oracle"]), cwd).unwrap_err(),
            "--dialect takes mysql, postgres or sqlite, not \"oracle\""
        );
        assert_eq!(
            parse("ddl", &args(&["--dialect"]), cwd).unwrap_err(),
            "--dialect needs mysql, postgres or sqlite"
        );
    }

    #[test]
    fn options_keep_their_values_and_messages() {
        let cwd = Path::new("/w");
        // An option's value is its own even when it looks like a setting or an option.
        let r = parse("export", &args(&["--group=a.b", "--group", "--spring.x=1", "-o", "--prune"]), cwd)
            .unwrap();
        assert_eq!(r.groups, ["a.b", "--spring.x=1"]);
        assert_eq!((r.output, r.config.len()), (Some(PathBuf::from("/w/--prune")), 0));
        // The last of a repeated option wins; settings keep their order.
        let r = parse("apply", &args(&["--x.y=1", "-f", "a", "--file=b", "--config", "c", "--z.w"]), cwd)
            .unwrap();
        assert_eq!(
            (r.file, r.config),
            (Some(PathBuf::from("/w/b")), args(&["--x.y=1", "--config", "c", "--z.w"]))
        );
        for (command, line, message) in [
            ("export", &["-o"][..], "-o needs a file name"),
            ("export", &["--output"], "--output needs a file name"),
            ("export", &["-g"], "-g needs an app_name"),
            ("apply", &["--file"], "--file needs a file or folder"),
            ("backup", &["--to"], "--to needs a file name"),
            ("apply", &["-f", "x", "--glue-history"], "unknown argument \"--glue-history\""),
            ("export", &["positional"], "unknown argument \"positional\""),
            ("export", &["--x"], "unknown argument \"--x\""),
            ("apply", &["-f", "x", "--prune=yes"], "--prune takes no value"),
        ] {
            assert_eq!(parse(command, &args(line), cwd).unwrap_err(), message, "{command} {line:?}");
        }
    }
}
