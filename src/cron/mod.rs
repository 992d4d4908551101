//! Quartz 2.3 cron expressions, as xxl-job 2.4.2 uses them (docs/console.md#cron-expressions).
//!
//! Validation and fire times follow Quartz's `CronExpression` observably, including the corners where
//! Quartz is lenient (`5X` reads as `5`, tokens after the year are ignored) and the way it walks the
//! local calendar: it searches wall-clock time and converts with `java.util.Calendar`'s rules, so an
//! ambiguous local time (DST overlap) fires once, in its later occurrence, and a nonexistent one (DST
//! gap) is pushed forward by the length of the gap. `tests/data/cron/quartz_vectors.tsv` pins this
//! behaviour against Quartz itself.
//!
//! Known differences, all in cases where Quartz cannot answer:
//! - Quartz accepts fields that end up with no value (`L` outside the day fields, a field that is only
//!   commas) and then throws when asked for a fire time; here such a schedule never fires.
//! - `0W`, and `L-nW` anchored before the 1st, make Quartz loop forever once the month's candidate is in
//!   the past; here the search notices it is going round and reports no further fire time.
//! - `chrono-tz` stops applying daylight saving after 2099 while Java keeps its rules, so local times
//!   in DST zones differ from 2100 on.

pub mod cli;
mod parse;
mod schedule;
mod zone;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Datelike, Local, TimeZone};

use schedule::Schedule;

/// The search gives up past this year whatever the expression says, as Quartz does.
const LAST_SEARCHED_YEAR: i32 = 2999;
/// Quartz never fires later than this many years after the current one.
const YEARS_AHEAD: i32 = 100;

/// A parsed Quartz cron expression.
#[derive(Clone, Debug)]
pub struct CronExpression {
    source: String,
    schedule: Schedule,
}

/// The fields of a cron expression, in the order they are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CronField {
    Second,
    Minute,
    Hour,
    DayOfMonth,
    Month,
    DayOfWeek,
    Year,
}

impl CronField {
    const ORDER: [CronField; 7] = [
        CronField::Second,
        CronField::Minute,
        CronField::Hour,
        CronField::DayOfMonth,
        CronField::Month,
        CronField::DayOfWeek,
        CronField::Year,
    ];
}

impl fmt::Display for CronField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CronField::Second => "second",
            CronField::Minute => "minute",
            CronField::Hour => "hour",
            CronField::DayOfMonth => "day-of-month",
            CronField::Month => "month",
            CronField::DayOfWeek => "day-of-week",
            CronField::Year => "year",
        })
    }
}

/// Why an expression is not a valid Quartz cron expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CronError {
    #[error(
        "unexpected end of expression: found {found} field(s), expected 6 or 7 \
         (second minute hour day-of-month month day-of-week [year])"
    )]
    MissingFields { found: usize },
    #[error("{problem} (in {field} field '{token}', at column {column})")]
    Field { field: CronField, token: String, column: usize, problem: String },
    #[error("day-of-month and day-of-week are both specified: exactly one of them must be '?'")]
    BothDaysSpecified,
    #[error("day-of-month and day-of-week are both '?': exactly one of them must be '?'")]
    BothDaysUnspecified,
}

impl CronExpression {
    /// Parses `expr` with Quartz's rules (case-insensitive; 6 or 7 fields, seconds first).
    pub fn parse(expr: &str) -> Result<CronExpression, CronError> {
        Self::parse_in_year(expr, Local::now().year())
    }

    /// Parses as if the current year were `current_year`, which bounds `*` in the year field.
    fn parse_in_year(expr: &str, current_year: i32) -> Result<CronExpression, CronError> {
        let schedule = parse::parse(expr, current_year + YEARS_AHEAD)?;
        Ok(CronExpression { source: expr.to_string(), schedule })
    }

    /// Whether Quartz would accept `expr`.
    pub fn is_valid(expr: &str) -> bool {
        Self::parse(expr).is_ok()
    }

    /// Next fire time strictly after `after`, in `after`'s time zone; None when the schedule has ended.
    pub fn next_after<Tz: TimeZone>(&self, after: &DateTime<Tz>) -> Option<DateTime<Tz>> {
        self.next_after_until(after, self.schedule.max_year.min(LAST_SEARCHED_YEAR))
    }

    /// [`Self::next_after`] with the last year that may still fire made explicit.
    fn next_after_until<Tz: TimeZone>(&self, after: &DateTime<Tz>, last_year: i32) -> Option<DateTime<Tz>> {
        // Quartz starts one second later and drops the milliseconds, so the result is strictly later
        // and always a whole second.
        let start = after.timezone().timestamp_opt(after.timestamp().checked_add(1)?, 0).single()?;
        self.schedule.next_fire(&start, last_year)
    }

    /// The expression as it was given.
    pub fn source(&self) -> &str {
        &self.source
    }
}

impl FromStr for CronExpression {
    type Err = CronError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for CronExpression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}
