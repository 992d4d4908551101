//! Reading an expression into a [`Schedule`], accepting and rejecting exactly what Quartz 2.3 does.
//!
//! Quartz reads each comma-separated item from its first character and stops as soon as it has a
//! complete value, so trailing characters are usually ignored (`5X` is `5`, `MONX` is `MON`, `*X` is
//! `*`). A few of its checks still look further (`?XY`, `5/2X`, `1#2X` are errors). Where Quartz hands
//! a number to Java's `Integer.parseInt` (increments, the `#` count, the first digit after `-` or `/`),
//! digits of any script count (`*/１５`). The expression is handled as UTF-16 code units after
//! upper-casing, because Quartz measures lengths that way.

use std::collections::BTreeSet;
use std::ops::Range;

use super::schedule::{Anchor, Bits, DayRule, DaySet, Schedule};
use super::{CronError, CronField, Problem};

/// Quartz keeps `?` as this number inside the day sets, so a literal 98 in a day field means `?`.
const NO_SPEC: i32 = 98;
/// Quartz's number for `*`; a literal 99 in any field therefore reads as `*`.
const ALL: i32 = 99;
/// Later years can never fire (the search ends at 2999); not storing them keeps `2000-999999` small.
const LAST_STORED_YEAR: i32 = 3000;

const MONTHS: [&str; 12] =
    ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const WEEKDAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/// Parses `source`; `max_year` is the last year `*` in the year field stands for.
pub(super) fn parse(source: &str, max_year: i32) -> Result<Schedule, CronError> {
    let text: Vec<u16> = source.to_uppercase().encode_utf16().collect();
    let tokens = split(&text, 0..text.len(), |c| c == ' ' || c == '\t');
    let mut builder = Builder::new(max_year);
    // Quartz silently ignores tokens after the year.
    for (&field, token) in CronField::ORDER.iter().zip(&tokens) {
        builder.read_field(&Source { text: &text, field, token: token.clone() })?;
    }
    if tokens.len() < 6 {
        return Err(CronError::MissingFields { found: tokens.len() });
    }
    if tokens.len() == 6 {
        builder.add(CronField::Year, ALL, None, 0).expect("'*' is a valid year");
    }
    builder.build()
}

/// Non-empty runs of `text[range]` between separators, as `java.util.StringTokenizer` yields them.
fn split(text: &[u16], range: Range<usize>, is_separator: impl Fn(char) -> bool) -> Vec<Range<usize>> {
    let mut pieces = Vec::new();
    let mut start = range.start;
    for i in range.clone() {
        if is_separator(unit(text, i)) {
            if start < i {
                pieces.push(start..i);
            }
            start = i + 1;
        }
    }
    if start < range.end {
        pieces.push(start..range.end);
    }
    pieces
}

/// The code unit at `i` as a char; lone surrogates become U+FFFD, which no rule accepts.
fn unit(text: &[u16], i: usize) -> char {
    char::from_u32(u32::from(text[i])).unwrap_or(char::REPLACEMENT_CHARACTER)
}

fn at(s: &[u16], i: usize) -> Option<char> {
    (i < s.len()).then(|| unit(s, i))
}

fn is_digit_at(s: &[u16], i: usize) -> bool {
    at(s, i).is_some_and(|c| c.is_ascii_digit())
}

/// End of the run of ASCII digits starting at `i`.
fn digits_end(s: &[u16], i: usize) -> usize {
    (i..s.len()).find(|&j| !is_digit_at(s, j)).unwrap_or(s.len())
}

/// Value of a run of ASCII digits (0 when empty); None when it does not fit an `int`.
fn number(digits: &[u16]) -> Option<i32> {
    digits.iter().try_fold(0i32, |acc, &d| acc.checked_mul(10)?.checked_add(i32::from(d) - i32::from(b'0')))
}

/// The zero of each run of decimal digits in the Basic Multilingual Plane (Unicode 13, Java 17's
/// `Character.digit`): Java's number parsing takes `１` or `٥` as readily as `1` or `5`.
const DIGIT_ZEROS: [u16; 37] = [
    0x0030, 0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66,
    0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50,
    0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
];

/// The value of a decimal digit of any script, as `Character.digit(c, 10)` gives it.
fn java_digit(unit: u16) -> Option<u16> {
    let zero = DIGIT_ZEROS[DIGIT_ZEROS.partition_point(|&z| z <= unit).checked_sub(1)?];
    (unit - zero < 10).then_some(unit - zero)
}

/// `Integer.parseInt`: an optional sign, then at least one digit of any script, fitting an `int`.
fn java_int(s: &[u16]) -> Option<i32> {
    let (negative, digits) = match at(s, 0)? {
        '-' => (true, &s[1..]),
        '+' => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    let magnitude = digits.iter().try_fold(0i64, |acc, &d| {
        let acc = acc * 10 + i64::from(java_digit(d)?);
        (acc <= 1 << 31).then_some(acc)
    })?;
    i32::try_from(if negative { -magnitude } else { magnitude }).ok()
}

/// The number after `-` or `/` in `a-b` and `a/n`: Quartz takes its first character as a digit of any
/// script and only ASCII digits after that. Returns the value and where the digits end; the value is
/// None when it does not fit an `int`, and the whole answer None when there is no first digit.
fn number_after_operator(s: &[u16], i: usize) -> Option<(Option<i32>, usize)> {
    let first = java_digit(*s.get(i)?)?;
    let end = digits_end(s, i + 1);
    let rest = &s[i + 1..end];
    let value = 10i32
        .checked_pow(rest.len() as u32)
        .and_then(|scale| i32::from(first).checked_mul(scale)?.checked_add(number(rest)?));
    Some((value, end))
}

fn name_number(names: &[&str], s: &[u16]) -> Option<i32> {
    let name = String::from_utf16_lossy(s);
    names.iter().position(|&n| n == name).map(|i| i as i32 + 1)
}

/// `L`, `LW` and `L-<digits>[W]`, the forms Quartz reads as "last day" rather than as a name.
fn is_last_day_form(s: &[u16]) -> bool {
    let text = String::from_utf16_lossy(s);
    match text.strip_prefix("L-") {
        Some(rest) => rest.strip_suffix('W').unwrap_or(rest).bytes().all(|b| b.is_ascii_digit()),
        None => text == "L" || text == "LW",
    }
}

/// The token being read, for error messages.
struct Source<'a> {
    text: &'a [u16],
    field: CronField,
    token: Range<usize>,
}

impl Source<'_> {
    fn error(&self, position: usize, problem: Problem) -> CronError {
        CronError::Field {
            field: self.field,
            token: String::from_utf16_lossy(&self.text[self.token.clone()]),
            column: String::from_utf16_lossy(&self.text[..position.min(self.text.len())]).chars().count() + 1,
            problem,
        }
    }
}

/// One comma-separated item of a field, with where it starts in the expression.
struct Item<'a> {
    src: &'a Source<'a>,
    s: &'a [u16],
    start: usize,
}

impl Item<'_> {
    fn error(&self, offset: usize, problem: Problem) -> CronError {
        self.src.error(self.start + offset, problem)
    }
}

/// Field values as Quartz collects them, plus the flags the special characters set.
struct Builder {
    max_year: i32,
    values: [BTreeSet<i32>; 7],
    last_day_of_month: bool,
    last_day_offset: i32,
    nearest_weekday: bool,
    last_weekday_of_month: bool,
    nth_weekday: i32,
}

impl Builder {
    fn new(max_year: i32) -> Builder {
        Builder {
            max_year,
            values: Default::default(),
            last_day_of_month: false,
            last_day_offset: 0,
            nearest_weekday: false,
            last_weekday_of_month: false,
            nth_weekday: 0,
        }
    }

    fn set(&mut self, field: CronField) -> &mut BTreeSet<i32> {
        &mut self.values[field as usize]
    }

    fn read_field(&mut self, src: &Source) -> Result<(), CronError> {
        let token = &src.text[src.token.clone()];
        let has = |c: u16| token.contains(&c);
        let lists_last = has(u16::from(b'L')) && token.len() > 1 && has(u16::from(b','));
        match src.field {
            CronField::DayOfMonth if lists_last => {
                return Err(src.error(src.token.start, Problem::LastWithOthers));
            }
            CronField::DayOfWeek if lists_last => {
                return Err(src.error(src.token.start, Problem::LastWithOthers));
            }
            CronField::DayOfWeek if token.iter().filter(|&&c| c == u16::from(b'#')).count() > 1 => {
                return Err(src.error(src.token.start, Problem::OneNthOnly));
            }
            _ => {}
        }
        for piece in split(src.text, src.token.clone(), |c| c == ',') {
            let item = Item { src, s: &src.text[piece.clone()], start: piece.start };
            self.read_item(&item)?;
        }
        Ok(())
    }

    fn read_item(&mut self, item: &Item) -> Result<(), CronError> {
        let first = unit(item.s, 0);
        if first.is_ascii_uppercase() && !is_last_day_form(item.s) {
            return self.read_name(item);
        }
        match first {
            '?' => self.read_no_spec(item),
            '*' | '/' => self.read_every(item),
            'L' => self.read_last(item),
            '0'..='9' => self.read_number(item),
            c => Err(item.error(0, Problem::UnexpectedCharacter(c))),
        }
    }

    /// `JAN`, `MON-FRI`, `FRI#2`, `FRIL`: only the first three letters (and the operator after them)
    /// count; anything later is ignored.
    fn read_name(&mut self, item: &Item) -> Result<(), CronError> {
        let field = item.src.field;
        let names: &[&str] = match field {
            CronField::Month => &MONTHS,
            CronField::DayOfWeek => &WEEKDAYS,
            _ => return Err(item.error(0, Problem::NamesNotAllowed)),
        };
        let lookup = |from: usize| {
            item.s.get(from..from + 3).ok_or_else(|| item.error(from, Problem::UnknownName)).and_then(
                |name| name_number(names, name).ok_or_else(|| item.error(from, Problem::UnknownName)),
            )
        };
        let start = lookup(0)?;
        let mut end = None;
        match at(item.s, 3) {
            Some('-') => end = Some(lookup(4)?),
            Some('#') if field == CronField::DayOfWeek => self.nth_weekday = read_nth(item, 4)?,
            Some('L') if field == CronField::DayOfWeek => self.last_weekday_of_month = true,
            _ => {}
        }
        self.add_item(item, start, end, i32::from(end.is_some()))
    }

    /// `?`; Quartz only looks one character past it, so `?X` passes and `?XY` does not.
    fn read_no_spec(&mut self, item: &Item) -> Result<(), CronError> {
        let field = item.src.field;
        if item.s.len() >= 3 {
            return Err(item.error(1, Problem::UnexpectedCharacter(unit(item.s, 1))));
        }
        if field != CronField::DayOfMonth && field != CronField::DayOfWeek {
            return Err(item.error(0, Problem::NotInThisField('?')));
        }
        if field == CronField::DayOfWeek && !self.last_day_of_month {
            match self.set(CronField::DayOfMonth).last() {
                None => return Err(item.error(0, Problem::NoSpecWithoutMonthDay)),
                Some(&NO_SPEC) => return Err(CronError::BothDaysUnspecified),
                Some(_) => {}
            }
        }
        self.set(field).insert(NO_SPEC);
        Ok(())
    }

    /// `*`, `*/n` and `/n`; after a `*` that is not followed by `/`, the rest is ignored.
    fn read_every(&mut self, item: &Item) -> Result<(), CronError> {
        let s = item.s;
        let slash = match (unit(s, 0), s.len()) {
            ('*', 1) => return self.add_item(item, ALL, None, 0),
            ('/', 1) => return Err(item.error(0, Problem::NumberExpected('/'))),
            ('*', _) if at(s, 1) != Some('/') => return self.add_item(item, ALL, None, 1),
            ('*', _) => 1,
            _ => 0,
        };
        if slash + 1 >= s.len() {
            return Err(item.error(slash + 1, Problem::NumberExpected('/')));
        }
        let step =
            java_int(&s[slash + 1..]).ok_or_else(|| item.error(slash + 1, Problem::NumberExpected('/')))?;
        check_step(item, step)?;
        self.add_item(item, ALL, None, step)
    }

    /// `L`, `LW`, `L-n`, `L-nW`. In day-of-week any of these means Saturday; in the time, month and
    /// year fields Quartz accepts them and stores nothing.
    fn read_last(&mut self, item: &Item) -> Result<(), CronError> {
        let s = item.s;
        match item.src.field {
            CronField::DayOfMonth => {
                self.last_day_of_month = true;
                let mut after = 1;
                if at(s, 1) == Some('-') {
                    if s.len() == 2 {
                        return Err(item.error(2, Problem::NumberExpected('-')));
                    }
                    after = digits_end(s, 2);
                    let offset = number(&s[2..after]).ok_or_else(|| item.error(2, Problem::TooLarge))?;
                    if offset > 30 {
                        return Err(item.error(2, Problem::OutOfRange { min: 0, max: 30 }));
                    }
                    self.last_day_offset = offset;
                }
                if at(s, after) == Some('W') {
                    self.nearest_weekday = true;
                }
                Ok(())
            }
            CronField::DayOfWeek => self.add_item(item, 7, Some(7), 0),
            _ => Ok(()),
        }
    }

    /// A number, optionally followed by `L`, `W`, `#k`, `-end[/step]` or `/step`.
    fn read_number(&mut self, item: &Item) -> Result<(), CronError> {
        let field = item.src.field;
        let s = item.s;
        let end = digits_end(s, 0);
        let value = number(&s[..end]).ok_or_else(|| item.error(0, Problem::TooLarge))?;
        match at(s, end) {
            Some('L') => {
                if field != CronField::DayOfWeek {
                    return Err(item.error(end, Problem::NotInThisField('L')));
                }
                if !(1..=7).contains(&value) {
                    return Err(item.error(0, Problem::OutOfRange { min: 1, max: 7 }));
                }
                self.last_weekday_of_month = true;
                self.set(field).insert(value);
                Ok(())
            }
            Some('W') => {
                if field != CronField::DayOfMonth {
                    return Err(item.error(end, Problem::NotInThisField('W')));
                }
                if value > 31 {
                    return Err(item.error(end, Problem::OutOfRange { min: 1, max: 31 }));
                }
                self.nearest_weekday = true;
                self.set(field).insert(value);
                Ok(())
            }
            Some('#') => {
                if field != CronField::DayOfWeek {
                    return Err(item.error(end, Problem::NotInThisField('#')));
                }
                self.nth_weekday = read_nth(item, end + 1)?;
                // Quartz stores the weekday unchecked here: 0 behaves as Saturday, 8 and up never match.
                self.set(field).insert(value);
                Ok(())
            }
            Some('-') => {
                let from = end + 1;
                let (last, to) = number_after_operator(s, from)
                    .ok_or_else(|| item.error(from, Problem::NumberExpected('-')))?;
                let last = last.ok_or_else(|| item.error(from, Problem::TooLarge))?;
                if at(s, to) != Some('/') {
                    return self.add_item(item, value, Some(last), 1);
                }
                let step_at = to + 1;
                let (step, _) = number_after_operator(s, step_at)
                    .ok_or_else(|| item.error(step_at, Problem::NumberExpected('/')))?;
                let step = step.ok_or_else(|| item.error(step_at, Problem::TooLarge))?;
                // Quartz does not limit the increment of a range, so `0-59/70` is just 0.
                self.add_item(item, value, Some(last), step)
            }
            Some('/') => {
                let step_at = end + 1;
                let (step, step_end) = number_after_operator(s, step_at)
                    .ok_or_else(|| item.error(step_at, Problem::NumberExpected('/')))?;
                if step_end == step_at + 1 && step_end < s.len() {
                    // Quartz rejects one digit followed by junk, yet ignores junk after two digits.
                    return Err(item.error(step_end, Problem::UnexpectedCharacter(unit(s, step_end))));
                }
                let step = step.ok_or_else(|| item.error(step_at, Problem::TooLarge))?;
                check_step(item, step)?;
                self.add_item(item, value, None, step)
            }
            _ => self.add_item(item, value, None, 0),
        }
    }

    fn add_item(&mut self, item: &Item, start: i32, end: Option<i32>, step: i32) -> Result<(), CronError> {
        self.add(item.src.field, start, end, step).map_err(|problem| item.error(0, problem))
    }

    /// Adds `start` (or the range `start..=end` every `step`) to a field, as Quartz's `addToSet` does:
    /// a `step` of 0 keeps `start` alone, a range whose end is before its start wraps around (except
    /// in the year field), and the special numbers 98 and 99 escape the range checks.
    fn add(&mut self, field: CronField, start: i32, end: Option<i32>, step: i32) -> Result<(), Problem> {
        let last = end.unwrap_or(-1);
        let out_of_range = |lo: i32, hi: i32| (start < lo || start > hi || last > hi) && start != ALL;
        let problem = match field {
            CronField::Second | CronField::Minute => {
                out_of_range(0, 59).then_some(Problem::OutOfRange { min: 0, max: 59 })
            }
            CronField::Hour => out_of_range(0, 23).then_some(Problem::OutOfRange { min: 0, max: 23 }),
            CronField::DayOfMonth => {
                (out_of_range(1, 31) && start != NO_SPEC).then_some(Problem::OutOfRange { min: 1, max: 31 })
            }
            CronField::Month => out_of_range(1, 12).then_some(Problem::OutOfRange { min: 1, max: 12 }),
            // Quartz only rejects 0 at the bottom here; no item can produce a negative number.
            CronField::DayOfWeek => {
                ((start == 0 || start > 7 || last > 7) && start != ALL && start != NO_SPEC)
                    .then_some(Problem::OutOfRange { min: 1, max: 7 })
            }
            CronField::Year => None,
        };
        if let Some(problem) = problem {
            return Err(problem);
        }
        if step <= 0 && start != ALL {
            self.set(field).insert(start);
            return Ok(());
        }
        let (min, max, period) = match field {
            CronField::Second | CronField::Minute => (0, 59, 60),
            CronField::Hour => (0, 23, 24),
            CronField::DayOfMonth => (1, 31, 31),
            CronField::Month => (1, 12, 12),
            CronField::DayOfWeek => (1, 7, 7),
            CronField::Year => (1970, self.max_year, 0),
        };
        let first = if start == ALL { min } else { start };
        let mut stop = end.unwrap_or(max);
        let wraps = stop < first;
        if wraps {
            if field == CronField::Year {
                return Err(Problem::YearsReversed);
            }
            stop += period;
        }
        if field == CronField::Year {
            stop = stop.min(LAST_STORED_YEAR);
        }
        let step = step.max(1) as usize;
        let set = self.set(field);
        for v in (i64::from(first)..=i64::from(stop)).step_by(step) {
            let v = v as i32;
            let value = match v % period.max(1) {
                _ if !wraps => v,
                // Day, month and weekday numbers start at 1, so the wrap lands on the period itself.
                0 if min == 1 => period,
                rest => rest,
            };
            set.insert(value);
        }
        Ok(())
    }

    fn build(self) -> Result<Schedule, CronError> {
        let [seconds, minutes, hours, month_days, months, week_days, years] = &self.values;
        let days = match (month_days.contains(&NO_SPEC), week_days.contains(&NO_SPEC)) {
            (true, true) => return Err(CronError::BothDaysUnspecified),
            (false, false) => return Err(CronError::BothDaysSpecified),
            (false, true) => self.month_day_rule(month_days),
            (true, false) => self.week_day_rule(week_days),
        };
        Ok(Schedule {
            seconds: bits(seconds),
            minutes: bits(minutes),
            hours: bits(hours),
            days,
            months: bits(months),
            years: years.iter().copied().collect(),
            max_year: self.max_year,
        })
    }

    fn month_day_rule(&self, days: &BTreeSet<i32>) -> DayRule {
        match (self.last_day_of_month, self.nearest_weekday) {
            (true, true) => DayRule::NearestWeekday(Anchor::BeforeLast(self.last_day_offset)),
            (true, false) => DayRule::Days(DaySet::LastDay { offset: self.last_day_offset }),
            // Quartz anchors W on the smallest listed day, whichever item carried the W.
            (false, true) => {
                DayRule::NearestWeekday(Anchor::Day(*days.first().expect("a W item stores its day")))
            }
            (false, false) => DayRule::Days(DaySet::MonthDays(bits(days))),
        }
    }

    fn week_day_rule(&self, weekdays: &BTreeSet<i32>) -> DayRule {
        // `nL` and `n#k` use the smallest listed weekday; other items in the list are ignored.
        let first = weekdays.first().copied();
        DayRule::Days(if self.last_weekday_of_month {
            DaySet::LastWeekday(first.expect("an nL item stores its weekday"))
        } else if self.nth_weekday != 0 {
            match first.expect("an n#k item stores its weekday") {
                0 => DaySet::NthWeekday { weekday: 7, nth: self.nth_weekday },
                weekday @ 1..=7 => DaySet::NthWeekday { weekday, nth: self.nth_weekday },
                _ => DaySet::WeekDays(Bits::EMPTY),
            }
        } else {
            DaySet::WeekDays(bits(weekdays))
        })
    }
}

/// The `k` of `n#k`: Quartz parses the whole rest of the item as an `int`, which must be 1 to 5.
fn read_nth(item: &Item, from: usize) -> Result<i32, CronError> {
    item.s
        .get(from..)
        .and_then(java_int)
        .filter(|nth| (1..=5).contains(nth))
        .ok_or_else(|| item.error(from, Problem::OutOfRange { min: 1, max: 5 }))
}

/// The increment limits of `*/n` and `a/n`; Quartz checks no lower bound and nothing for years.
fn check_step(item: &Item, step: i32) -> Result<(), CronError> {
    let limit = match item.src.field {
        CronField::Second | CronField::Minute => 59,
        CronField::Hour => 23,
        CronField::DayOfMonth => 31,
        CronField::DayOfWeek => 7,
        CronField::Month => 12,
        CronField::Year => return Ok(()),
    };
    if step > limit {
        return Err(item.error(0, Problem::StepTooLarge { max: limit }));
    }
    Ok(())
}

fn bits(values: &BTreeSet<i32>) -> Bits {
    Bits::of(values.iter().filter_map(|&v| u32::try_from(v).ok()))
}
