//! Executor registrations: a bounded write queue in front of the database, and the monitor that expires
//! dead registrations and rebuilds the address lists of automatic groups (2.4.2: JobRegistryHelper).
//!
//! Unlike 2.4.2, one group can stop nothing: each group's list is written on its own, a list longer
//! than the `address_list` column keeps the addresses that fit, and each AppName keeps at most
//! `xxl.job.registry.max-per-app` registrations. Before the queue, a gate takes every registration of
//! a configured group's AppName and caps the AppNames no group has (see [`Admissions`]).

use crate::config::Config;
use crate::domain::admission::{Admissions, Refusal, EXECUTOR};
use crate::domain::registry::{
    fitting_list, group_addresses, ADDRESS_LIST_MAX_BYTES, BEAT_TIMEOUT_SECS, DEAD_TIMEOUT_SECS,
};
use crate::metrics::{Metrics, RefusedRegistration};
use crate::storage::{Db, Registered, RegistryKey};
use crate::time::{sleep_unless_cancelled, Clock};
use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const QUEUE_CAPACITY: usize = 2000;
const WRITERS: usize = 4;
/// How long a request may wait for room in a full queue: an executor's read timeout is 3 s.
const ENQUEUE_WAIT: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryOp {
    Register(RegistryKey),
    Remove(RegistryKey),
}

/// The write side of the queue, and the gate registrations pass first; cheap to clone.
#[derive(Clone)]
pub struct RegistryQueue {
    sender: mpsc::Sender<RegistryOp>,
    gate: RegistryGate,
    /// Whether the queue was full at the last push (logged once until it takes a write again).
    full: Arc<AtomicBool>,
}

#[derive(Debug, thiserror::Error)]
#[error("the registry queue is full; try again")]
pub struct QueueFull;

impl RegistryQueue {
    /// Starts the writer tasks; they drain the queue and stop once every sender is gone. Each AppName
    /// keeps at most `xxl.job.registry.max-per-app` registrations.
    pub fn start(
        db: Db,
        clock: Arc<dyn Clock>,
        metrics: Arc<Metrics>,
        config: &Config,
    ) -> (RegistryQueue, Vec<tokio::task::JoinHandle<()>>) {
        let cap = config.registry_max_per_app;
        let (sender, receiver) = mpsc::channel(QUEUE_CAPACITY);
        let receiver = Arc::new(tokio::sync::Mutex::new(receiver));
        let full = Arc::new(FullApps::default());
        let writers = (0..WRITERS)
            .map(|_| {
                let (db, clock, receiver, full) = (db.clone(), clock.clone(), receiver.clone(), full.clone());
                let metrics = metrics.clone();
                tokio::spawn(async move {
                    loop {
                        let op = receiver.lock().await.recv().await;
                        let Some(op) = op else { break };
                        match apply(&db, &op, clock.now_ms(), cap).await {
                            Ok(outcome) => full.note(&op, outcome, cap, &metrics),
                            // The executor beats again within 30 s, which repairs a lost write.
                            Err(e) => tracing::warn!(?op, "registry write failed: {e}"),
                        }
                    }
                })
            })
            .collect();
        let gate = RegistryGate {
            table: Arc::new(Mutex::new(Admissions::new(
                config.registry_max_apps_per_address,
                config.registry_max_apps,
            ))),
            db,
            clock,
            metrics,
        };
        (RegistryQueue { sender, gate, full: Arc::default() }, writers)
    }

    /// What the registry monitor refreshes.
    pub fn gate(&self) -> RegistryGate {
        self.gate.clone()
    }

    /// Whether a registration from client `address` may be queued (see [`RegistryGate::admit`]).
    pub async fn admit(&self, address: IpAddr, key: &RegistryKey) -> Result<(), Refusal> {
        self.gate.admit(address, key).await
    }

    /// Queues a write, waiting briefly for room when a flood of executors filled the queue.
    pub async fn push(&self, op: RegistryOp) -> Result<(), QueueFull> {
        match self.sender.send_timeout(op, ENQUEUE_WAIT).await {
            Ok(()) => {
                if self.full.load(Ordering::Relaxed) {
                    self.full.store(false, Ordering::Relaxed);
                }
                Ok(())
            }
            Err(_) => {
                self.gate.metrics.registration_refused(RefusedRegistration::QueueFull);
                if !self.full.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "the registry write queue ({QUEUE_CAPACITY} writes) stayed full for {ENQUEUE_WAIT:?}: \
                         registrations are refused until the database keeps up"
                    );
                }
                Err(QueueFull)
            }
        }
    }
}

/// Which registrations the admin takes (see [`Admissions`]): the table decides on the paths executors
/// beat through, and the database only before a refusal.
#[derive(Clone)]
pub struct RegistryGate {
    db: Db,
    clock: Arc<dyn Clock>,
    metrics: Arc<Metrics>,
    table: Arc<Mutex<Admissions>>,
}

impl RegistryGate {
    fn table(&self) -> MutexGuard<'_, Admissions> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes a registration from client `address`, or says why not: logged once per cause, counted each
    /// time. Open on a database error, as the write would fail the same way.
    pub async fn admit(&self, address: IpAddr, key: &RegistryKey) -> Result<(), Refusal> {
        let now_ms = self.clock.now_ms();
        let verdict = self.table().admit(address, &key.registry_group, &key.registry_key, now_ms);
        let Err(refusal) = verdict else { return Ok(()) };
        match self.stored(key).await {
            Ok(false) => {}
            Ok(true) => return Ok(()),
            Err(e) => {
                tracing::warn!("registry: checking a registration against the database failed: {e}");
                return Ok(());
            }
        }
        if self.table().first_of_its_cause(&refusal) {
            tracing::warn!(
                "{refusal}; further refusals of this cause are counted in xxl_job_registrations_refused_total, \
                 not logged"
            );
        }
        self.metrics.registration_refused(match refusal {
            Refusal::PerAddress { .. } => RefusedRegistration::MaxAppsPerAddress,
            Refusal::Total { .. } => RefusedRegistration::MaxApps,
        });
        Err(refusal)
    }

    /// What the table cannot know: a group made since the last refresh, or this very registration made
    /// through another admin or before a restart.
    async fn stored(&self, key: &RegistryKey) -> crate::storage::Result<bool> {
        if key.registry_group == EXECUTOR && self.db.group_app_name_exists(&key.registry_key).await? {
            self.table().add_group(&key.registry_key);
            return Ok(true);
        }
        self.db.registration_exists(key).await
    }

    /// Reads every group's AppName and the live AppNames again.
    pub async fn refresh(&self, now_ms: i64) {
        let groups = self.db.group_app_names().await;
        let live = self.db.live_registry_apps(DEAD_TIMEOUT_SECS, now_ms).await;
        match (groups, live) {
            (Ok(groups), Ok(live)) => self.table().refresh(groups, live, now_ms),
            (Err(e), _) | (_, Err(e)) => {
                tracing::warn!("registry: reading the groups and AppNames failed: {e}")
            }
        }
    }
}

async fn apply(
    db: &Db,
    op: &RegistryOp,
    now_ms: i64,
    cap: u32,
) -> crate::storage::Result<Option<Registered>> {
    match op {
        RegistryOp::Register(key) => db.registry_upsert(key, now_ms, cap).await.map(Some),
        RegistryOp::Remove(key) => db.registry_delete(key).await.map(|_| None),
    }
}

/// AppNames whose registrations were refused for the cap, so each is warned about once, not on every
/// beat of every refused executor.
#[derive(Default)]
struct FullApps(Mutex<HashSet<String>>);

impl FullApps {
    fn note(&self, op: &RegistryOp, outcome: Option<Registered>, cap: u32, metrics: &Metrics) {
        let RegistryOp::Register(key) = op else { return };
        let mut full = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match outcome {
            Some(Registered::Full) => {
                metrics.registration_refused(RefusedRegistration::MaxPerApp);
                if full.insert(key.registry_key.clone()) {
                    tracing::warn!(
                        app = key.registry_key,
                        "AppName has {cap} registrations (xxl.job.registry.max-per-app); further executors are not registered"
                    );
                }
            }
            Some(Registered::Added) => {
                full.remove(&key.registry_key);
            }
            _ => {}
        }
    }
}

/// Runs monitor passes every 30 s until shutdown, each followed by a refresh of the registry's gate.
pub async fn run_monitor(db: Db, clock: Arc<dyn Clock>, gate: RegistryGate, shutdown: CancellationToken) {
    let mut cut = HashSet::new();
    loop {
        monitor_pass(&db, clock.now_ms(), &mut cut).await;
        gate.refresh(clock.now_ms()).await;
        if !sleep_unless_cancelled(&shutdown, Duration::from_secs(BEAT_TIMEOUT_SECS as u64)).await {
            break;
        }
    }
}

/// One pass: expire dead registrations, then write every automatic group's live addresses, each group on
/// its own so that one failing group never stops the others. `cut` holds the groups whose list did not
/// fit at the last pass (each is warned about once, until it fits again).
pub async fn monitor_pass(db: &Db, now_ms: i64, cut: &mut HashSet<i32>) {
    // Unlike 2.4.2, dead rows are removed even when no automatic group exists (they would hide lost
    // results from the lost-result monitor).
    match db.find_dead_registry_ids(DEAD_TIMEOUT_SECS, now_ms).await {
        Ok(dead) => {
            if let Err(e) = db.delete_registry_ids(&dead).await {
                tracing::warn!("registry monitor: removing dead registrations failed: {e}");
            }
        }
        Err(e) => tracing::warn!("registry monitor: finding dead registrations failed: {e}"),
    }
    let groups = match db.groups_by_address_type(crate::domain::codes::AddressType::Auto).await {
        Ok(groups) if groups.is_empty() => return,
        Ok(groups) => groups,
        Err(e) => return tracing::warn!("registry monitor: reading the groups failed: {e}"),
    };
    let live = match db.live_registrations(DEAD_TIMEOUT_SECS, now_ms).await {
        Ok(rows) => group_addresses(rows),
        Err(e) => return tracing::warn!("registry monitor: reading the registrations failed: {e}"),
    };
    for group in groups {
        let list = live.get(&group.app_name).map(fitting_list);
        match &list {
            Some((_, left_out)) if *left_out > 0 => {
                if cut.insert(group.id) {
                    tracing::warn!(
                        app = group.app_name,
                        left_out,
                        "the executor address list is longer than the address_list column ({ADDRESS_LIST_MAX_BYTES} bytes); \
                         only the addresses that fit are kept"
                    );
                }
            }
            _ => {
                cut.remove(&group.id);
            }
        }
        let addresses = list.map(|(text, _)| text);
        if let Err(e) = db.update_group_addresses(group.id, addresses.as_deref(), now_ms).await {
            tracing::warn!(app = group.app_name, "registry monitor: writing the address list failed: {e}");
        }
    }
}
