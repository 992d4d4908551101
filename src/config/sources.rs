//! Raw values from the properties file, the environment and the command line, read back with Spring
//! Boot's precedence, relaxed names and `${NAME:default}` placeholders.

use super::keys::{self, canonical, KeySpec, KEYS};
use super::{properties, text, ConfigError};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};

const DEFAULT_FILE: &str = "application.properties";
/// Deep enough for any sane nesting, small enough to stop a reference cycle quickly.
const MAX_PLACEHOLDER_DEPTH: usize = 16;

#[derive(Debug, Clone)]
pub(crate) enum Origin {
    Default,
    File { path: PathBuf, line: usize },
    Env(String),
    Arg,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => f.write_str("default"),
            Origin::File { path, line } => write!(f, "{}:{line}", path.display()),
            Origin::Env(name) => write!(f, "environment variable {name}"),
            Origin::Arg => f.write_str("command line"),
        }
    }
}

struct Entry {
    value: String,
    origin: Origin,
}

/// A key's value as configured (placeholders resolved) or its default.
pub(crate) struct Raw {
    pub spec: &'static KeySpec,
    pub value: String,
    pub origin: Origin,
}

impl Raw {
    /// The error for this value. Secret values are never shown; credentials inside URL-like values are
    /// masked.
    pub(crate) fn invalid(&self, reason: impl Into<String>) -> ConfigError {
        ConfigError::Invalid {
            key: self.spec.name,
            value: (!self.spec.secret).then(|| text::redact(&self.value)),
            origin: self.origin.to_string(),
            reason: reason.into(),
        }
    }
}

/// One field of a webhook channel as configured.
pub(crate) struct FieldValue {
    /// The canonical key, for messages.
    pub key: String,
    pub spec: &'static KeySpec,
    pub value: String,
    pub origin: Origin,
}

impl FieldValue {
    pub(crate) fn invalid(&self, reason: impl Into<String>) -> ConfigError {
        ConfigError::Webhook {
            key: self.key.clone(),
            value: (!self.spec.secret).then(|| self.value.clone()),
            origin: self.origin.to_string(),
            reason: reason.into(),
        }
    }
}

pub(crate) struct Sources {
    /// Canonical name → the value from the source with the highest precedence.
    entries: HashMap<String, Entry>,
    /// Keys from the file or command line that we neither read nor ignore, in first-seen order.
    unknown: Vec<(String, String, Origin)>,
    env: HashMap<String, String>,
    source_file: Option<PathBuf>,
    warnings: Vec<String>,
    /// Canonical names that placeholders looked up: custom keys used that way are not "unknown".
    referenced: RefCell<HashSet<String>>,
    /// Table keys read so far, to prove (in debug builds) that every key in the table is read.
    read: RefCell<HashSet<&'static str>>,
}

impl Sources {
    pub(crate) fn gather(
        args: &[String],
        env: impl IntoIterator<Item = (String, String)>,
        cwd: &Path,
    ) -> Result<Sources, ConfigError> {
        let env: HashMap<String, String> = env.into_iter().collect();
        let cli = CommandLine::parse(args)?;
        let mut sources = Sources {
            entries: HashMap::new(),
            unknown: Vec::new(),
            env,
            source_file: None,
            warnings: Vec::new(),
            referenced: RefCell::default(),
            read: RefCell::default(),
        };
        let location = cli.location.clone().or_else(|| sources.env.get("SPRING_CONFIG_LOCATION").cloned());
        for path in config_files(location.as_deref(), cwd, &mut sources.warnings)? {
            for property in read_file(&path, &mut sources.warnings)? {
                let origin = Origin::File { path: path.clone(), line: property.line };
                sources.insert(&property.key, property.value, origin);
            }
            sources.source_file = Some(path);
        }
        for spec in KEYS {
            let names = std::iter::once(spec.env_name()).chain(spec.env_alias());
            if let Some((name, value)) =
                names.filter_map(|n| sources.env.get(&n).cloned().map(|v| (n, v))).next()
            {
                sources.insert(spec.name, value, Origin::Env(name));
            }
        }
        let mut webhook_env: Vec<(String, String, String)> = sources
            .env
            .iter()
            .filter_map(|(name, value)| Some((webhook_env_key(name)?, name.clone(), value.clone())))
            .collect();
        // Stable order, so the same environment always reads the same way.
        webhook_env.sort();
        for (key, name, value) in webhook_env {
            sources.insert(&key, value, Origin::Env(name));
        }
        for (key, value) in cli.pairs {
            sources.insert(&key, value, Origin::Arg);
        }
        Ok(sources)
    }

    fn insert(&mut self, key: &str, value: String, origin: Origin) {
        let canonical_key = canonical(key);
        if keys::find(key).is_none()
            && !keys::is_ignored(key)
            && keys::webhook_field(key).is_none()
            && !self.unknown.iter().any(|(known, _, _)| *known == canonical_key)
        {
            self.unknown.push((canonical_key.clone(), key.to_string(), origin.clone()));
        }
        self.entries.insert(canonical_key, Entry { value, origin });
    }

    /// The configured value with placeholders resolved, else the table default; `None` if neither.
    pub(crate) fn raw(&self, name: &'static str) -> Result<Option<Raw>, ConfigError> {
        let spec = keys::find(name).unwrap_or_else(|| panic!("`{name}` is not in the key table"));
        self.read.borrow_mut().insert(spec.name);
        let Some(entry) = self.entries.get(&canonical(spec.name)) else {
            return Ok(spec.default.map(|value| Raw {
                spec,
                value: value.to_string(),
                origin: Origin::Default,
            }));
        };
        let value = self.resolve(&entry.value, 0).map_err(|reason| ConfigError::Placeholder {
            key: spec.name,
            origin: entry.origin.to_string(),
            reason,
        })?;
        Ok(Some(Raw { spec, value, origin: entry.origin.clone() }))
    }

    /// Every configured `xxl.job.alarm.webhook.<name>.<field>` value, placeholders resolved, by channel
    /// name (canonical) and then field, in name order.
    pub(crate) fn webhooks(&self) -> Result<BTreeMap<String, Vec<FieldValue>>, ConfigError> {
        let mut channels: BTreeMap<String, Vec<FieldValue>> = BTreeMap::new();
        for (key, entry) in &self.entries {
            let Some((channel, spec)) = keys::webhook_field(key) else { continue };
            let value = self.resolve(&entry.value, 0).map_err(|reason| ConfigError::Webhook {
                key: key.clone(),
                value: None,
                origin: entry.origin.to_string(),
                reason,
            })?;
            channels.entry(channel).or_default().push(FieldValue {
                key: key.clone(),
                spec,
                value,
                origin: entry.origin.clone(),
            });
        }
        for fields in channels.values_mut() {
            fields.sort_by_key(|f| f.spec.name);
        }
        Ok(channels)
    }

    /// The value of a key that has a default in the table.
    pub(crate) fn defaulted(&self, name: &'static str) -> Result<Raw, ConfigError> {
        Ok(self.raw(name)?.unwrap_or_else(|| panic!("`{name}` has no default in the key table")))
    }

    pub(crate) fn text(&self, name: &'static str) -> Result<Option<String>, ConfigError> {
        Ok(self.raw(name)?.map(|raw| raw.value))
    }

    /// Whether a source sets the key to something other than blanks.
    pub(crate) fn is_set(&self, name: &'static str) -> Result<bool, ConfigError> {
        Ok(self
            .raw(name)?
            .is_some_and(|raw| !matches!(raw.origin, Origin::Default) && !raw.value.trim().is_empty()))
    }

    /// A typed value; a blank value means "not set", as Spring's binder converts "" to null.
    pub(crate) fn typed<T>(
        &self,
        name: &'static str,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<Option<T>, ConfigError> {
        let raw = match self.raw(name)? {
            Some(raw) if raw.value.trim().is_empty() => match raw.spec.default {
                Some(default) => Raw { spec: raw.spec, value: default.to_string(), origin: Origin::Default },
                None => return Ok(None),
            },
            Some(raw) => raw,
            None => return Ok(None),
        };
        parse(&raw.value).map(Some).map_err(|reason| raw.invalid(reason))
    }

    /// A typed value of a key that has a default in the table.
    pub(crate) fn required<T>(
        &self,
        name: &'static str,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<T, ConfigError> {
        Ok(self.typed(name, parse)?.unwrap_or_else(|| panic!("`{name}` has no default in the key table")))
    }

    /// Warnings about the sources (file encoding, unknown keys) and the file read, once every key is read.
    pub(crate) fn finish(self) -> (Vec<String>, Option<PathBuf>) {
        debug_assert!(
            KEYS.iter().all(|k| self.read.borrow().contains(k.name)),
            "keys in the table but never read: {:?}",
            KEYS.iter().filter(|k| !self.read.borrow().contains(k.name)).map(|k| k.name).collect::<Vec<_>>()
        );
        let referenced = self.referenced.into_inner();
        let mut warnings = self.warnings;
        warnings.extend(
            self.unknown
                .into_iter()
                .filter(|(canonical_key, _, _)| !referenced.contains(canonical_key))
                .map(|(_, key, origin)| format!("unknown key `{key}` ({origin}) is ignored")),
        );
        (warnings, self.source_file)
    }

    fn resolve(&self, text: &str, depth: usize) -> Result<String, String> {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            let inner_start = start + 2;
            // Spring leaves an unterminated `${` as it is.
            let Some(len) = closing_brace(&rest[inner_start..]) else { break };
            out.push_str(&rest[..start]);
            out.push_str(&self.placeholder(&rest[inner_start..inner_start + len], depth)?);
            rest = &rest[inner_start + len + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// `NAME` or `NAME:default`: a configured key (relaxed), else an environment variable by its exact
    /// name or Spring's environment form of it, else the default.
    fn placeholder(&self, inner: &str, depth: usize) -> Result<String, String> {
        if depth >= MAX_PLACEHOLDER_DEPTH {
            return Err(format!("placeholders nest too deeply at `${{{inner}}}` (a reference cycle?)"));
        }
        let (name, default) = match default_separator(inner) {
            Some(i) => (&inner[..i], Some(&inner[i + 1..])),
            None => (inner, None),
        };
        let name = self.resolve(name, depth + 1)?;
        let canonical_name = canonical(&name);
        let found = match self.entries.get(&canonical_name) {
            Some(entry) => {
                self.referenced.borrow_mut().insert(canonical_name);
                Some(entry.value.as_str())
            }
            None => self.env.get(&name).or_else(|| self.env.get(&env_form(&name))).map(String::as_str),
        };
        match (found, default) {
            (Some(value), _) => self.resolve(value, depth + 1),
            (None, Some(default)) => self.resolve(default, depth + 1),
            (None, None) => Err(format!("placeholder `${{{name}}}` has no value and no default")),
        }
    }
}

/// Length up to the `}` that closes a `${`, counting nested `${...}`.
fn closing_brace(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut nested = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                nested += 1;
                i += 1;
            }
            b'}' if nested == 0 => return Some(i),
            b'}' => nested -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

/// The first `:` outside nested placeholders.
fn default_separator(inner: &str) -> Option<usize> {
    let bytes = inner.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'$' if bytes.get(i + 1) == Some(&b'{') => i += 2 + closing_brace(&inner[i + 2..])?,
            b':' => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// `XXL_JOB_ALARM_WEBHOOK_OPS_URL` → `xxl.job.alarm.webhook.ops.url`, for the fields we know.
fn webhook_env_key(name: &str) -> Option<String> {
    let rest = name.strip_prefix(keys::WEBHOOK_ENV_PREFIX)?;
    keys::WEBHOOK_FIELDS.iter().find_map(|field| {
        let channel = rest.strip_suffix(&format!("_{}", field.name.to_ascii_uppercase()))?;
        (!channel.is_empty())
            .then(|| format!("{}{}.{}", keys::WEBHOOK_PREFIX, channel.to_ascii_lowercase(), field.name))
    })
}

fn env_form(name: &str) -> String {
    name.chars().filter(|c| *c != '-').map(|c| if c == '.' { '_' } else { c.to_ascii_uppercase() }).collect()
}

#[derive(Default)]
struct CommandLine {
    location: Option<String>,
    pairs: Vec<(String, String)>,
}

impl CommandLine {
    /// Spring's `--key=value` (a bare `--key` is an empty value), plus `--config PATH`.
    fn parse(args: &[String]) -> Result<CommandLine, ConfigError> {
        let mut cli = CommandLine::default();
        let mut previous: Option<(&str, bool)> = None;
        let mut i = 0;
        while i < args.len() {
            let arg = &args[i];
            let Some(body) = arg.strip_prefix("--") else {
                return Err(ConfigError::Argument(match previous {
                    Some((key, true)) => format!("`--{key} VALUE` is not supported; write --{key}=VALUE"),
                    // Possibly the tail of a secret split by the shell: do not repeat it.
                    _ if previous.is_some_and(|(key, _)| keys::find(key).is_some_and(|k| k.secret)) => {
                        format!("argument {} is not of the form --KEY=VALUE", i + 1)
                    }
                    _ => format!("unexpected argument `{arg}`; settings are written --KEY=VALUE"),
                }));
            };
            let (name, value) = match body.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (body, None),
            };
            if name.is_empty() {
                return Err(ConfigError::Argument(format!("argument {} has no key before `=`", i + 1)));
            }
            if name == "config" {
                let path = match value {
                    Some(path) => path,
                    None => {
                        i += 1;
                        args.get(i)
                            .ok_or_else(|| ConfigError::Argument("--config needs a file path".into()))?
                    }
                };
                cli.location = Some(path.to_string());
            } else if canonical(name) == canonical("spring.config.location") {
                let path = value.ok_or_else(|| ConfigError::Argument(format!("write --{name}=PATH")))?;
                cli.location = Some(path.to_string());
            } else {
                cli.pairs.push((name.to_string(), value.unwrap_or_default().to_string()));
            }
            previous = Some((name, value.is_none()));
            i += 1;
        }
        Ok(cli)
    }
}

/// The named location, else `./application.properties` and `./config/application.properties` (both,
/// the latter winning, as in Spring Boot), in order of increasing precedence.
fn config_files(
    location: Option<&str>,
    cwd: &Path,
    warnings: &mut Vec<String>,
) -> Result<Vec<PathBuf>, ConfigError> {
    if let Some(location) = location {
        return named_location(location, cwd).map(|path| path.into_iter().collect());
    }
    let found: Vec<PathBuf> = [cwd.join(DEFAULT_FILE), cwd.join("config").join(DEFAULT_FILE)]
        .into_iter()
        .filter(|p| p.is_file())
        .collect();
    if let [first, second] = found.as_slice() {
        warnings.push(format!(
            "both {} and {} exist; the latter wins where they disagree",
            first.display(),
            second.display()
        ));
    }
    if found.is_empty() {
        for name in
            ["application.yml", "application.yaml", "config/application.yml", "config/application.yaml"]
        {
            let path = cwd.join(name);
            if path.is_file() {
                warnings.push(format!("{} is ignored: only .properties files are read", path.display()));
            }
        }
    }
    Ok(found)
}

/// Spring's `spring.config.location` forms: `PATH`, `file:PATH`, `optional:…`, a directory.
fn named_location(location: &str, cwd: &Path) -> Result<Option<PathBuf>, ConfigError> {
    let fail =
        |reason: &str| ConfigError::Location { location: location.to_string(), reason: reason.to_string() };
    let trimmed = location.trim();
    let (optional, rest) = match trimmed.strip_prefix("optional:") {
        Some(rest) => (true, rest),
        None => (false, trimmed),
    };
    let rest = rest.strip_prefix("file:").unwrap_or(rest);
    if rest.starts_with("classpath:") {
        return Err(fail("there is no classpath here; give a file path"));
    }
    if rest.contains(',') {
        return Err(fail("only one location is supported"));
    }
    if rest.is_empty() {
        return Err(fail("the location is empty"));
    }
    let mut path = cwd.join(rest);
    if path.is_dir() {
        path.push(DEFAULT_FILE);
    }
    if path.extension().is_some_and(|ext| ext == "yml" || ext == "yaml") {
        return Err(fail("YAML is not supported; write the keys into a .properties file"));
    }
    match path.exists() {
        true => Ok(Some(path)),
        false if optional => Ok(None),
        false => Err(ConfigError::FileNotFound(path)),
    }
}

fn read_file(path: &Path, warnings: &mut Vec<String>) -> Result<Vec<properties::Property>, ConfigError> {
    let bytes =
        std::fs::read(path).map_err(|source| ConfigError::Read { path: path.to_path_buf(), source })?;
    let text = String::from_utf8(bytes).unwrap_or_else(|e| {
        // Spring Boot 2 read this file as ISO-8859-1; such files still load.
        warnings.push(format!("{} is not UTF-8; read as ISO-8859-1", path.display()));
        e.into_bytes().into_iter().map(char::from).collect()
    });
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    properties::parse(text).map_err(|e| ConfigError::Syntax {
        path: path.to_path_buf(),
        line: e.line,
        message: e.message,
    })
}
