//! The console in a real headless Chromium: what a user clicks, end to end, with hostile text in every
//! field a user can fill. Each page of these scenarios carries a tripwire: any script injected through
//! data would set `window.__xss` (or call `alert`), and the scenario checks it never happens.

use crate::support::browser::Browser;
use crate::support::fixtures::{insert, job, manual_group};
use crate::support::nginx::{free_port, Nginx};
use crate::support::{Backend, Behaviour, Context, FakeExecutor, TestApp, TestDb};
use crate::{cases, ensure, ensure_eq, Case, TestResult, SQLITE};
use libtest_mimic::Failed;
use serde_json::{json, Value};
use xxl_job_admin::domain::codes::TriggerStatus;
use xxl_job_admin::i18n::I18n;
use xxl_job_admin::storage::Role;

pub fn cases() -> Vec<Case> {
    cases! {
        "browser" {
            SQLITE => job_from_executor_to_rolling_log needs [Chromium],
            SQLITE => glue_edit_and_rollback needs [Chromium],
            SQLITE => language_follows_configuration needs [Chromium],
            SQLITE => user_password_and_clear_log_dialogs needs [Chromium],
            SQLITE => api_token_dialog needs [Chromium],
            SQLITE => alarm_channels_page_sends_a_test needs [Chromium],
            SQLITE => deep_link_and_long_password_survive_login needs [Chromium],
            SQLITE => first_look_cron_builder_dashboard_glue_note needs [Chromium],
            SQLITE => behind_nginx_job_flow_and_dialogs needs [Chromium, Nginx],
            SQLITE => behind_nginx_every_action_and_other_origins needs [Chromium, Nginx],
            SQLITE => jobs_as_code_export_and_upload needs [Chromium],
            SQLITE => audit_page_lists_and_filters_events needs [Chromium],
        }
    }
}

/// Markup that runs if any page renders it as HTML instead of text (short: job fields allow 50 characters).
const XSS: &str = "<img src=x onerror=__xss=1>";
const XSS_SCRIPT: &str = "<script>__xss=2</script>";

/// Wraps `run` in a browser session; a failure keeps a screenshot.
macro_rules! in_browser {
    ($base:expr, $name:expr, |$browser:ident| $body:block) => {
        Browser::run(&$base, $name, |$browser| async move {
            let result: Result<(), Failed> = async { $body }.await;
            ($browser, result)
        })
        .await
    };
}
pub(crate) use in_browser;

pub async fn login(browser: &Browser, user: &str, password: &str) -> Result<(), Failed> {
    browser.goto("/toLogin").await?;
    browser.fill("#userName", user).await?;
    browser.fill("#password", password).await?;
    browser.click("#loginSubmit").await?;
    browser.until("the dashboard after login", "return document.body.dataset.page === 'index';").await?;
    no_injected_script(browser).await
}

/// Arms the tripwire on the current page and checks it was not sprung.
pub async fn no_injected_script(browser: &Browser) -> Result<(), Failed> {
    let sprung = browser
        .script(
            "window.alert = function () { window.__xss = 'alert'; }; return window.__xss || null;",
            vec![],
        )
        .await?;
    ensure_eq!(
        sprung,
        Value::Null,
        "injected script ran on {}",
        browser.client.current_url().await.context("url")?
    );
    Ok(())
}

/// Fills the named field of a form by script (selects, hidden inputs and textareas alike) and fires
/// `change` so the page's own handlers react as to a user.
pub async fn set_field(browser: &Browser, form: &str, name: &str, value: &str) -> Result<(), Failed> {
    let found = browser
        .script(
            "var f = document.querySelector(arguments[0]); var e = f && f.elements[arguments[1]]; \
             if (!e) return false; e.value = arguments[2]; \
             if (window.jQuery) { jQuery(e).trigger('input').trigger('change'); } return true;",
            vec![json!(form), json!(name), json!(value)],
        )
        .await?;
    ensure_eq!(found, json!(true), "field {name} in {form}");
    Ok(())
}

async fn job_from_executor_to_rolling_log(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &["--xxl.job.i18n=en"]).await?;
    job_flow(&app, &app.base, "browser-job-flow").await?;
    app.stop().await;
    Ok(())
}

/// An executor and a job added, run and followed to its rolling log, in the console at `base` (the
/// admin itself, or a proxy in front of it).
async fn job_flow(app: &TestApp, base: &str, name: &str) -> TestResult {
    let behaviour = Behaviour { callback: Some((app.base.clone(), 200)), ..Behaviour::default() };
    let executor = FakeExecutor::start(behaviour).await?;
    let address = executor.address.clone();
    let store = app.app.db.clone();
    in_browser!(base, name, |browser| {
        login(&browser, "admin", "123456").await?;

        // An executor with a manual address, added through the executor manager.
        browser.goto("/jobgroup").await?;
        browser.click("#jobgroupAdd").await?;
        browser.visible("#addModal").await?;
        set_field(&browser, "#addForm", "appname", "browser-app").await?;
        // Titles with `<`/`>` are refused by the server, as in 2.4.2; entities must still show as typed.
        set_field(&browser, "#addForm", "title", "ex &amp; 'x'").await?;
        browser.click("#addModal input[name=addressType][value='1']").await?;
        set_field(&browser, "#addForm", "addressList", &address).await?;
        browser.click("#addSubmit").await?;
        browser
            .until(
                "the new executor in the list",
                "return document.querySelector('#jobgroup_list').textContent.includes('browser-app');",
            )
            .await?;
        ensure!(browser.text("#jobgroup_list").await?.contains("ex &amp; 'x'"), "the title is shown as text");
        no_injected_script(&browser).await?;
        let group = store
            .all_groups()
            .await
            .context("groups")?
            .into_iter()
            .find(|g| g.app_name == "browser-app")
            .context("group")?;

        // A job with hostile text, added through the job manager.
        browser.goto(&format!("/jobinfo?jobGroup={}", group.id)).await?;
        browser.click("#jobAdd").await?;
        browser.visible("#addModal").await?;
        set_field(&browser, "#addForm", "jobGroup", &group.id.to_string()).await?;
        set_field(&browser, "#addForm", "jobDesc", &format!("browser job {XSS}")).await?;
        set_field(&browser, "#addForm", "author", XSS_SCRIPT).await?;
        set_field(&browser, "#addForm", "scheduleType", "CRON").await?;
        set_field(&browser, "#addForm", "schedule_conf_CRON", "0 0 3 * * ?").await?;
        set_field(&browser, "#addForm", "executorHandler", "demoJobHandler").await?;
        set_field(&browser, "#addForm", "executorParam", &format!("{XSS}{XSS_SCRIPT}")).await?;
        browser.click("#addSubmit").await?;
        browser
            .until(
                "the new job in the list",
                "return document.querySelector('#job_list').textContent.includes('browser job');",
            )
            .await?;
        let listed = browser.text("#job_list").await?;
        ensure!(
            listed.contains(XSS) && listed.contains(XSS_SCRIPT),
            "description and author shown as text: {listed}"
        );
        no_injected_script(&browser).await?;
        let jobs = store.jobs_by_group(group.id).await.context("jobs")?;
        let job = jobs.first().context("the job was stored")?;
        ensure_eq!(job.executor_param, Some(format!("{XSS}{XSS_SCRIPT}")));

        // Run it once, from the row's menu.
        browser.click(".job-op-toggle").await?;
        browser.click(".job-op-trigger").await?;
        browser.visible("#triggerModal").await?;
        set_field(&browser, "#triggerForm", "executorParam", "from the browser").await?;
        browser.click("#triggerSubmit").await?;
        let log_id =
            crate::support::eventually(std::time::Duration::from_secs(20), "a successful log", || async {
                let filter = xxl_job_admin::storage::LogFilter { job_id: job.id, ..Default::default() };
                let (logs, _) = store.page_logs(&filter, 0, 10).await.ok()?;
                logs.into_iter().find(|l| l.handle_code == 200).map(|l| l.id)
            })
            .await?;
        let run = executor.calls_to("/run");
        ensure_eq!(run.len(), 1);
        ensure_eq!(run[0].body["executorParams"], "from the browser");

        // The trigger log shows it as a success, and its messages through the sanitiser.
        browser.goto(&format!("/joblog?jobId={}", job.id)).await?;
        browser
            .until("the success label", "return document.querySelector('#joblog_list .text-green') !== null;")
            .await?;
        browser.click("#joblog_list .log-msg[data-field=triggerMsg]").await?;
        browser.visible("#logMsgModal").await?;
        let message = browser.text("#logMsgContent").await?;
        ensure!(message.contains(&address), "the trigger message names the address: {message}");
        no_injected_script(&browser).await?;

        // The rolling log: the executor's line breaks as line breaks, any other markup shown as text.
        browser.goto(&format!("/joblog/logDetailPage?id={log_id}")).await?;
        let console = browser.until("log lines", "var c = document.querySelector('#logConsole'); return c && c.textContent.includes('line 1') ? c.textContent : null;").await?;
        let console = console.as_str().unwrap_or("");
        ensure!(
            console.contains("<script>alert('x')</script>") && console.contains("<b>bold</b>"),
            "log markup as text: {console}"
        );
        ensure!(!console.contains("<br>"), "the executor's <br> are line breaks, not text: {console}");
        let elements = browser
            // The console's own end-of-log notes are spans of class xj-log-*.
            .script("return Array.from(document.querySelectorAll('#logConsole *:not([class^=\"xj-log\"])')).map(function (e) { return e.tagName; });", vec![])
            .await?;
        ensure_eq!(elements, json!(["BR", "BR"]), "the only elements the log made");
        no_injected_script(&browser).await?;

        // The job manager as the README shows it.
        browser.goto(&format!("/jobinfo?jobGroup={}", group.id)).await?;
        browser
            .until("the job list", "return document.querySelector('#job_list .job-desc') !== null;")
            .await?;
        browser.screenshot("jobinfo").await;
        Ok(())
    })
}

async fn glue_edit_and_rollback(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &["--xxl.job.i18n=en"]).await?;
    let store = app.app.db.clone();
    let group = manual_group(&store, "glue-app", &["http://127.0.0.1:9/"]).await?;
    let mut shell = job(group);
    shell.glue_type = "GLUE_SHELL".into();
    shell.executor_handler = None;
    shell.glue_source = Some("#!/bin/bash\necho v0".into());
    let job_id = insert(&store, &shell).await?;
    in_browser!(app.base, "browser-glue", |browser| {
        login(&browser, "admin", "123456").await?;
        for (version, remark) in [("echo v1", "first version"), ("echo v2", &format!("second {XSS}")[..])] {
            browser.goto(&format!("/jobcode?jobId={job_id}")).await?;
            browser.until("the editor", "return !!window.glueEditor;").await?;
            browser
                .script(
                    "window.glueEditor.setValue(arguments[0]);",
                    vec![json!(format!("#!/bin/bash\n{version}"))],
                )
                .await?;
            browser.click("#saveGlue").await?;
            browser.visible("#saveModal").await?;
            browser.fill("#glueRemark", remark).await?;
            browser.script("window.__samePage = true; return true;", vec![]).await?;
            browser.click("#saveGlueSubmit").await?;
            // The saved version is offered at once, on the same page (no reload), with the remark as typed.
            let listed = browser
                .until(
                    "the saved version in the history",
                    &format!(
                        "var s = document.querySelector('#glueVersion'); \
                         return window.__samePage && s.options.length && s.options[0].textContent.includes({}) ? s.options.length : null;",
                        json!(remark)
                    ),
                )
                .await?;
            ensure_eq!(
                listed,
                json!(if version == "echo v1" { 1 } else { 2 }),
                "versions listed after saving {version}"
            );
            let expected = format!("#!/bin/bash\n{version}");
            crate::support::eventually(std::time::Duration::from_secs(20), "the saved source", || {
                let (store, expected) = (store.clone(), expected.clone());
                async move {
                    let job = store.load_job(job_id).await.ok()??;
                    (job.glue_source.as_deref() == Some(expected.as_str())).then_some(())
                }
            })
            .await?;
        }
        // Roll back: pick the first version in the history, then save it as the current source.
        browser.goto(&format!("/jobcode?jobId={job_id}")).await?;
        browser.until("the editor", "return !!window.glueEditor;").await?;
        no_injected_script(&browser).await?;
        let chosen = browser
            .script(
                "var s = document.querySelector('#glueVersion'); \
                 var o = Array.from(s.options).find(function (o) { return o.textContent.includes('first version'); }); \
                 if (!o) return null; s.value = o.value; jQuery(s).trigger('change'); return o.value;",
                vec![],
            )
            .await?;
        ensure!(!chosen.is_null(), "the first version is offered");
        browser
            .until(
                "the first version in the editor",
                "return window.glueEditor.getValue().includes('echo v1');",
            )
            .await?;
        browser.click("#saveGlue").await?;
        browser.visible("#saveModal").await?;
        browser.fill("#glueRemark", "roll back to v1").await?;
        browser.click("#saveGlueSubmit").await?;
        crate::support::eventually(std::time::Duration::from_secs(20), "the rolled-back source", || {
            let store = store.clone();
            async move {
                let job = store.load_job(job_id).await.ok()??;
                (job.glue_source.as_deref() == Some("#!/bin/bash\necho v1")).then_some(())
            }
        })
        .await?;
        // The job row is written before its history row: wait for the latter too.
        let history =
            crate::support::eventually(std::time::Duration::from_secs(5), "the third version", || {
                let store = store.clone();
                async move { store.glues_of_job(job_id).await.ok().filter(|h| h.len() >= 3) }
            })
            .await?;
        ensure_eq!(history.len(), 3, "three saved versions");
        Ok(())
    })?;
    app.stop().await;
    Ok(())
}

/// `xxl.job.i18n` picks the language of every page; each bundle's own words appear.
async fn language_follows_configuration(backend: Backend) -> TestResult {
    for (code, html_lang) in [("en", "en"), ("zh_TC", "zh-TW"), ("zh_CN", "zh-CN")] {
        let db = TestDb::fresh(backend)?;
        let app = TestApp::start(&db, &[&format!("--xxl.job.i18n={code}")]).await?;
        let i18n = I18n::new(code);
        let expected = i18n.get("jobinfo_name").to_string();
        let name = format!("browser-lang-{code}");
        in_browser!(app.base, &name, |browser| {
            login(&browser, "admin", "123456").await?;
            browser.goto("/jobinfo").await?;
            let lang = browser.script("return document.documentElement.lang;", vec![]).await?;
            ensure_eq!(lang, json!(html_lang));
            let sidebar = browser.text("#sidebarMenu").await?;
            ensure!(sidebar.contains(&expected), "{code}: sidebar {sidebar:?} should name {expected:?}");
            // The console's own texts (beyond the 2.4.2 keys) come from the same bundle.
            let cron_builder = browser
                .script("return document.querySelector('#addForm .cron-gen-toggle').title;", vec![])
                .await?;
            ensure_eq!(cron_builder, json!(i18n.get("cron_builder")), "{code}");
            browser.goto("/help").await?;
            let help = browser.text(".content").await?;
            ensure!(help.contains(i18n.get("help_intro")), "{code}: the help text");
            // Issue 43 item 5: what 2.4.2 lacks is findable from the help page, its links live.
            for key in [
                "help_more",
                "help_health",
                "help_rest",
                "help_cli",
                "help_code",
                "help_login",
                "help_language",
            ] {
                ensure!(help.contains(i18n.get(key)), "{code}: the help page names {key}");
            }
            let statuses = browser
                .script(
                    "return Promise.all(Array.from(document.querySelectorAll('#helpMore a')).map(function (a) { \
                         return fetch(a.href).then(function (r) { return a.pathname + ' ' + r.status; }); }));",
                    vec![],
                )
                .await?;
            ensure_eq!(
                statuses,
                json!([
                    "/xxl-job-admin/actuator/health 200",
                    "/xxl-job-admin/actuator/prometheus 200",
                    "/xxl-job-admin/openapi/v1/openapi.json 200",
                    "/xxl-job-admin/workflow 200"
                ]),
                "{code}"
            );
            Ok(())
        })?;
        app.stop().await;
    }
    Ok(())
}

/// The dialogs the job flow does not open: adding and editing a user (client-side validation, the
/// permission checkboxes, the role switch), changing the password with a wrong old one, clearing logs.
async fn user_password_and_clear_log_dialogs(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &["--xxl.job.i18n=en"]).await?;
    dialogs_flow(&app, &app.base, "browser-dialogs").await?;
    app.stop().await;
    Ok(())
}

/// The dialogs, in the console at `base`.
async fn dialogs_flow(app: &TestApp, base: &str, name: &str) -> TestResult {
    let store = app.app.db.clone();
    let t = I18n::new("en");
    in_browser!(base, name, |browser| {
        login(&browser, "admin", "123456").await?;

        browser.goto("/user").await?;
        browser.click("#userAdd").await?;
        browser.visible("#addModal").await?;
        browser.click("#addSubmit").await?;
        let refused = browser
            .until("the validation message", "var e = document.querySelector('#addForm .help-block.error'); return e && e.offsetParent ? e.textContent : null;")
            .await?;
        ensure_eq!(refused, json!(format!("{}{}", t.get("system_please_input"), t.get("user_username"))));
        // Typed, not set by script: the validator re-checks a field it has flagged on each key.
        browser.fill("#addForm [name=username]", "bobby1").await?;
        browser.fill("#addForm [name=password]", "secret1").await?;
        let checked = browser
            .script(
                "var box = document.querySelector('#addForm input[name=permission][value=\"1\"]'); \
                 box.checked = true; jQuery(box).trigger('change'); return box.checked;",
                vec![],
            )
            .await?;
        ensure_eq!(checked, json!(true), "executor 1 offered as a permission");
        browser.click("#addSubmit").await?;
        browser
            .until(
                "the new user in the list",
                "return document.querySelector('#user_list').textContent.includes('bobby1');",
            )
            .await?;
        let bobby = store.load_user_by_name("bobby1").await.context("user")?.context("bobby1 stored")?;
        ensure_eq!((bobby.role, bobby.permission.as_deref()), (Role::Normal, Some("1")));

        let opened = browser
            .script(
                "var row = Array.from(document.querySelectorAll('#user_list tbody tr')).find(function (r) { return r.textContent.includes('bobby1'); }); \
                 if (!row) return false; row.querySelector('.user-op-edit').click(); return true;",
                vec![],
            )
            .await?;
        ensure_eq!(opened, json!(true), "bobby1's edit button");
        browser.visible("#updateModal").await?;
        let shown = browser
            .script("var f = document.querySelector('#updateForm'); return [f.elements.username.value, f.querySelector('[name=permission][value=\"1\"]').checked];", vec![])
            .await?;
        ensure_eq!(shown, json!(["bobby1", true]), "the edit dialog shows the stored user");
        browser.click("#updateForm input[name=role][value='1']").await?;
        browser.click("#updateSubmit").await?;
        let promoted =
            crate::support::eventually(std::time::Duration::from_secs(20), "the role change", || {
                let store = store.clone();
                async move { store.load_user_by_name("bobby1").await.ok()?.filter(|u| u.role == Role::Admin) }
            })
            .await?;
        ensure_eq!(
            promoted.permission.as_deref().unwrap_or(""),
            "",
            "administrators keep no permission list"
        );
        ensure_eq!(promoted.password, bobby.password, "a blank password field keeps the password");

        browser.script("jQuery('#changePwdBtn').trigger('click'); return true;", vec![]).await?;
        browser.visible("#updatePwdModal").await?;
        browser.fill("#updatePwdForm [name=oldPassword]", "wrong-old").await?;
        browser.fill("#updatePwdForm [name=password]", "newpass1").await?;
        browser.click("#updatePwdSubmit").await?;
        let expected = format!("{}{}", t.get("change_pwd_field_oldpwd"), t.get("system_unvalid"));
        browser
            .until("the refusal", &format!("var d = document.querySelector('.layui-layer-content'); return d && d.textContent.includes({}) ? true : null;", json!(expected)))
            .await?;
        let admin = store.load_user_by_name("admin").await.context("admin")?.context("admin stored")?;
        ensure_eq!(admin.password, "e10adc3949ba59abbe56e057f20f883e", "the password is unchanged");

        browser.goto("/joblog").await?;
        browser.click("#clearLogBtn").await?;
        browser.visible("#clearLogModal").await?;
        let group_name =
            browser.script("return document.querySelector('#clearLogGroupName').value;", vec![]).await?;
        ensure!(
            group_name.as_str().is_some_and(|name| !name.is_empty()),
            "the dialog names the executor: {group_name}"
        );
        no_injected_script(&browser).await?;
        Ok(())
    })
}

/// The user menu's API token dialog: a token with the chosen expiry, shown once, that the REST API takes.
async fn api_token_dialog(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &["--xxl.job.i18n=en"]).await?;
    let t = I18n::new("en");
    let base = app.base.clone();
    in_browser!(app.base, "browser-api-token", |browser| {
        login(&browser, "admin", "123456").await?;
        let issue = |days: &'static str| {
            let (browser, base) = (&browser, &base);
            async move {
                browser.click("#userMenuToggle").await?;
                browser.click("#apiTokenBtn").await?;
                browser.visible("#apiTokenModal").await?;
                let cleared =
                    browser.script("return document.querySelector('#apiTokenValue').value;", vec![]).await?;
                ensure_eq!(cleared, json!(""), "an earlier token is not shown again");
                browser
                    .script("jQuery('#apiTokenDays').val(arguments[0]); return true;", vec![json!(days)])
                    .await?;
                browser.click("#apiTokenSubmit").await?;
                let token = browser
                    .until(
                        "the new token",
                        "var v = document.querySelector('#apiTokenValue').value; return v ? v : null;",
                    )
                    .await?;
                let expiry = browser.text("#apiTokenExpiry").await?;
                // Where to send it: the absolute base URL, and the document's link; a Copy button.
                let shown = browser.text("#apiTokenBase").await?;
                ensure_eq!(shown, format!("{}/openapi/v1", base), "the REST base URL, absolute");
                browser.visible("#apiTokenCopy").await?;
                browser.script("jQuery('#apiTokenModal').modal('hide'); return true;", vec![]).await?;
                browser
                    .until(
                        "the dialog closed",
                        "return jQuery('#apiTokenModal').is(':visible') ? null : true;",
                    )
                    .await?;
                Ok::<_, Failed>((token.as_str().unwrap_or_default().to_string(), expiry))
            }
        };
        let (weekly, expiry) = issue("7").await?;
        let in_a_week = (chrono::Local::now() + chrono::Duration::days(7)).format("%Y-%m-%d").to_string();
        ensure!(expiry.starts_with(t.get("api_token_expire")) && expiry.contains(&in_a_week), "{expiry}");
        let (forever, expiry) = issue("").await?;
        ensure!(expiry.ends_with(t.get("api_token_expire_never")), "{expiry}");
        ensure!(weekly != forever, "two tokens");
        for token in [weekly, forever] {
            let api = crate::support::rest::RestClient::new(&base, Some(&token));
            ensure_eq!(api.get("/groups").await?.status, 200, "the dialog's token authenticates");
        }
        no_injected_script(&browser).await?;
        Ok(())
    })?;
    app.stop().await;
    Ok(())
}

/// The alarm channels page, reached from the menu: a channel with its hidden token, and its test button,
/// whose alarm reaches the receiver the test runs and whose answer the page shows.
async fn alarm_channels_page_sends_a_test(backend: Backend) -> TestResult {
    let receiver = crate::support::webhook::WebhookServer::start().await?;
    let db = TestDb::fresh(backend)?;
    let url = format!("--xxl.job.alarm.webhook.ops.url={}/json?token=T0K3N", receiver.base);
    let app =
        TestApp::start(&db, &["--xxl.job.i18n=en", "--xxl.job.alarm.webhook.ops.type=json", &url]).await?;
    let t = I18n::new("en");
    in_browser!(app.base, "browser-alarm-channels", |browser| {
        login(&browser, "admin", "123456").await?;
        browser.click("#nav-alarm a").await?;
        browser
            .until("the alarm channels page", "return document.body.dataset.page === 'alarm' ? true : null;")
            .await?;
        let row = browser.text("#alarm_channels tbody tr").await?;
        ensure!(
            row.contains("webhook:ops")
                && row.contains("json")
                && row.contains("/json?token=***")
                && !row.contains("T0K3N"),
            "{row}"
        );
        browser.click(".xj-alarm-test[data-name='ops']").await?;
        let expected = t.format("alarm_channel_test_sent", &[&"ops"]);
        browser
            .until("the answer", &format!("var d = document.querySelector('.layui-layer-content'); return d && d.textContent.includes({}) ? true : null;", json!(expected)))
            .await?;
        let received = receiver.received("/json");
        ensure_eq!(received.len(), 1, "one test alarm");
        ensure_eq!(received[0].body["jobDesc"], json!(t.get("alarm_test_job_desc")));
        no_injected_script(&browser).await?;
        Ok(())
    })?;
    app.stop().await;
    Ok(())
}

/// The audit trail page, reached from the menu: the events newest first, a hostile name shown as text,
/// the kind and text filters.
async fn audit_page_lists_and_filters_events(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let dir = tempfile::tempdir().context("dir")?;
    let file = format!("--xxl.job.audit.file={}", dir.path().join("audit.jsonl").display());
    let app = TestApp::start(&db, &["--xxl.job.i18n=en", &file]).await?;
    let mut stranger = crate::support::console::ConsoleClient::new(&app.base);
    stranger.login(XSS, "guess-1", false).await?;
    let rows = "function () { return Array.from(document.querySelectorAll('#audit_list tbody tr')).map(function (r) { return r.textContent; }); }";
    in_browser!(app.base, "browser-audit-page", |browser| {
        login(&browser, "admin", "123456").await?;
        browser.click("#nav-audit a").await?;
        browser
            .until("the audit page", "return document.body.dataset.page === 'audit' ? true : null;")
            .await?;
        let listed = browser.until("two events", &format!("var rows = ({rows})(); return rows.length === 2 && rows[0].includes('signin') ? rows : null;")).await?;
        ensure!(
            listed[0].as_str().is_some_and(|r| r.contains("admin") && r.contains("success")),
            "newest first: {listed}"
        );
        ensure!(
            listed[1].as_str().is_some_and(|r| r.contains(XSS) && r.contains("failure")),
            "the name as text: {listed}"
        );
        browser.script("$('#auditText').val('onerror'); $('#searchBtn').click();", vec![]).await?;
        browser.until("one event", &format!("var rows = ({rows})(); return rows.length === 1 && rows[0].includes('failure') ? true : null;")).await?;
        browser
            .script("$('#auditText').val(''); $('#auditKind').val('user.add').trigger('change');", vec![])
            .await?;
        browser.until("no user event", "var td = document.querySelector('#audit_list tbody td.dataTables_empty'); return td ? true : null;").await?;
        // Issue 43 item 5: times and changed instants as every other page shows them, no JSON, no epoch ms,
        // no word broken inside.
        // The audit file is written a moment after the answer: the list is read again until it shows the
        // start, not once (which may come too early under load).
        let start = "XJ.call('/jobinfo/start', { id: 1 }, { success: function () { window.__started = true; } }); return true;";
        browser.script(start, vec![]).await?;
        browser.until("the start done", "return window.__started === true ? true : null;").await?;
        browser.until("the job's start", &format!("var rows = ({rows})(); if (rows.length === 3 && rows[0].includes('job.start')) return true; $('#auditKind').val('').trigger('change'); return null;")).await?;
        let cells = browser
            .script(
                "var r = document.querySelector('#audit_list tbody tr'); \
                 return [r.cells[0].textContent, r.cells[6].textContent, getComputedStyle(r.cells[6]).wordBreak];",
                vec![],
            )
            .await?;
        let time = cells[0].as_str().unwrap_or_default();
        ensure!(
            time.len() == 19
                && time.as_bytes()[10] == b' '
                && time.as_bytes()[4] == b'-'
                && time.as_bytes()[13] == b':',
            "the time as yyyy-MM-dd HH:mm:ss: {cells}"
        );
        let change = cells[1].as_str().unwrap_or_default();
        ensure!(change.contains("triggerNextTime"), "the start's changes: {cells}");
        let digits = change.split(|c: char| !c.is_ascii_digit()).map(str::len).max().unwrap_or(0);
        ensure!(
            digits <= 4 && !change.contains('{') && !change.contains('['),
            "no epoch ms, no JSON: {change}"
        );
        ensure_eq!(cells[2], json!("normal"), "lines break between words");
        no_injected_script(&browser).await?;
        Ok(())
    })?;
    app.stop().await;
    Ok(())
}

/// A deep link opened before login lands there after logging in through the form, with a user name and
/// a password of 20 characters typed key by key (the longest the user dialog allows); the login page
/// ignores a return address outside the console; the bare host leads to the console.
async fn deep_link_and_long_password_survive_login(backend: Backend) -> TestResult {
    use md5::{Digest, Md5};
    const NAME: &str = "operator-with-20-chr";
    const PASSWORD: &str = "a-password-20-chars!";
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &["--xxl.job.i18n=en"]).await?;
    let store = app.app.db.clone();
    let group = manual_group(&store, "deep-link-app", &["http://127.0.0.1:9/"]).await?;
    let job_id = insert(&store, &job(group)).await?;
    let user = xxl_job_admin::storage::JobUser {
        id: 0,
        username: NAME.into(),
        password: hex::encode(Md5::digest(PASSWORD.as_bytes())),
        role: Role::Admin,
        permission: None,
    };
    store.insert_user(&user).await.context("insert user")?;
    let root = format!("http://{}/", app.app.addr);
    in_browser!(app.base, "browser-deep-link", |browser| {
        // The bare host: redirected to the console, which asks for a login.
        browser.client.goto(&root).await.context("open /")?;
        browser.until("the login page from /", "return document.body.dataset.page === 'login';").await?;

        browser.goto(&format!("/joblog?jobId={job_id}")).await?;
        browser.until("the login page", "return document.body.dataset.page === 'login';").await?;
        browser.fill("#userName", NAME).await?;
        browser.fill("#password", PASSWORD).await?;
        let typed = browser.script("return [document.querySelector('#userName').value, document.querySelector('#password').value];", vec![]).await?;
        ensure_eq!(typed, json!([NAME, PASSWORD]), "all 20 characters typed");
        browser.click("#loginSubmit").await?;
        browser
            .until("the trigger log after login", "return document.body.dataset.page === 'joblog';")
            .await?;
        let url = browser.client.current_url().await.context("url")?;
        ensure!(url.as_str().ends_with(&format!("/xxl-job-admin/joblog?jobId={job_id}")), "landed on {url}");
        let selected = browser.script("return document.querySelector('#jobId').value;", vec![]).await?;
        ensure_eq!(selected, json!(job_id.to_string()), "the linked job is chosen");

        // Logged in, the login page sends a foreign or protocol-relative return address home instead.
        for evil in ["https://evil.example/", "//evil.example/", "/xxl-job-admin/../evil"] {
            browser.goto(&format!("/toLogin?redirect={}", percent(evil))).await?;
            browser
                .until("the dashboard", "return document.body && document.body.dataset.page === 'index';")
                .await?;
            let url = browser.client.current_url().await.context("url")?;
            ensure!(
                url.host_str() == Some("127.0.0.1") && url.path() == "/xxl-job-admin/",
                "{evil}: landed on {url}"
            );
        }
        Ok(())
    })?;
    app.stop().await;
    Ok(())
}

/// Every byte but letters and digits percent-encoded, as a query value.
fn percent(text: &str) -> String {
    text.bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

/// What a newcomer sees first, in English: the cron builder opens on a valid expression with its next
/// fire times and reports a bad one beside the Cron field; the dashboard's boxes show their whole texts
/// and its pie chart says there is nothing yet; a new GLUE job's version note is English.
async fn first_look_cron_builder_dashboard_glue_note(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &["--xxl.job.i18n=en"]).await?;
    let t = I18n::new("en");
    in_browser!(app.base, "browser-first-look", |browser| {
        login(&browser, "admin", "123456").await?;

        let empty = browser
            .until("the empty pie chart", "return document.querySelector('#pieChart').dataset.empty || null;")
            .await?;
        ensure_eq!(empty, json!("true"), "no triggers yet: the pie chart shows its empty state");
        let cut = browser
            .script(
                "return Array.from(document.querySelectorAll('#dashboard .info-box-text, #dashboard .progress-description')) \
                 .filter(function (e) { return e.scrollWidth > e.clientWidth + 1; }).map(function (e) { return e.textContent; });",
                vec![],
            )
            .await?;
        ensure_eq!(cut, json!([]), "info box texts cut off");
        let heights = browser
            .script("return Array.from(document.querySelectorAll('#dashboard .xj-even-row .info-box')).map(function (e) { return e.offsetHeight; });", vec![])
            .await?;
        let heights: Vec<i64> =
            heights.as_array().map(|h| h.iter().filter_map(|v| v.as_i64()).collect()).unwrap_or_default();
        ensure!(
            heights.len() == 3 && heights.windows(2).all(|w| w[0] == w[1]),
            "even info boxes: {heights:?}"
        );

        browser.goto("/jobinfo").await?;
        browser.click("#jobAdd").await?;
        browser.visible("#addModal").await?;
        // Issue 43 item 5: at 1366 px, a common laptop width, every hint of the job form can be read whole.
        browser.client.set_window_size(1366, 768).await.context("window size")?;
        let clipped = browser
            .script(
                "var form = document.querySelector('#addForm'); var ctx = document.createElement('canvas').getContext('2d'); \
                 var cut = Array.from(form.querySelectorAll('input[placeholder], textarea[placeholder]')).filter(function (e) { \
                     var style = getComputedStyle(e); ctx.font = style.font; \
                     var room = e.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight); \
                     return e.offsetParent && ctx.measureText(e.placeholder).width > room; }).map(function (e) { return e.name; }); \
                 var hints = Array.from(form.querySelectorAll('.xj-hint')); \
                 return [cut, hints.length, hints.filter(function (h) { return !h.offsetParent || h.scrollWidth > h.clientWidth + 1; }).length];",
                vec![],
            )
            .await?;
        ensure_eq!(clipped, json!([[], 4, 0]), "placeholders cut off, hints, hints cut off or hidden");
        browser.client.set_window_size(1400, 900).await.context("window size")?;
        let note = browser
            .script("return document.querySelector('#addForm [name=glueRemark]').value;", vec![])
            .await?;
        ensure_eq!(note, json!(t.get("jobinfo_glue_remark_initial")), "the default GLUE version note");
        browser.click("#addForm .cron-gen-toggle").await?;
        let times = browser
            .until("next fire times", "var t = document.querySelector('#addForm .cron-next-times'); return t && /\\d{4}-\\d\\d-\\d\\d/.test(t.textContent) ? t.textContent : null;")
            .await?;
        ensure_eq!(times.as_str().map(|t| t.lines().count()), Some(5), "five fire times: {times}");
        let first = browser
            .script(
                "var f = document.querySelector('#addForm'); \
                 return [f.elements.schedule_conf_CRON.value, f.querySelector('.cron-expression').textContent, \
                         f.querySelector('.cron-error').offsetParent === null];",
                vec![],
            )
            .await?;
        ensure_eq!(first, json!(["0 0 0 * * ?", "0 0 0 * * ?", true]), "the builder's first state");
        // Issue 43 item 5: ticking minute 30 and hour 2 means 02:30, not also 00:00, 00:30 and 02:00; a
        // second tick in the same field adds to it.
        let tick = "var f = document.querySelector('#addForm'); \
                    f.querySelector('.cron-field[data-field=' + arguments[0] + '] .cron-value[value=\"' + arguments[1] + '\"]').click(); \
                    return f.elements.schedule_conf_CRON.value;";
        browser.script(tick, vec![json!("minute"), json!("30")]).await?;
        let daily = browser.script(tick, vec![json!("hour"), json!("2")]).await?;
        ensure_eq!(daily, json!("0 30 2 * * ?"), "one value ticked in place of the starting 0");
        let twice = browser.script(tick, vec![json!("hour"), json!("14")]).await?;
        ensure_eq!(twice, json!("0 30 2,14 * * ?"), "a second tick in a field adds to it");

        browser.fill("#addForm [name=schedule_conf_CRON]", "0 0 0 * * *").await?;
        let error = browser
            .until("the error beside the Cron field", "var e = document.querySelector('#addForm .cron-error'); return e && e.offsetParent ? e.textContent : null;")
            .await?;
        // 2.4.2's "Cron" and "invalid", then why, wholly in the console's language.
        let prefix = t.format("jobinfo_cron_unvalid_reason", &[&""]);
        ensure!(
            error.as_str().is_some_and(|e| e.starts_with(&prefix) && e.len() > prefix.len() + 10),
            "{error}"
        );
        let beside = browser
            .script("return document.querySelector('#addForm .cron-error').closest('.schedule-conf-CRON') !== null;", vec![])
            .await?;
        ensure_eq!(beside, json!(true), "the error sits in the Cron field's column");
        browser.fill("#addForm [name=schedule_conf_CRON]", "0 0 3 * * ?").await?;
        browser
            .until(
                "the error gone",
                "return document.querySelector('#addForm .cron-error').offsetParent === null;",
            )
            .await?;
        no_injected_script(&browser).await?;
        Ok(())
    })?;
    app.stop().await;
    Ok(())
}

/// Issue 25: behind nginx configured as users write it (`proxy_pass` alone: `Host` is the upstream's
/// address), the console's flows work as they do without it, the login first.
async fn behind_nginx_job_flow_and_dialogs(backend: Backend) -> TestResult {
    for (flow, name) in [("job", "browser-nginx-job-flow"), ("dialogs", "browser-nginx-dialogs")] {
        let db = TestDb::fresh(backend)?;
        let app = TestApp::start(&db, &["--xxl.job.i18n=en"]).await?;
        let nginx = Nginx::start(free_port()?, app.app.addr, &[]).await?;
        let result = match flow {
            "job" => job_flow(&app, &nginx.console, name).await,
            _ => dialogs_flow(&app, &nginx.console, name).await,
        };
        result.map_err(|e| {
            Failed::from(format!(
                "{flow} flow through nginx: {}; nginx: {}",
                e.message().unwrap_or("?"),
                nginx.error_log()
            ))
        })?;
        ensure!(
            nginx.access_log().contains("\"POST /xxl-job-admin/login HTTP/1.1\" 200"),
            "the login went through nginx"
        );
        app.stop().await;
    }
    Ok(())
}

/// A page of another origin, served by the second site: an `<img>` asking to remove the job, a
/// credentialed `fetch` asking to stop it, and a form to remove it that the test submits.
const OTHER_ORIGIN_PAGE: &str = r#"<!DOCTYPE html><html><head><title>another origin</title></head><body>
<img src="CONSOLE/jobinfo/remove?id=JOB" onload="window.imgDone = 1" onerror="window.imgDone = 1">
<form id="steal" method="post" action="CONSOLE/jobinfo/remove"><input name="id" value="JOB"></form>
<script>
fetch("CONSOLE/jobinfo/stop", { method: "POST", mode: "no-cors", credentials: "include", body: new URLSearchParams("id=JOB") })
  .catch(function () {}).then(function () { window.fetchDone = 1; });
</script></body></html>"#;

/// A console call made by the console's own page, as its buttons make them (`XJ.request`, jQuery).
async fn console_call(browser: &Browser, method: &str, path: &str, data: Value) -> Result<Value, Failed> {
    let answer = browser
        .client
        .execute_async(
            "var done = arguments[arguments.length - 1]; \
             XJ.request(arguments[0], arguments[1], { method: arguments[2] }).then(function (a) { done(a); }, function (m) { done({ failed: m }); });",
            vec![json!(path), data, json!(method)],
        )
        .await
        .context(&format!("{method} {path}"))?;
    ensure_eq!(answer["code"], json!(200), "{method} {path} from the console's page: {answer}");
    Ok(answer)
}

/// Issue 25: every kind of console action from the console's page through nginx, the GET kill that
/// xxl-job-vue3 sends included; pages of a sibling origin (another port) and of another site change
/// nothing, by `<img>`, `fetch`, form or link, and their refusal says what to configure.
async fn behind_nginx_every_action_and_other_origins(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &["--xxl.job.i18n=en"]).await?;
    let store = app.app.db.clone();
    let executor = FakeExecutor::start(Behaviour::default()).await?;
    let group = manual_group(&store, "proxied-app", &[&executor.address]).await?;
    let victim = insert(&store, &crate::support::fixtures::every_second_job(group, 3600)).await?;
    let mut shell = job(group);
    shell.glue_type = "GLUE_SHELL".into();
    shell.executor_handler = None;
    shell.glue_source = Some("#!/bin/bash\necho v0".into());
    let glue = insert(&store, &shell).await?;
    let page = OTHER_ORIGIN_PAGE.replace("JOB", &victim.to_string());
    let nginx = Nginx::start(free_port()?, app.app.addr, &[("/other", &page)]).await?;
    let refused = I18n::new("en").format("system_cross_site_refused", &[&"SENDER"]);
    let (refused_before, _) = refused.split_once("SENDER").context("the refusal names its sender")?;
    let executor_address = executor.address.clone();
    let (base, console, other) = (nginx.console.clone(), nginx.console.clone(), nginx.other);
    in_browser!(base, "browser-nginx-actions", |browser| {
        login(&browser, "admin", "123456").await?;
        browser.goto("/jobinfo").await?;
        console_call(&browser, "POST", "/jobinfo/stop", json!({ "id": victim })).await?;
        console_call(&browser, "POST", "/jobinfo/start", json!({ "id": victim })).await?;
        ensure_eq!(
            store.load_job(victim).await.context("job")?.context("victim")?.trigger_status,
            TriggerStatus::Running,
            "started"
        );
        console_call(
            &browser,
            "POST",
            "/jobcode/save",
            json!({ "id": glue, "glueSource": "#!/bin/bash\necho v1", "glueRemark": "through nginx" }),
        )
        .await?;
        let saved = store.load_job(glue).await.context("job")?.context("glue")?;
        ensure_eq!(saved.glue_source.as_deref(), Some("#!/bin/bash\necho v1"));
        console_call(
            &browser,
            "POST",
            "/jobinfo/trigger",
            json!({ "id": victim, "executorParam": "through nginx", "addressList": "" }),
        )
        .await?;
        let log_id =
            crate::support::eventually(std::time::Duration::from_secs(20), "the run's log", || async {
                let filter = xxl_job_admin::storage::LogFilter { job_id: victim, ..Default::default() };
                let (logs, _) = store.page_logs(&filter, 0, 10).await.ok()?;
                logs.into_iter().find(|l| l.trigger_code == 200).map(|l| l.id)
            })
            .await?;
        // xxl-job-vue3's kill button: GET /joblog/logKill?id=…
        console_call(&browser, "GET", "/joblog/logKill", json!({ "id": log_id })).await?;
        let kills = executor.calls_to("/kill");
        ensure_eq!(kills.len(), 1, "the executor was asked to kill the run");
        ensure_eq!(kills[0].body["jobId"], json!(victim));
        console_call(
            &browser,
            "POST",
            "/joblog/clearLog",
            json!({ "jobGroup": group, "jobId": 0, "type": 9 }),
        )
        .await?;
        let form = json!({ "appname": "nginx-app", "title": "Behind nginx", "addressType": 1, "addressList": executor_address });
        console_call(&browser, "POST", "/jobgroup/save", form).await?;
        let added = store
            .all_groups()
            .await
            .context("groups")?
            .into_iter()
            .find(|g| g.app_name == "nginx-app")
            .context("group added")?;
        console_call(&browser, "POST", "/jobgroup/remove", json!({ "id": added.id })).await?;
        console_call(
            &browser,
            "POST",
            "/user/add",
            json!({ "username": "proxied", "password": "proxied1", "role": 0 }),
        )
        .await?;
        let user = store.load_user_by_name("proxied").await.context("user")?.context("user added")?;
        console_call(&browser, "POST", "/user/remove", json!({ "id": user.id })).await?;
        console_call(&browser, "POST", "/jobinfo/remove", json!({ "id": glue })).await?;
        ensure!(store.load_job(glue).await.context("job")?.is_none(), "removed");

        // A sibling origin (another port of this host: same site, so the login cookie goes along), then
        // another site (localhost is not 127.0.0.1): nothing gets through, and the user sees why.
        let sibling = format!("http://{}/other", other);
        let other_site = format!("http://localhost:{}/other", other.port());
        for (url, sender, submit) in [
            (
                &sibling,
                format!("http://{}", other),
                "document.getElementById('steal').submit(); return true;".to_string(),
            ),
            (
                &other_site,
                "Sec-Fetch-Site: cross-site".to_string(),
                format!(
                    "location.href = {}; return true;",
                    json!(format!("{}/jobinfo/remove?id={victim}", console))
                ),
            ),
        ] {
            browser.client.goto(url).await.context(url)?;
            browser.until("the img and the fetch", "return window.imgDone && window.fetchDone;").await?;
            browser.script(&submit, vec![]).await?;
            let shown = browser
                .until("the console's answer", &format!("return location.href.startsWith({}) && document.body ? document.body.innerText : null;", json!(console)))
                .await?;
            let shown = shown.as_str().unwrap_or_default();
            ensure!(shown.contains(refused_before) && shown.contains(&sender), "from {url}: {shown}");
            ensure!(
                shown.contains("xxl.job.console.trusted-origins"),
                "the refusal says what to configure: {shown}"
            );
        }
        let kept = store.load_job(victim).await.context("job")?.context("the job survived")?;
        ensure_eq!(
            kept.trigger_status,
            TriggerStatus::Running,
            "still running: the other origins' stop did nothing"
        );

        // The session survived and the console still works through nginx; then log out.
        browser.goto(&format!("/jobinfo?jobGroup={group}")).await?;
        browser
            .until("the job list", "return document.querySelector('#job_list .job-desc') !== null;")
            .await?;
        console_call(&browser, "POST", "/logout", json!({})).await?;
        Ok(())
    })?;
    let log = nginx.access_log();
    ensure!(
        log.contains("\"GET /xxl-job-admin/joblog/logKill?id="),
        "the GET kill went through nginx: {log}"
    );
    app.stop().await;
    Ok(())
}

/// Jobs as code in the console: the job page's upload refuses a file that is neither .toml nor .json,
/// plans a document (nothing written), applies that plan only after a confirmation and says so, and lists
/// the new job; the export buttons download the executors as a document.
async fn jobs_as_code_export_and_upload(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &["--xxl.job.i18n=en"]).await?;
    let t = I18n::new("en");
    let dir = tempfile::tempdir().context("temp dir")?;
    let file = dir.path().join("reports.toml");
    let document = "[[executor]]\napp_name = \"xxl-job-executor-sample\"\ntitle = \"示例执行器\"\n\n[[executor.job]]\n\
                    description = \"uploaded job\"\nauthor = \"ops\"\nschedule_type = \"NONE\"\nroute_strategy = \"FIRST\"\n\
                    handler = \"uploaded\"\nblock_strategy = \"SERIAL_EXECUTION\"\n";
    std::fs::write(&file, document).context("write")?;
    let path = file.display().to_string();
    let db_handle = app.app.db.clone();
    in_browser!(app.base, "browser-jobs-as-code", |browser| {
        login(&browser, "admin", "123456").await?;
        browser.goto("/jobinfo").await?;
        // The export button's target, fetched by the page itself with its session.
        let exported = browser
            .script(
                "return fetch(XJ.url('/jobinfo/export?jobGroup=1')).then(function (r) { return r.text(); });",
                vec![],
            )
            .await?;
        ensure!(
            exported.as_str().is_some_and(|t| t.contains("app_name = \"xxl-job-executor-sample\"")),
            "{exported}"
        );
        browser.click("#jobApply").await?;
        browser.visible("#applyModal").await?;
        let text_file = dir.path().join("reports.txt");
        std::fs::write(&text_file, document).context("write")?;
        let chooser = browser.visible("#applyForm [name=document]").await?;
        chooser.send_keys(&text_file.display().to_string()).await.context("choose the .txt file")?;
        browser.click("#applySubmit").await?;
        let refusal = t.get("code_unknown_format").replace("{file}", "reports.txt");
        browser
            .until("the refusal of a .txt file", &format!("var d = document.querySelector('.layui-layer-content'); return d && d.textContent === {} ? true : null;", json!(refusal)))
            .await?;
        browser
            .script("layer.closeAll(); jQuery('#applyForm [name=document]').val(''); return true;", vec![])
            .await?;
        browser
            .visible("#applyForm [name=document]")
            .await?
            .send_keys(&path)
            .await
            .context("choose the file")?;
        browser.click("#applySubmit").await?;
        let plan =
            browser.until("the plan", "var t = jQuery('#applyPlan').text(); return t ? t : null;").await?;
        ensure!(
            plan.as_str()
                .is_some_and(|p| p.contains("+ job xxl-job-executor-sample/uploaded job/uploaded: create")),
            "{plan}"
        );
        ensure_eq!(db_handle.jobs_by_group(1).await.context("jobs")?.len(), 1, "a plan writes nothing");
        let outcome = browser.script("return jQuery('#applyOutcome').text();", vec![]).await?;
        ensure_eq!(outcome, json!(t.get("code_plan_title")), "the plan says nothing is written yet");
        // Issue 43 item 5: the plan's own button applies it, and only after a confirmation.
        browser.click("#applyConfirm").await?;
        let question = t.get("code_apply_confirm").replace("{count}", "1");
        browser
            .until("the confirmation", &format!("var d = document.querySelector('.layui-layer-content'); return d && d.textContent === {} ? true : null;", json!(question)))
            .await?;
        ensure_eq!(db_handle.jobs_by_group(1).await.context("jobs")?.len(), 1, "nothing before the answer");
        browser.click(".layui-layer-btn0").await?;
        let applied = t.get("code_applied").replace("{count}", "1");
        browser
            .until(
                "the applied result",
                &format!("return jQuery('#applyOutcome').text() === {} ? true : null;", json!(applied)),
            )
            .await?;
        let after = browser.script("return [jQuery('#applyPlan').text().indexOf('1 change(s)') >= 0, jQuery('#applyConfirm').prop('hidden')];", vec![]).await?;
        ensure_eq!(after, json!([true, true]), "the applied plan shown, nothing more to apply");
        browser
            .until(
                "the new job in the list",
                "return jQuery('#job_list').text().indexOf('uploaded job') >= 0 ? true : null;",
            )
            .await?;
        ensure_eq!(db_handle.jobs_by_group(1).await.context("jobs")?.len(), 2);
        no_injected_script(&browser).await?;
        browser.goto("/jobgroup").await?;
        browser.visible("#jobgroupExport").await?;
        Ok(())
    })?;
    app.stop().await;
    Ok(())
}
