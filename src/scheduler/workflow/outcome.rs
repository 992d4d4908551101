//! What a job node's log rows say about its attempt: finished or not, succeeded or failed, its output.

use super::snapshot::output_value;
use crate::domain::callback::MAX_HANDLE_MSG_UTF16;
use crate::domain::workflow::model::NodeState;
use crate::storage::NodeLogResult;
use serde_json::Value;

/// Whether a log row has its result: the executor's, or a failed trigger's.
pub(super) fn finished(log: &NodeLogResult) -> bool {
    log.handle_code != 0 || (log.trigger_code != 0 && log.trigger_code != 200)
}

/// A finished job attempt's state, output and message from its log rows (one per shard): succeeded
/// when every row succeeded; the output is the executor's message (JSON where it is JSON), a list in
/// shard order for a sharded node. An output the log table could not hold whole fails the node.
pub(super) fn job_outcome(logs: &[&NodeLogResult]) -> (NodeState, Option<String>, String) {
    let too_long = logs
        .iter()
        .find(|l| l.handle_msg.as_deref().is_some_and(|m| m.encode_utf16().count() >= MAX_HANDLE_MSG_UTF16));
    if let Some(log) = too_long {
        let message = format!(
            "the output of log {} reached {MAX_HANDLE_MSG_UTF16} characters, the most a log row keeps: \
             it may be cut short, so it is not passed on (return less, or a reference to where it is)",
            log.log_id
        );
        return (NodeState::Failed, None, message);
    }
    let failures: Vec<String> = logs
        .iter()
        .filter(|l| l.handle_code != 200)
        .map(|l| match l.handle_code {
            0 => format!("log {}: trigger failed (code {})", l.log_id, l.trigger_code),
            code => format!("log {}: code {code}", l.log_id),
        })
        .collect();
    let outputs: Vec<Value> = logs.iter().map(|l| output_value(l.handle_msg.as_deref())).collect();
    let output = if logs.len() == 1 && logs[0].shard_total <= 1 {
        outputs.into_iter().next().unwrap_or(Value::Null)
    } else {
        Value::Array(outputs)
    };
    let output = Some(output.to_string());
    if failures.is_empty() {
        let message = format!("succeeded ({} log row{})", logs.len(), if logs.len() == 1 { "" } else { "s" });
        (NodeState::Succeeded, output, message)
    } else {
        (NodeState::Failed, output, failures.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::workflow::model::RunState;
    use crate::storage::ACTIVE_RUN_STATES;

    fn log(shard: i32, total: i32, trigger: i32, handle: i32, msg: Option<&str>) -> NodeLogResult {
        NodeLogResult {
            log_id: 10 + i64::from(shard),
            node: "n".into(),
            attempt: 1,
            shard_index: shard,
            shard_total: total,
            job_id: 7,
            executor_address: Some("http://e/".into()),
            trigger_code: trigger,
            handle_code: handle,
            handle_msg: msg.map(str::to_string),
        }
    }

    #[test]
    fn the_storage_counts_the_same_runs_as_active() {
        let active: Vec<&str> = RunState::ACTIVE.iter().map(|s| s.as_str()).collect();
        assert_eq!(active, ACTIVE_RUN_STATES);
    }

    #[test]
    fn a_log_is_finished_by_its_result_or_a_failed_trigger() {
        assert!(!finished(&log(0, 1, 0, 0, None)), "not sent yet");
        assert!(!finished(&log(0, 1, 200, 0, None)), "running");
        assert!(finished(&log(0, 1, 500, 0, None)), "trigger failed");
        assert!(finished(&log(0, 1, 200, 500, None)));
        assert!(finished(&log(0, 1, 200, 200, None)));
    }

    #[test]
    fn outputs_are_json_where_they_are_json_and_listed_by_shard() {
        let one = log(0, 1, 200, 200, Some(r#"{"rows": 3}"#));
        let (state, output, _) = job_outcome(&[&one]);
        assert_eq!((state, output.as_deref()), (NodeState::Succeeded, Some(r#"{"rows":3}"#)));
        let text = log(0, 1, 200, 200, Some("plain"));
        assert_eq!(job_outcome(&[&text]).1.as_deref(), Some(r#""plain""#));
        let (a, b) = (log(0, 2, 200, 200, Some("1")), log(1, 2, 200, 500, Some("x")));
        let (state, output, message) = job_outcome(&[&a, &b]);
        assert_eq!((state, output.as_deref()), (NodeState::Failed, Some(r#"[1,"x"]"#)));
        assert_eq!(message, "log 11: code 500");
        let unsent = log(0, 1, 500, 0, None);
        assert_eq!(job_outcome(&[&unsent]).2, "log 10: trigger failed (code 500)");
    }

    #[test]
    fn an_output_the_log_row_may_have_cut_fails_the_node() {
        let long = "x".repeat(MAX_HANDLE_MSG_UTF16);
        let full = log(0, 1, 200, 200, Some(&long));
        let (state, output, message) = job_outcome(&[&full]);
        assert_eq!((state, output), (NodeState::Failed, None));
        assert!(message.contains("15000 characters"), "{message}");
    }
}
