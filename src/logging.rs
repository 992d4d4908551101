//! The log subscriber the admin installs: one place, so a test can install the same one with a writer of
//! its own and read what the admin logs.

use tracing_subscriber::fmt::MakeWriter;

/// Installs the global subscriber writing to `writer`, with ANSI colours when `ansi`. `RUST_LOG` wins over
/// `default_filter` (`logging.level.root`), as operators of Rust services expect; sqlx's per-statement
/// logs stay at warnings unless `RUST_LOG` asks for them. Fails when a subscriber is already installed.
pub fn init_tracing<W>(
    default_filter: &str,
    writer: W,
    ansi: bool,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>>
where
    W: for<'writer> MakeWriter<'writer> + Send + Sync + 'static,
{
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("{default_filter},sqlx=warn")));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(ansi)
        .with_writer(writer)
        .try_init()
}
