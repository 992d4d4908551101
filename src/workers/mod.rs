//! Background workers: each runs until the shutdown signal and finishes its current pass first.

pub mod registry;
pub mod report;

use tokio::sync::watch;

/// Broadcasts shutdown to every worker.
#[derive(Clone)]
pub struct Shutdown(watch::Receiver<bool>);

pub struct ShutdownTrigger(watch::Sender<bool>);

pub fn shutdown_channel() -> (ShutdownTrigger, Shutdown) {
    let (tx, rx) = watch::channel(false);
    (ShutdownTrigger(tx), Shutdown(rx))
}

impl ShutdownTrigger {
    pub fn trigger(&self) {
        let _ = self.0.send(true);
    }
}

impl Shutdown {
    pub fn is_triggered(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves once shutdown is signalled.
    pub async fn signalled(&mut self) {
        let _ = self.0.wait_for(|stop| *stop).await;
    }

    /// Sleeps for `duration`; returns false if shutdown was signalled meanwhile.
    pub async fn sleep(&mut self, duration: std::time::Duration) -> bool {
        let stopped = tokio::select! {
            _ = tokio::time::sleep(duration) => false,
            _ = self.0.wait_for(|stop| *stop) => true,
        };
        !stopped && !self.is_triggered()
    }
}
