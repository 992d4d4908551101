//! A REST API client as a script would be: a bearer token, JSON in and out, no cookies.

use super::console::ConsoleClient;
use super::Context;
use libtest_mimic::Failed;
use serde_json::{json, Value};

pub struct RestClient {
    base: String,
    http: reqwest::Client,
    pub token: Option<String>,
}

/// An answer: the status, the JSON body (`null` when empty), the `WWW-Authenticate` header and all headers.
#[derive(Debug)]
pub struct RestReply {
    pub status: u16,
    pub body: Value,
    pub www_authenticate: Option<String>,
    pub headers: reqwest::header::HeaderMap,
}

impl RestReply {
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string)
    }
}

impl RestClient {
    /// A client of the admin at `app_base` (`http://…/xxl-job-admin`) sending `token`.
    pub fn new(app_base: &str, token: Option<&str>) -> RestClient {
        let http =
            reqwest::Client::builder().timeout(std::time::Duration::from_secs(20)).build().expect("client");
        RestClient { base: format!("{app_base}/openapi/v1"), http, token: token.map(str::to_string) }
    }

    /// A client with a new token of the console user `console` (optionally expiring).
    pub async fn issued_by(
        app_base: &str,
        console: &ConsoleClient,
        expire_time: Option<&str>,
    ) -> Result<RestClient, Failed> {
        let form: Vec<(&str, &str)> = expire_time.map(|t| vec![("expireTime", t)]).unwrap_or_default();
        let reply = console.post("/user/apiToken", &form).await?;
        let token = reply["content"]["token"].as_str().context(&format!("a token in {reply}"))?;
        Ok(RestClient::new(app_base, Some(token)))
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
        headers: &[(&str, &str)],
    ) -> Result<RestReply, Failed> {
        let mut request = self.http.request(method.clone(), format!("{}{path}", self.base));
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.context(&format!("{method} {path}"))?;
        let status = response.status().as_u16();
        let www_authenticate =
            response.headers().get("www-authenticate").and_then(|v| v.to_str().ok()).map(str::to_string);
        let headers = response.headers().clone();
        let text = response.text().await.context("body")?;
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).context(&format!("{method} {path}: JSON expected, got {text:?}"))?
        };
        Ok(RestReply { status, body, www_authenticate, headers })
    }

    /// A request with a text body of `content_type` (or none); the status and the text answered.
    pub async fn text(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<(&str, &str)>,
    ) -> Result<(u16, String), Failed> {
        let mut request = self.http.request(method.clone(), format!("{}{path}", self.base));
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some((content_type, body)) = body {
            request = request.header("Content-Type", content_type).body(body.to_string());
        }
        let response = request.send().await.context(&format!("{method} {path}"))?;
        let status = response.status().as_u16();
        Ok((status, response.text().await.context("body")?))
    }

    pub async fn get(&self, path: &str) -> Result<RestReply, Failed> {
        self.send(reqwest::Method::GET, path, None, &[]).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Result<RestReply, Failed> {
        self.send(reqwest::Method::POST, path, Some(body), &[]).await
    }

    pub async fn put(&self, path: &str, body: Value) -> Result<RestReply, Failed> {
        self.send(reqwest::Method::PUT, path, Some(body), &[]).await
    }

    pub async fn delete(&self, path: &str) -> Result<RestReply, Failed> {
        self.send(reqwest::Method::DELETE, path, None, &[]).await
    }

    /// A body that must have answered `status`.
    pub async fn expect(
        &self,
        status: u16,
        reply: impl std::future::Future<Output = Result<RestReply, Failed>>,
    ) -> Result<Value, Failed> {
        let reply = reply.await?;
        if reply.status != status {
            return Err(format!("HTTP {} instead of {status}: {}", reply.status, reply.body).into());
        }
        Ok(reply.body)
    }

    /// Saves a workflow of `group` from `nodes` and the definition's other fields in `extra`; its id.
    pub async fn save_workflow(
        &self,
        group: i32,
        name: &str,
        nodes: Value,
        extra: Value,
    ) -> Result<i64, Failed> {
        let mut doc = json!({"name": name, "jobGroup": group, "nodes": nodes});
        for (k, v) in extra.as_object().context("extra fields")? {
            doc[k] = v.clone();
        }
        let saved = self.expect(201, self.post("/workflows", doc)).await?;
        saved["id"].as_i64().context("workflow id")
    }
}

/// The failure body of `status` with `message`.
pub fn refusal(status: u16, error: &str, message: &str) -> Value {
    json!({"status": status, "error": error, "message": message})
}
