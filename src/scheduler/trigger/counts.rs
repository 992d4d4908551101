//! What the trigger path logs as per-second summaries rather than a line each: planned fires not sent,
//! and triggers waiting for the database, so an outage logs a count a second instead of a line per fire.

use crate::domain::misfire::DropReason;
use crate::storage::StorageError;
use crate::time::{sleep_unless_cancelled, Clock};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Events logged as per-second summaries rather than a line each.
#[derive(Default)]
pub struct Counts {
    /// Planned fires not sent, by reason.
    dropped: Mutex<Summary<DropReason>>,
    /// Triggers waiting for the database.
    waiting: Mutex<Summary<()>>,
}

impl Counts {
    pub fn drop_fires(&self, reason: DropReason, n: u64, now_ms: i64) {
        let mut dropped = self.dropped.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = dropped.note(reason, n, now_ms) {
            log_dropped(reason, count);
        }
    }

    pub fn wait(&self, n: u64, now_ms: i64, error: &StorageError) {
        if let Some(count) = self.waiting.lock().unwrap_or_else(|e| e.into_inner()).note((), n, now_ms) {
            tracing::error!("{count} trigger(s) waiting for the database: {error}");
        }
    }

    /// Logs what is still held back: once a second, and at the end, so every count reaches the log.
    pub(super) fn flush(&self, now_ms: i64) {
        for (reason, count) in self.dropped.lock().unwrap_or_else(|e| e.into_inner()).flush(now_ms) {
            log_dropped(reason, count);
        }
        for ((), count) in self.waiting.lock().unwrap_or_else(|e| e.into_inner()).flush(now_ms) {
            tracing::error!("{count} more trigger(s) waited for the database");
        }
    }
}

fn log_dropped(reason: DropReason, count: u64) {
    tracing::warn!("{count} planned fire(s) not sent: {}", reason.label());
}

/// Writes the held-back counts every second until shutdown, then once more.
pub(super) async fn flush_counts(counts: Arc<Counts>, clock: Arc<dyn Clock>, shutdown: CancellationToken) {
    while sleep_unless_cancelled(&shutdown, Duration::from_secs(1)).await {
        counts.flush(clock.now_ms());
    }
    counts.flush(i64::MAX);
}

/// Counts events per kind and says when to log them: the first at once, then at most one line per
/// kind and second carrying the count, so an outage logs a summary instead of a line per fire.
struct Summary<K> {
    kinds: HashMap<K, (i64, u64)>,
}

impl<K> Default for Summary<K> {
    fn default() -> Self {
        Summary { kinds: HashMap::new() }
    }
}

impl<K: std::hash::Hash + Eq + Copy> Summary<K> {
    /// Adds `n` events of `kind`; `Some(count)` when a line is due, with every event not yet logged.
    fn note(&mut self, kind: K, n: u64, now_ms: i64) -> Option<u64> {
        let (last_logged, pending) = self.kinds.entry(kind).or_insert((i64::MIN, 0));
        *pending += n;
        if now_ms.saturating_sub(*last_logged) < 1000 {
            return None;
        }
        *last_logged = now_ms;
        Some(std::mem::take(pending))
    }

    /// Takes the counts held back for kinds last logged at least a second before `now_ms`.
    fn flush(&mut self, now_ms: i64) -> Vec<(K, u64)> {
        let mut due = Vec::new();
        for (kind, (last_logged, pending)) in &mut self.kinds {
            if *pending > 0 && now_ms.saturating_sub(*last_logged) >= 1000 {
                *last_logged = now_ms;
                due.push((*kind, std::mem::take(pending)));
            }
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_log_the_first_event_then_a_count_a_second_and_flush_the_rest() {
        let mut summary = Summary::default();
        let t = 1_700_000_000_000;
        assert_eq!(summary.note(DropReason::Misfire, 3, t), Some(3));
        assert_eq!(summary.note(DropReason::Misfire, 5, t + 400), None);
        assert_eq!(summary.note(DropReason::Stopped, 1, t + 400), Some(1), "kinds are counted apart");
        assert_eq!(summary.flush(t + 900), vec![], "held back less than a second");
        assert_eq!(summary.flush(t + 1_000), vec![(DropReason::Misfire, 5)]);
        assert_eq!(summary.note(DropReason::Misfire, 2, t + 1_500), None);
        assert_eq!(
            summary.flush(i64::MAX),
            vec![(DropReason::Misfire, 2)],
            "the last flush takes everything"
        );
        assert_eq!(summary.flush(i64::MAX), vec![]);
    }
}
