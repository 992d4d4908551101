//! `TEST_LOG`: the in-process admins' log lines, printed beside the test output when a case needs
//! explaining. Unset, nothing is installed and the admins stay quiet.
//!
//! `TEST_LOG=1` prints `info` and above (sqlx's own lines from `warn`), as the admin does by default; any
//! other value is a filter in `RUST_LOG`'s syntax, e.g. `TEST_LOG=xxl_job_admin::scheduler=debug`.

/// Installs the subscriber for the whole test binary; call once, before the first case starts.
pub fn install() {
    let Some(value) = std::env::var_os("TEST_LOG") else { return };
    let value = value.to_string_lossy();
    let directives = match value.trim() {
        "" | "1" | "true" => "info,sqlx=warn",
        filter => filter,
    };
    let filter = tracing_subscriber::EnvFilter::try_new(directives).unwrap_or_else(|e| {
        eprintln!("TEST_LOG={value:?} is not a filter ({e}); printing info and above");
        tracing_subscriber::EnvFilter::new("info,sqlx=warn")
    });
    // The test writer prints through the standard output, where the harness's own lines go; colours only
    // on a terminal.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stdout());
    tracing_subscriber::fmt().with_env_filter(filter).with_ansi(ansi).with_test_writer().init();
}
