//! `xxl_job_info` statements (2.4.2: XxlJobInfoDao).

use super::sql::{self, Dialect, On};
use super::{contains, restrict_groups, Arg, Db, JobInfo, JobVersion, Result, ScheduleLock};

/// The console's job list filters; zero/negative numbers and empty strings mean "any".
#[derive(Debug, Clone, Default)]
pub struct JobFilter {
    pub job_group: i32,
    pub trigger_status: i32,
    pub job_desc: Option<String>,
    pub executor_handler: Option<String>,
    pub author: Option<String>,
    /// Only jobs of these groups (a restricted user's permitted groups); `None` = no restriction.
    pub permitted_groups: Option<Vec<i32>>,
}

impl JobFilter {
    fn where_clause(&self, db: &Db) -> (String, Vec<Arg>) {
        let mut sql = String::from(" WHERE 1 = 1");
        let mut args = Vec::new();
        if self.job_group > 0 {
            sql.push_str(" AND job_group = ?");
            args.push(Arg::Int(self.job_group.into()));
        }
        if self.trigger_status >= 0 {
            sql.push_str(" AND trigger_status = ?");
            args.push(Arg::Int(self.trigger_status.into()));
        }
        restrict_groups(&mut sql, &mut args, self.permitted_groups.as_deref());
        for (column, value) in [
            ("job_desc", &self.job_desc),
            ("executor_handler", &self.executor_handler),
            ("author", &self.author),
        ] {
            if let Some(pattern) = contains(value) {
                sql.push_str(&db.like(column));
                args.push(Arg::Text(pattern));
            }
        }
        (sql, args)
    }
}

const INSERT_JOB: &str = "INSERT INTO xxl_job_info (add_time, job_group, job_desc, update_time, author, alarm_email, \
     schedule_type, schedule_conf, misfire_strategy, executor_route_strategy, executor_handler, executor_param, \
     executor_block_strategy, executor_timeout, executor_fail_retry_count, glue_type, glue_source, glue_remark, \
     glue_updatetime, child_jobid, trigger_status, trigger_last_time, trigger_next_time) \
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

const UPDATE_JOB: &str = "UPDATE xxl_job_info SET job_group = ?, job_desc = ?, update_time = ?, author = ?, \
     alarm_email = ?, schedule_type = ?, schedule_conf = ?, misfire_strategy = ?, executor_route_strategy = ?, \
     executor_handler = ?, executor_param = ?, executor_block_strategy = ?, executor_timeout = ?, \
     executor_fail_retry_count = ?, glue_type = ?, glue_source = ?, glue_remark = ?, glue_updatetime = ?, \
     child_jobid = ?, trigger_status = ?, trigger_last_time = ?, trigger_next_time = ? WHERE id = ?";

const DELETE_JOB: &str = "DELETE FROM xxl_job_info WHERE id = ?";
const JOBS_OF_GROUP: &str = "SELECT * FROM xxl_job_info WHERE job_group = ? ORDER BY id";

/// The columns both INSERT_JOB and UPDATE_JOB write, in their order.
fn written_columns(job: &JobInfo) -> Vec<Arg> {
    vec![
        Arg::Int(job.job_group.into()),
        Arg::Text(job.job_desc.clone()),
        Arg::OptDateTime(job.update_time),
        Arg::OptText(job.author.clone()),
        Arg::OptText(job.alarm_email.clone()),
        Arg::Text(job.schedule_type.clone()),
        Arg::OptText(job.schedule_conf.clone()),
        Arg::Text(job.misfire_strategy.clone()),
        Arg::OptText(job.executor_route_strategy.clone()),
        Arg::OptText(job.executor_handler.clone()),
        Arg::OptText(job.executor_param.clone()),
        Arg::OptText(job.executor_block_strategy.clone()),
        Arg::Int(job.executor_timeout.into()),
        Arg::Int(job.executor_fail_retry_count.into()),
        Arg::Text(job.glue_type.clone()),
        Arg::OptText(job.glue_source.clone()),
        Arg::OptText(job.glue_remark.clone()),
        Arg::OptDateTime(job.glue_updatetime),
        Arg::OptText(job.child_jobid.clone()),
        Arg::Int(job.trigger_status.code().into()),
        Arg::Int(job.trigger_last_time),
        Arg::Int(job.trigger_next_time),
    ]
}

async fn insert_job(on: On<'_>, dialect: &Dialect, job: &JobInfo) -> Result<i32> {
    let mut args = vec![Arg::OptDateTime(job.add_time)];
    args.extend(written_columns(job));
    Ok(sql::insert_ids(on, dialect, INSERT_JOB, &args, 1).await?[0] as i32)
}

async fn update_job(on: On<'_>, dialect: &Dialect, job: &JobInfo) -> Result<u64> {
    let mut args = written_columns(job);
    args.push(Arg::Int(job.id.into()));
    sql::execute(on, dialect, UPDATE_JOB, &args).await
}

impl Db {
    pub async fn load_job(&self, id: i32) -> Result<Option<JobInfo>> {
        self.fetch_optional("SELECT * FROM xxl_job_info WHERE id = ?", &[Arg::Int(id.into())]).await
    }

    /// One page of jobs, newest id first, and the number of jobs matching the filter.
    pub async fn page_jobs(
        &self,
        filter: &JobFilter,
        offset: i64,
        limit: i64,
    ) -> Result<(Vec<JobInfo>, i64)> {
        let (clause, args) = filter.where_clause(self);
        self.page("xxl_job_info", &clause, &args, "ORDER BY id DESC", offset, limit).await
    }

    /// Inserts every column but `id`; returns the generated id.
    pub async fn insert_job(&self, job: &JobInfo) -> Result<i32> {
        insert_job(On::Pool(&self.pool), &self.dialect, job).await
    }

    /// Writes every column but `id` and `add_time`; returns the rows matched.
    pub async fn update_job(&self, job: &JobInfo) -> Result<u64> {
        update_job(On::Pool(&self.pool), &self.dialect, job).await
    }

    pub async fn delete_job(&self, id: i32) -> Result<u64> {
        self.execute(DELETE_JOB, &[Arg::Int(id.into())]).await
    }

    pub async fn jobs_by_group(&self, job_group: i32) -> Result<Vec<JobInfo>> {
        self.fetch_all(JOBS_OF_GROUP, &[Arg::Int(job_group.into())]).await
    }

    pub async fn count_jobs(&self) -> Result<i64> {
        self.scalar("SELECT COUNT(*) FROM xxl_job_info", &[]).await
    }
}

impl Db {
    /// The jobs with these ids (missing ones are simply absent), in one statement per 1,000 ids.
    pub async fn load_jobs(&self, ids: &[i32]) -> Result<Vec<JobInfo>> {
        self.load_by_ids("SELECT * FROM xxl_job_info", ids).await
    }

    /// The status and last change of these jobs (deleted ones are absent). Ids that fill most of their
    /// range (jobs are usually numbered one after another) are read as that range, one key range scan,
    /// rather than as `IN` lists, whose long lists cost the optimizer more than the rows cost to read.
    pub async fn job_versions(&self, ids: &[i32]) -> Result<Vec<JobVersion>> {
        const SELECT: &str = "SELECT id, trigger_status, update_time FROM xxl_job_info";
        let (Some(&low), Some(&high)) = (ids.iter().min(), ids.iter().max()) else { return Ok(Vec::new()) };
        if ids.len() < DENSE_FROM || i64::from(high) - i64::from(low) + 1 > 2 * ids.len() as i64 {
            return self.load_by_ids(SELECT, ids).await;
        }
        let wanted: std::collections::HashSet<i32> = ids.iter().copied().collect();
        let rows: Vec<JobVersion> = self
            .fetch_all(
                &format!("{SELECT} WHERE id BETWEEN ? AND ?"),
                &[Arg::Int(low.into()), Arg::Int(high.into())],
            )
            .await?;
        Ok(rows.into_iter().filter(|v| wanted.contains(&v.id)).collect())
    }
}

/// Fewer ids than this are read by `IN` list whatever their range.
const DENSE_FROM: usize = 100;

/// The statements of a declarative apply, inside the schedule lock's transaction (one transaction for a
/// whole apply: all of it or nothing).
impl ScheduleLock {
    pub async fn jobs_by_group(&mut self, job_group: i32) -> Result<Vec<JobInfo>> {
        let (tx, dialect) = self.parts();
        sql::fetch_all(On::Tx(tx), dialect, JOBS_OF_GROUP, &[Arg::Int(job_group.into())]).await
    }

    pub async fn insert_job(&mut self, job: &JobInfo) -> Result<i32> {
        let (tx, dialect) = self.parts();
        insert_job(On::Tx(tx), dialect, job).await
    }

    pub async fn update_job(&mut self, job: &JobInfo) -> Result<u64> {
        let (tx, dialect) = self.parts();
        update_job(On::Tx(tx), dialect, job).await
    }

    /// Deletes a job with its logs and GLUE history, as the console's delete does.
    pub async fn delete_job(&mut self, id: i32) -> Result<()> {
        let (tx, dialect) = self.parts();
        for statement in [DELETE_JOB, super::logs::DELETE_LOGS_OF_JOB, super::glue::DELETE_GLUES_OF_JOB] {
            sql::execute(On::Tx(tx), dialect, statement, &[Arg::Int(id.into())]).await?;
        }
        Ok(())
    }
}
