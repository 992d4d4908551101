//! Executor route strategies (2.4.2: ExecutorRouteStrategyEnum): which address of a group a trigger goes to.
//!
//! The stateful strategies (ROUND, LFU, LRU) keep their state in this admin's memory only, as 2.4.2 does
//! (its `ExecutorRoute*` classes): it is not shared across a cluster, is lost on restart, cleared every 24 h.
//! FAILOVER and BUSYOVER need executor calls and SHARDING_BROADCAST fans out, so the trigger handles those.

use md5::{Digest, Md5};
use rand::Rng;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, PoisonError};

/// The `xxl_job_info.executor_route_strategy` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteStrategy {
    First,
    Last,
    Round,
    Random,
    ConsistentHash,
    LeastFrequentlyUsed,
    LeastRecentlyUsed,
    Failover,
    Busyover,
    ShardingBroadcast,
}

impl RouteStrategy {
    /// In the order of 2.4.2's enum, which is the order of the console's select box.
    pub const ALL: [RouteStrategy; 10] = [
        RouteStrategy::First,
        RouteStrategy::Last,
        RouteStrategy::Round,
        RouteStrategy::Random,
        RouteStrategy::ConsistentHash,
        RouteStrategy::LeastFrequentlyUsed,
        RouteStrategy::LeastRecentlyUsed,
        RouteStrategy::Failover,
        RouteStrategy::Busyover,
        RouteStrategy::ShardingBroadcast,
    ];

    /// Exact, case-sensitive match of the stored name, as `ExecutorRouteStrategyEnum.match` does.
    pub fn from_name(name: &str) -> Option<RouteStrategy> {
        RouteStrategy::ALL.into_iter().find(|strategy| strategy.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            RouteStrategy::First => "FIRST",
            RouteStrategy::Last => "LAST",
            RouteStrategy::Round => "ROUND",
            RouteStrategy::Random => "RANDOM",
            RouteStrategy::ConsistentHash => "CONSISTENT_HASH",
            RouteStrategy::LeastFrequentlyUsed => "LEAST_FREQUENTLY_USED",
            RouteStrategy::LeastRecentlyUsed => "LEAST_RECENTLY_USED",
            RouteStrategy::Failover => "FAILOVER",
            RouteStrategy::Busyover => "BUSYOVER",
            RouteStrategy::ShardingBroadcast => "SHARDING_BROADCAST",
        }
    }

    /// The i18n key of the strategy's title.
    pub fn i18n_key(self) -> &'static str {
        match self {
            RouteStrategy::First => "jobconf_route_first",
            RouteStrategy::Last => "jobconf_route_last",
            RouteStrategy::Round => "jobconf_route_round",
            RouteStrategy::Random => "jobconf_route_random",
            RouteStrategy::ConsistentHash => "jobconf_route_consistenthash",
            RouteStrategy::LeastFrequentlyUsed => "jobconf_route_lfu",
            RouteStrategy::LeastRecentlyUsed => "jobconf_route_lru",
            RouteStrategy::Failover => "jobconf_route_failover",
            RouteStrategy::Busyover => "jobconf_route_busyover",
            RouteStrategy::ShardingBroadcast => "jobconf_route_shard",
        }
    }
}

/// How long router state lives before it is dropped wholesale (2.4.2's `CACHE_VALID_TIME`).
const STATE_LIFETIME_MS: i64 = 24 * 60 * 60 * 1000;
/// Counters above this are re-seeded, so they never overflow.
const COUNT_LIMIT: usize = 1_000_000;
/// ROUND starts each job at a random offset below this, so admins restarted together do not all hit list[0].
const ROUND_START_RANGE: usize = 100;
/// Virtual nodes per address on the consistent-hash ring.
const VIRTUAL_NODES: usize = 100;

/// Per-job state of one strategy, cleared as a whole once `now` passes its expiry. Each strategy has its
/// own expiry, like each 2.4.2 router class; the first use always starts empty.
struct DailyState<V> {
    expires_at: i64,
    by_job: HashMap<i32, V>,
}

impl<V: Default> DailyState<V> {
    fn new() -> DailyState<V> {
        DailyState { expires_at: i64::MIN, by_job: HashMap::new() }
    }

    fn job(&mut self, job_id: i32, now_ms: i64) -> &mut V {
        if now_ms > self.expires_at {
            self.by_job.clear();
            self.expires_at = now_ms.saturating_add(STATE_LIFETIME_MS);
        }
        self.by_job.entry(job_id).or_default()
    }
}

struct RouterState {
    /// ROUND: the last counter value per job.
    round: DailyState<Option<usize>>,
    /// LFU: use count per address.
    lfu: DailyState<HashMap<String, usize>>,
    /// LRU: addresses from least to most recently used.
    lru: DailyState<Vec<String>>,
}

/// The in-memory router state of this admin; thread-safe, share it behind an `Arc`.
pub struct Router {
    state: Mutex<RouterState>,
}

impl Default for Router {
    fn default() -> Router {
        Router::new()
    }
}

impl Router {
    pub fn new() -> Router {
        Router {
            state: Mutex::new(RouterState {
                round: DailyState::new(),
                lfu: DailyState::new(),
                lru: DailyState::new(),
            }),
        }
    }

    /// The address for the strategies that need no executor call (FIRST to LRU). `None` for FAILOVER,
    /// BUSYOVER and SHARDING_BROADCAST, which the caller handles, and for an empty address list.
    /// `addresses` is the group's list in `address_list` order; `now_ms` drives the 24 h reset.
    pub fn pick(
        &self,
        strategy: RouteStrategy,
        job_id: i32,
        addresses: &[String],
        now_ms: i64,
    ) -> Option<String> {
        if addresses.is_empty() {
            return None;
        }
        match strategy {
            RouteStrategy::First => addresses.first().cloned(),
            RouteStrategy::Last => addresses.last().cloned(),
            RouteStrategy::Random => Some(addresses[rand::rng().random_range(0..addresses.len())].clone()),
            RouteStrategy::ConsistentHash => Some(consistent_hash_pick(job_id, addresses)),
            RouteStrategy::Round => Some(self.lock().round.pick(job_id, addresses, now_ms)),
            RouteStrategy::LeastFrequentlyUsed => Some(self.lock().lfu.pick(job_id, addresses, now_ms)),
            RouteStrategy::LeastRecentlyUsed => Some(self.lock().lru.pick(job_id, addresses, now_ms)),
            RouteStrategy::Failover | RouteStrategy::Busyover | RouteStrategy::ShardingBroadcast => None,
        }
    }

    /// The state stays consistent even if a holder panicked (every update is a single step), so a poisoned
    /// lock is simply taken over.
    fn lock(&self) -> std::sync::MutexGuard<'_, RouterState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl DailyState<Option<usize>> {
    /// ROUND (2.4.2: ExecutorRouteRound): a random start in `[0, 100)`, then +1 per trigger;
    /// `list[value mod n]`.
    fn pick(&mut self, job_id: i32, addresses: &[String], now_ms: i64) -> String {
        let counter = self.job(job_id, now_ms);
        let value = match *counter {
            Some(count) if count <= COUNT_LIMIT => count + 1,
            _ => rand::rng().random_range(0..ROUND_START_RANGE),
        };
        *counter = Some(value);
        addresses[value % addresses.len()].clone()
    }
}

impl DailyState<HashMap<String, usize>> {
    /// LEAST_FREQUENTLY_USED (2.4.2: ExecutorRouteLFU). New addresses start at a random count in `[0, n)`
    /// so a fresh job does not send its first triggers all to one executor. Ties go to the earliest address
    /// in the list (2.4.2 leaves them to hash-map order).
    fn pick(&mut self, job_id: i32, addresses: &[String], now_ms: i64) -> String {
        let counts = self.job(job_id, now_ms);
        let mut rng = rand::rng();
        for address in addresses {
            if counts.get(address).is_none_or(|&count| count > COUNT_LIMIT) {
                counts.insert(address.clone(), rng.random_range(0..addresses.len()));
            }
        }
        let current: HashSet<&str> = addresses.iter().map(String::as_str).collect();
        counts.retain(|address, _| current.contains(address.as_str()));
        let chosen = addresses.iter().min_by_key(|address| counts[*address]).unwrap_or(&addresses[0]);
        if let Some(count) = counts.get_mut(chosen) {
            *count += 1;
        }
        chosen.clone()
    }
}

impl DailyState<Vec<String>> {
    /// LEAST_RECENTLY_USED (2.4.2: ExecutorRouteLRU): new addresses join at the most-recent end, vanished
    /// ones are dropped, and the least recent one is served and becomes the most recent: a rotation in list
    /// order.
    fn pick(&mut self, job_id: i32, addresses: &[String], now_ms: i64) -> String {
        let order = self.job(job_id, now_ms);
        for address in addresses {
            if !order.contains(address) {
                order.push(address.clone());
            }
        }
        let current: HashSet<&str> = addresses.iter().map(String::as_str).collect();
        order.retain(|address| current.contains(address.as_str()));
        let eldest = order.remove(0);
        order.push(eldest.clone());
        eldest
    }
}

/// CONSISTENT_HASH (2.4.2: ExecutorRouteConsistentHash): the job's position on a ring of 100 virtual nodes
/// per address. Pure, so every admin of a cluster sends a job to the same executor while the address list
/// is unchanged. Empty string for an empty list.
pub fn consistent_hash_pick(job_id: i32, addresses: &[String]) -> String {
    let mut ring: BTreeMap<u32, &String> = BTreeMap::new();
    for address in addresses {
        for node in 0..VIRTUAL_NODES {
            // A later address overwrites an equal key, as `TreeMap.put` does.
            ring.insert(ring_hash(&format!("SHARD-{address}-NODE-{node}")), address);
        }
    }
    let key = ring_hash(&job_id.to_string());
    ring.range(key..)
        .next()
        .or_else(|| ring.iter().next())
        .map(|(_, address)| (*address).clone())
        .unwrap_or_default()
}

/// MD5 of the UTF-8 bytes; digest bytes 0–3 read as a little-endian unsigned 32-bit number.
fn ring_hash(key: &str) -> u32 {
    let digest = Md5::digest(key.as_bytes());
    u32::from_le_bytes([digest[0], digest[1], digest[2], digest[3]])
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000;
    const HOUR: i64 = 60 * 60 * 1000;

    fn list(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn index_of(addresses: &[String], address: &str) -> usize {
        addresses.iter().position(|a| a == address).unwrap()
    }

    #[test]
    fn names_and_keys_round_trip_exactly() {
        for strategy in RouteStrategy::ALL {
            assert_eq!(RouteStrategy::from_name(strategy.name()), Some(strategy));
            assert!(strategy.i18n_key().starts_with("jobconf_route_"));
        }
        assert_eq!(RouteStrategy::from_name("SHARDING_BROADCAST"), Some(RouteStrategy::ShardingBroadcast));
        assert_eq!(RouteStrategy::LeastFrequentlyUsed.i18n_key(), "jobconf_route_lfu");
        assert_eq!(RouteStrategy::ShardingBroadcast.i18n_key(), "jobconf_route_shard");
        assert_eq!(RouteStrategy::from_name("first"), None);
        assert_eq!(RouteStrategy::from_name(" FIRST"), None);
        assert_eq!(RouteStrategy::from_name(""), None);
    }

    #[test]
    fn first_and_last() {
        let router = Router::new();
        let addresses = list(&["a", "b", "c"]);
        assert_eq!(router.pick(RouteStrategy::First, 1, &addresses, NOW).as_deref(), Some("a"));
        assert_eq!(router.pick(RouteStrategy::Last, 1, &addresses, NOW).as_deref(), Some("c"));
    }

    #[test]
    fn probing_strategies_and_empty_lists_are_left_to_the_caller() {
        let router = Router::new();
        let addresses = list(&["a"]);
        for strategy in [RouteStrategy::Failover, RouteStrategy::Busyover, RouteStrategy::ShardingBroadcast] {
            assert_eq!(router.pick(strategy, 1, &addresses, NOW), None);
        }
        for strategy in RouteStrategy::ALL {
            assert_eq!(router.pick(strategy, 1, &[], NOW), None);
        }
        assert_eq!(consistent_hash_pick(1, &[]), "");
    }

    #[test]
    fn round_rotates_through_all_addresses_per_job() {
        let router = Router::new();
        let addresses = list(&["a", "b", "c"]);
        let mut previous =
            index_of(&addresses, &router.pick(RouteStrategy::Round, 1, &addresses, NOW).unwrap());
        for step in 0..30 {
            // Another job's counter must not disturb this one.
            router.pick(RouteStrategy::Round, 2, &addresses, NOW + step);
            let next =
                index_of(&addresses, &router.pick(RouteStrategy::Round, 1, &addresses, NOW + step).unwrap());
            assert_eq!(next, (previous + 1) % addresses.len());
            previous = next;
        }
    }

    #[test]
    fn round_reseeds_a_counter_past_the_limit() {
        let mut state = DailyState::<Option<usize>>::new();
        let addresses = list(&["a", "b"]);
        state.pick(7, &addresses, NOW);
        *state.job(7, NOW) = Some(COUNT_LIMIT + 1);
        state.pick(7, &addresses, NOW);
        assert!(state.job(7, NOW).unwrap() < ROUND_START_RANGE);
    }

    #[test]
    fn random_stays_in_range_and_covers_all() {
        let router = Router::new();
        let addresses = list(&["a", "b", "c"]);
        let mut seen = HashSet::new();
        for _ in 0..300 {
            let picked = router.pick(RouteStrategy::Random, 1, &addresses, NOW).unwrap();
            assert!(addresses.contains(&picked));
            seen.insert(picked);
        }
        assert_eq!(seen.len(), 3);
    }

    #[test]
    fn ring_hash_matches_md5_little_endian() {
        // Expected values computed independently:
        // int.from_bytes(hashlib.md5(s.encode()).digest()[:4], "little")
        assert_eq!(ring_hash("1"), 943_901_380);
        assert_eq!(ring_hash("42"), 3_905_343_649);
        assert_eq!(ring_hash("SHARD-http://127.0.0.1:9999/-NODE-0"), 2_087_608_106);
    }

    #[test]
    fn consistent_hash_matches_the_ring_and_is_stable() {
        let addresses = list(&["http://10.0.0.1:9999/", "http://10.0.0.2:9999/", "http://10.0.0.3:9999/"]);
        // Expected picks computed independently with python3 hashlib over the same 300-node ring; job 769
        // hashes above every node and wraps around to the smallest key.
        let expected = [
            (1, "http://10.0.0.3:9999/"),
            (2, "http://10.0.0.3:9999/"),
            (3, "http://10.0.0.1:9999/"),
            (7, "http://10.0.0.2:9999/"),
            (42, "http://10.0.0.2:9999/"),
            (769, "http://10.0.0.1:9999/"),
        ];
        let router = Router::new();
        for (job_id, address) in expected {
            assert_eq!(consistent_hash_pick(job_id, &addresses), address, "job {job_id}");
            assert_eq!(
                router.pick(RouteStrategy::ConsistentHash, job_id, &addresses, NOW).as_deref(),
                Some(address)
            );
        }
        assert_eq!(consistent_hash_pick(1, &addresses[..1]), addresses[0]);
    }

    #[test]
    fn lfu_spreads_load_evenly() {
        let router = Router::new();
        let addresses = list(&["a", "b", "c"]);
        let mut hits: HashMap<String, usize> = HashMap::new();
        for step in 0..300 {
            *hits
                .entry(router.pick(RouteStrategy::LeastFrequentlyUsed, 1, &addresses, NOW + step).unwrap())
                .or_default() += 1;
        }
        // Initial counts differ by less than n, so the totals differ by at most n.
        for address in &addresses {
            let count = hits[address];
            assert!((97..=103).contains(&count), "{address}: {count}");
        }
    }

    #[test]
    fn lfu_forgets_removed_addresses() {
        let router = Router::new();
        let all = list(&["a", "b", "c"]);
        for _ in 0..30 {
            router.pick(RouteStrategy::LeastFrequentlyUsed, 1, &all, NOW);
        }
        let without_c = list(&["a", "b"]);
        for _ in 0..10 {
            assert_ne!(
                router.pick(RouteStrategy::LeastFrequentlyUsed, 1, &without_c, NOW).as_deref(),
                Some("c")
            );
        }
        // Back with a fresh count below 3, far under the others' ~15, so it is the least used now.
        assert_eq!(router.pick(RouteStrategy::LeastFrequentlyUsed, 1, &all, NOW).as_deref(), Some("c"));
    }

    #[test]
    fn lru_rotates_in_list_order_and_serves_new_addresses_last() {
        let router = Router::new();
        let addresses = list(&["a", "b", "c"]);
        let picks: Vec<String> = (0..5)
            .map(|_| router.pick(RouteStrategy::LeastRecentlyUsed, 1, &addresses, NOW).unwrap())
            .collect();
        assert_eq!(picks, list(&["a", "b", "c", "a", "b"]));
        let grown = list(&["a", "b", "c", "d"]);
        let picks: Vec<String> =
            (0..5).map(|_| router.pick(RouteStrategy::LeastRecentlyUsed, 1, &grown, NOW).unwrap()).collect();
        assert_eq!(picks, list(&["c", "a", "b", "d", "c"]));
        let shrunk = list(&["b", "d"]);
        let picks: Vec<String> =
            (0..3).map(|_| router.pick(RouteStrategy::LeastRecentlyUsed, 1, &shrunk, NOW).unwrap()).collect();
        assert_eq!(picks, list(&["b", "d", "b"]));
    }

    #[test]
    fn state_is_dropped_after_24_hours() {
        let router = Router::new();
        let addresses = list(&["a", "b", "c"]);
        assert_eq!(router.pick(RouteStrategy::LeastRecentlyUsed, 1, &addresses, NOW).as_deref(), Some("a"));
        assert_eq!(
            router.pick(RouteStrategy::LeastRecentlyUsed, 1, &addresses, NOW + 23 * HOUR).as_deref(),
            Some("b")
        );
        // Exactly 24 h after the first use is still inside the window; one millisecond later it is not.
        assert_eq!(
            router.pick(RouteStrategy::LeastRecentlyUsed, 1, &addresses, NOW + 24 * HOUR).as_deref(),
            Some("c")
        );
        assert_eq!(
            router.pick(RouteStrategy::LeastRecentlyUsed, 1, &addresses, NOW + 24 * HOUR + 1).as_deref(),
            Some("a")
        );
        // The next window is measured from the reset.
        assert_eq!(
            router.pick(RouteStrategy::LeastRecentlyUsed, 1, &addresses, NOW + 47 * HOUR).as_deref(),
            Some("b")
        );
    }
}
