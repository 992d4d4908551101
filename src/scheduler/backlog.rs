//! The fast lane's backlog: triggers decided and waiting for a permit. While there are any, a burst of
//! fires is being sent, and the work that can wait (the results writer, a schedule pass with lead to
//! spare) leaves the two cores and the database to it (issue: performance round 2).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

#[derive(Default)]
pub struct Backlog {
    queued: AtomicUsize,
    cleared: Notify,
}

impl Backlog {
    pub fn add(&self, n: usize) {
        self.queued.fetch_add(n, Ordering::AcqRel);
    }

    /// `n` of the triggers added got their permit (or will not wait for one).
    pub fn remove(&self, n: usize) {
        if self.queued.fetch_sub(n, Ordering::AcqRel) == n {
            self.cleared.notify_waiters();
        }
    }

    pub fn is_empty(&self) -> bool {
        self.queued.load(Ordering::Acquire) == 0
    }

    /// Waits until the backlog is empty, at most `limit`.
    pub async fn cleared(&self, limit: Duration) {
        let cleared = self.cleared.notified();
        tokio::pin!(cleared);
        cleared.as_mut().enable();
        if !self.is_empty() {
            let _ = tokio::time::timeout(limit, cleared).await;
        }
    }

    /// Counts `n` triggers until the guard is dropped: fires decided and on their way to the lanes.
    pub fn reserve(self: &Arc<Self>, n: usize) -> Reserved {
        self.add(n);
        Reserved { backlog: self.clone(), n }
    }
}

/// Triggers counted in a backlog until dropped.
pub struct Reserved {
    backlog: Arc<Backlog>,
    n: usize,
}

impl Drop for Reserved {
    fn drop(&mut self) {
        self.backlog.remove(self.n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn cleared_waits_for_the_last_trigger_and_no_longer_than_its_limit() {
        let backlog = Arc::new(Backlog::default());
        backlog.cleared(Duration::from_secs(5)).await;
        let reserved = backlog.reserve(2);
        backlog.add(1);
        let started = std::time::Instant::now();
        backlog.cleared(Duration::from_millis(30)).await;
        assert!(started.elapsed() >= Duration::from_millis(30));
        let waiter = tokio::spawn({
            let backlog = backlog.clone();
            async move { backlog.cleared(Duration::from_secs(5)).await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        drop(reserved);
        assert!(!backlog.is_empty());
        backlog.remove(1);
        assert!(backlog.is_empty());
        tokio::time::timeout(Duration::from_secs(1), waiter).await.expect("woken once cleared").unwrap();
    }
}
