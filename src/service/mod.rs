//! The rules the console and the REST API share: validation, messages and group permissions of the
//! job, log and executor operations (spec console 1.3–1.5), written once. Each edge maps a
//! [`ServiceError`] to its own envelope: the console to 2.4.2's ReturnT, the API to HTTP statuses.

mod access;
pub mod groups;
pub mod jobs;
pub mod logs;
pub mod tokens;

pub use access::LoginUser;

use crate::storage::StorageError;

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
    #[error(transparent)]
    Storage(#[from] StorageError),
}
