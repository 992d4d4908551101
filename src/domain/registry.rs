//! The rules of executor registrations, shared by the registry monitor that writes automatic groups'
//! address lists and the services that show or check them (spec 1.4, 1.5).

use crate::domain::java_split;
use crate::storage::JobRegistry;
use std::collections::{BTreeSet, HashMap};

/// Seconds between registry monitor passes (the executors' beat period).
pub const BEAT_TIMEOUT_SECS: i64 = 30;
/// A registration not refreshed for this long is dead.
pub const DEAD_TIMEOUT_SECS: i64 = BEAT_TIMEOUT_SECS * 3;

/// `xxl_job_group.address_list` is a MySQL TEXT column.
pub const ADDRESS_LIST_MAX_BYTES: usize = 65_535;

/// The addresses, in order, joined with commas as long as they fit `address_list`, and how many did not.
pub fn fitting_list(addresses: &BTreeSet<String>) -> (String, usize) {
    let mut list = String::new();
    for (kept, address) in addresses.iter().enumerate() {
        let separator = usize::from(!list.is_empty());
        if list.len() + separator + address.len() > ADDRESS_LIST_MAX_BYTES {
            return (list, addresses.len() - kept);
        }
        if separator == 1 {
            list.push(',');
        }
        list.push_str(address);
    }
    (list, 0)
}

/// Live executor addresses per AppName, distinct and sorted by code unit order.
pub fn group_addresses(rows: Vec<JobRegistry>) -> HashMap<String, BTreeSet<String>> {
    let mut map: HashMap<String, BTreeSet<String>> = HashMap::new();
    for row in rows.into_iter().filter(|r| r.registry_group == "EXECUTOR") {
        map.entry(row.registry_key).or_default().insert(row.registry_value);
    }
    map
}

/// A group's `address_list` as a list, or none for a blank one.
pub fn listed_addresses(address_list: Option<&str>) -> Option<Vec<String>> {
    let list = address_list.filter(|l| !l.trim().is_empty())?;
    Some(java_split(list).into_iter().map(str::to_string).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(group: &str, key: &str, value: &str) -> JobRegistry {
        JobRegistry {
            id: 0,
            registry_group: group.into(),
            registry_key: key.into(),
            registry_value: value.into(),
            update_time: None,
        }
    }

    #[test]
    fn addresses_are_distinct_sorted_and_executor_only() {
        let map = group_addresses(vec![
            row("EXECUTOR", "app", "http://10.0.0.9:9999/"),
            row("EXECUTOR", "app", "http://10.0.0.10:9999/"),
            row("EXECUTOR", "app", "http://10.0.0.9:9999/"),
            row("ADMIN", "app", "http://admin/"),
            row("EXECUTOR", "other", "http://x/"),
        ]);
        let app: Vec<_> = map["app"].iter().cloned().collect();
        // Plain string order: "10" sorts before "9", as the Java admin sorts.
        assert_eq!(app, vec!["http://10.0.0.10:9999/", "http://10.0.0.9:9999/"]);
        assert_eq!(map["other"].len(), 1);
    }

    #[test]
    fn a_list_keeps_the_sorted_addresses_that_fit_the_column() {
        let addresses: BTreeSet<String> =
            (0..3000).map(|n| format!("http://10.0.{}.{}:9999/", n / 256, n % 256)).collect();
        let (list, left_out) = fitting_list(&addresses);
        assert!(list.len() <= ADDRESS_LIST_MAX_BYTES);
        let kept: Vec<&str> = list.split(',').collect();
        assert_eq!(kept.len() + left_out, 3000);
        assert!(left_out > 0);
        let first: Vec<&str> = addresses.iter().take(kept.len()).map(String::as_str).collect();
        assert_eq!(kept, first, "the first addresses in order");
        let next = addresses.iter().nth(kept.len()).unwrap();
        assert!(list.len() + 1 + next.len() > ADDRESS_LIST_MAX_BYTES, "nothing that fits is left out");
        let small: BTreeSet<String> = ["b", "a"].map(String::from).into();
        assert_eq!(fitting_list(&small), ("a,b".to_string(), 0));
    }
}
