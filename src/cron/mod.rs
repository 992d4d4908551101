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

use crate::i18n::I18n;
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

/// Why an expression is not a valid Quartz cron expression. [`CronError::describe`] words it in one of
/// the console's languages; `Display` is the English wording (the `cron` command's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CronError {
    /// Fewer than the 6 fields every expression has.
    MissingFields {
        found: usize,
    },
    Field {
        field: CronField,
        token: String,
        column: usize,
        problem: Problem,
    },
    BothDaysSpecified,
    BothDaysUnspecified,
}

/// What is wrong inside one field; the field, its text and column travel beside it in [`CronError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// A character the field cannot start or continue with here.
    UnexpectedCharacter(char),
    /// `L`, `W`, `#` or `?` in a field that does not take it.
    NotInThisField(char),
    /// A month or weekday name outside those two fields.
    NamesNotAllowed,
    /// Not one of the three-letter month or weekday names.
    UnknownName,
    /// The operator must be followed by a number.
    NumberExpected(char),
    /// A number beyond what an `int` holds.
    TooLarge,
    OutOfRange {
        min: i32,
        max: i32,
    },
    /// An increment above the field's span.
    StepTooLarge {
        max: i32,
    },
    YearsReversed,
    /// `L` (or `LW`) listed with other days.
    LastWithOthers,
    /// More than one `#` in the day-of-week field.
    OneNthOnly,
    /// `?` in day-of-week while day-of-month is empty.
    NoSpecWithoutMonthDay,
}

impl CronField {
    /// The i18n key of the field's name.
    fn key(self) -> &'static str {
        match self {
            CronField::Second => "cron_field_second",
            CronField::Minute => "cron_field_minute",
            CronField::Hour => "cron_field_hour",
            CronField::DayOfMonth => "cron_field_day_of_month",
            CronField::Month => "cron_field_month",
            CronField::DayOfWeek => "cron_field_day_of_week",
            CronField::Year => "cron_field_year",
        }
    }
}

impl Problem {
    fn describe(self, i18n: &I18n) -> String {
        match self {
            Problem::UnexpectedCharacter(c) => i18n.format("cron_problem_unexpected_character", &[&c]),
            Problem::NotInThisField(c) => i18n.format("cron_problem_not_in_this_field", &[&c]),
            Problem::NamesNotAllowed => i18n.get("cron_problem_names_not_allowed").to_string(),
            Problem::UnknownName => i18n.get("cron_problem_unknown_name").to_string(),
            Problem::NumberExpected(c) => i18n.format("cron_problem_number_expected", &[&c]),
            Problem::TooLarge => i18n.get("cron_problem_too_large").to_string(),
            Problem::OutOfRange { min, max } => i18n.format("cron_problem_out_of_range", &[&min, &max]),
            Problem::StepTooLarge { max } => i18n.format("cron_problem_step_too_large", &[&max]),
            Problem::YearsReversed => i18n.get("cron_problem_years_reversed").to_string(),
            Problem::LastWithOthers => i18n.get("cron_problem_last_with_others").to_string(),
            Problem::OneNthOnly => i18n.get("cron_problem_one_nth_only").to_string(),
            Problem::NoSpecWithoutMonthDay => i18n.get("cron_problem_no_spec_without_month_day").to_string(),
        }
    }
}

impl CronError {
    /// The reason in `i18n`'s language, naming the field, its text and column.
    pub fn describe(&self, i18n: &I18n) -> String {
        match self {
            CronError::MissingFields { found } => i18n.format("cron_error_missing_fields", &[found]),
            CronError::Field { field, token, column, problem } => i18n.format(
                "cron_error_field",
                &[&i18n.get(field.key()), token, column, &problem.describe(i18n)],
            ),
            CronError::BothDaysSpecified => i18n.get("cron_error_both_days_specified").to_string(),
            CronError::BothDaysUnspecified => i18n.get("cron_error_both_days_unspecified").to_string(),
        }
    }
}

impl fmt::Display for CronError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe(&I18n::new("en")))
    }
}

impl std::error::Error for CronError {}

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
