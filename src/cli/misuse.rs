//! What clap found wrong with a command line, in terms each command words its own message with, as it
//! did before clap parsed for it.

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// A command line clap refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Misuse {
    /// Not a mistake: `-h` or `--help` came before any.
    Help,
    /// An argument that is no option and no operand the command takes, as it was typed.
    Unknown(String),
    /// An option without its value, by its name (`--count`, `-o`).
    NoValue(String),
    /// A flag given a value (`--epoch-ms=yes`), by its name.
    TakesNoValue(String),
    /// A value its parser refused: the parser's reason.
    Refused(String),
    /// Anything else clap can say, in its words.
    Other(String),
}

impl Misuse {
    /// `args` are the arguments clap was given: an unknown `--name=value` is reported whole, not as clap
    /// names it (`--name`).
    fn of(error: &clap::Error, args: &[String]) -> Misuse {
        let invalid_arg = match error.get(ContextKind::InvalidArg) {
            Some(ContextValue::String(arg)) => arg.as_str(),
            _ => "",
        };
        // clap names an option with its value's placeholder (`--count <COUNT>`).
        let name = invalid_arg.split(' ').next().unwrap_or_default().to_string();
        match error.kind() {
            ErrorKind::DisplayHelp => Misuse::Help,
            ErrorKind::UnknownArgument => {
                let typed =
                    args.iter().find(|a| *a == invalid_arg || a.starts_with(&format!("{invalid_arg}=")));
                Misuse::Unknown(typed.map_or(name, String::clone))
            }
            ErrorKind::InvalidValue => Misuse::NoValue(typed_name(&name, args)),
            ErrorKind::TooManyValues => Misuse::TakesNoValue(name),
            ErrorKind::ValueValidation => match std::error::Error::source(error) {
                Some(reason) => Misuse::Refused(reason.to_string()),
                None => Misuse::Other(error.to_string()),
            },
            _ => Misuse::Other(error.to_string()),
        }
    }
}

/// Parses `args` for `T`. clap reads a `--` that is no option's value as the end of the options; the commands
/// never had one, and refuse it as an unknown argument, as they did before clap.
pub fn parse<T: clap::Parser>(args: &[String]) -> Result<T, Misuse> {
    refuse_end_of_options(&T::command(), args)?;
    T::try_parse_from(args).map_err(|error| Misuse::of(&error, args))
}

fn refuse_end_of_options(line: &clap::Command, args: &[String]) -> Result<(), Misuse> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--" {
            return Err(Misuse::Unknown(arg.clone()));
        }
        if option(line, arg).is_some_and(|option| option.get_action().takes_values()) && !arg.contains('=') {
            args.next();
        }
    }
    Ok(())
}

/// The option of `line` that `arg` names (`--name`, `--name=value` or `-n`), if any.
pub fn option<'a>(line: &'a clap::Command, arg: &str) -> Option<&'a clap::Arg> {
    let name = arg.split_once('=').map_or(arg, |(name, _)| name);
    line.get_arguments().find(|a| {
        a.get_long().is_some_and(|long| name.strip_prefix("--") == Some(long))
            || a.get_short()
                .is_some_and(|short| name.strip_prefix('-') == Some(short.encode_utf8(&mut [0; 4])))
    })
}

/// An option missing its value is the last argument: its name as typed there (`-o` rather than `--output`).
fn typed_name(name: &str, args: &[String]) -> String {
    match args.last() {
        Some(last) if last.starts_with('-') && !last.contains('=') => last.clone(),
        _ => name.to_string(),
    }
}
