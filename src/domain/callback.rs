//! How a result finishes a log row: message composition and child jobs (2.4.2: JobCompleteHelper.callback
//! and XxlJobCompleter).

use crate::domain::java_split;
use crate::i18n::I18n;

/// `handle_msg` is cut to this many UTF-16 code units, as the Java admin counts them.
pub const MAX_HANDLE_MSG_UTF16: usize = 15_000;

/// The row's message followed by the callback's: `existing<br>incoming`, skipping absent parts.
pub fn append_handle_msg(existing: Option<&str>, incoming: Option<&str>) -> String {
    let mut msg = String::new();
    if let Some(existing) = existing {
        msg.push_str(existing);
        msg.push_str("<br>");
    }
    if let Some(incoming) = incoming {
        msg.push_str(incoming);
    }
    msg
}

/// The child jobs a successful run starts, and the report appended to its `handle_msg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildPlan {
    pub message: String,
    pub job_ids: Vec<i32>,
}

/// Plans the children listed in `child_jobid`; `None` when the list is blank.
pub fn plan_children(child_jobid: Option<&str>, i18n: &I18n) -> Option<ChildPlan> {
    let child_jobid = child_jobid.filter(|c| !c.trim().is_empty())?;
    let items = java_split(child_jobid);
    let total = items.len();
    let mut message = format!(
        "<br><br><span style=\"color:#00c0ef;\" > >>>>>>>>>>>{}<<<<<<<<<<< </span><br>",
        i18n.get("jobconf_trigger_child_run")
    );
    let mut job_ids = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let position = index + 1;
        // Valid ids are plain decimal integers > 0, untrimmed: " 3" is reported, not run (as in 2.4.2).
        match item.parse::<i32>().ok().filter(|id| *id > 0) {
            Some(id) => {
                job_ids.push(id);
                message.push_str(&i18n.format(
                    "jobconf_callback_child_msg1",
                    &[&position, &total, item, &i18n.get("system_success"), &"null"],
                ));
            }
            None => {
                message.push_str(&i18n.format("jobconf_callback_child_msg2", &[&position, &total, item]));
            }
        }
    }
    Some(ChildPlan { message, job_ids })
}

/// Cuts a message to its first `max` UTF-16 code units without splitting a character.
pub fn truncate_utf16(mut text: String, max: usize) -> String {
    let mut units = 0;
    for (byte_index, ch) in text.char_indices() {
        units += ch.len_utf16();
        if units > max {
            text.truncate(byte_index);
            break;
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_join_with_br_and_null_becomes_empty() {
        assert_eq!(append_handle_msg(None, None), "");
        assert_eq!(append_handle_msg(None, Some("ok")), "ok");
        assert_eq!(append_handle_msg(Some("a"), Some("b")), "a<br>b");
        assert_eq!(append_handle_msg(Some("a"), None), "a<br>");
    }

    #[test]
    fn children_are_parsed_like_2_4_2() {
        let i18n = I18n::new("en");
        assert_eq!(plan_children(Some("  "), &i18n), None);
        assert_eq!(plan_children(None, &i18n), None);
        let plan = plan_children(Some("2, 3,x,-1,+4,,"), &i18n).unwrap();
        assert_eq!(plan.job_ids, vec![2, 4]);
        assert!(plan.message.starts_with("<br><br><span style=\"color:#00c0ef;\" > >>>>>>>>>>>"));
        let ok =
            i18n.format("jobconf_callback_child_msg1", &[&1, &5, &"2", &i18n.get("system_success"), &"null"]);
        let bad = i18n.format("jobconf_callback_child_msg2", &[&2, &5, &" 3"]);
        assert!(plan.message.contains(&ok), "{}", plan.message);
        assert!(plan.message.contains(&bad), "{}", plan.message);
    }

    #[test]
    fn truncation_counts_utf16_units() {
        assert_eq!(truncate_utf16("abc".into(), 2), "ab");
        assert_eq!(truncate_utf16("abc".into(), 3), "abc");
        // U+1F600 is two UTF-16 units: it does not fit in one.
        assert_eq!(truncate_utf16("a\u{1F600}b".into(), 2), "a");
        assert_eq!(truncate_utf16("中文".into(), 1), "中");
    }
}
