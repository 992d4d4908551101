//! Who sends the planned fires, and how a successor tells what its predecessor may have sent (issue:
//! failover without a lost or doubled fire).
//!
//! One admin at a time leads: it makes the schedule passes and sends every planned fire. Its lease is one
//! row of `xxl_job_lock`, `leader:<owner>:<watermark>:<renewed>` (the README documents it): the leader
//! raises the watermark, in one statement, to the release instant of the fires it is about to send, before
//! it sends them, and renews the lease as it goes. A planned row names its release instant in its
//! `trigger_msg` until it is sent ("planned by admin 3f9c2e1a at 1732600000437"). So an admin that takes
//! the lease over knows without asking anyone which rows were certainly not sent (released after the
//! watermark: it sends them) and which may have been (at or before it, without a result: never sent
//! again, settled as "result unknown" unless the executor calls back).

/// One admin process, as named in the lease and the rows it plans; random per start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Owner(u32);

impl Owner {
    pub fn random() -> Owner {
        Owner(rand::random())
    }

    pub fn id(self) -> String {
        format!("{:08x}", self.0)
    }

    fn parse(id: &str) -> Option<Owner> {
        (id.len() == 8).then(|| u32::from_str_radix(id, 16).ok().map(Owner)).flatten()
    }
}

/// The session lock the leader holds on a connection of its own (MySQL/MariaDB `GET_LOCK` name; the
/// others wait on it, and the server releases it the moment the leader's connection ends).
pub const LEADER_LOCK_NAME: &str = "xxl-job-admin:leader";
/// The same lock as a PostgreSQL session advisory lock (the two-key form: "xjob", "lead").
pub const LEADER_LOCK_KEY: (i32, i32) = (0x786a_6f62, 0x6c65_6164);

/// The leader's row in `xxl_job_lock`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    pub owner: Owner,
    /// Planned fires released at or before this instant (epoch ms) may have been sent.
    pub watermark_ms: i64,
    /// When the leader last renewed it; 0 once it gave the lease up (a graceful stop).
    pub renewed_ms: i64,
}

impl Lease {
    /// `lock_name` of the lease row begins with this (the README documents the row).
    pub const PREFIX: &'static str = "leader:";

    /// The row's `lock_name` (at most 43 characters of the column's 50).
    pub fn row_name(&self) -> String {
        format!("{}{}:{}:{}", Lease::PREFIX, self.owner.id(), self.watermark_ms, self.renewed_ms)
    }

    /// The beginning of every row name of `owner`'s lease, whatever its watermark.
    pub fn prefix_of(owner: Owner) -> String {
        format!("{}{}:", Lease::PREFIX, owner.id())
    }

    pub fn parse(name: &str) -> Option<Lease> {
        let mut parts = name.strip_prefix(Lease::PREFIX)?.split(':');
        let owner = Owner::parse(parts.next()?)?;
        let watermark_ms = parts.next()?.parse().ok()?;
        let renewed_ms = parts.next()?.parse().ok()?;
        parts.next().is_none().then_some(Lease { owner, watermark_ms, renewed_ms })
    }

    /// Whether another admin may take the lease over without a sign of the leader's death: it was given
    /// up, or not renewed for `lease_ms`.
    pub fn is_vacant(&self, now_ms: i64, lease_ms: i64) -> bool {
        self.renewed_ms == 0 || now_ms - self.renewed_ms > lease_ms
    }
}

const PLANNED: &str = "planned by admin ";

/// What a planned row says in `trigger_msg` until it is sent: who planned it, when it is released and,
/// when that differs (a pass that found the job's next time missed), the instant it stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanMarker {
    pub owner: Owner,
    pub release_ms: i64,
    pub instant_ms: i64,
}

impl PlanMarker {
    /// The `LIKE` pattern of every planned row, any admin's.
    pub const PATTERN: &'static str = "planned by admin %";

    pub fn text(&self) -> String {
        let mut text = format!("{PLANNED}{} at {}", self.owner.id(), self.release_ms);
        if self.instant_ms != self.release_ms {
            text.push_str(&format!(" for {}", self.instant_ms));
        }
        text
    }

    pub fn parse(text: &str) -> Option<PlanMarker> {
        let rest = text.strip_prefix(PLANNED)?;
        let (owner, rest) = rest.split_once(" at ")?;
        let owner = Owner::parse(owner)?;
        let (release, instant) = match rest.split_once(" for ") {
            Some((release, instant)) => (release.parse().ok()?, instant.parse().ok()?),
            None => {
                let release = rest.parse().ok()?;
                (release, release)
            }
        };
        Some(PlanMarker { owner, release_ms: release, instant_ms: instant })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leases_round_trip_and_fit_the_column() {
        let lease = Lease {
            owner: Owner(0x00ab_cdef),
            watermark_ms: 1_732_600_000_437,
            renewed_ms: 1_732_600_000_450,
        };
        assert_eq!(lease.row_name(), "leader:00abcdef:1732600000437:1732600000450");
        assert!(lease.row_name().len() <= 50, "lock_name is varchar(50)");
        assert_eq!(Lease::parse(&lease.row_name()), Some(lease));
        assert!(lease.row_name().starts_with(&Lease::prefix_of(lease.owner)));
        for other in
            ["schedule_lock", "leader:xyz:1:2", "leader:00abcdef:1", "leader:00abcdef:1:2:3", "secret:abc"]
        {
            assert_eq!(Lease::parse(other), None, "{other}");
        }
    }

    #[test]
    fn a_lease_is_vacant_when_given_up_or_not_renewed() {
        let lease = Lease { owner: Owner(1), watermark_ms: 0, renewed_ms: 10_000 };
        assert!(!lease.is_vacant(15_000, 5_000));
        assert!(lease.is_vacant(15_001, 5_000));
        assert!(Lease { renewed_ms: 0, ..lease }.is_vacant(1, 5_000));
    }

    #[test]
    fn plan_markers_round_trip() {
        let on_time = PlanMarker {
            owner: Owner(0x3f9c_2e1a),
            release_ms: 1_732_600_000_437,
            instant_ms: 1_732_600_000_437,
        };
        assert_eq!(on_time.text(), "planned by admin 3f9c2e1a at 1732600000437");
        assert_eq!(PlanMarker::parse(&on_time.text()), Some(on_time));
        let catch_up = PlanMarker { instant_ms: 1_732_599_990_000, ..on_time };
        assert_eq!(catch_up.text(), "planned by admin 3f9c2e1a at 1732600000437 for 1732599990000");
        assert_eq!(PlanMarker::parse(&catch_up.text()), Some(catch_up));
        for other in ["Trigger type: Cron<br>…", "planned by admin 3f9c2e1a", "planned by admin zz at 1"] {
            assert_eq!(PlanMarker::parse(other), None, "{other}");
        }
    }
}
