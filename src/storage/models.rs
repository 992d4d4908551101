//! Rows of the eight xxl-job tables, field for column. DATETIME columns stay wall-clock values
//! ([`chrono::NaiveDateTime`]); [`crate::time::Zone`] turns them into instants. TINYINT columns are
//! `i16`: PostgreSQL has no one-byte integer (its ports use int2, which sqlx does not decode as `i8`), and
//! MySQL and SQLite decode a TINYINT as any wider integer. The console's JSON (2.4.2's `XxlJob*` models) is
//! these rows with Java's field names; their dates are left to the console's views, which need the zone. The
//! coded TINYINT columns decode as `i16` into their types (`crate::domain::codes`), on every backend.

pub use crate::domain::codes::Role;
use crate::domain::codes::{AddressType, AlarmStatus, TriggerStatus};
use crate::domain::glue::GlueType;
use chrono::NaiveDateTime;

/// Decodes a code type wherever `i16` decodes (MySQL/MariaDB, SQLite, PostgreSQL), keeping any code.
macro_rules! decoded_as_i16 {
    ($($code:ty),+) => {$(
        impl<DB: sqlx::Database> sqlx::Type<DB> for $code
        where
            i16: sqlx::Type<DB>,
        {
            fn type_info() -> DB::TypeInfo {
                <i16 as sqlx::Type<DB>>::type_info()
            }

            fn compatible(ty: &DB::TypeInfo) -> bool {
                <i16 as sqlx::Type<DB>>::compatible(ty)
            }
        }

        impl<'r, DB: sqlx::Database> sqlx::Decode<'r, DB> for $code
        where
            i16: sqlx::Decode<'r, DB>,
        {
            fn decode(value: DB::ValueRef<'r>) -> Result<$code, sqlx::error::BoxDynError> {
                <i16 as sqlx::Decode<'r, DB>>::decode(value).map(<$code>::from)
            }
        }
    )+};
}

decoded_as_i16!(AddressType, TriggerStatus, AlarmStatus, Role);

/// `xxl_job_info`
#[derive(Debug, Clone, PartialEq, sqlx::FromRow, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobInfo {
    pub id: i32,
    pub job_group: i32,
    pub job_desc: String,
    #[serde(skip)]
    pub add_time: Option<NaiveDateTime>,
    #[serde(skip)]
    pub update_time: Option<NaiveDateTime>,
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
    #[serde(skip)]
    pub glue_updatetime: Option<NaiveDateTime>,
    #[serde(rename = "childJobId")]
    pub child_jobid: Option<String>,
    #[schema(value_type = i16)]
    pub trigger_status: TriggerStatus,
    pub trigger_last_time: i64,
    pub trigger_next_time: i64,
}

/// What a schedule pass reads of a job (2.4.2: XxlJobInfoDao.scheduleJobQuery, without the columns it
/// never uses).
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct ScheduledJob {
    pub id: i32,
    pub job_group: i32,
    pub schedule_type: String,
    pub schedule_conf: Option<String>,
    pub misfire_strategy: String,
    pub trigger_status: TriggerStatus,
    pub trigger_last_time: i64,
    pub trigger_next_time: i64,
}

/// What the leader checks of a job just before sending its planned fires: whether the console stopped
/// or changed it since.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct JobVersion {
    pub id: i32,
    pub trigger_status: TriggerStatus,
    pub update_time: Option<NaiveDateTime>,
}

/// `xxl_job_log`
#[derive(Debug, Clone, PartialEq, sqlx::FromRow, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobLog {
    pub id: i64,
    pub job_group: i32,
    pub job_id: i32,
    pub executor_address: Option<String>,
    pub executor_handler: Option<String>,
    pub executor_param: Option<String>,
    pub executor_sharding_param: Option<String>,
    pub executor_fail_retry_count: i32,
    #[serde(skip)]
    pub trigger_time: Option<NaiveDateTime>,
    pub trigger_code: i32,
    pub trigger_msg: Option<String>,
    #[serde(skip)]
    pub handle_time: Option<NaiveDateTime>,
    pub handle_code: i32,
    pub handle_msg: Option<String>,
    #[schema(value_type = i16)]
    pub alarm_status: AlarmStatus,
}

impl JobInfo {
    /// A stopped BEAN job of group 1 with schedule NONE and every optional column empty, for unit tests
    /// and the console's test alarm to adjust with struct update syntax.
    pub fn sample(id: i32) -> JobInfo {
        JobInfo {
            id,
            job_group: 1,
            job_desc: "test".into(),
            add_time: None,
            update_time: None,
            author: None,
            alarm_email: None,
            schedule_type: "NONE".into(),
            schedule_conf: None,
            misfire_strategy: "DO_NOTHING".into(),
            executor_route_strategy: None,
            executor_handler: None,
            executor_param: None,
            executor_block_strategy: None,
            executor_timeout: 0,
            executor_fail_retry_count: 0,
            glue_type: GlueType::Bean.name().into(),
            glue_source: None,
            glue_remark: None,
            glue_updatetime: None,
            child_jobid: None,
            trigger_status: TriggerStatus::Stopped,
            trigger_last_time: 0,
            trigger_next_time: 0,
        }
    }
}

impl JobLog {
    /// A log of job 1 in group 1 with no trigger or handle result yet, for unit tests and the console's
    /// test alarm to adjust.
    pub fn sample(id: i64) -> JobLog {
        JobLog {
            id,
            job_group: 1,
            job_id: 1,
            executor_address: None,
            executor_handler: None,
            executor_param: None,
            executor_sharding_param: None,
            executor_fail_retry_count: 0,
            trigger_time: None,
            trigger_code: 0,
            trigger_msg: None,
            handle_time: None,
            handle_code: 0,
            handle_msg: None,
            alarm_status: AlarmStatus::New,
        }
    }
}

/// `xxl_job_group`
#[derive(Debug, Clone, PartialEq, sqlx::FromRow, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobGroup {
    pub id: i32,
    #[serde(rename = "appname")]
    pub app_name: String,
    pub title: String,
    #[schema(value_type = i16)]
    pub address_type: AddressType,
    pub address_list: Option<String>,
    #[serde(skip)]
    pub update_time: Option<NaiveDateTime>,
}

/// `xxl_job_registry`
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct JobRegistry {
    pub id: i32,
    pub registry_group: String,
    pub registry_key: String,
    pub registry_value: String,
    pub update_time: Option<NaiveDateTime>,
}

/// `xxl_job_user`
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct JobUser {
    pub id: i32,
    pub username: String,
    pub password: String,
    pub role: Role,
    pub permission: Option<String>,
}

/// `xxl_job_logglue`
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct LogGlue {
    pub id: i32,
    pub job_id: i32,
    pub glue_type: Option<String>,
    pub glue_source: Option<String>,
    pub glue_remark: String,
    pub add_time: Option<NaiveDateTime>,
    pub update_time: Option<NaiveDateTime>,
}

impl LogGlue {
    /// The version a job's GLUE source now is, recorded at `now` (what the GLUE IDE saves).
    pub fn of_job(job: &JobInfo, now: NaiveDateTime) -> LogGlue {
        LogGlue {
            id: 0,
            job_id: job.id,
            glue_type: Some(job.glue_type.clone()),
            glue_source: job.glue_source.clone(),
            glue_remark: job.glue_remark.clone().unwrap_or_default(),
            add_time: Some(now),
            update_time: Some(now),
        }
    }
}

/// `xxl_job_log_report`
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct LogReport {
    pub id: i32,
    pub trigger_day: Option<NaiveDateTime>,
    pub running_count: i32,
    pub suc_count: i32,
    pub fail_count: i32,
    pub update_time: Option<NaiveDateTime>,
}

/// The three counters of one day, as computed from the log table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct DayCounts {
    pub total: i64,
    pub running: i64,
    pub success: i64,
}

impl DayCounts {
    pub fn fail(&self) -> i64 {
        self.total - self.running - self.success
    }

    pub fn add(&mut self, other: &DayCounts) {
        self.total += other.total;
        self.running += other.running;
        self.success += other.success;
    }
}

/// Totals over the whole report table, for the dashboard.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct ReportTotals {
    pub running: i64,
    pub success: i64,
    pub fail: i64,
}
