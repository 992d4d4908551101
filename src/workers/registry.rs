//! Executor registrations: a bounded write queue in front of the database, and the monitor that expires
//! dead registrations and rebuilds the address lists of automatic groups (spec 1.4, 1.5, 4.4).

use super::Shutdown;
use crate::storage::{Db, JobRegistry, RegistryKey};
use crate::time::Clock;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// Seconds between registry monitor passes (the executors' beat period).
pub const BEAT_TIMEOUT_SECS: i64 = 30;
/// A registration not refreshed for this long is dead.
pub const DEAD_TIMEOUT_SECS: i64 = BEAT_TIMEOUT_SECS * 3;

const QUEUE_CAPACITY: usize = 2000;
const WRITERS: usize = 4;
/// How long a request may wait for room in a full queue: an executor's read timeout is 3 s.
const ENQUEUE_WAIT: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryOp {
    Register(RegistryKey),
    Remove(RegistryKey),
}

/// The write side of the queue; cheap to clone.
#[derive(Clone)]
pub struct RegistryQueue {
    sender: mpsc::Sender<RegistryOp>,
}

#[derive(Debug, thiserror::Error)]
#[error("the registry queue is full; try again")]
pub struct QueueFull;

impl RegistryQueue {
    /// Starts the writer tasks; they drain the queue and stop once every sender is gone.
    pub fn start(db: Db, clock: Arc<dyn Clock>) -> (RegistryQueue, Vec<tokio::task::JoinHandle<()>>) {
        let (sender, receiver) = mpsc::channel(QUEUE_CAPACITY);
        let receiver = Arc::new(tokio::sync::Mutex::new(receiver));
        let writers = (0..WRITERS)
            .map(|_| {
                let (db, clock, receiver) = (db.clone(), clock.clone(), receiver.clone());
                tokio::spawn(async move {
                    loop {
                        let op = receiver.lock().await.recv().await;
                        let Some(op) = op else { break };
                        if let Err(e) = apply(&db, &op, clock.now_ms()).await {
                            // The executor beats again within 30 s, which repairs a lost write.
                            tracing::warn!(?op, "registry write failed: {e}");
                        }
                    }
                })
            })
            .collect();
        (RegistryQueue { sender }, writers)
    }

    /// Queues a write, waiting briefly for room when a flood of executors filled the queue.
    pub async fn push(&self, op: RegistryOp) -> Result<(), QueueFull> {
        self.sender.send_timeout(op, ENQUEUE_WAIT).await.map_err(|_| QueueFull)
    }
}

async fn apply(db: &Db, op: &RegistryOp, now_ms: i64) -> crate::storage::Result<()> {
    match op {
        RegistryOp::Register(key) => db.registry_upsert(key, now_ms).await,
        RegistryOp::Remove(key) => db.registry_delete(key).await.map(|_| ()),
    }
}

/// Runs monitor passes every 30 s until shutdown.
pub async fn run_monitor(db: Db, clock: Arc<dyn Clock>, mut shutdown: Shutdown) {
    loop {
        if let Err(e) = monitor_pass(&db, clock.now_ms()).await {
            tracing::warn!("registry monitor pass failed: {e}");
        }
        if !shutdown.sleep(Duration::from_secs(BEAT_TIMEOUT_SECS as u64)).await {
            break;
        }
    }
}

/// One pass: expire dead registrations, then write every automatic group's live addresses.
pub async fn monitor_pass(db: &Db, now_ms: i64) -> crate::storage::Result<()> {
    // Unlike 2.4.2, dead rows are removed even when no automatic group exists (they would hide lost
    // results from the lost-result monitor).
    let dead = db.find_dead_registry_ids(DEAD_TIMEOUT_SECS, now_ms).await?;
    db.delete_registry_ids(&dead).await?;

    let groups = db.groups_by_address_type(0).await?;
    if groups.is_empty() {
        return Ok(());
    }
    let live = group_addresses(db.live_registrations(DEAD_TIMEOUT_SECS, now_ms).await?);
    for group in groups {
        let addresses = live.get(&group.app_name).map(|set| set.iter().cloned().collect::<Vec<_>>().join(","));
        db.update_group_addresses(group.id, addresses.as_deref(), now_ms).await?;
    }
    Ok(())
}

/// Live executor addresses per AppName, distinct and sorted by code unit order.
pub fn group_addresses(rows: Vec<JobRegistry>) -> HashMap<String, BTreeSet<String>> {
    let mut map: HashMap<String, BTreeSet<String>> = HashMap::new();
    for row in rows.into_iter().filter(|r| r.registry_group == "EXECUTOR") {
        map.entry(row.registry_key).or_default().insert(row.registry_value);
    }
    map
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
}
