//! The arithmetic of the report: the planned fire grid, lateness, missed and duplicate fires,
//! percentiles and CPU shares.

/// The planned fires: job `index` of `jobs` (id `first_job_id + index`) fires at
/// `phase(index) + k·1000 ms`, the phases spread evenly over the second that begins at `start_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    pub start_ms: i64,
    pub jobs: usize,
    pub first_job_id: i32,
}

impl Grid {
    /// Must agree with the `trigger_next_time` expression of `db::activate`.
    pub fn phase_ms(&self, index: usize) -> i64 {
        self.start_ms + (index as i64 * 1000) / self.jobs as i64
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
    /// `TriggerParam.logDateTime`: when the admin began this trigger's log row.
    pub log_date_time_ms: i64,
}

/// How the fires of a window compare with the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FireAnalysis {
    /// Job-seconds planned in the window: jobs × seconds.
    pub planned: u64,
    /// Fires attributed to a job-second of the window.
    pub fires: u64,
    /// Job-seconds with no fire.
    pub missed: u64,
    /// Fires beyond the first of their job-second.
    pub duplicates: u64,
    /// Lateness of every attributed fire, in microseconds.
    pub lateness: Option<Percentiles>,
    /// The admin's part of it: planned instant → `logDateTime` (wheel, lane queue, loading job and group).
    pub to_log_time: Option<Percentiles>,
    /// Fires of jobs the grid does not know (should be none).
    pub foreign: u64,
}

/// How far the admin may start triggers out of their planned order (concurrent triggers finish their
/// job and group loads in any order).
const REORDER_TOLERANCE_US: i64 = 500_000;

/// Attributes each fire to one planned instant of its job (its job-second) and measures the lateness
/// from there. Attributing a fire to the second it arrives in would wrap every delay into 0–1 s once the
/// admin falls behind, so fires are followed in the order the admin started them (`logDateTime`): the
/// wheel releases them in planned order and the lanes are queues, so planned instants advance with
/// that order. A fire goes to the first job-second of its job after the one it last fired for and not
/// before the planned instants being processed (less [`REORDER_TOLERANCE_US`]); if that instant is later
/// than the fire's start (the wheel never fires early), the fire repeats an earlier job-second and goes
/// to the latest one at or before its start. `window_ms` must span whole seconds, so every job has the
/// same number of job-seconds in it.
pub fn analyse(grid: &Grid, window_ms: (i64, i64), fires: &[Fire]) -> FireAnalysis {
    let (from, to) = window_ms;
    let seconds = ((to - from) / 1000).max(0) as usize;
    let mut counts = vec![0u8; grid.jobs * seconds];
    let mut lateness = Vec::with_capacity(fires.len());
    let mut to_log_time = Vec::with_capacity(fires.len());
    let mut foreign = 0;
    let mut in_start_order: Vec<&Fire> = fires.iter().collect();
    in_start_order.sort_by_key(|f| (f.log_date_time_ms, f.at_us));
    let mut last_slot: Vec<Option<i64>> = vec![None; grid.jobs];
    let mut processing_us: Option<i64> = None;
    for fire in in_start_order {
        let Some(index) = grid.index_of(fire.job_id) else {
            foreign += 1;
            continue;
        };
        let phase_us = grid.phase_ms(index) * 1000;
        let started_us = fire.log_date_time_ms * 1000;
        let latest_started = (started_us - phase_us).div_euclid(1_000_000);
        let after_last = last_slot[index].map(|k| k + 1);
        let not_before = processing_us.map(|p| (p - REORDER_TOLERANCE_US - phase_us + 999_999).div_euclid(1_000_000));
        // Job-second 0 is the first: the jobs were started on the grid.
        let k = match after_last.max(not_before).map(|k| k.max(0)) {
            // A repeat: no job-second it could be the next fire of had come yet.
            Some(next) if next > latest_started => latest_started,
            next => {
                let k = next.unwrap_or(latest_started);
                last_slot[index] = Some(k);
                k
            }
        };
        let planned_us = phase_us + k * 1_000_000;
        processing_us = processing_us.max(Some(planned_us));
        if planned_us < from * 1000 || planned_us >= to * 1000 {
            continue;
        }
        let slot = ((planned_us - from * 1000) / 1_000_000) as usize;
        let count = &mut counts[index * seconds + slot];
        *count = count.saturating_add(1);
        lateness.push(fire.at_us - planned_us);
        to_log_time.push(started_us - planned_us);
    }
    let missed = counts.iter().filter(|c| **c == 0).count() as u64;
    let duplicates = counts.iter().map(|c| u64::from(c.saturating_sub(1))).sum();
    FireAnalysis {
        planned: counts.len() as u64,
        fires: lateness.len() as u64,
        missed,
        duplicates,
        lateness: Percentiles::of(lateness),
        to_log_time: Percentiles::of(to_log_time),
        foreign,
    }
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
        Some(Percentiles { p50: percentile(&values, 50.0)?, p99: percentile(&values, 99.0)?, max: *values.last()? })
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

/// CPU time used over a wall-clock interval, as a percentage of one core.
pub fn cpu_percent(ticks: u64, elapsed_ms: i64) -> f64 {
    if elapsed_ms <= 0 {
        return 0.0;
    }
    ticks as f64 / USER_HZ * 1000.0 / elapsed_ms as f64 * 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_spread_over_one_second() {
        let grid = Grid { start_ms: 10_000, jobs: 4, first_job_id: 100 };
        let phases: Vec<i64> = (0..4).map(|i| grid.phase_ms(i)).collect();
        assert_eq!(phases, vec![10_000, 10_250, 10_500, 10_750]);
        let grid = Grid { start_ms: 0, jobs: 3, first_job_id: 1 };
        assert_eq!((0..3).map(|i| grid.phase_ms(i)).collect::<Vec<_>>(), vec![0, 333, 666]);
        assert_eq!(grid.index_of(0), None);
        assert_eq!(grid.index_of(3), Some(2));
        assert_eq!(grid.index_of(4), None);
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

    /// A fire of the job-second planned at `planned_ms`, started `late_ms` later and received 0.5 ms after that.
    fn fire(job_id: i32, planned_ms: i64, late_ms: i64) -> Fire {
        Fire { job_id, at_us: (planned_ms + late_ms) * 1000 + 500, log_date_time_ms: planned_ms + late_ms }
    }

    #[test]
    fn lateness_is_measured_from_the_job_second() {
        // Job 1 fires at 10.000 s + k, job 2 at 10.500 s + k; the window is [11 s, 13 s).
        let grid = Grid { start_ms: 10_000, jobs: 2, first_job_id: 1 };
        let fires = [
            fire(1, 10_000, 0), // before the window
            fire(2, 10_500, 1),
            fire(1, 11_000, 2),
            fire(1, 12_000, 1),
            fire(2, 11_500, 40),
            fire(2, 11_500, 400), // the same job-second again
            fire(2, 12_500, 999),
            fire(1, 13_000, 0),   // after the window
            fire(9, 11_000, 0),   // unknown job
        ];
        let a = analyse(&grid, (11_000, 13_000), &fires);
        assert_eq!((a.planned, a.fires, a.missed, a.duplicates, a.foreign), (4, 5, 0, 1, 1));
        assert_eq!(a.lateness, Some(Percentiles { p50: 40_500, p99: 999_500, max: 999_500 }));
        assert_eq!(a.to_log_time, Some(Percentiles { p50: 40_000, p99: 999_000, max: 999_000 }));
    }

    #[test]
    fn a_backlog_growing_past_a_second_is_measured_not_wrapped() {
        // 100 jobs 10 ms apart; every trigger starts 0.3 s later per second elapsed, up to 3 s late.
        let grid = Grid { start_ms: 0, jobs: 100, first_job_id: 1 };
        let fires: Vec<Fire> = (0..10)
            .flat_map(|k| (0..100).map(move |i| (k, i)))
            .map(|(k, i)| {
                let planned = grid.phase_ms(i) + k * 1000;
                fire(i as i32 + 1, planned, planned * 3 / 10)
            })
            .collect();
        let a = analyse(&grid, (0, 10_000), &fires);
        assert_eq!((a.planned, a.fires, a.missed, a.duplicates), (1_000, 1_000, 0, 0));
        assert_eq!(a.lateness.map(|l| l.max), Some(2_997_500));
    }

    #[test]
    fn a_queue_of_clustered_fires_is_followed() {
        // Only the first 60 of 1,000 jobs fire (phases 0–59 ms); the admin starts 30 triggers a second
        // in planned order, half the rate they are planned at.
        let grid = Grid { start_ms: 0, jobs: 1_000, first_job_id: 1 };
        let mut fires = Vec::new();
        let mut free_at = 0;
        let mut true_max = 0;
        for k in 0..10 {
            for i in 0..60 {
                let planned = grid.phase_ms(i) + k * 1000;
                let start = free_at.max(planned);
                free_at = start + 1000 / 30;
                true_max = true_max.max(start - planned);
                fires.push(fire(i as i32 + 1, planned, start - planned));
            }
        }
        let a = analyse(&grid, (0, 10_000), &fires);
        assert_eq!((a.planned, a.fires, a.missed, a.duplicates), (10_000, 600, 9_400, 0));
        assert_eq!(a.to_log_time.map(|l| l.max), Some(true_max * 1000));
        assert!(true_max > 9_000, "the test must build a backlog of several seconds");
    }

    #[test]
    fn missed_and_duplicate_job_seconds() {
        let grid = Grid { start_ms: 0, jobs: 1, first_job_id: 1 };
        let fires = [fire(1, 0, 3), fire(1, 1_000, 3), fire(1, 1_000, 200), fire(1, 3_000, 5)];
        let a = analyse(&grid, (0, 4_000), &fires);
        assert_eq!((a.planned, a.fires, a.missed, a.duplicates), (4, 4, 1, 1));
    }

    #[test]
    fn no_fires_means_everything_missed() {
        let grid = Grid { start_ms: 0, jobs: 3, first_job_id: 1 };
        let a = analyse(&grid, (5_000, 7_000), &[]);
        assert_eq!((a.planned, a.fires, a.missed, a.duplicates, a.lateness), (6, 0, 6, 0, None));
    }

    #[test]
    fn cpu_share_of_one_core() {
        assert_eq!(cpu_percent(100, 1000), 100.0);
        assert_eq!(cpu_percent(300, 2000), 150.0);
        assert_eq!(cpu_percent(5, 0), 0.0);
    }
}
