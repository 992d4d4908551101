//! A run's alarms (it failed, it passed its deadline) through the channels a job's alarms go to, to the
//! targets of its definition's `alarmEmail`. Each is sent by the admin whose compare-and-set made the
//! change, so once; an admin that dies between that write and the sending loses that one alarm (the
//! run's record and the admin's log still say it).

use super::snapshot::RunSnapshot;
use super::Workflows;
use crate::alarm::{WorkflowAlarm, WorkflowCause};

impl Workflows {
    /// Sends the alarm in the background: reconciling does not wait for mail servers.
    pub(super) fn alarm(&self, view: &RunSnapshot<'_>, cause: WorkflowCause) {
        let def = view.def;
        let run = WorkflowAlarm {
            workflow_id: view.run.workflow_id,
            workflow_name: def.name.clone(),
            run_id: view.run.id,
            logical_time_ms: view.run.logical_time,
            cause,
        };
        let (alarms, group, targets) =
            (self.services().alarms.clone(), def.job_group, def.alarm_email.clone());
        tokio::spawn(async move {
            let run_id = run.run_id;
            if !alarms.send_workflow(run, group, &targets).await {
                tracing::warn!(run_id, "a workflow run's alarm was not delivered on every channel");
            }
        });
    }

    /// A deadline as the admin's local time, as the alarm shows it.
    pub(super) fn local_time(&self, epoch_ms: i64) -> String {
        self.services().db.zone().to_datetime(epoch_ms).format("%Y-%m-%d %H:%M:%S").to_string()
    }
}
