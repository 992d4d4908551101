//! Wall-clock conversions between epoch milliseconds and the DATETIME values the Java admin stores.
//!
//! The Java admin writes `java.util.Date` into DATETIME columns as the wall-clock time of the JDBC
//! `serverTimezone` (or the JVM zone) and MySQL rounds the milliseconds to whole seconds. Every value we
//! write or read goes through [`Zone`] so both admins agree on the same instants.

use chrono::{DateTime, Local, LocalResult, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;

/// A time zone: the process's own (like the JVM default) or a named IANA zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zone {
    System,
    Named(Tz),
}

impl Zone {
    pub fn from_option(tz: Option<Tz>) -> Zone {
        tz.map_or(Zone::System, Zone::Named)
    }

    /// The DATETIME value for an instant, rounded half-up to whole seconds as MySQL rounds fractional input.
    pub fn to_datetime(self, epoch_ms: i64) -> NaiveDateTime {
        let rounded = round_to_second(epoch_ms);
        let utc = DateTime::<Utc>::from_timestamp_millis(rounded).unwrap_or_default();
        match self {
            Zone::System => utc.with_timezone(&Local).naive_local(),
            Zone::Named(tz) => utc.with_timezone(&tz).naive_local(),
        }
    }

    /// The instant a stored DATETIME denotes. A wall-clock time that falls in a DST gap is moved forward
    /// by the gap (as `java.util.Calendar` does); an ambiguous one takes the earlier instant.
    pub fn to_epoch_ms(self, datetime: NaiveDateTime) -> i64 {
        match self {
            Zone::System => resolve(&Local, datetime),
            Zone::Named(tz) => resolve(&tz, datetime),
        }
    }

    /// Local midnight (00:00:00) of the day that is `days_offset` days from the day containing `epoch_ms`.
    pub fn start_of_day(self, epoch_ms: i64, days_offset: i64) -> NaiveDateTime {
        let today = self.to_naive_exact(epoch_ms).date();
        (today + chrono::Duration::days(days_offset)).and_hms_opt(0, 0, 0).unwrap_or_default()
    }

    /// The wall-clock time of an instant without any rounding.
    pub fn to_naive_exact(self, epoch_ms: i64) -> NaiveDateTime {
        let utc = DateTime::<Utc>::from_timestamp_millis(epoch_ms).unwrap_or_default();
        match self {
            Zone::System => utc.with_timezone(&Local).naive_local(),
            Zone::Named(tz) => utc.with_timezone(&tz).naive_local(),
        }
    }
}

fn resolve<Z: TimeZone>(zone: &Z, datetime: NaiveDateTime) -> i64 {
    match zone.from_local_datetime(&datetime) {
        LocalResult::Single(t) => t.timestamp_millis(),
        LocalResult::Ambiguous(earlier, _) => earlier.timestamp_millis(),
        LocalResult::None => {
            // Inside a DST gap: interpret with the offset in force just before the gap, which lands the
            // instant after the gap by the same amount, as a lenient Java calendar does.
            let before = datetime - chrono::Duration::hours(3);
            let offset_ms = match zone.from_local_datetime(&before) {
                LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => {
                    t.naive_local().and_utc().timestamp_millis() - t.timestamp_millis()
                }
                LocalResult::None => 0,
            };
            datetime.and_utc().timestamp_millis() - offset_ms
        }
    }
}

/// Rounds epoch milliseconds to the nearest whole second, halves up (MySQL's DATETIME rounding).
pub fn round_to_second(epoch_ms: i64) -> i64 {
    (epoch_ms + 500).div_euclid(1000) * 1000
}

/// Cron expressions are evaluated in the process's zone, as the JVM's default zone in 2.4.2.
pub const CRON_ZONE: Zone = Zone::System;

/// The source of "now", replaceable in tests of time-driven logic.
pub trait Clock: Send + Sync + 'static {
    fn now_ms(&self) -> i64;
}

#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        Utc::now().timestamp_millis()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn dt(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, mo, d).unwrap().and_hms_opt(h, mi, s).unwrap()
    }

    #[test]
    fn shanghai_wall_clock_matches_the_java_admin() {
        let zone = Zone::Named(chrono_tz::Asia::Shanghai);
        // 2018-11-03 22:21:31 in Shanghai is 14:21:31 UTC, the reference's sample row.
        let ms = zone.to_epoch_ms(dt(2018, 11, 3, 22, 21, 31));
        assert_eq!(ms, 1_541_254_891_000);
        assert_eq!(zone.to_datetime(ms), dt(2018, 11, 3, 22, 21, 31));
    }

    #[test]
    fn milliseconds_round_half_up_like_mysql() {
        let zone = Zone::Named(chrono_tz::UTC);
        assert_eq!(zone.to_datetime(1_000_499), zone.to_datetime(1_000_000));
        assert_eq!(zone.to_datetime(1_000_500), zone.to_datetime(1_001_000));
        assert_eq!(round_to_second(-1_500), -1_000);
    }

    #[test]
    fn dst_gap_moves_forward_and_overlap_takes_the_earlier_instant() {
        let berlin = Zone::Named(chrono_tz::Europe::Berlin);
        // 2024-03-31 02:30 does not exist in Berlin; it reads as 03:30 CEST = 01:30 UTC.
        let gap = berlin.to_epoch_ms(dt(2024, 3, 31, 2, 30, 0));
        assert_eq!(berlin.to_datetime(gap), dt(2024, 3, 31, 3, 30, 0));
        // 2024-10-27 02:30 happens twice; the first is 00:30 UTC.
        let overlap = berlin.to_epoch_ms(dt(2024, 10, 27, 2, 30, 0));
        assert_eq!(overlap, Utc.with_ymd_and_hms(2024, 10, 27, 0, 30, 0).unwrap().timestamp_millis());
    }

    #[test]
    fn start_of_day_is_local_midnight() {
        let zone = Zone::Named(chrono_tz::Asia::Shanghai);
        // 2024-01-01 16:30 UTC is 2024-01-02 00:30 in Shanghai.
        let ms = Utc.with_ymd_and_hms(2024, 1, 1, 16, 30, 0).unwrap().timestamp_millis();
        assert_eq!(zone.start_of_day(ms, 0), dt(2024, 1, 2, 0, 0, 0));
        assert_eq!(zone.start_of_day(ms, -2), dt(2023, 12, 31, 0, 0, 0));
    }
}
