//! What the unit tests of the data layer and its users share.

use super::{Db, TriggerInfo};

/// A fresh SQLite database in memory with the schema and initial rows; `query` is appended to its URL
/// (`?serverTimezone=…`).
pub(crate) async fn memory_db_with(query: &str) -> Db {
    let args = vec![format!("--spring.datasource.url=sqlite::memory:{query}")];
    let loaded = crate::config::Config::load(&args, std::iter::empty(), std::path::Path::new("/")).unwrap();
    super::connect(&loaded.config.datasource).await.unwrap().0
}

/// [`memory_db_with`] in the process's time zone.
pub(crate) async fn memory_db() -> Db {
    memory_db_with("").await
}

/// A trigger result with `code` and `msg`, as a `/run` leaves it.
pub(crate) fn trigger_info(code: i32, msg: &str) -> TriggerInfo {
    TriggerInfo {
        trigger_time_ms: 1_700_000_000_000,
        trigger_code: code,
        trigger_msg: Some(msg.into()),
        executor_address: Some("http://e:9999/".into()),
        executor_handler: Some("h".into()),
        executor_param: None,
        executor_sharding_param: None,
        executor_fail_retry_count: 2,
    }
}
