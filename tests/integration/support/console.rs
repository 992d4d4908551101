//! A console client that behaves like a browser or a script: form posts, the login cookie by hand.

use super::Context;
use libtest_mimic::Failed;
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use serde_json::Value;

pub struct ConsoleClient {
    base: String,
    http: reqwest::Client,
    pub cookie: Option<String>,
}

pub struct PageReply {
    pub status: u16,
    pub location: Option<String>,
    pub set_cookie: Option<String>,
    pub content_type: String,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
}

impl PageReply {
    pub fn json(&self) -> Result<Value, Failed> {
        serde_json::from_str(&self.body).context(&format!("JSON expected, got {:?}", self.body))
    }
}

impl ConsoleClient {
    pub fn new(base: &str) -> ConsoleClient {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(std::time::Duration::from_secs(20))
            .build()
            .expect("client");
        ConsoleClient { base: base.to_string(), http, cookie: None }
    }

    pub async fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        form: &[(&str, &str)],
        headers: &[(&str, &str)],
    ) -> Result<PageReply, Failed> {
        let mut request = self.http.request(method, format!("{}{path}", self.base)).form(form);
        if let Some(cookie) = &self.cookie {
            request = request.header(COOKIE, cookie);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.context(path)?;
        let header = |name| {
            response
                .headers()
                .get(name)
                .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
                .map(str::to_string)
        };
        let (status, location, set_cookie) =
            (response.status().as_u16(), header(LOCATION), header(SET_COOKIE));
        let content_type = header(reqwest::header::CONTENT_TYPE).unwrap_or_default();
        let headers = response.headers().clone();
        let body = response.text().await.context("body")?;
        Ok(PageReply { status, location, set_cookie, content_type, headers, body })
    }

    /// A form POST answered with JSON.
    pub async fn post(&self, path: &str, form: &[(&str, &str)]) -> Result<Value, Failed> {
        let reply = self.request(reqwest::Method::POST, path, form, &[]).await?;
        if reply.status != 200 {
            return Err(format!("POST {path}: HTTP {} {:?}", reply.status, reply.body).into());
        }
        reply.json()
    }

    pub async fn get(&self, path: &str) -> Result<PageReply, Failed> {
        self.request(reqwest::Method::GET, path, &[], &[]).await
    }

    /// Logs in and keeps the session cookie; returns the ReturnT answer.
    pub async fn login(&mut self, username: &str, password: &str, remember: bool) -> Result<Value, Failed> {
        let mut form = vec![("userName", username), ("password", password)];
        if remember {
            form.push(("ifRemember", "on"));
        }
        let reply = self.request(reqwest::Method::POST, "/login", &form, &[]).await?;
        if let Some(set_cookie) = &reply.set_cookie {
            self.cookie = set_cookie.split(';').next().map(str::to_string);
        }
        reply.json()
    }
}

impl ConsoleClient {
    /// A GET with the parameters in the query string, answered with JSON (HTTP 200).
    pub async fn get_json(&self, path_and_query: &str) -> Result<Value, Failed> {
        let reply = self.get(path_and_query).await?;
        if reply.status != 200 {
            return Err(format!("GET {path_and_query}: HTTP {} {:?}", reply.status, reply.body).into());
        }
        reply.json()
    }

    /// A form POST; only the HTTP status.
    pub async fn status_of(&self, path: &str, form: &[(&str, &str)]) -> Result<u16, Failed> {
        Ok(self.request(reqwest::Method::POST, path, form, &[]).await?.status)
    }
}
