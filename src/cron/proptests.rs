//! Random valid expressions against a brute-force matcher.
//!
//! The generator builds each expression as a small syntax tree and renders it, so the matcher can read
//! the meaning straight off the tree: a field matches a value if any item does. Like Quartz, the search
//! runs over local wall-clock time from the start's wall time (plus a second): the next fire time is
//! the first matching local second there, skipping days, hours and minutes that cannot match and
//! otherwise going second by second. A nonexistent local time never fires and an ambiguous one fires
//! in its later occurrence; so a start in the first occurrence of an overlap does not see the wall
//! times it has already passed again. That is Quartz's behaviour in zones whose clocks jump by a whole
//! hour (Australia/Lord_Howe's half-hour jump makes Quartz skip matches, see the unit tests).
//! The `W` rule is generated only with anchors every month has (up to the 28th, `L-27W`): past the end
//! of a short month Quartz's answer depends on where the search started (see the unit tests).

use std::ops::RangeInclusive;
use std::sync::OnceLock;

use chrono::{DateTime, Datelike, LocalResult, NaiveDate, TimeDelta, TimeZone, Utc};
use chrono_tz::Tz;
use proptest::prelude::*;

use super::CronExpression;

/// Expressions are parsed as if in this year: `*` in the year field then runs to 2125.
const THIS_YEAR: i32 = 2025;
/// How far the brute force looks; a schedule firing later must agree that nothing fires before.
const SEARCH_DAYS: u32 = 366 * 9;

const MONTHS: [&str; 12] =
    ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const WEEKDAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/// A field's numbers: a range that wraps counts on past `hi` from `lo`.
#[derive(Clone, Copy, Debug)]
struct Spec {
    lo: u32,
    hi: u32,
    /// The largest increment Quartz accepts.
    max_step: u32,
    names: &'static [&'static str],
}

const SECOND: Spec = Spec { lo: 0, hi: 59, max_step: 59, names: &[] };
const MINUTE: Spec = SECOND;
const HOUR: Spec = Spec { lo: 0, hi: 23, max_step: 23, names: &[] };
const DAY: Spec = Spec { lo: 1, hi: 31, max_step: 31, names: &[] };
const MONTH: Spec = Spec { lo: 1, hi: 12, max_step: 12, names: &MONTHS };
const WEEKDAY: Spec = Spec { lo: 1, hi: 7, max_step: 7, names: &WEEKDAYS };
/// `*` in the year field is 1970 up to the current year + 100; listed years are never wrapped.
const YEAR: Spec = Spec { lo: 1970, hi: THIS_YEAR as u32 + 100, max_step: 10, names: &[] };

#[derive(Clone, Debug)]
enum Item {
    All,
    Value(u32),
    Range(u32, u32),
    /// `a/n`, or `*/n` without a start.
    Step(Option<u32>, u32),
    RangeStep(u32, u32, u32),
}

impl Item {
    fn matches(&self, v: u32, spec: Spec) -> bool {
        let period = spec.hi - spec.lo + 1;
        // Position of `v` counting from `a`, wrapping at the end of the field.
        let offset = |a: u32| (v + period - a) % period;
        let span = |a: u32, b: u32| if a <= b { b - a } else { b + period - a };
        match *self {
            Item::All => true,
            Item::Value(a) => v == a,
            Item::Range(a, b) => offset(a) <= span(a, b),
            Item::Step(None, n) => (v - spec.lo) % n == 0,
            Item::Step(Some(a), n) => v >= a && (v - a) % n == 0,
            Item::RangeStep(a, b, n) => offset(a) <= span(a, b) && offset(a) % n == 0,
        }
    }
}

#[derive(Clone, Debug)]
struct Field {
    spec: Spec,
    items: Vec<Item>,
    /// Write single values and plain ranges as names where the field has them.
    names: bool,
    lower_case: bool,
}

impl Field {
    fn matches(&self, v: u32) -> bool {
        self.items.iter().any(|item| item.matches(v, self.spec))
    }

    fn value(&self, v: u32) -> String {
        match self.spec.names.get((v - self.spec.lo) as usize) {
            Some(name) if self.names && self.lower_case => name.to_lowercase(),
            Some(name) if self.names => name.to_string(),
            _ => v.to_string(),
        }
    }

    fn render(&self) -> String {
        let items: Vec<String> = self
            .items
            .iter()
            .map(|item| match *item {
                Item::All => "*".to_string(),
                Item::Value(a) => self.value(a),
                Item::Range(a, b) => format!("{}-{}", self.value(a), self.value(b)),
                // Quartz ignores a step after a name, so steps are always written with numbers.
                Item::Step(None, n) => format!("*/{n}"),
                Item::Step(Some(a), n) => format!("{a}/{n}"),
                Item::RangeStep(a, b, n) => format!("{a}-{b}/{n}"),
            })
            .collect();
        items.join(",")
    }
}

/// The day-of-month and day-of-week fields together: exactly one of them is `?`.
#[derive(Clone, Debug)]
enum DayRule {
    MonthDays(Field),
    /// `L-n`; `L` when n is 0.
    Last(u32),
    /// `nW`, anchored no later than the 28th so every month has the anchor.
    NearestWeekday(u32),
    /// `L-nW`; `LW` when n is 0.
    LastNearestWeekday(u32),
    WeekDays(Field),
    /// `nL`, written as a name or a number.
    LastWeekday(u32, bool),
    /// `n#k`.
    NthWeekday(u32, u32, bool),
}

impl DayRule {
    /// The day-of-month and day-of-week fields.
    fn render(&self) -> (String, String) {
        let weekday =
            |n: u32, named: bool| if named { WEEKDAYS[n as usize - 1].to_string() } else { n.to_string() };
        let last = |n: u32| if n == 0 { "L".to_string() } else { format!("L-{n}") };
        let any = || "?".to_string();
        match self {
            DayRule::MonthDays(field) => (field.render(), any()),
            DayRule::Last(n) => (last(*n), any()),
            DayRule::NearestWeekday(n) => (format!("{n}W"), any()),
            DayRule::LastNearestWeekday(n) => (format!("{}W", last(*n)), any()),
            DayRule::WeekDays(field) => (any(), field.render()),
            DayRule::LastWeekday(n, named) => (any(), format!("{}L", weekday(*n, *named))),
            DayRule::NthWeekday(n, k, named) => (any(), format!("{}#{k}", weekday(*n, *named))),
        }
    }

    fn matches(&self, date: NaiveDate) -> bool {
        let day = date.day();
        let last = last_day_of_month(date);
        let weekday = date.weekday().number_from_sunday();
        match self {
            DayRule::MonthDays(field) => field.matches(day),
            DayRule::Last(n) => day + n == last,
            DayRule::NearestWeekday(anchor) => nearest_weekday(date, *anchor) == day,
            DayRule::LastNearestWeekday(n) => nearest_weekday(date, last - n) == day,
            DayRule::WeekDays(field) => field.matches(weekday),
            DayRule::LastWeekday(n, _) => weekday == *n && day + 7 > last,
            DayRule::NthWeekday(n, k, _) => weekday == *n && (day - 1) / 7 + 1 == *k,
        }
    }
}

fn last_day_of_month(date: NaiveDate) -> u32 {
    (28..=31).rev().find(|&d| date.with_day(d).is_some()).expect("every month has a 28th")
}

/// The Monday-to-Friday day of `date`'s month nearest to day `anchor`, never leaving the month.
fn nearest_weekday(date: NaiveDate, anchor: u32) -> u32 {
    let last = last_day_of_month(date);
    match date.with_day(anchor).expect("anchor is in the month").weekday().number_from_sunday() {
        7 if anchor == 1 => 3,
        7 => anchor - 1,
        1 if anchor == last => anchor - 2,
        1 => anchor + 1,
        _ => anchor,
    }
}

#[derive(Clone, Debug)]
struct Expr {
    second: Field,
    minute: Field,
    hour: Field,
    days: DayRule,
    month: Field,
    year: Option<Field>,
}

impl Expr {
    fn render(&self) -> String {
        let (day_of_month, day_of_week) = self.days.render();
        let mut fields = vec![
            self.second.render(),
            self.minute.render(),
            self.hour.render(),
            day_of_month,
            self.month.render(),
            day_of_week,
        ];
        fields.extend(self.year.as_ref().map(Field::render));
        fields.join(" ")
    }

    fn day_matches(&self, date: NaiveDate) -> bool {
        let year_ok = match &self.year {
            Some(field) => field.matches(date.year() as u32),
            None => YEAR.lo <= date.year() as u32 && date.year() as u32 <= YEAR.hi,
        };
        year_ok && self.month.matches(date.month()) && self.days.matches(date)
    }
}

/// The first fire time after `after`, looking `SEARCH_DAYS` ahead; None if nothing is found.
fn brute_next<Z: TimeZone>(expr: &Expr, after: &DateTime<Z>) -> Option<DateTime<Z>> {
    let zone = after.timezone();
    // The next whole second, read on the local clock.
    let next_second = zone.timestamp_opt(after.timestamp() + 1, 0).single()?;
    let earliest = next_second.naive_local();
    let at = |date: NaiveDate, h: u32, m: u32, s: u32| date.and_hms_opt(h, m, s).expect("valid time of day");
    for date in earliest.date().iter_days().take(SEARCH_DAYS as usize).filter(|&d| expr.day_matches(d)) {
        for h in (0..24).filter(|&h| expr.hour.matches(h) && at(date, h, 59, 59) >= earliest) {
            for m in (0..60).filter(|&m| expr.minute.matches(m) && at(date, h, m, 59) >= earliest) {
                for s in (0..60).filter(|&s| expr.second.matches(s) && at(date, h, m, s) >= earliest) {
                    match zone.from_local_datetime(&at(date, h, m, s)) {
                        LocalResult::Single(fire) | LocalResult::Ambiguous(_, fire) => return Some(fire),
                        LocalResult::None => {}
                    }
                }
            }
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------------
// Strategies.

/// One list item with values drawn from `values` (a part of the field, to aim at interesting hours).
fn item(spec: Spec, values: RangeInclusive<u32>) -> impl Strategy<Value = Item> {
    let steps = 1..=spec.max_step;
    prop_oneof![
        1 => Just(Item::All),
        4 => values.clone().prop_map(Item::Value),
        3 => (values.clone(), values.clone()).prop_map(|(a, b)| Item::Range(a, b)),
        1 => steps.clone().prop_map(|n| Item::Step(None, n)),
        2 => (values.clone(), steps.clone()).prop_map(|(a, n)| Item::Step(Some(a), n)),
        2 => (values.clone(), values, steps).prop_map(|(a, b, n)| Item::RangeStep(a, b, n)),
    ]
}

fn field_from(spec: Spec, values: RangeInclusive<u32>) -> impl Strategy<Value = Field> {
    let items = prop::collection::vec(item(spec, values), 1..=3);
    (items, any::<bool>(), any::<bool>()).prop_map(move |(items, names, lower_case)| Field {
        spec,
        items,
        names,
        lower_case,
    })
}

fn field(spec: Spec) -> BoxedStrategy<Field> {
    field_from(spec, spec.lo..=spec.hi).boxed()
}

/// A single value, which keeps matches sparse enough to search for.
fn single(spec: Spec) -> BoxedStrategy<Field> {
    (spec.lo..=spec.hi)
        .prop_map(move |v| Field { spec, items: vec![Item::Value(v)], names: false, lower_case: false })
        .boxed()
}

fn year() -> impl Strategy<Value = Option<Field>> {
    let years = 2024..=2034u32;
    let item = prop_oneof![
        Just(Item::All),
        years.clone().prop_map(Item::Value),
        (years.clone(), 0..=6u32).prop_map(|(a, k)| Item::Range(a, a + k)),
        (years.clone(), 1..=4u32).prop_map(|(a, n)| Item::Step(Some(a), n)),
        (years, 0..=8u32, 1..=3u32).prop_map(|(a, k, n)| Item::RangeStep(a, a + k, n)),
    ];
    let field = prop::collection::vec(item, 1..=2).prop_map(|items| Field {
        spec: YEAR,
        items,
        names: false,
        lower_case: false,
    });
    prop::option::weighted(0.2, field)
}

fn day_rule() -> impl Strategy<Value = DayRule> {
    let weekday = 1..=7u32;
    prop_oneof![
        4 => field(DAY).prop_map(DayRule::MonthDays),
        1 => (0..=30u32).prop_map(DayRule::Last),
        1 => (1..=28u32).prop_map(DayRule::NearestWeekday),
        1 => (0..=27u32).prop_map(DayRule::LastNearestWeekday),
        4 => field(WEEKDAY).prop_map(DayRule::WeekDays),
        1 => (weekday.clone(), any::<bool>()).prop_map(|(n, named)| DayRule::LastWeekday(n, named)),
        1 => (weekday, 1..=5u32, any::<bool>()).prop_map(|(n, k, named)| DayRule::NthWeekday(n, k, named)),
    ]
}

/// An expression; `night` aims the hours at 0-4, where daylight saving switches happen.
fn expression(night: bool) -> impl Strategy<Value = Expr> {
    let hours = if night { field_from(HOUR, 0..=4).boxed() } else { field(HOUR) };
    let seconds = prop_oneof![2 => single(SECOND), 1 => field(SECOND)];
    (seconds, field(MINUTE), hours, day_rule(), field(MONTH), year()).prop_map(
        |(second, minute, hour, days, month, year)| Expr { second, minute, hour, days, month, year },
    )
}

/// Some instant in 2024-2030.
fn instant() -> impl Strategy<Value = i64> {
    let from = Utc.with_ymd_and_hms(2024, 1, 1, 0, 0, 0).unwrap().timestamp();
    let to = Utc.with_ymd_and_hms(2031, 1, 1, 0, 0, 0).unwrap().timestamp();
    from..to
}

const DST_ZONES: [Tz; 2] = [chrono_tz::Europe::Berlin, chrono_tz::America::New_York];

/// The instants (in seconds) at which each of `DST_ZONES` changes its offset in 2024-2030.
fn transitions(zone: usize) -> &'static [i64] {
    static ALL: OnceLock<Vec<Vec<i64>>> = OnceLock::new();
    &ALL.get_or_init(|| {
        DST_ZONES
            .iter()
            .map(|zone| {
                let offset = |t: i64| {
                    zone.timestamp_opt(t, 0).unwrap().naive_local()
                        - DateTime::from_timestamp(t, 0).unwrap().naive_utc()
                };
                let start = Utc.with_ymd_and_hms(2024, 1, 1, 0, 0, 0).unwrap().timestamp();
                let hours = (0..7 * 366 * 24).map(|h| start + h * 3600);
                hours.filter(|&t| offset(t) != offset(t - 3600)).collect()
            })
            .collect()
    })[zone]
}

// ---------------------------------------------------------------------------------------------------
// Properties.

fn cron(expr: &Expr) -> CronExpression {
    CronExpression::parse_in_year(&expr.render(), THIS_YEAR)
        .unwrap_or_else(|e| panic!("generated {:?} was rejected: {e}", expr.render()))
}

/// The implementation agrees with the brute force from `after`, and from just before its answer.
fn check<Z: TimeZone>(expr: &Expr, after: DateTime<Z>) -> Result<(), TestCaseError>
where
    Z::Offset: std::fmt::Display,
{
    let cron = cron(expr);
    let text = expr.render();
    let ours = cron.next_after(&after);
    match brute_next(expr, &after) {
        Some(expected) => prop_assert_eq!(ours.clone(), Some(expected), "{:?} after {}", text, after),
        // Nothing within the search window: we may only fire beyond it.
        None => prop_assert!(
            ours.as_ref().is_none_or(|t| t.naive_local().date()
                >= after.naive_local().date() + TimeDelta::days(i64::from(SEARCH_DAYS) - 2)),
            "{:?} after {}: brute force found nothing, we said {:?}",
            text,
            after,
            ours
        ),
    }
    if let Some(next) = ours {
        prop_assert!(next > after, "{:?}: {} is not after {}", text, next, after);
        let just_before = next.clone() - TimeDelta::seconds(1);
        prop_assert_eq!(
            cron.next_after(&just_before),
            Some(next.clone()),
            "{:?} after {}",
            text,
            just_before
        );
        prop_assert_eq!(next.timestamp_subsec_millis(), 0, "{:?}: fire times are whole seconds", text);
    }
    Ok(())
}

proptest! {
    // No regression files: a failure prints the expression and start, which belong in a unit test.
    #![proptest_config(ProptestConfig { cases: 2500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn next_fire_time_matches_brute_force_in_utc(expr in expression(false), at in instant()) {
        check(&expr, Utc.timestamp_opt(at, 0).unwrap())?;
    }

    #[test]
    fn next_fire_time_matches_brute_force_across_dst(
        expr in expression(true),
        zone in 0..DST_ZONES.len(),
        pick in any::<prop::sample::Index>(),
        shift in -4 * 3600..4 * 3600i64,
        millis in prop_oneof![Just(0u32), 1..1000u32],
    ) {
        let around = pick.get(transitions(zone)) + shift;
        check(&expr, DST_ZONES[zone].timestamp_opt(around, millis * 1_000_000).unwrap())?;
    }

    #[test]
    fn next_fire_time_matches_brute_force_in_a_dst_zone_any_time(
        expr in expression(false),
        zone in 0..DST_ZONES.len(),
        at in instant(),
    ) {
        check(&expr, DST_ZONES[zone].timestamp_opt(at, 0).unwrap())?;
    }
}

#[test]
fn dst_transitions_are_found() {
    // Two a year in each zone, or the DST property would test nothing interesting.
    for (index, zone) in DST_ZONES.iter().enumerate() {
        assert_eq!(transitions(index).len(), 14, "{zone}");
    }
}

#[test]
fn brute_force_matcher_reads_the_tree_like_quartz() {
    // Spot checks of the matcher itself against fire times Quartz gave for the same expressions.
    let wrap = Field { spec: WEEKDAY, items: vec![Item::Range(6, 2)], names: true, lower_case: true };
    assert_eq!(wrap.render(), "fri-mon");
    assert_eq!((1..=7).filter(|&d| wrap.matches(d)).collect::<Vec<_>>(), [1, 2, 6, 7]);
    let seconds =
        Field { spec: SECOND, items: vec![Item::RangeStep(50, 10, 7)], names: false, lower_case: false };
    assert_eq!((0..60).filter(|&s| seconds.matches(s)).collect::<Vec<_>>(), [4, 50, 57]);
    let date = |d: u32| NaiveDate::from_ymd_opt(2025, 2, d).unwrap();
    assert_eq!(nearest_weekday(date(1), 1), 3);
    assert!(DayRule::LastNearestWeekday(0).matches(date(28)));
    assert!(DayRule::NthWeekday(6, 3, true).matches(date(21)));
    assert!(DayRule::LastWeekday(5, false).matches(date(27)));
}
