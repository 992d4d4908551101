//! The fault schedule of a campaign (`campaign.rs`): which fault strikes what, when and for how long,
//! drawn from a seed so that a run can be replayed; and each kind's window, the stretch of time in which
//! the engine may settle a planned fire by its misfire rule (or send it late) instead of running it on time.

use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;

/// A window opens this long before its fault strikes: fires already on their way are caught too.
pub const BEFORE_MS: i64 = 1_000;
/// A window closes this long after a restart's admin answers, or a kill (a standby takes over at once).
pub const TAKEOVER_MS: i64 = 3_000;
/// ...and this long after any other fault is healed: pools reconnect, a leader takes its lock back or a
/// standby the lease, and late fires collapse into the next ones.
pub const RECOVERY_MS: i64 = 6_000;
/// A leader that stalls with its connections open (frozen, or its link black-holed) is replaced by a
/// standby once its lease has not been renewed for 5 s, which a standby sees within a second.
pub const STALL_REPLACED_MS: i64 = 6_000;
/// Between two faults on the same target: a restarted admin comes up, a server's files settle.
const REST_MS: i64 = 3_000;
/// Between the starts of two faults (on any targets), drawn uniformly.
const GAP_MS: Range<i64> = 1_000..9_001;

/// SplitMix64: a few lines whose output for a seed is fixed, unlike a library generator whose algorithm
/// may change between versions, so that a seed replays the same schedule.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `range`, which is not empty.
    pub fn between(&mut self, range: Range<i64>) -> i64 {
        range.start + (self.next_u64() % (range.end - range.start) as u64) as i64
    }

    pub fn index(&mut self, len: usize) -> usize {
        (self.next_u64() % len as u64) as usize
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultKind {
    /// `kill -9` of an admin, restarted after the fault's length.
    Kill,
    /// SIGSTOP of an admin, SIGCONT after the fault's length.
    Freeze,
    /// The database server stopped (cleanly), started again after the fault's length.
    DatabaseStop,
    /// Every byte between one admin and the database delayed by the fault's amount, both ways.
    LinkDelay,
    /// One admin's database connections closed, and new ones refused.
    LinkCut,
    /// Nothing passes between one admin and the database; its connections stay open.
    LinkBlackHole,
    /// An admin restarted with its clock off by the fault's amount (libfaketime), then restarted true.
    ClockSkew,
    /// The executor answers no `/run`; the runs go ahead when the fault ends.
    ExecutorHang,
    /// The executor answers `/run` after the fault's amount.
    ExecutorSlow,
}

/// What a fault strikes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// The admin of this slot (its process, its link to the database).
    Admin(usize),
    Database,
    /// The executor the nemesis disturbs (the other one stays healthy).
    Executor,
}

impl FaultKind {
    pub const ALL: [FaultKind; 9] = [
        FaultKind::Kill,
        FaultKind::Freeze,
        FaultKind::DatabaseStop,
        FaultKind::LinkDelay,
        FaultKind::LinkCut,
        FaultKind::LinkBlackHole,
        FaultKind::ClockSkew,
        FaultKind::ExecutorHang,
        FaultKind::ExecutorSlow,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Kill => "kill",
            FaultKind::Freeze => "freeze",
            FaultKind::DatabaseStop => "db-stop",
            FaultKind::LinkDelay => "link-delay",
            FaultKind::LinkCut => "link-cut",
            FaultKind::LinkBlackHole => "link-blackhole",
            FaultKind::ClockSkew => "clock-skew",
            FaultKind::ExecutorHang => "executor-hang",
            FaultKind::ExecutorSlow => "executor-slow",
        }
    }

    pub fn parse(name: &str) -> Option<FaultKind> {
        FaultKind::ALL.into_iter().find(|k| k.name() == name.trim())
    }

    /// How long it lasts: a kill until the restart, a clock skew while the admin runs skewed.
    fn lengths(self) -> Range<i64> {
        match self {
            FaultKind::Kill | FaultKind::Freeze | FaultKind::LinkCut | FaultKind::LinkBlackHole => {
                1_000..15_001
            }
            FaultKind::DatabaseStop => 2_000..20_001,
            FaultKind::LinkDelay | FaultKind::ExecutorSlow => 5_000..20_001,
            FaultKind::ClockSkew => 15_000..40_001,
            FaultKind::ExecutorHang => 2_000..10_001,
        }
    }

    /// Its size in ms: the link's delay, the clock's offset (either way), the executor's slowness.
    fn amounts(self) -> Option<Range<i64>> {
        match self {
            FaultKind::LinkDelay => Some(50..1_501),
            FaultKind::ClockSkew => Some(200..2_001),
            FaultKind::ExecutorSlow => Some(200..2_501),
            _ => None,
        }
    }

    fn targets(self, admins: usize) -> Vec<Target> {
        match self {
            FaultKind::DatabaseStop => vec![Target::Database],
            FaultKind::ExecutorHang | FaultKind::ExecutorSlow => vec![Target::Executor],
            _ => (0..admins).map(Target::Admin).collect(),
        }
    }

    /// Its window, given when it struck and when it was healed (see docs/failure-behaviour.md). An
    /// admin's death, or the end of its connections (a cut link), is seen by a standby waiting on the
    /// leader's session lock at once; a stall only through the lease; a slow link, a stopped database
    /// and a stalled or slow executor delay fires while they last. A clock fault's window holds its
    /// restarts (see `campaign.rs`): an admin's clock must not matter.
    /// Whether the fault, on the leader, may cost it the lease (the fires then wait for a takeover).
    pub fn loses_the_lease(self) -> bool {
        matches!(self, FaultKind::Kill | FaultKind::Freeze | FaultKind::LinkCut | FaultKind::LinkBlackHole)
    }

    pub fn window(self, start_ms: i64, end_ms: i64) -> Range<i64> {
        let end = match self {
            FaultKind::Kill => start_ms + TAKEOVER_MS,
            FaultKind::LinkCut => (end_ms + RECOVERY_MS).min(start_ms + TAKEOVER_MS),
            FaultKind::Freeze | FaultKind::LinkBlackHole => {
                (end_ms + RECOVERY_MS).min(start_ms + STALL_REPLACED_MS + TAKEOVER_MS)
            }
            FaultKind::ClockSkew => end_ms + TAKEOVER_MS,
            _ => end_ms + RECOVERY_MS,
        };
        start_ms - BEFORE_MS..end
    }
}

/// One fault of the schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub target: Target,
    /// When it strikes, ms after the fault phase began.
    pub at_ms: i64,
    pub length_ms: i64,
    /// See [`FaultKind`]: a delay, a clock offset, a slowness; 0 for the other kinds.
    pub amount_ms: i64,
}

/// The faults of `kinds` over `span_ms`, for `admins` admin slots, from `seed`. Each kind comes once, in a
/// random order, before any comes twice, so that even a short run meets every kind; then kinds are drawn
/// at random. Faults on different targets overlap freely; one target takes one fault at a time.
pub fn schedule(seed: u64, kinds: &[FaultKind], admins: usize, span_ms: i64) -> Vec<Fault> {
    let mut rng = Rng::new(seed);
    let mut order = kinds.to_vec();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.index(i + 1));
    }
    let mut free_from: HashMap<Target, i64> = HashMap::new();
    let mut faults = Vec::new();
    let mut at = 0;
    loop {
        at += rng.between(GAP_MS);
        if at >= span_ms || kinds.is_empty() {
            break;
        }
        // The first round's kind waits for its target to be free.
        let kind = order.get(faults.len()).copied().unwrap_or_else(|| kinds[rng.index(kinds.len())]);
        let free: Vec<Target> =
            kind.targets(admins).into_iter().filter(|t| free_from.get(t).is_none_or(|&f| f <= at)).collect();
        let length = rng.between(kind.lengths()).min(span_ms - at);
        let amount = kind.amounts().map_or(0, |amounts| rng.between(amounts));
        let sign = if rng.next_u64() % 2 == 0 { 1 } else { -1 };
        let target = free.get(rng.index(free.len().max(1))).copied();
        let Some(target) = target.filter(|_| length >= kind.lengths().start) else { continue };
        let amount_ms = if kind == FaultKind::ClockSkew { sign * amount } else { amount };
        free_from.insert(target, at + length + REST_MS);
        faults.push(Fault { kind, target, at_ms: at, length_ms: length, amount_ms });
    }
    faults
}

/// libfaketime's library for multi-threaded programs, which the clock faults preload into an admin.
pub fn faketime_library() -> Result<PathBuf, String> {
    let mut dirs = vec![PathBuf::from("/usr/lib/faketime")];
    if let Ok(entries) = std::fs::read_dir("/usr/lib") {
        dirs.extend(entries.filter_map(|e| e.ok()).map(|e| e.path().join("faketime")));
    }
    dirs.into_iter()
        .map(|dir| dir.join("libfaketimeMT.so.1"))
        .find(|path| path.is_file())
        .ok_or_else(|| "libfaketimeMT.so.1 not found under /usr/lib (install faketime)".to_string())
}

/// The environment that runs a program with its wall clock `offset_ms` off (the monotonic clock left
/// alone: timers keep their length).
pub fn skewed_clock(library: &std::path::Path, offset_ms: i64) -> Vec<(&'static str, String)> {
    let sign = if offset_ms < 0 { '-' } else { '+' };
    let magnitude = offset_ms.abs();
    vec![
        ("LD_PRELOAD", library.display().to_string()),
        ("FAKETIME", format!("{sign}{}.{:03}", magnitude / 1000, magnitude % 1000)),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1".to_string()),
    ]
}
