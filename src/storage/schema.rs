//! Creating the xxl-job 2.4 schema on an empty database, and leaving an existing one untouched.
//!
//! No migration bookkeeping table is created: the database must stay exactly what the Java admin expects.

use super::{Db, Result, StorageError};

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

pub(super) async fn ensure(db: &Db) -> Result<SchemaOutcome> {
    let present = existing_tables(db).await?;
    if present.is_empty() {
        for statement in statements(db.dialect.ddl).chain(statements(SEED)) {
            db.execute(&statement, &[]).await?;
        }
        return Ok(SchemaOutcome::Created);
    }
    let missing: Vec<&str> = TABLES.iter().copied().filter(|t| !present.contains(&t.to_string())).collect();
    if !missing.is_empty() {
        return Err(StorageError::PartialSchema(missing.join(", ")));
    }
    let lock_rows = db.scalar("SELECT COUNT(*) FROM xxl_job_lock WHERE lock_name = 'schedule_lock'", &[]).await?;
    Ok(SchemaOutcome::Existing { lock_row_present: lock_rows > 0 })
}

/// The xxl-job tables present, lower-cased (MySQL on Windows/macOS may report any case).
async fn existing_tables(db: &Db) -> Result<Vec<String>> {
    let names: Vec<(String,)> = db.fetch_all(db.dialect.tables, &[]).await?;
    Ok(names
        .into_iter()
        .map(|(n,)| n.to_lowercase())
        .filter(|n| TABLES.contains(&n.as_str()))
        .collect())
}

/// The statements of a script: `--` comment lines dropped first (they may hold `;`), then split on `;`.
fn statements(script: &str) -> impl Iterator<Item = String> {
    let code: Vec<&str> = script.lines().filter(|l| !l.trim_start().starts_with("--")).collect();
    let code = code.join("\n");
    let parts: Vec<String> = code.split(';').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
    parts.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::sql::Dialect;

    #[test]
    fn scripts_create_every_table_and_seed_the_lock() {
        for ddl in Dialect::ALL.map(|d| d.ddl) {
            let creates: Vec<_> = statements(ddl).filter(|s| s.contains("CREATE TABLE")).collect();
            assert_eq!(creates.len(), TABLES.len());
            for table in TABLES {
                assert!(creates.iter().any(|s| s.contains(&format!("{table}`\n")) || s.contains(&format!("{table}\n"))), "{table}");
            }
        }
        assert!(statements(SEED).any(|s| s.contains("'schedule_lock'")));
        assert_eq!(statements(SEED).count(), 4);
    }
}
