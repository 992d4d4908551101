//! The REST API's JSON shapes, and so the schemas of its OpenAPI document: its own, apart from the
//! console's views, so that a change of the console never changes the API's contract. Java field names,
//! dates as instants, as the API has always shown them.

use crate::domain::registry::listed_addresses;
use crate::domain::workflow::{Definition, DefinitionDiff};
use crate::http::dates::{json_date, json_instant};
use crate::storage::{JobGroup, JobInfo, JobLog, VersionInfo, Workflow, WorkflowVersion};
use crate::time::Zone;
use serde::Serialize;
use utoipa::ToSchema;

// The descriptions below are the document's: changing one changes the served OpenAPI document.

/// A job as the console and the REST API show it: the row, with its dates as instants.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobView {
    #[serde(flatten)]
    job: JobInfo,
    add_time: Option<String>,
    update_time: Option<String>,
    glue_updatetime: Option<String>,
}

impl JobView {
    pub fn of(job: JobInfo, zone: Zone) -> JobView {
        let date = |value| json_date(zone, value);
        let (add_time, update_time) = (date(job.add_time), date(job.update_time));
        JobView { glue_updatetime: date(job.glue_updatetime), add_time, update_time, job }
    }
}

/// A log row, with its dates as instants.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogView {
    #[serde(flatten)]
    log: JobLog,
    trigger_time: Option<String>,
    handle_time: Option<String>,
}

impl LogView {
    pub fn of(log: JobLog, zone: Zone) -> LogView {
        LogView {
            trigger_time: json_date(zone, log.trigger_time),
            handle_time: json_date(zone, log.handle_time),
            log,
        }
    }
}

/// An executor group, with its update time as an instant and its addresses as a list.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupView {
    #[serde(flatten)]
    group: JobGroup,
    update_time: Option<String>,
    registry_list: Option<Vec<String>>,
}

impl GroupView {
    pub fn of(group: JobGroup, zone: Zone) -> GroupView {
        let registry_list = listed_addresses(group.address_list.as_deref());
        GroupView { update_time: json_date(zone, group.update_time), registry_list, group }
    }
}

/// A workflow as the REST API lists it: the fields its current version sets, and whether it is scheduled.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowView {
    id: i64,
    name: String,
    job_group: i32,
    current_version: i32,
    /// 1 scheduled (started), 0 stopped.
    trigger_status: i16,
    schedule: ScheduleView,
    /// When it is next due, in epoch milliseconds; 0 while stopped.
    trigger_next_time: i64,
    /// When it was last due, in epoch milliseconds; 0 if never since its start.
    trigger_last_time: i64,
    /// Who saved the current version.
    author: Option<String>,
    add_time: Option<String>,
    update_time: Option<String>,
}

/// A workflow's schedule, as its current version's `schedule` says it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ScheduleView {
    /// `NONE`, `CRON` or `FIX_RATE`.
    #[serde(rename = "type")]
    kind: String,
    /// The cron expression, or the seconds between two runs.
    conf: Option<String>,
    /// `DO_NOTHING` or `FIRE_ONCE_NOW`.
    misfire: String,
}

impl WorkflowView {
    pub fn of(workflow: Workflow) -> WorkflowView {
        WorkflowView {
            id: workflow.id,
            name: workflow.name,
            job_group: workflow.job_group,
            current_version: workflow.current_version,
            trigger_status: workflow.trigger_status,
            schedule: ScheduleView {
                kind: workflow.schedule_type,
                conf: workflow.schedule_conf,
                misfire: workflow.misfire_strategy,
            },
            trigger_next_time: workflow.trigger_next_time,
            trigger_last_time: workflow.trigger_last_time,
            author: workflow.author,
            add_time: json_instant(workflow.add_time),
            update_time: json_instant(workflow.update_time),
        }
    }
}

/// A workflow with the definition of its current version.
#[derive(Debug, Serialize, ToSchema)]
pub struct WorkflowDetail {
    #[serde(flatten)]
    pub workflow: WorkflowView,
    pub definition: Definition,
}

/// One version of a workflow, as the version list shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VersionView {
    version: i32,
    /// Who saved it.
    author: Option<String>,
    add_time: Option<String>,
    /// Whether it is the workflow's current version.
    current: bool,
}

impl VersionView {
    pub fn of(version: VersionInfo, current: i32) -> VersionView {
        VersionView {
            current: version.version == current,
            version: version.version,
            author: version.author,
            add_time: json_instant(version.add_time),
        }
    }
}

/// One version of a workflow with its definition.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VersionDetail {
    workflow_id: i64,
    #[serde(flatten)]
    version: VersionView,
    definition: Definition,
}

impl VersionDetail {
    pub fn of(version: WorkflowVersion, definition: Definition, current: i32) -> VersionDetail {
        let info =
            VersionInfo { version: version.version, author: version.author, add_time: version.add_time };
        VersionDetail {
            workflow_id: version.workflow_id,
            version: VersionView::of(info, current),
            definition,
        }
    }
}

/// What changed from one version of a workflow to another.
#[derive(Debug, Serialize, ToSchema)]
pub struct DiffView {
    /// The older version compared.
    pub from: i32,
    /// The newer one.
    pub to: i32,
    #[serde(flatten)]
    pub diff: DefinitionDiff,
}
