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

#[cfg(test)]
mod tests {
    use super::init_tracing;
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    /// A writer into memory the test reads back.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().map_err(|_| std::io::ErrorKind::Other)?.extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The one test of this binary that installs the global subscriber.
    #[test]
    fn installs_once_and_writes_plain_lines_to_the_writer() {
        let captured = Captured::default();
        let writer = captured.clone();
        init_tracing("info", move || writer.clone(), false).expect("the first subscriber");
        tracing::error!("written to the test's writer");
        let text = String::from_utf8(captured.0.lock().expect("the log").clone()).expect("UTF-8");
        assert!(text.contains(" ERROR written to the test's writer\n"), "{text:?}");
        assert!(!text.contains('\u{1b}'), "no colours: {text:?}");
        assert!(init_tracing("info", std::io::sink, false).is_err(), "a second subscriber is refused");
    }
}
