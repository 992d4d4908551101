//! Pure logic and data shapes of xxl-job, free of I/O: unit-testable without a database or network.

pub mod admission;
pub mod callback;
pub mod codes;
pub mod fires;
pub mod glue;
pub mod html;
pub mod misfire;
pub mod ownership;
pub mod protocol;
pub mod registry;
pub mod routing;
pub mod schedule;
pub mod trigger_msg;
pub mod workflow;

pub use protocol::{HandleCallbackParam, RegistryParam, ReturnT};

/// Why a trigger was issued; its title appears in `trigger_msg` (2.4.2: TriggerTypeEnum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TriggerType {
    Manual,
    Cron,
    Retry,
    Parent,
    Api,
    Misfire,
    /// A node of a workflow run (this admin's own; 2.4.2 has no such type).
    Workflow,
}

impl TriggerType {
    pub fn i18n_key(self) -> &'static str {
        match self {
            TriggerType::Manual => "jobconf_trigger_type_manual",
            TriggerType::Cron => "jobconf_trigger_type_cron",
            TriggerType::Retry => "jobconf_trigger_type_retry",
            TriggerType::Parent => "jobconf_trigger_type_parent",
            TriggerType::Api => "jobconf_trigger_type_api",
            TriggerType::Misfire => "jobconf_trigger_type_misfire",
            TriggerType::Workflow => "jobconf_trigger_type_workflow",
        }
    }

    /// The name 2.4.2 gives the type (its enum constant), as sent in the `Xxl-Job-Trigger-Type` header.
    pub fn name(self) -> &'static str {
        match self {
            TriggerType::Manual => "MANUAL",
            TriggerType::Cron => "CRON",
            TriggerType::Retry => "RETRY",
            TriggerType::Parent => "PARENT",
            TriggerType::Api => "API",
            TriggerType::Misfire => "MISFIRE",
            TriggerType::Workflow => "WORKFLOW",
        }
    }
}

/// A request to run a job once (2.4.2: JobTriggerPoolHelper.trigger): everything the trigger pipeline
/// needs besides the job row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriggerRequest {
    pub job_id: i32,
    pub trigger_type: TriggerType,
    /// `>= 0` overrides the job's retry count; negative means "use the job's".
    pub fail_retry_count: i32,
    /// `index/total` of one shard to run (retries of a broadcast); `None` = all shards or none.
    pub sharding_param: Option<String>,
    /// Replaces the job's parameter for this trigger when present.
    pub executor_param: Option<String>,
    /// Comma-separated addresses replacing the group's for this trigger when non-blank.
    pub address_list: Option<String>,
    /// Told the id of the trigger's (first) log row once it exists, for a caller that answers with it.
    pub on_log_id: Option<LogIdSink>,
}

/// Receives a trigger's log id. Dropped unused when the trigger never gets a row (queue full, job gone).
#[derive(Clone)]
pub struct LogIdSink(pub std::sync::Arc<dyn Fn(i64) + Send + Sync>);

impl std::fmt::Debug for LogIdSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LogIdSink")
    }
}

/// Requests are equal whatever their sinks: a sink is where an answer goes, not what is asked.
impl PartialEq for LogIdSink {
    fn eq(&self, _: &LogIdSink) -> bool {
        true
    }
}

impl Eq for LogIdSink {}

impl TriggerRequest {
    /// A trigger with every override left to the job's own configuration.
    pub fn of_job(job_id: i32, trigger_type: TriggerType) -> TriggerRequest {
        TriggerRequest {
            job_id,
            trigger_type,
            fail_retry_count: -1,
            sharding_param: None,
            executor_param: None,
            address_list: None,
            on_log_id: None,
        }
    }
}

/// GLUE source versions kept per job (the console's GLUE IDE shows them).
pub const GLUE_HISTORY: i64 = 30;

/// Splits a comma-separated list the way Java's `String.split(",")` does: trailing empty items dropped,
/// inner ones kept, nothing trimmed. xxl-job stores addresses and child ids in this form.
pub fn java_split(text: &str) -> Vec<&str> {
    let mut items: Vec<&str> = text.split(',').collect();
    while items.last().is_some_and(|s| s.is_empty()) {
        items.pop();
    }
    items
}

/// "Blank" in the Java sense: absent, empty or only whitespace.
pub fn is_blank(text: Option<&str>) -> bool {
    text.is_none_or(|t| t.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_split_drops_only_trailing_empty_items() {
        assert_eq!(java_split("a,b"), vec!["a", "b"]);
        assert_eq!(java_split("a,,b,,"), vec!["a", "", "b"]);
        assert_eq!(java_split(",a"), vec!["", "a"]);
        assert_eq!(java_split("2, 3"), vec!["2", " 3"]);
        assert!(java_split("").is_empty());
        assert!(java_split(",,").is_empty());
    }

    #[test]
    fn blank_means_absent_empty_or_whitespace() {
        assert!(is_blank(None));
        assert!(is_blank(Some(" \t")));
        assert!(!is_blank(Some(" x ")));
    }
}
