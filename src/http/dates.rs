//! Dates as the Java admin's JSON writes them, for the console's views and the REST API's shapes alike.

use crate::time::Zone;
use chrono::{DateTime, NaiveDateTime, Utc};

/// `2018-11-03T14:21:31.000+00:00` for a stored wall-clock value, or null: ISO-8601 in UTC with
/// milliseconds, as Spring Boot's Jackson writes a date.
pub fn json_date(zone: Zone, value: Option<NaiveDateTime>) -> Option<String> {
    json_instant(zone.to_epoch_ms(value?))
}

/// An instant in epoch milliseconds (the workflow tables' times), written as [`json_date`] writes a date.
pub fn json_instant(ms: i64) -> Option<String> {
    let utc = DateTime::<Utc>::from_timestamp_millis(ms)?;
    Some(utc.format("%Y-%m-%dT%H:%M:%S%.3f+00:00").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_iso_with_millis() {
        let shanghai = Zone::Named(chrono_tz::Asia::Shanghai);
        let stored = NaiveDateTime::parse_from_str("2018-11-03 22:21:31", "%Y-%m-%d %H:%M:%S").unwrap();
        assert_eq!(json_date(shanghai, Some(stored)).as_deref(), Some("2018-11-03T14:21:31.000+00:00"));
        assert_eq!(json_date(shanghai, None), None);
        assert_eq!(json_instant(1_541_254_891_000).as_deref(), Some("2018-11-03T14:21:31.000+00:00"));
    }
}
