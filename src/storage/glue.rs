//! `xxl_job_logglue` statements (spec 7.7): the GLUE source history of a job.

use super::{on_pool, Arg, Db, InsertId, LogGlue, Result};

impl Db {
    pub async fn insert_glue(&self, glue: &LogGlue) -> Result<i32> {
        let id = on_pool!(self, |p| sqlx::query(
            "INSERT INTO xxl_job_logglue (job_id, glue_type, glue_source, glue_remark, add_time, update_time) \
             VALUES (?, ?, ?, ?, ?, ?)"
        )
        .bind(glue.job_id)
        .bind(&glue.glue_type)
        .bind(&glue.glue_source)
        .bind(&glue.glue_remark)
        .bind(glue.add_time)
        .bind(glue.update_time)
        .execute(p)
        .await
        .map(|r| r.insert_id()))?;
        Ok(id as i32)
    }

    pub async fn glues_of_job(&self, job_id: i32) -> Result<Vec<LogGlue>> {
        Ok(on_pool!(self, |p| sqlx::query_as("SELECT * FROM xxl_job_logglue WHERE job_id = ? ORDER BY id DESC")
            .bind(job_id)
            .fetch_all(p)
            .await)?)
    }

    /// Keeps only the `keep` most recently updated versions of a job.
    pub async fn remove_old_glues(&self, job_id: i32, keep: i64) -> Result<u64> {
        Ok(on_pool!(self, |p| sqlx::query(
            "DELETE FROM xxl_job_logglue WHERE job_id = ? AND id NOT IN \
             (SELECT id FROM (SELECT id FROM xxl_job_logglue WHERE job_id = ? \
              ORDER BY update_time DESC, id DESC LIMIT 0, ?) t1)"
        )
        .bind(job_id)
        .bind(job_id)
        .bind(keep)
        .execute(p)
        .await
        .map(|r| r.rows_affected()))?)
    }

    pub async fn delete_glues_of_job(&self, job_id: i32) -> Result<u64> {
        self.execute("DELETE FROM xxl_job_logglue WHERE job_id = ?", &[Arg::Int(job_id.into())]).await
    }
}
