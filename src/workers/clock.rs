//! One clock for the cluster: every admin measures how far its own clock is from the database server's
//! and decides "now" on the server's (see [`OffsetClock`]). Admins that each trusted their own clock would
//! fire early while one that runs ahead leads, and fire again when a slower one takes over (upstream
//! #370, #556); on one server's clock a hand-over changes nothing.

use crate::metrics::Metrics;
use crate::storage::{ClockReading, Db, Result};
use crate::time::{sleep_unless_cancelled, OffsetClock};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often the offset is measured again: a clock stepped by NTP is followed within this.
const MEASURE_EVERY: Duration = Duration::from_secs(10);
/// Round trips per measurement; the quickest says the most (its answer is the least delayed).
const SAMPLES: usize = 5;
/// A reading is known to within half its round trip, if the way there and the way back took as long; a
/// slow or lopsided link (a delaying proxy, a congested network) can put the server's reading anywhere in
/// it. Readings slower than this are not used: the offset measured before stays in force.
const TRUSTED_ROUND_TRIP_US: i64 = 20_000;
/// An offset beyond this is logged as a warning: the host's time service is not doing its work. Fires
/// are on time whatever the offset; the admin's own log lines carry its own clock.
pub const WARN_OFFSET_MS: i64 = 500;

/// One measurement: the server's clock minus this process's, and the round trip it was read in (the
/// offset is known within half of it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offset {
    pub offset_ms: i64,
    pub round_trip_us: i64,
}

/// Measures the offset (`None` on SQLite, whose clock is this process's, and when no reading came back
/// quickly enough to be trusted), from the quickest of a few round trips: the server read its clock between
/// the two local readings, taken as their midpoint.
pub async fn measure(db: &Db) -> Result<Option<Offset>> {
    let readings = db.server_clock_readings(SAMPLES).await?;
    Ok(best(&readings))
}

/// The offset the quickest reading gives, if it was quick enough.
fn best(readings: &[ClockReading]) -> Option<Offset> {
    let quickest = readings.iter().min_by_key(|r| r.round_trip_us)?;
    if quickest.round_trip_us > TRUSTED_ROUND_TRIP_US {
        tracing::debug!(
            "clock offset not measured: the quickest round trip took {} µs",
            quickest.round_trip_us
        );
        return None;
    }
    let offset_us = quickest.server_us - (quickest.sent_us + quickest.round_trip_us / 2);
    Some(Offset { offset_ms: offset_us.div_euclid(1000), round_trip_us: quickest.round_trip_us })
}

/// Keeps `clock` on the server's time until `shutdown`; the offset goes to the metrics and, when it is
/// large, to the log (once when it grows beyond [`WARN_OFFSET_MS`], once when it is back within).
/// `warned` says whether the measurement at start was beyond the threshold.
pub async fn run(
    db: Db,
    clock: Arc<OffsetClock>,
    metrics: Arc<Metrics>,
    mut warned: bool,
    shutdown: CancellationToken,
) {
    while sleep_unless_cancelled(&shutdown, MEASURE_EVERY).await {
        match measure(&db).await {
            Ok(Some(offset)) => warned = adopt(&clock, &metrics, offset, warned),
            Ok(None) if db.is_sqlite() => return,
            Ok(None) => {}
            // Kept as it was: a database that does not answer decides nothing meanwhile.
            Err(e) => tracing::debug!("clock offset not measured: {e}"),
        }
    }
}

/// Puts `offset` in force; returns whether it is beyond the warning threshold.
pub fn adopt(clock: &OffsetClock, metrics: &Metrics, offset: Offset, warned: bool) -> bool {
    clock.set_offset_ms(offset.offset_ms);
    metrics.clock_offset(-offset.offset_ms);
    let large = offset.offset_ms.abs() > WARN_OFFSET_MS;
    if large && !warned {
        tracing::warn!(
            "this host's clock is {} ms {} the database server's: this admin schedules on the server's clock, \
             but check the host's time service (NTP)",
            offset.offset_ms.abs(),
            if offset.offset_ms < 0 { "ahead of" } else { "behind" }
        );
    } else if !large && warned {
        tracing::info!("this host's clock is within {WARN_OFFSET_MS} ms of the database server's again");
    }
    large
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(sent_us: i64, round_trip_us: i64, server_us: i64) -> ClockReading {
        ClockReading { sent_us, round_trip_us, server_us }
    }

    #[test]
    fn the_quickest_reading_decides_and_a_slow_one_decides_nothing() {
        let readings = [reading(1_000_000, 9_000, 3_004_000), reading(2_000_000, 400, 4_000_200)];
        assert_eq!(best(&readings), Some(Offset { offset_ms: 2_000, round_trip_us: 400 }));
        let behind = [reading(5_000_000, 1_000, 2_000_500)];
        assert_eq!(best(&behind).map(|o| o.offset_ms), Some(-3_000));
        assert_eq!(best(&[reading(1_000_000, TRUSTED_ROUND_TRIP_US + 1, 9_000_000)]), None);
        assert_eq!(best(&[]), None);
    }
}
