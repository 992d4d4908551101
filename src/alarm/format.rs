//! An alarm in each webhook's own message format, saying what the e-mail says (2.4.2: EmailJobAlarm): the
//! group, job, description and alarm type, then the log id, the trigger message when the trigger failed
//! and the handle message when the result did. Every value is escaped for the target syntax; the
//! admin's own `<br>` become line breaks and its banner spans are dropped. A workflow run's alarm says the
//! same of the run: group, workflow id and name, alarm type, and the failed nodes or the deadline.

use super::email::group_digits;
use super::{Alarm, JobFailure, Subject, WorkflowAlarm, WorkflowCause};
use crate::config::WebhookKind;
use crate::domain::html::message_text;
use crate::i18n::I18n;
use serde_json::{json, Value};

/// Bytes of escaped message content in a chat message: WeCom refuses markdown above 4096 bytes, Slack
/// section texts above 3000 characters; what does not fit ends with an ellipsis.
const CONTENT_BUDGET: usize = 2048;
const ELLIPSIS: &str = "…";

/// The body for a channel of `kind` (DingTalk's and Feishu's signatures are added by the sender).
pub(super) fn body(kind: WebhookKind, i18n: &I18n, alarm: &Alarm) -> Value {
    let facts = Facts::new(i18n, alarm);
    match kind {
        WebhookKind::DingTalk => json!({
            "msgtype": "markdown",
            "markdown": { "title": facts.title, "text": markdown(&facts, true) },
        }),
        WebhookKind::WeCom => {
            json!({ "msgtype": "markdown", "markdown": { "content": markdown(&facts, true) } })
        }
        WebhookKind::Feishu => json!({
            "msg_type": "interactive",
            "card": {
                "header": { "template": "red", "title": { "tag": "plain_text", "content": facts.title } },
                "elements": [
                    { "tag": "div", "text": { "tag": "lark_md", "content": markdown(&facts, false) } },
                    { "tag": "action", "actions": [{
                        "tag": "button",
                        "type": "primary",
                        "text": { "tag": "plain_text", "content": facts.link_label },
                        "url": facts.link,
                    }] },
                ],
            },
        }),
        WebhookKind::Slack => slack(&facts),
        WebhookKind::Json => plain_json(&facts, alarm),
    }
}

/// What every format states, unescaped, in the configured language.
struct Facts<'a> {
    title: &'a str,
    /// (label, value): group, job id, description, alarm type.
    rows: [(&'a str, String); 4],
    content_label: &'a str,
    /// Plain text with `\n` line breaks.
    content: String,
    trigger_msg: Option<String>,
    handle_msg: Option<String>,
    link_label: &'a str,
    link: &'a str,
}

impl<'a> Facts<'a> {
    fn new(i18n: &'a I18n, alarm: &'a Alarm) -> Facts<'a> {
        match &alarm.subject {
            Subject::Job(failure) => Facts::of_job(i18n, alarm, failure),
            Subject::Workflow(run) => Facts::of_workflow(i18n, alarm, run),
        }
    }

    fn group_title(alarm: &Alarm) -> String {
        alarm.group.as_ref().map_or("null".to_string(), |g| g.title.clone())
    }

    fn of_workflow(i18n: &'a I18n, alarm: &'a Alarm, run: &WorkflowAlarm) -> Facts<'a> {
        let t = |key| i18n.get(key);
        let (kind, detail) = match &run.cause {
            WorkflowCause::Failed { failed_nodes } => {
                (t("workflow_alarm_failed"), format!("FailedNodes={}", failed_nodes.join(", ")))
            }
            WorkflowCause::DeadlinePassed { deadline_at, stopped, .. } => (
                t("workflow_alarm_deadline"),
                format!("Deadline={deadline_at}{}", if *stopped { "\nStopped" } else { "" }),
            ),
        };
        Facts {
            title: t("workflow_alarm"),
            rows: [
                (t("jobinfo_field_jobgroup"), Facts::group_title(alarm)),
                (t("workflow_alarm_id"), run.workflow_id.to_string()),
                (t("workflow_alarm_name"), run.workflow_name.clone()),
                (t("jobconf_monitor_alarm_title"), kind.to_string()),
            ],
            content_label: t("jobconf_monitor_alarm_content"),
            content: format!("Alarm Workflow RunId={}\n{detail}", run.run_id),
            trigger_msg: None,
            handle_msg: None,
            link_label: t("workflow_alarm_run"),
            link: &alarm.link,
        }
    }

    fn of_job(i18n: &'a I18n, alarm: &'a Alarm, failure: &JobFailure) -> Facts<'a> {
        let t = |key| i18n.get(key);
        let log = &failure.log;
        let trigger_msg =
            (log.trigger_code != 200).then(|| message_text(log.trigger_msg.as_deref().unwrap_or("")));
        let handle_msg = (log.handle_code > 0 && log.handle_code != 200)
            .then(|| message_text(log.handle_msg.as_deref().unwrap_or("")));
        let mut content = format!("Alarm Job LogId={}", log.id);
        if let Some(msg) = &trigger_msg {
            content.push_str("\nTriggerMsg=\n");
            content.push_str(msg);
        }
        if let Some(msg) = &handle_msg {
            // The e-mail's label, kept for the same reason: existing filters match it.
            content.push_str("\nHandleCode=");
            content.push_str(msg);
        }
        Facts {
            title: t("jobconf_monitor"),
            rows: [
                (t("jobinfo_field_jobgroup"), Facts::group_title(alarm)),
                (t("jobinfo_field_id"), group_digits(failure.job.id)),
                (t("jobinfo_field_jobdesc"), failure.job.job_desc.clone()),
                (t("jobconf_monitor_alarm_title"), t("jobconf_monitor_alarm_type").to_string()),
            ],
            content_label: t("jobconf_monitor_alarm_content"),
            content,
            trigger_msg,
            handle_msg,
            link_label: t("joblog_rolling_log"),
            link: &alarm.link,
        }
    }
}

/// DingTalk, WeCom and Feishu's `lark_md`: paragraphs, since each renders a single line break
/// differently; `with_title` unless the format shows the title itself.
fn markdown(facts: &Facts, with_title: bool) -> String {
    let mut out = String::new();
    if with_title {
        out.push_str(&format!("#### {}\n\n", escape(facts.title, usize::MAX, markdown_char, "\n\n")));
    }
    for (label, value) in &facts.rows {
        let value = escape(value, usize::MAX, markdown_char, " ");
        out.push_str(&format!("**{}**: {value}\n\n", escape(label, usize::MAX, markdown_char, " ")));
    }
    out.push_str(&format!("**{}**:\n\n", escape(facts.content_label, usize::MAX, markdown_char, " ")));
    out.push_str(&escape(&facts.content, CONTENT_BUDGET, markdown_char, "\n\n"));
    out.push_str(&format!(
        "\n\n[{}]({})",
        escape(facts.link_label, usize::MAX, markdown_char, " "),
        facts.link.replace('(', "%28").replace(')', "%29").replace(' ', "%20")
    ));
    out
}

fn slack(facts: &Facts) -> Value {
    let plain = |text: &str| escape(text, usize::MAX, slack_char, " ");
    let fields: Vec<Value> = facts
        .rows
        .iter()
        .map(|(label, value)| json!({ "type": "mrkdwn", "text": format!("*{}*\n{}", plain(label), plain(value)) }))
        .collect();
    let content = format!(
        "*{}*\n{}",
        plain(facts.content_label),
        escape(&facts.content, CONTENT_BUDGET, slack_char, "\n")
    );
    json!({
        // Shown in notifications, and by clients that cannot show blocks.
        "text": format!("{}: {} ({} {})", plain(facts.title), plain(&facts.rows[2].1), plain(facts.rows[1].0), facts.rows[1].1),
        "blocks": [
            { "type": "header", "text": { "type": "plain_text", "text": facts.title } },
            { "type": "section", "fields": fields },
            { "type": "section", "text": { "type": "mrkdwn", "text": content } },
            { "type": "actions", "elements": [{
                "type": "button",
                "text": { "type": "plain_text", "text": facts.link_label },
                "url": facts.link,
            }] },
        ],
    })
}

/// The `json` channel's object (documented in docs/alarms.md); values unescaped, JSON encoding suffices.
fn plain_json(facts: &Facts, alarm: &Alarm) -> Value {
    let failure = match &alarm.subject {
        Subject::Job(failure) => failure,
        Subject::Workflow(run) => return workflow_json(facts, alarm, run),
    };
    let (job, log) = (&failure.job, &failure.log);
    json!({
        "subject": "job",
        "title": facts.title,
        "alarmType": facts.rows[3].1,
        "jobId": job.id,
        "jobDesc": job.job_desc,
        "jobGroup": job.job_group,
        "jobGroupTitle": alarm.group.as_ref().map(|g| &g.title),
        "appName": alarm.group.as_ref().map(|g| &g.app_name),
        "logId": log.id,
        "triggerTime": failure.trigger_time_ms,
        "triggerCode": log.trigger_code,
        "triggerMsg": facts.trigger_msg,
        "handleTime": failure.handle_time_ms,
        "handleCode": log.handle_code,
        "handleMsg": facts.handle_msg,
        "logUrl": facts.link,
    })
}

/// The `json` channel's object for a workflow run: `subject` tells it from a job's.
fn workflow_json(facts: &Facts, alarm: &Alarm, run: &WorkflowAlarm) -> Value {
    let (failed_nodes, deadline, stopped) = match &run.cause {
        WorkflowCause::Failed { failed_nodes } => (Some(failed_nodes), None, None),
        WorkflowCause::DeadlinePassed { deadline_ms, stopped, .. } => {
            (None, Some(deadline_ms), Some(stopped))
        }
    };
    json!({
        "subject": "workflow",
        "title": facts.title,
        "alarmType": facts.rows[3].1,
        "workflowId": run.workflow_id,
        "workflowName": run.workflow_name,
        "jobGroup": alarm.group.as_ref().map(|g| g.id),
        "jobGroupTitle": alarm.group.as_ref().map(|g| &g.title),
        "appName": alarm.group.as_ref().map(|g| &g.app_name),
        "runId": run.run_id,
        "logicalTime": run.logical_time_ms,
        "failedNodes": failed_nodes,
        "deadline": deadline,
        "stopped": stopped,
        "runUrl": facts.link,
    })
}

/// `text` escaped character by character, `\n` written as `newline`, cut with an ellipsis before the
/// escaped text would exceed `budget` bytes (never inside an escape).
fn escape(text: &str, budget: usize, escape_char: fn(char, &mut String), newline: &str) -> String {
    let mut out = String::new();
    let mut piece = String::new();
    for ch in text.chars() {
        piece.clear();
        if ch == '\n' {
            piece.push_str(newline);
        } else {
            escape_char(ch, &mut piece);
        }
        if out.len() + piece.len() + ELLIPSIS.len() > budget {
            out.push_str(ELLIPSIS);
            break;
        }
        out.push_str(&piece);
    }
    out
}

/// Markdown syntax characters are backslash-escaped; `&`, `<` and `>` become entities, since all three
/// vendors also interpret some HTML.
fn markdown_char(ch: char, out: &mut String) {
    match ch {
        '&' => out.push_str("&amp;"),
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '#' | '!' | '|' | '~' => {
            out.push('\\');
            out.push(ch);
        }
        '\r' => {}
        _ => out.push(ch),
    }
}

/// Slack's rule: only `&`, `<` and `>` are control characters (links and mentions), as entities.
fn slack_char(ch: char, out: &mut String) {
    match ch {
        '&' => out.push_str("&amp;"),
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        '\r' => {}
        _ => out.push(ch),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alarm::Targets;
    use crate::storage::{JobGroup, JobInfo, JobLog};

    fn alarm(trigger: (i32, &str), handle: (i32, &str)) -> Alarm {
        let job = JobInfo {
            job_desc: "nightly *bold* <script>x</script> & [a](b)".into(),
            ..JobInfo::sample(1234)
        };
        let group = JobGroup {
            id: 1,
            app_name: "app".into(),
            title: "Ops_<i>".into(),
            address_type: crate::domain::codes::AddressType::Auto,
            address_list: None,
            update_time: None,
        };
        Alarm {
            targets: Targets::default(),
            subject: Subject::Job(Box::new(JobFailure {
                job,
                log: JobLog {
                    trigger_code: trigger.0,
                    trigger_msg: Some(trigger.1.into()),
                    handle_code: handle.0,
                    handle_msg: Some(handle.1.into()),
                    ..JobLog::sample(77)
                },
                trigger_time_ms: Some(1_700_000_000_000),
                handle_time_ms: None,
            })),
            group: Some(group),
            link: "http://console.test/xxl-job-admin/joblog/logDetailPage?id=77".into(),
        }
    }

    fn en() -> I18n {
        I18n::new("en")
    }

    #[test]
    fn markdown_escapes_values_and_keeps_the_content_rules() {
        let a = alarm((500, "route<br>address <b>x</b>"), (502, "boom *"));
        let body = body(WebhookKind::DingTalk, &en(), &a);
        assert_eq!(body["msgtype"], "markdown");
        assert_eq!(body["markdown"]["title"], en().get("jobconf_monitor"));
        let text = body["markdown"]["text"].as_str().unwrap();
        assert!(text.contains("**Executor**: Ops\\_&lt;i&gt;"), "{text}");
        assert!(text.contains("**Job ID**: 1,234"), "{text}");
        assert!(
            text.contains("nightly \\*bold\\* &lt;script&gt;x&lt;/script&gt; &amp; \\[a\\]\\(b\\)"),
            "{text}"
        );
        assert!(text.contains("Alarm Job LogId=77\n\nTriggerMsg=\n\nroute\n\naddress &lt;b&gt;x&lt;/b&gt;\n\nHandleCode=boom \\*"), "{text}");
        assert!(
            text.ends_with("[Run log](http://console.test/xxl-job-admin/joblog/logDetailPage?id=77)"),
            "{text}"
        );
        assert!(!text.contains("<script") && !text.contains("<b>"), "{text}");

        // Trigger succeeded: only the handle message.
        let a = alarm((200, "fine"), (500, "threw"));
        let wecom = body_text(WebhookKind::WeCom, &a);
        assert!(
            wecom.contains("Alarm Job LogId=77\n\nHandleCode=threw") && !wecom.contains("fine"),
            "{wecom}"
        );
    }

    fn body_text(kind: WebhookKind, a: &Alarm) -> String {
        body(kind, &en(), a)["markdown"]["content"].as_str().unwrap().to_string()
    }

    #[test]
    fn long_messages_are_cut_within_the_budget() {
        let long = "<&>".repeat(5_000);
        let content = body_text(WebhookKind::WeCom, &alarm((500, &long), (0, "")));
        assert!(content.len() < 4096, "{}", content.len());
        let cut = content.find(ELLIPSIS).expect("cut");
        assert!(content[..cut].ends_with(';'), "cut after a whole entity: {}", &content[cut - 10..]);
    }

    #[test]
    fn feishu_is_a_card_with_a_link_button() {
        let body = body(WebhookKind::Feishu, &I18n::new("zh_CN"), &alarm((500, "x"), (0, "")));
        assert_eq!(body["msg_type"], "interactive");
        assert_eq!(body["card"]["header"]["title"]["content"], I18n::new("zh_CN").get("jobconf_monitor"));
        let content = body["card"]["elements"][0]["text"]["content"].as_str().unwrap();
        assert!(content.contains(I18n::new("zh_CN").get("jobinfo_field_jobdesc")), "{content}");
        assert_eq!(
            body["card"]["elements"][1]["actions"][0]["url"],
            "http://console.test/xxl-job-admin/joblog/logDetailPage?id=77"
        );
    }

    #[test]
    fn slack_blocks_escape_only_its_control_characters() {
        let body = body(WebhookKind::Slack, &en(), &alarm((500, "a<br>b > c"), (0, "")));
        assert_eq!(body["blocks"][0]["type"], "header");
        assert_eq!(
            body["blocks"][1]["fields"][2]["text"],
            "*Description*\nnightly *bold* &lt;script&gt;x&lt;/script&gt; &amp; [a](b)"
        );
        assert_eq!(
            body["blocks"][2]["text"]["text"],
            "*Alarm content*\nAlarm Job LogId=77\nTriggerMsg=\na\nb &gt; c"
        );
        assert_eq!(
            body["blocks"][3]["elements"][0]["url"],
            "http://console.test/xxl-job-admin/joblog/logDetailPage?id=77"
        );
        assert!(body["text"].as_str().unwrap().starts_with("Job scheduling alarm: nightly"), "{body}");
    }

    #[test]
    fn json_carries_raw_values() {
        let body = body(WebhookKind::Json, &en(), &alarm((500, "a<br>b"), (502, "c")));
        assert_eq!(
            body,
            json!({
                "subject": "job",
                "title": "Job scheduling alarm",
                "alarmType": "Job failure",
                "jobId": 1234,
                "jobDesc": "nightly *bold* <script>x</script> & [a](b)",
                "jobGroup": 1,
                "jobGroupTitle": "Ops_<i>",
                "appName": "app",
                "logId": 77,
                "triggerTime": 1_700_000_000_000_i64,
                "triggerCode": 500,
                "triggerMsg": "a\nb",
                "handleTime": null,
                "handleCode": 502,
                "handleMsg": "c",
                "logUrl": "http://console.test/xxl-job-admin/joblog/logDetailPage?id=77",
            })
        );
    }

    fn workflow_alarm(cause: WorkflowCause) -> Alarm {
        let mut alarm = alarm((200, ""), (0, ""));
        alarm.subject = Subject::Workflow(WorkflowAlarm {
            workflow_id: 9,
            workflow_name: "nightly_*etl*".into(),
            run_id: 41,
            logical_time_ms: 1_700_000_000_000,
            cause,
        });
        alarm.link = "http://console.test/xxl-job-admin/workflow/run?id=41".into();
        alarm
    }

    #[test]
    fn a_failed_workflow_run_names_its_failed_nodes_and_links_the_run() {
        let failed =
            workflow_alarm(WorkflowCause::Failed { failed_nodes: vec!["load".into(), "b_2".into()] });
        let text = body_text(WebhookKind::WeCom, &failed);
        assert!(text.contains("Workflow alarm") && text.contains("Run failed"), "{text}");
        assert!(text.contains(r"nightly\_\*etl\*") && text.contains(r"FailedNodes=load, b\_2"), "{text}");
        assert!(text.contains("(http://console.test/xxl-job-admin/workflow/run?id=41)"), "{text}");
        let json = body(WebhookKind::Json, &en(), &failed);
        assert_eq!(json["subject"], "workflow");
        assert_eq!(json["failedNodes"], json!(["load", "b_2"]));
        assert_eq!((json["runId"].clone(), json["workflowId"].clone()), (json!(41), json!(9)));
        assert_eq!(json["deadline"], Value::Null);
    }

    #[test]
    fn a_workflow_deadline_says_when_and_whether_it_stopped_the_run() {
        let late = workflow_alarm(WorkflowCause::DeadlinePassed {
            deadline_ms: 1_700_000_360_000,
            deadline_at: "2023-11-14 22:19:20".into(),
            stopped: true,
        });
        let text = body(WebhookKind::Slack, &en(), &late).to_string();
        assert!(text.contains("Deadline passed") && text.contains("Deadline=2023-11-14 22:19:20"), "{text}");
        let json = body(WebhookKind::Json, &en(), &late);
        assert_eq!(
            (json["deadline"].clone(), json["stopped"].clone()),
            (json!(1_700_000_360_000_i64), json!(true))
        );
        assert_eq!(json["alarmType"], "Deadline passed");
    }
}
