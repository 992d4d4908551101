//! `xxl_job_registry` statements (2.4.2: XxlJobRegistryDao). Freshness thresholds are computed here from the
//! caller's clock rather than with `DATE_ADD` on the server; both give the same DATETIME bound.

use super::{placeholders, Arg, Db, JobRegistry, Result};

/// The identity of one registration.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RegistryKey {
    pub registry_group: String,
    pub registry_key: String,
    pub registry_value: String,
}

/// What became of a registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registered {
    Refreshed,
    Added,
    /// Not stored: its AppName already has as many registrations as allowed.
    Full,
}

impl RegistryKey {
    /// The three columns that identify a registration, in that order.
    fn args(&self) -> [Arg; 3] {
        [
            Arg::Text(self.registry_group.clone()),
            Arg::Text(self.registry_key.clone()),
            Arg::Text(self.registry_value.clone()),
        ]
    }
}

impl Db {
    /// Refreshes a registration, or inserts it while its AppName has fewer than `cap` registrations. The
    /// count and the insert are not atomic: concurrent writers may overshoot the cap by a few rows.
    pub async fn registry_upsert(&self, key: &RegistryKey, now_ms: i64, cap: u32) -> Result<Registered> {
        let now = Arg::DateTime(self.datetime(now_ms));
        let [group, app, value] = key.args();
        let refreshed = self
            .execute(
                "UPDATE xxl_job_registry SET update_time = ? \
                 WHERE registry_group = ? AND registry_key = ? AND registry_value = ?",
                &[now.clone(), group.clone(), app.clone(), value.clone()],
            )
            .await?;
        if refreshed > 0 {
            return Ok(Registered::Refreshed);
        }
        let count = self
            .scalar(
                "SELECT COUNT(*) FROM xxl_job_registry WHERE registry_group = ? AND registry_key = ?",
                &[group.clone(), app.clone()],
            )
            .await?;
        if count >= i64::from(cap) {
            return Ok(Registered::Full);
        }
        self.insert_once(
            "INSERT INTO xxl_job_registry (registry_group, registry_key, registry_value, update_time) VALUES (?, ?, ?, ?)",
            &[group, app, value, now],
        )
        .await?;
        Ok(Registered::Added)
    }

    /// Whether this very registration is stored (a point read of the unique index `i_g_k_v`).
    pub async fn registration_exists(&self, key: &RegistryKey) -> Result<bool> {
        let sql = "SELECT COUNT(*) FROM xxl_job_registry \
                   WHERE registry_group = ? AND registry_key = ? AND registry_value = ?";
        Ok(self.scalar(sql, &key.args()).await? > 0)
    }

    /// The distinct `registry_group`, `registry_key` pairs refreshed within the last `timeout_secs`.
    pub async fn live_registry_apps(&self, timeout_secs: i64, now_ms: i64) -> Result<Vec<(String, String)>> {
        let bound = self.datetime(now_ms - timeout_secs * 1000);
        self.fetch_all(
            "SELECT DISTINCT registry_group, registry_key FROM xxl_job_registry WHERE update_time > ?",
            &[Arg::DateTime(bound)],
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
        let ids: Vec<(i32,)> = self
            .fetch_all("SELECT id FROM xxl_job_registry WHERE update_time < ?", &[Arg::DateTime(bound)])
            .await?;
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
