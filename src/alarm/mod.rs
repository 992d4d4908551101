//! Alarms: how the people behind a failed job hear of it (docs/alarms.md). Each way is an [`AlarmChannel`]:
//! e-mail, the channel 2.4.2 ships, and webhooks to chat robots or any JSON endpoint. [`Alarms`] picks
//! the channels an alarm concerns, sends on all of them at once and folds the results into one outcome.

pub mod email;
mod format;
pub mod webhook;

use crate::config::Config;
use crate::i18n::I18n;
use crate::metrics::Metrics;
use crate::storage::{Db, JobGroup, JobInfo, JobLog};
use crate::time::Clock;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// Entries of a job's alarm e-mail field that name a webhook channel instead of an address.
pub const WEBHOOK_ENTRY: &str = "webhook:";
/// How metrics name a `webhook:<name>` entry that no configured channel has.
const UNKNOWN_CHANNEL: &str = "unknown";

#[derive(Debug, thiserror::Error)]
pub enum AlarmSetupError {
    #[error(transparent)]
    Mail(#[from] email::MailSetupError),
    #[error(transparent)]
    Webhook(#[from] webhook::WebhookSetupError),
}

/// A delivery: `Err` says why it failed, in words fit to show (no URL, token or secret).
pub type AlarmFuture<'a> = Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>>;

/// One way of telling people about a failed job.
pub trait AlarmChannel: Send + Sync + 'static {
    /// `email` or `webhook:<name>`, for logs and metrics.
    fn name(&self) -> &str;
    /// Whether `alarm` goes to this channel (the job names it, or configuration sends its group here).
    fn concerns(&self, alarm: &Alarm) -> bool;
    /// Delivers `alarm`, or says why not.
    fn send<'a>(&'a self, alarm: &'a Alarm) -> AlarmFuture<'a>;
}

/// Everything a channel needs to describe one failed log.
#[derive(Debug, Clone)]
pub struct Alarm {
    pub job: JobInfo,
    pub log: JobLog,
    /// `None` when the job's group no longer exists.
    pub group: Option<JobGroup>,
    /// The log's page in the console.
    pub log_url: String,
    pub trigger_time_ms: Option<i64>,
    pub handle_time_ms: Option<i64>,
    pub targets: Targets,
}

/// What a job's alarm e-mail field names: addresses, and `webhook:<name>` channels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Targets {
    /// Distinct, in order.
    pub emails: Vec<String>,
    /// Channel names, canonical as configuration keys are (lower case, no `-` or `_`); distinct.
    pub webhooks: Vec<String>,
}

impl Targets {
    pub fn parse(alarm_email: Option<&str>) -> Targets {
        let mut targets = Targets::default();
        for entry in alarm_email.unwrap_or("").split(',').map(str::trim).filter(|a| !a.is_empty()) {
            let (list, value) = match entry.get(..WEBHOOK_ENTRY.len()) {
                Some(prefix) if prefix.eq_ignore_ascii_case(WEBHOOK_ENTRY) => {
                    (&mut targets.webhooks, canonical_channel(&entry[WEBHOOK_ENTRY.len()..]))
                }
                _ => (&mut targets.emails, entry.to_string()),
            };
            if !value.is_empty() && !list.contains(&value) {
                list.push(value);
            }
        }
        targets
    }
}

/// Channel names match as Spring matches keys: case-insensitive, `-` and `_` ignored.
pub fn canonical_channel(name: &str) -> String {
    name.trim().chars().filter(|c| *c != '-' && *c != '_').flat_map(char::to_lowercase).collect()
}

/// The channels, and what an alarm needs from the database.
#[derive(Clone)]
pub struct Alarms {
    db: Db,
    channels: Arc<Vec<Arc<dyn AlarmChannel>>>,
    /// The names of the webhook channels, canonical.
    webhook_names: Arc<[String]>,
    /// The console's URL without a trailing `/`.
    console_url: Arc<str>,
    metrics: Arc<Metrics>,
}

impl Alarms {
    pub fn new(
        db: Db,
        channels: Vec<Arc<dyn AlarmChannel>>,
        console_url: &str,
        metrics: Arc<Metrics>,
    ) -> Alarms {
        metrics.alarm_channels(channels.iter().map(|c| c.name()).chain([UNKNOWN_CHANNEL]));
        let webhook_names = channels
            .iter()
            .filter_map(|c| c.name().strip_prefix(WEBHOOK_ENTRY))
            .map(str::to_string)
            .collect();
        Alarms {
            db,
            channels: Arc::new(channels),
            webhook_names,
            console_url: console_url.trim_end_matches('/').into(),
            metrics,
        }
    }

    /// E-mail and every configured webhook; `console_url` is where this admin's console is reached
    /// when `xxl.job.alarm.console-url` does not say.
    pub fn from_config(
        db: Db,
        config: &Config,
        i18n: &I18n,
        clock: Arc<dyn Clock>,
        console_url: &str,
        metrics: Arc<Metrics>,
    ) -> Result<Alarms, AlarmSetupError> {
        let mut channels: Vec<Arc<dyn AlarmChannel>> =
            vec![Arc::new(email::EmailAlarm::new(i18n.clone(), &config.mail)?)];
        for webhook in &config.alarm.webhooks {
            channels.push(Arc::new(webhook::WebhookChannel::new(
                webhook.clone(),
                i18n.clone(),
                clock.clone(),
            )?));
        }
        let console_url = config.alarm.console_url.as_deref().unwrap_or(console_url);
        Ok(Alarms::new(db, channels, console_url, metrics))
    }

    /// Sends the alarm for a failed `log` of `job`. True when every channel it concerns delivered it,
    /// and when it concerns none (nobody to tell, as 2.4.2 treats a job without addresses).
    pub async fn send(&self, job: JobInfo, log: JobLog) -> bool {
        let group = match self.db.load_group(job.job_group).await {
            Ok(group) => group,
            Err(e) => {
                tracing::warn!(job_id = job.id, "alarm: cannot load the group: {e}");
                None
            }
        };
        let alarm = Alarm {
            log_url: format!("{}/joblog/logDetailPage?id={}", self.console_url, log.id),
            trigger_time_ms: log.trigger_time.map(|t| self.db.zone().to_epoch_ms(t)),
            handle_time_ms: log.handle_time.map(|t| self.db.zone().to_epoch_ms(t)),
            targets: Targets::parse(job.alarm_email.as_deref()),
            job,
            log,
            group,
        };
        deliver(&self.channels, Arc::new(alarm), &self.metrics).await
    }

    /// The names of the webhook channels (`webhook:<name>` in a job's alarm field), canonical.
    pub fn webhook_names(&self) -> &[String] {
        &self.webhook_names
    }

    /// Sends a made-up failed run to the webhook channel `name`, as the console's test button asks: no
    /// job or log behind it, not counted in the metrics. `Err` says why it was not delivered; `None` when
    /// no channel has that name.
    pub async fn test(
        &self,
        name: &str,
        job_desc: String,
        message: String,
        now_ms: i64,
    ) -> Option<Result<(), String>> {
        let name = canonical_channel(name);
        let label = format!("{WEBHOOK_ENTRY}{name}");
        let channel = self.channels.iter().find(|c| c.name() == label)?;
        let alarm = Alarm {
            job: JobInfo { id: 0, job_desc, ..JobInfo::sample(0) },
            log: JobLog { job_id: 0, trigger_code: 500, trigger_msg: Some(message), ..JobLog::sample(0) },
            group: None,
            // There is no log to link to: the link leads back to the channels.
            log_url: format!("{}/alarm", self.console_url),
            trigger_time_ms: Some(now_ms),
            handle_time_ms: None,
            targets: Targets { emails: Vec::new(), webhooks: vec![name] },
        };
        Some(channel.send(&alarm).await)
    }
}

/// Sends `alarm` on every channel it concerns, concurrently, so one slow channel costs its own timeout
/// only; a `webhook:<name>` no channel has is a failed delivery, like a bad address.
async fn deliver(channels: &[Arc<dyn AlarmChannel>], alarm: Arc<Alarm>, metrics: &Metrics) -> bool {
    let mut delivered = true;
    for name in &alarm.targets.webhooks {
        let channel = format!("{WEBHOOK_ENTRY}{name}");
        if !channels.iter().any(|c| c.name() == channel) {
            tracing::warn!(
                job_id = alarm.job.id,
                log_id = alarm.log.id,
                "alarm to `{channel}` not sent: no such channel is configured"
            );
            metrics.alarm(UNKNOWN_CHANNEL, false);
            delivered = false;
        }
    }
    let mut sending = tokio::task::JoinSet::new();
    for channel in channels.iter().filter(|c| c.concerns(&alarm)) {
        let (channel, alarm) = (channel.clone(), alarm.clone());
        sending.spawn(async move {
            let sent = channel.send(&alarm).await.is_ok();
            (channel, sent)
        });
    }
    while let Some(joined) = sending.join_next().await {
        match joined {
            Ok((channel, sent)) => {
                metrics.alarm(channel.name(), sent);
                delivered &= sent;
            }
            Err(e) => {
                tracing::error!(log_id = alarm.log.id, "an alarm channel failed: {e}");
                delivered = false;
            }
        }
    }
    delivered
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Fixed {
        name: String,
        concerned: bool,
        sends: bool,
        calls: Arc<AtomicUsize>,
    }

    impl AlarmChannel for Fixed {
        fn name(&self) -> &str {
            &self.name
        }

        fn concerns(&self, _: &Alarm) -> bool {
            self.concerned
        }

        fn send<'a>(&'a self, _: &'a Alarm) -> AlarmFuture<'a> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let ok = self.sends;
            Box::pin(async move {
                if ok {
                    Ok(())
                } else {
                    Err("refused".to_string())
                }
            })
        }
    }

    fn alarm(alarm_email: &str) -> Arc<Alarm> {
        let job =
            JobInfo { job_desc: "d".into(), alarm_email: Some(alarm_email.into()), ..JobInfo::sample(1) };
        Arc::new(Alarm {
            targets: Targets::parse(job.alarm_email.as_deref()),
            job,
            log: JobLog { trigger_code: 500, ..JobLog::sample(1) },
            group: None,
            log_url: String::new(),
            trigger_time_ms: None,
            handle_time_ms: None,
        })
    }

    /// (concerned, sends) per channel → (outcome, sends attempted).
    async fn outcome(channels: &[(bool, bool)], alarm_email: &str) -> (bool, usize) {
        let calls = Arc::new(AtomicUsize::new(0));
        let channels: Vec<Arc<dyn AlarmChannel>> = channels
            .iter()
            .enumerate()
            .map(|(i, (concerned, sends))| {
                let name = format!("webhook:c{i}");
                Arc::new(Fixed { name, concerned: *concerned, sends: *sends, calls: calls.clone() })
                    as Arc<dyn AlarmChannel>
            })
            .collect();
        let delivered = deliver(&channels, alarm(alarm_email), &Metrics::new()).await;
        (delivered, calls.load(Ordering::SeqCst))
    }

    #[tokio::test]
    async fn an_alarm_succeeds_only_when_every_concerned_channel_does() {
        assert_eq!(outcome(&[], "").await, (true, 0), "nobody to tell");
        assert_eq!(
            outcome(&[(false, false)], "").await,
            (true, 0),
            "channels it does not concern are not asked"
        );
        assert_eq!(outcome(&[(true, true), (true, true)], "").await, (true, 2));
        // A failing channel does not stop the others.
        assert_eq!(outcome(&[(true, false), (true, true)], "").await, (false, 2));
        assert_eq!(outcome(&[(true, true), (true, false)], "").await, (false, 2));
        // A channel the job names that does not exist fails the alarm; the others are still sent.
        assert_eq!(outcome(&[(true, true)], "webhook:c0, webhook:nope").await, (false, 1));
        assert_eq!(outcome(&[(true, true)], "webhook:C_0").await, (true, 1));
    }

    #[test]
    fn targets_split_addresses_from_channels() {
        let targets =
            Targets::parse(Some(" a@x.com, webhook:Ops-Team ,b@x.com,a@x.com,,WEBHOOK:ops_team, webhook: "));
        assert_eq!(targets.emails, vec!["a@x.com", "b@x.com"]);
        assert_eq!(targets.webhooks, vec!["opsteam"]);
        assert_eq!(Targets::parse(None), Targets::default());
    }
}
