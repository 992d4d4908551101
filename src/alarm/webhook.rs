//! Webhook alarm channels (`xxl.job.alarm.webhook.<name>.*`): DingTalk, WeCom, Feishu and Slack robots
//! and plain JSON endpoints. Each attempt is bounded by the channel's timeout; failures that may pass
//! (no connection, timeout, HTTP 429 or 5xx) are retried a bounded number of times, refusals are not.

use super::{format, Alarm, AlarmChannel, AlarmFuture};
use crate::config::{WebhookConfig, WebhookKind};
// Names the cause without the URL, which must not reach the log: it carries the robot's token.
use crate::executor::describe;
use crate::i18n::I18n;
use crate::time::Clock;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use hmac::{Hmac, Mac};
use reqwest::{redirect, StatusCode, Url};
use serde_json::Value;
use sha2::Sha256;
use std::sync::Arc;
use std::time::Duration;

/// Attempts per alarm and channel.
const ATTEMPTS: u32 = 3;
/// Pause before the second attempt, doubled before the third.
const RETRY_PAUSE: Duration = Duration::from_millis(500);
/// Vendor replies are a few bytes; a larger body is not read.
const MAX_REPLY_BYTES: usize = 64 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum WebhookSetupError {
    #[error("xxl.job.alarm.webhook.{name}: cannot set up the HTTP client: {reason}")]
    Client { name: String, reason: String },
}

/// Why an attempt failed.
#[derive(Debug, thiserror::Error)]
enum Failure {
    /// May pass by itself: worth another attempt.
    #[error("{0}")]
    Transient(String),
    /// The endpoint refused the message: another attempt would be refused too.
    #[error("{0}")]
    Refused(String),
}

pub struct WebhookChannel {
    /// `webhook:<name>`.
    label: String,
    config: WebhookConfig,
    http: reqwest::Client,
    i18n: I18n,
    clock: Arc<dyn Clock>,
}

impl WebhookChannel {
    pub fn new(
        config: WebhookConfig,
        i18n: I18n,
        clock: Arc<dyn Clock>,
    ) -> Result<WebhookChannel, WebhookSetupError> {
        let timeout = Duration::from_millis(config.timeout_ms);
        let http = reqwest::Client::builder()
            .connect_timeout(timeout)
            .timeout(timeout)
            // A robot URL that redirects is misconfigured; following it could leak the message elsewhere.
            .redirect(redirect::Policy::none())
            .build()
            .map_err(|e| WebhookSetupError::Client { name: config.name.clone(), reason: e.to_string() })?;
        Ok(WebhookChannel {
            label: format!("{}{}", super::WEBHOOK_ENTRY, config.name),
            config,
            http,
            i18n,
            clock,
        })
    }

    /// Sends with retries; the last attempt's reason when none arrived.
    async fn deliver(&self, alarm: &Alarm) -> Result<(), String> {
        let body = format::body(self.config.kind, &self.i18n, alarm);
        let mut last = String::new();
        for attempt in 1..=ATTEMPTS {
            match self.attempt(&body).await {
                Ok(()) => return Ok(()),
                Err(Failure::Refused(reason)) => {
                    tracing::warn!(channel = %self.label, "alarm of {} refused: {reason}", alarm.about());
                    return Err(reason);
                }
                Err(Failure::Transient(reason)) => {
                    tracing::warn!(channel = %self.label, attempt, "alarm of {} not delivered: {reason}", alarm.about());
                    last = reason;
                }
            }
            if attempt < ATTEMPTS {
                tokio::time::sleep(RETRY_PAUSE * 2u32.pow(attempt - 1)).await;
            }
        }
        Err(last)
    }

    /// One POST, signed afresh (the vendors check the timestamp).
    async fn attempt(&self, body: &Value) -> Result<(), Failure> {
        let (url, body) = self.signed(body.clone())?;
        let send = async {
            let mut response =
                self.http.post(url).json(&body).send().await.map_err(|e| Failure::Transient(describe(&e)))?;
            let status = response.status();
            let mut reply = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| Failure::Transient(describe(&e)))? {
                reply.extend_from_slice(&chunk);
                if reply.len() > MAX_REPLY_BYTES {
                    break;
                }
            }
            Ok::<_, Failure>((status, String::from_utf8_lossy(&reply).into_owned()))
        };
        // The client's timeout covers the exchange; this one also covers a reply trickled forever.
        let timeout = Duration::from_millis(self.config.timeout_ms);
        let (status, reply) = tokio::time::timeout(timeout, send)
            .await
            .map_err(|_| Failure::Transient(format!("no answer within {} ms", self.config.timeout_ms)))??;
        check_reply(self.config.kind, status, &reply)
    }

    /// The URL and body of one attempt: DingTalk signs in the query, Feishu in the body.
    fn signed(&self, mut body: Value) -> Result<(Url, Value), Failure> {
        let mut url =
            Url::parse(self.config.url.expose()).map_err(|e| Failure::Refused(format!("bad URL: {e}")))?;
        let Some(secret) = &self.config.secret else { return Ok((url, body)) };
        let now_ms = self.clock.now_ms();
        match self.config.kind {
            WebhookKind::DingTalk => {
                let sign = dingtalk_sign(secret.expose(), now_ms);
                url.query_pairs_mut()
                    .append_pair("timestamp", &now_ms.to_string())
                    .append_pair("sign", &sign);
            }
            WebhookKind::Feishu => {
                let seconds = now_ms.div_euclid(1000);
                body["timestamp"] = Value::String(seconds.to_string());
                body["sign"] = Value::String(feishu_sign(secret.expose(), seconds));
            }
            WebhookKind::WeCom | WebhookKind::Slack | WebhookKind::Json => {}
        }
        Ok((url, body))
    }
}

impl AlarmChannel for WebhookChannel {
    fn name(&self) -> &str {
        &self.label
    }

    fn concerns(&self, alarm: &Alarm) -> bool {
        alarm.targets.webhooks.contains(&self.config.name)
            || alarm.group.as_ref().is_some_and(|g| self.config.covers(&g.app_name))
    }

    fn send<'a>(&'a self, alarm: &'a Alarm) -> AlarmFuture<'a> {
        Box::pin(self.deliver(alarm))
    }
}

/// DingTalk's signed robots: base64 of HmacSHA256 keyed by the secret over `timestamp + "\n" + secret`,
/// the timestamp in milliseconds; both go into the query (URL-encoded there).
pub fn dingtalk_sign(secret: &str, timestamp_ms: i64) -> String {
    hmac_base64(secret.as_bytes(), format!("{timestamp_ms}\n{secret}").as_bytes())
}

/// Feishu's signed bots: base64 of HmacSHA256 keyed by `timestamp + "\n" + secret` over an empty
/// message, the timestamp in seconds; both go into the body.
pub fn feishu_sign(secret: &str, timestamp_s: i64) -> String {
    hmac_base64(format!("{timestamp_s}\n{secret}").as_bytes(), b"")
}

fn hmac_base64(key: &[u8], message: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(message);
    BASE64.encode(mac.finalize().into_bytes())
}

/// Success is HTTP 2xx and, for the chat robots, their own "ok" code in the reply.
fn check_reply(kind: WebhookKind, status: StatusCode, reply: &str) -> Result<(), Failure> {
    let excerpt: String = reply.chars().take(300).collect();
    if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        return Err(Failure::Transient(format!("HTTP {status}: {excerpt}")));
    }
    if !status.is_success() {
        return Err(Failure::Refused(format!("HTTP {status}: {excerpt}")));
    }
    let code_field = match kind {
        WebhookKind::DingTalk | WebhookKind::WeCom => "errcode",
        WebhookKind::Feishu => "code",
        WebhookKind::Slack | WebhookKind::Json => return Ok(()),
    };
    let reply_json: Value = serde_json::from_str(reply).unwrap_or(Value::Null);
    // Older Feishu bots answer `StatusCode` instead of `code`.
    let code = reply_json.get(code_field).or_else(|| reply_json.get("StatusCode")).and_then(Value::as_i64);
    match code {
        Some(0) => Ok(()),
        _ => Err(Failure::Refused(format!("the robot answered {excerpt}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_follow_the_vendors_examples() {
        // Computed independently with Python's hmac/base64 from the vendors' documented recipes.
        assert_eq!(
            dingtalk_sign("SECtest", 1_700_000_000_000),
            "aZLLrriXgn05YbwaGR7knYsLeJADjr9NwLaNNKpxh4g="
        );
        assert_eq!(feishu_sign("test", 1_700_000_000), "eSJQnOl8XqPTMPHWz9e5IzeHS/tqoc68g2967ekIPmg=");
    }

    #[test]
    fn replies_are_judged_per_vendor() {
        let ok =
            |kind, status: u16, reply: &str| check_reply(kind, StatusCode::from_u16(status).unwrap(), reply);
        assert!(ok(WebhookKind::DingTalk, 200, r#"{"errcode":0,"errmsg":"ok"}"#).is_ok());
        assert!(matches!(
            ok(WebhookKind::DingTalk, 200, r#"{"errcode":310000,"errmsg":"sign not match"}"#),
            Err(Failure::Refused(_))
        ));
        assert!(ok(WebhookKind::Feishu, 200, r#"{"code":0,"msg":"success"}"#).is_ok());
        assert!(ok(WebhookKind::Feishu, 200, r#"{"StatusCode":0}"#).is_ok());
        assert!(matches!(ok(WebhookKind::Feishu, 200, r#"{"code":19021}"#), Err(Failure::Refused(_))));
        assert!(matches!(ok(WebhookKind::WeCom, 200, "not json"), Err(Failure::Refused(_))));
        assert!(ok(WebhookKind::Slack, 200, "ok").is_ok());
        assert!(ok(WebhookKind::Json, 204, "").is_ok());
        assert!(matches!(ok(WebhookKind::Json, 503, ""), Err(Failure::Transient(_))));
        assert!(matches!(ok(WebhookKind::Slack, 429, ""), Err(Failure::Transient(_))));
        assert!(matches!(ok(WebhookKind::Slack, 404, "no_team"), Err(Failure::Refused(_))));
    }
}
