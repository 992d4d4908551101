//! The scheduling side of the admin: the schedule loop, triggers, results, retries and alarms.

pub mod complete;
pub mod liveness;
pub mod monitors;
pub mod schedule;
pub mod trigger;

use crate::config::Config;
use crate::domain::TriggerRequest;
use crate::i18n::I18n;
use crate::storage::{Db, JobRowState};
use crate::time::{Clock, Zone, CRON_ZONE};
use crate::workers::report::ReportWorker;
use crate::workers::Shutdown;
use crate::alarm::Alarms;
use crate::metrics::Metrics;
use crate::domain::ownership::{ran, JobRow, Owner};
use crate::domain::schedule::MisfireStrategy;
use complete::Completer;
use liveness::Liveness;
use monitors::{FailMonitor, LostMonitor, ResultSweeper};
use schedule::{Scheduler, TimerWheel};
use std::sync::{Arc, Mutex};
use tokio::task::JoinHandle;

/// A pass or batch that lost to another admin's transaction (a Galera certification conflict, a deadlock)
/// is tried again after this: the next attempt reads what the winner wrote.
const CONFLICT_RETRY: std::time::Duration = std::time::Duration::from_millis(20);

fn fires_once_now(misfire_strategy: &str) -> bool {
    MisfireStrategy::from_name(misfire_strategy) == Some(MisfireStrategy::FireOnceNow)
}

/// A job's log row as the settlement of late fires weighs it.
fn job_row(row: &JobRowState, zone: Zone) -> JobRow {
    JobRow {
        id: row.id,
        trigger_time_ms: row.trigger_time.map_or(0, |t| zone.to_epoch_ms(t)),
        ran: ran(row.trigger_code, row.handle_code, row.trigger_msg.as_deref()),
    }
}

/// Where triggers go to be run (the trigger pools, spec 4.2). Submitting never blocks the caller.
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
    pub alarms: Alarms,
    pub clock: Arc<dyn Clock>,
    pub metrics: Arc<Metrics>,
    /// This admin process, as named in the rows it plans (see [`Owner`]).
    pub owner: Owner,
}

impl Engine {
    /// Starts the workers in 2.4.2's order (4.0): fail monitor, lost-result monitor, log report, then
    /// the timer wheel and the schedule loop.
    pub fn start(self, config: &Config, shutdown: &Shutdown) -> Vec<JoinHandle<()>> {
        let fail = FailMonitor {
            db: self.db.clone(),
            i18n: self.i18n.clone(),
            triggers: self.triggers.clone(),
            alarms: self.alarms,
        };
        let lost = LostMonitor {
            db: self.db.clone(),
            i18n: self.i18n.clone(),
            completer: self.completer,
            clock: self.clock.clone(),
        };
        let sweeper = ResultSweeper {
            db: self.db.clone(),
            i18n: self.i18n.clone(),
            triggers: self.triggers.clone(),
            clock: self.clock.clone(),
            planned: self.owner.planned(),
        };
        let report = ReportWorker { db: self.db.clone(), clock: self.clock.clone(), retention_days: config.log_retention_days };
        let wheel = TimerWheel::new();
        let liveness = Liveness {
            db: self.db.clone(),
            owner: self.owner,
            wheel: wheel.clone(),
            clock: self.clock.clone(),
            i18n: self.i18n.clone(),
        };
        let scheduler = Scheduler {
            db: self.db,
            triggers: self.triggers.clone(),
            wheel: wheel.clone(),
            clock: self.clock.clone(),
            cron_zone: CRON_ZONE,
            pre_read_count: i64::from(config.trigger_pool.fast_max + config.trigger_pool.slow_max) * 20,
            crons: Default::default(),
            metrics: self.metrics,
            planned: self.owner.planned(),
            catching_up: self.owner.sending(0),
            i18n: self.i18n.clone(),
            unanswered: Mutex::default(),
        };
        vec![
            tokio::spawn(fail.run(shutdown.clone())),
            tokio::spawn(lost.run(shutdown.clone())),
            tokio::spawn(sweeper.run(shutdown.clone())),
            tokio::spawn(report.run(shutdown.clone())),
            tokio::spawn(liveness.run(shutdown.clone())),
            tokio::spawn(wheel.run(self.triggers, self.clock, shutdown.clone())),
            tokio::spawn(scheduler.run(shutdown.clone())),
        ]
    }
}
