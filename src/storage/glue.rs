//! `xxl_job_logglue` statements (spec 7.7): the GLUE source history of a job.

use super::{Arg, Db, LogGlue, Result};

impl Db {
    pub async fn insert_glue(&self, glue: &LogGlue) -> Result<i32> {
        let args = [
            Arg::Int(glue.job_id.into()),
            Arg::OptText(glue.glue_type.clone()),
            Arg::OptText(glue.glue_source.clone()),
            Arg::Text(glue.glue_remark.clone()),
            Arg::OptDateTime(glue.add_time),
            Arg::OptDateTime(glue.update_time),
        ];
        let id = self
            .insert_id(
                "INSERT INTO xxl_job_logglue (job_id, glue_type, glue_source, glue_remark, add_time, update_time) \
                 VALUES (?, ?, ?, ?, ?, ?)",
                &args,
            )
            .await?;
        Ok(id as i32)
    }

    pub async fn glues_of_job(&self, job_id: i32) -> Result<Vec<LogGlue>> {
        self.fetch_all("SELECT * FROM xxl_job_logglue WHERE job_id = ? ORDER BY id DESC", &[Arg::Int(job_id.into())]).await
    }

    /// Keeps only the `keep` most recently updated versions of a job.
    pub async fn remove_old_glues(&self, job_id: i32, keep: i64) -> Result<u64> {
        // The derived table works around MySQL's refusal of LIMIT inside an IN subquery.
        self.execute(
            "DELETE FROM xxl_job_logglue WHERE job_id = ? AND id NOT IN \
             (SELECT id FROM (SELECT id FROM xxl_job_logglue WHERE job_id = ? \
              ORDER BY update_time DESC, id DESC LIMIT ?) t1)",
            &[Arg::Int(job_id.into()), Arg::Int(job_id.into()), Arg::Int(keep)],
        )
        .await
    }

    pub async fn delete_glues_of_job(&self, job_id: i32) -> Result<u64> {
        self.execute("DELETE FROM xxl_job_logglue WHERE job_id = ?", &[Arg::Int(job_id.into())]).await
    }
}
