//! The JSON shapes exchanged with executors (2.4.2: RegistryParam, HandleCallbackParam, TriggerParam,
//! ReturnT), tolerant of what real executors send.

use serde::{Deserialize, Deserializer, Serialize};

/// Every response in both directions: all three keys, nulls included, in this order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReturnT<T> {
    #[serde(default, deserialize_with = "lenient_i32")]
    pub code: i32,
    #[serde(default)]
    pub msg: Option<String>,
    #[serde(default = "Option::default")]
    pub content: Option<T>,
}

pub const SUCCESS_CODE: i32 = 200;
pub const FAIL_CODE: i32 = 500;

impl<T> ReturnT<T> {
    pub fn success() -> ReturnT<T> {
        ReturnT { code: SUCCESS_CODE, msg: None, content: None }
    }

    pub fn with_content(content: T) -> ReturnT<T> {
        ReturnT { code: SUCCESS_CODE, msg: None, content: Some(content) }
    }

    pub fn fail(msg: impl Into<String>) -> ReturnT<T> {
        ReturnT { code: FAIL_CODE, msg: Some(msg.into()), content: None }
    }

    pub fn is_success(&self) -> bool {
        self.code == SUCCESS_CODE
    }
}

/// Body of `/api/registry` and `/api/registryRemove`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegistryParam {
    pub registry_group: Option<String>,
    pub registry_key: Option<String>,
    pub registry_value: Option<String>,
}

/// One item of the `/api/callback` array. Missing numbers read as 0 and missing strings as null, as Gson
/// reads them; `logDateTim` (sic) is accepted and ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandleCallbackParam {
    #[serde(default, deserialize_with = "lenient_i64")]
    pub log_id: i64,
    #[serde(default, deserialize_with = "lenient_i64")]
    pub log_date_tim: i64,
    #[serde(default, deserialize_with = "lenient_i32")]
    pub handle_code: i32,
    #[serde(default)]
    pub handle_msg: Option<String>,
}

/// A JSON number, a numeric string (Gson's lenient reading) or null (→ 0).
fn lenient_number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    use serde::de::Error;
    match serde_json::Value::deserialize(deserializer)? {
        serde_json::Value::Null => Ok(0),
        serde_json::Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
            .ok_or_else(|| D::Error::custom(format!("{n} is not an integer"))),
        serde_json::Value::String(s) => {
            s.trim().parse().map_err(|_| D::Error::custom(format!("\"{s}\" is not an integer")))
        }
        other => Err(D::Error::custom(format!("expected an integer, found {other}"))),
    }
}

fn lenient_i64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    lenient_number(deserializer)
}

fn lenient_i32<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i32, D::Error> {
    use serde::de::Error;
    let n = lenient_number(deserializer)?;
    i32::try_from(n).map_err(|_| D::Error::custom(format!("{n} does not fit a 32-bit integer")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn return_t_keeps_nulls_and_key_order() {
        let json = serde_json::to_string(&ReturnT::<String>::success()).unwrap();
        assert_eq!(json, r#"{"code":200,"msg":null,"content":null}"#);
        let json = serde_json::to_string(&ReturnT::<String>::fail("The access token is wrong.")).unwrap();
        assert_eq!(json, r#"{"code":500,"msg":"The access token is wrong.","content":null}"#);
    }

    #[test]
    fn executor_replies_without_optional_fields_parse() {
        let r: ReturnT<String> = serde_json::from_str(r#"{"code":200}"#).unwrap();
        assert_eq!(r, ReturnT::success());
        let r: ReturnT<String> = serde_json::from_str(r#"{}"#).unwrap();
        assert_eq!(r.code, 0);
    }

    #[test]
    fn callback_items_are_read_like_gson() {
        let items: Vec<HandleCallbackParam> = serde_json::from_str(
            r#"[{"logId":7,"logDateTim":1700000000000,"handleCode":200},
                {"logId":"8","handleCode":500,"handleMsg":"boom","extra":{"x":1}},
                {"logId":9,"handleCode":null,"handleMsg":null}]"#,
        )
        .unwrap();
        assert_eq!(
            items[0],
            HandleCallbackParam {
                log_id: 7,
                log_date_tim: 1_700_000_000_000,
                handle_code: 200,
                handle_msg: None
            }
        );
        assert_eq!(items[1].log_id, 8);
        assert_eq!(items[1].handle_msg.as_deref(), Some("boom"));
        assert_eq!(items[2].handle_code, 0);
    }

    #[test]
    fn out_of_range_numbers_are_errors_not_wraps() {
        assert!(serde_json::from_str::<HandleCallbackParam>(r#"{"handleCode":4294967296}"#).is_err());
        assert!(serde_json::from_str::<HandleCallbackParam>(r#"{"logId":[1]}"#).is_err());
    }
}
