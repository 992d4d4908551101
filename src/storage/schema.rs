//! Creating the xxl-job 2.4 schema on an empty database, and leaving an existing one untouched.
//!
//! No migration bookkeeping table is created: the database must stay exactly what the Java admin expects.

use super::{Db, Result, StorageError};
use std::time::Duration;

const SEED: &str = include_str!("../../migrations/seed.sql");

pub const TABLES: [&str; 8] = [
    "xxl_job_group",
    "xxl_job_info",
    "xxl_job_lock",
    "xxl_job_log",
    "xxl_job_log_report",
    "xxl_job_logglue",
    "xxl_job_registry",
    "xxl_job_user",
];

/// What start-up found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaOutcome {
    /// The database was empty; the schema and the initial rows were created.
    Created,
    /// All tables were there and were left as they are.
    Existing { lock_row_present: bool },
}

/// The session lock held while one admin creates the schema, so admins starting together on an empty
/// database do not both run the script: the MySQL lock name, and the PostgreSQL key ("xjsc", a first key of
/// its own beside the leader lock).
const SCHEMA_LOCK: (&str, (i32, i32)) = ("xxl-job-admin:schema", (0x786a_7363, 0));

/// How long an admin waits for another to finish creating the schema: the script takes well under a
/// second, so a longer wait means the other is stuck.
const SCHEMA_LOCK_WAIT: Duration = Duration::from_secs(60);

pub(super) async fn ensure(db: &Db) -> Result<SchemaOutcome> {
    let mut present = existing_tables(db).await?;
    // Some tables but not all may be another admin's creation under way: look again under its lock.
    if present.len() < TABLES.len() {
        let created = under_lock(
            db,
            SCHEMA_LOCK,
            SCHEMA_LOCK_WAIT,
            StorageError::SchemaLockTimeout,
            create_if_empty(db),
        );
        match created.await? {
            None => return Ok(SchemaOutcome::Created),
            Some(found) => present = found,
        }
    }
    let missing: Vec<&str> = TABLES.iter().copied().filter(|t| !present.contains(&t.to_string())).collect();
    if !missing.is_empty() {
        return Err(StorageError::PartialSchema(missing.join(", ")));
    }
    check_column_types(db).await?;
    let lock_rows =
        db.scalar("SELECT COUNT(*) FROM xxl_job_lock WHERE lock_name = 'schedule_lock'", &[]).await?;
    Ok(SchemaOutcome::Existing { lock_row_present: lock_rows > 0 })
}

/// Runs `work` holding the session lock `lock` (a MySQL name, a PostgreSQL key pair), waiting for it at
/// most `wait` (then `timed_out`). Session locks work before any table exists; SQLite has no server to hold
/// one, and a Galera node refuses GET_LOCK: both run `work` unlocked.
pub(super) async fn under_lock<T>(
    db: &Db,
    (name, key): (&str, (i32, i32)),
    wait: Duration,
    timed_out: fn(u64) -> StorageError,
    work: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    let lock = if db.has_session_locks() {
        Some(db.session_lock(name, key, wait).await?.ok_or(timed_out(wait.as_secs()))?)
    } else {
        None
    };
    let done = work.await;
    if let Some(lock) = lock {
        lock.release().await;
    }
    done
}

/// Runs the script on a database without any xxl-job table (`None`); otherwise the tables found, which
/// another admin may have created while this one waited for the lock.
async fn create_if_empty(db: &Db) -> Result<Option<Vec<String>>> {
    let present = existing_tables(db).await?;
    if !present.is_empty() {
        return Ok(Some(present));
    }
    for statement in statements(db.dialect.ddl).chain(statements(SEED)) {
        db.execute(&statement, &[]).await?;
    }
    Ok(None)
}

/// The xxl-job tables present, lower-cased (MySQL on Windows/macOS may report any case).
pub(super) async fn existing_tables(db: &Db) -> Result<Vec<String>> {
    let names: Vec<(String,)> = db.fetch_all(db.dialect.tables, &[]).await?;
    Ok(names.into_iter().map(|(n,)| n.to_lowercase()).filter(|n| TABLES.contains(&n.as_str())).collect())
}

/// Tables made by someone else (a PostgreSQL port of the Java admin) must have the column types ours
/// reads where the driver is strict about them; otherwise start-up names every column that differs,
/// rather than failing later on the first row read.
async fn check_column_types(db: &Db) -> Result<()> {
    let Some(listing) = db.dialect.columns else { return Ok(()) };
    let found: Vec<(String, String, String)> = db.fetch_all(listing, &[]).await?;
    let differing: Vec<String> = script_columns(db.dialect.ddl)
        .into_iter()
        .filter_map(|(table, column, expected)| {
            match found
                .iter()
                .find(|(t, c, _)| t.eq_ignore_ascii_case(&table) && c.eq_ignore_ascii_case(&column))
            {
                None => Some(format!("{table}.{column} is missing")),
                Some((_, _, actual)) if decoding_class(actual) != decoding_class(&expected) => {
                    Some(format!("{table}.{column} is {actual}, not {expected}"))
                }
                Some(_) => None,
            }
        })
        .collect();
    if differing.is_empty() {
        Ok(())
    } else {
        Err(StorageError::ColumnTypes(differing.join(", ")))
    }
}

/// `(table, column, catalogue type)` of every column a schema script creates, one per line of its
/// `CREATE TABLE` bodies.
fn script_columns(script: &str) -> Vec<(String, String, String)> {
    let mut columns = Vec::new();
    for statement in statements(script) {
        let Some(rest) = statement.strip_prefix("CREATE TABLE ") else { continue };
        let mut lines = rest.lines();
        let table = lines.next().unwrap_or_default().trim().to_string();
        for line in lines.map(str::trim).filter(|l| !matches!(l.chars().next(), None | Some('(' | ')'))) {
            let mut words = line.split_whitespace();
            let (Some(column), Some(ty)) = (words.next(), words.next()) else { continue };
            if column == "PRIMARY" {
                continue;
            }
            let ty = ty.trim_end_matches(',').split('(').next().unwrap_or_default();
            let catalogue = match ty {
                "serial" => "integer",
                "bigserial" => "bigint",
                "varchar" => "character varying",
                "timestamp" => "timestamp without time zone",
                other => other,
            };
            columns.push((table.clone(), column.to_string(), catalogue.to_string()));
        }
    }
    columns
}

/// Catalogue types that decode alike: every text type reads as a string.
fn decoding_class(catalogue_type: &str) -> &str {
    match catalogue_type {
        "character varying" | "text" | "character" => "text",
        other => other,
    }
}

/// The statements of a script: `--` comment lines dropped first (they may hold `;`), then split on `;`.
pub(super) fn statements(script: &str) -> impl Iterator<Item = String> {
    let code: Vec<&str> = script.lines().filter(|l| !l.trim_start().starts_with("--")).collect();
    let code = code.join("\n");
    let parts: Vec<String> =
        code.split(';').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
    parts.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::sql::Dialect;

    #[test]
    fn scripts_create_every_table_and_seed_the_lock() {
        for ddl in [Dialect::MYSQL, Dialect::SQLITE, Dialect::POSTGRES].map(|d| d.ddl) {
            let creates: Vec<_> = statements(ddl).filter(|s| s.contains("CREATE TABLE")).collect();
            assert_eq!(creates.len(), TABLES.len());
            for table in TABLES {
                assert!(
                    creates
                        .iter()
                        .any(|s| s.contains(&format!("{table}`\n")) || s.contains(&format!("{table}\n"))),
                    "{table}"
                );
            }
        }
        assert!(statements(SEED).any(|s| s.contains("'schedule_lock'")));
        let postgres = script_columns(Dialect::POSTGRES.ddl);
        assert_eq!(postgres.len(), 69);
        for (table, column, ty) in [
            ("xxl_job_log", "id", "bigint"),
            ("xxl_job_info", "id", "integer"),
            ("xxl_job_info", "trigger_status", "smallint"),
            ("xxl_job_info", "trigger_next_time", "bigint"),
            ("xxl_job_log", "trigger_time", "timestamp without time zone"),
            ("xxl_job_group", "app_name", "character varying"),
            ("xxl_job_lock", "lock_name", "character varying"),
        ] {
            assert!(postgres.contains(&(table.into(), column.into(), ty.into())), "{table}.{column}");
        }
        assert_eq!(statements(SEED).count(), 4);
    }
}
