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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    struct Fixed(bool, Arc<AtomicUsize>);

    impl JobAlarm for Fixed {
        fn alarm<'a>(&'a self, _: &'a JobInfo, _: &'a JobLog) -> AlarmFuture<'a> {
            self.1.fetch_add(1, Ordering::SeqCst);
            let ok = self.0;
            Box::pin(async move { ok })
        }
    }

    fn job() -> JobInfo {
        JobInfo { job_desc: "d".into(), ..JobInfo::sample(1) }
    }

    fn log() -> JobLog {
        JobLog { trigger_code: 500, ..JobLog::sample(1) }
    }

    async fn outcome(results: &[bool]) -> (bool, usize) {
        let calls = Arc::new(AtomicUsize::new(0));
        let channels: Vec<Arc<dyn JobAlarm>> =
            results.iter().map(|ok| Arc::new(Fixed(*ok, calls.clone())) as Arc<dyn JobAlarm>).collect();
        let delivered = alarm_all(&channels, &job(), &log()).await;
        (delivered, calls.load(Ordering::SeqCst))
    }

    #[tokio::test]
    async fn alarm_succeeds_only_when_every_channel_does() {
        assert_eq!(outcome(&[]).await, (false, 0), "no channel at all is a failure, as in 2.4.2");
        assert_eq!(outcome(&[true]).await, (true, 1));
        assert_eq!(outcome(&[true, true]).await, (true, 2));
        // A failing channel does not stop the others.
        assert_eq!(outcome(&[false, true]).await, (false, 2));
        assert_eq!(outcome(&[true, false]).await, (false, 2));
    }
}
