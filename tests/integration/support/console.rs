//! A console client that behaves like a browser or a script: form posts, the login cookie by hand; and what
//! the console cases share: the admin's session, messages from i18n keys, ReturnT answers, paging maps and
//! job forms.

use super::{Context, TestApp};
use crate::{ensure_eq, TestResult};
use libtest_mimic::Failed;
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use serde_json::{json, Value};
use xxl_job_admin::i18n::I18n;

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

/// The console's English texts, as the admins under test are configured (`xxl.job.i18n=en`).
pub fn en() -> I18n {
    I18n::new("en")
}

/// A client logged in as the initial administrator.
pub async fn admin(app: &TestApp) -> Result<ConsoleClient, Failed> {
    let mut client = ConsoleClient::new(&app.base);
    let reply = client.login("admin", "123456", false).await?;
    ensure_eq!(reply, json!({"code": 200, "msg": null, "content": null}));
    Ok(client)
}

/// A user of role 0 with the groups of `permission` (ids, comma-separated), added by `admin` and
/// logged in.
pub async fn restricted_user(
    app: &TestApp,
    admin: &ConsoleClient,
    name: &str,
    password: &str,
    permission: &str,
) -> Result<ConsoleClient, Failed> {
    let form = [("username", name), ("password", password), ("role", "0"), ("permission", permission)];
    let added = admin.post("/user/add", &form).await?;
    ensure_eq!(added["code"], 200, "{added}");
    let mut user = ConsoleClient::new(&app.base);
    ensure_eq!(user.login(name, password, false).await?["code"], 200);
    Ok(user)
}

/// The messages built from i18n keys, as the console concatenates them.
pub fn msg(keys: &[&str]) -> String {
    let t = en();
    keys.iter().map(|k| t.get(k)).collect()
}

/// A ReturnT failure (code 500) with its message.
pub fn fail(text: impl Into<String>) -> Value {
    json!({"code": 500, "msg": text.into(), "content": null})
}

/// A ReturnT success (code 200) with its content.
pub fn ok(content: Value) -> Value {
    json!({"code": 200, "msg": null, "content": content})
}

/// Whether a page answer is the standalone error page showing `message` (every other page carries the
/// whole i18n bundle, so finding a message's text alone proves nothing).
pub fn is_error_page(page: &PageReply, message: &str) -> bool {
    page.status == 200
        && page.content_type.starts_with("text/html")
        && page.body.contains("System Error")
        && page.body.contains(&format!("<p>{}</p>", xxl_job_admin::domain::html::escape(message)))
}

/// The ids of a paging answer's rows, in order.
pub fn ids(page: &Value) -> Vec<i64> {
    page["data"]
        .as_array()
        .map(|rows| rows.iter().filter_map(|r| r["id"].as_i64()).collect())
        .unwrap_or_default()
}

/// The 24 keys of a job object (2.4.2: XxlJobInfo's fields).
pub const JOB_KEYS: [&str; 24] = [
    "id",
    "jobGroup",
    "jobDesc",
    "addTime",
    "updateTime",
    "author",
    "alarmEmail",
    "scheduleType",
    "scheduleConf",
    "misfireStrategy",
    "executorRouteStrategy",
    "executorHandler",
    "executorParam",
    "executorBlockStrategy",
    "executorTimeout",
    "executorFailRetryCount",
    "glueType",
    "glueSource",
    "glueRemark",
    "glueUpdatetime",
    "childJobId",
    "triggerStatus",
    "triggerLastTime",
    "triggerNextTime",
];

/// The keys of a JSON object, sorted.
pub fn keys_of(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
    keys.sort();
    keys
}

/// The given keys, sorted, to compare with [`keys_of`].
pub fn sorted(keys: &[&str]) -> Vec<String> {
    let mut keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    keys.sort();
    keys
}

/// A paging map: exactly the three keys, both counts equal.
pub fn ensure_page(page: &Value, total: i64, ids_expected: &[i64], what: &str) -> TestResult {
    ensure_eq!(keys_of(page), sorted(&["recordsTotal", "recordsFiltered", "data"]), "{what}: {page}");
    ensure_eq!(page["recordsTotal"], total, "{what}: recordsTotal of {page}");
    ensure_eq!(page["recordsFiltered"], total, "{what}: recordsFiltered of {page}");
    ensure_eq!(ids(page), ids_expected.to_vec(), "{what}: row ids");
    Ok(())
}

/// A complete, valid job form for group 1.
pub fn job_form() -> Vec<(&'static str, &'static str)> {
    vec![
        ("jobGroup", "1"),
        ("jobDesc", "d"),
        ("author", "a"),
        ("alarmEmail", ""),
        ("scheduleType", "CRON"),
        ("scheduleConf", "0 0 0 * * ?"),
        ("misfireStrategy", "DO_NOTHING"),
        ("executorRouteStrategy", "FIRST"),
        ("executorBlockStrategy", "SERIAL_EXECUTION"),
        ("executorHandler", "h"),
        ("executorParam", ""),
        ("executorTimeout", "0"),
        ("executorFailRetryCount", "0"),
        ("childJobId", ""),
        ("glueType", "BEAN"),
        ("glueSource", ""),
        ("glueRemark", "GLUE代码初始化"),
    ]
}

/// Form pairs.
pub type Form<'a> = Vec<(&'a str, &'a str)>;

/// Changes to a form (see [`form_with`]) and the message they must produce.
pub type FormCase<'a> = (Vec<(&'a str, Option<&'a str>)>, String);

/// `base` with `changes` applied: `(key, Some(value))` sets, `(key, None)` removes.
pub fn form_with<'a>(
    base: &[(&'a str, &'a str)],
    changes: &[(&'a str, Option<&'a str>)],
) -> Vec<(&'a str, &'a str)> {
    let mut form: Vec<(&str, &str)> = base.to_vec();
    for (key, value) in changes {
        form.retain(|(k, _)| k != key);
        if let Some(value) = value {
            form.push((key, value));
        }
    }
    form
}
