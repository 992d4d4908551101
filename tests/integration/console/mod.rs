//! The console's endpoints over HTTP: login and sessions, CSRF, permissions on every endpoint, and the
//! job, log, group, user and GLUE operations with 2.4.2's JSON.
//!
//! One file per feature; the helpers they share are in `support/console.rs`.

mod envelope;
mod groups;
mod jobs;
mod logs;
mod pages;
mod permissions;
mod session;
mod users;

use crate::{cases, Case, ALL, SQLITE};
use envelope::*;
use groups::*;
use jobs::*;
use logs::*;
use pages::*;
use permissions::*;
use session::*;
use users::*;

pub fn cases() -> Vec<Case> {
    cases! {
        "console" {
            ALL => login_gate_and_logout,
            SQLITE => the_console_points_to_what_it_offers,
            ALL => forged_and_legacy_cookies_never_authenticate,
            ALL => cross_site_requests_are_refused,
            ALL => password_change_ends_every_session,
            ALL => job_lifecycle,
            ALL => restricted_user_is_confined_to_its_groups,
            SQLITE => validation_messages_follow_2_4_2,
            ALL => groups_users_and_glue,
            ALL => log_endpoints_reach_the_executor,
            SQLITE => login_throttle,
            ALL => job_list_paging_filters_and_shape,
            ALL => job_messages_and_operations,
            SQLITE => schedule_messages_give_the_reason_in_the_console_language,
            ALL => log_list_detail_kill_and_clear,
            ALL => executor_manager_endpoints,
            ALL => user_manager_endpoints,
            ALL => every_endpoint_checks_the_group,
            ALL => dashboard_and_chart,
            ALL => hostile_text_is_data,
            ALL => rolling_log_kill_and_manual_run,
            SQLITE => foreign_origin_is_refused_everywhere,
            SQLITE => envelopes_and_binding,
            ALL => clear_log_by_age_and_count,
        }
    }
}
