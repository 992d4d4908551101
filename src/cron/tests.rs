//! Unit tests, one feature at a time. Every expected fire time and every rejection below was checked
//! against Quartz 2.3.2 with tools/quartz-oracle; where Quartz surprises, the comment says so.

use chrono::{NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;

use super::{CronError, CronExpression, CronField};

/// Parse as if it were this year, so `*` in the year field and the 100-year horizon are fixed.
const THIS_YEAR: i32 = 2025;

fn cron(expr: &str) -> CronExpression {
    CronExpression::parse_in_year(expr, THIS_YEAR).unwrap_or_else(|e| panic!("{expr:?} was rejected: {e}"))
}

fn rejected(expr: &str) -> CronError {
    match CronExpression::parse_in_year(expr, THIS_YEAR) {
        Ok(_) => panic!("{expr:?} was accepted, Quartz rejects it"),
        Err(e) => e,
    }
}

fn local(text: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S").expect("yyyy-mm-dd HH:MM:SS")
}

/// Up to `n` successive fire times strictly after the local time `from` in `zone`, as local times
/// with their UTC offset, which is what tells the two occurrences of an ambiguous time apart.
fn fires_in(zone: Tz, expr: &str, from: &str, n: usize) -> Vec<String> {
    let cron = cron(expr);
    let mut at = zone.from_local_datetime(&local(from)).single().expect("start is not in a DST switch");
    let mut out = Vec::new();
    while out.len() < n {
        let Some(next) = cron.next_after(&at) else { break };
        out.push(next.format("%Y-%m-%d %H:%M:%S%:z").to_string());
        at = next;
    }
    out
}

/// Up to `n` fire times in UTC, with the weekday, which makes the day rules readable.
fn fires(expr: &str, from: &str, n: usize) -> Vec<String> {
    let cron = cron(expr);
    let mut at = Utc.from_utc_datetime(&local(from));
    let mut out = Vec::new();
    while out.len() < n {
        let Some(next) = cron.next_after(&at) else { break };
        out.push(next.format("%a %Y-%m-%d %H:%M:%S").to_string());
        at = next;
    }
    out
}

fn next(expr: &str, from: &str) -> Option<String> {
    fires(expr, from, 1).pop()
}

// ---------------------------------------------------------------------------------------------------
// Fields, lists, ranges and steps.

#[test]
fn every_second_and_strictly_after() {
    assert_eq!(
        fires("* * * * * ?", "2025-01-01 00:00:00", 3),
        ["Wed 2025-01-01 00:00:01", "Wed 2025-01-01 00:00:02", "Wed 2025-01-01 00:00:03"]
    );
    // A start on a fire time does not fire again, and milliseconds are dropped from the result.
    let cron = cron("0 0 12 * * ?");
    let noon = Utc.with_ymd_and_hms(2025, 1, 1, 12, 0, 0).unwrap();
    assert_eq!(cron.next_after(&noon), Some(noon + chrono::TimeDelta::days(1)));
    let just_before = noon - chrono::TimeDelta::milliseconds(1);
    assert_eq!(cron.next_after(&just_before), Some(noon));
}

#[test]
fn fixed_time_of_day() {
    assert_eq!(
        fires("0 15 10 * * ?", "2025-01-01 10:15:00", 2),
        ["Thu 2025-01-02 10:15:00", "Fri 2025-01-03 10:15:00"]
    );
    assert_eq!(next("0 15 10 * * ?", "2025-01-01 10:14:59"), Some("Wed 2025-01-01 10:15:00".into()));
}

#[test]
fn lists() {
    assert_eq!(
        fires("0 10,44 14 ? 3 WED", "2025-01-01 00:00:00", 3),
        ["Wed 2025-03-05 14:10:00", "Wed 2025-03-05 14:44:00", "Wed 2025-03-12 14:10:00"]
    );
    assert_eq!(
        fires("0 0 0 1,15,31 * ?", "2025-02-01 00:00:00", 3),
        ["Sat 2025-02-15 00:00:00", "Sat 2025-03-01 00:00:00", "Sat 2025-03-15 00:00:00"]
    );
}

#[test]
fn ranges() {
    assert_eq!(
        fires("0 0-2 14 * * ?", "2025-01-01 00:00:00", 4),
        [
            "Wed 2025-01-01 14:00:00",
            "Wed 2025-01-01 14:01:00",
            "Wed 2025-01-01 14:02:00",
            "Thu 2025-01-02 14:00:00"
        ]
    );
    assert_eq!(
        fires("0 0 0 ? * MON-FRI", "2025-01-03 12:00:00", 2),
        ["Mon 2025-01-06 00:00:00", "Tue 2025-01-07 00:00:00"]
    );
}

#[test]
fn ranges_wrap_around() {
    assert_eq!(
        fires("0 0 22-2 * * ?", "2025-01-01 03:00:00", 6),
        [
            "Wed 2025-01-01 22:00:00",
            "Wed 2025-01-01 23:00:00",
            "Thu 2025-01-02 00:00:00",
            "Thu 2025-01-02 01:00:00",
            "Thu 2025-01-02 02:00:00",
            "Thu 2025-01-02 22:00:00"
        ]
    );
    assert_eq!(
        fires("0 0 0 ? * FRI-MON", "2025-01-01 00:00:00", 5),
        [
            "Fri 2025-01-03 00:00:00",
            "Sat 2025-01-04 00:00:00",
            "Sun 2025-01-05 00:00:00",
            "Mon 2025-01-06 00:00:00",
            "Fri 2025-01-10 00:00:00"
        ]
    );
    assert_eq!(
        fires("0 50-10 * * * ?", "2025-01-01 00:10:00", 2),
        ["Wed 2025-01-01 00:50:00", "Wed 2025-01-01 00:51:00"]
    );
    assert_eq!(
        fires("0 0 0 25-5 * ?", "2025-02-27 12:00:00", 3),
        ["Fri 2025-02-28 00:00:00", "Sat 2025-03-01 00:00:00", "Sun 2025-03-02 00:00:00"]
    );
    assert_eq!(
        fires("0 0 0 1 NOV-FEB ?", "2025-02-15 00:00:00", 3),
        ["Sat 2025-11-01 00:00:00", "Mon 2025-12-01 00:00:00", "Thu 2026-01-01 00:00:00"]
    );
}

#[test]
fn steps() {
    assert_eq!(
        fires("0/15 * * * * ?", "2025-01-01 00:00:00", 5),
        [
            "Wed 2025-01-01 00:00:15",
            "Wed 2025-01-01 00:00:30",
            "Wed 2025-01-01 00:00:45",
            "Wed 2025-01-01 00:01:00",
            "Wed 2025-01-01 00:01:15"
        ]
    );
    assert_eq!(
        fires("5/20 * * * * ?", "2025-01-01 00:00:00", 4),
        [
            "Wed 2025-01-01 00:00:05",
            "Wed 2025-01-01 00:00:25",
            "Wed 2025-01-01 00:00:45",
            "Wed 2025-01-01 00:01:05"
        ]
    );
    // `/n` alone starts at the field's first value, like `*/n`.
    assert_eq!(
        fires("/20 * * * * ?", "2025-01-01 00:00:00", 2),
        fires("*/20 * * * * ?", "2025-01-01 00:00:00", 2)
    );
    assert_eq!(
        fires("0 0 0 1-20/6 * ?", "2025-01-01 00:00:00", 4),
        [
            "Tue 2025-01-07 00:00:00",
            "Mon 2025-01-13 00:00:00",
            "Sun 2025-01-19 00:00:00",
            "Sat 2025-02-01 00:00:00"
        ]
    );
    // A stepped range that wraps keeps counting past the end: 50, 57, then 4 of the next minute.
    assert_eq!(
        fires("50-10/7 * * * * ?", "2025-01-01 00:00:00", 3),
        ["Wed 2025-01-01 00:00:04", "Wed 2025-01-01 00:00:50", "Wed 2025-01-01 00:00:57"]
    );
}

#[test]
fn zero_and_oversized_steps_are_lenient() {
    // Quartz 2.3.2 has no lower bound on an increment: `5/0` is just 5 and `*/0` every second.
    assert_eq!(
        fires("5/0 * * * * ?", "2025-01-01 00:00:00", 2),
        ["Wed 2025-01-01 00:00:05", "Wed 2025-01-01 00:01:05"]
    );
    assert_eq!(fires("*/0 * * * * ?", "2025-01-01 00:00:00", 1), ["Wed 2025-01-01 00:00:01"]);
    // A range's increment is not limited at all; only its start is reachable.
    assert_eq!(fires("0-59/70 * * * * ?", "2025-01-01 00:00:00", 1), ["Wed 2025-01-01 00:01:00"]);
}

#[test]
fn month_and_weekday_names_in_any_case() {
    let upper = fires("0 0 0 ? JAN,MAR MON-FRI", "2025-01-30 12:00:00", 3);
    assert_eq!(upper, ["Fri 2025-01-31 00:00:00", "Mon 2025-03-03 00:00:00", "Tue 2025-03-04 00:00:00"]);
    assert_eq!(fires("0 0 0 ? jan,Mar mon-fRi", "2025-01-30 12:00:00", 3), upper);
    // Numbers and names mean the same: 1 = SUN ... 7 = SAT.
    assert_eq!(fires("0 0 0 ? 1,3 2-6", "2025-01-30 12:00:00", 3), upper);
    assert_eq!(fires("0 0 0 ? * 1", "2025-01-01 00:00:00", 1), ["Sun 2025-01-05 00:00:00"]);
    assert_eq!(fires("0 0 0 ? * 7", "2025-01-01 00:00:00", 1), ["Sat 2025-01-04 00:00:00"]);
}

#[test]
fn tabs_and_extra_spaces_separate_fields() {
    let plain = fires("0 0 12 * * ?", "2025-01-01 00:00:00", 2);
    assert_eq!(fires("  0\t0  12 * *\t?  ", "2025-01-01 00:00:00", 2), plain);
}

// ---------------------------------------------------------------------------------------------------
// Day-of-month specials.

#[test]
fn last_day_of_month() {
    assert_eq!(
        fires("0 0 0 L * ?", "2024-01-31 00:00:00", 3),
        ["Thu 2024-02-29 00:00:00", "Sun 2024-03-31 00:00:00", "Tue 2024-04-30 00:00:00"]
    );
}

#[test]
fn days_before_the_last() {
    assert_eq!(
        fires("0 0 0 L-3 * ?", "2025-01-15 12:00:00", 3),
        ["Tue 2025-01-28 00:00:00", "Tue 2025-02-25 00:00:00", "Fri 2025-03-28 00:00:00"]
    );
    // L-30 only exists in 31-day months, where it is the 1st.
    assert_eq!(
        fires("0 0 0 L-30 * ?", "2025-01-15 12:00:00", 3),
        ["Sat 2025-03-01 00:00:00", "Thu 2025-05-01 00:00:00", "Tue 2025-07-01 00:00:00"]
    );
}

#[test]
fn nearest_weekday() {
    assert_eq!(
        fires("0 0 0 15W * ?", "2025-01-15 12:00:00", 5),
        [
            "Fri 2025-02-14 00:00:00", // the 15th is a Saturday
            "Fri 2025-03-14 00:00:00", // Saturday again
            "Tue 2025-04-15 00:00:00",
            "Thu 2025-05-15 00:00:00",
            "Mon 2025-06-16 00:00:00" // the 15th is a Sunday
        ]
    );
}

#[test]
fn nearest_weekday_stays_in_the_month() {
    // February 2025 starts on a Saturday: not Friday the 31st of January, but Monday the 3rd.
    assert_eq!(next("0 0 0 1W * ?", "2025-01-15 00:00:00"), Some("Mon 2025-02-03 00:00:00".into()));
    // 31 August 2025 is a Sunday: not Monday 1 September, but Friday the 29th.
    assert_eq!(next("0 0 0 31W * ?", "2025-08-01 00:00:00"), Some("Fri 2025-08-29 00:00:00".into()));
}

#[test]
fn nearest_weekday_past_the_end_of_a_short_month() {
    // Quartz reads "29 February 2025" leniently as Saturday 1 March. Searching from within February,
    // the weekday nearest to it is Friday the 28th; arriving from January, the walk moves to the anchor
    // day itself, which is in March, so February gets no fire time.
    assert_eq!(next("0 0 0 29W * ?", "2025-02-01 00:00:00"), Some("Fri 2025-02-28 00:00:00".into()));
    assert_eq!(
        fires("0 0 0 29W * ?", "2025-01-30 00:00:00", 2),
        ["Fri 2025-03-28 00:00:00", "Tue 2025-04-29 00:00:00"]
    );
    assert_eq!(next("0 0 0 30W * ?", "2025-02-01 00:00:00"), Some("Mon 2025-03-31 00:00:00".into()));
    // 30-day months have no 31W at all.
    assert_eq!(
        fires("0 0 0 31W * ?", "2025-03-31 00:00:00", 2),
        ["Fri 2025-05-30 00:00:00", "Thu 2025-07-31 00:00:00"]
    );
    // In a leap year the 29th exists.
    assert_eq!(next("0 0 0 29W * ?", "2028-02-01 00:00:00"), Some("Tue 2028-02-29 00:00:00".into()));
}

#[test]
fn last_weekday_of_month() {
    assert_eq!(
        fires("0 0 0 LW * ?", "2025-04-30 00:00:00", 3),
        [
            "Fri 2025-05-30 00:00:00", // the 31st is a Saturday
            "Mon 2025-06-30 00:00:00",
            "Thu 2025-07-31 00:00:00"
        ]
    );
    assert_eq!(next("0 0 0 LW * ?", "2025-08-01 00:00:00"), Some("Fri 2025-08-29 00:00:00".into()));
    // L-3W: the weekday nearest three days before the end (Sunday 27 April 2025 moves to Monday).
    assert_eq!(next("0 0 0 L-3W * ?", "2025-04-01 00:00:00"), Some("Mon 2025-04-28 00:00:00".into()));
}

#[test]
fn day_that_only_some_months_have() {
    assert_eq!(
        fires("0 0 0 31 * ?", "2025-01-31 00:00:00", 3),
        ["Mon 2025-03-31 00:00:00", "Sat 2025-05-31 00:00:00", "Thu 2025-07-31 00:00:00"]
    );
    assert_eq!(
        fires("0 0 0 29 2 ?", "2025-01-01 00:00:00", 2),
        ["Tue 2028-02-29 00:00:00", "Sun 2032-02-29 00:00:00"]
    );
}

// ---------------------------------------------------------------------------------------------------
// Day-of-week specials.

#[test]
fn last_given_weekday_of_month() {
    assert_eq!(
        fires("0 0 0 ? * 5L", "2025-01-15 12:00:00", 3),
        ["Thu 2025-01-30 00:00:00", "Thu 2025-02-27 00:00:00", "Thu 2025-03-27 00:00:00"]
    );
    assert_eq!(
        fires("0 0 0 ? * FRIL", "2025-01-15 12:00:00", 2),
        ["Fri 2025-01-31 00:00:00", "Fri 2025-02-28 00:00:00"]
    );
    // `L` alone in day-of-week is Saturday, every Saturday.
    assert_eq!(
        fires("0 0 0 ? * L", "2025-01-01 00:00:00", 2),
        ["Sat 2025-01-04 00:00:00", "Sat 2025-01-11 00:00:00"]
    );
}

#[test]
fn nth_weekday_of_month() {
    assert_eq!(
        fires("0 0 0 ? * 6#3", "2025-01-15 12:00:00", 3),
        ["Fri 2025-01-17 00:00:00", "Fri 2025-02-21 00:00:00", "Fri 2025-03-21 00:00:00"]
    );
    assert_eq!(fires("0 0 0 ? * MON#2", "2025-01-01 00:00:00", 1), ["Mon 2025-01-13 00:00:00"]);
    // Months without a fifth Monday are skipped.
    assert_eq!(
        fires("0 0 0 ? * 2#5", "2025-01-15 12:00:00", 3),
        ["Mon 2025-03-31 00:00:00", "Mon 2025-06-30 00:00:00", "Mon 2025-09-29 00:00:00"]
    );
}

// ---------------------------------------------------------------------------------------------------
// The year field.

#[test]
fn year_field_limits_the_schedule() {
    assert_eq!(fires("0 0 0 1 1 ? 2027", "2025-06-01 00:00:00", 2), ["Fri 2027-01-01 00:00:00"]);
    assert_eq!(
        fires("0 0 0 1 1 ? 2026-2028", "2025-06-01 00:00:00", 4),
        ["Thu 2026-01-01 00:00:00", "Fri 2027-01-01 00:00:00", "Sat 2028-01-01 00:00:00"]
    );
    assert_eq!(
        fires("0 0 0 1 1 ? 2030/5", "2025-06-01 00:00:00", 2),
        ["Tue 2030-01-01 00:00:00", "Mon 2035-01-01 00:00:00"]
    );
}

#[test]
fn schedule_ends_after_its_last_year() {
    assert_eq!(next("0 0 0 1 1 ? 2026", "2026-01-01 00:00:00"), None);
    assert_eq!(next("0 0 0 * * ? 2024", "2025-01-01 00:00:00"), None);
    // A listed year is kept as it is, even one before 1970.
    assert_eq!(next("0 0 0 1 1 ? 1969", "1960-01-01 00:00:00"), Some("Wed 1969-01-01 00:00:00".into()));
}

#[test]
fn star_year_reaches_a_hundred_years_ahead() {
    assert_eq!(next("0 0 0 1 1 ? *", "2124-06-01 00:00:00"), Some("Mon 2125-01-01 00:00:00".into()));
    assert_eq!(next("0 0 0 1 1 ? *", "2125-06-01 00:00:00"), None);
}

// ---------------------------------------------------------------------------------------------------
// `?`: exactly one of day-of-month and day-of-week.

#[test]
fn question_mark_in_exactly_one_day_field() {
    cron("0 0 0 ? * MON");
    cron("0 0 0 1 * ?");
    assert_eq!(rejected("0 0 0 * * *"), CronError::BothDaysSpecified);
    assert_eq!(rejected("0 0 0 1 * 2"), CronError::BothDaysSpecified);
    assert_eq!(rejected("0 0 0 LW * 2"), CronError::BothDaysSpecified);
    assert_eq!(rejected("0 0 0 1 * 2#1"), CronError::BothDaysSpecified);
    assert_eq!(rejected("0 0 0 ? * ?"), CronError::BothDaysUnspecified);
}

#[test]
fn question_mark_outside_the_day_fields() {
    for expr in ["? 0 0 * * ?", "0 ? 0 * * ?", "0 0 ? * * ?", "0 0 0 ? ? *", "0 0 0 1 ? ?"] {
        assert!(matches!(rejected(expr), CronError::Field { .. }), "{expr}");
    }
}

#[test]
fn question_mark_reads_one_character_further() {
    // Quartz only looks at the character right after `?`.
    assert_eq!(fires("0 0 0 ?X * 2", "2025-01-15 12:00:00", 1), ["Mon 2025-01-20 00:00:00"]);
    rejected("0 0 0 ?XY * 2");
}

// ---------------------------------------------------------------------------------------------------
// Lenient leftovers Quartz accepts.

#[test]
fn trailing_characters_quartz_ignores() {
    let daily = fires("0 0 0 ? * *", "2025-01-01 00:00:00", 2);
    for expr in
        ["0 0 0 ? * * *x", "0 0 0 ? * * *", "0 0 0 ? * *X", "0X 0 0 ? * *", "0 0 0 ? * * 2025 trailing words"]
    {
        assert_eq!(fires(expr, "2025-01-01 00:00:00", 2), daily, "{expr}");
    }
    assert_eq!(fires("0 0 0 ? * MONX", "2025-01-01 00:00:00", 1), ["Mon 2025-01-06 00:00:00"]);
    assert_eq!(fires("0 0 0 1 1 ? 2030x", "2025-01-01 00:00:00", 1), ["Tue 2030-01-01 00:00:00"]);
}

#[test]
fn steps_after_names_are_ignored() {
    assert_eq!(
        fires("0 0 0 ? * MON/2", "2025-01-01 00:00:00", 2),
        fires("0 0 0 ? * MON", "2025-01-01 00:00:00", 2)
    );
    assert_eq!(
        fires("0 0 0 ? JAN-MAR/2 *", "2025-01-01 00:00:00", 3),
        fires("0 0 0 ? JAN-MAR *", "2025-01-01 00:00:00", 3)
    );
}

#[test]
fn digits_of_other_scripts_where_java_parses_the_number() {
    // Quartz hands increments, the `#` count and the first digit after `-` or `/` to Java's number
    // parsing, which reads any script's digits (fullwidth `１`, Arabic-Indic `٣`); where it scans
    // digits itself, only ASCII ones count.
    let from = "2025-01-01 00:00:00";
    assert_eq!(fires("*/１５ * * * * ?", from, 3), fires("*/15 * * * * ?", from, 3));
    assert_eq!(fires("5/１0 * * * * ?", from, 3), fires("5/10 * * * * ?", from, 3));
    assert_eq!(fires("1-１5/１0 * * * * ?", from, 3), fires("1-15/10 * * * * ?", from, 3));
    assert_eq!(fires("0 0 0 ? * 2#٣", from, 3), fires("0 0 0 ? * 2#3", from, 3));
    assert_eq!(fires("0 0 0 1 1 ? */５", from, 2), ["Tue 2030-01-01 00:00:00", "Mon 2035-01-01 00:00:00"]);
    for expr in
        ["１ * * * * ?", "5/1５ * * * * ?", "5/１５ * * * * ?", "0 0 0 1 1 ? ２０３０", "0 0 0 L-１ * ?"]
    {
        rejected(expr);
    }
}

#[test]
fn fields_that_end_up_empty_never_fire() {
    // Quartz accepts these, then throws when asked for a fire time.
    assert_eq!(next("0 L 0 * * ?", "2025-01-01 00:00:00"), None);
    assert_eq!(next("0 0 0 ? L *", "2025-01-01 00:00:00"), None);
}

#[test]
fn zero_nearest_weekday_gives_up_where_quartz_loops() {
    assert_eq!(next("0 0 0 0W * ?", "2025-01-01 00:00:00"), None);
}

// ---------------------------------------------------------------------------------------------------
// Rejections.

#[test]
fn too_few_fields() {
    assert_eq!(rejected(""), CronError::MissingFields { found: 0 });
    assert_eq!(rejected(" \t "), CronError::MissingFields { found: 0 });
    assert_eq!(rejected("* * * * *"), CronError::MissingFields { found: 5 });
    assert_eq!(rejected("0 0 0 ?"), CronError::MissingFields { found: 4 });
}

#[test]
fn values_out_of_range() {
    let cases = [
        ("60 * * * * ?", CronField::Second),
        ("0 60 * * * ?", CronField::Minute),
        ("0 0 24 * * ?", CronField::Hour),
        ("0 0 0 0 * ?", CronField::DayOfMonth),
        ("0 0 0 32 * ?", CronField::DayOfMonth),
        ("0 0 0 1-32 * ?", CronField::DayOfMonth),
        ("0 0 0 1,,32 * ?", CronField::DayOfMonth),
        ("0 0 0 ? 0 *", CronField::Month),
        ("0 0 0 ? 13 *", CronField::Month),
        ("0 0 0 ? * 0", CronField::DayOfWeek),
        ("0 0 0 ? * 8", CronField::DayOfWeek),
        ("0 0 0 ? * 1-8", CronField::DayOfWeek),
        ("99999999999 * * * * ?", CronField::Second),
    ];
    for (expr, field) in cases {
        assert!(matches!(rejected(expr), CronError::Field { field: f, .. } if f == field), "{expr}");
    }
}

#[test]
fn increments_too_large() {
    for expr in [
        "*/60 * * * * ?",
        "0 */60 * * * ?",
        "0 0 */24 * * ?",
        "0 0 0 */32 * ?",
        "0 0 0 ? */13 *",
        "0 0 0 ? * */8",
    ] {
        rejected(expr);
    }
    cron("*/59 * * * * ?");
    cron("0 0 0 */31 * ?");
}

#[test]
fn specials_in_the_wrong_place_or_form() {
    for expr in [
        "0 0 0 L-31 * ?",    // offset over 30
        "0 0 0 L- * ?",      // no offset
        "0 0 0 32W * ?",     // W past 31
        "0 0 0 5L * ?",      // nL is for weekdays
        "0 0 0 ? * 1W",      // W is for days of the month
        "5W * * * * ?",      // ... and only there
        "0 0 5#1 * * ?",     // # is for weekdays
        "0 0 0 ? * 8L",      // weekday out of range
        "0 0 0 ? * 6#6",     // nth out of range
        "0 0 0 ? * 6#0",     // ... at either end
        "0 0 0 ? * 2#",      // ... or missing
        "0 0 0 ? * 2#1x",    // Quartz parses everything after # as the number
        "0 0 0 ? * 2#1,4#2", // only one nth weekday
        "0 0 0 L,5 * ?",     // L cannot be listed with other days
        "0 0 0 ? * 6L,2",    // ... nor nL with other weekdays
    ] {
        rejected(expr);
    }
}

#[test]
fn malformed_tokens() {
    for expr in [
        "a * * * * ?",
        "-5 * * * * ?",
        "1- * * * * ?",
        "/ * * * * ?",
        "*/ * * * * ?",
        "5/ * * * * ?",
        "*/5x * * * * ?",
        "0 0 0 ? FOO *",
        "0 0 0 ? MON *",
        "0 0 0 ? * JAN",
        "0 0 0 ? * MON-FOO",
        "0 0 0 ? JA *",
        "0 0 0 ? * * x",
        "0 0 0 ??? * 2",
        "0 0 0 1 1 ? 2030-2025",
    ] {
        rejected(expr);
    }
}

#[test]
fn rejection_messages_name_the_field_and_column() {
    let message = rejected("0 0 0 ? * 8").to_string();
    assert!(message.contains("day-of-week field '8'") && message.contains("column 11"), "{message}");
}

// ---------------------------------------------------------------------------------------------------
// Time zones and daylight saving.

#[test]
fn fires_in_local_time() {
    let shanghai: Tz = "Asia/Shanghai".parse().unwrap();
    assert_eq!(fires_in(shanghai, "0 0 9 * * ?", "2025-01-01 10:00:00", 1), ["2025-01-02 09:00:00+08:00"]);
}

#[test]
fn berlin_spring_gap_skips_missing_times() {
    // 30 March 2025, 02:00 CET becomes 03:00 CEST. Quartz does not fire at 02:30 nor move it to 03:30.
    let berlin = chrono_tz::Europe::Berlin;
    assert_eq!(
        fires_in(berlin, "0 30 2 * * ?", "2025-03-30 00:00:00", 2),
        ["2025-03-31 02:30:00+02:00", "2025-04-01 02:30:00+02:00"]
    );
    assert_eq!(
        fires_in(berlin, "0 0 * * * ?", "2025-03-30 00:00:00", 3),
        ["2025-03-30 01:00:00+01:00", "2025-03-30 03:00:00+02:00", "2025-03-30 04:00:00+02:00"]
    );
}

#[test]
fn berlin_autumn_overlap_fires_once_in_the_later_occurrence() {
    // 26 October 2025, 03:00 CEST becomes 02:00 CET: 02:00-02:59 happens twice, Quartz fires in the second.
    let berlin = chrono_tz::Europe::Berlin;
    assert_eq!(
        fires_in(berlin, "0 30 2 * * ?", "2025-10-26 00:00:00", 2),
        ["2025-10-26 02:30:00+01:00", "2025-10-27 02:30:00+01:00"]
    );
    assert_eq!(
        fires_in(berlin, "0 0 * * * ?", "2025-10-26 00:00:00", 3),
        ["2025-10-26 01:00:00+02:00", "2025-10-26 02:00:00+01:00", "2025-10-26 03:00:00+01:00"]
    );
}

#[test]
fn new_york_switches() {
    let new_york = chrono_tz::America::New_York;
    // 9 March 2025: 02:00 EST becomes 03:00 EDT.
    assert_eq!(fires_in(new_york, "0 30 2 * * ?", "2025-03-09 00:00:00", 1), ["2025-03-10 02:30:00-04:00"]);
    assert_eq!(
        fires_in(new_york, "0 30 1 * * ?", "2025-03-09 00:00:00", 2),
        ["2025-03-09 01:30:00-05:00", "2025-03-10 01:30:00-04:00"]
    );
    // 2 November 2025: 02:00 EDT becomes 01:00 EST.
    assert_eq!(
        fires_in(new_york, "0 */30 * * * ?", "2025-11-02 00:00:00", 4),
        [
            "2025-11-02 00:30:00-04:00",
            "2025-11-02 01:00:00-05:00",
            "2025-11-02 01:30:00-05:00",
            "2025-11-02 02:00:00-05:00"
        ]
    );
}

#[test]
fn lord_howe_half_hour_gap() {
    // 5 October 2025: 02:00 +10:30 becomes 02:30 +11:00. Times in the gap are pushed past it by the walk,
    // so a minute list still fires after the gap that day, but a single time in the gap does not.
    let lord_howe = chrono_tz::Australia::Lord_Howe;
    assert_eq!(
        fires_in(lord_howe, "0 */10 2 * * ?", "2025-10-05 00:00:00", 4),
        [
            "2025-10-05 02:30:00+11:00",
            "2025-10-05 02:40:00+11:00",
            "2025-10-05 02:50:00+11:00",
            "2025-10-06 02:00:00+11:00"
        ]
    );
    assert_eq!(
        fires_in(lord_howe, "0 0,35 2 * * ?", "2025-10-05 00:00:00", 2),
        ["2025-10-05 02:35:00+11:00", "2025-10-06 02:00:00+11:00"]
    );
    assert_eq!(fires_in(lord_howe, "0 15 2 * * ?", "2025-10-05 00:00:00", 1), ["2025-10-06 02:15:00+11:00"]);
    assert_eq!(fires_in(lord_howe, "0 45 2 * * ?", "2025-10-05 00:00:00", 1), ["2025-10-05 02:45:00+11:00"]);
}

#[test]
fn lord_howe_gap_can_hide_a_time_that_exists() {
    // After 01:35 Quartz tries 02:10, which does not exist and is pushed half an hour on to 02:40; so
    // 02:35, which does exist, is never looked at. Only an hour field that starts the search at 02:00
    // reaches it.
    let lord_howe = chrono_tz::Australia::Lord_Howe;
    assert_eq!(
        fires_in(lord_howe, "0 10,35 * * * ?", "2025-10-05 01:00:00", 3),
        ["2025-10-05 01:10:00+10:30", "2025-10-05 01:35:00+10:30", "2025-10-05 03:10:00+11:00"]
    );
    assert_eq!(
        fires_in(lord_howe, "0 10,35 2 * * ?", "2025-10-05 01:00:00", 1),
        ["2025-10-05 02:35:00+11:00"]
    );
}

#[test]
fn lord_howe_half_hour_overlap() {
    // 6 April 2025: 02:00 +11:00 becomes 01:30 +10:30, so 01:30-01:59 happens twice.
    let lord_howe = chrono_tz::Australia::Lord_Howe;
    assert_eq!(
        fires_in(lord_howe, "0 */20 1 * * ?", "2025-04-06 00:00:00", 4),
        [
            "2025-04-06 01:00:00+11:00",
            "2025-04-06 01:20:00+11:00",
            "2025-04-06 01:40:00+10:30",
            "2025-04-07 01:00:00+10:30"
        ]
    );
    assert_eq!(
        fires_in(lord_howe, "0 45 1 * * ?", "2025-04-06 00:00:00", 2),
        ["2025-04-06 01:45:00+10:30", "2025-04-07 01:45:00+10:30"]
    );
}

#[test]
fn start_inside_an_overlap_is_an_instant_not_a_wall_time() {
    // From the first 02:10 of Berlin's overlap (00:10 UTC), the next 02:15 is the second one.
    let berlin = chrono_tz::Europe::Berlin;
    let first_0210 = Utc.with_ymd_and_hms(2025, 10, 26, 0, 10, 0).unwrap().with_timezone(&berlin);
    let next = cron("0 15 2 * * ?").next_after(&first_0210).expect("fires");
    assert_eq!(next.format("%Y-%m-%d %H:%M:%S%:z").to_string(), "2025-10-26 02:15:00+01:00");
}

// ---------------------------------------------------------------------------------------------------
// The public surface.

#[test]
fn parse_display_and_validity() {
    let expr: CronExpression = "0 0 12 * * ?".parse().expect("valid");
    assert_eq!(expr.to_string(), "0 0 12 * * ?");
    assert_eq!(expr.source(), "0 0 12 * * ?");
    assert!(CronExpression::is_valid("0 0 12 ? * MON-FRI 2030"));
    assert!(!CronExpression::is_valid("0 0 12 * * MON"));
}
