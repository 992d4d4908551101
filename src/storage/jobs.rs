//! `xxl_job_info` statements (spec 7.2).

use super::{bind_args, contains, on_pool, restrict_groups, Arg, Db, InsertId, JobInfo, Result};

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
    fn where_clause(&self) -> (String, Vec<Arg>) {
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
        for (column, value) in
            [("job_desc", &self.job_desc), ("executor_handler", &self.executor_handler), ("author", &self.author)]
        {
            if let Some(pattern) = contains(value) {
                sql.push_str(&format!(" AND {column} LIKE ?"));
                args.push(Arg::Text(pattern));
            }
        }
        (sql, args)
    }
}

const INSERT_JOB: &str = "INSERT INTO xxl_job_info (job_group, job_desc, add_time, update_time, author, alarm_email, \
     schedule_type, schedule_conf, misfire_strategy, executor_route_strategy, executor_handler, executor_param, \
     executor_block_strategy, executor_timeout, executor_fail_retry_count, glue_type, glue_source, glue_remark, \
     glue_updatetime, child_jobid, trigger_status, trigger_last_time, trigger_next_time) \
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

const UPDATE_JOB: &str = "UPDATE xxl_job_info SET job_group = ?, job_desc = ?, update_time = ?, author = ?, \
     alarm_email = ?, schedule_type = ?, schedule_conf = ?, misfire_strategy = ?, executor_route_strategy = ?, \
     executor_handler = ?, executor_param = ?, executor_block_strategy = ?, executor_timeout = ?, \
     executor_fail_retry_count = ?, glue_type = ?, glue_source = ?, glue_remark = ?, glue_updatetime = ?, \
     child_jobid = ?, trigger_status = ?, trigger_last_time = ?, trigger_next_time = ? WHERE id = ?";

impl Db {
    pub async fn load_job(&self, id: i32) -> Result<Option<JobInfo>> {
        Ok(on_pool!(self, |p| sqlx::query_as("SELECT * FROM xxl_job_info WHERE id = ?")
            .bind(id)
            .fetch_optional(p)
            .await)?)
    }

    /// One page of jobs, newest id first, and the number of jobs matching the filter.
    pub async fn page_jobs(&self, filter: &JobFilter, offset: i64, limit: i64) -> Result<(Vec<JobInfo>, i64)> {
        let (clause, args) = filter.where_clause();
        let rows_sql = format!("SELECT * FROM xxl_job_info{clause} ORDER BY id DESC LIMIT ?, ?");
        let count_sql = format!("SELECT COUNT(*) FROM xxl_job_info{clause}");
        let rows = on_pool!(self, |p| bind_args!(sqlx::query_as(&rows_sql), &args)
            .bind(offset)
            .bind(limit)
            .fetch_all(p)
            .await)?;
        let total = on_pool!(self, |p| bind_args!(sqlx::query_scalar(&count_sql), &args).fetch_one(p).await)?;
        Ok((rows, total))
    }

    /// Inserts every column but `id`; returns the generated id.
    pub async fn insert_job(&self, job: &JobInfo) -> Result<i32> {
        let result = on_pool!(self, |p| sqlx::query(INSERT_JOB)
            .bind(job.job_group)
            .bind(&job.job_desc)
            .bind(job.add_time)
            .bind(job.update_time)
            .bind(&job.author)
            .bind(&job.alarm_email)
            .bind(&job.schedule_type)
            .bind(&job.schedule_conf)
            .bind(&job.misfire_strategy)
            .bind(&job.executor_route_strategy)
            .bind(&job.executor_handler)
            .bind(&job.executor_param)
            .bind(&job.executor_block_strategy)
            .bind(job.executor_timeout)
            .bind(job.executor_fail_retry_count)
            .bind(&job.glue_type)
            .bind(&job.glue_source)
            .bind(&job.glue_remark)
            .bind(job.glue_updatetime)
            .bind(&job.child_jobid)
            .bind(job.trigger_status)
            .bind(job.trigger_last_time)
            .bind(job.trigger_next_time)
            .execute(p)
            .await
            .map(|r| r.insert_id()))?;
        Ok(result as i32)
    }

    /// Writes every column but `id` and `add_time`; returns the rows matched.
    pub async fn update_job(&self, job: &JobInfo) -> Result<u64> {
        Ok(on_pool!(self, |p| sqlx::query(UPDATE_JOB)
            .bind(job.job_group)
            .bind(&job.job_desc)
            .bind(job.update_time)
            .bind(&job.author)
            .bind(&job.alarm_email)
            .bind(&job.schedule_type)
            .bind(&job.schedule_conf)
            .bind(&job.misfire_strategy)
            .bind(&job.executor_route_strategy)
            .bind(&job.executor_handler)
            .bind(&job.executor_param)
            .bind(&job.executor_block_strategy)
            .bind(job.executor_timeout)
            .bind(job.executor_fail_retry_count)
            .bind(&job.glue_type)
            .bind(&job.glue_source)
            .bind(&job.glue_remark)
            .bind(job.glue_updatetime)
            .bind(&job.child_jobid)
            .bind(job.trigger_status)
            .bind(job.trigger_last_time)
            .bind(job.trigger_next_time)
            .bind(job.id)
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?)
    }

    pub async fn delete_job(&self, id: i32) -> Result<u64> {
        Ok(on_pool!(self, |p| sqlx::query("DELETE FROM xxl_job_info WHERE id = ?")
            .bind(id)
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?)
    }

    pub async fn jobs_by_group(&self, job_group: i32) -> Result<Vec<JobInfo>> {
        Ok(on_pool!(self, |p| sqlx::query_as("SELECT * FROM xxl_job_info WHERE job_group = ?")
            .bind(job_group)
            .fetch_all(p)
            .await)?)
    }

    pub async fn count_jobs(&self) -> Result<i64> {
        Ok(on_pool!(self, |p| sqlx::query_scalar("SELECT COUNT(*) FROM xxl_job_info").fetch_one(p).await)?)
    }
}

/// Ids per `IN (…)` list of the batched loads, well under both backends' placeholder limits.
const LOAD_BATCH: usize = 500;

impl Db {
    /// The jobs with these ids (missing ones are simply absent), in one statement per 500 ids.
    pub async fn load_jobs(&self, ids: &[i32]) -> Result<Vec<JobInfo>> {
        let mut jobs = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(LOAD_BATCH) {
            let sql = format!("SELECT * FROM xxl_job_info WHERE id IN ({})", super::placeholders(chunk.len()));
            let rows: Vec<JobInfo> = on_pool!(self, |p| {
                let mut query = sqlx::query_as(&sql);
                for id in chunk {
                    query = query.bind(*id);
                }
                query.fetch_all(p).await
            })?;
            jobs.extend(rows);
        }
        Ok(jobs)
    }
}
