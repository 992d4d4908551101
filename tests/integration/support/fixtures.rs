//! Rows the tests create through the admin's own data layer.

use libtest_mimic::Failed;
use xxl_job_admin::storage::{Db, JobGroup, JobInfo};

/// A manual-address group listing `addresses`.
pub async fn manual_group(db: &Db, app_name: &str, addresses: &[&str]) -> Result<i32, Failed> {
    let group = JobGroup {
        id: 0,
        app_name: app_name.to_string(),
        title: "test group".to_string(),
        address_type: 1,
        address_list: Some(addresses.join(",")),
        update_time: None,
    };
    db.insert_group(&group).await.map_err(|e| Failed::from(format!("insert group: {e}")))
}

/// A stopped BEAN job of `group` routed FIRST with no schedule; adjust fields before inserting.
pub fn job(group: i32) -> JobInfo {
    let now = chrono::Local::now().naive_local();
    JobInfo {
        id: 0,
        job_group: group,
        job_desc: "integration test job".into(),
        add_time: Some(now),
        update_time: Some(now),
        author: Some("tests".into()),
        alarm_email: Some(String::new()),
        schedule_type: "NONE".into(),
        schedule_conf: None,
        misfire_strategy: "DO_NOTHING".into(),
        executor_route_strategy: Some("FIRST".into()),
        executor_handler: Some("demoJobHandler".into()),
        executor_param: Some("p".into()),
        executor_block_strategy: Some("SERIAL_EXECUTION".into()),
        executor_timeout: 0,
        executor_fail_retry_count: 0,
        glue_type: "BEAN".into(),
        glue_source: None,
        glue_remark: None,
        glue_updatetime: Some(now),
        child_jobid: None,
        trigger_status: 0,
        trigger_last_time: 0,
        trigger_next_time: 0,
    }
}

pub async fn insert(db: &Db, job: &JobInfo) -> Result<i32, Failed> {
    db.insert_job(job).await.map_err(|e| Failed::from(format!("insert job: {e}")))
}
