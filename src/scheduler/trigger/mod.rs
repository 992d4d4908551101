//! The trigger path: how a trigger request, or a planned fire of the leader, becomes a `/run` and a result.
//!
//! - `pool.rs`: the trigger pool, where requests that do not come from the plan (manual runs, retries,
//!   child jobs, misfires) queue per lane and are taken in batches;
//! - `resolve.rs`: a batch's jobs and groups loaded, each request resolved and expanded into its triggers
//!   (one per address for a sharding broadcast), their log rows inserted;
//! - `lanes.rs`: the fast and the slow lane, whose permits bound the triggers running at once;
//! - `run.rs`: one trigger: its `/run` made ready, held until released, written, and its result reported;
//! - `address.rs`: which executor a trigger goes to (route strategies, FAILOVER / BUSYOVER probes);
//! - `counts.rs`: what is logged as a count a second rather than a line per trigger.

mod address;
mod counts;
mod lanes;
mod pool;
mod resolve;
mod run;

pub use counts::Counts;
pub use lanes::Lanes;
pub use pool::{LaneServices, Started, TriggerPool};
pub use resolve::{expand, load_groups, new_rows, Groups, LoadedGroup, NewTrigger, Sharding, Trigger};
pub use run::Release;

use super::results::ResultSender;
use crate::domain::routing::Router;
use crate::executor::ExecutorClient;
use crate::i18n::I18n;
use crate::metrics::Metrics;
use crate::storage::Db;
use crate::time::Clock;
use std::sync::Arc;

/// Everything a trigger needs besides its request.
pub struct TriggerContext {
    pub db: Db,
    pub i18n: I18n,
    pub executors: ExecutorClient,
    pub router: Router,
    pub clock: Arc<dyn Clock>,
    /// This admin's address as shown in trigger reports.
    pub admin_address: String,
    /// Trigger results on their way to the writer task, which batches them.
    pub results: ResultSender,
    /// What was not sent or had to wait, counted for the log.
    pub counts: Arc<Counts>,
    pub metrics: Arc<Metrics>,
}
