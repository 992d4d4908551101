//! Alarms: how the people behind a failed job or workflow run hear of it (docs/alarms.md). Each way is an
//! [`AlarmChannel`]:
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

/// One way of telling people about a failed job or workflow run.
pub trait AlarmChannel: Send + Sync + 'static {
    /// `email` or `webhook:<name>`, for logs and metrics.
    fn name(&self) -> &str;
    /// Whether `alarm` goes to this channel (the job names it, or configuration sends its group here).
    fn concerns(&self, alarm: &Alarm) -> bool;
    /// Delivers `alarm`, or says why not.
    fn send<'a>(&'a self, alarm: &'a Alarm) -> AlarmFuture<'a>;
}

/// Everything a channel needs to describe one alarm.
#[derive(Debug, Clone)]
pub struct Alarm {
    pub subject: Subject,
    /// `None` when the group no longer exists.
    pub group: Option<JobGroup>,
    /// The console page it links to: the failed log's, or the workflow run's.
    pub link: String,
    pub targets: Targets,
}

/// What an alarm is about.
#[derive(Debug, Clone)]
pub enum Subject {
    /// A job's log failed: what 2.4.2 alarms on.
    Job(Box<JobFailure>),
    /// A workflow run failed or passed its deadline.
    Workflow(WorkflowAlarm),
}

#[derive(Debug, Clone)]
pub struct JobFailure {
    pub job: JobInfo,
    pub log: JobLog,
    pub trigger_time_ms: Option<i64>,
    pub handle_time_ms: Option<i64>,
}

#[derive(Debug, Clone)]
pub struct WorkflowAlarm {
    pub workflow_id: i64,
    pub workflow_name: String,
    pub run_id: i64,
    /// The instant the run stands for, epoch milliseconds.
    pub logical_time_ms: i64,
    pub cause: WorkflowCause,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkflowCause {
    /// The run ended failed; these nodes failed.
    Failed { failed_nodes: Vec<String> },
    /// The run was still going at its deadline (epoch milliseconds, and as the admin's local time
    /// `yyyy-MM-dd HH:mm:ss`); `stopped` when that stopped it.
    DeadlinePassed { deadline_ms: i64, deadline_at: String, stopped: bool },
}

impl Alarm {
    /// What the alarm is about, for the admin's log: `log 77`, `workflow run 5`.
    pub fn about(&self) -> String {
        match &self.subject {
            Subject::Job(failure) => format!("log {} of job {}", failure.log.id, failure.job.id),
            Subject::Workflow(run) => format!("run {} of workflow {}", run.run_id, run.workflow_id),
        }
    }
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
            link: format!("{}/joblog/logDetailPage?id={}", self.console_url, log.id),
            targets: Targets::parse(job.alarm_email.as_deref()),
            subject: Subject::Job(Box::new(JobFailure {
                trigger_time_ms: log.trigger_time.map(|t| self.db.zone().to_epoch_ms(t)),
                handle_time_ms: log.handle_time.map(|t| self.db.zone().to_epoch_ms(t)),
                job,
                log,
            })),
            group,
        };
        deliver(&self.channels, Arc::new(alarm), &self.metrics).await
    }

    /// Sends the alarm of a workflow run to the targets of its definition's alarm field (the same
    /// addresses and `webhook:<name>` entries a job's has) and to the channels covering its group. True
    /// as for [`Alarms::send`].
    pub async fn send_workflow(&self, run: WorkflowAlarm, job_group: i32, alarm_email: &str) -> bool {
        let group = match self.db.load_group(job_group).await {
            Ok(group) => group,
            Err(e) => {
                tracing::warn!(workflow_id = run.workflow_id, "alarm: cannot load the group: {e}");
                None
            }
        };
        let alarm = Alarm {
            link: format!("{}/workflow/run?id={}", self.console_url, run.run_id),
            targets: Targets::parse(Some(alarm_email)),
            subject: Subject::Workflow(run),
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
            subject: Subject::Job(Box::new(JobFailure {
                job: JobInfo { id: 0, job_desc, ..JobInfo::sample(0) },
                log: JobLog { job_id: 0, trigger_code: 500, trigger_msg: Some(message), ..JobLog::sample(0) },
                trigger_time_ms: Some(now_ms),
                handle_time_ms: None,
            })),
            group: None,
            // There is no log to link to: the link leads back to the channels.
            link: format!("{}/alarm", self.console_url),
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
                "alarm of {} to `{channel}` not sent: no such channel is configured",
                alarm.about()
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
                tracing::error!("an alarm channel failed on the alarm of {}: {e}", alarm.about());
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
            subject: Subject::Job(Box::new(JobFailure {
                job,
                log: JobLog { trigger_code: 500, ..JobLog::sample(1) },
                trigger_time_ms: None,
                handle_time_ms: None,
            })),
            group: None,
            link: String::new(),
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
