//! The trigger path: from a trigger request (or a leader's planned fire) to its `/run` and its result.

mod pool;

pub use pool::*;
