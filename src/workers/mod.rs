//! Background workers: each runs until its stop token (a `CancellationToken` the start-up cancels at
//! shutdown) is cancelled, and finishes its current pass first.

pub mod clock;
pub mod registry;
pub mod report;
