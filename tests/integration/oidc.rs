//! OpenID Connect sign-in (docs/authentication.md).
//!
//! `oidc::provider_*` run the whole flow against a real OpenID Provider, the certified `oidc-provider`
//! package run by Node (tools/oidc-provider; `npm ci` there installs it), through its own login and
//! consent pages; they are ignored when Node or the package is missing. The refusals need tokens no
//! honest provider issues, so they use a small provider written here that signs what it is told to.
//!
//! The admins are configured with the callback of a load balancer, `http://admin.test/…`; the test's
//! browser sends what is addressed there to whichever admin it chooses, as the balancer would.

use crate::support::fixtures::manual_group;
use crate::support::Backend;
use crate::support::{Context, TestApp, TestDb};
use crate::{cases, ensure, ensure_eq, Case, TestResult, SQLITE};
use axum::extract::{Form, Query, State};
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use libtest_mimic::Failed;
use reqwest::header::{CONTENT_TYPE, COOKIE, LOCATION, SET_COOKIE};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use xxl_job_admin::storage::{Db, Role};

pub fn cases() -> Vec<Case> {
    use Backend::{MySql, Sqlite};
    cases! {
        "oidc" {
            SQLITE => provider_first_sign_in_creates_the_user_and_maps_groups needs [OidcProvider],
            &[Sqlite, MySql] => provider_sign_in_started_on_one_admin_completes_on_another needs [OidcProvider],
            SQLITE => signs_in_with_an_es256_token_and_pkce,
            SQLITE => refuses_a_wrong_state,
            SQLITE => refuses_a_wrong_nonce,
            SQLITE => refuses_a_token_signed_by_another_key,
            SQLITE => refuses_an_expired_token,
            SQLITE => refuses_a_token_for_another_client,
            SQLITE => a_new_signing_key_is_fetched_at_most_every_10_s,
            SQLITE => password_login_disabled_refuses_the_form,
        }
    }
}

const CLIENT_ID: &str = "xxl-job-console";
const CLIENT_SECRET: &str = "test-client-secret-7";
/// The load balancer's address, as the admins and the provider know it.
const PUBLIC: &str = "http://admin.test";
const CALLBACK: &str = "http://admin.test/xxl-job-admin/auth/oidc/callback";
const NO_PASSWORD: &str = "!oidc";

/// The folder of the test provider; its `node_modules` is installed by `npm ci` (`.ci/run` does it).
pub fn provider_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tools/oidc-provider")
}

/// Why the real-provider tests cannot run here, if they cannot.
pub fn provider_availability() -> Result<(), String> {
    if !provider_dir().join("node_modules/oidc-provider").is_dir() {
        return Err(format!("{} has no node_modules (run npm ci there)", provider_dir().display()));
    }
    match std::process::Command::new("node").arg("--version").output() {
        Ok(out) if out.status.success() => Ok(()),
        _ => Err("node is not installed".into()),
    }
}

fn admin_args(issuer: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec![
        format!("--xxl.job.auth.oidc.issuer={issuer}"),
        format!("--xxl.job.auth.oidc.client-id={CLIENT_ID}"),
        format!("--xxl.job.auth.oidc.client-secret={CLIENT_SECRET}"),
        format!("--xxl.job.auth.oidc.redirect-uri={CALLBACK}"),
        "--xxl.job.auth.oidc.provider-name=Test IdP".to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

async fn start_admin(db: &TestDb, args: &[String]) -> Result<TestApp, Failed> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    TestApp::start(db, &args).await
}

/// The real provider, stopped when dropped.
struct Provider {
    issuer: String,
    accounts: PathBuf,
    _dir: tempfile::TempDir,
    child: std::process::Child,
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Provider {
    async fn start(accounts: Value) -> Result<Provider, Failed> {
        let dir = tempfile::tempdir().context("temp dir")?;
        let file = dir.path().join("accounts.json");
        std::fs::write(&file, accounts.to_string()).context("accounts")?;
        let mut child = std::process::Command::new("node")
            .arg("provider.js")
            .current_dir(provider_dir())
            .env("CLIENT_ID", CLIENT_ID)
            .env("CLIENT_SECRET", CLIENT_SECRET)
            .env("REDIRECT_URI", CALLBACK)
            .env("ACCOUNTS_FILE", &file)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("node provider.js")?;
        let stdout = child.stdout.take().context("stdout")?;
        let mut provider = Provider { issuer: String::new(), accounts: file, _dir: dir, child };
        // The line it prints once listening; read on to the end, since a closed pipe would stop it at its
        // next notice.
        let (sender, receiver) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            let mut sender = Some(sender);
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let (Some(issuer), Some(sender)) = (line.strip_prefix("listening "), sender.take()) {
                    let _ = sender.send(issuer.to_string());
                }
            }
        });
        let issuer =
            tokio::time::timeout(Duration::from_secs(20), receiver).await.context("provider start")?;
        provider.issuer = issuer.context("the provider's address")?;
        Ok(provider)
    }

    fn set_accounts(&self, accounts: Value) -> TestResult {
        std::fs::write(&self.accounts, accounts.to_string()).context("accounts")
    }
}

/// A client that follows redirects, keeps cookies per host and fills in the provider's forms as a
/// person would; what is addressed to [`PUBLIC`] goes to the admin it is told to use.
struct Browser {
    http: reqwest::Client,
    jar: HashMap<String, BTreeMap<String, String>>,
    admin: String,
}

/// Where a sign-in ended: the console page the admin sent the browser to.
#[derive(Debug)]
struct Landing(String);

impl Landing {
    fn signed_in(&self) -> bool {
        !self.0.contains("/toLogin")
    }
}

impl Browser {
    fn new() -> Browser {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(20))
            .build()
            .expect("client");
        Browser { http, jar: HashMap::new(), admin: String::new() }
    }

    /// The cookie jar's key and the real URL.
    fn route(&self, url: &str) -> (String, String) {
        match url.strip_prefix(PUBLIC) {
            Some(path) => (PUBLIC.to_string(), format!("{}{path}", self.admin)),
            None => {
                let parsed = url::Url::parse(url).expect("absolute URL");
                (parsed.origin().ascii_serialization(), url.to_string())
            }
        }
    }

    async fn send(
        &mut self,
        url: &str,
        form: Option<&[(String, String)]>,
    ) -> Result<(u16, Option<String>, String), Failed> {
        let (host, real) = self.route(url);
        let mut request = match form {
            Some(form) => self.http.post(&real).form(form),
            None => self.http.get(&real),
        };
        let cookies = self
            .jar
            .get(&host)
            .map(|c| c.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; "));
        if let Some(cookies) = cookies.filter(|c| !c.is_empty()) {
            request = request.header(COOKIE, cookies);
        }
        let response = request.send().await.context(url)?;
        let jar = self.jar.entry(host).or_default();
        for value in response.headers().get_all(SET_COOKIE) {
            let text = value.to_str().unwrap_or_default();
            let Some((name, rest)) = text
                .split(';')
                .next()
                .and_then(|pair| pair.split_once('='))
                .map(|(n, v)| (n.trim().to_string(), v.to_string()))
            else {
                continue;
            };
            let expired = rest.is_empty() || text.to_ascii_lowercase().contains("max-age=0");
            if expired {
                jar.remove(&name);
            } else {
                jar.insert(name, rest);
            }
        }
        let location = response.headers().get(LOCATION).and_then(|v| v.to_str().ok()).map(|l| {
            url::Url::parse(url).and_then(|base| base.join(l)).map(String::from).unwrap_or_default()
        });
        let status = response.status().as_u16();
        let body = response.text().await.context("body")?;
        Ok((status, location, body))
    }

    /// Signs in as `login` at the provider, starting on admin `start` and coming back to admin `finish`.
    async fn sign_in(&mut self, start: &str, finish: &str, login: &str) -> Result<Landing, Failed> {
        self.admin = start.to_string();
        let mut url = format!("{PUBLIC}/xxl-job-admin/auth/oidc/login");
        let mut form: Option<Vec<(String, String)>> = None;
        for _ in 0..20 {
            let (status, location, body) = self.send(&url, form.as_deref()).await?;
            form = None;
            if let Some(next) = location {
                if next.starts_with(&format!("{CALLBACK}?")) {
                    self.admin = finish.to_string();
                }
                if next.starts_with(PUBLIC) && !next.contains("/auth/oidc/") {
                    return Ok(Landing(next));
                }
                url = next;
                continue;
            }
            ensure!(status == 200, "{url}: HTTP {status}: {body}");
            let (action, fields) = provider_form(&body).context(&format!("a form at {url}"))?;
            url = url::Url::parse(&url).and_then(|base| base.join(&action)).context("form action")?.into();
            let mut fields = fields;
            fields.extend([
                ("login".to_string(), login.to_string()),
                ("password".to_string(), "any".to_string()),
            ]);
            form = Some(fields);
        }
        Err("more than 20 steps".into())
    }

    /// Whether the admin behind [`PUBLIC`] now lets this browser in.
    async fn console_opens(&mut self) -> Result<bool, Failed> {
        let (status, _, _) = self.send(&format!("{PUBLIC}/xxl-job-admin/jobinfo"), None).await?;
        Ok(status == 200)
    }
}

/// The action and hidden fields of the provider's login or consent form.
fn provider_form(html: &str) -> Option<(String, Vec<(String, String)>)> {
    let attribute = |tag: &str, name: &str| {
        let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
        Some(
            tag[start..]
                .split('"')
                .next()?
                .replace("&amp;", "&")
                .replace("&#x2F;", "/")
                .replace("&#47;", "/"),
        )
    };
    let form_start = html.find("<form")?;
    let form =
        &html[form_start..html[form_start..].find("</form>").map_or(html.len(), |end| form_start + end)];
    let action = attribute(&form[..form.find('>')?], "action")?;
    let hidden = form
        .split("<input")
        .skip(1)
        .filter(|tag| tag.contains("type=\"hidden\""))
        .filter_map(|tag| Some((attribute(tag, "name")?, attribute(tag, "value")?)))
        .collect();
    Some((action, hidden))
}

async fn user(db: &Db, name: &str) -> Result<xxl_job_admin::storage::JobUser, Failed> {
    db.load_user_by_name(name).await.context("load user")?.context(name)
}

async fn provider_first_sign_in_creates_the_user_and_maps_groups(backend: Backend) -> TestResult {
    let provider =
        Provider::start(json!({ "alice": ["xxl-admins", "app-a"], "bob": ["app-b", "unrelated"] })).await?;
    let db = TestDb::fresh(backend)?;
    let args = admin_args(
        &provider.issuer,
        &[
            "--xxl.job.auth.oidc.scopes=openid profile groups",
            "--xxl.job.auth.oidc.groups-claim=groups",
            "--xxl.job.auth.oidc.admin-groups=xxl-admins",
        ],
    );
    let app = start_admin(&db, &args).await?;
    let store = app.app.db.clone();
    let a = manual_group(&store, "app-a", &[]).await?;
    let b = manual_group(&store, "app-b", &[]).await?;

    let page =
        app.http.get(app.url("/toLogin")).send().await.context("login page")?.text().await.context("body")?;
    let page = page.replace("&#x2f;", "/");
    ensure!(
        page.contains("Sign in with Test IdP")
            && page.contains("/xxl-job-admin/auth/oidc/login?redirect=/xxl-job-admin/\""),
        "the button: {page}"
    );
    ensure!(page.contains("loginForm"), "the password form stays");

    let mut browser = Browser::new();
    let landing = browser
        .sign_in(&app.base.replace("/xxl-job-admin", ""), &app.base.replace("/xxl-job-admin", ""), "alice")
        .await?;
    ensure_eq!(landing.0, format!("{PUBLIC}/xxl-job-admin/"));
    ensure!(browser.console_opens().await?, "alice's session opens the console");
    let alice = user(&store, "alice").await?;
    ensure_eq!(
        (alice.role, alice.permission.clone(), alice.password.as_str()),
        (Role::Admin, Some(a.to_string()), NO_PASSWORD)
    );

    let mut browser = Browser::new();
    let admin = app.base.replace("/xxl-job-admin", "");
    ensure!(browser.sign_in(&admin, &admin, "bob").await?.signed_in(), "bob signs in");
    let bob = user(&store, "bob").await?;
    ensure_eq!((bob.role, bob.permission.clone()), (Role::Normal, Some(b.to_string())));
    // No password opens bob's account: the form refuses whatever is typed.
    let form = app
        .http
        .post(app.url("/login"))
        .form(&[("userName", "bob"), ("password", NO_PASSWORD)])
        .send()
        .await
        .context("login")?;
    ensure_eq!(form.json::<Value>().await.context("json")?["code"], 500);

    // The groups changed at the provider: the next sign-in brings the row up to date, still one row.
    provider.set_accounts(json!({ "bob": ["app-a", "app-b", "xxl-admins"] }))?;
    ensure!(Browser::new().sign_in(&admin, &admin, "bob").await?.signed_in(), "bob signs in again");
    let again = user(&store, "bob").await?;
    ensure_eq!((again.id, again.role, again.permission), (bob.id, Role::Admin, Some(format!("{a},{b}"))));
    app.stop().await;
    Ok(())
}

async fn provider_sign_in_started_on_one_admin_completes_on_another(backend: Backend) -> TestResult {
    let provider = Provider::start(json!({ "carol": ["app-a"] })).await?;
    let db = TestDb::fresh(backend)?;
    // No groups claim: the console decides the rights.
    let args = admin_args(&provider.issuer, &[]);
    let first = start_admin(&db, &args).await?;
    let second = start_admin(&db, &args).await?;
    let (a, b) = (first.base.replace("/xxl-job-admin", ""), second.base.replace("/xxl-job-admin", ""));
    let mut browser = Browser::new();
    ensure!(browser.sign_in(&a, &b, "carol").await?.signed_in(), "started on A, completed on B");
    browser.admin = a.clone();
    ensure!(browser.console_opens().await?, "the session works on A too");
    let store = first.app.db.clone();
    let carol = user(&store, "carol").await?;
    ensure_eq!(
        (carol.role, carol.permission.clone()),
        (Role::Normal, None),
        "a new user starts with no rights"
    );
    store.update_user(carol.id, None, Role::Admin, None).await.context("an admin promotes carol")?;
    ensure!(Browser::new().sign_in(&b, &a, "carol").await?.signed_in(), "B to A");
    ensure_eq!(user(&store, "carol").await?.role, Role::Admin, "kept as the administrator set it");
    second.stop().await;
    first.stop().await;
    Ok(())
}

/// How the provider written here lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Forgery {
    None,
    WrongNonce,
    OtherKey,
    Expired,
    OtherAudience,
}

/// What the provider written here has seen.
struct FakeState {
    issuer: String,
    forgery: Forgery,
    key: rcgen::KeyPair,
    other_key: rcgen::KeyPair,
    /// Publishes `other_key` as `k2` beside `k1` and signs with it.
    rotated: AtomicBool,
    /// code → (nonce, code_challenge) of each authorization request.
    codes: Mutex<HashMap<String, (String, String)>>,
    /// Token requests whose PKCE verifier did not match.
    bad_verifiers: Mutex<u32>,
}

fn jwk(key: &rcgen::KeyPair, kid: &str) -> Value {
    let raw = key.public_key_raw();
    json!({ "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": kid, "x": URL_SAFE_NO_PAD.encode(&raw[1..33]), "y": URL_SAFE_NO_PAD.encode(&raw[33..65]) })
}

/// A provider that signs ES256 ID tokens with what [`Forgery`] says; it listens until the test ends.
async fn fake_provider(forgery: Forgery) -> Result<Arc<FakeState>, Failed> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.context("bind")?;
    let issuer = format!("http://{}", listener.local_addr().context("addr")?);
    let state = Arc::new(FakeState {
        issuer,
        forgery,
        key: rcgen::KeyPair::generate().context("key")?,
        other_key: rcgen::KeyPair::generate().context("key")?,
        rotated: AtomicBool::new(false),
        codes: Mutex::new(HashMap::new()),
        bad_verifiers: Mutex::new(0),
    });
    let router = Router::new()
        .route("/.well-known/openid-configuration", get(|State(s): State<Arc<FakeState>>| async move {
            Json(json!({
                "issuer": s.issuer, "authorization_endpoint": format!("{}/authorize", s.issuer),
                "token_endpoint": format!("{}/token", s.issuer), "jwks_uri": format!("{}/jwks", s.issuer),
            }))
        }))
        .route("/jwks", get(|State(s): State<Arc<FakeState>>| async move {
            let mut keys = vec![jwk(&s.key, "k1")];
            if s.rotated.load(Ordering::SeqCst) {
                keys.push(jwk(&s.other_key, "k2"));
            }
            Json(json!({ "keys": keys }))
        }))
        .route("/authorize", get(|State(s): State<Arc<FakeState>>, Query(q): Query<HashMap<String, String>>| async move {
            let code = format!("code-{}", rand::random::<u64>());
            let field = |name: &str| q.get(name).cloned().unwrap_or_default();
            s.codes.lock().unwrap().insert(code.clone(), (field("nonce"), field("code_challenge")));
            Redirect::to(&format!("{}?code={code}&state={}", field("redirect_uri"), field("state")))
        }))
        .route("/token", post(|State(s): State<Arc<FakeState>>, Form(f): Form<HashMap<String, String>>| async move {
            let Some((nonce, challenge)) = f.get("code").and_then(|c| s.codes.lock().unwrap().remove(c)) else {
                return (axum::http::StatusCode::BAD_REQUEST, Json(json!({ "error": "invalid_grant" }))).into_response();
            };
            let verifier = f.get("code_verifier").cloned().unwrap_or_default();
            if URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())) != challenge {
                *s.bad_verifiers.lock().unwrap() += 1;
                return (axum::http::StatusCode::BAD_REQUEST, Json(json!({ "error": "invalid_grant" }))).into_response();
            }
            let now = chrono::Utc::now().timestamp();
            let (exp, iat) = if s.forgery == Forgery::Expired { (now - 3600, now - 7200) } else { (now + 300, now) };
            let nonce = if s.forgery == Forgery::WrongNonce { "another-nonce".to_string() } else { nonce };
            let aud = if s.forgery == Forgery::OtherAudience { "another-client" } else { CLIENT_ID };
            let claims = json!({ "iss": s.issuer, "sub": "dave-1", "aud": aud, "exp": exp, "iat": iat, "nonce": nonce, "preferred_username": "dave" });
            let rotated = s.rotated.load(Ordering::SeqCst);
            let signer = if s.forgery == Forgery::OtherKey || rotated { &s.other_key } else { &s.key };
            let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
            header.kid = Some(if rotated { "k2" } else { "k1" }.into());
            let token = jsonwebtoken::encode(&header, &claims, &jsonwebtoken::EncodingKey::from_ec_der(&signer.serialize_der())).expect("sign");
            Json(json!({ "access_token": "at", "token_type": "Bearer", "id_token": token })).into_response()
        }))
        .with_state(state.clone());
    tokio::spawn(async move { axum::serve(listener, router).await });
    Ok(state)
}

/// The provider written here, lying as told, and an admin using it: the provider, the admin, its origin,
/// and its database (kept until the test ends).
async fn with_fake_provider(
    backend: Backend,
    forgery: Forgery,
    extra: &[&str],
) -> Result<(Arc<FakeState>, TestApp, String, TestDb), Failed> {
    let provider = fake_provider(forgery).await?;
    let db = TestDb::fresh(backend)?;
    let app = start_admin(&db, &admin_args(&provider.issuer, extra)).await?;
    let origin = app.base.replace("/xxl-job-admin", "");
    Ok((provider, app, origin, db))
}

/// Waits for the audit file to hold a sign-in event of the provider with `outcome`.
async fn audited_sign_in(file: &std::path::Path, user: &str, outcome: &str) -> TestResult {
    crate::support::eventually(
        Duration::from_secs(10),
        &format!("an oidc sign-in event ({outcome})"),
        || async {
            let text = std::fs::read_to_string(file).unwrap_or_default();
            text.lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .any(|e| {
                    e["kind"] == "signin"
                        && e["method"] == "oidc"
                        && e["outcome"] == outcome
                        && e["actor"]["userName"] == user
                })
                .then_some(())
        },
    )
    .await
}

async fn signs_in_with_an_es256_token_and_pkce(backend: Backend) -> TestResult {
    let dir = tempfile::tempdir()?;
    let audit = dir.path().join("audit.jsonl");
    let audit_arg = format!("--xxl.job.audit.file={}", audit.display());
    let (provider, app, admin, _db) = with_fake_provider(backend, Forgery::None, &[&audit_arg]).await?;
    let mut browser = Browser::new();
    let landing = browser.sign_in(&admin, &admin, "dave").await?;
    ensure!(landing.signed_in(), "{landing:?}");
    audited_sign_in(&audit, "dave", "success").await?;
    ensure!(browser.console_opens().await?, "dave's session");
    ensure_eq!(*provider.bad_verifiers.lock().unwrap(), 0);
    ensure_eq!(user(&app.app.db, "dave").await?.password, NO_PASSWORD);
    ensure!(
        !browser.jar.get(PUBLIC).is_some_and(|c| c.contains_key("XXL_JOB_OIDC")),
        "the transaction cookie is cleared"
    );
    app.stop().await;
    Ok(())
}

/// A key the admin has not seen is fetched, but not twice within 10 s.
async fn a_new_signing_key_is_fetched_at_most_every_10_s(backend: Backend) -> TestResult {
    let (provider, app, admin, _db) = with_fake_provider(backend, Forgery::None, &[]).await?;
    ensure!(Browser::new().sign_in(&admin, &admin, "dave").await?.signed_in(), "signed with k1");
    provider.rotated.store(true, Ordering::SeqCst);
    ensure!(
        !Browser::new().sign_in(&admin, &admin, "dave").await?.signed_in(),
        "k2 within 10 s of reading the keys"
    );
    tokio::time::sleep(Duration::from_millis(10_500)).await;
    ensure!(
        Browser::new().sign_in(&admin, &admin, "dave").await?.signed_in(),
        "k2, read once 10 s have passed"
    );
    app.stop().await;
    Ok(())
}

/// The sign-in ends on the login page with the failure shown, no session and no user row.
async fn ensure_refused(app: &TestApp, browser: &mut Browser, landing: Landing) -> TestResult {
    ensure_eq!(landing.0, format!("{PUBLIC}/xxl-job-admin/toLogin?oidcFailed=1"));
    ensure!(!browser.console_opens().await?, "no session");
    let (_, _, page) = browser.send(&landing.0, None).await?;
    ensure!(page.contains("oidcFailed"), "the login page says so: {page}");
    ensure!(app.app.db.load_user_by_name("dave").await.context("user")?.is_none(), "no user created");
    Ok(())
}

async fn refuses(backend: Backend, forgery: Forgery) -> TestResult {
    let dir = tempfile::tempdir()?;
    let audit = dir.path().join("audit.jsonl");
    let audit_arg = format!("--xxl.job.audit.file={}", audit.display());
    let (_provider, app, admin, _db) = with_fake_provider(backend, forgery, &[&audit_arg]).await?;
    let mut browser = Browser::new();
    let landing = browser.sign_in(&admin, &admin, "dave").await?;
    ensure_refused(&app, &mut browser, landing).await?;
    audited_sign_in(&audit, "(oidc)", "failure").await?;
    app.stop().await;
    Ok(())
}

async fn refuses_a_wrong_nonce(backend: Backend) -> TestResult {
    refuses(backend, Forgery::WrongNonce).await
}

async fn refuses_a_token_signed_by_another_key(backend: Backend) -> TestResult {
    refuses(backend, Forgery::OtherKey).await
}

async fn refuses_an_expired_token(backend: Backend) -> TestResult {
    refuses(backend, Forgery::Expired).await
}

async fn refuses_a_token_for_another_client(backend: Backend) -> TestResult {
    refuses(backend, Forgery::OtherAudience).await
}

async fn refuses_a_wrong_state(backend: Backend) -> TestResult {
    let (_provider, app, admin, _db) = with_fake_provider(backend, Forgery::None, &[]).await?;
    let mut browser = Browser::new();
    browser.admin = admin;
    let (_, to_provider, _) = browser.send(&format!("{PUBLIC}/xxl-job-admin/auth/oidc/login"), None).await?;
    let (_, back, _) = browser.send(&to_provider.context("to the provider")?, None).await?;
    let back = back.context("back to the admin")?;
    let (_, code) = back.split_once("code=").context("code")?;
    let code = code.split('&').next().unwrap_or_default();
    // An attacker's callback in this browser: a code of theirs with a state this browser never sent.
    let (_, landing, _) = browser.send(&format!("{CALLBACK}?code={code}&state=forged"), None).await?;
    ensure_refused(&app, &mut browser, Landing(landing.context("redirect")?)).await?;
    // Nor does the right state help another browser, which has no transaction cookie.
    let mut other = Browser::new();
    other.admin = browser.admin.clone();
    let (_, landing, _) = other.send(&back, None).await?;
    ensure_refused(&app, &mut other, Landing(landing.context("redirect")?)).await?;
    app.stop().await;
    Ok(())
}

async fn password_login_disabled_refuses_the_form(backend: Backend) -> TestResult {
    let (_provider, app, _, _db) =
        with_fake_provider(backend, Forgery::None, &["--xxl.job.auth.password.enabled=false"]).await?;
    let answer: Value = app
        .http
        .post(app.url("/login"))
        .form(&[("userName", "admin"), ("password", "123456")])
        .send()
        .await
        .context("login")?
        .json()
        .await
        .context("json")?;
    ensure_eq!(answer["code"], 500, "{answer}");
    ensure!(answer["msg"].as_str().is_some_and(|m| m.contains("turned off")), "{answer}");
    let page = app.http.get(app.url("/toLogin")).send().await.context("login page")?;
    ensure!(
        page.headers()
            .get(CONTENT_TYPE)
            .is_some_and(|t| t.to_str().unwrap_or_default().starts_with("text/html")),
        "a page"
    );
    let page = page.text().await.context("body")?;
    ensure!(!page.contains("loginForm") && page.contains("Sign in with Test IdP"), "{page}");
    app.stop().await;
    Ok(())
}
