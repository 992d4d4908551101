//! A MariaDB Galera cluster of the test's own on loopback: each node a private MariaDB server (its own
//! datadir) with wsrep on, the first bootstrapping the cluster and the others joining it by rsync state
//! transfer. Every port (SQL, group communication, incremental and full state transfer) is below the
//! ephemeral range, as for the single private server.

use super::private_mariadb::{self, stable_free_ports, PrivateMariaDb};
use libtest_mimic::Failed;
use std::path::Path;
use std::time::Duration;

/// The Galera library of Debian's galera-4 package.
const PROVIDER: &str = "/usr/lib/galera/libgalera_smm.so";
/// How long the cluster may take to report every node synced after the last one started.
const SYNC_TIMEOUT: Duration = Duration::from_secs(60);

/// The MariaDB programs, the Galera library and rsync, or why the cluster cannot be started.
pub fn availability() -> Result<(), String> {
    private_mariadb::availability()?;
    if !Path::new(PROVIDER).is_file() {
        return Err(format!("{PROVIDER} not found (install galera-4)"));
    }
    let rsync = std::process::Command::new("rsync").arg("--version").output();
    if !rsync.is_ok_and(|o| o.status.success()) {
        return Err("rsync not found (install rsync), which the state transfer runs".into());
    }
    Ok(())
}

pub struct Galera {
    /// In start order; the first bootstrapped the cluster.
    pub nodes: Vec<PrivateMariaDb>,
}

impl Galera {
    /// Starts `size` nodes, one after the other, and waits until every one is synced in a cluster of `size`.
    pub async fn start(size: usize) -> Result<Galera, Failed> {
        availability()?;
        let ports = stable_free_ports(4 * size)?;
        let (sql, rest) = ports.split_at(size);
        let (gcomm, rest) = rest.split_at(size);
        let (ist, sst) = rest.split_at(size);
        let members: Vec<String> = gcomm.iter().map(|port| format!("127.0.0.1:{port}")).collect();
        // Galera's own settings to try by hand (docs/high-availability.md measures the eviction pause with
        // shorter evs.* timeouts): appended to each node's provider options; the test runs with the defaults.
        let extra =
            std::env::var("XXL_TEST_GALERA_PROVIDER_OPTIONS").map(|o| format!(";{o}")).unwrap_or_default();
        let mut nodes = Vec::with_capacity(size);
        for i in 0..size {
            let mut options = vec![
                "--wsrep-on=ON".to_string(),
                format!("--wsrep-provider={PROVIDER}"),
                format!("--wsrep-cluster-address=gcomm://{}", members.join(",")),
                "--wsrep-cluster-name=xxl-job-ha".to_string(),
                format!("--wsrep-node-name=node{}", i + 1),
                "--wsrep-node-address=127.0.0.1".to_string(),
                format!(
                    "--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:{};ist.recv_addr=127.0.0.1:{};gcache.size=32M{extra}",
                    gcomm[i], ist[i]
                ),
                "--wsrep-sst-method=rsync".to_string(),
                format!("--wsrep-sst-receive-address=127.0.0.1:{}", sst[i]),
                "--binlog-format=ROW".to_string(),
                "--default-storage-engine=InnoDB".to_string(),
                "--innodb-autoinc-lock-mode=2".to_string(),
                // Durability comes from the other nodes; a flush per commit only slows the test down.
                "--innodb-flush-log-at-trx-commit=2".to_string(),
            ];
            if i == 0 {
                options.push("--wsrep-new-cluster".to_string());
            }
            nodes.push(PrivateMariaDb::start_with(sql[i], options).await?);
        }
        let cluster = Galera { nodes };
        cluster.wait_synced(size).await?;
        Ok(cluster)
    }

    /// Waits until every node that is still running reports a ready node in a cluster of `size`.
    async fn wait_synced(&self, size: usize) -> Result<(), Failed> {
        let deadline = tokio::time::Instant::now() + SYNC_TIMEOUT;
        for node in &self.nodes {
            loop {
                let state = node_state(node).await;
                if state.as_ref().is_ok_and(|(cluster_size, ready)| *cluster_size == size && ready == "ON") {
                    break;
                }
                if tokio::time::Instant::now() > deadline {
                    return Err(format!(
                        "Galera node on port {} not synced in a cluster of {size} within {SYNC_TIMEOUT:?} ({state:?}):\n{}",
                        node.port,
                        node.log_tail(30)
                    )
                    .into());
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
        Ok(())
    }

    /// The `spring.datasource.url` of `database` listing every node, starting with node `first` and going
    /// on in order: the URL of an admin attached to that node.
    pub fn jdbc_url(&self, database: &str, first: usize) -> String {
        let n = self.nodes.len();
        let hosts: Vec<String> =
            (0..n).map(|k| format!("127.0.0.1:{}", self.nodes[(first + k) % n].port)).collect();
        format!("jdbc:mysql://{}/{database}?serverTimezone=UTC", hosts.join(","))
    }
}

/// Watches when a cluster that lost a member orders transactions again. Galera delivers nothing in total
/// order while a silent member is still in the view, so a causal read (`wsrep_sync_wait`) waits as every
/// commit does, until the others have evicted it.
pub struct OrderProbe {
    conn: sqlx::MySqlConnection,
}

/// A causal read that took longer than this waited for the cluster.
const PROBE_BLOCKED: Duration = Duration::from_millis(300);
const PROBE_EVERY: Duration = Duration::from_millis(100);

impl OrderProbe {
    /// Opened on node `node` before the fault, so that connecting is not part of what it measures.
    pub async fn open(cluster: &Galera, node: usize, database: &str) -> Result<OrderProbe, Failed> {
        let mut conn = cluster.nodes[node].connect(database).await?;
        sqlx::query("SET SESSION wsrep_sync_wait = 1")
            .execute(&mut conn)
            .await
            .map_err(|e| Failed::from(format!("wsrep_sync_wait: {e}")))?;
        Ok(OrderProbe { conn })
    }

    /// The instant (epoch ms) the first causal read that waited for the cluster came back, or that of the
    /// first read when none waited within `limit`.
    pub async fn ordering_again(mut self, limit: Duration) -> Result<i64, Failed> {
        let started = tokio::time::Instant::now();
        let mut first = None;
        loop {
            let issued = tokio::time::Instant::now();
            sqlx::query("SELECT COUNT(*) FROM xxl_job_lock")
                .execute(&mut self.conn)
                .await
                .map_err(|e| Failed::from(format!("causal read: {e}")))?;
            let answered = super::now_ms();
            if issued.elapsed() >= PROBE_BLOCKED {
                return Ok(answered);
            }
            let first = *first.get_or_insert(answered);
            if started.elapsed() > limit {
                return Ok(first);
            }
            tokio::time::sleep(PROBE_EVERY).await;
        }
    }
}

/// `wsrep_cluster_size` and `wsrep_ready` of one node.
async fn node_state(node: &PrivateMariaDb) -> Result<(usize, String), Failed> {
    let mut conn = node.connect("mysql").await?;
    let rows: Vec<(String, String)> =
        sqlx::query_as("SHOW STATUS WHERE Variable_name IN ('wsrep_cluster_size', 'wsrep_ready')")
            .fetch_all(&mut conn)
            .await
            .map_err(|e| Failed::from(format!("wsrep status: {e}")))?;
    let value = |name: &str| rows.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).unwrap_or_default();
    Ok((value("wsrep_cluster_size").parse().unwrap_or(0), value("wsrep_ready")))
}
