//! The console's three language bundles (2.4.2: I18nUtil's bundles): UI words, validation messages and the
//! texts the scheduler writes into `trigger_msg` / `handle_msg` and alarm e-mails. Each bundle has the 251
//! keys of the 2.4.2 bundles plus the few texts our own console adds (cron builder, help page); the page
//! scripts receive the whole bundle, so no text lives in JavaScript.
//!
//! As in 2.4.2 the language is chosen once at start-up; there is no per-request language. 2.4.2 builds
//! messages by plain concatenation (`system_please_input` then `jobinfo_field_jobdesc`), so English values
//! carry their own spacing: prefixes end with a space (`system_please_input`, `system_please_choose`,
//! `system_lengh_limit`, `system_welcome`, `jobinfo_field_add`) and suffixes start with one
//! (`system_unvalid`, `system_not_found`). Callers join values with nothing in between, as 2.4.2 does.

use std::fmt::{self, Display, Write};
use std::sync::OnceLock;

use serde_json::{Map, Value};

type Bundle = Map<String, Value>;

/// Language codes accepted by `xxl.job.i18n`, with their embedded bundles; the first one is the fallback.
const SOURCES: [(&str, &str); 3] = [
    ("zh_CN", include_str!("../i18n/zh_CN.json")),
    ("zh_TC", include_str!("../i18n/zh_TC.json")),
    ("en", include_str!("../i18n/en.json")),
];

static BUNDLES: [OnceLock<Bundle>; 3] = [const { OnceLock::new() }; 3];

fn bundle(index: usize) -> &'static Bundle {
    BUNDLES[index].get_or_init(|| {
        let (code, source) = SOURCES[index];
        // The bundles are compiled in, so a broken one is a build defect that the unit tests catch.
        serde_json::from_str(source)
            .unwrap_or_else(|e| panic!("i18n bundle {code} is not a JSON object: {e}"))
    })
}

/// The texts of one language. Cloning is free: the parsed bundles live for the whole process.
#[derive(Clone)]
pub struct I18n {
    index: usize,
    bundle: &'static Bundle,
}

impl I18n {
    /// `zh_CN`, `zh_TC` or `en`; any other value (including empty) selects `zh_CN`, as 2.4.2 does.
    pub fn new(lang_code: &str) -> I18n {
        let index = SOURCES.iter().position(|(code, _)| *code == lang_code).unwrap_or(0);
        I18n { index, bundle: bundle(index) }
    }

    /// The configured language's code (`zh_CN`, `zh_TC` or `en`).
    pub fn lang_code(&self) -> &'static str {
        SOURCES[self.index].0
    }

    /// The text of `key`. An unknown key is a caller bug: tests panic, otherwise the key itself is shown so
    /// the page or message stays usable.
    pub fn get<'k>(&self, key: &'k str) -> &'k str {
        let text: Option<&'k str> = self.lookup(key);
        text.unwrap_or_else(|| {
            if cfg!(test) {
                panic!("unknown i18n key {key:?}");
            }
            key
        })
    }

    fn lookup(&self, key: &str) -> Option<&'static str> {
        self.bundle.get(key).and_then(Value::as_str)
    }

    /// Fills the `{0}`, `{1}`, … slots of the template `key` like Java's `MessageFormat`. Java would also
    /// group the digits of numeric arguments (`1,234`); callers pass numbers already formatted as wanted.
    /// A slot without a matching argument stays as written, as in Java. The templates use no quoting.
    pub fn format(&self, key: &str, args: &[&dyn Display]) -> String {
        fill(self.get(key), args)
    }

    /// Every key of the language with its text, for pages that expose the bundle to JavaScript as `I18n`.
    pub fn all(&self) -> &'static Map<String, Value> {
        self.bundle
    }
}

impl fmt::Debug for I18n {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("I18n").field("lang", &self.lang_code()).finish()
    }
}

fn fill(template: &str, args: &[&dyn Display]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let slot = after
            .find('}')
            .filter(|&close| close > 0 && after[..close].bytes().all(|b| b.is_ascii_digit()))
            .and_then(|close| Some((after[..close].parse::<usize>().ok()?, close)));
        match slot {
            Some((n, close)) if n < args.len() => {
                // Writing into a String cannot fail.
                let _ = write!(out, "{}", args[n]);
                rest = &after[close + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// The 251 keys of 2.4.2's bundles (its `i18n/message_*.properties`).
    #[rustfmt::skip]
    const JAVA_ADMIN_KEYS: [&str; 251] = [
        "admin_i18n", "admin_name", "admin_name_full", "admin_version", "change_pwd", "change_pwd_field_newpwd",
        "change_pwd_field_oldpwd", "change_pwd_suc_to_logout", "dataTable_sEmptyTable", "dataTable_sFirst",
        "dataTable_sInfo", "dataTable_sInfoEmpty", "dataTable_sInfoFiltered", "dataTable_sLast",
        "dataTable_sLengthMenu", "dataTable_sLoadingRecords", "dataTable_sNext", "dataTable_sPrevious",
        "dataTable_sProcessing", "dataTable_sSearch", "dataTable_sSortAscending", "dataTable_sSortDescending",
        "dataTable_sZeroRecords", "daterangepicker_custom_daysofweek", "daterangepicker_custom_endtime",
        "daterangepicker_custom_monthnames", "daterangepicker_custom_name", "daterangepicker_custom_starttime",
        "daterangepicker_ranges_last_month", "daterangepicker_ranges_recent_hour",
        "daterangepicker_ranges_recent_month", "daterangepicker_ranges_recent_week",
        "daterangepicker_ranges_this_month", "daterangepicker_ranges_today", "daterangepicker_ranges_yesterday",
        "job_dashboard_date_report", "job_dashboard_job_num", "job_dashboard_job_num_tip",
        "job_dashboard_jobgroup_num", "job_dashboard_jobgroup_num_tip", "job_dashboard_name",
        "job_dashboard_rate_report", "job_dashboard_report", "job_dashboard_report_loaddata_fail",
        "job_dashboard_trigger_num", "job_dashboard_trigger_num_tip", "job_help", "job_help_document",
        "jobconf_beat", "jobconf_block_COVER_EARLY", "jobconf_block_DISCARD_LATER",
        "jobconf_block_SERIAL_EXECUTION", "jobconf_callback_child_msg1", "jobconf_callback_child_msg2",
        "jobconf_idleBeat", "jobconf_monitor", "jobconf_monitor_alarm_content", "jobconf_monitor_alarm_title",
        "jobconf_monitor_alarm_type", "jobconf_monitor_detail", "jobconf_route_busyover",
        "jobconf_route_consistenthash", "jobconf_route_failover", "jobconf_route_first", "jobconf_route_last",
        "jobconf_route_lfu", "jobconf_route_lru", "jobconf_route_random", "jobconf_route_round",
        "jobconf_route_shard", "jobconf_trigger_address_empty", "jobconf_trigger_admin_adress",
        "jobconf_trigger_child_run", "jobconf_trigger_exe_regaddress", "jobconf_trigger_exe_regtype",
        "jobconf_trigger_run", "jobconf_trigger_type", "jobconf_trigger_type_api", "jobconf_trigger_type_cron",
        "jobconf_trigger_type_manual", "jobconf_trigger_type_misfire", "jobconf_trigger_type_parent",
        "jobconf_trigger_type_retry", "jobgroup_add", "jobgroup_del", "jobgroup_del_limit_0",
        "jobgroup_del_limit_1", "jobgroup_edit", "jobgroup_empty", "jobgroup_field_addressType",
        "jobgroup_field_addressType_0", "jobgroup_field_addressType_1", "jobgroup_field_addressType_limit",
        "jobgroup_field_appname_length", "jobgroup_field_appname_limit", "jobgroup_field_order_digits",
        "jobgroup_field_orderrange", "jobgroup_field_registryList", "jobgroup_field_registryList_placeholder",
        "jobgroup_field_registryList_unvalid", "jobgroup_field_title", "jobgroup_field_title_length",
        "jobgroup_list", "jobgroup_name", "jobinfo_conf_advanced", "jobinfo_conf_base", "jobinfo_conf_job",
        "jobinfo_conf_schedule", "jobinfo_field_add", "jobinfo_field_alarmemail",
        "jobinfo_field_alarmemail_placeholder", "jobinfo_field_author", "jobinfo_field_childJobId",
        "jobinfo_field_childJobId_placeholder", "jobinfo_field_executorBlockStrategy",
        "jobinfo_field_executorFailRetryCount", "jobinfo_field_executorFailRetryCount_placeholder",
        "jobinfo_field_executorRouteStrategy", "jobinfo_field_executorTimeout_placeholder",
        "jobinfo_field_executorparam", "jobinfo_field_gluetype", "jobinfo_field_id", "jobinfo_field_jobdesc",
        "jobinfo_field_jobgroup", "jobinfo_field_timeout", "jobinfo_field_update", "jobinfo_glue_gluetype_unvalid",
        "jobinfo_glue_jobid_unvalid", "jobinfo_glue_remark", "jobinfo_glue_remark_limit", "jobinfo_glue_rollback",
        "jobinfo_job", "jobinfo_name", "jobinfo_opt_log", "jobinfo_opt_next_time", "jobinfo_opt_registryinfo",
        "jobinfo_opt_run", "jobinfo_opt_run_tips", "jobinfo_opt_start", "jobinfo_opt_stop",
        "jobinfo_script_location", "jobinfo_shard_index", "jobinfo_shard_total", "joblog_clean", "joblog_clean_log",
        "joblog_clean_type", "joblog_clean_type_1", "joblog_clean_type_2", "joblog_clean_type_3",
        "joblog_clean_type_4", "joblog_clean_type_5", "joblog_clean_type_6", "joblog_clean_type_7",
        "joblog_clean_type_8", "joblog_clean_type_9", "joblog_clean_type_unvalid", "joblog_field_executorAddress",
        "joblog_field_handleCode", "joblog_field_handleMsg", "joblog_field_handleTime", "joblog_field_triggerCode",
        "joblog_field_triggerMsg", "joblog_field_triggerTime", "joblog_handleCode_200", "joblog_handleCode_500",
        "joblog_handleCode_502", "joblog_kill_log", "joblog_kill_log_byman", "joblog_kill_log_limit",
        "joblog_logid_unvalid", "joblog_lost_fail", "joblog_name", "joblog_rolling_log",
        "joblog_rolling_log_failoften", "joblog_rolling_log_refresh", "joblog_rolling_log_triggerfail",
        "joblog_status", "joblog_status_all", "joblog_status_fail", "joblog_status_running", "joblog_status_suc",
        "login_btn", "login_fail", "login_param_empty", "login_param_unvalid", "login_password_empty",
        "login_password_lt_4", "login_password_placeholder", "login_remember_me", "login_success",
        "login_username_empty", "login_username_lt_4", "login_username_placeholder", "logout_btn", "logout_confirm",
        "logout_fail", "logout_success", "misfire_strategy", "misfire_strategy_do_nothing",
        "misfire_strategy_fire_once_now", "schedule_type", "schedule_type_cron", "schedule_type_fix_delay",
        "schedule_type_fix_rate", "schedule_type_none", "schedule_type_none_limit_start", "system_add_fail",
        "system_add_suc", "system_all", "system_api_error", "system_cancel", "system_close", "system_digits",
        "system_empty", "system_fail", "system_lengh_limit", "system_nav", "system_not_found", "system_ok",
        "system_opt", "system_opt_copy", "system_opt_del", "system_opt_edit", "system_opt_fail", "system_opt_suc",
        "system_permission_limit", "system_please_choose", "system_please_input", "system_save", "system_search",
        "system_show", "system_status", "system_success", "system_tips", "system_unvalid", "system_update_fail",
        "system_update_suc", "system_welcome", "user_add", "user_manage", "user_password",
        "user_password_update_placeholder", "user_permission", "user_role", "user_role_admin", "user_role_normal",
        "user_update", "user_update_loginuser_limit", "user_username", "user_username_repeat",
        "user_username_valid",
    ];

    fn all_languages() -> Vec<I18n> {
        SOURCES.iter().map(|(code, _)| I18n::new(code)).collect()
    }

    fn keys(i18n: &I18n) -> BTreeSet<&str> {
        i18n.all().keys().map(String::as_str).collect()
    }

    /// The `{n}` slots of a text (filled by `I18n::format`), sorted.
    fn slots(text: &str) -> Vec<String> {
        braced(text, |name| name.bytes().all(|b| b.is_ascii_digit()))
    }

    /// The `{name}` slots of a text (filled by the console's `XJ.t(key, vars)`), sorted.
    fn named_slots(text: &str) -> Vec<String> {
        braced(text, |name| name.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_'))
    }

    fn braced(text: &str, accept: fn(&str) -> bool) -> Vec<String> {
        let mut found = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            rest = &rest[open + 1..];
            if let Some(close) = rest.find('}') {
                if close > 0 && accept(&rest[..close]) {
                    found.push(rest[..close].to_string());
                }
            }
        }
        found.sort();
        found
    }

    /// DataTables' own placeholders (`_MENU_`, `_PAGE_`, …).
    fn datatable_tokens(text: &str) -> BTreeSet<&str> {
        ["_MENU_", "_PAGE_", "_PAGES_", "_TOTAL_", "_MAX_", "_START_", "_END_"]
            .into_iter()
            .filter(|token| text.contains(token))
            .collect()
    }

    #[test]
    fn every_bundle_has_the_java_admins_keys_and_the_same_extras() {
        let java: BTreeSet<&str> = JAVA_ADMIN_KEYS.into_iter().collect();
        assert_eq!(java.len(), 251, "the list of 2.4.2's keys has duplicates");
        let languages = all_languages();
        let reference = keys(&languages[0]);
        let missing: Vec<_> = java.difference(&reference).collect();
        assert!(missing.is_empty(), "zh_CN: missing 2.4.2 keys {missing:?}");
        // Console texts beyond the 2.4.2 bundle are allowed, but every language must have all of them.
        for other in &languages[1..] {
            let actual = keys(other);
            let missing: Vec<_> = reference.difference(&actual).collect();
            let extra: Vec<_> = actual.difference(&reference).collect();
            assert!(
                missing.is_empty() && extra.is_empty(),
                "{}: missing {missing:?}, extra {extra:?} compared with zh_CN",
                other.lang_code()
            );
        }
    }

    #[test]
    fn sources_are_sorted_by_key() {
        for (code, source) in SOURCES {
            let in_file_order: Vec<&str> = source
                .lines()
                .filter_map(|line| line.trim_start().strip_prefix('"')?.split_once('"').map(|(key, _)| key))
                .collect();
            let mut sorted = in_file_order.clone();
            sorted.sort_unstable();
            let bundle_len = I18n::new(code).all().len();
            assert_eq!(in_file_order.len(), bundle_len, "{code}: expected one key per line");
            assert_eq!(in_file_order, sorted, "{code} is not sorted by key");
        }
    }

    #[test]
    fn every_value_is_a_non_empty_string_except_the_chinese_admin_i18n() {
        for i18n in all_languages() {
            for (key, value) in i18n.all() {
                let text =
                    value.as_str().unwrap_or_else(|| panic!("{}: {key} is not a string", i18n.lang_code()));
                // As in 2.4.2, `admin_i18n` is empty in both Chinese bundles; the page picks the cron builder
                // by it.
                if key != "admin_i18n" {
                    assert!(!text.trim().is_empty(), "{}: {key} is empty", i18n.lang_code());
                }
            }
        }
        assert_eq!(I18n::new("zh_CN").get("admin_i18n"), "");
        assert_eq!(I18n::new("zh_TC").get("admin_i18n"), "");
        assert_eq!(I18n::new("en").get("admin_i18n"), "en");
    }

    #[test]
    fn facts_are_kept_in_every_language() {
        for i18n in all_languages() {
            let code = i18n.lang_code();
            assert_eq!(i18n.get("admin_version"), "2.4.2", "{code}");
            assert_eq!(i18n.get("daterangepicker_custom_daysofweek").split(',').count(), 7, "{code}");
            assert_eq!(i18n.get("daterangepicker_custom_monthnames").split(',').count(), 12, "{code}");
        }
    }

    #[test]
    fn placeholders_agree_across_languages() {
        let languages = all_languages();
        let reference = &languages[0];
        for key in keys(reference) {
            let expected = reference.get(key);
            for other in &languages[1..] {
                let text = other.get(key);
                assert_eq!(
                    slots(text),
                    slots(expected),
                    "{}: {key} has other {{n}} slots",
                    other.lang_code()
                );
                assert_eq!(
                    named_slots(text),
                    named_slots(expected),
                    "{}: {key} has other {{name}} slots",
                    other.lang_code()
                );
                assert_eq!(
                    datatable_tokens(text),
                    datatable_tokens(expected),
                    "{}: {key}",
                    other.lang_code()
                );
            }
        }
    }

    #[test]
    fn child_job_templates_have_the_java_admins_shape() {
        for i18n in all_languages() {
            let code = i18n.lang_code();
            for (key, count) in [("jobconf_callback_child_msg1", 5), ("jobconf_callback_child_msg2", 3)] {
                let template = i18n.get(key);
                let expected: Vec<String> = (0..count).map(|n| n.to_string()).collect();
                assert_eq!(slots(template), expected, "{code}: {key}");
                assert!(template.ends_with("<br>"), "{code}: {key} must end with <br>");
                // Java's MessageFormat treats an apostrophe as a quote; keep the templates free of them.
                assert!(!template.contains('\''), "{code}: {key}");
            }
        }
    }

    #[test]
    fn only_the_templates_the_server_fills_have_slots() {
        // The console's refusals name the sender or the path they refused; the login page names the provider;
        // a cron expression's reason names the field, its text and what is wrong.
        let filled = [
            "alarm_channel_test_failed",
            "alarm_channel_test_sent",
            "alarm_channel_unknown",
            "alarm_test_message",
            "code_error_bad_time",
            "code_error_child_pruned",
            "code_error_child_unknown",
            "code_error_executor_twice",
            "code_error_glue_type_fixed",
            "code_error_groups_share_app",
            "code_error_history_too_long",
            "code_error_job_twice",
            "code_error_jobs_share_key",
            "code_error_key_taken",
            "code_error_node_field",
            "code_error_node_job_unknown",
            "code_error_node_kinds",
            "code_error_node_no_kind",
            "code_error_node_pruned",
            "code_error_not_glue_type",
            "code_error_too_long",
            "code_error_trigger_status",
            "code_error_workflow_busy",
            "code_error_workflow_executor",
            "code_error_workflow_twice",
            "code_plan_changes",
            "code_plan_step",
            "cron_error_field",
            "cron_error_missing_fields",
            "cron_problem_not_in_this_field",
            "cron_problem_number_expected",
            "cron_problem_out_of_range",
            "cron_problem_step_too_large",
            "cron_problem_unexpected_character",
            "jobinfo_alarm_unknown_channel",
            "jobinfo_cron_unvalid_reason",
            "login_oidc_btn",
            "login_throttled",
            "system_cross_site_refused",
            "system_get_needs_console",
            "system_nul_refused",
            "system_param_invalid",
            "system_post_only",
        ];
        for i18n in all_languages() {
            for (key, value) in i18n.all() {
                let has_slots = !slots(value.as_str().unwrap_or_default()).is_empty();
                let expected =
                    key.starts_with("jobconf_callback_child_msg") || filled.contains(&key.as_str());
                assert_eq!(has_slots, expected, "{}: {key}", i18n.lang_code());
            }
        }
    }

    #[test]
    fn format_fills_slots_in_any_order() {
        let args: [&dyn Display; 3] = [&1, &"two", &3.5];
        assert_eq!(fill("{2}-{0}-{1}-{0}", &args), "3.5-1-two-1");
        assert_eq!(fill("no slots", &args), "no slots");
        assert_eq!(fill("", &args), "");
        // Slots without an argument and braces that are not slots are kept as written.
        assert_eq!(fill("{3} {} {x} {+1} {0", &args), "{3} {} {x} {+1} {0");
        assert_eq!(fill("{{0}}", &args), "{1}");
        assert_eq!(fill("中{0}文", &args), "中1文");
    }

    #[test]
    fn format_uses_the_bundle_template() {
        let en = I18n::new("en");
        let msg =
            en.format("jobconf_callback_child_msg1", &[&1, &2, &"7", &en.get("system_success"), &"null"]);
        assert!(msg.contains('7') && msg.contains(en.get("system_success")) && msg.contains("null"), "{msg}");
        assert!(msg.ends_with("<br>") && !msg.contains('{'), "{msg}");
        let msg = I18n::new("zh_TC").format("jobconf_callback_child_msg2", &[&2, &2, &" 3"]);
        assert!(msg.starts_with("子任務 2/2") && msg.contains(" 3") && !msg.contains('{'), "{msg}");
    }

    #[test]
    fn language_selection_falls_back_to_simplified_chinese() {
        assert_eq!(I18n::new("zh_CN").lang_code(), "zh_CN");
        assert_eq!(I18n::new("zh_TC").lang_code(), "zh_TC");
        assert_eq!(I18n::new("en").lang_code(), "en");
        for other in ["", "EN", "fr", "zh_cn", " en"] {
            let i18n = I18n::new(other);
            assert_eq!(i18n.lang_code(), "zh_CN", "{other:?}");
            assert_eq!(i18n.get("login_btn"), I18n::new("zh_CN").get("login_btn"));
        }
        assert_ne!(I18n::new("en").get("login_btn"), I18n::new("zh_CN").get("login_btn"));
        assert_ne!(I18n::new("zh_TC").get("login_btn"), I18n::new("zh_CN").get("login_btn"));
    }

    #[test]
    fn unknown_keys_are_not_found() {
        assert_eq!(I18n::new("en").lookup("no_such_key"), None);
        assert_eq!(I18n::new("en").lookup("login_btn"), Some("Sign in"));
    }

    #[test]
    #[should_panic(expected = "unknown i18n key")]
    fn unknown_keys_fail_loudly_in_tests() {
        I18n::new("en").get("no_such_key");
    }

    #[test]
    fn handles_are_cheap_and_shareable() {
        fn assert_send_sync<T: Send + Sync + Clone + 'static>() {}
        assert_send_sync::<I18n>();
        let a = I18n::new("en");
        let b = a.clone();
        assert!(std::ptr::eq(a.all(), b.all()));
        assert!(std::ptr::eq(a.all(), I18n::new("en").all()), "bundles are parsed once");
        assert_eq!(format!("{a:?}"), "I18n { lang: \"en\" }");
    }
}
