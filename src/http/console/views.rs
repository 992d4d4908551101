//! The JSON shapes of the console (2.4.2: its `XxlJob*` models): Java field names, dates as ISO-8601
//! UTC strings with milliseconds, as Spring Boot's Jackson writes them. The REST API has shapes of its own
//! (`http::openapi::shapes`), so these may follow the console's pages alone.

use crate::domain::registry::listed_addresses;
use crate::http::dates::json_date;
use crate::storage::{JobGroup, JobInfo, JobLog, JobUser};
use crate::time::Zone;
use serde::Serialize;

/// A job as the console's pages and tables show it: the row, with its dates as instants.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobView {
    #[serde(flatten)]
    pub job: JobInfo,
    pub add_time: Option<String>,
    pub update_time: Option<String>,
    pub glue_updatetime: Option<String>,
}

impl JobView {
    pub fn new(job: JobInfo, zone: Zone) -> JobView {
        let (add_time, update_time, glue_updatetime) = (job.add_time, job.update_time, job.glue_updatetime);
        JobView {
            job,
            add_time: json_date(zone, add_time),
            update_time: json_date(zone, update_time),
            glue_updatetime: json_date(zone, glue_updatetime),
        }
    }
}

/// A log row as the log table shows it, with its dates as instants.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogView {
    #[serde(flatten)]
    pub log: JobLog,
    pub trigger_time: Option<String>,
    pub handle_time: Option<String>,
}

impl LogView {
    pub fn new(log: JobLog, zone: Zone) -> LogView {
        let (trigger_time, handle_time) =
            (json_date(zone, log.trigger_time), json_date(zone, log.handle_time));
        LogView { log, trigger_time, handle_time }
    }
}

/// An executor group as the executor manager shows it, with its update time as an instant and its
/// addresses as a list.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupView {
    #[serde(flatten)]
    pub group: JobGroup,
    pub update_time: Option<String>,
    pub registry_list: Option<Vec<String>>,
}

impl GroupView {
    pub fn new(group: JobGroup, zone: Zone) -> GroupView {
        let registry_list = listed_addresses(group.address_list.as_deref());
        GroupView { update_time: json_date(zone, group.update_time), group, registry_list }
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
        UserView {
            id: user.id,
            username: user.username,
            password: None,
            role: user.role.into(),
            permission: user.permission,
        }
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
    use chrono::NaiveDateTime;

    fn keys(value: impl Serialize) -> Vec<String> {
        let mut keys: Vec<String> =
            serde_json::to_value(value).unwrap().as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    }

    fn sorted(names: &str) -> Vec<String> {
        let mut names: Vec<String> = names.split_whitespace().map(str::to_string).collect();
        names.sort();
        names
    }

    /// 2.4.2's field names (of its `XxlJob*` models), each once: the row's own and the dates the view adds.
    #[test]
    fn views_keep_the_java_field_names() {
        let stored = NaiveDateTime::parse_from_str("2018-11-03 14:21:31", "%Y-%m-%d %H:%M:%S").unwrap();
        let job = JobView::new(
            JobInfo { add_time: Some(stored), child_jobid: Some("2".into()), ..JobInfo::sample(1) },
            Zone::Named(chrono_tz::UTC),
        );
        assert_eq!(
            keys(&job),
            sorted(
                "id jobGroup jobDesc addTime updateTime author alarmEmail scheduleType scheduleConf misfireStrategy \
                 executorRouteStrategy executorHandler executorParam executorBlockStrategy executorTimeout \
                 executorFailRetryCount glueType glueSource glueRemark glueUpdatetime childJobId triggerStatus \
                 triggerLastTime triggerNextTime"
            )
        );
        let json = serde_json::to_value(&job).unwrap();
        assert_eq!(json["addTime"], "2018-11-03T14:21:31.000+00:00");
        assert_eq!(json["childJobId"], "2");
        assert_eq!(json["updateTime"], serde_json::Value::Null);
        assert_eq!(
            keys(LogView::new(JobLog::sample(1), Zone::System)),
            sorted(
                "id jobGroup jobId executorAddress executorHandler executorParam executorShardingParam \
                 executorFailRetryCount triggerTime triggerCode triggerMsg handleTime handleCode handleMsg alarmStatus"
            )
        );
        let group = JobGroup {
            id: 1,
            app_name: "a".into(),
            title: "t".into(),
            address_type: crate::domain::codes::AddressType::Auto,
            address_list: None,
            update_time: None,
        };
        assert_eq!(
            keys(GroupView::new(group, Zone::System)),
            sorted("id appname title addressType addressList updateTime registryList")
        );
    }

    #[test]
    fn registry_list_splits_non_blank_lists_only() {
        let group = JobGroup {
            id: 1,
            app_name: "a".into(),
            title: "t".into(),
            address_type: crate::domain::codes::AddressType::Manual,
            address_list: Some("x,y,".into()),
            update_time: None,
        };
        let view = GroupView::new(group.clone(), Zone::System);
        assert_eq!(view.registry_list, Some(vec!["x".to_string(), "y".to_string()]));
        let blank = GroupView::new(JobGroup { address_list: Some(" ".into()), ..group }, Zone::System);
        assert_eq!(blank.registry_list, None);
    }
}
