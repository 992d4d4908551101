//! `xxl_job_user` statements (spec 7.8).

use super::{contains, on_pool, Arg, Db, InsertId, JobUser, Result};

impl Db {
    pub async fn load_user_by_name(&self, username: &str) -> Result<Option<JobUser>> {
        Ok(on_pool!(self, |p| sqlx::query_as("SELECT * FROM xxl_job_user WHERE username = ?")
            .bind(username)
            .fetch_optional(p)
            .await)?)
    }

    pub async fn load_user(&self, id: i32) -> Result<Option<JobUser>> {
        Ok(on_pool!(self, |p| sqlx::query_as("SELECT * FROM xxl_job_user WHERE id = ?")
            .bind(id)
            .fetch_optional(p)
            .await)?)
    }

    /// How many administrators (role 1) have this password hash.
    pub async fn admins_with_password(&self, password_md5: &str) -> Result<i64> {
        Ok(on_pool!(self, |p| sqlx::query_scalar("SELECT COUNT(*) FROM xxl_job_user WHERE role = 1 AND password = ?")
            .bind(password_md5)
            .fetch_one(p)
            .await)?)
    }

    /// One page of users by name (contains) and role (`-1` = any), ordered by name, and the number matching.
    pub async fn page_users(
        &self,
        username: &Option<String>,
        role: i32,
        offset: i64,
        limit: i64,
    ) -> Result<(Vec<JobUser>, i64)> {
        let mut clause = String::from(" WHERE 1 = 1");
        let mut args = Vec::new();
        if let Some(pattern) = contains(username) {
            clause.push_str(" AND username LIKE ?");
            args.push(Arg::Text(pattern));
        }
        if role > -1 {
            clause.push_str(" AND role = ?");
            args.push(Arg::Int(role.into()));
        }
        self.page("xxl_job_user", &clause, &args, "ORDER BY username ASC", offset, limit).await
    }

    pub async fn insert_user(&self, user: &JobUser) -> Result<i32> {
        let id = on_pool!(self, |p| sqlx::query(
            "INSERT INTO xxl_job_user (username, password, role, permission) VALUES (?, ?, ?, ?)"
        )
        .bind(&user.username)
        .bind(&user.password)
        .bind(user.role)
        .bind(&user.permission)
        .execute(p)
        .await
        .map(|r| r.insert_id()))?;
        Ok(id as i32)
    }

    /// Updates role and permission, and the password hash only when one is given.
    pub async fn update_user(&self, id: i32, password_md5: Option<&str>, role: i8, permission: Option<&str>) -> Result<u64> {
        let sql = if password_md5.is_some() {
            "UPDATE xxl_job_user SET password = ?, role = ?, permission = ? WHERE id = ?"
        } else {
            "UPDATE xxl_job_user SET role = ?, permission = ? WHERE id = ?"
        };
        Ok(on_pool!(self, |p| {
            let mut query = sqlx::query(sql);
            if let Some(hash) = password_md5 {
                query = query.bind(hash);
            }
            query.bind(role).bind(permission).bind(id).execute(p).await.map(|r| r.rows_affected())
        })?)
    }

    pub async fn delete_user(&self, id: i32) -> Result<u64> {
        self.execute("DELETE FROM xxl_job_user WHERE id = ?", &[Arg::Int(id.into())]).await
    }
}
