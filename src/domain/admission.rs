//! Which executor registrations the admin takes. Executors of a configured group always (the cap per
//! AppName aside); AppNames no group has only within a cap per client address and a cap in total, so one
//! client's flood of made-up AppNames never locks another client, or any configured group, out.
//!
//! The table lives in one admin's memory and costs no database read on the paths executors beat
//! through: the groups and the live AppNames are read again at each registry monitor pass, and what this
//! admin took since is counted on top.

use crate::domain::registry::DEAD_TIMEOUT_SECS;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::net::IpAddr;

/// The `registry_group` of executors; a group's AppName counts only under it.
pub const EXECUTOR: &str = "EXECUTOR";

/// An AppName as registrations store it: `registry_group` and `registry_key`.
pub type AppKey = (String, String);

/// Why a registration of an AppName that no group has was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The client address already holds `apps` such AppNames.
    PerAddress { app: String, address: IpAddr, apps: usize, max: u32 },
    /// `apps` such AppNames are registered in all.
    Total { app: String, apps: usize, max: u32 },
}

impl Refusal {
    /// The `reason` label of `xxl_job_registrations_refused_total`.
    pub fn reason(&self) -> &'static str {
        match self {
            Refusal::PerAddress { .. } => "max_apps_per_address",
            Refusal::Total { .. } => "max_apps",
        }
    }
}

/// The executor's reply (the executor protocol's messages are English).
impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::PerAddress { app, address, apps, max } => write!(
                f,
                "registration refused: client {address} has registered {apps} AppNames that no executor group has, \
                 the most xxl.job.registry.max-apps-per-address ({max}) allows; AppName {app} is not registered \
                 (an AppName with an executor group always is)"
            ),
            Refusal::Total { app, apps, max } => write!(
                f,
                "registration refused: {apps} AppNames that no executor group has are registered, the most \
                 xxl.job.registry.max-apps ({max}) allows; AppName {app} is not registered \
                 (an AppName with an executor group always is)"
            ),
        }
    }
}

/// The admission table of one admin.
#[derive(Debug)]
pub struct Admissions {
    max_per_address: usize,
    max_total: usize,
    /// The AppNames of `xxl_job_group`, as of the last refresh or found since.
    groups: HashSet<String>,
    /// AppNames no group has: live in the database at the last refresh, or taken here since.
    unknown: HashSet<AppKey>,
    /// Per client address, the AppNames no group has that it registered, with when it last did.
    by_address: HashMap<IpAddr, HashMap<AppKey, i64>>,
    /// Causes already logged: addresses at their cap, and the total.
    warned: (HashSet<IpAddr>, bool),
}

impl Admissions {
    pub fn new(max_per_address: u32, max_total: u32) -> Admissions {
        Admissions {
            max_per_address: max_per_address as usize,
            max_total: max_total as usize,
            groups: HashSet::new(),
            unknown: HashSet::new(),
            by_address: HashMap::new(),
            warned: (HashSet::new(), false),
        }
    }

    fn is_group(&self, registry_group: &str, app: &str) -> bool {
        registry_group == EXECUTOR && self.groups.contains(app)
    }

    /// Takes a registration of `app` under `registry_group` from `address` at `now_ms`, or says why not.
    /// A refusal is only this table's view: the caller asks the database before answering it.
    pub fn admit(
        &mut self,
        address: IpAddr,
        registry_group: &str,
        app: &str,
        now_ms: i64,
    ) -> Result<(), Refusal> {
        if self.is_group(registry_group, app) {
            return Ok(());
        }
        let key = (registry_group.to_string(), app.to_string());
        let held = match self.by_address.get_mut(&address) {
            Some(held) => {
                held.retain(|_, seen| !expired(*seen, now_ms));
                if let Some(seen) = held.get_mut(&key) {
                    *seen = now_ms;
                    return Ok(());
                }
                held.len()
            }
            None => 0,
        };
        if held >= self.max_per_address {
            let max = self.max_per_address as u32;
            return Err(Refusal::PerAddress { app: app.to_string(), address, apps: held, max });
        }
        if !self.unknown.contains(&key) && self.unknown.len() >= self.max_total {
            let (apps, max) = (self.unknown.len(), self.max_total as u32);
            return Err(Refusal::Total { app: app.to_string(), apps, max });
        }
        self.by_address.entry(address).or_default().insert(key.clone(), now_ms);
        self.unknown.insert(key);
        Ok(())
    }

    /// A group the database has that the last refresh did not see.
    pub fn add_group(&mut self, app: &str) {
        self.groups.insert(app.to_string());
    }

    /// Whether `refusal` is the first of its cause since that cause last cleared (to log it once).
    pub fn first_of_its_cause(&mut self, refusal: &Refusal) -> bool {
        match refusal {
            Refusal::PerAddress { address, .. } => self.warned.0.insert(*address),
            Refusal::Total { .. } => !std::mem::replace(&mut self.warned.1, true),
        }
    }

    /// Starts again from the database: every group's AppName and the AppNames live now. Addresses keep
    /// what they refreshed within the dead timeout, and those AppNames count in the total too (their
    /// rows may still be on their way to the database).
    pub fn refresh(&mut self, groups: Vec<String>, live: Vec<AppKey>, now_ms: i64) {
        self.groups = groups.into_iter().collect();
        let groups = &self.groups;
        let counts = |(registry_group, app): &AppKey| !(registry_group == EXECUTOR && groups.contains(app));
        for held in self.by_address.values_mut() {
            held.retain(|key, seen| !expired(*seen, now_ms) && counts(key));
        }
        self.by_address.retain(|_, held| !held.is_empty());
        let taken = self.by_address.values().flat_map(|held| held.keys().cloned());
        self.unknown = live.into_iter().filter(counts).chain(taken).collect();
        let (addresses, total) = &mut self.warned;
        addresses
            .retain(|address| self.by_address.get(address).is_some_and(|h| h.len() >= self.max_per_address));
        *total = *total && self.unknown.len() >= self.max_total;
    }
}

/// An address's AppName not refreshed for as long as a registration stays alive.
fn expired(seen_ms: i64, now_ms: i64) -> bool {
    now_ms - seen_ms > DEAD_TIMEOUT_SECS * 1000
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, last])
    }

    #[test]
    fn groups_pass_whatever_the_flood_and_made_up_names_are_capped_per_address_then_in_total() {
        let mut table = Admissions::new(2, 3);
        table.refresh(vec!["sample".into()], vec![], 0);
        assert_eq!(table.admit(ip(1), EXECUTOR, "a", 0), Ok(()));
        assert_eq!(table.admit(ip(1), EXECUTOR, "b", 0), Ok(()));
        let refused = table.admit(ip(1), EXECUTOR, "c", 0).unwrap_err();
        assert_eq!(refused.reason(), "max_apps_per_address");
        assert!(refused.to_string().contains("client 10.0.0.1 has registered 2 AppNames"), "{refused}");
        assert_eq!(table.admit(ip(1), EXECUTOR, "a", 1), Ok(()), "a name it holds beats on");
        assert_eq!(table.admit(ip(2), EXECUTOR, "c", 0), Ok(()));
        let refused = table.admit(ip(2), EXECUTOR, "d", 0).unwrap_err();
        assert_eq!(refused.reason(), "max_apps");
        assert!(refused.to_string().contains("xxl.job.registry.max-apps (3)"), "{refused}");
        assert_eq!(table.admit(ip(2), EXECUTOR, "a", 0), Ok(()), "a name already counted costs nothing");
        for client in [1, 2, 3] {
            assert_eq!(table.admit(ip(client), EXECUTOR, "sample", 0), Ok(()));
        }
        assert!(table.admit(ip(3), "ADMIN", "sample", 0).is_err(), "a group counts for executors only");
    }

    #[test]
    fn a_refresh_frees_what_expired_and_what_became_a_group() {
        let mut table = Admissions::new(1, 10);
        table.admit(ip(1), EXECUTOR, "a", 0).unwrap();
        assert!(table.admit(ip(1), EXECUTOR, "b", 0).is_err());
        table.refresh(vec!["a".into()], vec![(EXECUTOR.into(), "a".into())], 1);
        assert_eq!(table.admit(ip(1), EXECUTOR, "b", 1), Ok(()), "a is a group now");
        let later = 1 + DEAD_TIMEOUT_SECS * 1000 + 1;
        assert_eq!(table.admit(ip(1), EXECUTOR, "c", later), Ok(()), "b expired");
        table.refresh(vec![], vec![], later);
        assert_eq!(table.unknown.len(), 1, "the taken name counts until the database shows it");
    }

    #[test]
    fn each_cause_is_logged_once_until_it_clears() {
        let mut table = Admissions::new(1, 1);
        table.admit(ip(1), EXECUTOR, "a", 0).unwrap();
        let per_address = table.admit(ip(1), EXECUTOR, "b", 0).unwrap_err();
        let total = table.admit(ip(2), EXECUTOR, "b", 0).unwrap_err();
        assert!(table.first_of_its_cause(&per_address) && table.first_of_its_cause(&total));
        assert!(!table.first_of_its_cause(&per_address) && !table.first_of_its_cause(&total));
        table.refresh(vec![], vec![], DEAD_TIMEOUT_SECS * 1000 + 1);
        assert!(table.first_of_its_cause(&per_address) && table.first_of_its_cause(&total));
    }
}
