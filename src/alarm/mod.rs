//! Alarm channels: how the people behind a failed job hear about it (spec 4.5). E-mail is the channel
//! 2.4.2 ships; others implement the same trait.

pub mod email;

use crate::storage::{JobInfo, JobLog};
use std::future::Future;
use std::pin::Pin;

pub type AlarmFuture<'a> = Pin<Box<dyn Future<Output = bool> + Send + 'a>>;

pub trait JobAlarm: Send + Sync + 'static {
    /// Sends the alarm for a failed log of `job`; true when it was delivered (or there was no one to tell).
    fn alarm<'a>(&'a self, job: &'a JobInfo, log: &'a JobLog) -> AlarmFuture<'a>;
}

/// The alarm outcome over every channel: success only if there is at least one and all succeed.
pub async fn alarm_all(channels: &[std::sync::Arc<dyn JobAlarm>], job: &JobInfo, log: &JobLog) -> bool {
    let mut delivered = !channels.is_empty();
    for channel in channels {
        delivered &= channel.alarm(job, log).await;
    }
    delivered
}
