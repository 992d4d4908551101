//! The report stored in `xxl_job_log.trigger_msg`, built from i18n texts (2.4.2: XxlJobTrigger's
//! processTrigger, the FAILOVER and BUSYOVER probes, JobFailMonitorHelper's retry banner).
//! 2.4.2 separates labels with the full-width colon whatever the language; the console shows it as HTML.

use crate::domain::glue::BlockStrategy;
use crate::i18n::I18n;

pub const FW_COLON: &str = "：";

/// Block strategy titles (2.4.2: ExecutorBlockStrategyEnum); unknown or missing ones show as serial
/// execution.
pub fn block_title_key(block_strategy: Option<&str>) -> &'static str {
    block_strategy.and_then(BlockStrategy::from_name).unwrap_or(BlockStrategy::SerialExecution).i18n_key()
}

/// Everything a trigger report states.
#[derive(Debug, Clone, Default)]
pub struct TriggerReport<'a> {
    pub trigger_type_title: &'a str,
    pub admin_address: &'a str,
    pub manual_addresses: bool,
    /// The group's address list (after any override); `None` when it is NULL or blank.
    pub address_list: Option<&'a [&'a str]>,
    pub route_title: &'a str,
    /// `index/total` of a broadcast shard.
    pub sharding: Option<&'a str>,
    pub block_title: &'a str,
    pub timeout: i32,
    pub fail_retry_count: i32,
    /// The router's message (a probe report, or why there is no address).
    pub route_msg: Option<&'a str>,
    /// The wrapped `/run` result, when `/run` was attempted.
    pub run_msg: Option<&'a str>,
}

impl TriggerReport<'_> {
    pub fn render(&self, i18n: &I18n) -> String {
        let addresses = match self.address_list {
            Some(list) => format!("[{}]", list.join(", ")),
            None => "null".to_string(),
        };
        let registration = if self.manual_addresses {
            "jobgroup_field_addressType_1"
        } else {
            "jobgroup_field_addressType_0"
        };
        let sharding = self.sharding.map(|s| format!("({s})")).unwrap_or_default();
        let mut msg = format!(
            "{}{FW_COLON}{}\
             <br>{}{FW_COLON}{}\
             <br>{}{FW_COLON}{}\
             <br>{}{FW_COLON}{}\
             <br>{}{FW_COLON}{}{}\
             <br>{}{FW_COLON}{}\
             <br>{}{FW_COLON}{}\
             <br>{}{FW_COLON}{}\
             <br><br><span style=\"color:#00c0ef;\" > >>>>>>>>>>>{}<<<<<<<<<<< </span><br>",
            i18n.get("jobconf_trigger_type"),
            self.trigger_type_title,
            i18n.get("jobconf_trigger_admin_adress"),
            self.admin_address,
            i18n.get("jobconf_trigger_exe_regtype"),
            i18n.get(registration),
            i18n.get("jobconf_trigger_exe_regaddress"),
            addresses,
            i18n.get("jobinfo_field_executorRouteStrategy"),
            self.route_title,
            sharding,
            i18n.get("jobinfo_field_executorBlockStrategy"),
            self.block_title,
            i18n.get("jobinfo_field_timeout"),
            self.timeout,
            i18n.get("jobinfo_field_executorFailRetryCount"),
            self.fail_retry_count,
            i18n.get("jobconf_trigger_run"),
        );
        if let Some(route_msg) = self.route_msg {
            msg.push_str(route_msg);
            msg.push_str("<br><br>");
        }
        if let Some(run_msg) = self.run_msg {
            msg.push_str(run_msg);
        }
        msg
    }
}

/// `label：<br>address：a<br>code：c<br>msg：m`, the shape of a `/run` result and of each probe.
pub fn call_report(label: &str, address: &str, code: i32, msg: Option<&str>) -> String {
    format!(
        "{label}{FW_COLON}<br>address{FW_COLON}{address}<br>code{FW_COLON}{code}<br>msg{FW_COLON}{}",
        msg.unwrap_or("null")
    )
}

/// The block the fail monitor appends when it issues a retry.
pub fn retry_block(i18n: &I18n) -> String {
    format!(
        "<br><br><span style=\"color:#F39C12;\" > >>>>>>>>>>>{}<<<<<<<<<<< </span><br>",
        i18n.get("jobconf_trigger_type_retry")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_has_the_2_4_2_structure() {
        let i18n = I18n::new("en");
        let list = ["http://a:9999/", " http://b:9999/"];
        let run = call_report(i18n.get("jobconf_trigger_run"), "http://a:9999/", 200, None);
        let report = TriggerReport {
            trigger_type_title: i18n.get("jobconf_trigger_type_cron"),
            admin_address: "10.0.0.1",
            manual_addresses: false,
            address_list: Some(&list),
            route_title: i18n.get("jobconf_route_shard"),
            sharding: Some("0/2"),
            block_title: i18n.get(block_title_key(None)),
            timeout: 0,
            fail_retry_count: 2,
            route_msg: None,
            run_msg: Some(&run),
        };
        let msg = report.render(&i18n);
        let expected_start =
            format!("{}：{}<br>", i18n.get("jobconf_trigger_type"), i18n.get("jobconf_trigger_type_cron"));
        assert!(msg.starts_with(&expected_start), "{msg}");
        assert!(msg.contains("：[http://a:9999/,  http://b:9999/]<br>"), "{msg}");
        assert!(msg.contains(&format!("{}(0/2)<br>", i18n.get("jobconf_route_shard"))), "{msg}");
        assert!(msg.ends_with("<br>address：http://a:9999/<br>code：200<br>msg：null"), "{msg}");
        assert_eq!(msg.matches(">>>>>>>>>>>").count(), 1);
    }

    #[test]
    fn missing_addresses_render_as_null_and_route_message_is_followed_by_blank_line() {
        let i18n = I18n::new("zh_CN");
        let empty = i18n.get("jobconf_trigger_address_empty");
        let report = TriggerReport { route_msg: Some(empty), ..Default::default() };
        let msg = report.render(&i18n);
        assert!(msg.contains("：null<br>"));
        assert!(msg.ends_with(&format!("{empty}<br><br>")));
    }

    #[test]
    fn unknown_block_strategies_show_as_serial() {
        assert_eq!(block_title_key(Some("whatever")), "jobconf_block_SERIAL_EXECUTION");
        assert_eq!(block_title_key(Some("COVER_EARLY")), "jobconf_block_COVER_EARLY");
    }
}
