//! The workflow definition document: what a user writes (JSON, camelCase) and what each version stores.
//!
//! Unknown fields are refused everywhere so that a typo (`upsteam`) is an error, not a silently
//! ignored setting. A node's kind is its own object, internally tagged by `type`:
//! `{"name": "load", "upstream": ["extract"], "kind": {"type": "job", "jobId": 7}}`.
//!
//! The types also describe the document in the REST API's OpenAPI document: the bounds written there are
//! [`super::validate`]'s (a test of the API's document holds them equal), so a client sees what is checked.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::domain::schedule::{MisfireStrategy, ScheduleType};

/// Enums stored as text: `as_str` is the stored (and serialized) form, `parse` its inverse.
// `$text` is a token tree, not a `literal` fragment: the OpenAPI derive reads `rename = "…"` only from a
// bare literal, and a `literal` fragment reaches it wrapped in an invisible group.
macro_rules! stored_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:tt),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant),+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            pub fn parse(text: &str) -> Option<$name> {
                Self::ALL.iter().copied().find(|v| v.as_str() == text)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

stored_enum! {
    /// When a node may run, given its upstream nodes' states (Airflow's trigger rules).
    #[derive(Default)]
    TriggerRule {
        #[default]
        AllSuccess = "all_success",
        AllDone = "all_done",
        OneSuccess = "one_success",
        OneFailed = "one_failed",
        NoneFailed = "none_failed",
    }
}

stored_enum! {
    /// What a node's failure does to the rest of the run.
    #[derive(Default)]
    FailureStrategy {
        /// No pending node starts any more; running ones finish.
        End = "end",
        /// Only the nodes depending on it are affected, through their trigger rules.
        #[default]
        Continue = "continue",
    }
}

stored_enum! {
    /// What a new run does when `maxRuns` runs are already active.
    #[derive(Default)]
    LimitPolicy {
        #[default]
        Queue = "queue",
        Discard = "discard",
        ReplaceOldest = "replace_oldest",
    }
}

stored_enum! {
    /// The state of a node's latest attempt in a run.
    NodeState {
        /// No attempt yet.
        Pending = "pending",
        /// Failed; a retry is due at the attempt's retry time.
        WaitingRetry = "waiting_retry",
        /// Ready, not yet sent.
        Queued = "queued",
        /// Sent (its log row exists).
        Running = "running",
        WaitingApproval = "waiting_approval",
        Succeeded = "succeeded",
        Failed = "failed",
        Skipped = "skipped",
        UpstreamFailed = "upstream_failed",
        Stopped = "stopped",
    }
}

stored_enum! {
    /// The state of a run.
    RunState {
        /// Waiting for a place under the workflow's `maxRuns`.
        Queued = "queued",
        Running = "running",
        /// No node starts; running nodes finish.
        Paused = "paused",
        /// Asked to stop: running nodes are being killed, nothing starts.
        Stopping = "stopping",
        Succeeded = "succeeded",
        Failed = "failed",
        Stopped = "stopped",
        /// Refused by the concurrency policy (`discard`, or `queue` with the queue full).
        Discarded = "discarded",
    }
}

impl RunState {
    /// States in which a run holds a place under `maxRuns` (or waits for one).
    pub const ACTIVE: [RunState; 4] =
        [RunState::Queued, RunState::Running, RunState::Paused, RunState::Stopping];

    /// Whether the run is over.
    pub fn is_terminal(self) -> bool {
        !Self::ACTIVE.contains(&self)
    }
}

impl NodeState {
    /// Whether the node is done for this run.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            NodeState::Succeeded
                | NodeState::Failed
                | NodeState::Skipped
                | NodeState::UpstreamFailed
                | NodeState::Stopped
        )
    }
}

/// One version of a workflow. Numeric bounds are checked by [`super::validate::validate`], not here,
/// so that every problem of a document is reported at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(description = "A workflow definition document: one version of a workflow, its nodes and settings.")]
pub struct Definition {
    /// Unique among workflows; sub-workflow nodes name a workflow by it.
    #[schema(
        max_length = 128,
        pattern = r"^[^\x00-\x1f\x7f-\x9f]*[^\x00-\x1f\x7f-\x9f \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^\x00-\x1f\x7f-\x9f]*$"
    )]
    pub name: String,
    /// The executor group the workflow belongs to, for permissions (as a job's).
    #[schema(minimum = 1)]
    pub job_group: i32,
    #[serde(default)]
    #[schema(max_length = 2000)]
    pub description: String,
    #[serde(default)]
    pub schedule: Schedule,
    /// Default parameters; a run's own parameters are laid over them.
    #[serde(default)]
    pub params: Map<String, Value>,
    #[serde(default)]
    pub concurrency: Concurrency,
    #[serde(default)]
    pub failure_strategy: FailureStrategy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<Deadline>,
    /// Comma-separated addresses; may be empty.
    #[serde(default)]
    #[schema(max_length = 255, pattern = r"^[^\x00-\x1f\x7f-\x9f]*$")]
    pub alarm_email: String,
    #[schema(min_items = 1, max_items = 2000)]
    pub nodes: Vec<Node>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Schedule {
    #[serde(rename = "type")]
    pub kind: ScheduleType,
    /// CRON: a Quartz expression; FIX_RATE: seconds; NONE: ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conf: Option<String>,
    #[serde(default = "do_nothing")]
    pub misfire: MisfireStrategy,
}

fn do_nothing() -> MisfireStrategy {
    MisfireStrategy::DoNothing
}

impl Default for Schedule {
    fn default() -> Schedule {
        Schedule { kind: ScheduleType::None, conf: None, misfire: MisfireStrategy::DoNothing }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Concurrency {
    /// Runs of this workflow active at once.
    #[schema(minimum = 1, maximum = 1000)]
    pub max_runs: u32,
    pub on_limit: LimitPolicy,
    /// Runs waiting under `queue`; past it a new run is refused.
    #[schema(minimum = 1, maximum = 10000)]
    pub max_queued: u32,
}

impl Default for Concurrency {
    fn default() -> Concurrency {
        Concurrency { max_runs: 1, on_limit: LimitPolicy::Queue, max_queued: 100 }
    }
}

/// A time limit on a whole run, counted from its start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Deadline {
    #[schema(minimum = 1, maximum = 31622400)]
    pub seconds: u64,
    /// Stop the run when the deadline passes (otherwise only alarm).
    #[serde(default)]
    pub stop: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Node {
    /// Unique within the workflow.
    #[schema(min_length = 1, max_length = 64, pattern = "^[A-Za-z0-9_-]+$")]
    pub name: String,
    /// The names of the nodes this one follows, in the order written.
    #[serde(default)]
    pub upstream: Vec<String>,
    pub kind: NodeKind,
    #[serde(default)]
    pub trigger_rule: TriggerRule,
    #[serde(default)]
    pub retry: Retry,
    /// 0 = no timeout.
    #[serde(default)]
    #[schema(maximum = 31622400)]
    pub timeout_seconds: u32,
    /// A failure counts as success for what follows; the node's state still says failed.
    #[serde(default)]
    pub allow_failure: bool,
    /// Skipped in every run (counts as skipped for trigger rules).
    #[serde(default)]
    pub disabled: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "type", rename_all = "lowercase", rename_all_fields = "camelCase", deny_unknown_fields)]
pub enum NodeKind {
    /// Runs an existing xxl-job job; `param` is a template rendered into its executor parameter.
    Job {
        // The OpenAPI derive does not read `rename_all_fields`: it is told the name.
        #[serde(rename = "jobId")]
        #[schema(minimum = 1)]
        job_id: i32,
        #[serde(default)]
        #[schema(max_length = 65535)]
        param: String,
    },
    /// Chooses which of its direct downstream nodes run: the first way whose `when` is true, else
    /// `default`; the other downstream nodes are skipped for the run.
    Branch {
        #[serde(default)]
        ways: Vec<Way>,
        #[serde(default)]
        default: Vec<String>,
    },
    /// Runs another workflow (by name) and waits for it. String values of `params` (at the top level)
    /// are templates; other values are passed as they are.
    #[serde(rename = "subworkflow")]
    SubWorkflow {
        #[schema(
            max_length = 128,
            pattern = r"^[^\x00-\x1f\x7f-\x9f]*[^\x00-\x1f\x7f-\x9f \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^\x00-\x1f\x7f-\x9f]*$"
        )]
        workflow: String,
        #[serde(default)]
        params: Map<String, Value>,
    },
    /// Waits for a user to approve; empty `approvers` = anyone with permission on the executor group.
    Approval {
        #[serde(default)]
        approvers: Vec<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Way {
    /// An expression, true to take this way.
    pub when: String,
    pub to: Vec<String>,
}

/// Retries of a failed node. Defaults follow Airflow's: no retry, 5 minutes apart, no back-off,
/// at most a day between two attempts, no jitter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Retry {
    #[schema(maximum = 100)]
    pub count: u32,
    /// The first retry's delay.
    #[schema(maximum = 86400000)]
    pub delay_ms: u64,
    /// Each further retry waits this many times longer.
    #[schema(minimum = 1, maximum = 10)]
    pub factor: f64,
    /// No retry waits longer than this; not below `delayMs`.
    #[schema(maximum = 86400000)]
    pub cap_ms: u64,
    /// The fraction of a delay that is drawn at random and taken off it (0 = exact delays).
    #[schema(minimum = 0, maximum = 1)]
    pub jitter: f64,
}

impl Default for Retry {
    fn default() -> Retry {
        Retry { count: 0, delay_ms: 300_000, factor: 1.0, cap_ms: 86_400_000, jitter: 0.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn minimal() -> Value {
        json!({"name": "wf", "jobGroup": 1, "nodes": [{"name": "a", "kind": {"type": "job", "jobId": 3}}]})
    }

    #[test]
    fn a_minimal_document_takes_the_design_defaults() {
        let def: Definition = serde_json::from_value(minimal()).unwrap();
        assert_eq!(def.schedule, Schedule::default());
        assert_eq!(def.schedule.kind, ScheduleType::None);
        assert_eq!(
            def.concurrency,
            Concurrency { max_runs: 1, on_limit: LimitPolicy::Queue, max_queued: 100 }
        );
        assert_eq!(def.failure_strategy, FailureStrategy::Continue);
        assert_eq!(def.deadline, None);
        assert!(def.params.is_empty() && def.description.is_empty() && def.alarm_email.is_empty());
        let node = &def.nodes[0];
        assert_eq!(node.kind, NodeKind::Job { job_id: 3, param: String::new() });
        assert_eq!(node.trigger_rule, TriggerRule::AllSuccess);
        assert_eq!(node.retry, Retry::default());
        assert!(node.upstream.is_empty() && !node.allow_failure && !node.disabled);
        assert_eq!(node.timeout_seconds, 0);
    }

    #[test]
    fn a_full_document_round_trips_in_camel_case() {
        let doc = json!({
            "name": "wf", "jobGroup": 2, "description": "d",
            "schedule": {"type": "CRON", "conf": "0 0 * * * ?", "misfire": "FIRE_ONCE_NOW"},
            "params": {"x": 1},
            "concurrency": {"maxRuns": 3, "onLimit": "replace_oldest", "maxQueued": 5},
            "failureStrategy": "end",
            "deadline": {"seconds": 60, "stop": true},
            "alarmEmail": "a@b.c",
            "nodes": [
                {"name": "b", "upstream": [], "kind": {"type": "branch",
                    "ways": [{"when": "params.x > 0", "to": ["j"]}], "default": ["s"]},
                 "triggerRule": "all_success",
                 "retry": {"count": 2, "delayMs": 10, "factor": 2.0, "capMs": 100, "jitter": 0.5},
                 "timeoutSeconds": 9, "allowFailure": true, "disabled": false},
                {"name": "j", "upstream": ["b"], "kind": {"type": "job", "jobId": 1, "param": "{{ ds }}"},
                 "triggerRule": "one_failed", "retry": {"count": 0, "delayMs": 300000, "factor": 1.0,
                 "capMs": 86400000, "jitter": 0.0}, "timeoutSeconds": 0, "allowFailure": false,
                 "disabled": true},
                {"name": "s", "upstream": ["b"], "kind": {"type": "subworkflow", "workflow": "other",
                    "params": {"p": "{{ run_id }}"}}, "triggerRule": "none_failed",
                 "retry": {"count": 0, "delayMs": 300000, "factor": 1.0, "capMs": 86400000, "jitter": 0.0},
                 "timeoutSeconds": 0, "allowFailure": false, "disabled": false},
                {"name": "ok", "upstream": ["j", "s"], "kind": {"type": "approval", "approvers": ["admin"]},
                 "triggerRule": "all_done",
                 "retry": {"count": 0, "delayMs": 300000, "factor": 1.0, "capMs": 86400000, "jitter": 0.0},
                 "timeoutSeconds": 0, "allowFailure": false, "disabled": false}
            ]
        });
        let def: Definition = serde_json::from_value(doc.clone()).unwrap();
        assert_eq!(def.schedule.misfire, MisfireStrategy::FireOnceNow);
        assert_eq!(
            def.nodes[2].kind,
            NodeKind::SubWorkflow {
                workflow: "other".into(),
                params: json!({"p": "{{ run_id }}"}).as_object().unwrap().clone()
            }
        );
        assert_eq!(serde_json::to_value(&def).unwrap(), doc);
    }

    #[test]
    fn unknown_fields_are_refused_at_every_level() {
        let mut top = minimal();
        top["upsteam"] = json!([]);
        let mut node = minimal();
        node["nodes"][0]["upsteam"] = json!([]);
        let mut kind = minimal();
        kind["nodes"][0]["kind"]["ways"] = json!([]);
        let mut retry = minimal();
        retry["nodes"][0]["retry"] = json!({"count": 1, "delay": 5});
        let mut schedule = minimal();
        schedule["schedule"] = json!({"type": "NONE", "cron": "x"});
        for doc in [top, node, kind, retry, schedule] {
            let err = serde_json::from_value::<Definition>(doc).unwrap_err().to_string();
            assert!(err.contains("unknown field"), "{err}");
        }
    }

    #[test]
    fn bad_enum_values_and_missing_fields_are_refused() {
        let mut rule = minimal();
        rule["nodes"][0]["triggerRule"] = json!("ALL_SUCCESS");
        let mut kind = minimal();
        kind["nodes"][0]["kind"] = json!({"type": "sensor"});
        let mut job = minimal();
        job["nodes"][0]["kind"] = json!({"type": "job"});
        let mut nodes = minimal();
        nodes.as_object_mut().unwrap().remove("nodes");
        for doc in [rule, kind, job, nodes] {
            assert!(serde_json::from_value::<Definition>(doc).is_err());
        }
    }

    #[test]
    fn stored_enums_parse_what_they_print() {
        for s in NodeState::ALL {
            assert_eq!(NodeState::parse(s.as_str()), Some(*s));
            assert_eq!(serde_json::to_value(s).unwrap(), json!(s.as_str()));
        }
        for r in TriggerRule::ALL {
            assert_eq!(TriggerRule::parse(&r.to_string()), Some(*r));
        }
        for f in FailureStrategy::ALL {
            assert_eq!(FailureStrategy::parse(f.as_str()), Some(*f));
        }
        for l in LimitPolicy::ALL {
            assert_eq!(LimitPolicy::parse(l.as_str()), Some(*l));
        }
        assert_eq!(NodeState::WaitingApproval.as_str(), "waiting_approval");
        assert_eq!(LimitPolicy::ReplaceOldest.as_str(), "replace_oldest");
        assert_eq!(NodeState::parse("Pending"), None);
        assert_eq!(serde_json::to_value(ScheduleType::FixRate).unwrap(), json!("FIX_RATE"));
    }

    #[test]
    fn terminal_states_are_the_five_final_ones() {
        let terminal: Vec<_> =
            NodeState::ALL.iter().filter(|s| s.is_terminal()).map(|s| s.as_str()).collect();
        assert_eq!(terminal, ["succeeded", "failed", "skipped", "upstream_failed", "stopped"]);
    }
}
