//! What a parsed expression matches, and Quartz's walk through the calendar to the next fire time.

use std::collections::HashSet;

use chrono::{
    DateTime, Datelike, Months, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, TimeZone, Timelike,
};

use super::zone;

/// Weekday numbers as cron writes them: 1 = Sunday ... 7 = Saturday.
const SUNDAY: i32 = 1;
const SATURDAY: i32 = 7;

/// A set of small non-negative numbers (seconds, minutes, hours, days, months, weekdays).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Bits(u64);

impl Bits {
    pub(super) const EMPTY: Bits = Bits(0);

    pub(super) fn of(values: impl IntoIterator<Item = u32>) -> Bits {
        Bits(values.into_iter().filter(|&v| v < 64).fold(0, |acc, v| acc | 1 << v))
    }

    pub(super) fn is_empty(self) -> bool {
        self.0 == 0
    }

    fn contains(self, v: u32) -> bool {
        v < 64 && self.0 & (1 << v) != 0
    }

    /// The smallest member `>= from`.
    fn first_from(self, from: u32) -> Option<u32> {
        let rest = if from >= 64 { 0 } else { self.0 & (u64::MAX << from) };
        (rest != 0).then(|| rest.trailing_zeros())
    }

    /// The smallest member; only asked of non-empty sets.
    fn min(self) -> u32 {
        self.0.trailing_zeros()
    }
}

/// Which days the day-of-month or day-of-week field selects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum DayRule {
    /// A fixed set of days in each month.
    Days(DaySet),
    /// `nW`, `LW` and `L-nW`: the Monday-to-Friday day nearest to the anchor. Unlike the other rules,
    /// Quartz checks this one against the search start rather than the calendar position, which makes it
    /// skip or revisit days in ways no per-day test captures.
    NearestWeekday(Anchor),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum DaySet {
    /// Listed days of the month (`1,15`, `10-20`, `*`).
    MonthDays(Bits),
    /// `L` and `L-n`: the last day of the month, or `offset` days before it.
    LastDay { offset: i32 },
    /// Listed weekdays (`MON-FRI`, `1,7`).
    WeekDays(Bits),
    /// `nL`: the last such weekday of the month.
    LastWeekday(i32),
    /// `n#k`: the k-th such weekday of the month.
    NthWeekday { weekday: i32, nth: i32 },
}

/// The day a `W` rule starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Anchor {
    /// A day number; 0 and days past the end of a short month count on from the month's 1st.
    Day(i32),
    /// This many days before the last day of the month.
    BeforeLast(i32),
}

/// A month, with the calendar facts the day rules need.
struct Month {
    first: NaiveDate,
    days: i32,
    /// Weekday of the 1st, 1 = Sunday.
    first_weekday: i32,
}

impl Month {
    fn of(date: NaiveDate) -> Month {
        let first = date.with_day(1).expect("every month has a 1st");
        let next =
            first.checked_add_months(Months::new(1)).expect("dates searched are far from chrono's limits");
        Month {
            first,
            days: next.signed_duration_since(first).num_days() as i32,
            first_weekday: first.weekday().number_from_sunday() as i32,
        }
    }

    /// Day `day` of this month, counting past either end as a lenient calendar does (day 0 is the
    /// previous month's last day).
    fn day(&self, day: i32) -> NaiveDate {
        self.first + TimeDelta::days(i64::from(day) - 1)
    }

    /// Day `day` of the following month, leniently.
    fn next_month_day(&self, day: i32) -> NaiveDate {
        Month::of(self.day(self.days + 1)).day(day)
    }

    fn weekday(&self, day: i32) -> i32 {
        (self.first_weekday - 1 + day - 1).rem_euclid(7) + 1
    }

    fn days_matching(&self, mut keep: impl FnMut(i32) -> bool) -> u32 {
        (1..=self.days).filter(|&d| keep(d)).fold(0, |acc, d| acc | 1 << d)
    }

    fn only(&self, day: i32) -> u32 {
        if (1..=self.days).contains(&day) {
            1 << day
        } else {
            0
        }
    }
}

impl DaySet {
    /// The days of `month` in the set, as bit `d` for day `d`.
    fn days_in(&self, month: &Month) -> u32 {
        match *self {
            DaySet::MonthDays(days) => month.days_matching(|d| days.contains(d as u32)),
            DaySet::LastDay { offset } => month.only(month.days - offset),
            DaySet::WeekDays(weekdays) => month.days_matching(|d| weekdays.contains(month.weekday(d) as u32)),
            DaySet::LastWeekday(weekday) => {
                month.only(month.days - (month.weekday(month.days) - weekday).rem_euclid(7))
            }
            DaySet::NthWeekday { weekday, nth } => {
                month.only(1 + (weekday - month.first_weekday).rem_euclid(7) + 7 * (nth - 1))
            }
        }
    }

    /// The day Quartz moves to when the rest of a month has no match: the first listed day of the
    /// next month for plain days of the month (even when that month is too short for it), else the 1st.
    fn next_month_landing(&self) -> i32 {
        match *self {
            DaySet::MonthDays(days) => days.first_from(0).map_or(1, |d| d as i32),
            _ => 1,
        }
    }
}

/// Quartz's nearest-weekday step: a Saturday moves back to Friday unless it is the 1st (then on to
/// Monday the 3rd), a Sunday moves on to Monday unless it is the last day (then back to Friday). The
/// anchor's weekday is taken leniently, so an anchor past the month's end can still land inside it.
fn nearest_weekday(month: &Month, day: i32) -> i32 {
    match month.weekday(day) {
        SATURDAY if day == 1 => day + 2,
        SATURDAY => day - 1,
        SUNDAY if day == month.days => day - 2,
        SUNDAY => day + 1,
        _ => day,
    }
}

/// Everything an expression matches, field by field.
#[derive(Clone, Debug)]
pub(super) struct Schedule {
    pub(super) seconds: Bits,
    pub(super) minutes: Bits,
    pub(super) hours: Bits,
    pub(super) days: DayRule,
    /// Months 1-12.
    pub(super) months: Bits,
    /// Ascending.
    pub(super) years: Vec<i32>,
    /// The latest year Quartz would ever fire in: the current year when parsed + 100.
    pub(super) max_year: i32,
}

/// What the walk does from a calendar position.
enum Step {
    /// Every field matches: fire here.
    Fire,
    /// Move to this local time (which may not exist) and look again.
    MoveTo(NaiveDateTime),
    /// The schedule has ended.
    End,
}

impl Schedule {
    /// The first fire time at or after `start` in `start`'s zone, in a year no later than `last_year`.
    ///
    /// Quartz walks the local calendar one field at a time, seconds first: when a field does not match
    /// it moves to that field's next value with the finer fields reset, and lets `java.util.Calendar`
    /// place the result in the zone. Landing in a DST gap pushes the position forward, which can step
    /// over matches (in a 30-minute gap, 02:10 lands on 02:40 and 02:35 is never seen), so the walk is
    /// reproduced step by step rather than computed as "the first matching local time".
    pub(super) fn next_fire<Tz: TimeZone>(
        &self,
        start: &DateTime<Tz>,
        last_year: i32,
    ) -> Option<DateTime<Tz>> {
        if [self.seconds, self.minutes, self.hours, self.months].iter().any(|bits| bits.is_empty()) {
            return None;
        }
        let tz = start.timezone();
        let start_second = start.timestamp();
        let before_start =
            |wall: NaiveDateTime| zone::resolve(&tz, wall).is_some_and(|at| at.timestamp() < start_second);
        // Only the W rule moves backwards or stays put (`0W` keeps sending the walk to the day it is on);
        // coming back to where such a move began means Quartz would go round for ever.
        let mut backward_from = HashSet::new();
        let mut wall = start.naive_local();
        while wall.year() <= last_year {
            match self.step(wall, &before_start) {
                Step::Fire => return zone::resolve(&tz, wall),
                Step::End => return None,
                Step::MoveTo(target) => {
                    if target <= wall && !backward_from.insert(wall) {
                        return None;
                    }
                    wall = zone::resolve(&tz, target)?.naive_local();
                }
            }
        }
        None
    }

    fn step(&self, wall: NaiveDateTime, before_start: &dyn Fn(NaiveDateTime) -> bool) -> Step {
        let date = wall.date();
        let (hour, minute, second) = (wall.hour(), wall.minute(), wall.second());
        let at =
            |date: NaiveDate, h: u32, m: u32, s: u32| date.and_hms_opt(h, m, s).expect("valid time of day");
        if !self.seconds.contains(second) {
            return Step::MoveTo(match self.seconds.first_from(second) {
                Some(next) => at(date, hour, minute, next),
                None => at(date, hour, minute, self.seconds.min()) + TimeDelta::minutes(1),
            });
        }
        if !self.minutes.contains(minute) {
            return Step::MoveTo(match self.minutes.first_from(minute) {
                Some(next) => at(date, hour, next, 0),
                None => at(date, hour, self.minutes.min(), 0) + TimeDelta::hours(1),
            });
        }
        if !self.hours.contains(hour) {
            return Step::MoveTo(match self.hours.first_from(hour) {
                Some(next) => at(date, next, 0, 0),
                None => at(date, self.hours.min(), 0, 0) + TimeDelta::days(1),
            });
        }
        if let Some(day) = self.next_day(wall, before_start) {
            return Step::MoveTo(day.and_time(NaiveTime::MIN));
        }
        let (year, month) = (date.year(), date.month());
        if !self.months.contains(month) {
            let first_of =
                |year: i32, month: u32| NaiveDate::from_ymd_opt(year, month, 1).expect("valid month");
            return Step::MoveTo(
                match self.months.first_from(month) {
                    Some(next) => first_of(year, next),
                    None => first_of(year + 1, self.months.min()),
                }
                .and_time(NaiveTime::MIN),
            );
        }
        match self.years.get(self.years.partition_point(|&y| y < year)) {
            None => Step::End,
            Some(&y) if y == year => Step::Fire,
            Some(&y) => match NaiveDate::from_ymd_opt(y, 1, 1) {
                Some(date) => Step::MoveTo(date.and_time(NaiveTime::MIN)),
                None => Step::End,
            },
        }
    }

    /// None when the day of `wall` matches, else the day to move to.
    fn next_day(
        &self,
        wall: NaiveDateTime,
        before_start: &dyn Fn(NaiveDateTime) -> bool,
    ) -> Option<NaiveDate> {
        let month = Month::of(wall.date());
        let today = wall.day() as i32;
        match &self.days {
            DayRule::Days(set) => {
                let days = set.days_in(&month) & (u32::MAX << today);
                if days & 1 << today != 0 {
                    None
                } else if days != 0 {
                    Some(month.day(days.trailing_zeros() as i32))
                } else {
                    Some(month.next_month_day(set.next_month_landing()))
                }
            }
            DayRule::NearestWeekday(anchor) => {
                let (anchor_day, landing) = match *anchor {
                    Anchor::Day(day) => (day, day),
                    Anchor::BeforeLast(offset) => (month.days - offset, 1),
                };
                let target = nearest_weekday(&month, anchor_day);
                // Quartz compares the candidate, at the current time of day, with the search start: a
                // candidate already past sends it on to the next month (to the anchor day there, which
                // may overshoot a short month), otherwise it goes to the candidate, even backwards.
                if before_start(month.day(target).and_time(wall.time())) {
                    Some(month.next_month_day(landing))
                } else if target == today {
                    None
                } else {
                    Some(month.day(target))
                }
            }
        }
    }
}
