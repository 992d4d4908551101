//! Step 3, the lease's watermark: raised over the fires about to go out, just before they are due, so
//! that a successor never sends them again; how far ahead follows how long recent commits took.

use super::state::Uncovered;
use super::{pause, Inner, Next, RETRY_PAUSE};
use crate::scheduler::lease::Renewal;
use crate::time::sleep_unless_cancelled;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The watermark is raised ahead of the fires due, so that its commit does not make them late, over the
/// fires due within the span after them (one statement for them all). The fires it covers and that are
/// not sent yet are what a leader dying at that moment loses (a successor takes them for sent), so with
/// standbys it is raised as late as its commits allow: as long ahead as the slowest of the recent ones
/// took, and a little more, within these bounds...
pub(super) const SERVER_COVER: CoverReach = CoverReach { least_ahead: 5, most_ahead: 50, span: 10 };
/// ...and on SQLite, whose one writer may be in a schedule pass's transaction (at most 10,000 fires) when
/// a second's fires come near, 150 ms: time for that transaction to end first. (No standby takes over
/// there; a crash is downtime, whose fires the restart settles by the misfire rule.)
pub(super) const EMBEDDED_COVER: CoverReach = CoverReach { least_ahead: 150, most_ahead: 150, span: 50 };
/// Watermark commits remembered to time the next ones.
const COVER_TIMINGS_KEPT: usize = 8;
/// Room left after the slowest recent commit.
const COVER_SLACK_MS: i64 = 2;

/// How far ahead of the fires the watermark is raised, at least and at most, and over what span after them.
#[derive(Debug, Clone, Copy)]
pub(super) struct CoverReach {
    least_ahead: i64,
    most_ahead: i64,
    span: i64,
}

/// How long the latest watermark commits took.
#[derive(Default)]
struct CoverTimings {
    recent: VecDeque<i64>,
}

impl CoverTimings {
    fn record(&mut self, took: Duration) {
        if self.recent.len() == COVER_TIMINGS_KEPT {
            self.recent.pop_front();
        }
        self.recent.push_back(took.as_millis().min(i64::MAX as u128) as i64);
    }

    /// How long before the fires due the next commit begins: when the slowest recent one would still
    /// end before they are due.
    fn ahead(&self, reach: CoverReach) -> i64 {
        let slowest = self.recent.iter().copied().max().unwrap_or(0);
        (slowest + COVER_SLACK_MS).clamp(reach.least_ahead, reach.most_ahead)
    }
}

impl Inner {
    /// Raises the lease's watermark over the fires due within the cover's reach, ahead of their sends.
    pub(super) async fn cover_loop(self: Arc<Self>, shutdown: CancellationToken) {
        let mut timings = CoverTimings::default();
        loop {
            let ahead = timings.ahead(self.cover_reach);
            let term = self.lock().term;
            let now = self.context.clock.now_ms();
            let Uncovered { through, fires } = match self.next_cover(now, ahead) {
                Next::Work(uncovered) => uncovered,
                Next::WakeAt(wake_at) => {
                    if self.may_end(&shutdown) {
                        return;
                    }
                    pause(&self.cover_wake, wake_at, now, &shutdown).await;
                    continue;
                }
            };
            let started = std::time::Instant::now();
            let advanced = self.leadership.advance(through).await;
            if matches!(advanced, Ok(Renewal::Renewed)) {
                timings.record(started.elapsed());
            }
            match advanced {
                Ok(Renewal::Renewed) => self.covered(term, through),
                Ok(Renewal::Deposed | Renewal::NotLeading) => {
                    self.still_leads(term);
                    if shutdown.is_cancelled() && self.terms_over() {
                        return;
                    }
                }
                Err(e) => {
                    self.context.counts.wait(fires as u64, now, &e);
                    if !sleep_unless_cancelled(&shutdown, RETRY_PAUSE).await && self.may_end(&shutdown) {
                        return;
                    }
                }
            }
        }
    }

    /// The fires to cover now, raising the watermark `ahead` of the first; or when to look again.
    fn next_cover(&self, now: i64, ahead: i64) -> Next<Uncovered> {
        let state = self.lock();
        match state.first_uncovered() {
            Some(first) if first <= now + ahead => {
                match state.uncovered_through(first.max(now + ahead) + self.cover_reach.span) {
                    Some(uncovered) => Next::Work(uncovered),
                    None => Next::WakeAt(None),
                }
            }
            first => Next::WakeAt(first.map(|f| f - ahead)),
        }
    }

    /// The watermark of `term` was raised to `through`: the fires held for it go out.
    fn covered(&self, term: u64, through: i64) {
        let mut state = self.lock();
        if state.term == term {
            state.covered_through = state.covered_through.max(through);
            state.held = state.held.split_off(&(through + 1));
        }
        drop(state);
        self.cover_raised.notify_waiters();
        self.sender_wake.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watermark_is_raised_as_far_ahead_as_the_slowest_recent_commit_needs() {
        let mut timings = CoverTimings::default();
        assert_eq!(timings.ahead(SERVER_COVER), 5, "nothing measured yet: the least");
        timings.record(Duration::from_millis(1));
        assert_eq!(timings.ahead(SERVER_COVER), 5);
        timings.record(Duration::from_millis(12));
        assert_eq!(timings.ahead(SERVER_COVER), 14, "the slowest and the slack");
        timings.record(Duration::from_secs(3));
        assert_eq!(timings.ahead(SERVER_COVER), 50, "at most");
        for _ in 0..COVER_TIMINGS_KEPT {
            timings.record(Duration::from_millis(2));
        }
        assert_eq!(timings.ahead(SERVER_COVER), 5, "a slow commit is forgotten after the next ones");
        assert_eq!(timings.ahead(EMBEDDED_COVER), 150);
    }
}
