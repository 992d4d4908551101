//! LDAP login (issue 27, docs/authentication.md) against a real OpenLDAP server started by the test
//! (`support::slapd`): the console's own `/login`, with the user's row created and its role and
//! permissions mapped from groups; refusals (wrong, empty password, unknown name, filter injection);
//! StartTLS and LDAPS with a private CA; a server that is down, with and without the local fallback.

use crate::support::console::ConsoleClient;
use crate::support::nginx::free_port;
use crate::support::slapd::{user_dn, Slapd, GROUPS, PEOPLE, READER, READER_PASSWORD};
use crate::support::{eventually, Backend, Context, TestApp, TestDb};
use crate::{cases, ensure, ensure_eq, Case, TestResult, SQLITE};
use serde_json::Value;
use std::time::Duration;
use xxl_job_admin::config::Config;
use xxl_job_admin::i18n::I18n;
use xxl_job_admin::ldap::{Directory, Verdict};
use xxl_job_admin::service::login::DIRECTORY_PASSWORD;
use xxl_job_admin::storage::{JobUser, Role};

/// The executor of a fresh database (id 1).
const SAMPLE_APP: &str = "xxl-job-executor-sample";

pub fn cases() -> Vec<Case> {
    cases! {
        "ldap" {
            SQLITE => login_creates_the_user_with_role_and_permissions_from_groups needs [Slapd],
            SQLITE => wrong_empty_unknown_and_injected_names_are_refused needs [Slapd],
            SQLITE => member_of_with_anonymous_search needs [Slapd],
            SQLITE => starttls_and_ldaps_trust_only_the_configured_ca needs [Slapd],
            SQLITE => server_down_and_the_local_fallback needs [Slapd],
        }
    }
}

fn message(key: &str) -> String {
    I18n::new("en").get(key).to_string()
}

/// `--key=value` arguments of a directory at `url` searched by the service account, groups found by
/// a group search, `admins` mapped to administrators and `ops` to the sample executor.
fn settings(url: &str) -> Vec<String> {
    vec![
        format!("--xxl.job.auth.ldap.url={url}"),
        "--xxl.job.auth.ldap.starttls=false".into(),
        format!("--xxl.job.auth.ldap.bind-dn={READER}"),
        format!("--xxl.job.auth.ldap.bind-password={READER_PASSWORD}"),
        format!("--xxl.job.auth.ldap.user-search-base={PEOPLE}"),
        format!("--xxl.job.auth.ldap.group-search-base={GROUPS}"),
        "--xxl.job.auth.ldap.admin-group=admins".into(),
        format!("--xxl.job.auth.ldap.group-executors=ops={SAMPLE_APP};dev=no-such-app"),
    ]
}

async fn start(db: &TestDb, args: &[String]) -> Result<TestApp, libtest_mimic::Failed> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    TestApp::start(db, &args).await
}

/// The `/login` answer for a fresh client, and the client (holding the session when it succeeded).
async fn login(
    app: &TestApp,
    username: &str,
    password: &str,
) -> Result<(Value, ConsoleClient), libtest_mimic::Failed> {
    let mut client = ConsoleClient::new(&app.base);
    let reply = client.login(username, password, false).await?;
    Ok((reply, client))
}

async fn user(app: &TestApp, name: &str) -> Result<Option<JobUser>, libtest_mimic::Failed> {
    app.app.db.load_user_by_name(name).await.context("load user")
}

async fn login_creates_the_user_with_role_and_permissions_from_groups(backend: Backend) -> TestResult {
    let slapd = Slapd::start().await?;
    let db = TestDb::fresh(backend)?;
    let app = start(&db, &settings(&slapd.ldap_url)).await?;
    ensure!(user(&app, "alice").await?.is_none(), "no row before the first login");
    let (reply, alice) = login(&app, "alice", "alice-pw").await?;
    ensure_eq!(reply["code"], 200, "{reply}");
    let row = user(&app, "alice").await?.context("alice's row")?;
    ensure_eq!(
        (row.password.as_str(), row.role, row.permission.as_deref()),
        (DIRECTORY_PASSWORD, Role::Admin, Some("1"))
    );
    // The session is a console session like any other: an administrator's page answers.
    let users = alice.post("/user/pageList", &[("role", "-1")]).await?;
    ensure!(users["recordsTotal"].as_i64().unwrap_or(0) >= 2, "{users}");

    let (reply, _) = login(&app, "bob", "bob-pw").await?;
    ensure_eq!(reply["code"], 200, "{reply}");
    let bob = user(&app, "bob").await?.context("bob's row")?;
    ensure_eq!(
        (bob.role, bob.permission.as_deref()),
        (Role::Normal, None),
        "dev maps to an AppName no executor has"
    );

    // The directory decides again at every login: an administrator's change is undone.
    app.app.db.update_user(row.id, None, Role::Normal, Some("")).await.context("demote alice")?;
    ensure_eq!(login(&app, "alice", "alice-pw").await?.0["code"], 200);
    let row = user(&app, "alice").await?.context("alice's row")?;
    ensure_eq!((row.role, row.permission.as_deref()), (Role::Admin, Some("1")));

    // A local row of the same name becomes the directory's: its local password stops working.
    let local = JobUser {
        id: 0,
        username: "carol".into(),
        password: xxl_job_admin::service::login::md5_hex("local-pw"),
        role: Role::Normal,
        permission: Some("1".into()),
    };
    app.app.db.insert_user(&local).await.context("insert carol")?;
    ensure_eq!(login(&app, "carol", "local-pw").await?.0["msg"], message("login_param_unvalid"));
    ensure_eq!(login(&app, "carol", "carol-pw").await?.0["code"], 200);
    let carol = user(&app, "carol").await?.context("carol's row")?;
    ensure_eq!(
        (carol.password.as_str(), carol.role, carol.permission.as_deref()),
        (DIRECTORY_PASSWORD, Role::Normal, None),
        "no group, no executor"
    );
    app.stop().await;

    // Without a mapping, role and permissions stay as an administrator set them.
    let db = TestDb::fresh(backend)?;
    let unmapped: Vec<String> = settings(&slapd.ldap_url)
        .into_iter()
        .filter(|a| !a.contains("admin-group") && !a.contains("group-executors"))
        .collect();
    let app = start(&db, &unmapped).await?;
    ensure_eq!(login(&app, "alice", "alice-pw").await?.0["code"], 200);
    let row = user(&app, "alice").await?.context("alice's row")?;
    ensure_eq!((row.role, row.permission.as_deref()), (Role::Normal, None), "a new user starts with nothing");
    app.app.db.update_user(row.id, None, Role::Admin, Some("1")).await.context("promote alice")?;
    ensure_eq!(login(&app, "alice", "alice-pw").await?.0["code"], 200);
    let row = user(&app, "alice").await?.context("alice's row")?;
    ensure_eq!((row.role, row.permission.as_deref()), (Role::Admin, Some("1")), "kept");
    app.stop().await;
    Ok(())
}

async fn wrong_empty_unknown_and_injected_names_are_refused(backend: Backend) -> TestResult {
    let slapd = Slapd::start().await?;
    let db = TestDb::fresh(backend)?;
    let audit = tempfile::tempdir().context("audit dir")?;
    let audit_file = audit.path().join("audit.jsonl");
    let args = settings(&slapd.ldap_url);
    let mut audited = args.clone();
    audited.push(format!("--xxl.job.audit.file={}", audit_file.display()));
    let app = start(&db, &audited).await?;
    let refused = message("login_param_unvalid");
    for (name, password, why) in [
        ("alice", "bob-pw", "another user's password"),
        ("alice", "alice-pw ", "the password as typed, not trimmed"),
        ("nobody", "nobody-pw", "a name the directory does not know"),
        ("admin", "123456", "the local administrator: no fallback by default"),
        // Pasted into (uid={0}) unescaped, these would find alice.
        ("alic*", "alice-pw", "a wildcard"),
        ("*)(uid=alice", "alice-pw", "a filter of one's own"),
        ("x)(|(uid=alice)", "alice-pw", "an or of one's own"),
    ] {
        let (reply, _) = login(&app, name, password).await?;
        ensure_eq!(reply["msg"], refused, "{why}: {name} / {password}: {reply}");
    }
    // The name `*` is a literal value: it finds the one person whose uid is `*`, not everyone.
    ensure_eq!(login(&app, "*", "*-pw").await?.0["code"], 200);
    ensure!(
        user(&app, "alic*").await?.is_none() && user(&app, "nobody").await?.is_none(),
        "no row for a refused name"
    );
    ensure_eq!(login(&app, "alice", "").await?.0["msg"], message("login_param_empty"));
    // Each attempt is an audit event of method ldap, the injected name recorded as typed.
    eventually(Duration::from_secs(10), "the LDAP sign-in events", || async {
        let text = std::fs::read_to_string(&audit_file).unwrap_or_default();
        let events: Vec<Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let signin = |user: &str, outcome: &str| {
            events.iter().any(|e| {
                e["kind"] == "signin"
                    && e["method"] == "ldap"
                    && e["outcome"] == outcome
                    && e["actor"]["userName"] == user
            })
        };
        (signin("*", "success") && signin("*)(uid=alice", "failure") && signin("admin", "failure"))
            .then_some(())
    })
    .await?;
    let text = std::fs::read_to_string(&audit_file).context("audit file")?;
    ensure!(!text.contains("alice-pw") && !text.contains(READER_PASSWORD), "a password in the audit file");

    // An empty password never reaches a bind (servers take a DN without a password as anonymous and
    // answer success): refused even with the directory stopped.
    let config = Config::load(&args, Vec::<(String, String)>::new(), std::path::Path::new("/"))
        .context("config")?
        .config;
    let directory = Directory::new(config.ldap.context("ldap config")?).context("directory")?;
    let Verdict::Accepted(mut alice) = directory.verify("alice", "alice-pw").await.context("verify")? else {
        return Err("alice's password refused".into());
    };
    alice.groups.sort();
    ensure_eq!(
        (alice.dn, alice.groups),
        (user_dn("alice"), vec![format!("cn=admins,{GROUPS}"), format!("cn=ops,{GROUPS}")])
    );
    drop(slapd);
    ensure_eq!(directory.verify("alice", "").await.context("verify")?, Verdict::WrongPassword);
    ensure!(directory.verify("alice", "alice-pw").await.is_err(), "the directory is down");

    // LDAP logins are throttled like local ones: past the free attempts even the right password waits.
    let slapd = Slapd::start().await?;
    app.stop().await;
    let app = start(&db, &settings(&slapd.ldap_url)).await?;
    ensure_eq!(login(&app, "alice", "alice-pw").await?.0["code"], 200, "alice has a row now");
    for _ in 0..5 {
        ensure_eq!(login(&app, "alice", "wrong").await?.0["msg"], refused);
    }
    let (reply, _) = login(&app, "alice", "alice-pw").await?;
    ensure!(reply["msg"].as_str().is_some_and(|m| m.contains("Too many failed attempts")), "{reply}");
    app.stop().await;
    Ok(())
}

async fn member_of_with_anonymous_search(backend: Backend) -> TestResult {
    let slapd = Slapd::start().await?;
    let db = TestDb::fresh(backend)?;
    let args: Vec<String> = settings(&slapd.ldap_url)
        .into_iter()
        .filter(|a| !a.contains("bind-") && !a.contains("group-search-base"))
        .collect();
    let app = start(&db, &args).await?;
    ensure_eq!(login(&app, "alice", "alice-pw").await?.0["code"], 200);
    let row = user(&app, "alice").await?.context("alice's row")?;
    ensure_eq!((row.role, row.permission.as_deref()), (Role::Admin, Some("1")), "groups from memberOf");
    ensure_eq!(login(&app, "bob", "alice-pw").await?.0["msg"], message("login_param_unvalid"));
    app.stop().await;
    Ok(())
}

async fn starttls_and_ldaps_trust_only_the_configured_ca(backend: Backend) -> TestResult {
    let slapd = Slapd::start().await?;
    let db = TestDb::fresh(backend)?;
    let ca = format!("--xxl.job.auth.ldap.ca-file={}", slapd.ca_file.display());
    let with = |url: &str, extra: &[&str]| {
        let mut args: Vec<String> = settings(url).into_iter().filter(|a| !a.contains("starttls")).collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    for (args, what) in [
        (with(&slapd.ldaps_url, &[&ca]), "LDAPS"),
        (with(&slapd.ldap_url, &[&ca, "--xxl.job.auth.ldap.starttls=true"]), "StartTLS"),
        (
            with(&slapd.ldap_url.replace("127.0.0.1", "localhost"), &[&ca]),
            "StartTLS by default, by host name",
        ),
    ] {
        let app = start(&db, &args).await?;
        let (reply, _) = login(&app, "alice", "alice-pw").await?;
        ensure_eq!(reply["code"], 200, "{what}: {reply}");
        app.stop().await;
    }
    // No CA file: only the system's CAs are trusted, and the test CA is not one of them.
    for args in [with(&slapd.ldaps_url, &[]), with(&slapd.ldap_url, &[])] {
        let app = start(&db, &args).await?;
        ensure_eq!(login(&app, "alice", "alice-pw").await?.0["msg"], message("login_ldap_unavailable"));
        app.stop().await;
    }
    // A CA file without a certificate stops the start.
    let empty = tempfile::NamedTempFile::new().context("temp file")?;
    let args = with(&slapd.ldaps_url, &[&format!("--xxl.job.auth.ldap.ca-file={}", empty.path().display())]);
    let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
    match TestApp::start(&db, &arg_refs).await {
        Ok(app) => {
            app.stop().await;
            return Err("an admin started with an empty CA file".into());
        }
        Err(e) => ensure!(e.message().is_some_and(|m| m.contains("ca-file")), "{e:?}"),
    }
    Ok(())
}

async fn server_down_and_the_local_fallback(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    // Nobody listens there.
    let down = format!("ldap://127.0.0.1:{}", free_port()?);
    let app = start(&db, &settings(&down)).await?;
    for (name, password) in [("admin", "123456"), ("alice", "alice-pw")] {
        ensure_eq!(login(&app, name, password).await?.0["msg"], message("login_ldap_unavailable"), "{name}");
    }
    app.stop().await;

    let mut fallback = settings(&down);
    fallback.push("--xxl.job.auth.ldap.fallback-to-local=true".into());
    let app = start(&db, &fallback).await?;
    ensure_eq!(
        login(&app, "admin", "123456").await?.0["code"],
        200,
        "the local administrator while LDAP is down"
    );
    ensure_eq!(
        login(&app, "admin", "wrong").await?.0["msg"],
        message("login_ldap_unavailable"),
        "not a wrong password: LDAP was not asked"
    );
    app.stop().await;

    // With the directory up, fallback lets in local names it does not know, never its own names.
    let slapd = Slapd::start().await?;
    let mut fallback = settings(&slapd.ldap_url);
    fallback.push("--xxl.job.auth.ldap.fallback-to-local=true".into());
    let app = start(&db, &fallback).await?;
    ensure_eq!(login(&app, "admin", "123456").await?.0["code"], 200);
    ensure_eq!(login(&app, "alice", "alice-pw").await?.0["code"], 200);
    drop(slapd);
    ensure_eq!(
        login(&app, "alice", "alice-pw").await?.0["msg"],
        message("login_ldap_unavailable"),
        "a directory user has no local password"
    );
    app.stop().await;
    Ok(())
}
