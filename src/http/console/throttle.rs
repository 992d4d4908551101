//! Slows password guessing without letting anyone lock an account out.
//!
//! Failures are counted per account actually found (its id, whatever spelling of the name found it:
//! MySQL's `utf8mb4_unicode_ci` matches `ädmin` to `admin`) and client address, and per client address
//! across all names. Past a few free attempts every further failure makes that key wait, twice as long
//! each time up to a ceiling. The right password keeps working from every other address, so a stranger
//! guessing an account's password cannot keep its owner out. The old-password check of `/user/updatePwd`
//! counts the same way.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

/// Failures of one account from one address before the waits begin.
pub const FREE_PER_ACCOUNT: u32 = 5;
/// Failures from one address, over every name, before the waits begin: room for a few mistyped names.
pub const FREE_PER_ADDRESS: u32 = 20;
/// The first wait; each further failure doubles it.
pub const FIRST_WAIT_MS: i64 = 30_000;
/// The longest wait: at most four guesses an hour per key once it is reached.
pub const MAX_WAIT_MS: i64 = 15 * 60_000;
/// A key without a failure for this long starts afresh.
const FORGET_MS: i64 = 60 * 60_000;
/// Keys kept before expired ones are swept, bounding memory under a flood of addresses.
const SWEEP_AT: usize = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Account(i32, IpAddr),
    Address(IpAddr),
}

#[derive(Debug, Clone, Copy)]
struct Failures {
    count: u32,
    last_ms: i64,
}

impl Failures {
    /// When this key may try again, if it has to wait at all.
    fn open_at(&self, free: u32) -> Option<i64> {
        let doublings = self.count.checked_sub(free)?.min(20);
        Some(self.last_ms + (FIRST_WAIT_MS << doublings).min(MAX_WAIT_MS))
    }
}

#[derive(Default)]
pub struct LoginThrottle {
    failures: Mutex<HashMap<Key, Failures>>,
}

impl LoginThrottle {
    fn keys(account: Option<i32>, address: IpAddr) -> impl Iterator<Item = (Key, u32)> {
        std::iter::once((Key::Address(address), FREE_PER_ADDRESS))
            .chain(account.map(|id| (Key::Account(id, address), FREE_PER_ACCOUNT)))
    }

    /// Milliseconds until `account` (when a name found one) may be tried again from `address`; `None`
    /// when it may be tried now.
    pub fn wait_ms(&self, account: Option<i32>, address: IpAddr, now_ms: i64) -> Option<i64> {
        let failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        Self::keys(account, address)
            .filter_map(|(key, free)| failures.get(&key).and_then(|f| f.open_at(free)).map(|at| at - now_ms))
            .filter(|wait| *wait > 0)
            .max()
    }

    pub fn record_failure(&self, account: Option<i32>, address: IpAddr, now_ms: i64) {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        if failures.len() > SWEEP_AT {
            failures.retain(|_, f| now_ms - f.last_ms < FORGET_MS);
        }
        for (key, _) in Self::keys(account, address) {
            let entry = failures.entry(key).or_insert(Failures { count: 0, last_ms: now_ms });
            if now_ms - entry.last_ms >= FORGET_MS {
                entry.count = 0;
            }
            entry.count += 1;
            entry.last_ms = now_ms;
        }
    }

    /// The account's count from this address starts afresh. The address's own count is kept, or one
    /// valid account would reset it between guesses at others.
    pub fn record_success(&self, account: i32, address: IpAddr) {
        self.failures.lock().unwrap_or_else(|e| e.into_inner()).remove(&Key::Account(account, address));
    }
}

/// Whole seconds of a wait, rounded up, for the message.
pub fn wait_secs(wait_ms: i64) -> i64 {
    (wait_ms + 999) / 1000
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn waits_begin_after_the_free_attempts_and_grow() {
        let throttle = LoginThrottle::default();
        let (a, b) = (ip("10.0.0.1"), ip("10.0.0.2"));
        for _ in 0..FREE_PER_ACCOUNT {
            assert_eq!(throttle.wait_ms(Some(1), a, 0), None);
            throttle.record_failure(Some(1), a, 0);
        }
        assert_eq!(throttle.wait_ms(Some(1), a, 0), Some(FIRST_WAIT_MS));
        assert_eq!(throttle.wait_ms(Some(1), b, 0), None, "another address is not held back");
        assert_eq!(throttle.wait_ms(Some(2), a, 0), None, "another account is not held back");
        throttle.record_failure(Some(1), a, FIRST_WAIT_MS);
        assert_eq!(throttle.wait_ms(Some(1), a, FIRST_WAIT_MS), Some(2 * FIRST_WAIT_MS), "doubled");
        for n in 0..20 {
            throttle.record_failure(Some(1), a, 10 * FIRST_WAIT_MS + n);
        }
        assert_eq!(throttle.wait_ms(Some(1), a, 10 * FIRST_WAIT_MS + 19), Some(MAX_WAIT_MS), "capped");
        throttle.record_success(1, a);
        assert_eq!(
            throttle.wait_ms(Some(1), a, 10 * FIRST_WAIT_MS + 19),
            Some(MAX_WAIT_MS),
            "the address still waits"
        );
    }

    #[test]
    fn one_address_guessing_many_names_is_held_back() {
        let throttle = LoginThrottle::default();
        let a = ip("192.0.2.7");
        for n in 0..FREE_PER_ADDRESS {
            assert_eq!(throttle.wait_ms(None, a, 0), None);
            throttle.record_failure(if n % 2 == 0 { None } else { Some(n as i32) }, a, 0);
        }
        assert!(throttle.wait_ms(None, a, 0).is_some());
        assert!(throttle.wait_ms(Some(99), a, 0).is_some());
        assert_eq!(throttle.wait_ms(Some(99), ip("192.0.2.8"), 0), None);
    }

    #[test]
    fn failures_are_forgotten_after_a_quiet_hour() {
        let throttle = LoginThrottle::default();
        let a = ip("::1");
        for _ in 0..FREE_PER_ACCOUNT {
            throttle.record_failure(Some(1), a, 0);
        }
        throttle.record_failure(Some(1), a, FORGET_MS);
        assert_eq!(
            throttle.wait_ms(Some(1), a, FORGET_MS),
            None,
            "one failure after an hour is a fresh start"
        );
        assert_eq!(wait_secs(1), 1);
        assert_eq!(wait_secs(30_000), 30);
    }
}
