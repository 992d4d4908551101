//! The workflow tables (`xxl_job_ext_*`, migrations/ext/): not part of the xxl-job 2.4 schema, so a database
//! where no workflow was ever saved keeps exactly that schema. They are created the first time they are
//! needed ([`Db::ensure_extension_tables`]), or beforehand from the script `xxl-job-admin ddl` prints, by a
//! DBA when the admin's account may not create tables.

use super::schema::{statements, under_lock};
use super::sql::Dialect;
use super::{Db, Result, StorageError};
use crate::config::DbTarget;
use std::time::Duration;

/// The workflow tables, in the order the scripts create them.
pub const EXTENSION_TABLES: [&str; 6] = [
    "xxl_job_ext_workflow",
    "xxl_job_ext_workflow_version",
    "xxl_job_ext_workflow_run",
    "xxl_job_ext_workflow_node",
    "xxl_job_ext_workflow_trigger",
    "xxl_job_ext_workflow_backfill",
];

/// A kind of database, as far as the scripts differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// MySQL and MariaDB.
    MySql,
    Postgres,
    Sqlite,
}

impl Backend {
    /// The backend of a configured datasource.
    pub fn of(target: &DbTarget) -> Backend {
        match target {
            DbTarget::MySql { .. } => Backend::MySql,
            DbTarget::Postgres { .. } => Backend::Postgres,
            DbTarget::Sqlite { .. } => Backend::Sqlite,
        }
    }

    /// `mysql` (or `mariadb`), `postgres` (or `postgresql`), `sqlite`, in any case.
    pub fn parse(name: &str) -> Option<Backend> {
        match name.to_ascii_lowercase().as_str() {
            "mysql" | "mariadb" => Some(Backend::MySql),
            "postgres" | "postgresql" => Some(Backend::Postgres),
            "sqlite" => Some(Backend::Sqlite),
            _ => None,
        }
    }

    fn dialect(self) -> Dialect {
        match self {
            Backend::MySql => Dialect::MYSQL,
            Backend::Postgres => Dialect::POSTGRES,
            Backend::Sqlite => Dialect::SQLITE,
        }
    }
}

/// The script that creates the workflow tables on `backend`; every statement may run again.
pub fn extension_ddl(backend: Backend) -> &'static str {
    backend.dialect().ext_ddl
}

/// The session lock held while one admin creates the workflow tables, apart from the 2.4 schema's: the
/// MySQL lock name, and the PostgreSQL key ("xjse").
const EXTENSION_LOCK: (&str, (i32, i32)) = ("xxl-job-admin:ext-schema", (0x786a_7365, 0));

/// How long an admin waits for another to finish creating the workflow tables (well under a second).
const EXTENSION_LOCK_WAIT: Duration = Duration::from_secs(60);

impl Db {
    /// Makes sure the workflow tables exist, creating the missing ones under a session lock so that admins
    /// doing it together do not collide. Done once per `Db` (and its clones): later calls cost nothing. An
    /// account without the right to create them gets [`StorageError::ExtensionTablesDenied`].
    pub async fn ensure_extension_tables(&self) -> Result<()> {
        self.extensions.get_or_try_init(|| ensure(self)).await.map(drop)
    }

    /// Whether every workflow table exists, creating none: a read on a database where no workflow was
    /// ever saved answers that there is none, and leaves the 2.4 schema as it is. Once they are there, they
    /// stay, so later calls cost nothing.
    pub async fn extension_tables_present(&self) -> Result<bool> {
        if self.extensions.initialized() {
            return Ok(true);
        }
        let present = missing_tables(self).await?.is_empty();
        if present {
            // As good as made by this admin: later writes need not look again.
            let _ = self.extensions.set(());
        }
        Ok(present)
    }
}

async fn ensure(db: &Db) -> Result<()> {
    // Tables a DBA made are used as they are, without asking for any lock or right.
    if missing_tables(db).await?.is_empty() {
        return Ok(());
    }
    // As for the 2.4 schema; where no lock is taken (SQLite, Galera), `IF NOT EXISTS` makes it safe.
    let work = create_missing(db);
    under_lock(db, EXTENSION_LOCK, EXTENSION_LOCK_WAIT, StorageError::ExtensionLockTimeout, work).await
}

/// Runs the script unless another admin made every table while this one waited for the lock.
async fn create_missing(db: &Db) -> Result<()> {
    let missing = missing_tables(db).await?;
    if missing.is_empty() {
        return Ok(());
    }
    for statement in statements(db.dialect.ext_ddl) {
        match db.execute(&statement, &[]).await {
            Ok(_) => {}
            Err(StorageError::Database(sqlx::Error::Database(e))) if is_denied(e.as_ref()) => {
                return Err(StorageError::ExtensionTablesDenied {
                    missing: missing.join(", "),
                    reason: e.message().to_string(),
                    ddl: db.dialect.ext_ddl,
                });
            }
            Err(e) => return Err(e),
        }
    }
    tracing::info!("created the workflow tables {}", missing.join(", "));
    Ok(())
}

/// The workflow tables the database lacks.
async fn missing_tables(db: &Db) -> Result<Vec<&'static str>> {
    let names: Vec<(String,)> = db.fetch_all(db.dialect.tables, &[]).await?;
    let present: Vec<String> = names.into_iter().map(|(n,)| n.to_lowercase()).collect();
    Ok(EXTENSION_TABLES.into_iter().filter(|t| !present.iter().any(|p| p == t)).collect())
}

/// MySQL's "command denied" (1142), "access denied to the database" (1044) and "needs a privilege" (1227).
const MYSQL_DENIED: [u16; 3] = [1142, 1044, 1227];
/// PostgreSQL's "insufficient_privilege".
const PG_INSUFFICIENT_PRIVILEGE: &str = "42501";
/// SQLite's primary result code of a write to a read-only database.
const SQLITE_READONLY: i64 = 8;

/// Whether the database refused a statement for want of a right, rather than for what it says.
fn is_denied(e: &dyn sqlx::error::DatabaseError) -> bool {
    if let Some(mysql) = e.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>() {
        return MYSQL_DENIED.contains(&mysql.number());
    }
    if e.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
        // The extended code's low byte is the primary code.
        return e.code().and_then(|c| c.parse::<i64>().ok()).is_some_and(|c| c & 0xff == SQLITE_READONLY);
    }
    e.code().as_deref() == Some(PG_INSUFFICIENT_PRIVILEGE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_create_every_table_and_may_run_again() {
        for backend in [Backend::MySql, Backend::Postgres, Backend::Sqlite] {
            let creates: Vec<String> =
                statements(extension_ddl(backend)).filter(|s| s.contains("CREATE TABLE")).collect();
            assert_eq!(creates.len(), EXTENSION_TABLES.len(), "{backend:?}");
            for (statement, table) in creates.iter().zip(EXTENSION_TABLES) {
                let head = statement.lines().next().unwrap_or_default().replace('`', "");
                assert_eq!(head, format!("CREATE TABLE IF NOT EXISTS {table}"), "{backend:?}");
            }
            for statement in statements(extension_ddl(backend)) {
                assert!(statement.contains(" IF NOT EXISTS "), "{backend:?}: {statement}");
                assert!(statement.contains("xxl_job_ext_"), "{backend:?}: {statement}");
            }
        }
        // The 2.4 schema's scripts stay without them.
        for ddl in [Dialect::MYSQL, Dialect::POSTGRES, Dialect::SQLITE].map(|d| d.ddl) {
            assert!(!ddl.contains("xxl_job_ext_"));
        }
    }

    #[test]
    fn backends_are_named_as_people_write_them() {
        assert_eq!(Backend::parse("MariaDB"), Some(Backend::MySql));
        assert_eq!(Backend::parse("postgresql"), Some(Backend::Postgres));
        assert_eq!(Backend::parse("sqlite"), Some(Backend::Sqlite));
        assert_eq!(Backend::parse("oracle"), None);
    }

    #[tokio::test]
    async fn tables_are_made_on_first_use_only() {
        let db = crate::storage::testing::memory_db().await;
        assert!(!db.extension_tables_present().await.unwrap());
        assert_eq!(missing_tables(&db).await.unwrap(), EXTENSION_TABLES, "asking creates nothing");
        db.ensure_extension_tables().await.unwrap();
        assert!(missing_tables(&db).await.unwrap().is_empty());
        assert!(db.extension_tables_present().await.unwrap());
        // Again, and through a clone: nothing to do.
        db.clone().ensure_extension_tables().await.unwrap();
        create_missing(&db).await.unwrap();
    }
}
