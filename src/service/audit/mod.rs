//! The audit trail (docs/audit.md): every change and every sign-in is an event saying who, when, from
//! where, what, with what outcome, and which fields changed. Events are built where the rule is applied
//! (the services, and the console handlers that hold their own rules) from the [`Origin`] the HTTP edge
//! attached to the user, and go to the log under the target `audit`, to a JSON-lines file and to a
//! webhook (see [`sink`]). No table is added: the file is read back by the console's audit page
//! (see [`read`]).
//!
//! No secret ever enters an event: password hashes, tokens and secrets are replaced by [`HIDDEN`] in
//! the changed fields, an API token is named by its id (a random value it carries beside its
//! signature), never by its text.

pub mod read;
mod sink;

use super::access::LoginUser;
use super::ServiceError;
use crate::config::AuditConfig;
use crate::time::Clock;
use chrono::{Local, SecondsFormat, TimeZone};
use serde::Serialize;
use serde_json::{Map, Value};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use sink::SinkError;

/// What a redacted value reads as.
pub const HIDDEN: &str = "***";

/// The sign-in methods: how a user proved who they are.
pub const METHOD_PASSWORD: &str = "password";
pub const METHOD_TOKEN: &str = "token";
/// A console login whose password an LDAP directory checked (`xxl.job.auth.ldap.*`).
pub const METHOD_LDAP: &str = "ldap";
/// A console sign-in through an OpenID Connect provider (`xxl.job.auth.oidc.*`).
pub const METHOD_OIDC: &str = "oidc";

/// What an event records; docs/audit.md says what each kind means. Its name in the event is
/// [`EventKind::name`]: the audit page filters on those names, so they never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    SignIn,
    SignOut,
    AccessRefused,
    GroupAdd,
    GroupUpdate,
    GroupRemove,
    JobAdd,
    JobUpdate,
    JobRemove,
    JobStart,
    JobStop,
    JobTrigger,
    GlueSave,
    LogKill,
    LogClear,
    UserAdd,
    UserUpdate,
    UserRemove,
    UserPassword,
    TokenIssue,
    AlarmTest,
    CodeApply,
    WorkflowAdd,
    WorkflowUpdate,
    WorkflowRestore,
    WorkflowRemove,
    WorkflowStart,
    WorkflowStop,
    WorkflowRunStart,
    WorkflowRunOperate,
    WorkflowBackfill,
}

impl EventKind {
    /// Every kind, in the audit page's filter order.
    pub const ALL: [EventKind; 31] = [
        EventKind::SignIn,
        EventKind::SignOut,
        EventKind::AccessRefused,
        EventKind::GroupAdd,
        EventKind::GroupUpdate,
        EventKind::GroupRemove,
        EventKind::JobAdd,
        EventKind::JobUpdate,
        EventKind::JobRemove,
        EventKind::JobStart,
        EventKind::JobStop,
        EventKind::JobTrigger,
        EventKind::GlueSave,
        EventKind::LogKill,
        EventKind::LogClear,
        EventKind::UserAdd,
        EventKind::UserUpdate,
        EventKind::UserRemove,
        EventKind::UserPassword,
        EventKind::TokenIssue,
        EventKind::AlarmTest,
        EventKind::CodeApply,
        EventKind::WorkflowAdd,
        EventKind::WorkflowUpdate,
        EventKind::WorkflowRestore,
        EventKind::WorkflowRemove,
        EventKind::WorkflowStart,
        EventKind::WorkflowStop,
        EventKind::WorkflowRunStart,
        EventKind::WorkflowRunOperate,
        EventKind::WorkflowBackfill,
    ];

    /// The kind as written in the event's `kind` field.
    pub const fn name(self) -> &'static str {
        match self {
            EventKind::SignIn => "signin",
            EventKind::SignOut => "signout",
            EventKind::AccessRefused => "access.refused",
            EventKind::GroupAdd => "group.add",
            EventKind::GroupUpdate => "group.update",
            EventKind::GroupRemove => "group.remove",
            EventKind::JobAdd => "job.add",
            EventKind::JobUpdate => "job.update",
            EventKind::JobRemove => "job.remove",
            EventKind::JobStart => "job.start",
            EventKind::JobStop => "job.stop",
            EventKind::JobTrigger => "job.trigger",
            EventKind::GlueSave => "glue.save",
            EventKind::LogKill => "log.kill",
            EventKind::LogClear => "log.clear",
            EventKind::UserAdd => "user.add",
            EventKind::UserUpdate => "user.update",
            EventKind::UserRemove => "user.remove",
            EventKind::UserPassword => "user.password",
            EventKind::TokenIssue => "token.issue",
            EventKind::AlarmTest => "alarm.test",
            EventKind::CodeApply => "code.apply",
            EventKind::WorkflowRunStart => "workflow.run.start",
            EventKind::WorkflowRunOperate => "workflow.run.operate",
            EventKind::WorkflowBackfill => "workflow.backfill",
            EventKind::WorkflowAdd => "workflow.add",
            EventKind::WorkflowUpdate => "workflow.update",
            EventKind::WorkflowRestore => "workflow.restore",
            EventKind::WorkflowRemove => "workflow.remove",
            EventKind::WorkflowStart => "workflow.start",
            EventKind::WorkflowStop => "workflow.stop",
        }
    }
}

/// The name of every kind, for the audit page's filter.
pub const KINDS: [&str; EventKind::ALL.len()] = {
    let mut names = [""; EventKind::ALL.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = EventKind::ALL[i].name();
        i += 1;
    }
    names
};

/// How an operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Success,
    /// Refused for lack of permission.
    Refused,
    /// Refused by a rule (invalid input, unknown row, executor failure), or a database error.
    Failure,
}

impl Outcome {
    /// The outcome of a result, and its message when it failed.
    pub fn of<T, E: Failure>(result: &Result<T, E>) -> (Outcome, Option<String>) {
        match result {
            Ok(_) => (Outcome::Success, None),
            Err(error) => {
                let (outcome, message) = error.audited();
                (outcome, Some(message))
            }
        }
    }
}

/// An error as an audit event tells it: refused or failed, and the message (never a database's own
/// words, which stay in the log where the edge puts them).
pub trait Failure {
    fn audited(&self) -> (Outcome, String);
}

impl Failure for ServiceError {
    fn audited(&self) -> (Outcome, String) {
        match self {
            ServiceError::Forbidden(msg) => (Outcome::Refused, msg.clone()),
            ServiceError::Storage(_) => (Outcome::Failure, "database error".to_string()),
            other => (Outcome::Failure, other.to_string()),
        }
    }
}

/// What an event is about: `{"type": "job", "id": 3, "name": "nightly"}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Target {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Target {
    pub fn new(kind: &'static str, id: impl Into<Value>, name: Option<String>) -> Target {
        Target { kind, id: Some(id.into()), name }
    }

    pub fn named(kind: &'static str, name: impl Into<String>) -> Target {
        Target { kind, id: None, name: Some(name.into()) }
    }
}

/// Who acted, as the event names them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Actor {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_id: Option<i32>,
    pub user_name: String,
    /// `console`, `api` (a personal token), or `configuration` (`xxl.job.apply.file`).
    pub via: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_id: Option<String>,
}

impl Actor {
    pub fn of(user: &LoginUser) -> Actor {
        let via = match (&user.1.token_id, user.1.address) {
            (Some(_), _) => "api",
            (None, Some(_)) => "console",
            (None, None) => "configuration",
        };
        Actor {
            user_id: Some(user.0.id).filter(|id| *id > 0),
            user_name: user.0.username.clone(),
            via,
            token_id: user.1.token_id.clone(),
        }
    }
}

/// One audit event, before it is stamped with the time.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub kind: EventKind,
    pub actor: Actor,
    pub address: Option<IpAddr>,
    pub target: Option<Target>,
    pub outcome: Outcome,
    /// Why it failed or was refused.
    pub message: Option<String>,
    /// The fields that changed, `{"field": {"before": …, "after": …}}`, redacted.
    pub changes: Option<Value>,
    /// Sign-ins: how the user proved who they are.
    pub method: Option<&'static str>,
}

impl Event {
    /// An event of `user`'s request, from the address the edge saw.
    pub fn by(user: &LoginUser, kind: EventKind, target: Option<Target>) -> Event {
        Event {
            kind,
            actor: Actor::of(user),
            address: user.1.address,
            target,
            outcome: Outcome::Success,
            message: None,
            changes: None,
            method: None,
        }
    }

    /// With the outcome and message of `result`.
    pub fn ended<T, E: Failure>(mut self, result: &Result<T, E>) -> Event {
        (self.outcome, self.message) = Outcome::of(result);
        self
    }

    pub fn changes(mut self, changes: Option<Value>) -> Event {
        self.changes = changes.filter(|c| c.as_object().is_some_and(|o| !o.is_empty()));
        self
    }

    /// The event as written: one JSON object, the time in RFC 3339 with the admin's offset and in epoch ms.
    fn to_json(&self, now_ms: i64) -> Value {
        let time = Local
            .timestamp_millis_opt(now_ms)
            .single()
            .map(|t| t.to_rfc3339_opts(SecondsFormat::Millis, false));
        let mut event = Map::new();
        event.insert("time".into(), Value::from(time));
        event.insert("epochMs".into(), Value::from(now_ms));
        event.insert("kind".into(), Value::from(self.kind.name()));
        event.insert("outcome".into(), serde_json::to_value(self.outcome).unwrap_or_default());
        event.insert("actor".into(), serde_json::to_value(&self.actor).unwrap_or_default());
        event.insert("address".into(), Value::from(self.address.map(|a| a.to_string())));
        if let Some(method) = self.method {
            event.insert("method".into(), Value::from(method));
        }
        if let Some(target) = &self.target {
            event.insert("target".into(), serde_json::to_value(target).unwrap_or_default());
        }
        if let Some(changes) = &self.changes {
            event.insert("changes".into(), redacted(changes.clone()));
        }
        if let Some(message) = &self.message {
            event.insert("message".into(), Value::from(message.as_str()));
        }
        Value::Object(event)
    }
}

/// The audit trail's entry point, shared by every request: cheap to clone.
#[derive(Clone)]
pub struct Audit {
    clock: Arc<dyn Clock>,
    sinks: Arc<sink::Sinks>,
    file: Option<PathBuf>,
}

impl Audit {
    /// Opens the file (creating it) and starts the webhook sender, as configured; events always go to the
    /// log as well.
    pub fn start(config: &AuditConfig, clock: Arc<dyn Clock>) -> Result<Audit, SinkError> {
        let sinks = sink::Sinks::start(config)?;
        Ok(Audit { clock, sinks: Arc::new(sinks), file: config.file.clone() })
    }

    /// The file events are appended to, for the console's audit page.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// Writes the event to every sink without waiting for disk or network (see [`sink`]).
    pub fn record(&self, event: Event) {
        let line = event.to_json(self.clock.now_ms()).to_string();
        tracing::info!(target: "audit", "{line}");
        self.sinks.send(line);
    }

    /// Records the outcome of an operation of `user` on `target` (with `changes` when it succeeded) and
    /// hands the result back.
    pub fn done<T, E: Failure>(
        &self,
        user: &LoginUser,
        kind: EventKind,
        target: Target,
        changes: impl FnOnce(&T) -> Option<Value>,
        result: Result<T, E>,
    ) -> Result<T, E> {
        let changed = result.as_ref().ok().and_then(changes);
        self.record(Event::by(user, kind, Some(target)).ended(&result).changes(changed));
        result
    }

    /// A sign-in attempt: `name` as typed (or the account's name), `user_id` when an account was found,
    /// `method` how it was proved ([`METHOD_PASSWORD`], `oidc`, `ldap`…), and the reason of a failure.
    /// Every login path calls this, whatever its method.
    pub fn sign_in(
        &self,
        name: &str,
        user_id: Option<i32>,
        method: &'static str,
        address: IpAddr,
        failure: Option<&str>,
    ) {
        let via = if method == METHOD_TOKEN { "api" } else { "console" };
        self.record(Event {
            kind: EventKind::SignIn,
            actor: Actor { user_id, user_name: name.to_string(), via, token_id: None },
            address: Some(address),
            target: None,
            outcome: if failure.is_some() { Outcome::Failure } else { Outcome::Success },
            message: failure.map(str::to_string),
            changes: None,
            method: Some(method),
        });
    }

    /// A request refused for lack of permission: the page or endpoint, or the group asked for.
    pub fn refused(&self, user: &LoginUser, target: Target, message: &str) {
        let event = Event {
            outcome: Outcome::Refused,
            message: Some(message.to_string()),
            ..Event::by(user, EventKind::AccessRefused, Some(target))
        };
        self.record(event);
    }

    /// A request refused an executor group the user is not granted.
    pub fn refused_group(&self, user: &LoginUser, group: i32, message: &str) {
        self.refused(user, Target::new("group", group, None), message);
    }
}

/// The fields that differ between two versions of a row (`None`: it did not exist), each as
/// `{"before": …, "after": …}`; a created row lists its non-empty fields, a deleted one its fields.
pub fn changes<T: Serialize>(before: Option<&T>, after: Option<&T>) -> Option<Value> {
    let object = |row: Option<&T>| match row.map(serde_json::to_value) {
        Some(Ok(Value::Object(map))) => map,
        _ => Map::new(),
    };
    let (before, after) = (object(before), object(after));
    let mut names: Vec<&String> = before.keys().chain(after.keys()).collect();
    names.sort();
    names.dedup();
    let mut changed = Map::new();
    for name in names {
        let (old, new) = (before.get(name).unwrap_or(&Value::Null), after.get(name).unwrap_or(&Value::Null));
        if old != new && !(is_empty(old) && is_empty(new)) {
            changed.insert(name.clone(), serde_json::json!({ "before": old, "after": new }));
        }
    }
    Some(Value::Object(changed))
}

fn is_empty(value: &Value) -> bool {
    value.is_null() || value.as_str() == Some("")
}

/// Whether a field name says it holds a credential.
fn is_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["password", "token", "secret"].iter().any(|word| name.contains(word))
}

/// `value` with every non-empty value under a credential's name replaced by [`HIDDEN`], at any depth.
pub fn redacted(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, value)| {
                    let value = if is_secret(&key) { hide(value) } else { redacted(value) };
                    (key, value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(redacted).collect()),
        other => other,
    }
}

/// A credential's value: its shape kept (a before/after pair stays one), its content hidden.
fn hide(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(map.into_iter().map(|(key, value)| (key, hide(value))).collect()),
        value if is_empty(&value) => value,
        _ => Value::from(HIDDEN),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::Origin;
    use serde_json::json;

    #[test]
    fn changes_list_only_what_differs_and_hide_credentials() {
        let before = json!({"jobDesc": "a", "author": "x", "alarmEmail": null, "password": "e10adc"});
        let after = json!({"jobDesc": "b", "author": "x", "alarmEmail": "", "password": "0000"});
        let diff = redacted(changes(Some(&before), Some(&after)).unwrap());
        assert_eq!(
            diff,
            json!({"jobDesc": {"before": "a", "after": "b"}, "password": {"before": HIDDEN, "after": HIDDEN}})
        );
        let created = changes(None, Some(&json!({"title": "t", "addressList": null}))).unwrap();
        assert_eq!(created, json!({"title": {"before": null, "after": "t"}}));
        let deep = redacted(json!({"plan": [{"accessToken": "abc", "name": "n"}], "secret": ""}));
        assert_eq!(deep, json!({"plan": [{"accessToken": HIDDEN, "name": "n"}], "secret": ""}));
    }

    #[test]
    fn every_kind_has_its_own_name_and_docs_audit_md_lists_each() {
        let doc = include_str!("../../../docs/audit.md");
        let table = &doc[doc.find("| kind | event |").unwrap()..];
        let table = &table[..table.find("\n\n").unwrap_or(table.len())];
        let mut names: Vec<&str> = KINDS.to_vec();
        for name in &names {
            assert!(table.contains(&format!("`{name}`")), "{name} is missing from docs/audit.md");
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), KINDS.len(), "two kinds share a name");
        assert_eq!(KINDS[..3], ["signin", "signout", "access.refused"]);
    }

    #[test]
    fn an_event_is_one_json_object_with_both_times() {
        let user = LoginUser(
            crate::storage::JobUser {
                id: 7,
                username: "ops".into(),
                password: "hash".into(),
                role: crate::storage::Role::Normal,
                permission: None,
            },
            Origin { address: Some("10.0.0.9".parse().unwrap()), token_id: Some("ab12".into()) },
        );
        let event =
            Event::by(&user, EventKind::JobStart, Some(Target::new("job", 3, Some("nightly".into()))))
                .ended::<(), _>(&Err(ServiceError::Forbidden("no".into())));
        let json = event.to_json(1_700_000_000_123);
        assert_eq!(json["epochMs"], 1_700_000_000_123i64);
        let time = chrono::DateTime::parse_from_rfc3339(json["time"].as_str().unwrap()).unwrap();
        assert_eq!(time.timestamp_millis(), 1_700_000_000_123);
        assert_eq!(json["actor"], json!({"userId": 7, "userName": "ops", "via": "api", "tokenId": "ab12"}));
        assert_eq!(
            (json["address"].as_str(), json["outcome"].as_str(), json["message"].as_str()),
            (Some("10.0.0.9"), Some("refused"), Some("no"))
        );
        assert_eq!(json["target"], json!({"type": "job", "id": 3, "name": "nightly"}));
        assert!(!json.to_string().contains("hash"));
    }
}
