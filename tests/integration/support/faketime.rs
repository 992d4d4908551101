//! libfaketime (Debian's `faketime` package), to run an admin with its clock ahead or behind: preloaded
//! into the child, it moves what the process reads of the time by a fixed offset, and nothing else.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The multi-threaded build: the admin reads the clock from many threads.
const LIBRARY: &str = "libfaketimeMT.so.1";

/// The preloadable library, once it has been seen to move `date`'s clock.
pub fn library() -> Result<PathBuf, String> {
    let found = std::fs::read_dir("/usr/lib")
        .map_err(|e| format!("/usr/lib: {e}"))?
        .filter_map(Result::ok)
        .map(|dir| dir.path().join("faketime").join(LIBRARY))
        .find(|path| path.exists())
        .ok_or_else(|| format!("{LIBRARY} not found under /usr/lib/*/faketime (apt-get install faketime)"))?;
    let ahead = 100;
    let read = |env: &[(String, String)]| -> Result<i64, String> {
        let out = Command::new("date").arg("+%s").envs(env.iter().map(|(k, v)| (k, v))).output();
        let out = out.map_err(|e| format!("date: {e}"))?;
        String::from_utf8_lossy(&out.stdout).trim().parse().map_err(|e| format!("date's answer: {e}"))
    };
    let (real, moved) = (read(&[])?, read(&skewed(&found, ahead))?);
    if (moved - real - ahead).abs() > 2 {
        return Err(format!("{} did not move the clock by {ahead} s ({real} → {moved})", found.display()));
    }
    Ok(found)
}

/// The environment that runs a program with its clock `skew_secs` ahead (behind when negative).
pub fn skewed(library: &Path, skew_secs: i64) -> Vec<(String, String)> {
    vec![("LD_PRELOAD".into(), library.display().to_string()), ("FAKETIME".into(), format!("{skew_secs:+}s"))]
}
