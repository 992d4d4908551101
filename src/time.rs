//! Wall-clock conversions between epoch milliseconds and the DATETIME values the Java admin stores.
//!
//! The Java admin writes `java.util.Date` into DATETIME columns as the wall-clock time of the JDBC
//! `serverTimezone` (or the JVM zone) and MySQL rounds the milliseconds to whole seconds. Every value we
//! write or read goes through [`Zone`] so both admins agree on the same instants. Zone names are read
//! here too, in the spellings Connector/J and PostgreSQL accept.

use chrono::{DateTime, Local, LocalResult, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

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

/// This process's clock moved by an offset onto another one, the database server's: the admins of a
/// cluster then decide "now" on one clock, so that one whose own clock runs ahead fires nothing early and a
/// successor whose clock is behind fires nothing again (`crate::workers::clock` measures the offset).
#[derive(Debug, Default)]
pub struct OffsetClock {
    offset_ms: AtomicI64,
}

impl OffsetClock {
    /// The other clock's time minus this process's, as last measured.
    pub fn offset_ms(&self) -> i64 {
        self.offset_ms.load(Ordering::Relaxed)
    }

    pub fn set_offset_ms(&self, offset_ms: i64) {
        self.offset_ms.store(offset_ms, Ordering::Relaxed);
    }
}

impl Clock for OffsetClock {
    fn now_ms(&self) -> i64 {
        Utc::now().timestamp_millis() + self.offset_ms()
    }
}

/// Sleeps for `duration`; false when `stop` was cancelled meanwhile (it then returns at once) or by the end.
pub async fn sleep_unless_cancelled(stop: &CancellationToken, duration: Duration) -> bool {
    stop.run_until_cancelled(tokio::time::sleep(duration)).await.is_some() && !stop.is_cancelled()
}

/// An IANA name, a Java short ID (`CTT`), or an offset (`GMT+8`, `UTC+08:00`, `+8`); `LOCAL` and
/// `SERVER` mean the system zone (`None`).
pub(crate) fn parse_zone(zone: &str) -> Result<Option<Tz>, String> {
    let zone = zone.trim();
    if zone.eq_ignore_ascii_case("LOCAL") || zone.eq_ignore_ascii_case("SERVER") {
        return Ok(None);
    }
    if let Some(offset) = offset_zone(zone) {
        return offset.map(Some);
    }
    if let Some((_, iana)) = JAVA_SHORT_IDS.iter().find(|(id, _)| *id == zone) {
        return Ok(iana.parse().ok());
    }
    zone.parse::<Tz>()
        .ok()
        .or_else(|| chrono_tz::TZ_VARIANTS.iter().copied().find(|tz| tz.name().eq_ignore_ascii_case(zone)))
        .map(Some)
        .ok_or_else(|| format!("unknown time zone `{zone}`"))
}

/// `None` when `zone` is not written as an offset at all.
fn offset_zone(zone: &str) -> Option<Result<Tz, String>> {
    let upper = zone.to_ascii_uppercase();
    if upper == "Z" {
        return Some(Ok(Tz::UTC));
    }
    let signed = ["GMT", "UTC", "UT", ""]
        .iter()
        .find_map(|prefix| upper.strip_prefix(prefix).filter(|rest| rest.starts_with(['+', '-'])))?;
    let (negative, digits) = (signed.starts_with('-'), &signed[1..]);
    let (hours, minutes) = match digits.split_once(':') {
        Some((h, m)) => (h, m),
        None if digits.len() == 4 => digits.split_at(2),
        None => (digits, "0"),
    };
    let parsed = (1..=2)
        .contains(&hours.len())
        .then(|| hours.parse::<i32>().ok().zip(minutes.parse::<i32>().ok()))
        .flatten();
    let Some((hours, minutes)) = parsed.filter(|(h, m)| *h <= 18 && *m < 60) else {
        return Some(Err(format!("`{zone}` is not a valid offset")));
    };
    if minutes != 0 {
        return Some(Err(format!(
            "offset `{zone}` is not whole hours; name the zone instead (e.g. Asia/Kolkata)"
        )));
    }
    let hours = if negative { -hours } else { hours };
    if hours == 0 {
        return Some(Ok(Tz::UTC));
    }
    // POSIX `Etc/` zones count the other way: UTC+8 is Etc/GMT-8.
    let name = format!("Etc/GMT{}{}", if hours > 0 { '-' } else { '+' }, hours.abs());
    Some(name.parse().map_err(|_| format!("offset `{zone}` is outside -12..+14 hours")))
}

/// `java.util.TimeZone`'s three-letter IDs, which Connector/J accepts (`CST` is Chicago there too).
const JAVA_SHORT_IDS: &[(&str, &str)] = &[
    ("ACT", "Australia/Darwin"),
    ("AET", "Australia/Sydney"),
    ("AGT", "America/Argentina/Buenos_Aires"),
    ("ART", "Africa/Cairo"),
    ("AST", "America/Anchorage"),
    ("BET", "America/Sao_Paulo"),
    ("BST", "Asia/Dhaka"),
    ("CAT", "Africa/Harare"),
    ("CNT", "America/St_Johns"),
    ("CST", "America/Chicago"),
    ("CTT", "Asia/Shanghai"),
    ("EAT", "Africa/Addis_Ababa"),
    ("ECT", "Europe/Paris"),
    ("IET", "America/Indiana/Indianapolis"),
    ("IST", "Asia/Kolkata"),
    ("JST", "Asia/Tokyo"),
    ("MIT", "Pacific/Apia"),
    ("NET", "Asia/Yerevan"),
    ("NST", "Pacific/Auckland"),
    ("PLT", "Asia/Karachi"),
    ("PNT", "America/Phoenix"),
    ("PRT", "America/Puerto_Rico"),
    ("PST", "America/Los_Angeles"),
    ("SST", "Pacific/Guadalcanal"),
    ("VST", "Asia/Ho_Chi_Minh"),
];

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

    #[test]
    fn zone_spellings() {
        let zone = |name: &str| name.parse::<Tz>().unwrap();
        let z = |s: &str| parse_zone(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(z("Asia/Shanghai"), Some(zone("Asia/Shanghai")));
        assert_eq!(z("asia/shanghai"), Some(zone("Asia/Shanghai")));
        assert_eq!(z("CTT"), Some(zone("Asia/Shanghai")));
        assert_eq!(z("CST"), Some(zone("America/Chicago")));
        for east8 in ["GMT+8", "GMT+08", "GMT+08:00", "GMT+0800", "UTC+8", "+08:00", "+8", "utc+8"] {
            assert_eq!(z(east8), Some(zone("Etc/GMT-8")), "{east8}");
        }
        assert_eq!(z("GMT-5"), Some(zone("Etc/GMT+5")));
        assert_eq!(z("UTC+14"), Some(zone("Etc/GMT-14")));
        assert_eq!(z("GMT+0"), Some(Tz::UTC));
        assert_eq!(z("Z"), Some(Tz::UTC));
        assert_eq!(z("server"), None);
        assert!(parse_zone("+05:30").unwrap_err().contains("whole hours"));
        assert!(parse_zone("GMT+15").unwrap_err().contains("outside"));
        assert!(parse_zone("GMT+x").is_err());
        assert!(parse_zone("Nowhere").is_err());
    }
}
