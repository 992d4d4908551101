//! Where the [`SessionSecret`] comes from. Every admin on one database must use the same one, and nobody
//! else may know it:
//! 1. `xxl.job.session.secret` when set;
//! 2. on a database server, 256 random bits generated at the first start and kept as an extra row of
//!    `xxl_job_lock` (see [`crate::storage::SESSION_SECRET_PREFIX`]), created under the schedule lock so
//!    admins starting together agree on one;
//! 3. for an embedded SQLite file, a random secret in the file `{db}.session-key` beside it (its
//!    configuration alone, often all defaults, is no secret); for an in-memory database, one per process.

use super::session::SessionSecret;
use crate::config::{Config, DbTarget, SqlitePath};
use crate::storage::{Db, StorageError};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Resolves the secret in the order above.
pub async fn resolve(config: &Config, db: &Db) -> Result<SessionSecret, StorageError> {
    if let Some(configured) = &config.session_secret {
        return Ok(SessionSecret::new(configured.expose()));
    }
    let material = match &config.datasource.target {
        DbTarget::Sqlite { path: SqlitePath::File(file) } => embedded_secret(file),
        DbTarget::Sqlite { path: SqlitePath::Memory } => random(),
        _ => db.shared_session_secret(&random()).await?,
    };
    Ok(SessionSecret::new(&material))
}

/// 256 random bits as 43 base64url characters (short enough for `xxl_job_lock.lock_name`).
fn random() -> String {
    URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>())
}

/// The secret kept in `{db_file}.session-key`, created on first use. Unwritable directory: a secret for
/// this process only, so sessions end with it.
pub fn embedded_secret(db_file: &Path) -> String {
    let path = PathBuf::from(format!("{}.session-key", db_file.display()));
    match read_or_create_secret(&path) {
        Ok(secret) => secret,
        Err(e) => {
            tracing::warn!(
                "cannot keep the session secret in {}: {e}; logins end when this process stops",
                path.display()
            );
            random()
        }
    }
}

fn read_or_create_secret(path: &Path) -> std::io::Result<String> {
    let existing = |path: &Path| -> std::io::Result<Option<String>> {
        match std::fs::read_to_string(path) {
            Ok(text) if text.trim().len() >= 32 => Ok(Some(text.trim().to_string())),
            Ok(_) => Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "the file holds no secret")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    };
    if let Some(secret) = existing(path)? {
        return Ok(secret);
    }
    // Written aside, then linked into place: a process starting at the same moment sees the whole
    // secret or none, and the loser of the race reads the winner's.
    let secret = random();
    let staging =
        PathBuf::from(format!("{}.{}-{:08x}", path.display(), std::process::id(), rand::random::<u32>()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&staging).and_then(|mut file| file.write_all(secret.as_bytes()));
    let linked = written.and_then(|()| std::fs::hard_link(&staging, path));
    let _ = std::fs::remove_file(&staging);
    match linked {
        Ok(()) => Ok(secret),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => existing(path)?.ok_or(e),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_secret_is_created_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("admin.db");
        let first = embedded_secret(&db);
        assert_eq!(first.len(), 43, "256 bits in base64url");
        assert_eq!(embedded_secret(&db), first, "read back, not replaced");
        let stored = std::fs::read_to_string(dir.path().join("admin.db.session-key")).unwrap();
        assert_eq!(stored, first);
        let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "no staging file is left behind");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode =
                std::fs::metadata(dir.path().join("admin.db.session-key")).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "only the owner may read the secret");
        }
        assert_ne!(embedded_secret(&dir.path().join("other.db")), first);
    }
}
