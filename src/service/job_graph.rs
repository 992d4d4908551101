//! The job dependency graph (issue 47): which job starts which through 2.4's `child_jobid`, with each
//! job's last run. It reads only the 2.4 tables, so it works on a database without workflows.

use super::{LoginUser, ServiceContext, ServiceError};
use crate::domain::java_split;
use crate::storage::{JobInfo, JobLog};
use std::collections::{BTreeMap, BTreeSet};

/// The jobs drawn, the links between them (parent, child) and each job's newest log row.
pub struct JobGraph {
    pub jobs: Vec<JobInfo>,
    pub links: Vec<(i32, i32)>,
    pub last_logs: Vec<JobLog>,
}

/// The jobs of `job_group` (0: of every group the user may see), with the jobs of other permitted
/// groups they start, so that a chain leaving the group stays visible.
pub async fn graph(
    state: &ServiceContext,
    user: &LoginUser,
    job_group: i32,
) -> Result<JobGraph, ServiceError> {
    let groups: Vec<i32> = if job_group > 0 {
        user.ensure_access(state, job_group)?;
        vec![job_group]
    } else {
        match user.permitted_groups() {
            Some(groups) => groups,
            None => state.db.all_groups().await?.into_iter().map(|g| g.id).collect(),
        }
    };
    let mut jobs: BTreeMap<i32, JobInfo> = BTreeMap::new();
    for group in groups {
        jobs.extend(state.db.jobs_by_group(group).await?.into_iter().map(|j| (j.id, j)));
    }
    let outside: Vec<i32> = jobs
        .values()
        .flat_map(children)
        .filter(|c| !jobs.contains_key(c))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    for job in state.db.load_jobs(&outside).await? {
        if user.can_access(job.job_group) {
            jobs.insert(job.id, job);
        }
    }
    let links = jobs
        .values()
        .flat_map(|job| children(job).into_iter().filter(|c| jobs.contains_key(c)).map(move |c| (job.id, c)))
        .collect();
    let ids: Vec<i32> = jobs.keys().copied().collect();
    let last_logs = state.db.last_logs_of_jobs(&ids).await?;
    Ok(JobGraph { jobs: jobs.into_values().collect(), links, last_logs })
}

/// The child job ids a job names, as the trigger reads them (unparsable entries are ignored there too).
fn children(job: &JobInfo) -> Vec<i32> {
    job.child_jobid
        .as_deref()
        .map(java_split)
        .unwrap_or_default()
        .iter()
        .filter_map(|c| c.trim().parse().ok())
        .collect()
}
