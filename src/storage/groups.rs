//! `xxl_job_group` statements (2.4.2: XxlJobGroupDao).

use super::sql::{self, On};
use super::{contains, Arg, Db, JobGroup, Result, ScheduleLock};
use crate::domain::codes::AddressType;

const GROUP_ORDER: &str = " ORDER BY app_name, title, id ASC";

/// The columns both INSERT and UPDATE write, in their order.
fn written_columns(group: &JobGroup) -> Vec<Arg> {
    vec![
        Arg::Text(group.app_name.clone()),
        Arg::Text(group.title.clone()),
        Arg::Int(group.address_type.code().into()),
        Arg::OptText(group.address_list.clone()),
        Arg::OptDateTime(group.update_time),
    ]
}

const INSERT_GROUP: &str =
    "INSERT INTO xxl_job_group (app_name, title, address_type, address_list, update_time) VALUES (?, ?, ?, ?, ?)";
const UPDATE_GROUP: &str =
    "UPDATE xxl_job_group SET app_name = ?, title = ?, address_type = ?, address_list = ?, update_time = ? WHERE id = ?";

fn update_args(group: &JobGroup) -> Vec<Arg> {
    let mut args = written_columns(group);
    args.push(Arg::Int(group.id.into()));
    args
}

impl Db {
    pub async fn all_groups(&self) -> Result<Vec<JobGroup>> {
        self.fetch_all(&format!("SELECT * FROM xxl_job_group{GROUP_ORDER}"), &[]).await
    }

    pub async fn groups_by_address_type(&self, address_type: AddressType) -> Result<Vec<JobGroup>> {
        let sql = format!("SELECT * FROM xxl_job_group WHERE address_type = ?{GROUP_ORDER}");
        self.fetch_all(&sql, &[Arg::Int(address_type.code().into())]).await
    }

    /// Every group's AppName.
    pub async fn group_app_names(&self) -> Result<Vec<String>> {
        let rows: Vec<(String,)> = self.fetch_all("SELECT app_name FROM xxl_job_group", &[]).await?;
        Ok(rows.into_iter().map(|(app_name,)| app_name).collect())
    }

    /// Whether a group has exactly this AppName (MySQL's collation alone would also match other cases,
    /// which the registry monitor does not).
    pub async fn group_app_name_exists(&self, app_name: &str) -> Result<bool> {
        let rows: Vec<(String,)> = self
            .fetch_all(
                "SELECT app_name FROM xxl_job_group WHERE app_name = ?",
                &[Arg::Text(app_name.to_string())],
            )
            .await?;
        Ok(rows.iter().any(|(found,)| found == app_name))
    }

    pub async fn load_group(&self, id: i32) -> Result<Option<JobGroup>> {
        self.fetch_optional("SELECT * FROM xxl_job_group WHERE id = ?", &[Arg::Int(id.into())]).await
    }

    pub async fn insert_group(&self, group: &JobGroup) -> Result<i32> {
        Ok(self.insert_id(INSERT_GROUP, &written_columns(group)).await? as i32)
    }

    /// Full-row update; returns the rows matched.
    pub async fn update_group(&self, group: &JobGroup) -> Result<u64> {
        self.execute(UPDATE_GROUP, &update_args(group)).await
    }

    /// Writes only the address list of a group, so a concurrent console edit of its title survives the
    /// registry monitor (2.4.2 rewrites the whole row from a stale copy).
    pub async fn update_group_addresses(
        &self,
        id: i32,
        address_list: Option<&str>,
        update_time_ms: i64,
    ) -> Result<u64> {
        let update_time = self.datetime(update_time_ms);
        let args =
            [Arg::OptText(address_list.map(str::to_string)), Arg::DateTime(update_time), Arg::Int(id.into())];
        self.execute("UPDATE xxl_job_group SET address_list = ?, update_time = ? WHERE id = ?", &args).await
    }

    pub async fn delete_group(&self, id: i32) -> Result<u64> {
        self.execute("DELETE FROM xxl_job_group WHERE id = ?", &[Arg::Int(id.into())]).await
    }

    /// One page of groups filtered by AppName and title (contains), and the number matching.
    pub async fn page_groups(
        &self,
        app_name: &Option<String>,
        title: &Option<String>,
        offset: i64,
        limit: i64,
    ) -> Result<(Vec<JobGroup>, i64)> {
        let mut clause = String::from(" WHERE 1 = 1");
        let mut args = Vec::new();
        for (column, value) in [("app_name", app_name), ("title", title)] {
            if let Some(pattern) = contains(value) {
                clause.push_str(&self.like(column));
                args.push(Arg::Text(pattern));
            }
        }
        self.page("xxl_job_group", &clause, &args, GROUP_ORDER.trim_start(), offset, limit).await
    }
}

impl Db {
    /// The groups with these ids (missing ones are simply absent).
    pub async fn load_groups(&self, ids: &[i32]) -> Result<Vec<JobGroup>> {
        self.load_by_ids("SELECT * FROM xxl_job_group", ids).await
    }
}

/// The statements of a declarative apply, inside the schedule lock's transaction.
impl ScheduleLock {
    pub async fn all_groups(&mut self) -> Result<Vec<JobGroup>> {
        let (tx, dialect) = self.parts();
        sql::fetch_all(On::Tx(tx), dialect, &format!("SELECT * FROM xxl_job_group{GROUP_ORDER}"), &[]).await
    }

    pub async fn insert_group(&mut self, group: &JobGroup) -> Result<i32> {
        let (tx, dialect) = self.parts();
        Ok(sql::insert_ids(On::Tx(tx), dialect, INSERT_GROUP, &written_columns(group), 1).await?[0] as i32)
    }

    pub async fn update_group(&mut self, group: &JobGroup) -> Result<u64> {
        let (tx, dialect) = self.parts();
        sql::execute(On::Tx(tx), dialect, UPDATE_GROUP, &update_args(group)).await
    }
}
