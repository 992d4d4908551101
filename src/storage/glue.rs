//! `xxl_job_logglue` statements (2.4.2: XxlJobLogGlueDao): the GLUE source history of a job.

use super::sql::{self, Dialect, On};
use super::{Arg, Db, LogGlue, Result, ScheduleLock};

pub(super) const DELETE_GLUES_OF_JOB: &str = "DELETE FROM xxl_job_logglue WHERE job_id = ?";

const GLUES_OF_JOB: &str = "SELECT * FROM xxl_job_logglue WHERE job_id = ? ORDER BY id DESC";

const INSERT_GLUE: &str =
    "INSERT INTO xxl_job_logglue (job_id, glue_type, glue_source, glue_remark, add_time, update_time) \
     VALUES (?, ?, ?, ?, ?, ?)";

// The derived table works around MySQL's refusal of LIMIT inside an IN subquery.
const REMOVE_OLD_GLUES: &str = "DELETE FROM xxl_job_logglue WHERE job_id = ? AND id NOT IN \
     (SELECT id FROM (SELECT id FROM xxl_job_logglue WHERE job_id = ? \
      ORDER BY update_time DESC, id DESC LIMIT ?) t1)";

/// Records a version and keeps only the `keep` most recently updated versions of its job.
async fn save_glue(mut on: On<'_>, dialect: &Dialect, glue: &LogGlue, keep: i64) -> Result<()> {
    let args = [
        Arg::Int(glue.job_id.into()),
        Arg::OptText(glue.glue_type.clone()),
        Arg::OptText(glue.glue_source.clone()),
        Arg::Text(glue.glue_remark.clone()),
        Arg::OptDateTime(glue.add_time),
        Arg::OptDateTime(glue.update_time),
    ];
    sql::insert_ids(on.reborrow(), dialect, INSERT_GLUE, &args, 1).await?;
    let job = Arg::Int(glue.job_id.into());
    sql::execute(on, dialect, REMOVE_OLD_GLUES, &[job.clone(), job, Arg::Int(keep)]).await?;
    Ok(())
}

impl Db {
    /// Records a new version of a job's GLUE source, keeping the `keep` newest versions.
    pub async fn save_glue(&self, glue: &LogGlue, keep: i64) -> Result<()> {
        save_glue(On::Pool(&self.pool), &self.dialect, glue, keep).await
    }

    pub async fn glues_of_job(&self, job_id: i32) -> Result<Vec<LogGlue>> {
        self.fetch_all(GLUES_OF_JOB, &[Arg::Int(job_id.into())]).await
    }

    pub async fn delete_glues_of_job(&self, job_id: i32) -> Result<u64> {
        self.execute(DELETE_GLUES_OF_JOB, &[Arg::Int(job_id.into())]).await
    }
}

impl ScheduleLock {
    /// [`Db::save_glue`] inside the lock's transaction.
    pub async fn save_glue(&mut self, glue: &LogGlue, keep: i64) -> Result<()> {
        let (tx, dialect) = self.parts();
        save_glue(On::Tx(tx), dialect, glue, keep).await
    }

    /// [`Db::glues_of_job`] inside the lock's transaction.
    pub async fn glues_of_job(&mut self, job_id: i32) -> Result<Vec<LogGlue>> {
        let (tx, dialect) = self.parts();
        sql::fetch_all(On::Tx(tx), dialect, GLUES_OF_JOB, &[Arg::Int(job_id.into())]).await
    }

    /// [`Db::delete_glues_of_job`] inside the lock's transaction.
    pub async fn delete_glues_of_job(&mut self, job_id: i32) -> Result<u64> {
        let (tx, dialect) = self.parts();
        sql::execute(On::Tx(tx), dialect, DELETE_GLUES_OF_JOB, &[Arg::Int(job_id.into())]).await
    }
}
