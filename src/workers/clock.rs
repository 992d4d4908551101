//! One clock for the cluster: every admin measures how far its own clock is from the database server's
//! and decides "now" on the server's (see [`OffsetClock`]). Admins that each trusted their own clock would
//! fire early while one that runs ahead leads, and fire again when a slower one takes over (upstream
//! #370, #556); on one server's clock a hand-over changes nothing.

use crate::metrics::Metrics;
use crate::storage::{Db, Result};
use crate::time::{sleep_unless_cancelled, OffsetClock};
use chrono::Utc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How often the offset is measured again: a clock stepped by NTP is followed within this.
const MEASURE_EVERY: Duration = Duration::from_secs(10);
/// Round trips per measurement; the quickest says the most (its answer is the least delayed).
const SAMPLES: usize = 5;
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

/// Measures the offset (`None` on SQLite, whose clock is this process's), from the quickest of a few
/// round trips: the server read its clock between the two local readings, taken as their midpoint.
pub async fn measure(db: &Db) -> Result<Option<Offset>> {
    let mut best: Option<(i64, i64)> = None;
    for _ in 0..SAMPLES {
        let before_us = Utc::now().timestamp_micros();
        let started = Instant::now();
        let Some(server_us) = db.server_clock_us().await? else { return Ok(None) };
        let round_trip_us = started.elapsed().as_micros().min(i64::MAX as u128) as i64;
        let offset_us = server_us - (before_us + round_trip_us / 2);
        if best.is_none_or(|(quickest, _)| round_trip_us < quickest) {
            best = Some((round_trip_us, offset_us));
        }
    }
    Ok(best.map(|(round_trip_us, offset_us)| Offset { offset_ms: offset_us.div_euclid(1000), round_trip_us }))
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
            Ok(None) => return,
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
