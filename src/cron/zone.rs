//! Turning local wall-clock times into instants the way `java.util.GregorianCalendar` does, which is
//! what decides Quartz's fire times around daylight-saving transitions.

use chrono::NaiveDateTime;
use chrono::{DateTime, LocalResult, Offset, TimeDelta, TimeZone};

/// The instant `java.util.Calendar` gives to the local time `wall` in `tz`.
///
/// Java reads a local time against the offset of the transition nearest before it *as seen on the
/// clock after that transition*. So an ambiguous time (clocks turned back) gets the later offset, i.e.
/// its second occurrence, and a nonexistent time (clocks turned forward) keeps the earlier offset,
/// which lands it past the gap by the gap's length (02:30 becomes 03:30 in a one-hour gap).
pub(super) fn resolve<Tz: TimeZone>(tz: &Tz, wall: NaiveDateTime) -> Option<DateTime<Tz>> {
    match tz.from_local_datetime(&wall) {
        LocalResult::Single(at) => Some(at),
        LocalResult::Ambiguous(_, later) => Some(later),
        LocalResult::None => {
            // A day earlier is safely before the transition that opened the gap.
            let before = tz.offset_from_utc_datetime(&wall.checked_sub_signed(TimeDelta::days(1))?).fix();
            let utc = wall.checked_sub_signed(TimeDelta::seconds(i64::from(before.local_minus_utc())))?;
            Some(tz.from_utc_datetime(&utc))
        }
    }
}
