//! Rows the tests create through the admin's own data layer.

use libtest_mimic::Failed;
use xxl_job_admin::domain::codes::{AddressType, TriggerStatus};
use xxl_job_admin::storage::{Db, JobGroup, JobInfo};

/// A manual-address group listing `addresses`.
pub async fn manual_group(db: &Db, app_name: &str, addresses: &[&str]) -> Result<i32, Failed> {
    let group = JobGroup {
        id: 0,
        app_name: app_name.to_string(),
        title: "test group".to_string(),
        address_type: AddressType::Manual,
        address_list: Some(addresses.join(",")),
        update_time: None,
    };
    db.insert_group(&group).await.map_err(|e| Failed::from(format!("insert group: {e}")))
}

/// A running job of `group` firing every second, from the first whole second at least `after_secs` away.
pub fn every_second_job(group: i32, after_secs: i64) -> JobInfo {
    let mut every_second = job(group);
    every_second.schedule_type = "CRON".into();
    every_second.schedule_conf = Some("* * * * * ?".into());
    every_second.trigger_status = TriggerStatus::Running;
    every_second.trigger_next_time = (chrono::Utc::now().timestamp() + after_secs) * 1000;
    every_second
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
        trigger_status: TriggerStatus::Stopped,
        trigger_last_time: 0,
        trigger_next_time: 0,
    }
}

pub async fn insert(db: &Db, job: &JobInfo) -> Result<i32, Failed> {
    db.insert_job(job).await.map_err(|e| Failed::from(format!("insert job: {e}")))
}

/// A log row of `job` in `group` triggered at `trigger_time_ms`, with the given codes and address.
pub async fn log(
    db: &Db,
    group: i32,
    job: i32,
    trigger_time_ms: i64,
    trigger_code: i32,
    handle_code: i32,
    address: &str,
) -> Result<i64, Failed> {
    let id = db
        .insert_log(group, job, trigger_time_ms)
        .await
        .map_err(|e| Failed::from(format!("insert log: {e}")))?;
    let info = xxl_job_admin::storage::TriggerInfo {
        trigger_time_ms,
        trigger_code,
        trigger_msg: Some(format!("trigger msg of {id}").into()),
        executor_address: Some(address.to_string()),
        executor_handler: Some("demoJobHandler".into()),
        executor_param: Some(format!("param {id}")),
        executor_sharding_param: None,
        executor_fail_retry_count: 0,
    };
    db.update_trigger_info(id, &info).await.map_err(|e| Failed::from(format!("trigger info: {e}")))?;
    if handle_code != 0 {
        db.update_handle_info(id, trigger_time_ms + 1000, handle_code, &format!("handle msg of {id}"), false)
            .await
            .map_err(|e| Failed::from(format!("handle info: {e}")))?;
    }
    Ok(id)
}

/// A wall-clock time of the test process's zone (the zone the console reads typed dates in).
pub fn local(text: &str) -> chrono::NaiveDateTime {
    chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S").expect("a yyyy-MM-dd HH:mm:ss literal")
}

/// The instant of a local wall-clock time, in epoch ms.
pub fn local_ms(time: chrono::NaiveDateTime) -> i64 {
    use chrono::TimeZone;
    chrono::Local.from_local_datetime(&time).earliest().expect("an existing local time").timestamp_millis()
}

/// The console's JSON form of an instant: ISO-8601 in UTC with milliseconds.
pub fn json_date(ms: i64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms)
        .expect("a valid instant")
        .format("%Y-%m-%dT%H:%M:%S%.3f+00:00")
        .to_string()
}

/// A manual-address group with its own title.
pub async fn titled_group(db: &Db, app_name: &str, title: &str, addresses: &[&str]) -> Result<i32, Failed> {
    let id = manual_group(db, app_name, addresses).await?;
    let mut group =
        db.load_group(id).await.map_err(|e| Failed::from(format!("load group: {e}")))?.ok_or("group")?;
    group.title = title.to_string();
    db.update_group(&group).await.map_err(|e| Failed::from(format!("update group: {e}")))?;
    Ok(id)
}

/// The admin's data layer on `url` (user root unless the URL names one), as an admin would open it.
pub async fn db_at(url: &str) -> Result<Db, Failed> {
    let args = [format!("--spring.datasource.url={url}"), "--spring.datasource.username=root".to_string()];
    let cwd = tempfile::tempdir().map_err(|e| Failed::from(e.to_string()))?;
    let loaded = xxl_job_admin::config::Config::load(&args, Vec::<(String, String)>::new(), cwd.path())
        .map_err(|e| Failed::from(format!("config of {url}: {e}")))?;
    let (db, _) = xxl_job_admin::storage::connect(&loaded.config.datasource)
        .await
        .map_err(|e| Failed::from(format!("connect to {url}: {e}")))?;
    Ok(db)
}
