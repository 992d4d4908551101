//! `sqlite:` and `jdbc:sqlite:` URLs for the embedded database.

use super::mysql::Params;
use super::{decode, Datasource};
use crate::config::{DbTarget, SqlitePath};
use std::path::Path;

/// `PATH`, `//PATH` (so `sqlite:///abs` is absolute), `:memory:`, each with optional `?params`.
pub(super) fn parse(rest: &str, cwd: &Path) -> Result<Datasource, String> {
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let path = path.strip_prefix("//").unwrap_or(path);
    // sqlite-jdbc also takes SQLite's URI filenames (`jdbc:sqlite:file:x.db`).
    let path = path.strip_prefix("file:").unwrap_or(path);
    let path = if path == ":memory:" {
        SqlitePath::Memory
    } else if path.is_empty() {
        return Err("no SQLite file path (use sqlite:PATH or sqlite::memory:)".into());
    } else {
        SqlitePath::File(cwd.join(decode(path, "the file path")?))
    };
    let mut params = Params::parse(query)?;
    let time_zone = params.time_zone()?;
    let mut warnings = std::mem::take(&mut params.warnings);
    warnings.extend(
        params
            .mysql_only()
            .map(|name| format!("spring.datasource.url: `{name}` has no meaning for SQLite; ignored")),
    );
    Ok(Datasource { target: DbTarget::Sqlite { path }, time_zone, username: None, password: None, warnings })
}

#[cfg(test)]
mod tests {
    use super::super::{err, ok};
    use super::*;
    use chrono_tz::Tz;
    use std::path::PathBuf;

    #[test]
    fn sqlite_forms() {
        let path = |url: &str| match ok(url).target {
            DbTarget::Sqlite { path } => path,
            other => panic!("{url}: {other:?}"),
        };
        let file = |p: &str| SqlitePath::File(PathBuf::from(p));
        assert_eq!(path("sqlite:xxl-job-admin.db"), file("/work/xxl-job-admin.db"));
        assert_eq!(path("sqlite://data/x.db"), file("/work/data/x.db"));
        assert_eq!(path("sqlite:///var/lib/x.db"), file("/var/lib/x.db"));
        assert_eq!(path("sqlite:/var/lib/x.db"), file("/var/lib/x.db"));
        assert_eq!(path("jdbc:sqlite:x.db"), file("/work/x.db"));
        assert_eq!(path("jdbc:sqlite:file:x.db"), file("/work/x.db"));
        assert_eq!(path("sqlite:my%20jobs.db"), file("/work/my jobs.db"));
        assert_eq!(path("sqlite::memory:"), SqlitePath::Memory);
        assert_eq!(path("sqlite://:memory:"), SqlitePath::Memory);
        assert_eq!(path("jdbc:sqlite::memory:"), SqlitePath::Memory);
        assert!(err("sqlite:").contains("path"));
        let ds = ok("sqlite:x.db?serverTimezone=Asia/Tokyo&useSSL=false&mode=rwc");
        assert_eq!(ds.time_zone, Some("Asia/Tokyo".parse::<Tz>().unwrap()));
        assert_eq!(ds.warnings.len(), 2, "{:?}", ds.warnings);
        assert_eq!((ds.username, ds.password), (None, None));
    }
}
