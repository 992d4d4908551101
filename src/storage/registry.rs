//! `xxl_job_registry` statements (spec 7.5). Freshness thresholds are computed here from the caller's
//! clock rather than with `DATE_ADD` on the server; both give the same DATETIME bound.

use super::{bind_args, on_pool, placeholders, Arg, Db, JobRegistry, Result};

/// The identity of one registration.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RegistryKey {
    pub registry_group: String,
    pub registry_key: String,
    pub registry_value: String,
}

impl Db {
    /// Refreshes a registration, inserting it when no row matched (found-rows semantics on both backends).
    pub async fn registry_upsert(&self, key: &RegistryKey, now_ms: i64) -> Result<()> {
        let now = self.datetime(now_ms);
        let matched = on_pool!(self, |p| sqlx::query(
            "UPDATE xxl_job_registry SET update_time = ? \
             WHERE registry_group = ? AND registry_key = ? AND registry_value = ?"
        )
        .bind(now)
        .bind(&key.registry_group)
        .bind(&key.registry_key)
        .bind(&key.registry_value)
        .execute(p)
        .await
        .map(|r| r.rows_affected()))?;
        if matched < 1 {
            let inserted = on_pool!(self, |p| sqlx::query(
                "INSERT INTO xxl_job_registry (registry_group, registry_key, registry_value, update_time) \
                 VALUES (?, ?, ?, ?)"
            )
            .bind(&key.registry_group)
            .bind(&key.registry_key)
            .bind(&key.registry_value)
            .bind(now)
            .execute(p)
            .await
            .map(|_| ()));
            match inserted {
                // Another admin inserted the same triple between our UPDATE and INSERT: it is registered.
                Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {}
                other => {
                    other?;
                }
            }
        }
        Ok(())
    }

    pub async fn registry_delete(&self, key: &RegistryKey) -> Result<u64> {
        Ok(on_pool!(self, |p| sqlx::query(
            "DELETE FROM xxl_job_registry WHERE registry_group = ? AND registry_key = ? AND registry_value = ?"
        )
        .bind(&key.registry_group)
        .bind(&key.registry_key)
        .bind(&key.registry_value)
        .execute(p)
        .await
        .map(|r| r.rows_affected()))?)
    }

    /// Ids of registrations not refreshed for more than `timeout_secs`.
    pub async fn find_dead_registry_ids(&self, timeout_secs: i64, now_ms: i64) -> Result<Vec<i32>> {
        let bound = self.datetime(now_ms - timeout_secs * 1000);
        Ok(on_pool!(self, |p| sqlx::query_scalar("SELECT id FROM xxl_job_registry WHERE update_time < ?")
            .bind(bound)
            .fetch_all(p)
            .await)?)
    }

    pub async fn delete_registry_ids(&self, ids: &[i32]) -> Result<u64> {
        if ids.is_empty() {
            return Ok(0);
        }
        let sql = format!("DELETE FROM xxl_job_registry WHERE id IN ({})", placeholders(ids.len()));
        let args: Vec<Arg> = ids.iter().map(|id| Arg::Int((*id).into())).collect();
        Ok(on_pool!(self, |p| bind_args!(sqlx::query(&sql), &args)
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?)
    }

    /// Registrations refreshed within the last `timeout_secs` (strictly).
    pub async fn live_registrations(&self, timeout_secs: i64, now_ms: i64) -> Result<Vec<JobRegistry>> {
        let bound = self.datetime(now_ms - timeout_secs * 1000);
        Ok(on_pool!(self, |p| sqlx::query_as("SELECT * FROM xxl_job_registry WHERE update_time > ?")
            .bind(bound)
            .fetch_all(p)
            .await)?)
    }
}
