//! The OpenAPI schemas of the forms' enumerated fields (the REST API's document), from the domain's own
//! lists so the two cannot drift.

use crate::domain::glue::{BlockStrategy, GlueType};
use crate::domain::routing::RouteStrategy;
use crate::domain::schedule::{MisfireStrategy, ScheduleType};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::Object;

fn names(names: impl IntoIterator<Item = &'static str>) -> Object {
    ObjectBuilder::new().schema_type(Type::String).enum_values(Some(names)).build()
}

pub fn schedule_type() -> Object {
    names(ScheduleType::ALL.map(ScheduleType::name))
}

pub fn misfire_strategy() -> Object {
    names(MisfireStrategy::ALL.map(MisfireStrategy::name))
}

pub fn route_strategy() -> Object {
    names(RouteStrategy::ALL.map(RouteStrategy::name))
}

pub fn block_strategy() -> Object {
    names(BlockStrategy::ALL.map(BlockStrategy::name))
}

pub fn glue_type() -> Object {
    names(GlueType::ALL.map(GlueType::name))
}

/// The GLUE types of a source run by the executor: every one but BEAN.
fn script_types() -> Vec<&'static str> {
    GlueType::ALL.into_iter().filter(|g| *g != GlueType::Bean).map(GlueType::name).collect()
}

/// A text with at least one character other than white space, and no NUL (the derive takes only literals:
/// the forms write it out). White space is spelled out, as `str::trim` and so the forms' blank checks
/// see it (Unicode's White_Space), in every pattern: what `\s` means differs between the dialects that
/// read the document (ECMA-262 counts U+FEFF, Python U+001C to U+001F), so a `\s` let a generator send
/// what the document forbids and the server accepted.
const NOT_BLANK: &str =
    r"^[^\x00]*[^\x00\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^\x00]*$";

/// Any text without NUL.
pub const NO_NUL: &str = r"^[^\x00]*$";

/// `yyyy-MM-dd HH:mm:ss`, a real date of the years a MySQL DATETIME holds (1000 to 9999).
const WALL_CLOCK: &str = r"^(?:[1-9]\d{3}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)|(?:[1-9]\d(?:0[48]|[2468][048]|[13579][26])|(?:[2468][048]|[13579][26])00)-02-29) (?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d$";

/// A FIX_RATE interval: whole seconds from 1 to `i32::MAX`, as `Integer.valueOf` reads them.
const SECONDS: &str = r"^\+?0*(?:[1-9]\d{0,8}|1\d{9}|20\d{8}|21[0-3]\d{7}|214[0-6]\d{6}|2147[0-3]\d{5}|21474[0-7]\d{4}|214748[0-2]\d{3}|2147483[0-5]\d{2}|21474836[0-3]\d|214748364[0-7])$";

/// A text with a character other than white space, and neither NUL nor markup: the title.
const NO_MARKUP: &str =
    r"^[^<>\x00]*[^<>\x00\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^<>\x00]*$";

/// An AppName: a character other than white space, and neither markup nor control characters (NUL among them).
const APP_NAME: &str = r"^[^<>\x00-\x1f\x7f-\x9f]*[^<>\x00-\x1f\x7f-\x9f \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^<>\x00-\x1f\x7f-\x9f]*$";

/// One manual executor address of a jobs-as-code document: not blank, no markup, no comma (the addresses
/// are joined with commas into one column).
const ADDRESS: &str =
    r"^[^<>\x00,]*[^<>\x00,\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^<>\x00,]*$";

/// Manual executor addresses: comma-separated, none blank (trailing commas dropped, as Java's split does),
/// no markup.
const ADDRESSES: &str = r"^[^<>\x00,]*[^<>\x00,\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^<>\x00,]*(?:,[^<>\x00,]*[^<>\x00,\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^<>\x00,]*)*,*$";

/// The rules of a form that tie one field to another, which the derive cannot write, by the form's schema
/// name: one `anyOf` per rule, a branch per value of the deciding field (generators take a branch whole,
/// where `if`/`then` they only approximate). Also the fields these rules describe on their own.
pub fn conditions(form: &str) -> (Vec<serde_json::Value>, &'static [&'static str]) {
    use serde_json::json;
    let branch = |field: &str, value: serde_json::Value, properties: serde_json::Value, required: &[&str]| {
        let mut properties = properties;
        properties[field] = json!({ "const": value });
        json!({ "properties": properties, "required": required })
    };
    match form {
        "JobForm" => (
            vec![json!({ "anyOf": [
                // A cron expression is Quartz's grammar, which no pattern states; its format names it.
                branch("scheduleType", json!("CRON"), json!({ "scheduleConf": { "type": "string", "format": "quartz-cron" } }), &["scheduleConf"]),
                branch("scheduleType", json!("FIX_RATE"), json!({ "scheduleConf": { "type": "string", "pattern": SECONDS } }), &["scheduleConf"]),
                branch("scheduleType", json!("NONE"), json!({ "scheduleConf": { "pattern": NO_NUL } }), &[]),
            ] })],
            &["scheduleConf"],
        ),
        "NewJob" => {
            let others = script_types();
            (
                vec![json!({ "required": ["glueType"], "anyOf": [
                    branch("glueType", json!(GlueType::Bean.name()), json!({ "executorHandler": { "type": "string", "pattern": NOT_BLANK } }), &["executorHandler"]),
                    { "properties": { "glueType": { "enum": others } } },
                ] })],
                &[],
            )
        }
        "GroupForm" => (
            vec![json!({ "anyOf": [
                branch("addressType", json!(1), json!({ "addressList": { "type": "string", "pattern": ADDRESSES } }), &["addressList"]),
                branch("addressType", json!(0), json!({ "addressList": { "pattern": NO_NUL } }), &[]),
            ] })],
            &["addressList"],
        ),
        "AppliedJob" => {
            let others = script_types();
            (
                vec![
                    // A job without a schedule cannot be set running.
                    json!({ "anyOf": [
                        branch("schedule_type", json!("CRON"), json!({ "schedule_conf": { "type": "string", "format": "quartz-cron" } }), &["schedule_conf"]),
                        branch("schedule_type", json!("FIX_RATE"), json!({ "schedule_conf": { "type": "string", "pattern": SECONDS } }), &["schedule_conf"]),
                        branch("schedule_type", json!("NONE"), json!({ "schedule_conf": { "pattern": NO_NUL }, "trigger_status": { "enum": [0, null] } }), &[]),
                    ] }),
                    // The GLUE type defaults to BEAN, which needs a JobHandler.
                    json!({ "anyOf": [
                        { "properties": { "glue_type": { "enum": others } }, "required": ["glue_type"] },
                        { "properties": { "handler": { "type": "string", "pattern": NOT_BLANK } }, "required": ["handler"] },
                    ] }),
                ],
                &["schedule_conf"],
            )
        }
        "AppliedWorkflowNode" => (vec![workflow_node_kinds()], &[]),
        "AppliedExecutor" => (
            vec![json!({ "anyOf": [
                branch("address_type", json!("manual"), json!({ "addresses": { "type": "array", "minItems": 1, "items": { "type": "string", "pattern": ADDRESS } } }), &["address_type", "addresses"]),
                // `auto` is the default.
                { "properties": { "address_type": { "const": "auto" } } },
            ] })],
            &[],
        ),
        _ => (Vec::new(), &[]),
    }
}

/// A jobs-as-code workflow node is of one kind, said by one of four fields, with only its own companion
/// field (a null is an absent field, as the apply reads it).
fn workflow_node_kinds() -> serde_json::Value {
    use serde_json::json;
    const KIND_FIELDS: [&str; 7] = ["job", "param", "workflow", "params", "branch", "default", "approvers"];
    let kind = |field: &str, shape: serde_json::Value, companion: Option<&str>| {
        let mut properties: serde_json::Map<String, serde_json::Value> = KIND_FIELDS
            .iter()
            .filter(|f| **f != field && Some(**f) != companion)
            .map(|f| (f.to_string(), json!({ "type": "null" })))
            .collect();
        properties.insert(field.to_string(), shape);
        json!({ "properties": properties, "required": [field] })
    };
    json!({ "anyOf": [
        kind("job", json!({ "type": "string" }), Some("param")),
        kind("workflow", json!({ "type": "string" }), Some("params")),
        kind("branch", json!({ "type": "array" }), Some("default")),
        kind("approvers", json!({ "type": "array" }), None),
    ] })
}

/// What `/apply` holds each field of a jobs-as-code entry to beyond its exported shape, by the exported
/// schema's name (`Executor`, `Job`): the executor form's lengths, the job form's non-blank texts and
/// enumerations, `trigger_status` 0 or 1, at most the GLUE history the GLUE IDE keeps and its times as an
/// export writes them (the columns' widths are the apply's own, `jobs_as_code::JOB_TEXT_WIDTHS` and
/// `GLUE_REMARK_WIDTH`), a workflow's executor as an AppName (its other bounds are the definition's).
pub fn applied_fields(schema: &str) -> serde_json::Value {
    use serde_json::json;
    let names = |object: Object| serde_json::to_value(object).unwrap_or_default();
    match schema {
        "Executor" => json!({
            "app_name": { "minLength": 4, "maxLength": 64, "pattern": APP_NAME },
            "title": { "minLength": 1, "maxLength": 12, "pattern": NO_MARKUP },
        }),
        "Job" => json!({
            "description": { "pattern": NOT_BLANK },
            "author": { "pattern": NOT_BLANK },
            "schedule_type": names(schedule_type()),
            "misfire_strategy": names(misfire_strategy()),
            "route_strategy": names(route_strategy()),
            "block_strategy": names(block_strategy()),
            "glue_type": names(glue_type()),
            "trigger_status": { "enum": [0, 1, null] },
            "glue_history": { "maxItems": crate::domain::GLUE_HISTORY },
        }),
        "Workflow" => json!({
            "executor": { "minLength": 4, "maxLength": 64, "pattern": APP_NAME },
            "trigger_status": { "enum": [0, 1, null] },
        }),
        "GlueVersion" => json!({
            "glue_type": { "enum": GlueType::ALL.iter().map(|g| json!(g.name())).chain([serde_json::Value::Null]).collect::<Vec<_>>() },
            "add_time": { "pattern": WALL_CLOCK },
            "update_time": { "pattern": WALL_CLOCK },
        }),
        _ => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The white space the patterns spell out, as a regex class's body, written from `char::is_whitespace`
    /// (what `str::trim` and so the forms' blank checks use): ranges of three or more as `a-b`, in `\xNN` or
    /// `\uNNNN` but for the space itself.
    fn white_space_class(controls: bool) -> String {
        let chars: Vec<u32> = (0..=0xFFFFu32)
            .filter_map(char::from_u32)
            .filter(|c| c.is_whitespace() && (controls || !c.is_control()))
            .map(u32::from)
            .collect();
        let escape = |c: u32| match c {
            0x20 => " ".to_string(),
            0x09 => r"\t".to_string(),
            0x0d => r"\r".to_string(),
            c if c < 0x100 => format!(r"\x{c:02x}"),
            c => format!(r"\u{c:04x}"),
        };
        let mut class = String::new();
        let mut i = 0;
        while i < chars.len() {
            let mut j = i;
            while j + 1 < chars.len() && chars[j + 1] == chars[j] + 1 {
                j += 1;
            }
            if j - i >= 2 {
                class += &format!("{}-{}", escape(chars[i]), escape(chars[j]));
            } else {
                (i..=j).for_each(|k| class += &escape(chars[k]));
            }
            i = j + 1;
        }
        class
    }

    #[test]
    fn the_patterns_spell_white_space_as_the_blank_check_sees_it() {
        let all = white_space_class(true);
        assert_eq!(all, r"\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000");
        for pattern in [NOT_BLANK, NO_MARKUP, ADDRESS, ADDRESSES] {
            assert!(pattern.contains(&all), "{pattern}");
            assert!(!pattern.contains(r"\s"), "{pattern}");
        }
        assert!(APP_NAME.contains(&format!(r"\x7f-\x9f{}]", white_space_class(false))), "{APP_NAME}");
    }
}
