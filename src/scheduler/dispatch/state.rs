//! What the dispatcher knows of the current term's fires: the pending ones by job and on one timeline
//! by release, how far they are checked and covered, the fires held for the watermark, and the jobs and
//! groups their sends need.

use crate::domain::fires::{Fire, JobFires};
use crate::domain::schedule::{CronCache, MisfireStrategy};
use crate::scheduler::trigger::Groups;
use crate::storage::JobInfo;
use crate::time::Zone;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

#[derive(Default)]
pub(super) struct State {
    /// The leadership term the fires belong to: fires of an earlier one were taken over by another admin.
    pub(super) term: u64,
    pub(super) jobs: HashMap<i32, Entry>,
    /// Every pending fire, in release order.
    pub(super) timeline: BTreeSet<TimelineEntry>,
    /// Fires released up to here are checked against the console, with their jobs and groups loaded.
    pub(super) checked_through: i64,
    /// Fires released up to here are covered by the lease's watermark.
    pub(super) covered_through: i64,
    /// Fires decided and prepared ahead of the watermark, by release: the watermark is raised over them.
    pub(super) held: BTreeMap<i64, usize>,
    pub(super) groups: Groups,
    pub(super) groups_loaded_ms: i64,
    pub(super) crons: CronCache,
}

/// A pending fire's place on the timeline: ordered by release, then log id, then job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct TimelineEntry {
    pub(super) release_ms: i64,
    pub(super) log_id: i64,
    pub(super) job_id: i32,
}

impl TimelineEntry {
    pub(super) fn of(job_id: i32, fire: &Fire) -> TimelineEntry {
        TimelineEntry { release_ms: fire.release_ms, log_id: fire.log_id, job_id }
    }

    /// Before every entry released at `release_ms`.
    fn first_at(release_ms: i64) -> TimelineEntry {
        TimelineEntry { release_ms, log_id: i64::MIN, job_id: i32::MIN }
    }

    /// After every entry released at `release_ms`.
    fn last_at(release_ms: i64) -> TimelineEntry {
        TimelineEntry { release_ms, log_id: i64::MAX, job_id: i32::MAX }
    }
}

/// A job with pending fires (or a compensation owed).
#[derive(Default)]
pub(super) struct Entry {
    pub(super) fires: JobFires,
    /// As loaded by the last check that found it changed (or new).
    pub(super) job: Option<Arc<JobInfo>>,
}

impl Entry {
    pub(super) fn fire_once_now(&self) -> bool {
        self.job.as_ref().is_some_and(|j| {
            MisfireStrategy::from_name(&j.misfire_strategy) == Some(MisfireStrategy::FireOnceNow)
        })
    }
}

/// The next instant of `job`'s schedule after `after_ms`; `None` when there is none (or no job).
pub(super) fn schedule_next(
    crons: &mut CronCache,
    job: Option<&JobInfo>,
    after_ms: i64,
    zone: Zone,
) -> Option<i64> {
    let job = job?;
    crons.next_time(&job.schedule_type, job.schedule_conf.as_deref(), after_ms, zone).ok().flatten()
}

impl State {
    pub(super) fn add(&mut self, job_id: i32, fire: Fire) {
        self.timeline.insert(TimelineEntry::of(job_id, &fire));
        self.jobs.entry(job_id).or_default().fires.add(fire);
    }

    /// Removes every pending fire of `job_id` that `reject` rejects.
    pub(super) fn remove_fires(&mut self, job_id: i32, reject: impl FnMut(&Fire) -> bool) -> Vec<Fire> {
        let Some(entry) = self.jobs.get_mut(&job_id) else { return Vec::new() };
        let removed = entry.fires.remove_where(reject);
        for fire in &removed {
            self.timeline.remove(&TimelineEntry::of(job_id, fire));
        }
        removed
    }

    /// The pending fires released in `[from, through]`.
    fn released(&self, from: i64, through: i64) -> std::collections::btree_set::Range<'_, TimelineEntry> {
        self.timeline.range(TimelineEntry::first_at(from)..=TimelineEntry::last_at(through))
    }

    /// The jobs with fires released in `(after, through]`.
    pub(super) fn jobs_between(&self, after: i64, through: i64) -> Vec<i32> {
        let mut jobs: Vec<i32> = self.released(after + 1, through).map(|e| e.job_id).collect();
        jobs.sort_unstable();
        jobs.dedup();
        jobs
    }

    /// The release of the latest pending fire at or before `bound` and after `after`.
    pub(super) fn last_release_between(&self, after: i64, bound: i64) -> Option<i64> {
        self.released(after + 1, bound).next_back().map(|e| e.release_ms)
    }

    pub(super) fn first_release_after(&self, after: i64) -> Option<i64> {
        self.timeline.range(TimelineEntry::first_at(after + 1)..).next().map(|e| e.release_ms)
    }

    /// The first release in `[from, through]` at which at least `fires` fires are due, pending or held.
    pub(super) fn burst_between(&self, from: i64, through: i64, fires: usize) -> Option<i64> {
        // Held fires the watermark covers are with the lanes.
        let held_from = from.max(self.covered_through + 1);
        let mut counts: BTreeMap<i64, usize> = if held_from <= through {
            self.held.range(held_from..=through).map(|(r, n)| (*r, *n)).collect()
        } else {
            BTreeMap::new()
        };
        for entry in self.released(from, through) {
            *counts.entry(entry.release_ms).or_default() += 1;
        }
        counts.into_iter().find(|(_, n)| *n >= fires).map(|(r, _)| r)
    }

    /// The first release past the watermark, of a pending fire or a held one.
    pub(super) fn first_uncovered(&self) -> Option<i64> {
        let held = self.held.range(self.covered_through + 1..).next().map(|(release, _)| *release);
        self.first_release_after(self.covered_through).into_iter().chain(held).min()
    }

    /// Whether the watermark covers every fire due by `now`: fires due later may then be prepared ahead.
    pub(super) fn cover_keeps_up(&self, now: i64) -> bool {
        self.first_uncovered().is_none_or(|first| first > now)
    }

    /// The last release past the watermark and at or before `bound`, and how many fires are released
    /// between the two.
    pub(super) fn uncovered_through(&self, bound: i64) -> Option<Uncovered> {
        let after = self.covered_through;
        if bound <= after {
            return None;
        }
        let held = self.held.range(after + 1..=bound);
        let last_held = held.clone().next_back().map(|(release, _)| *release);
        let through = self.last_release_between(after, bound).into_iter().chain(last_held).max()?;
        let pending = self.released(after + 1, through).count();
        Some(Uncovered { through, fires: pending + held.map(|(_, n)| n).sum::<usize>() })
    }

    /// No fire is pending, nor held past the watermark.
    pub(super) fn is_idle(&self) -> bool {
        self.timeline.is_empty() && self.held.range(self.covered_through + 1..).next().is_none()
    }
}

/// Fires past the watermark: the last release among them, and how many there are up to it.
pub(super) struct Uncovered {
    pub(super) through: i64,
    pub(super) fires: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::fires::Kind;

    #[test]
    fn a_burst_is_a_release_of_many_fires_pending_or_held_and_not_yet_covered() {
        let mut state = State::default();
        let fire = |log_id, release_ms| Fire {
            log_id,
            instant_ms: release_ms,
            release_ms,
            kind: Kind::Regular,
            planned_at_ms: 0,
        };
        for job in 0..3 {
            state.add(job, fire(i64::from(job), 1_000));
            state.add(job, fire(10 + i64::from(job), 2_000));
        }
        state.add(9, fire(20, 1_500));
        assert_eq!(state.burst_between(0, 5_000, 3), Some(1_000));
        assert_eq!(state.burst_between(1_001, 5_000, 3), Some(2_000));
        assert_eq!(state.burst_between(0, 5_000, 4), None, "no release has four");
        assert_eq!(state.burst_between(1_001, 1_999, 1), Some(1_500));
        // Decided and held: still to come until the watermark covers them (they are with the lanes then).
        state.held.insert(3_000, 5);
        assert_eq!(state.burst_between(2_001, 5_000, 5), Some(3_000));
        state.covered_through = 3_000;
        assert_eq!(state.burst_between(2_001, 5_000, 1), None);
    }
}
