//! The REST API's JSON shapes, and so the schemas of its OpenAPI document: its own, apart from the
//! console's views, so that a change of the console never changes the API's contract. Java field names,
//! dates as instants, as the API has always shown them.

use crate::domain::registry::listed_addresses;
use crate::http::dates::json_date;
use crate::storage::{JobGroup, JobInfo, JobLog};
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
