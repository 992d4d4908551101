//! `xxl_job_user` statements (2.4.2: XxlJobUserDao).

use super::{contains, Arg, Db, JobUser, Result, Role};

impl Db {
    pub async fn load_user_by_name(&self, username: &str) -> Result<Option<JobUser>> {
        self.fetch_optional(
            "SELECT * FROM xxl_job_user WHERE username = ?",
            &[Arg::Text(username.to_string())],
        )
        .await
    }

    pub async fn load_user(&self, id: i32) -> Result<Option<JobUser>> {
        self.fetch_optional("SELECT * FROM xxl_job_user WHERE id = ?", &[Arg::Int(id.into())]).await
    }

    /// How many administrators have this password hash.
    pub async fn admins_with_password(&self, password_md5: &str) -> Result<i64> {
        self.scalar(
            "SELECT COUNT(*) FROM xxl_job_user WHERE role = ? AND password = ?",
            &[Arg::Int(i16::from(Role::Admin).into()), Arg::Text(password_md5.to_string())],
        )
        .await
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
            clause.push_str(&self.like("username"));
            args.push(Arg::Text(pattern));
        }
        if role > -1 {
            clause.push_str(" AND role = ?");
            args.push(Arg::Int(role.into()));
        }
        self.page("xxl_job_user", &clause, &args, "ORDER BY username ASC", offset, limit).await
    }

    pub async fn insert_user(&self, user: &JobUser) -> Result<i32> {
        let args = [
            Arg::Text(user.username.clone()),
            Arg::Text(user.password.clone()),
            Arg::Int(i16::from(user.role).into()),
            Arg::OptText(user.permission.clone()),
        ];
        let id = self
            .insert_id(
                "INSERT INTO xxl_job_user (username, password, role, permission) VALUES (?, ?, ?, ?)",
                &args,
            )
            .await?;
        Ok(id as i32)
    }

    /// Updates role and permission, and the password hash only when one is given.
    pub async fn update_user(
        &self,
        id: i32,
        password_md5: Option<&str>,
        role: Role,
        permission: Option<&str>,
    ) -> Result<u64> {
        let mut args: Vec<Arg> = password_md5.map(|hash| Arg::Text(hash.to_string())).into_iter().collect();
        args.extend([
            Arg::Int(i16::from(role).into()),
            Arg::OptText(permission.map(str::to_string)),
            Arg::Int(id.into()),
        ]);
        let sql = if password_md5.is_some() {
            "UPDATE xxl_job_user SET password = ?, role = ?, permission = ? WHERE id = ?"
        } else {
            "UPDATE xxl_job_user SET role = ?, permission = ? WHERE id = ?"
        };
        self.execute(sql, &args).await
    }

    pub async fn delete_user(&self, id: i32) -> Result<u64> {
        self.execute("DELETE FROM xxl_job_user WHERE id = ?", &[Arg::Int(id.into())]).await
    }
}
