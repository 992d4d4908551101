//! Workflows (issue 46): DAGs of existing jobs, Airflow-like. The definition document, its validation,
//! and the pure rules the engine follows (which node runs next, retry delays, parameter templates).

pub mod graph;
pub mod model;
pub mod readiness;
pub mod retry;
pub mod template;
pub mod validate;

pub use model::{Definition, Node, NodeKind, NodeState};
pub use readiness::{decide, Decisions, NodeStatus, RunOutcome, RunView};
pub use validate::{validate, DefinitionError};
