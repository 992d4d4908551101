//! `xxl_job_registry` statements (spec 7.5). Freshness thresholds are computed here from the caller's
//! clock rather than with `DATE_ADD` on the server; both give the same DATETIME bound.

use super::{placeholders, Arg, Db, JobRegistry, Result};

/// The identity of one registration.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RegistryKey {
    pub registry_group: String,
    pub registry_key: String,
    pub registry_value: String,
}

impl RegistryKey {
    /// The three columns that identify a registration, in that order.
    fn args(&self) -> [Arg; 3] {
        [Arg::Text(self.registry_group.clone()), Arg::Text(self.registry_key.clone()), Arg::Text(self.registry_value.clone())]
    }
}

impl Db {
    /// Refreshes a registration, inserting it when no row matched (found-rows semantics on every backend).
    pub async fn registry_upsert(&self, key: &RegistryKey, now_ms: i64) -> Result<()> {
        let now = Arg::DateTime(self.datetime(now_ms));
        let [group, key, value] = key.args();
        self.update_or_insert(
            "UPDATE xxl_job_registry SET update_time = ? \
             WHERE registry_group = ? AND registry_key = ? AND registry_value = ?",
            &[now.clone(), group.clone(), key.clone(), value.clone()],
            "INSERT INTO xxl_job_registry (registry_group, registry_key, registry_value, update_time) VALUES (?, ?, ?, ?)",
            &[group, key, value, now],
        )
        .await
    }

    pub async fn registry_delete(&self, key: &RegistryKey) -> Result<u64> {
        self.execute(
            "DELETE FROM xxl_job_registry WHERE registry_group = ? AND registry_key = ? AND registry_value = ?",
            &key.args(),
        )
        .await
    }

    /// Ids of registrations not refreshed for more than `timeout_secs`.
    pub async fn find_dead_registry_ids(&self, timeout_secs: i64, now_ms: i64) -> Result<Vec<i32>> {
        let bound = self.datetime(now_ms - timeout_secs * 1000);
        let ids: Vec<(i32,)> = self.fetch_all("SELECT id FROM xxl_job_registry WHERE update_time < ?", &[Arg::DateTime(bound)]).await?;
        Ok(ids.into_iter().map(|(id,)| id).collect())
    }

    pub async fn delete_registry_ids(&self, ids: &[i32]) -> Result<u64> {
        if ids.is_empty() {
            return Ok(0);
        }
        let sql = format!("DELETE FROM xxl_job_registry WHERE id IN ({})", placeholders(ids.len()));
        let args: Vec<Arg> = ids.iter().map(|id| Arg::Int((*id).into())).collect();
        self.execute(&sql, &args).await
    }

    /// Registrations refreshed within the last `timeout_secs` (strictly).
    pub async fn live_registrations(&self, timeout_secs: i64, now_ms: i64) -> Result<Vec<JobRegistry>> {
        let bound = self.datetime(now_ms - timeout_secs * 1000);
        self.fetch_all("SELECT * FROM xxl_job_registry WHERE update_time > ?", &[Arg::DateTime(bound)]).await
    }
}
