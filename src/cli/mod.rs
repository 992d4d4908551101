//! The `xxl-job-admin` command line: which command runs, with which arguments. The server takes Spring Boot
//! style settings (`--server.port=8081`, `--config PATH`) that clap does not know: they pass through
//! unchanged to [`crate::config::Config::load`], as do the arguments of `cron`, `export`, `apply`, `backup`
//! and `ddl` to their own parsers.

mod jobs;
pub mod misuse;

pub use jobs::run;

use clap::{Args, Parser, Subcommand};

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// Run the admin with these settings.
    Serve(Vec<String>),
    /// `export`, `apply`, `backup` or `ddl` with the arguments after it.
    Jobs(&'static str, Vec<String>),
    Cron(Vec<String>),
    Help,
    Version,
}

#[derive(Parser, Debug)]
#[command(
    name = "xxl-job-admin",
    no_binary_name = true,
    disable_help_flag = true,
    disable_version_flag = true,
    disable_help_subcommand = true
)]
struct AdminLine {
    #[command(subcommand)]
    command: Option<Command>,
    /// `serve`'s settings when the command is left out, the common case.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    settings: Vec<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    Serve(Rest),
    Export(Rest),
    Apply(Rest),
    Backup(Rest),
    Ddl(Rest),
    Cron(Rest),
    #[command(long_flag = "help")]
    Help(Rest),
    #[command(long_flag = "version")]
    Version(Rest),
}

/// The words after a command: clap accepts any, and the command reads them as given (see
/// [`Invocation::parse`]).
#[derive(Args, Debug)]
struct Rest {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

impl Invocation {
    /// Reads the arguments after the program's name. A `-h` or `--help` anywhere among the server's
    /// settings asks for help rather than a start (`serve --help`, `--server.port=9 -h`); `cron`, `export`,
    /// `apply` and `backup` answer it themselves. Words after `help` and `version` are ignored.
    pub fn parse(args: &[String]) -> Invocation {
        let Ok(line) = AdminLine::try_parse_from(args) else {
            // Every argument fits one of the variadic operands: nothing is refused.
            return Invocation::serve(args);
        };
        // clap says which command it is; the words after it are passed on as given, since clap would drop a
        // leading `--` as its end-of-options mark where Config::load refuses it as a setting without a key.
        let after = args.get(1..).unwrap_or_default();
        match line.command {
            Some(Command::Export(_)) => Invocation::Jobs("export", after.to_vec()),
            Some(Command::Apply(_)) => Invocation::Jobs("apply", after.to_vec()),
            Some(Command::Backup(_)) => Invocation::Jobs("backup", after.to_vec()),
            Some(Command::Ddl(_)) => Invocation::Jobs("ddl", after.to_vec()),
            Some(Command::Cron(_)) => Invocation::Cron(after.to_vec()),
            Some(Command::Help(_)) => Invocation::Help,
            Some(Command::Version(_)) => Invocation::Version,
            Some(Command::Serve(_)) => Invocation::serve(after),
            // clap takes a short flag before settings for a setting; `-V` is the version's.
            None if line.settings.first().is_some_and(|first| first == "-V") => Invocation::Version,
            None => Invocation::serve(args),
        }
    }

    fn serve(settings: &[String]) -> Invocation {
        if settings.iter().any(|a| a == "--help" || a == "-h") {
            Invocation::Help
        } else {
            Invocation::Serve(settings.to_vec())
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
    use super::Invocation;

    fn parse(line: &[&str]) -> Invocation {
        Invocation::parse(&line.iter().map(|a| a.to_string()).collect::<Vec<_>>())
    }

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn settings_pass_through_to_the_server_as_given() {
        assert_eq!(parse(&[]), Invocation::Serve(vec![]));
        for line in [
            &[
                "--spring.datasource.url=jdbc:mysql://127.0.0.1:3306/xxl_job?useSSL=false",
                "--server.port=8081",
            ][..],
            &["--xxl.job.accessToken=x", "--config", "a.properties", "--server.port"],
            &["-x", "-", "--=x", "unknown-command", "Cron", "--server.port", "9"],
            &["--server.port=9", "--version", "cron", "export"],
            // Refused by Config::load, not taken for clap's end of options.
            &["--", "--server.port=9"],
        ] {
            assert_eq!(parse(line), Invocation::Serve(words(line)), "{line:?}");
            let mut with_serve = vec!["serve"];
            with_serve.extend(line);
            assert_eq!(parse(&with_serve), Invocation::Serve(words(line)), "serve {line:?}");
        }
    }

    #[test]
    fn commands_get_the_words_after_them() {
        assert_eq!(
            parse(&["cron", "0 0 * * * ?", "--count", "2"]),
            Invocation::Cron(words(&["0 0 * * * ?", "--count", "2"]))
        );
        assert_eq!(parse(&["cron", "--help"]), Invocation::Cron(words(&["--help"])));
        assert_eq!(parse(&["cron", "--", "x"]), Invocation::Cron(words(&["--", "x"])));
        assert_eq!(parse(&["export", "-h"]), Invocation::Jobs("export", words(&["-h"])));
        assert_eq!(
            parse(&["apply", "-f", "jobs", "--spring.datasource.url=sqlite:x"]),
            Invocation::Jobs("apply", words(&["-f", "jobs", "--spring.datasource.url=sqlite:x"]))
        );
        assert_eq!(parse(&["backup", "--to", "b.db"]), Invocation::Jobs("backup", words(&["--to", "b.db"])));
        assert_eq!(
            parse(&["ddl", "--dialect", "mysql"]),
            Invocation::Jobs("ddl", words(&["--dialect", "mysql"]))
        );
    }

    #[test]
    fn help_and_version() {
        for line in [
            &["--help"][..],
            &["-h"],
            &["help"],
            &["help", "me"],
            &["serve", "--help"],
            &["--server.port=9", "-h"],
        ] {
            assert_eq!(parse(line), Invocation::Help, "{line:?}");
        }
        for line in
            [&["--version"][..], &["-V"], &["version"], &["version", "extra"], &["--version", "--help"]]
        {
            assert_eq!(parse(line), Invocation::Version, "{line:?}");
        }
    }
}
