//! Scheduled workflows: each fire of a CRON or FIX_RATE workflow starts one run whose logical time is
//! the fire's instant. A fire is taken by moving the workflow's next time by compare-and-set in the same
//! transaction as its run is admitted, so of admins taking it together exactly one does.

use super::{Result, Workflows, SWEEP_EVERY};
use crate::domain::schedule::{next_time, PRE_READ_MS};
use crate::domain::workflow::model::{Definition, MisfireStrategy, RunState};
use crate::storage::{NewRun, OnLimit, RunLimits, Workflow};
use crate::time::CRON_ZONE;
use serde_json::Value;

/// What a run starts as, given its definition.
pub(super) struct RunStart {
    pub trigger_type: &'static str,
    pub logical_time: i64,
    pub params: serde_json::Map<String, Value>,
    pub started_by: Option<String>,
    pub backfill_id: Option<i64>,
}

/// The limits a definition sets on its runs.
pub(super) fn limits(def: &Definition) -> RunLimits {
    use crate::domain::workflow::model::LimitPolicy;
    let on_limit = match def.concurrency.on_limit {
        LimitPolicy::Queue => OnLimit::Queue { max_queued: def.concurrency.max_queued },
        LimitPolicy::Discard => OnLimit::Discard,
        LimitPolicy::ReplaceOldest => OnLimit::ReplaceOldest,
    };
    RunLimits { max_runs: def.concurrency.max_runs, on_limit }
}

/// A new run of version `version` of a workflow: the definition's parameters overlaid by the run's own.
pub(super) fn new_run(workflow_id: i64, version: i32, def: &Definition, start: RunStart, now: i64) -> NewRun {
    let mut params = def.params.clone();
    params.extend(start.params);
    NewRun {
        workflow_id,
        version,
        state: RunState::Running.as_str().into(),
        trigger_type: start.trigger_type.into(),
        logical_time: start.logical_time,
        params: Value::Object(params).to_string(),
        started_by: start.started_by,
        parent_run_id: None,
        parent_node: None,
        backfill_id: start.backfill_id,
        add_time: now,
        deadline_time: def.deadline.as_ref().map(|d| now + d.seconds as i64 * 1000),
    }
}

impl Workflows {
    /// Fires the scheduled workflows due before the next sweep: late ones now (or by their misfire
    /// rule), the others at their instant.
    pub(super) async fn fire_due(&self) -> Result<()> {
        let now = self.services().clock.now_ms();
        let horizon = now + SWEEP_EVERY.as_millis() as i64;
        for workflow in self.services().db.due_workflows(horizon).await? {
            let this = self.clone();
            tokio::spawn(async move {
                let wait = workflow.trigger_next_time - this.services().clock.now_ms();
                if wait > 0 {
                    tokio::time::sleep(std::time::Duration::from_millis(wait as u64)).await;
                }
                if let Err(e) = this.fire(&workflow).await {
                    tracing::warn!(
                        workflow = workflow.name,
                        "scheduled workflow fire not taken (tried again): {e}"
                    );
                }
            });
        }
        Ok(())
    }

    async fn fire(&self, workflow: &Workflow) -> Result<()> {
        let db = &self.services().db;
        let now = self.services().clock.now_ms();
        let planned = workflow.trigger_next_time;
        let from = if now - planned > PRE_READ_MS { now } else { planned };
        // A schedule that no longer parses has no next time: the fire still runs, and the workflow stops, as a
        // job does.
        let next = next_time(&workflow.schedule_type, workflow.schedule_conf.as_deref(), from, CRON_ZONE)
            .unwrap_or_default();
        let misfired = now - planned > PRE_READ_MS;
        let misfire =
            MisfireStrategy::from_name(&workflow.misfire_strategy).unwrap_or(MisfireStrategy::DoNothing);
        if misfired && misfire == MisfireStrategy::DoNothing {
            if db.skip_workflow_fire(workflow.id, planned, next).await? {
                tracing::warn!(
                    workflow = workflow.name,
                    planned,
                    "workflow fire missed; skipped (misfire DO_NOTHING)"
                );
            }
            return Ok(());
        }
        let def = self.definition(workflow.id, workflow.current_version).await?;
        let start = RunStart {
            trigger_type: if misfired { "misfire" } else { "schedule" },
            logical_time: planned,
            params: Default::default(),
            started_by: None,
            backfill_id: None,
        };
        let run = new_run(workflow.id, workflow.current_version, &def, start, now);
        if let Some(admitted) = db.fire_workflow(planned, next, &run, limits(&def), now).await? {
            self.services().metrics.workflow_run_started(admitted.state);
            if admitted.state == RunState::Running.as_str() {
                self.wake(admitted.id);
            }
        }
        Ok(())
    }
}
