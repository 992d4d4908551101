//! The jobs-as-code document: executors and their jobs under natural keys, and workflows under their
//! names, never database ids, read and written as JSON or TOML. Only the shape lives here; the console's
//! rules are checked by the apply.

use crate::domain::codes::AddressType;
use crate::domain::glue::GlueType;
use crate::domain::workflow::model::{
    self, Deadline, FailureStrategy, LimitPolicy, Schedule, TriggerRule, Way,
};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// A whole file: the executors it declares, each with its jobs, and the workflows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Document {
    /// Singular in the file, so that TOML reads `[[executor]]`.
    #[serde(default, rename = "executor", skip_serializing_if = "Vec::is_empty")]
    pub executors: Vec<Executor>,
    /// Singular in the file, so that TOML reads `[[workflow]]`.
    #[serde(default, rename = "workflow", skip_serializing_if = "Vec::is_empty")]
    pub workflows: Vec<Workflow>,
}

/// An executor group, keyed by its AppName.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Executor {
    pub app_name: String,
    pub title: String,
    /// `auto` (addresses from registration) or `manual` (the `addresses` below).
    #[serde(default, serialize_with = "address_word", deserialize_with = "address_of_word")]
    #[schema(value_type = AddressWord)]
    pub address_type: AddressType,
    /// Manual groups only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<String>,
    #[serde(default, rename = "job", skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<Job>,
    /// Where the entry starts in a TOML file, for messages.
    #[serde(skip)]
    pub line: Option<usize>,
}

// A group's address type in the document's words; its schema keeps the name the document has always
// given it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
#[schema(as = AddressType)]
enum AddressWord {
    Auto,
    Manual,
}

fn address_word<S: Serializer>(address_type: &AddressType, serializer: S) -> Result<S::Ok, S::Error> {
    match address_type.declared() {
        AddressType::Auto => AddressWord::Auto,
        _ => AddressWord::Manual,
    }
    .serialize(serializer)
}

fn address_of_word<'de, D: Deserializer<'de>>(deserializer: D) -> Result<AddressType, D::Error> {
    Ok(match AddressWord::deserialize(deserializer)? {
        AddressWord::Auto => AddressType::Auto,
        AddressWord::Manual => AddressType::Manual,
    })
}

/// A job: every field of the console's job dialog, GLUE source included. Empty text fields may be left
/// out; they are stored as the console stores them, as ''.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Job {
    /// A name other jobs' `child_jobs` may use instead of the natural key; it is not stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub description: String,
    pub author: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub alarm_email: String,
    /// `NONE`, `CRON` or `FIX_RATE`.
    pub schedule_type: String,
    /// The cron expression or the FIX_RATE seconds.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub schedule_conf: String,
    #[serde(default = "do_nothing")]
    pub misfire_strategy: String,
    pub route_strategy: String,
    /// The JobHandler (BEAN jobs).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub handler: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub param: String,
    pub block_strategy: String,
    /// Seconds; 0 = none.
    #[serde(default)]
    pub timeout: i32,
    #[serde(default)]
    pub fail_retry_count: i32,
    /// Jobs run after a success: their `key`s or natural keys (`app/description/handler`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub child_jobs: Vec<String>,
    #[serde(default = "bean")]
    pub glue_type: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub glue_source: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub glue_remark: String,
    /// 1 running, 0 stopped; absent leaves the state alone (a new job is stopped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_status: Option<i16>,
    /// The GLUE IDE's version history, newest first; absent leaves the stored history alone, present
    /// (even empty) makes it exactly this.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "versions")]
    pub glue_history: Option<Vec<GlueVersion>>,
    /// Where the entry starts in a TOML file, for messages.
    #[serde(skip)]
    pub line: Option<usize>,
}

/// One row of a job's GLUE history (`xxl_job_logglue`), as the GLUE IDE's save writes it. Fields left
/// out are the NULLs the columns allow.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GlueVersion {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glue_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glue_source: Option<String>,
    #[serde(default)]
    pub glue_remark: String,
    /// `yyyy-MM-dd HH:mm:ss`, the wall-clock time the database stores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add_time: Option<String>,
    /// As `add_time`; the GLUE IDE keeps the 30 versions last updated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_time: Option<String>,
}

/// GLUE history versions, each a table: serde's derive would also read a list of values in field order,
/// and every field of a version may be left out, so `[[]]` would pass for a version.
fn versions<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<GlueVersion>>, D::Error> {
    let Some(values) = Option::<Vec<serde_json::Value>>::deserialize(deserializer)? else { return Ok(None) };
    let read = |(i, value): (usize, serde_json::Value)| match value {
        serde_json::Value::Object(_) => {
            serde_json::from_value(value).map_err(|e| format!("glue_history[{i}]: {e}"))
        }
        other => Err(format!("glue_history[{i}]: a table of a version's fields, not {other}")),
    };
    values
        .into_iter()
        .enumerate()
        .map(read)
        .collect::<Result<_, _>>()
        .map(Some)
        .map_err(serde::de::Error::custom)
}

/// A workflow (docs/workflows.md) under its name: every field of a definition in the document's words, its
/// executor group by AppName, each job node's job as `child_jobs` name one, each sub-workflow by name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Workflow {
    /// Unique among workflows; sub-workflow nodes name a workflow by it.
    pub name: String,
    /// The AppName of the executor the workflow belongs to (its `jobGroup`): who may see, change and run it.
    pub executor: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default)]
    pub schedule: Schedule,
    /// Default run parameters; a run's own are laid over them.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub params: Map<String, Value>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub concurrency: Concurrency,
    #[serde(default, skip_serializing_if = "is_default")]
    pub failure_strategy: FailureStrategy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<Deadline>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub alarm_email: String,
    /// 1 scheduled, 0 stopped; absent leaves the state alone (a new workflow is stopped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_status: Option<i16>,
    /// Singular in the file, so that TOML reads `[[workflow.node]]`.
    #[serde(default, rename = "node")]
    pub nodes: Vec<WorkflowNode>,
    /// Where the entry starts in a TOML file, for messages.
    #[serde(skip)]
    pub line: Option<usize>,
}

/// A definition's `concurrency`, in the document's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, default)]
#[schema(as = WorkflowConcurrency)]
pub struct Concurrency {
    pub max_runs: u32,
    pub on_limit: LimitPolicy,
    pub max_queued: u32,
}

impl Default for Concurrency {
    fn default() -> Concurrency {
        model::Concurrency::default().into()
    }
}

impl From<model::Concurrency> for Concurrency {
    fn from(c: model::Concurrency) -> Concurrency {
        Concurrency { max_runs: c.max_runs, on_limit: c.on_limit, max_queued: c.max_queued }
    }
}

impl From<&Concurrency> for model::Concurrency {
    fn from(c: &Concurrency) -> model::Concurrency {
        model::Concurrency { max_runs: c.max_runs, on_limit: c.on_limit, max_queued: c.max_queued }
    }
}

/// A node of a workflow. What it does is said by the one of `job`, `workflow`, `branch` and `approvers`
/// it has (the definition's `kind`, flattened); `param` goes with `job`, `params` with `workflow`,
/// `default` with `branch`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkflowNode {
    /// Unique within the workflow.
    pub name: String,
    /// The nodes it follows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub upstream: Vec<String>,
    /// A job node: the job it runs, a `key` of the file or a natural key (`app/description/handler`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// A job node's parameter template; empty or absent means the job's own parameter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// A sub-workflow node: the workflow it runs, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
    /// A sub-workflow node's parameters (string values are templates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Map<String, Value>>,
    /// A branch node: its ways, the first whose `when` is true taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<Vec<Way>>,
    /// A branch node's nodes when no way is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
    /// An approval node: who may approve it (empty: anyone with access to the executor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvers: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub trigger_rule: TriggerRule,
    #[serde(default, skip_serializing_if = "is_default")]
    pub retry: Retry,
    /// 0 = none.
    #[serde(default, skip_serializing_if = "is_default")]
    pub timeout_seconds: u32,
    #[serde(default, skip_serializing_if = "is_default")]
    pub allow_failure: bool,
    #[serde(default, skip_serializing_if = "is_default")]
    pub disabled: bool,
}

/// A node's `retry`, in the document's words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, default)]
#[schema(as = NodeRetry)]
pub struct Retry {
    pub count: u32,
    pub delay_ms: u64,
    pub factor: f64,
    pub cap_ms: u64,
    pub jitter: f64,
}

impl Default for Retry {
    fn default() -> Retry {
        model::Retry::default().into()
    }
}

impl From<model::Retry> for Retry {
    fn from(r: model::Retry) -> Retry {
        Retry { count: r.count, delay_ms: r.delay_ms, factor: r.factor, cap_ms: r.cap_ms, jitter: r.jitter }
    }
}

impl From<&Retry> for model::Retry {
    fn from(r: &Retry) -> model::Retry {
        model::Retry {
            count: r.count,
            delay_ms: r.delay_ms,
            factor: r.factor,
            cap_ms: r.cap_ms,
            jitter: r.jitter,
        }
    }
}

/// Defaults are left out of an export, so that a workflow reads as what it sets.
fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// How history times are written: as the console shows them.
pub const TIME_FORMAT: &str = "%Y-%m-%d %H:%M:%S";

/// A history time of a document: exactly [`TIME_FORMAT`] (no other spelling of the same instant, so the
/// plan compares texts), in the years a MySQL DATETIME holds.
pub fn parse_time(text: &str) -> Option<chrono::NaiveDateTime> {
    use chrono::Datelike;
    chrono::NaiveDateTime::parse_from_str(text, TIME_FORMAT)
        .ok()
        .filter(|t| (1000..=9999).contains(&t.year()) && t.format(TIME_FORMAT).to_string() == text)
}

fn do_nothing() -> String {
    "DO_NOTHING".into()
}

fn bean() -> String {
    GlueType::Bean.name().into()
}

/// The natural key of a job: `app/description/handler`, how child jobs are named across databases.
pub fn natural_key(app_name: &str, description: &str, handler: &str) -> String {
    format!("{app_name}/{description}/{handler}")
}

/// ` (line N)` when the entry's line is known.
fn at(line: Option<usize>) -> String {
    line.map_or(String::new(), |line| format!(" (line {line})"))
}

impl Workflow {
    /// The entry as messages name it: `workflow "name" (line N)`.
    pub fn label(&self) -> String {
        format!("workflow {:?}{}", self.name, at(self.line))
    }
}

impl Executor {
    /// The entry as messages name it: `executor "app" (line N)`.
    pub fn name(&self) -> String {
        format!("executor {:?}{}", self.app_name, at(self.line))
    }

    /// A job of this executor as messages name it: `job "app/description/handler" (line N)`.
    pub fn job_name(&self, job: &Job) -> String {
        format!("job {:?}{}", natural_key(&self.app_name, &job.description, &job.handler), at(job.line))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, utoipa::ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum Format {
    Json,
    Toml,
}

impl Format {
    /// The format a file name's extension names: `.json` or `.toml`.
    pub fn of_path(path: &std::path::Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "json" => Some(Format::Json),
            "toml" => Some(Format::Toml),
            _ => None,
        }
    }

    pub fn of_name(name: &str) -> Option<Format> {
        match name.to_ascii_lowercase().as_str() {
            "json" => Some(Format::Json),
            "toml" => Some(Format::Toml),
            _ => None,
        }
    }

    pub fn media_type(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Toml => "application/toml",
        }
    }
}

/// A document that does not parse: the parser's reason, with the line (and column) it stopped at.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct FormatError(String);

impl Document {
    pub fn parse(text: &str, format: Format) -> Result<Document, FormatError> {
        match format {
            // serde_json's messages end with "at line L column C".
            Format::Json => serde_json::from_str(text).map_err(|e| FormatError(e.to_string())),
            Format::Toml => {
                let mut doc: Document =
                    toml::from_str(text).map_err(|e| FormatError(toml_error(text, &e)))?;
                doc.mark_lines(text);
                Ok(doc)
            }
        }
    }

    /// Notes where each executor and job of a TOML text starts; serde_json keeps no positions.
    fn mark_lines(&mut self, text: &str) {
        #[derive(Deserialize)]
        struct Positions {
            #[serde(default)]
            executor: Vec<toml::Spanned<ExecutorAt>>,
            #[serde(default)]
            workflow: Vec<toml::Spanned<serde::de::IgnoredAny>>,
        }
        #[derive(Deserialize)]
        struct ExecutorAt {
            #[serde(default)]
            job: Vec<toml::Spanned<serde::de::IgnoredAny>>,
        }
        let Ok(positions) = toml::from_str::<Positions>(text) else { return };
        let line = |offset: usize| Some(text[..offset.min(text.len())].matches('\n').count() + 1);
        for (executor, at) in self.executors.iter_mut().zip(positions.executor) {
            executor.line = line(at.span().start);
            for (job, job_at) in executor.jobs.iter_mut().zip(&at.get_ref().job) {
                job.line = line(job_at.span().start);
            }
        }
        for (workflow, at) in self.workflows.iter_mut().zip(positions.workflow) {
            workflow.line = line(at.span().start);
        }
    }

    /// The document as text. TOML has no null: a workflow parameter that is null (possible in JSON) is
    /// refused, naming the format that can write it.
    pub fn render(&self, format: Format) -> Result<String, FormatError> {
        match format {
            Format::Json => {
                serde_json::to_string_pretty(self).map(|s| s + "\n").map_err(|e| FormatError(e.to_string()))
            }
            Format::Toml => toml::to_string_pretty(self).map_err(|e| {
                FormatError(format!("TOML cannot write this document ({e}); export it as JSON"))
            }),
        }
    }
}

/// The documents of a file, or of every `.json` and `.toml` file of a folder (in name order), as one
/// document: a folder is applied in one transaction. Errors name the file.
pub fn read_documents(path: &std::path::Path) -> Result<Document, FormatError> {
    let unreadable =
        |path: &std::path::Path, e: std::io::Error| FormatError(format!("{}: {e}", path.display()));
    let files = if path.is_dir() {
        let mut files: Vec<_> = std::fs::read_dir(path)
            .map_err(|e| unreadable(path, e))?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && Format::of_path(p).is_some())
            .collect();
        files.sort();
        files
    } else {
        vec![path.to_path_buf()]
    };
    let mut all = Document::default();
    for file in files {
        let format = Format::of_path(&file)
            .ok_or_else(|| FormatError(format!("{}: the name must end in .json or .toml", file.display())))?;
        let text = std::fs::read_to_string(&file).map_err(|e| unreadable(&file, e))?;
        let doc =
            Document::parse(&text, format).map_err(|e| FormatError(format!("{}: {e}", file.display())))?;
        all.executors.extend(doc.executors);
        all.workflows.extend(doc.workflows);
    }
    Ok(all)
}

/// The TOML parser's message, which already quotes the offending line, led by its line and column.
fn toml_error(text: &str, error: &toml::de::Error) -> String {
    let Some(span) = error.span() else { return error.message().to_string() };
    let before = &text[..span.start.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("line {line} column {column}: {}", error.message())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Document {
        Document {
            executors: vec![Executor {
                app_name: "billing".into(),
                title: "Billing".into(),
                address_type: AddressType::Manual,
                addresses: vec!["http://10.0.0.1:9999/".into()],
                jobs: vec![Job {
                    description: "nightly invoices".into(),
                    author: "ops".into(),
                    schedule_type: "CRON".into(),
                    schedule_conf: "0 0 2 * * ?".into(),
                    misfire_strategy: "DO_NOTHING".into(),
                    route_strategy: "FIRST".into(),
                    handler: "invoices".into(),
                    block_strategy: "SERIAL_EXECUTION".into(),
                    child_jobs: vec!["billing/mail/mailer".into()],
                    glue_type: "BEAN".into(),
                    trigger_status: Some(1),
                    ..Job::default()
                }],
                line: None,
            }],
            workflows: vec![],
        }
    }

    #[test]
    fn both_formats_round_trip() {
        for format in [Format::Json, Format::Toml] {
            let text = sample().render(format).unwrap();
            let mut parsed = Document::parse(&text, format).unwrap();
            for executor in &mut parsed.executors {
                executor.line = None;
                executor.jobs.iter_mut().for_each(|j| j.line = None);
            }
            assert_eq!(parsed, sample(), "{text}");
        }
        assert!(sample().render(Format::Toml).unwrap().contains("[[executor.job]]"));
    }

    #[test]
    fn defaults_fill_what_a_short_file_leaves_out() {
        let text = "[[executor]]\napp_name = \"a-app\"\ntitle = \"A\"\n[[executor.job]]\ndescription = \"d\"\nauthor = \"me\"\n\
                    schedule_type = \"NONE\"\nroute_strategy = \"FIRST\"\nblock_strategy = \"SERIAL_EXECUTION\"\nhandler = \"h\"\n";
        let doc = Document::parse(text, Format::Toml).unwrap();
        let job = &doc.executors[0].jobs[0];
        assert_eq!(
            (job.glue_type.as_str(), job.misfire_strategy.as_str(), job.trigger_status),
            ("BEAN", "DO_NOTHING", None)
        );
        assert_eq!(doc.executors[0].address_type, AddressType::Auto);
        assert_eq!((doc.executors[0].line, job.line), (Some(1), Some(4)));
        assert_eq!(doc.executors[0].job_name(job), "job \"a-app/d/h\" (line 4)");
    }

    #[test]
    fn errors_name_the_line_and_the_field() {
        let toml = "[[executor]]\napp_name = \"a-app\"\ntitle = \"A\"\ncolour = \"red\"\n";
        let e = Document::parse(toml, Format::Toml).unwrap_err().to_string();
        assert!(e.starts_with("line 4 column 1:") && e.contains("colour"), "{e}");
        let json = "{\"executor\": [{\"app_name\": \"a-app\",\n \"title\": 7}]}";
        let e = Document::parse(json, Format::Json).unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
        assert_eq!(Format::of_path(std::path::Path::new("jobs.TOML")), Some(Format::Toml));
        assert_eq!(Format::of_path(std::path::Path::new("jobs.yaml")), None);
    }

    #[test]
    fn a_history_version_is_a_table_of_known_fields() {
        let job = |history: &str| {
            format!("{{\"executor\": [{{\"app_name\": \"a-app\", \"title\": \"A\", \"job\": [{{\"description\": \"d\", \"author\": \"me\", \"schedule_type\": \"NONE\", \"route_strategy\": \"FIRST\", \"block_strategy\": \"SERIAL_EXECUTION\", \"glue_history\": {history}}}]}}]}}")
        };
        let doc = Document::parse(&job("[{\"glue_remark\": \"v1\", \"glue_source\": null}]"), Format::Json)
            .unwrap();
        assert_eq!(
            doc.executors[0].jobs[0].glue_history,
            Some(vec![GlueVersion { glue_remark: "v1".into(), ..GlueVersion::default() }])
        );
        assert_eq!(
            Document::parse(&job("null"), Format::Json).unwrap().executors[0].jobs[0].glue_history,
            None
        );
        for bad in ["[[null, null]]", "[\"v1\"]", "[{\"remark\": \"v1\"}]"] {
            let e = Document::parse(&job(bad), Format::Json).unwrap_err().to_string();
            assert!(e.contains("glue_history[0]"), "{bad}: {e}");
        }
        let toml = "[[executor]]\napp_name = \"a-app\"\ntitle = \"A\"\n[[executor.job]]\ndescription = \"d\"\nauthor = \"me\"\n\
                    schedule_type = \"NONE\"\nroute_strategy = \"FIRST\"\nblock_strategy = \"SERIAL_EXECUTION\"\n\
                    [[executor.job.glue_history]]\nglue_remark = \"v1\"\nupdate_time = \"2024-01-02 03:04:05\"\n";
        let doc = Document::parse(toml, Format::Toml).unwrap();
        assert_eq!(
            doc.executors[0].jobs[0].glue_history.as_ref().map(|h| h[0].update_time.clone()),
            Some(Some("2024-01-02 03:04:05".into()))
        );
    }

    #[test]
    fn history_times_are_read_in_the_one_spelling_an_export_writes() {
        assert!(parse_time("2024-02-29 23:59:59").is_some());
        for bad in [
            "2024-2-29 23:59:59",
            "2023-02-29 00:00:00",
            "0999-01-01 00:00:00",
            "2024-01-01 00:00:00.5",
            " 2024-01-01 00:00:00",
            "2024-01-01T00:00:00",
        ] {
            assert!(parse_time(bad).is_none(), "{bad}");
        }
    }
}
