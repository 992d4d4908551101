//! The JSON shapes of the console (spec console 8.1): Java field names, dates as ISO-8601 UTC strings
//! with milliseconds, as Spring Boot's Jackson writes them.

use crate::domain::java_split;
use crate::storage::{JobGroup, JobInfo, JobLog, JobUser};
use crate::time::Zone;
use chrono::{DateTime, NaiveDateTime, Utc};
use serde::Serialize;

/// `2018-11-03T14:21:31.000+00:00` for a stored wall-clock value, or null.
pub fn json_date(zone: Zone, value: Option<NaiveDateTime>) -> Option<String> {
    let ms = zone.to_epoch_ms(value?);
    let utc = DateTime::<Utc>::from_timestamp_millis(ms)?;
    Some(utc.format("%Y-%m-%dT%H:%M:%S%.3f+00:00").to_string())
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobView {
    pub id: i32,
    pub job_group: i32,
    pub job_desc: String,
    pub add_time: Option<String>,
    pub update_time: Option<String>,
    pub author: Option<String>,
    pub alarm_email: Option<String>,
    pub schedule_type: String,
    pub schedule_conf: Option<String>,
    pub misfire_strategy: String,
    pub executor_route_strategy: Option<String>,
    pub executor_handler: Option<String>,
    pub executor_param: Option<String>,
    pub executor_block_strategy: Option<String>,
    pub executor_timeout: i32,
    pub executor_fail_retry_count: i32,
    pub glue_type: String,
    pub glue_source: Option<String>,
    pub glue_remark: Option<String>,
    pub glue_updatetime: Option<String>,
    pub child_job_id: Option<String>,
    pub trigger_status: i16,
    pub trigger_last_time: i64,
    pub trigger_next_time: i64,
}

impl JobView {
    pub fn new(job: JobInfo, zone: Zone) -> JobView {
        JobView {
            id: job.id,
            job_group: job.job_group,
            job_desc: job.job_desc,
            add_time: json_date(zone, job.add_time),
            update_time: json_date(zone, job.update_time),
            author: job.author,
            alarm_email: job.alarm_email,
            schedule_type: job.schedule_type,
            schedule_conf: job.schedule_conf,
            misfire_strategy: job.misfire_strategy,
            executor_route_strategy: job.executor_route_strategy,
            executor_handler: job.executor_handler,
            executor_param: job.executor_param,
            executor_block_strategy: job.executor_block_strategy,
            executor_timeout: job.executor_timeout,
            executor_fail_retry_count: job.executor_fail_retry_count,
            glue_type: job.glue_type,
            glue_source: job.glue_source,
            glue_remark: job.glue_remark,
            glue_updatetime: json_date(zone, job.glue_updatetime),
            child_job_id: job.child_jobid,
            trigger_status: job.trigger_status,
            trigger_last_time: job.trigger_last_time,
            trigger_next_time: job.trigger_next_time,
        }
    }
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogView {
    pub id: i64,
    pub job_group: i32,
    pub job_id: i32,
    pub executor_address: Option<String>,
    pub executor_handler: Option<String>,
    pub executor_param: Option<String>,
    pub executor_sharding_param: Option<String>,
    pub executor_fail_retry_count: i32,
    pub trigger_time: Option<String>,
    pub trigger_code: i32,
    pub trigger_msg: Option<String>,
    pub handle_time: Option<String>,
    pub handle_code: i32,
    pub handle_msg: Option<String>,
    pub alarm_status: i16,
}

impl LogView {
    pub fn new(log: JobLog, zone: Zone) -> LogView {
        LogView {
            id: log.id,
            job_group: log.job_group,
            job_id: log.job_id,
            executor_address: log.executor_address,
            executor_handler: log.executor_handler,
            executor_param: log.executor_param,
            executor_sharding_param: log.executor_sharding_param,
            executor_fail_retry_count: log.executor_fail_retry_count,
            trigger_time: json_date(zone, log.trigger_time),
            trigger_code: log.trigger_code,
            trigger_msg: log.trigger_msg,
            handle_time: json_date(zone, log.handle_time),
            handle_code: log.handle_code,
            handle_msg: log.handle_msg,
            alarm_status: log.alarm_status,
        }
    }
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupView {
    pub id: i32,
    pub appname: String,
    pub title: String,
    pub address_type: i16,
    pub address_list: Option<String>,
    pub update_time: Option<String>,
    pub registry_list: Option<Vec<String>>,
}

impl GroupView {
    pub fn new(group: JobGroup, zone: Zone) -> GroupView {
        let registry_list = group
            .address_list
            .as_deref()
            .filter(|l| !l.trim().is_empty())
            .map(|l| java_split(l).into_iter().map(str::to_string).collect());
        GroupView {
            id: group.id,
            appname: group.app_name,
            title: group.title,
            address_type: group.address_type,
            address_list: group.address_list,
            update_time: json_date(zone, group.update_time),
            registry_list,
        }
    }
}

/// A user as listed: the password hash is never sent.
#[derive(Debug, Serialize)]
pub struct UserView {
    pub id: i32,
    pub username: String,
    pub password: Option<String>,
    pub role: i16,
    pub permission: Option<String>,
}

impl From<JobUser> for UserView {
    fn from(user: JobUser) -> UserView {
        UserView { id: user.id, username: user.username, password: None, role: user.role, permission: user.permission }
    }
}

/// The DataTables paging answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Page<T> {
    pub records_total: i64,
    pub records_filtered: i64,
    pub data: Vec<T>,
}

impl<T> Page<T> {
    pub fn new(data: Vec<T>, total: i64) -> Page<T> {
        Page { records_total: total, records_filtered: total, data }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_iso_with_millis() {
        let shanghai = Zone::Named(chrono_tz::Asia::Shanghai);
        let stored = NaiveDateTime::parse_from_str("2018-11-03 22:21:31", "%Y-%m-%d %H:%M:%S").unwrap();
        assert_eq!(json_date(shanghai, Some(stored)).as_deref(), Some("2018-11-03T14:21:31.000+00:00"));
        assert_eq!(json_date(shanghai, None), None);
    }

    #[test]
    fn registry_list_splits_non_blank_lists_only() {
        let group = JobGroup { id: 1, app_name: "a".into(), title: "t".into(), address_type: 1, address_list: Some("x,y,".into()), update_time: None };
        let view = GroupView::new(group.clone(), Zone::System);
        assert_eq!(view.registry_list, Some(vec!["x".to_string(), "y".to_string()]));
        let blank = GroupView::new(JobGroup { address_list: Some(" ".into()), ..group }, Zone::System);
        assert_eq!(blank.registry_list, None);
    }
}
