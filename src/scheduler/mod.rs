//! The scheduling side of the admin: the schedule loop, triggers, results, retries and alarms.
//!
//! # The life of a fire
//!
//! 1. **Leadership** (`leader.rs`, `lease.rs`): one admin leads; the lease names the term its plan belongs
//!    to, and its watermark says which fires were sent.
//! 2. **Plan** (`schedule.rs`): the leader's schedule pass takes `schedule_lock`, reads the jobs due within
//!    the next seconds and writes, in one transaction, their next times and one log row per planned fire;
//!    once that is committed, the fires go to the dispatcher.
//! 3. **Dispatch** (`dispatch/`): each fire is checked against the console (`check.rs`: a job stopped or
//!    rescheduled since the plan), decided (`send.rs`: a job's newest due fire runs, see
//!    `crate::domain::fires`) and handed to the lanes with a release (`hold.rs`) that holds it until its
//!    instant and until the lease's watermark covers it (`cover.rs`); fires not sent are settled by
//!    `settle.rs`.
//! 4. **Lanes** (`trigger/lanes.rs`): the job's lane, fast or (for a job whose triggers were slow) slow,
//!    gives it one of its permits.
//! 5. **`/run`** (`trigger/run.rs`): its executor address is chosen (`trigger/address.rs`), its `/run`
//!    made ready and, once the release lets it go, written.
//! 6. **Result** (`results.rs`): the trigger's result goes to the results writer, many rows per statement.
//!    The executor's callback (`complete.rs`, reached from `crate::http::api`) joins it when it comes
//!    first, or finishes the row after it, and starts the job's child jobs.
//! 7. **Monitors** (`monitors.rs`): the fail monitor retries and alarms failed runs, the lost-result
//!    monitor finishes runs whose executor went away, and the sweeper settles the rows of an admin that
//!    died before their result.
//!
//! Triggers that are not planned (manual runs, retries, child jobs) go through [`TriggerSink`] to the
//! trigger pool (`trigger/pool.rs`), which takes them in batches, loads their jobs and groups and inserts
//! their rows (`trigger/resolve.rs`), then hands each to its lane at step 4. `backlog.rs` counts the
//! triggers waiting for the fast lane, so that work which can wait gives way to a burst.

pub mod backlog;
pub mod complete;
pub mod dispatch;
pub mod leader;
pub mod lease;
pub mod monitors;
pub mod results;
pub mod schedule;
pub mod trigger;
pub mod workflow;

use crate::alarm::Alarms;
use crate::config::Config;
use crate::domain::ownership::Owner;
use crate::domain::TriggerRequest;
use crate::i18n::I18n;
use crate::metrics::Metrics;
use crate::storage::Db;
use crate::time::{Clock, CRON_ZONE};
use crate::workers::report::ReportWorker;
use complete::Completer;
use dispatch::{DispatchServices, Dispatcher};
use leader::Election;
use lease::Leadership;
use monitors::{FailMonitor, LostMonitor, ResultSweeper};
use schedule::Scheduler;
use std::sync::{Arc, Mutex};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use trigger::{Lanes, TriggerContext};

/// A pass or batch that lost to another admin's transaction (a Galera certification conflict, a deadlock)
/// is tried again after this: the next attempt reads what the winner wrote.
const CONFLICT_RETRY: std::time::Duration = std::time::Duration::from_millis(20);

/// Where triggers go to be run (the trigger pool, 2.4.2: JobTriggerPoolHelper.trigger). Submitting never
/// blocks the caller.
pub trait TriggerSink: Send + Sync + 'static {
    fn submit(&self, request: TriggerRequest);

    /// Requests waiting for a lane, for back-pressure on the schedule loop.
    fn backlog(&self) -> usize {
        0
    }
}

/// The services the scheduling workers share.
pub struct Engine {
    pub db: Db,
    pub i18n: I18n,
    pub completer: Completer,
    pub triggers: Arc<dyn TriggerSink>,
    /// How the leader's planned fires are sent: the trigger context and the lanes' limits they share
    /// with queued requests.
    pub sending: (Arc<TriggerContext>, Lanes),
    pub alarms: Alarms,
    pub clock: Arc<dyn Clock>,
    pub metrics: Arc<Metrics>,
    /// This admin process, as named in the lease and the rows it plans (see [`Owner`]).
    pub owner: Owner,
    /// The workflow engine, whose sweep runs while this admin leads.
    pub workflows: workflow::Workflows,
}

impl Engine {
    /// Starts the workers in 2.4.2's order (2.4.2: XxlJobScheduler.init): fail monitor, lost-result
    /// monitor, log report, then the leadership, the dispatcher of planned fires and the schedule loop.
    /// Returns them, and this admin's leadership, to [`Leadership::resign`] once the lanes are done.
    pub fn start(self, config: &Config, shutdown: &CancellationToken) -> (Vec<JoinHandle<()>>, Leadership) {
        let fail = FailMonitor {
            db: self.db.clone(),
            i18n: self.i18n.clone(),
            triggers: self.triggers.clone(),
            alarms: self.alarms,
            cursor: Default::default(),
        };
        let lost = LostMonitor {
            db: self.db.clone(),
            i18n: self.i18n.clone(),
            completer: self.completer,
            clock: self.clock.clone(),
        };
        let sweeper =
            ResultSweeper { db: self.db.clone(), i18n: self.i18n.clone(), clock: self.clock.clone() };
        let report = ReportWorker::new(self.db.clone(), self.clock.clone(), config.log_retention_days);
        let leadership = Leadership::new(self.owner, self.db.clone(), self.clock.clone());
        let (context, lanes) = self.sending;
        let (dispatcher, mut tasks) = Dispatcher::start(
            DispatchServices { db: self.db.clone(), leadership: leadership.clone(), context, lanes },
            shutdown.clone(),
        );
        let election = Election {
            db: self.db.clone(),
            leadership: leadership.clone(),
            dispatcher: dispatcher.clone(),
            clock: self.clock.clone(),
            i18n: self.i18n.clone(),
        };
        let scheduler = Scheduler {
            db: self.db,
            dispatcher,
            leadership: leadership.clone(),
            clock: self.clock.clone(),
            cron_zone: CRON_ZONE,
            pre_read_count: i64::from(config.trigger_pool.fast_max + config.trigger_pool.slow_max) * 20,
            crons: Default::default(),
            metrics: self.metrics,
            unanswered: Mutex::default(),
        };
        tasks.extend([
            tokio::spawn(fail.run(shutdown.clone())),
            tokio::spawn(lost.run(shutdown.clone())),
            tokio::spawn(sweeper.run(shutdown.clone())),
            tokio::spawn(report.run(shutdown.clone())),
            tokio::spawn(election.run(shutdown.clone())),
            tokio::spawn(scheduler.run(shutdown.clone())),
            tokio::spawn(self.workflows.run(leadership.clone(), shutdown.clone())),
        ]);
        (tasks, leadership)
    }
}
