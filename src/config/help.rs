//! `xxl-job-admin --help`: the commands, the sources of settings and every key, from the key table.

use super::keys;

/// The commands of the `xxl-job-admin` binary, for `--help`: name and one line of meaning.
const COMMANDS: [(&str, &str); 8] = [
    ("serve", "run the admin: console, executor API and scheduler (the default)"),
    ("export", "write executors, jobs and workflows as a document: export [--group APP]... [-o FILE.json|FILE.toml]"),
    (
        "apply",
        "create and update executors, jobs and workflows from a document: apply -f FILE|FOLDER [--dry-run] [--prune]",
    ),
    ("backup", "copy the SQLite database into a new file while the admin runs: backup --to FILE"),
    (
        "ddl",
        "print the statements that create the workflow tables, for a DBA: ddl [--dialect mysql|postgres|sqlite]",
    ),
    ("cron", "print the next fire times of a cron expression (cron --help)"),
    ("help", "print this help (also -h, --help)"),
    ("version", "print the version (also -V, --version)"),
];

/// `--help` text, wrapped to `width` columns: usage, the commands, the sources in order of precedence,
/// and every key we read with its environment variable, default and meaning.
pub fn help_text(width: usize) -> String {
    let mut out = wrap("Usage: ", "xxl-job-admin [serve] [--config PATH] [--KEY=VALUE ...]", width, 21);
    out.push_str(&wrap("       ", "xxl-job-admin COMMAND [ARGS ...]", width, 21));
    out.push_str("\nCommands:\n");
    let name_width = COMMANDS.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    for (name, meaning) in COMMANDS {
        out.push_str(&wrap(&format!("  {name:<name_width$}  "), meaning, width, 4 + name_width));
    }
    out.push_str(&wrap(
        "",
        "There is no bench command: the benchmark is a program of its own, built beside this one \
         (cargo build --release makes target/release/xxl-job-bench); see xxl-job-bench --help.",
        width,
        0,
    ));
    out.push_str("\nSettings come from these sources; later ones win:\n");
    for source in [
        "1. built-in defaults (below)",
        "2. a .properties file: --config PATH or --spring.config.location=PATH (or the environment variable \
         SPRING_CONFIG_LOCATION; `file:` and `optional:` prefixes work, a directory means \
         DIR/application.properties); otherwise ./application.properties and ./config/application.properties \
         when present, the latter winning",
        "3. environment variables named as below (SERVER_SERVLET_CONTEXT_PATH style is accepted too)",
        "4. arguments --KEY=VALUE (a bare --KEY sets an empty value)",
    ] {
        out.push_str(&wrap("  ", source, width, 5));
    }
    out.push_str(&wrap(
        "",
        "Keys match as in Spring Boot: case-insensitive, `-` and `_` ignored. Values may contain ${NAME} or \
         ${NAME:default} placeholders, looked up among the keys and the environment variables.",
        width,
        0,
    ));
    out.push_str("\nKeys (environment variable, default):\n");
    let webhook_fields = keys::WEBHOOK_FIELDS.iter().map(|f| {
        (
            format!("{}<name>.{}", keys::WEBHOOK_PREFIX, f.name),
            format!("{}<NAME>_{}", keys::WEBHOOK_ENV_PREFIX, f.name.to_ascii_uppercase()),
            f.default,
            f.help,
        )
    });
    let rows = keys::KEYS
        .iter()
        .map(|k| (k.name.to_string(), k.env_name(), k.default, k.help))
        .chain(webhook_fields);
    for (name, env, default, help) in rows {
        let default = default.map_or(String::new(), |d| format!(", default {d}"));
        out.push_str(&wrap("  ", &format!("{name} ({env}{default})"), width, 6));
        out.push_str(&wrap("      ", help, width, 6));
    }
    let ignored: Vec<String> = keys::IGNORED
        .iter()
        .map(|k| if k.ends_with('.') { format!("{k}*") } else { k.to_string() })
        .collect();
    out.push('\n');
    let ignored = format!(
        "Accepted without effect (Java admin settings that do not apply here), apart from the keys above: {}",
        ignored.join(", ")
    );
    out.push_str(&wrap("", &ignored, width, 0));
    out
}

/// `lead` then `text`, as lines of at most `width` columns broken between words, the lines after the
/// first indented by `indent`. A word longer than a line gets a line of its own.
fn wrap(lead: &str, text: &str, width: usize, indent: usize) -> String {
    let mut out = String::new();
    let mut line = lead.to_string();
    let mut empty = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if !empty && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line = " ".repeat(indent);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::help_text;
    use std::collections::BTreeSet;

    /// The keys `--help` lists, spelled as it prints them (`xxl.job.alarm.webhook.<name>.url`).
    fn help_keys() -> BTreeSet<String> {
        help_text(usize::MAX)
            .lines()
            .skip_while(|line| !line.starts_with("Keys ("))
            .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
            .filter_map(|line| line.split_whitespace().next())
            .map(str::to_string)
            .collect()
    }

    /// The keys of the first column of the table in docs/configuration.md. A row may name several keys
    /// sharing a prefix: `` `spring.mail.host` / `port` / `.properties.x` ``; a part without a dot, or
    /// starting with one, stands for the row's first key with its last segment replaced.
    fn documented_keys() -> BTreeSet<String> {
        let doc = include_str!("../../docs/configuration.md");
        let mut keys = BTreeSet::new();
        for row in doc.lines().filter(|line| line.starts_with("| `")) {
            let cell = row.split('|').nth(1).unwrap_or_default();
            let parts: Vec<&str> = cell.split(" / ").map(|part| part.trim().trim_matches('`')).collect();
            let prefix = parts[0].rsplit_once('.').map_or("", |(prefix, _)| prefix);
            for part in parts {
                if let Some(tail) = part.strip_prefix('.').or((!part.contains('.')).then_some(part)) {
                    keys.insert(format!("{prefix}.{tail}"));
                } else {
                    keys.insert(part.to_string());
                }
            }
        }
        keys
    }

    #[test]
    fn the_documented_keys_are_the_keys_help_lists() {
        let (help, documented) = (help_keys(), documented_keys());
        assert!(help.len() > 60, "the help's keys were not found: {help:?}");
        let undocumented: Vec<&String> = help.difference(&documented).collect();
        assert!(undocumented.is_empty(), "in --help, not in docs/configuration.md: {undocumented:?}");
        let unknown: Vec<&String> = documented.difference(&help).collect();
        assert!(unknown.is_empty(), "in docs/configuration.md, not in --help: {unknown:?}");
    }
}
