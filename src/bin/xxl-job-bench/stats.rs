//! The arithmetic of the report: the planned fires, duplicates and missing fires counted by planned
//! instant, lateness, percentiles and CPU shares.

use super::args::Phase;
use xxl_job_admin::domain::misfire::MISFIRE_THRESHOLD_MS;

/// The planned fires of a row: job `index` of `jobs` (id `first_job_id + index`) is due at
/// `start_ms + offset_ms(index) + k·1000` for k ≥ 0 (a burst row has only k = 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    pub start_ms: i64,
    pub jobs: usize,
    pub first_job_id: i32,
    pub phase: Phase,
}

impl Grid {
    /// Must agree with the `trigger_next_time` the jobs are seeded with (`db::RowDb::seed`).
    pub fn offset_ms(phase: Phase, index: usize, jobs: usize) -> i64 {
        match phase {
            Phase::Aligned => 0,
            Phase::Spread => (index as i64 * 1000) / jobs as i64,
        }
    }

    fn index_of(&self, job_id: i32) -> Option<usize> {
        let index = usize::try_from(i64::from(job_id) - i64::from(self.first_job_id)).ok()?;
        (index < self.jobs).then_some(index)
    }
}

/// One `/run` received by the executor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fire {
    pub job_id: i32,
    pub at_us: i64,
    /// `Xxl-Job-Planned-Time`: the planned instant the fire stands for.
    pub planned_ms: Option<i64>,
    /// `Xxl-Job-Trigger-Type` was `MISFIRE`: a compensation for a missed instant.
    pub misfire: bool,
    /// `TriggerParam.logDateTime`: when the admin began this trigger's log row.
    pub log_date_time_ms: i64,
}

/// How the fires standing for the planned instants of a window compare with the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FireAnalysis {
    /// (job, instant) pairs planned in the window.
    pub planned: u64,
    /// `/run` requests standing for an instant of the window, repeats included.
    pub sent: u64,
    /// Planned pairs with no `/run`.
    pub missing: u64,
    /// `/run` requests beyond the first of their (job, instant).
    pub duplicates: u64,
    /// Fires for an instant of the window that is not on their job's grid: FIX_RATE jobs re-anchored
    /// after a late fire (next = now + 1 s, as in 2.4.2). Their grid instants count as missing.
    pub off_grid: u64,
    /// Misfire compensations (trigger type `MISFIRE`) among `sent`.
    pub compensations: u64,
    /// Of the planned pairs with a `/run`, those whose first arrived within the misfire threshold.
    pub within_threshold: u64,
    /// Lateness (arrival − planned instant) of every fire in `sent`, in microseconds.
    pub lateness: Option<Percentiles>,
    /// The admin's part of it: planned instant → `logDateTime`.
    pub to_log_time: Option<Percentiles>,
    /// Each second of the window's lateness p99 (fires by their planned instant; `None`: none sent): a
    /// run's p99 can be every second's or a few bad seconds'.
    pub p99_by_second: Vec<Option<i64>>,
    /// Fires without a planned instant (an admin that does not send the header), or of unknown jobs.
    pub unplanned: u64,
    pub foreign: u64,
}

/// Counts the fires of `fires` whose planned instant lies in `window_ms` against the grid. The window
/// must start and end on whole seconds after `grid.start_ms`, so every job has `seconds` instants in it.
pub fn analyse(grid: &Grid, window_ms: (i64, i64), fires: &[Fire]) -> FireAnalysis {
    let (from, to) = window_ms;
    let seconds = ((to - from) / 1000).max(0) as usize;
    let first_slot = (from - grid.start_ms).div_euclid(1000);
    // The first arrival per (job, instant), and how many arrived.
    let mut first_us = vec![i64::MAX; grid.jobs * seconds];
    let mut counts = vec![0u32; grid.jobs * seconds];
    let mut a = FireAnalysis {
        planned: counts.len() as u64,
        sent: 0,
        missing: 0,
        duplicates: 0,
        off_grid: 0,
        compensations: 0,
        within_threshold: 0,
        lateness: None,
        to_log_time: None,
        p99_by_second: Vec::new(),
        unplanned: 0,
        foreign: 0,
    };
    let mut lateness = Vec::new();
    let mut to_log_time = Vec::new();
    let mut by_second = vec![Vec::new(); seconds];
    for fire in fires {
        let Some(planned) = fire.planned_ms else {
            a.unplanned += 1;
            continue;
        };
        if !(from..to).contains(&planned) {
            continue;
        }
        let Some(index) = grid.index_of(fire.job_id) else {
            a.foreign += 1;
            continue;
        };
        a.sent += 1;
        a.compensations += u64::from(fire.misfire);
        let late_us = fire.at_us - planned * 1000;
        lateness.push(late_us);
        if let Some(second) = by_second.get_mut(((planned - from) / 1000) as usize) {
            second.push(late_us);
        }
        to_log_time.push((fire.log_date_time_ms - planned) * 1000);
        let since_start = planned - grid.start_ms - Grid::offset_ms(grid.phase, index, grid.jobs);
        if since_start.rem_euclid(1000) != 0 {
            a.off_grid += 1;
            continue;
        }
        let Ok(slot) = usize::try_from(since_start.div_euclid(1000) - first_slot) else { continue };
        if slot >= seconds {
            continue;
        }
        let at = index * seconds + slot;
        counts[at] += 1;
        first_us[at] = first_us[at].min(fire.at_us);
    }
    for (at, count) in counts.iter().enumerate() {
        if *count == 0 {
            a.missing += 1;
            continue;
        }
        a.duplicates += u64::from(count - 1);
        let (index, slot) = (at / seconds, at % seconds);
        let planned_ms =
            grid.start_ms + Grid::offset_ms(grid.phase, index, grid.jobs) + (first_slot + slot as i64) * 1000;
        if first_us[at] - planned_ms * 1000 <= MISFIRE_THRESHOLD_MS * 1000 {
            a.within_threshold += 1;
        }
    }
    a.lateness = Percentiles::of(lateness);
    a.p99_by_second = by_second.into_iter().map(|second| Percentiles::of(second).map(|p| p.p99)).collect();
    a.to_log_time = Percentiles::of(to_log_time);
    a
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Percentiles {
    pub p50: i64,
    pub p99: i64,
    pub max: i64,
}

impl Percentiles {
    pub fn of(mut values: Vec<i64>) -> Option<Percentiles> {
        values.sort_unstable();
        Some(Percentiles {
            p50: percentile(&values, 50.0)?,
            p99: percentile(&values, 99.0)?,
            max: *values.last()?,
        })
    }
}

/// Nearest-rank percentile of sorted values: the smallest value with at least `p` % of them at or below it.
pub fn percentile(sorted: &[i64], p: f64) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// Kernel clock ticks per second of `/proc/<pid>/stat`: USER_HZ is 100 on every Linux ABI we build for.
pub const USER_HZ: f64 = 100.0;

/// CPU time per trigger, in microseconds.
pub fn us_per_trigger(ticks: u64, triggers: u64) -> Option<f64> {
    (triggers > 0).then(|| ticks as f64 / USER_HZ * 1e6 / triggers as f64)
}

/// CPU time used over a wall-clock interval, as a percentage of one core.
pub fn cpu_percent(ticks: u64, elapsed_ms: i64) -> f64 {
    if elapsed_ms <= 0 {
        return 0.0;
    }
    ticks as f64 / USER_HZ * 1000.0 / elapsed_ms as f64 * 100.0
}

/// CPU ticks used between two snapshots, and the server's statement counters (MariaDB only).
#[derive(Debug, Clone, Default)]
pub struct Usage {
    pub elapsed_ms: i64,
    pub admin_ticks: Option<u64>,
    /// The database server's processes; none for SQLite, which runs inside the admin.
    pub db_ticks: Option<u64>,
    pub own_ticks: Option<u64>,
    /// All processes together, and time the cores sat waiting for I/O.
    pub machine_busy_ticks: Option<u64>,
    pub machine_iowait_ticks: Option<u64>,
    /// Counter deltas in the report's `COUNTERS` order; empty without a server.
    pub statements: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_by_phase() {
        let spread: Vec<i64> = (0..4).map(|i| Grid::offset_ms(Phase::Spread, i, 4)).collect();
        assert_eq!(spread, vec![0, 250, 500, 750]);
        assert_eq!(
            (0..3).map(|i| Grid::offset_ms(Phase::Spread, i, 3)).collect::<Vec<_>>(),
            vec![0, 333, 666]
        );
        assert_eq!((0..3).map(|i| Grid::offset_ms(Phase::Aligned, i, 3)).collect::<Vec<_>>(), vec![0, 0, 0]);
        let grid = Grid { start_ms: 0, jobs: 3, first_job_id: 1, phase: Phase::Spread };
        assert_eq!((grid.index_of(0), grid.index_of(3), grid.index_of(4)), (None, Some(2), None));
    }

    #[test]
    fn percentiles_use_nearest_rank() {
        let values: Vec<i64> = (1..=100).collect();
        assert_eq!(percentile(&values, 50.0), Some(50));
        assert_eq!(percentile(&values, 99.0), Some(99));
        assert_eq!(percentile(&values, 100.0), Some(100));
        assert_eq!(percentile(&[7], 99.0), Some(7));
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&[1, 2], 0.0), Some(1));
        let p = Percentiles::of(vec![5, 1, 3]).unwrap();
        assert_eq!(p, Percentiles { p50: 3, p99: 5, max: 5 });
        assert_eq!(Percentiles::of(vec![]), None);
    }

    /// A fire of `job_id` for the instant `planned_ms`, started `late_ms` later and received 0.5 ms after that.
    fn fire(job_id: i32, planned_ms: i64, late_ms: i64) -> Fire {
        Fire {
            job_id,
            at_us: (planned_ms + late_ms) * 1000 + 500,
            planned_ms: Some(planned_ms),
            misfire: false,
            log_date_time_ms: planned_ms + late_ms,
        }
    }

    #[test]
    fn aligned_fires_are_counted_by_planned_instant() {
        // Jobs 1 and 2 due at every whole second from 10 s; the window holds the instants 11 s and 12 s.
        let grid = Grid { start_ms: 10_000, jobs: 2, first_job_id: 1, phase: Phase::Aligned };
        let fires = [
            fire(1, 10_000, 0), // before the window
            fire(1, 11_000, 2),
            fire(2, 11_000, 40),
            fire(2, 11_000, 400),   // the same (job, instant) again
            fire(1, 12_000, 1_500), // late by more than a second: still the instant it stands for
            fire(1, 13_000, 0),     // after the window
            fire(9, 11_000, 0),     // unknown job
            Fire { planned_ms: None, ..fire(1, 12_000, 0) },
        ];
        let a = analyse(&grid, (11_000, 13_000), &fires);
        assert_eq!((a.planned, a.sent, a.missing, a.duplicates, a.off_grid), (4, 4, 1, 1, 0));
        assert_eq!((a.foreign, a.unplanned, a.compensations, a.within_threshold), (1, 1, 0, 3));
        assert_eq!(a.lateness, Some(Percentiles { p50: 40_500, p99: 1_500_500, max: 1_500_500 }));
        assert_eq!(a.to_log_time, Some(Percentiles { p50: 40_000, p99: 1_500_000, max: 1_500_000 }));
        assert_eq!(a.p99_by_second, vec![Some(400_500), Some(1_500_500)]);
    }

    #[test]
    fn spread_fires_off_their_grid_are_re_anchored() {
        // Two jobs at x.000 and x.500; job 2's fire of 11.5 s came late and FIX_RATE re-anchored it to 12.9 s.
        let grid = Grid { start_ms: 10_000, jobs: 2, first_job_id: 1, phase: Phase::Spread };
        let fires = [fire(1, 11_000, 1), fire(1, 12_000, 1), fire(2, 11_500, 400), fire(2, 12_900, 3)];
        let a = analyse(&grid, (11_000, 13_000), &fires);
        assert_eq!((a.planned, a.sent, a.missing, a.duplicates, a.off_grid), (4, 4, 1, 0, 1));
    }

    #[test]
    fn a_burst_counts_late_and_unsent_fires() {
        // Four jobs due once at 20 s: two on time, one 6 s late (past the misfire threshold), one never sent.
        let grid = Grid { start_ms: 20_000, jobs: 4, first_job_id: 100, phase: Phase::Aligned };
        let compensation = Fire { misfire: true, ..fire(102, 20_000, 6_000) };
        let fires = [fire(100, 20_000, 10), fire(101, 20_000, 4_999), compensation];
        let a = analyse(&grid, (20_000, 21_000), &fires);
        assert_eq!((a.planned, a.sent, a.missing, a.duplicates), (4, 3, 1, 0));
        assert_eq!((a.within_threshold, a.compensations), (2, 1));
        assert_eq!(a.lateness.map(|l| l.max), Some(6_000_500));
    }

    #[test]
    fn no_fires_means_everything_missing() {
        let grid = Grid { start_ms: 0, jobs: 3, first_job_id: 1, phase: Phase::Spread };
        let a = analyse(&grid, (5_000, 7_000), &[]);
        assert_eq!((a.planned, a.sent, a.missing, a.duplicates, a.lateness), (6, 0, 6, 0, None));
        assert_eq!(a.p99_by_second, vec![None, None]);
    }

    #[test]
    fn cpu_share_of_one_core_and_per_trigger() {
        assert_eq!(cpu_percent(100, 1000), 100.0);
        assert_eq!(cpu_percent(300, 2000), 150.0);
        assert_eq!(cpu_percent(5, 0), 0.0);
        // 1 s of CPU for 10,000 triggers: 100 µs each.
        assert_eq!(us_per_trigger(100, 10_000), Some(100.0));
        assert_eq!(us_per_trigger(100, 0), None);
    }
}
