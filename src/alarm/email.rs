//! The e-mail alarm (2.4.2: EmailJobAlarm): one HTML message to each address in the job's `alarm_email`
//! (its `webhook:<name>` entries are other channels); a workflow run's alarm the same way, to its
//! definition's `alarmEmail`.
//!
//! SMTP settings are the JavaMail properties users already have: `mail.smtp.auth`, STARTTLS enable /
//! required, and the SSL socket factory (or `mail.smtp.ssl.enable`) for TLS from the first byte.

use super::{Alarm, AlarmChannel, AlarmFuture, Subject, WorkflowAlarm, WorkflowCause};
use crate::config::MailConfig;
use crate::domain::html::escape;
use crate::i18n::I18n;
use crate::storage::{JobInfo, JobLog};
use lettre::message::{header::ContentType, Mailbox};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use std::time::Duration;

/// Without a configured timeout a silent SMTP server must not hold the fail monitor for long.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);
/// lettre's async transport applies its timeout to the connect only; a server that accepts and then
/// stays silent would hold the fail monitor for ever. Each message's whole exchange is therefore bounded
/// by this many read timeouts: about the number of replies in a session (greeting, EHLO, STARTTLS, EHLO,
/// AUTH, MAIL, RCPT, DATA, end of data), so no session whose every reply arrives in time is cut short.
const SESSION_READS: u32 = 9;

#[derive(Debug, thiserror::Error)]
pub enum MailSetupError {
    #[error("spring.mail.from (or spring.mail.username) is not a valid address: {0}")]
    From(String),
    #[error("cannot set up TLS for spring.mail.host: {0}")]
    Tls(String),
}

pub struct EmailAlarm {
    i18n: I18n,
    /// `None` when no SMTP host is configured: jobs with recipients then fail their alarm.
    transport: Option<(AsyncSmtpTransport<Tokio1Executor>, Mailbox)>,
    /// The most one message's SMTP exchange may take.
    session_timeout: Duration,
}

impl EmailAlarm {
    pub fn new(i18n: I18n, mail: &MailConfig) -> Result<EmailAlarm, MailSetupError> {
        let transport = match &mail.host {
            Some(host) if !host.trim().is_empty() => {
                Some((transport(host.trim(), mail)?, sender(mail, &i18n)?))
            }
            _ => None,
        };
        let session_timeout = read_timeout(mail) * SESSION_READS;
        Ok(EmailAlarm { i18n, transport, session_timeout })
    }

    /// Sends to every address; the first failure's reason when one failed.
    async fn send_all(&self, alarm: &Alarm) -> Result<(), String> {
        let Some((transport, from)) = &self.transport else {
            tracing::warn!("alarm e-mail of {} not sent: spring.mail.host is not configured", alarm.about());
            return Err("spring.mail.host is not configured".to_string());
        };
        let group_title = alarm.group.as_ref().map(|g| g.title.as_str());
        let (subject, body) = match &alarm.subject {
            Subject::Job(failure) => (
                self.i18n.get("jobconf_monitor"),
                render_body(&self.i18n, &failure.job, group_title, &failure.log),
            ),
            Subject::Workflow(run) => {
                (self.i18n.get("workflow_alarm"), render_workflow_body(&self.i18n, run, group_title))
            }
        };
        let mut delivered = Ok(());
        for address in &alarm.targets.emails {
            let result = async {
                let to: Mailbox = address.parse().map_err(|e| format!("invalid address: {e}"))?;
                let message = Message::builder()
                    .from(from.clone())
                    .to(to)
                    .subject(subject)
                    .header(ContentType::TEXT_HTML)
                    .body(body.clone())
                    .map_err(|e| e.to_string())?;
                match tokio::time::timeout(self.session_timeout, transport.send(message)).await {
                    Ok(sent) => sent.map(|_| ()).map_err(|e| e.to_string()),
                    Err(_) => Err(format!("no answer within {:?}", self.session_timeout)),
                }
            }
            .await;
            if let Err(e) = result {
                tracing::warn!(%address, "alarm e-mail of {} failed: {e}", alarm.about());
                delivered = delivered.and(Err(format!("{address}: {e}")));
            }
        }
        delivered
    }
}

impl AlarmChannel for EmailAlarm {
    fn name(&self) -> &str {
        "email"
    }

    fn concerns(&self, alarm: &Alarm) -> bool {
        !alarm.targets.emails.is_empty()
    }

    fn send<'a>(&'a self, alarm: &'a Alarm) -> AlarmFuture<'a> {
        Box::pin(self.send_all(alarm))
    }
}

/// The HTML body of the alarm for `log` of `job` in `i18n`'s language (2.4.2: EmailJobAlarm): every value
/// escaped, the stored trigger and handle messages keeping only the admin's own line breaks and banners.
pub fn render_body(i18n: &I18n, job: &JobInfo, group_title: Option<&str>, log: &JobLog) -> String {
    let t = |key| i18n.get(key);
    let mut content = format!("Alarm Job LogId={}", log.id);
    if log.trigger_code != 200 {
        content.push_str("<br>TriggerMsg=<br>");
        content.push_str(&crate::domain::html::sanitize_message(log.trigger_msg.as_deref().unwrap_or("")));
    }
    if log.handle_code > 0 && log.handle_code != 200 {
        // 2.4.2 labels the handle message "HandleCode"; kept so existing mail filters still match.
        content.push_str("<br>HandleCode=");
        content.push_str(&crate::domain::html::sanitize_message(log.handle_msg.as_deref().unwrap_or("")));
    }
    let cells = [
        escape(group_title.unwrap_or("null")),
        group_digits(job.id),
        escape(&job.job_desc),
        escape(t("jobconf_monitor_alarm_type")),
        content,
    ];
    table(i18n, ["jobinfo_field_jobgroup", "jobinfo_field_id", "jobinfo_field_jobdesc"], cells)
}

/// The HTML body of a workflow run's alarm, in the job alarm's table (its first columns name the workflow).
pub fn render_workflow_body(i18n: &I18n, run: &WorkflowAlarm, group_title: Option<&str>) -> String {
    let t = |key| i18n.get(key);
    let (kind, content) = match &run.cause {
        WorkflowCause::Failed { failed_nodes } => (
            t("workflow_alarm_failed"),
            format!(
                "Alarm Workflow RunId={}<br>FailedNodes={}",
                run.run_id,
                escape(&failed_nodes.join(", "))
            ),
        ),
        WorkflowCause::DeadlinePassed { deadline_at, stopped, .. } => (
            t("workflow_alarm_deadline"),
            format!(
                "Alarm Workflow RunId={}<br>Deadline={}{}",
                run.run_id,
                escape(deadline_at),
                if *stopped { "<br>Stopped" } else { "" }
            ),
        ),
    };
    let cells = [
        escape(group_title.unwrap_or("null")),
        run.workflow_id.to_string(),
        escape(&run.workflow_name),
        escape(kind),
        content,
    ];
    table(i18n, ["jobinfo_field_jobgroup", "workflow_alarm_id", "workflow_alarm_name"], cells)
}

/// The alarm table: the first three columns' label keys, and the five cells, escaped already.
fn table(i18n: &I18n, labels: [&str; 3], cells: [String; 5]) -> String {
    let t = |key| escape(i18n.get(key));
    let [group, id, name, kind, content] = cells;
    format!(
        "<h5>{detail}：</h5>\
         <table border=\"1\" cellpadding=\"3\" style=\"border-collapse:collapse; width:80%;\">\
         <thead style=\"font-weight: bold;color: #ffffff;background-color: #ff8c00;\"><tr>\
         <td width=\"20%\">{group_label}</td><td width=\"10%\">{id_label}</td><td width=\"20%\">{name_label}</td>\
         <td width=\"10%\">{title_label}</td><td width=\"40%\">{content_label}</td></tr></thead>\
         <tbody><tr><td>{group}</td><td>{id}</td><td>{name}</td><td>{kind}</td><td>{content}</td></tr></tbody>\
         </table>",
        detail = t("jobconf_monitor_detail"),
        group_label = t(labels[0]),
        id_label = t(labels[1]),
        name_label = t(labels[2]),
        title_label = t("jobconf_monitor_alarm_title"),
        content_label = t("jobconf_monitor_alarm_content"),
    )
}

/// Java's default number format groups thousands: job 1234 shows as "1,234".
pub(super) fn group_digits(n: i32) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 {
        out.insert(0, '-');
    }
    out
}

fn sender(mail: &MailConfig, i18n: &I18n) -> Result<Mailbox, MailSetupError> {
    let address = mail.from.as_deref().or(mail.username.as_deref()).unwrap_or("").trim().to_string();
    let address = address.parse().map_err(|_| MailSetupError::From(address.clone()))?;
    Ok(Mailbox::new(Some(i18n.get("admin_name_full").to_string()), address))
}

/// `mail.smtp.timeout` / `connectiontimeout` (the longer), else [`DEFAULT_TIMEOUT`].
fn read_timeout(mail: &MailConfig) -> Duration {
    mail.timeout_ms.map(Duration::from_millis).unwrap_or(DEFAULT_TIMEOUT)
}

fn transport(host: &str, mail: &MailConfig) -> Result<AsyncSmtpTransport<Tokio1Executor>, MailSetupError> {
    let trust_all =
        mail.ssl_trust.as_deref().is_some_and(|t| t.trim() == "*" || t.split_whitespace().any(|h| h == host));
    let tls_parameters = TlsParameters::builder(host.to_string())
        .dangerous_accept_invalid_certs(trust_all)
        .build_rustls()
        .map_err(|e| MailSetupError::Tls(e.to_string()))?;
    let tls = if mail.implicit_tls {
        Tls::Wrapper(tls_parameters)
    } else if mail.starttls_required {
        Tls::Required(tls_parameters)
    } else if mail.starttls_enable {
        Tls::Opportunistic(tls_parameters)
    } else {
        Tls::None
    };
    let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host)
        .port(mail.port)
        .tls(tls)
        .timeout(Some(read_timeout(mail)));
    if mail.auth {
        if let (Some(user), Some(password)) = (&mail.username, &mail.password) {
            builder = builder.credentials(Credentials::new(user.clone(), password.expose().to_string()));
        }
    }
    Ok(builder.build())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: i32, desc: &str) -> JobInfo {
        JobInfo { job_desc: desc.into(), alarm_email: Some("a@x.test".into()), ..JobInfo::sample(id) }
    }

    fn log(id: i64, trigger: (i32, &str), handle: (i32, &str)) -> JobLog {
        JobLog {
            trigger_code: trigger.0,
            trigger_msg: Some(trigger.1.into()),
            handle_code: handle.0,
            handle_msg: Some(handle.1.into()),
            ..JobLog::sample(id)
        }
    }

    /// The data row of the alarm table.
    fn cells(body: &str) -> Vec<String> {
        let row =
            body.split("<tbody><tr>").nth(1).and_then(|r| r.split("</tr></tbody>").next()).unwrap_or("");
        row.trim_start_matches("<td>")
            .trim_end_matches("</td>")
            .split("</td><td>")
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn body_names_group_job_and_both_messages_escaped() {
        let i18n = I18n::new("en");
        let failed = log(77, (500, "route<br>address <b>x</b>"), (502, "boom <img src=x onerror=alert(1)>"));
        let body = render_body(
            &i18n,
            &job(1234, "nightly <script>alert(1)</script> & co"),
            Some("Group \"A\"<i>"),
            &failed,
        );
        assert_eq!(
            cells(&body),
            vec![
                "Group &quot;A&quot;&lt;i&gt;".to_string(),
                "1,234".to_string(),
                "nightly &lt;script&gt;alert(1)&lt;/script&gt; &amp; co".to_string(),
                escape(i18n.get("jobconf_monitor_alarm_type")),
                "Alarm Job LogId=77<br>TriggerMsg=<br>route<br>address &lt;b&gt;x&lt;/b&gt;\
                 <br>HandleCode=boom &lt;img src=x onerror=alert(1)&gt;"
                    .to_string(),
            ]
        );
        assert!(!body.contains("<script>") && !body.contains("<img") && !body.contains("<b>"), "{body}");
        assert!(
            body.starts_with(&format!("<h5>{}：</h5>", escape(i18n.get("jobconf_monitor_detail")))),
            "{body}"
        );
        for label in [
            "jobinfo_field_jobgroup",
            "jobinfo_field_id",
            "jobinfo_field_jobdesc",
            "jobconf_monitor_alarm_title",
            "jobconf_monitor_alarm_content",
        ] {
            assert!(body.contains(&escape(i18n.get(label))), "{label} in {body}");
        }
    }

    #[test]
    fn body_content_follows_the_codes() {
        let i18n = I18n::new("en");
        // Trigger succeeded, result failed: only the handle message.
        let body =
            render_body(&i18n, &job(5, "d"), Some("g"), &log(1, (200, "trigger ok"), (500, "handler threw")));
        assert_eq!(cells(&body)[4], "Alarm Job LogId=1<br>HandleCode=handler threw");
        // Trigger failed, no result: only the trigger message.
        let body = render_body(&i18n, &job(5, "d"), Some("g"), &log(2, (500, "no executor"), (0, "")));
        assert_eq!(cells(&body)[4], "Alarm Job LogId=2<br>TriggerMsg=<br>no executor");
        // A deleted group reads `null`.
        let body = render_body(&i18n, &job(5, "d"), None, &log(3, (500, "x"), (0, "")));
        assert_eq!(cells(&body)[0], "null");
    }

    #[test]
    fn body_speaks_the_configured_language() {
        let zh = render_body(&I18n::new("zh_CN"), &job(5, "d"), Some("g"), &log(1, (500, "x"), (0, "")));
        let en = render_body(&I18n::new("en"), &job(5, "d"), Some("g"), &log(1, (500, "x"), (0, "")));
        let zh_detail = I18n::new("zh_CN").get("jobconf_monitor_detail").to_string();
        assert_ne!(zh_detail, I18n::new("en").get("jobconf_monitor_detail"));
        assert!(zh.contains(&escape(&zh_detail)), "{zh}");
        assert!(!en.contains(&escape(&zh_detail)), "{en}");
    }

    #[test]
    fn job_ids_are_grouped_like_java() {
        assert_eq!(group_digits(7), "7");
        assert_eq!(group_digits(1234), "1,234");
        assert_eq!(group_digits(1_234_567), "1,234,567");
        assert_eq!(group_digits(-1234), "-1,234");
    }
}
