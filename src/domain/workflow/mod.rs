//! Workflows (issue 46): DAGs of existing jobs, Airflow-like. The definition document, its validation,
//! the pure rules the engine follows (which node runs next, retry delays, parameter templates), and those of
//! saving one (how workflows nest, what changed between two versions).

pub mod diff;
pub mod graph;
pub mod model;
pub mod nesting;
pub mod readiness;
pub mod retry;
pub mod template;
pub mod validate;

pub use diff::{diff, DefinitionDiff};
pub use model::{Definition, Node, NodeKind, NodeState};
pub use readiness::{decide, Decisions, NodeStatus, RunOutcome, RunView};
pub use validate::{validate, DefinitionError, Problem};
