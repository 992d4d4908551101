//! The rules the console and the REST API share: validation, messages and group permissions of the
//! job, log and executor operations (2.4.2: XxlJobServiceImpl), written once. Each edge maps a
//! [`ServiceError`] to its own envelope: the console to 2.4.2's ReturnT, the API to HTTP statuses.

mod access;
pub mod audit;
pub mod groups;
pub mod job_graph;
pub mod jobs;
pub mod jobs_as_code;
pub mod login;
pub mod logs;
pub mod oidc;
pub mod schema;
pub mod tokens;
pub mod users;
pub mod workflow_editing;
pub mod workflow_run_views;
pub mod workflow_runs;
pub mod workflows;

pub use access::{LoginUser, Origin};

use crate::alarm::Alarms;
use crate::domain::workflow::DefinitionError;
use crate::executor::ExecutorClient;
use crate::i18n::I18n;
use crate::scheduler::complete::Completer;
use crate::scheduler::TriggerSink;
use crate::storage::{Db, StorageError};
use crate::time::{Clock, Zone, CRON_ZONE};
use audit::Audit;
use chrono::NaiveDateTime;
use std::sync::Arc;

/// What the rules reach: built once by `app`, wrapped by the HTTP state. Only what a rule uses.
#[derive(Clone)]
pub struct ServiceContext {
    pub db: Db,
    pub i18n: I18n,
    pub clock: Arc<dyn Clock>,
    /// Where manual triggers go.
    pub triggers: Arc<dyn TriggerSink>,
    /// Finishes a run (a killed log ends as failed).
    pub completer: Completer,
    /// Reads executors' logs and kills their runs.
    pub executors: ExecutorClient,
    /// The alarm channels: their names (`webhook:<name>` in a job's alarm field), and the console's test.
    pub alarms: Alarms,
    /// Where audit events go.
    pub audit: Audit,
    /// The workflow engine: runs started and operated on.
    pub workflows: crate::scheduler::workflow::Workflows,
}

impl ServiceContext {
    /// The zone cron expressions and schedule previews are evaluated in.
    pub fn cron_zone(&self) -> Zone {
        CRON_ZONE
    }

    /// A wall-clock time typed into the console, as the stored DATETIME of the same instant: the Java
    /// admin parses form dates in the JVM's zone and the driver writes them in `serverTimezone`.
    pub fn stored_time(&self, typed: NaiveDateTime) -> NaiveDateTime {
        self.db.datetime(self.cron_zone().to_epoch_ms(typed))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// Input the rules refuse, with the console's message.
    #[error("{0}")]
    Invalid(String),
    /// The user's groups do not include the one asked for.
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    /// The state of the row forbids the operation (killing a log whose trigger failed).
    #[error("{0}")]
    Conflict(String),
    /// A failure 2.4.2 reports without a message (an insert or update that changed no row).
    #[error("operation failed")]
    Failed,
    /// The executor refused or could not be reached; its message when it gave one.
    #[error("{}", .0.as_deref().unwrap_or("the executor did not answer"))]
    Executor(Option<String>),
    /// The database cannot do it as set up (an account without a right it needs), with what to do.
    #[error("{0}")]
    Unavailable(String),
    /// A workflow definition refused: every problem found, each naming its node and field.
    #[error("{}", definition_problems(.0))]
    Definition(Vec<DefinitionError>),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// The problems of a definition as one message: the first few, and how many more there are.
fn definition_problems(errors: &[DefinitionError]) -> String {
    const SHOWN: usize = 5;
    let listed: Vec<String> = errors.iter().take(SHOWN).map(ToString::to_string).collect();
    let more = match errors.len().saturating_sub(SHOWN) {
        0 => String::new(),
        n => format!("; and {n} more"),
    };
    format!("the workflow definition is refused: {}{more}", listed.join("; "))
}
