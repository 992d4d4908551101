//! The REST API over HTTP: bearer tokens (issued in the console, expiring, revoked by a password or role
//! change, never a cookie), every endpoint with the console's rules and messages, a restricted user's
//! refusals, the OpenAPI document, and the README's curl examples.

use crate::support::console::ConsoleClient;
use crate::support::fixtures::{insert, job, log, manual_group};
use crate::support::rest::{refusal, RestClient};
use crate::support::{
    eventually, now_ms, Backend, Behaviour, Context, FakeExecutor, TestApp, TestDb, LOG_CONTENT,
};
use crate::{cases, ensure, ensure_eq, Case, TestResult, ALL};
use serde_json::{json, Value};
use std::time::Duration;
use xxl_job_admin::domain::codes::TriggerStatus;
use xxl_job_admin::i18n::I18n;

pub fn cases() -> Vec<Case> {
    cases! {
        "openapi" {
            ALL => tokens_authenticate_expire_and_are_revoked,
            ALL => job_endpoints,
            ALL => log_and_group_endpoints,
            ALL => restricted_token_is_confined_to_its_groups,
            ALL => the_edge_refuses_what_the_contract_forbids,
            ALL => app_names_keep_to_the_documented_pattern,
            ALL => writes_answer_where_they_went,
            ALL => document_and_readme_examples needs [Curl],
        }
    }
}

fn msg(keys: &[&str]) -> String {
    let t = I18n::new("en");
    keys.iter().map(|k| t.get(k)).collect()
}

async fn console(
    app: &TestApp,
    username: &str,
    password: &str,
) -> Result<ConsoleClient, libtest_mimic::Failed> {
    let mut client = ConsoleClient::new(&app.base);
    let reply = client.login(username, password, false).await?;
    ensure_eq!(reply["code"], 200, "login of {username}: {reply}");
    Ok(client)
}

/// A role-0 user allowed `groups`, logged in to the console.
async fn restricted_user(
    app: &TestApp,
    admin: &ConsoleClient,
    name: &str,
    groups: &str,
) -> Result<ConsoleClient, libtest_mimic::Failed> {
    let added = admin
        .post(
            "/user/add",
            &[("username", name), ("password", "secret-1"), ("role", "0"), ("permission", groups)],
        )
        .await?;
    ensure_eq!(added["code"], 200, "{added}");
    console(app, name, "secret-1").await
}

fn local_time(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .expect("instant")
        .with_timezone(&chrono::Local)
        .format("%Y-%m-%d %H:%M:%S")
        .to_string()
}

fn unauthorized(reply: &crate::support::rest::RestReply) -> Result<String, libtest_mimic::Failed> {
    ensure_eq!(reply.status, 401, "{}", reply.body);
    ensure_eq!(reply.body["status"], 401);
    ensure_eq!(reply.body["error"], "Unauthorized");
    ensure_eq!(reply.www_authenticate.as_deref(), Some("Bearer realm=\"xxl-job-admin\""));
    Ok(reply.body["message"].as_str().unwrap_or("").to_string())
}

async fn tokens_authenticate_expire_and_are_revoked(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let admin = console(&app, "admin", "123456").await?;
    let api = RestClient::issued_by(&app.base, &admin, None).await?;
    let groups = api.expect(200, api.get("/groups")).await?;
    ensure_eq!(groups["total"], 1, "{groups}");
    let token = api.token.clone().context("token")?;
    ensure!(token.starts_with("xxlapi1."), "{token}");

    // Missing, foreign-scheme, malformed and tampered tokens; a console cookie is no credential here.
    let anonymous = RestClient::new(&app.base, None);
    let message = unauthorized(&anonymous.get("/jobs").await?)?;
    ensure!(message.contains("Bearer"), "{message}");
    let basic = anonymous
        .send(reqwest::Method::GET, "/jobs", None, &[("Authorization", "Basic YWRtaW46MTIzNDU2")])
        .await?;
    unauthorized(&basic)?;
    let cookie = admin.cookie.clone().context("cookie")?;
    unauthorized(&anonymous.send(reqwest::Method::GET, "/jobs", None, &[("Cookie", &cookie)]).await?)?;
    let session_value = cookie.split_once('=').context("cookie value")?.1;
    unauthorized(&RestClient::new(&app.base, Some(session_value)).get("/jobs").await?)?;
    let mut tampered = token.clone();
    let last = tampered.pop().context("char")?;
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    let message = unauthorized(&RestClient::new(&app.base, Some(&tampered)).get("/jobs").await?)?;
    ensure!(message.contains("signature") || message.contains("not an API token"), "{message}");
    unauthorized(&RestClient::new(&app.base, Some("garbage")).get("/jobs").await?)?;
    // The scheme is case-insensitive.
    let lower = anonymous
        .send(reqwest::Method::GET, "/groups", None, &[("Authorization", &format!("bearer {token}"))])
        .await?;
    ensure_eq!(lower.status, 200);

    // Expiry: in the past is refused, soon is honoured.
    let past = admin.post("/user/apiToken", &[("expireTime", &local_time(now_ms() - 60_000))]).await?;
    ensure_eq!(past, json!({"code": 500, "msg": msg(&["api_token_expire_unvalid"]), "content": null}));
    let garbled = admin.post("/user/apiToken", &[("expireTime", "tomorrow")]).await?;
    ensure_eq!(garbled["msg"], msg(&["api_token_expire_unvalid"]));
    // Second-precise: the token ends at the start of the second named, 3 to 4 s from now.
    let expiry = local_time(now_ms() + 4_000);
    let issued = admin.post("/user/apiToken", &[("expireTime", &expiry)]).await?;
    ensure_eq!(issued["content"]["expireTime"], expiry.as_str());
    let brief = RestClient::new(&app.base, issued["content"]["token"].as_str());
    ensure_eq!(brief.get("/groups").await?.status, 200);
    let ends = crate::support::fixtures::local_ms(crate::support::fixtures::local(&expiry));
    tokio::time::sleep(Duration::from_millis((ends - now_ms()).max(0) as u64 + 200)).await;
    let message = unauthorized(&brief.get("/groups").await?)?;
    ensure!(message.contains("expired"), "{message}");
    let get = admin.request(reqwest::Method::GET, "/user/apiToken", &[], &[]).await?;
    ensure_eq!(get.status, 405, "tokens are issued by POST only");
    let anonymous_console =
        ConsoleClient::new(&app.base).request(reqwest::Method::POST, "/user/apiToken", &[], &[]).await?;
    ensure_eq!(anonymous_console.status, 302, "issuing needs a login");

    // A password change revokes; so does a role change; a permission change applies live.
    let ops = restricted_user(&app, &admin, "ops-user", "1").await?;
    let ops_api = RestClient::issued_by(&app.base, &ops, None).await?;
    ensure_eq!(ops_api.expect(200, ops_api.get("/groups")).await?["total"], 1);
    let changed =
        ops.post("/user/updatePwd", &[("oldPassword", "secret-1"), ("password", "secret-2")]).await?;
    ensure_eq!(changed["code"], 200);
    let message = unauthorized(&ops_api.get("/groups").await?)?;
    ensure!(message.contains("revoked"), "{message}");
    let ops = console(&app, "ops-user", "secret-2").await?;
    let ops_api = RestClient::issued_by(&app.base, &ops, None).await?;
    let ops_row = app.app.db.load_user_by_name("ops-user").await.context("load")?.context("ops-user")?;
    let id = ops_row.id.to_string();
    let granted = admin
        .post("/user/update", &[("id", &id), ("username", "ops-user"), ("role", "0"), ("permission", "")])
        .await?;
    ensure_eq!(granted["code"], 200);
    ensure_eq!(ops_api.expect(200, ops_api.get("/groups")).await?["total"], 0, "rights are read live");
    let promoted = admin
        .post("/user/update", &[("id", &id), ("username", "ops-user"), ("role", "1"), ("permission", "")])
        .await?;
    ensure_eq!(promoted["code"], 200);
    unauthorized(&ops_api.get("/groups").await?)?;
    let removed = admin.post("/user/remove", &[("id", &id)]).await?;
    ensure_eq!(removed["code"], 200);
    unauthorized(&ops_api.get("/groups").await?)?;
    ensure_eq!(api.expect(200, api.get("/groups")).await?["total"], 1, "the admin's own token is untouched");
    app.stop().await;
    Ok(())
}

fn new_job(group: i32) -> Value {
    json!({
        "jobGroup": group, "jobDesc": "api job", "author": "api", "alarmEmail": "",
        "scheduleType": "NONE", "misfireStrategy": "DO_NOTHING", "executorRouteStrategy": "FIRST",
        "executorHandler": "demoJobHandler", "executorParam": "own", "executorBlockStrategy": "SERIAL_EXECUTION",
        "glueType": "BEAN"
    })
}

async fn job_endpoints(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let executor = FakeExecutor::start(Behaviour::default()).await?;
    let group = manual_group(&app.app.db, "api-app", &[&executor.address]).await?;
    let admin = console(&app, "admin", "123456").await?;
    let api = RestClient::issued_by(&app.base, &admin, None).await?;

    // Create: the console's checks and messages, then a stopped job.
    let mut blank = new_job(group);
    blank["jobDesc"] = json!(" ");
    let refused = api.expect(400, api.post("/jobs", blank)).await?;
    ensure_eq!(refused, refusal(400, "Bad Request", &msg(&["system_please_input", "jobinfo_field_jobdesc"])));
    let mut cron = new_job(group);
    cron["scheduleType"] = json!("CRON");
    cron["scheduleConf"] = json!("not cron");
    ensure_eq!(
        api.expect(400, api.post("/jobs", cron)).await?["message"],
        "Cron is invalid: names are only allowed in the month and day-of-week fields (in the second field \
         'NOT', at column 1)"
    );
    // A well-made form naming a group that is not there: not found, with the console's message.
    ensure_eq!(
        api.expect(404, api.post("/jobs", new_job(999))).await?["message"],
        msg(&["system_please_choose", "jobinfo_field_jobgroup"])
    );
    let malformed =
        api.send(reqwest::Method::POST, "/jobs", None, &[("Content-Type", "application/json")]).await?;
    ensure_eq!(malformed.status, 400, "an empty body is malformed JSON");
    let mut wrong_type = new_job(group);
    wrong_type["executorTimeout"] = json!("soon");
    ensure_eq!(api.expect(400, api.post("/jobs", wrong_type)).await?["status"], 400);

    let created = api.expect(201, api.post("/jobs", new_job(group))).await?;
    let id = created["id"].as_i64().context("id")?;
    ensure_eq!(
        (created["jobGroup"].clone(), created["jobDesc"].clone(), created["triggerStatus"].clone()),
        (json!(group), json!("api job"), json!(0))
    );
    ensure_eq!(created["glueType"], "BEAN");
    ensure_eq!(api.expect(200, api.get(&format!("/jobs/{id}"))).await?, created);
    let stored = app.app.db.load_job(id as i32).await.context("load")?.context("job")?;
    ensure_eq!(stored.executor_param.as_deref(), Some("own"));

    // List and filters.
    let listed = api.expect(200, api.get(&format!("/jobs?jobGroup={group}"))).await?;
    ensure_eq!((listed["total"].clone(), listed["items"][0]["id"].clone()), (json!(1), json!(id)));
    ensure_eq!(api.expect(200, api.get("/jobs")).await?["total"], 2, "the sample job and ours");
    ensure_eq!(api.expect(200, api.get("/jobs?jobDesc=api%20j&triggerStatus=0")).await?["total"], 1);
    ensure_eq!(api.expect(200, api.get("/jobs?author=nobody")).await?["total"], 0);
    let paged = api.expect(200, api.get("/jobs?limit=1&offset=1")).await?;
    ensure_eq!((paged["total"].clone(), paged["items"].as_array().map(Vec::len)), (json!(2), Some(1)));
    ensure_eq!(
        api.expect(400, api.get("/jobs?limit=0")).await?["message"],
        "limit must be between 1 and 1000"
    );
    ensure_eq!(
        api.expect(400, api.get("/jobs?jobGrup=1")).await?["status"],
        400,
        "unknown parameters are refused"
    );
    ensure_eq!(api.expect(400, api.get("/jobs/abc")).await?["status"], 400);
    ensure_eq!(
        api.expect(404, api.get("/jobs/9999")).await?,
        refusal(404, "Not Found", &msg(&["jobinfo_field_id", "system_not_found"]))
    );
    ensure_eq!(api.expect(404, api.get("/nothing-here")).await?["status"], 404);

    // Update, then schedule previews, start and stop.
    let mut change = new_job(group);
    change["jobDesc"] = json!("api job, changed");
    change["scheduleType"] = json!("CRON");
    change["scheduleConf"] = json!("0 0 3 * * ?");
    change["id"] = json!(12345);
    let updated = api.expect(200, api.put(&format!("/jobs/{id}"), change.clone())).await?;
    ensure_eq!(
        (updated["id"].clone(), updated["jobDesc"].clone(), updated["scheduleConf"].clone()),
        (json!(id), json!("api job, changed"), json!("0 0 3 * * ?"))
    );
    ensure_eq!(
        api.expect(404, api.put("/jobs/9999", change.clone())).await?["message"],
        msg(&["jobinfo_field_id", "system_not_found"])
    );
    // The stored job is a BEAN job: a change without its JobHandler conflicts with it, whatever the body says.
    let mut unhandled = change.clone();
    unhandled["executorHandler"] = json!("");
    unhandled["glueType"] = json!("GLUE_SHELL");
    ensure_eq!(
        api.expect(409, api.put(&format!("/jobs/{id}"), unhandled)).await?["message"],
        format!("{}JobHandler", msg(&["system_please_input"]))
    );
    let mut read = api.expect(200, api.get(&format!("/jobs/{id}"))).await?;
    read["jobDesc"] = json!("sent back");
    ensure_eq!(
        api.expect(200, api.put(&format!("/jobs/{id}"), read)).await?["jobDesc"],
        "sent back",
        "a job as read is a valid form"
    );
    let times = api.expect(200, api.get(&format!("/jobs/{id}/next-fire-times?count=3"))).await?;
    let times = times["times"].as_array().context("times")?.clone();
    ensure_eq!(times.len(), 3);
    ensure!(times.iter().all(|t| t.as_str().is_some_and(|t| t.ends_with(" 03:00:00"))), "{times:?}");
    ensure_eq!(
        api.expect(400, api.get(&format!("/jobs/{id}/next-fire-times?count=0"))).await?["status"],
        400
    );
    let started = api.expect(200, api.post(&format!("/jobs/{id}/start"), Value::Null)).await?;
    ensure_eq!(started["triggerStatus"], 1);
    ensure!(started["triggerNextTime"].as_i64().is_some_and(|t| t > now_ms()), "{started}");
    let stopped = api.expect(200, api.post(&format!("/jobs/{id}/stop"), Value::Null)).await?;
    ensure_eq!((stopped["triggerStatus"].clone(), stopped["triggerNextTime"].clone()), (json!(0), json!(0)));
    let unscheduled = api.expect(201, api.post("/jobs", new_job(group))).await?["id"].clone();
    let refused = api.expect(409, api.post(&format!("/jobs/{unscheduled}/start"), Value::Null)).await?;
    ensure_eq!(
        refused["message"],
        msg(&["schedule_type_none_limit_start"]),
        "a job without a schedule cannot start"
    );

    // Run once: with a parameter, then with the job's own; only the group's addresses.
    ensure!(
        api.expect(202, api.post(&format!("/jobs/{id}/trigger"), json!({"executorParam": "api=1"}))).await?
            ["logId"]
            .is_i64(),
        "a log id"
    );
    ensure!(
        api.expect(202, api.post(&format!("/jobs/{id}/trigger"), json!({"addressList": executor.address})))
            .await?["logId"]
            .is_i64(),
        "a log id"
    );
    let runs = eventually(Duration::from_secs(10), "two runs", || async {
        let runs = executor.calls_to("/run");
        (runs.len() >= 2).then_some(runs)
    })
    .await?;
    let mut params: Vec<String> =
        runs.iter().map(|r| r.body["executorParams"].as_str().unwrap_or("?").to_string()).collect();
    params.sort();
    ensure_eq!(params, vec!["api=1".to_string(), "own".to_string()]);
    let stranger = api
        .expect(
            404,
            api.post(&format!("/jobs/{id}/trigger"), json!({"addressList": "http://10.9.9.9:9999/"})),
        )
        .await?;
    ensure_eq!(
        stranger["message"],
        format!("{}: http://10.9.9.9:9999/", msg(&["jobgroup_field_registryList", "system_unvalid"]))
    );
    ensure_eq!(
        api.expect(400, api.post(&format!("/jobs/{id}/trigger"), json!({"param": "x"}))).await?["status"],
        400,
        "unknown fields"
    );
    ensure_eq!(
        api.expect(404, api.post("/jobs/9999/trigger", json!({}))).await?["message"],
        msg(&["jobinfo_glue_jobid_unvalid"])
    );

    // Delete: the job, its logs and GLUE history go; then it is unknown.
    let logs_before = api.expect(200, api.get(&format!("/logs?jobGroup={group}&jobId={id}"))).await?;
    ensure!(logs_before["total"].as_i64().is_some_and(|n| n >= 2), "{logs_before}");
    ensure_eq!(api.expect(204, api.delete(&format!("/jobs/{id}"))).await?, Value::Null);
    ensure_eq!(api.expect(404, api.get(&format!("/jobs/{id}"))).await?["status"], 404);
    ensure_eq!(
        api.expect(404, api.delete(&format!("/jobs/{id}"))).await?["message"],
        msg(&["jobinfo_field_id", "system_not_found"])
    );
    ensure_eq!(api.expect(200, api.get(&format!("/logs?jobGroup={group}&jobId={id}"))).await?["total"], 0);
    app.stop().await;
    Ok(())
}

async fn log_and_group_endpoints(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let executor = FakeExecutor::start(Behaviour::default()).await?;
    let group = manual_group(store, "log-app", &[&executor.address]).await?;
    let job_id = insert(store, &job(group)).await?;
    let at = now_ms() / 1000 * 1000 - 60_000;
    let finished = log(store, group, job_id, at, 200, 200, &executor.address).await?;
    let running = log(store, group, job_id, at + 1000, 200, 0, &executor.address).await?;
    let failed = log(store, group, job_id, at + 2000, 500, 0, &executor.address).await?;
    let admin = console(&app, "admin", "123456").await?;
    let api = RestClient::issued_by(&app.base, &admin, None).await?;

    // Groups.
    let groups = api.expect(200, api.get("/groups")).await?;
    ensure_eq!(groups["total"], 2);
    let ours = api.expect(200, api.get("/groups?appname=log-")).await?;
    ensure_eq!((ours["total"].clone(), ours["items"][0]["appname"].clone()), (json!(1), json!("log-app")));
    ensure_eq!(ours["items"][0]["registryList"], json!([executor.address]));
    let one = api.expect(200, api.get(&format!("/groups/{group}"))).await?;
    ensure_eq!(one, ours["items"][0]);
    ensure_eq!(
        api.expect(404, api.get("/groups/999")).await?["message"],
        msg(&["jobinfo_field_jobgroup", "system_not_found"])
    );
    let short = api
        .expect(400, api.post("/groups", json!({"appname": "ab", "title": "T", "addressType": 0})))
        .await?;
    ensure_eq!(short["message"], msg(&["jobgroup_field_appname_length"]));
    let manual = json!({"appname": "new-app", "title": "New", "addressType": 1, "addressList": "http://127.0.0.1:9999/"});
    let created = api.expect(201, api.post("/groups", manual)).await?;
    let new_id = created["id"].as_i64().context("id")?;
    ensure_eq!(
        (created["appname"].clone(), created["registryList"].clone()),
        (json!("new-app"), json!(["http://127.0.0.1:9999/"]))
    );
    let retitled = json!({"appname": "new-app", "title": "Renamed", "addressType": 1, "addressList": "http://127.0.0.1:9998/"});
    let updated = api.expect(200, api.put(&format!("/groups/{new_id}"), retitled.clone())).await?;
    ensure_eq!(
        (updated["id"].clone(), updated["title"].clone(), updated["addressList"].clone()),
        (json!(new_id), json!("Renamed"), json!("http://127.0.0.1:9998/"))
    );
    ensure_eq!(api.expect(404, api.put("/groups/999", retitled)).await?["status"], 404);
    ensure_eq!(
        api.expect(409, api.delete(&format!("/groups/{group}"))).await?["message"],
        msg(&["jobgroup_del_limit_0"])
    );
    ensure_eq!(api.expect(204, api.delete(&format!("/groups/{new_id}"))).await?, Value::Null);
    ensure_eq!(api.expect(404, api.delete(&format!("/groups/{new_id}"))).await?["status"], 404);

    // Log list, filters, one log.
    let all = api.expect(200, api.get(&format!("/logs?jobGroup={group}"))).await?;
    ensure_eq!(all["total"], 3);
    ensure_eq!(all["items"][0]["id"], failed, "newest first");
    let by_status = |status: &'static str| {
        let api = &api;
        async move {
            api.expect(200, api.get(&format!("/logs?jobGroup={group}&jobId={job_id}&status={status}"))).await
        }
    };
    ensure_eq!(by_status("running").await?["items"][0]["id"], running);
    ensure_eq!(by_status("success").await?["items"][0]["id"], finished);
    ensure_eq!(by_status("failure").await?["items"][0]["id"], failed);
    ensure_eq!(api.expect(400, api.get("/logs?status=odd")).await?["status"], 400);
    let window = format!(
        "/logs?jobGroup={group}&from={}&to={}",
        local_time(at + 1000).replace(' ', "%20"),
        local_time(at + 1000).replace(' ', "%20")
    );
    let windowed = api.expect(200, api.get(&window)).await?;
    ensure_eq!((windowed["total"].clone(), windowed["items"][0]["id"].clone()), (json!(1), json!(running)));
    let bad_time = api.expect(400, api.get("/logs?from=yesterday")).await?;
    ensure!(bad_time["message"].as_str().is_some_and(|m| m.contains("yyyy-MM-dd HH:mm:ss")), "{bad_time}");
    ensure_eq!(api.expect(200, api.get("/logs")).await?["total"], 3, "an administrator may list every group");
    let one = api.expect(200, api.get(&format!("/logs/{finished}"))).await?;
    ensure_eq!(
        (one["id"].clone(), one["handleCode"].clone(), one["executorAddress"].clone()),
        (json!(finished), json!(200), json!(executor.address))
    );
    ensure_eq!(api.expect(404, api.get("/logs/99999")).await?["message"], msg(&["joblog_logid_unvalid"]));

    // The rolling log comes raw (the console escapes it for its page).
    let lines = api.expect(200, api.get(&format!("/logs/{finished}/rolling?fromLine=1"))).await?;
    ensure_eq!(lines, json!({"fromLineNum": 1, "toLineNum": 2, "logContent": LOG_CONTENT, "end": false}));
    let tail = api.expect(200, api.get(&format!("/logs/{finished}/rolling?fromLine=3"))).await?;
    ensure_eq!(tail["end"], true);
    let asked = executor.calls_to("/log");
    ensure_eq!(
        (asked.len(), asked[0].body["logId"].clone(), asked[0].body["logDateTim"].clone()),
        (2, json!(finished), json!(at))
    );

    // Kill: a running log; a failed trigger has nothing to kill; an unreachable executor is a 502.
    let killed = api.expect(200, api.post(&format!("/logs/{running}/kill"), Value::Null)).await?;
    ensure_eq!(killed, json!({"message": null}));
    ensure_eq!(executor.calls_to("/kill")[0].body["jobId"], job_id);
    let row = store.load_log(running).await.context("load")?.context("log")?;
    let by_hand = format!("{}:", msg(&["joblog_kill_log_byman"]));
    ensure_eq!((row.handle_code, row.handle_msg.as_deref()), (500, Some(by_hand.as_str())));
    ensure_eq!(
        api.expect(409, api.post(&format!("/logs/{failed}/kill"), Value::Null)).await?["message"],
        msg(&["joblog_kill_log_limit"])
    );
    // A failed trigger has no log on its executor, and will have none; one not triggered yet may.
    let ended = json!({"fromLineNum": 1, "toLineNum": 0, "logContent": null, "end": true});
    ensure_eq!(api.expect(200, api.get(&format!("/logs/{failed}/rolling"))).await?, ended);
    let queued = log(store, group, job_id, at, 0, 0, "").await?;
    ensure_eq!(api.expect(200, api.get(&format!("/logs/{queued}/rolling"))).await?["end"], false);
    let gone = log(store, group, job_id, at, 200, 0, "http://127.0.0.1:1/").await?;
    ensure_eq!(api.expect(502, api.get(&format!("/logs/{gone}/rolling"))).await?["status"], 502);
    ensure_eq!(api.expect(502, api.post(&format!("/logs/{gone}/kill"), Value::Null)).await?["status"], 502);
    app.stop().await;
    Ok(())
}

async fn restricted_token_is_confined_to_its_groups(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let executor = FakeExecutor::start(Behaviour::default()).await?;
    let mine = manual_group(store, "mine-app", &[&executor.address]).await?;
    let other = manual_group(store, "other-app", &[&executor.address]).await?;
    let my_job = insert(store, &job(mine)).await?;
    let mut running = job(other);
    running.schedule_type = "CRON".into();
    running.schedule_conf = Some("0 0 3 * * ?".into());
    running.trigger_status = TriggerStatus::Running;
    running.trigger_next_time = now_ms() + 3_600_000;
    let other_job = insert(store, &running).await?;
    let at = now_ms() - 60_000;
    let my_log = log(store, mine, my_job, at, 200, 0, &executor.address).await?;
    let other_log = log(store, other, other_job, at, 200, 0, &executor.address).await?;
    let admin = console(&app, "admin", "123456").await?;
    let user = restricted_user(&app, &admin, "restricted", &mine.to_string()).await?;
    let api = RestClient::issued_by(&app.base, &user, None).await?;
    let limit = format!("{}[username=restricted]", msg(&["system_permission_limit"]));
    let forbidden = refusal(403, "Forbidden", &limit);

    // What the user may see.
    let groups = api.expect(200, api.get("/groups")).await?;
    ensure_eq!((groups["total"].clone(), groups["items"][0]["id"].clone()), (json!(1), json!(mine)));
    let jobs = api.expect(200, api.get("/jobs")).await?;
    ensure_eq!((jobs["total"].clone(), jobs["items"][0]["id"].clone()), (json!(1), json!(my_job)));
    ensure_eq!(api.expect(200, api.get(&format!("/logs?jobGroup={mine}"))).await?["total"], 1);
    ensure_eq!(api.expect(200, api.get(&format!("/jobs/{my_job}"))).await?["id"], my_job);

    // Every endpoint refuses the other group; executors are managed by administrators only.
    let admins_only = refusal(403, "Forbidden", &msg(&["system_permission_limit"]));
    let group_form = json!({"appname": "mine-app", "title": "Mine", "addressType": 0});
    ensure_eq!(api.expect(403, api.post("/groups", group_form.clone())).await?, admins_only);
    ensure_eq!(api.expect(403, api.put(&format!("/groups/{mine}"), group_form)).await?, admins_only);
    ensure_eq!(api.expect(403, api.delete(&format!("/groups/{mine}"))).await?, admins_only);
    let mut body = new_job(other);
    ensure_eq!(api.expect(403, api.get(&format!("/groups/{other}"))).await?, forbidden);
    ensure_eq!(api.expect(403, api.get(&format!("/jobs?jobGroup={other}"))).await?, forbidden);
    ensure_eq!(api.expect(403, api.post("/jobs", body.clone())).await?, forbidden);
    ensure_eq!(api.expect(403, api.get(&format!("/jobs/{other_job}"))).await?, forbidden);
    ensure_eq!(api.expect(403, api.put(&format!("/jobs/{other_job}"), body.clone())).await?, forbidden);
    body["jobGroup"] = json!(mine);
    ensure_eq!(
        api.expect(403, api.put(&format!("/jobs/{other_job}"), body.clone())).await?,
        forbidden,
        "a job cannot be pulled out of a foreign group"
    );
    body["childJobId"] = json!(other_job.to_string());
    let child = api.expect(403, api.post("/jobs", body)).await?;
    ensure_eq!(
        child["message"],
        format!("{}({other_job}){}", msg(&["jobinfo_field_childJobId"]), msg(&["system_permission_limit"]))
    );
    ensure_eq!(api.expect(403, api.delete(&format!("/jobs/{other_job}"))).await?, forbidden);
    ensure_eq!(api.expect(403, api.post(&format!("/jobs/{other_job}/start"), Value::Null)).await?, forbidden);
    ensure_eq!(api.expect(403, api.post(&format!("/jobs/{other_job}/stop"), Value::Null)).await?, forbidden);
    let trigger = api.expect(403, api.post(&format!("/jobs/{other_job}/trigger"), json!({}))).await?;
    ensure_eq!(
        trigger,
        refusal(403, "Forbidden", &msg(&["system_permission_limit"])),
        "2.4.2's trigger message names no user"
    );
    ensure_eq!(api.expect(403, api.get(&format!("/jobs/{other_job}/next-fire-times"))).await?, forbidden);
    let every_group =
        refusal(403, "Forbidden", &format!("{}[username=restricted]", msg(&["system_permission_limit"])));
    ensure_eq!(
        api.expect(403, api.get("/logs")).await?,
        every_group,
        "every group's logs are for administrators"
    );
    ensure_eq!(api.expect(403, api.get(&format!("/logs?jobGroup={other}"))).await?, forbidden);
    ensure_eq!(
        api.expect(403, api.get(&format!("/logs?jobGroup={mine}&jobId={other_job}"))).await?,
        forbidden
    );
    ensure_eq!(api.expect(403, api.get(&format!("/logs/{other_log}"))).await?, forbidden);
    ensure_eq!(api.expect(403, api.get(&format!("/logs/{other_log}/rolling"))).await?, forbidden);
    ensure_eq!(api.expect(403, api.post(&format!("/logs/{other_log}/kill"), Value::Null)).await?, forbidden);

    // Nothing of the other group changed or ran.
    let untouched = store.load_job(other_job).await.context("load")?.context("job")?;
    ensure_eq!(
        (untouched.trigger_status, untouched.job_group, untouched.job_desc.as_str()),
        (TriggerStatus::Running, other, "integration test job")
    );
    ensure!(
        executor.calls_to("/run").is_empty()
            && executor.calls_to("/kill").is_empty()
            && executor.calls_to("/log").is_empty(),
        "no executor call"
    );
    ensure_eq!(store.load_log(other_log).await.context("load")?.context("log")?.handle_code, 0);
    ensure_eq!(api.expect(200, api.get(&format!("/logs/{my_log}"))).await?["id"], my_log);
    app.stop().await;
    Ok(())
}

/// The documented REST API example (docs/rest-api.md): the shell block after the `<!-- openapi-example -->` marker.
fn readme_example() -> Result<String, libtest_mimic::Failed> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/rest-api.md"))
        .context("docs/rest-api.md")?;
    let (_, after) =
        readme.split_once("<!-- openapi-example -->").context("docs/rest-api.md's openapi-example marker")?;
    let block = after.split_once("```sh\n").context("a sh block")?.1;
    Ok(block.split_once("```").context("the block's end")?.0.to_string())
}

async fn document_and_readme_examples(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let anonymous = RestClient::new(&app.base, None);
    let doc = anonymous.expect(200, anonymous.get("/openapi.json")).await?;
    ensure!(doc["openapi"].as_str().is_some_and(|v| v.starts_with("3.")), "{}", doc["openapi"]);
    ensure_eq!(doc["servers"][0]["url"], "/xxl-job-admin/openapi/v1");
    ensure_eq!(doc["components"]["securitySchemes"]["bearer"], json!({"type": "http", "scheme": "bearer"}));
    let paths = doc["paths"].as_object().context("paths")?;
    let operations: usize = paths.values().map(|p| p.as_object().map_or(0, |o| o.len())).sum();
    ensure_eq!(operations, 40, "every operation is documented: {:?}", paths.keys().collect::<Vec<_>>());
    ensure!(
        doc["components"]["schemas"]["JobForm"]["properties"]["jobDesc"].is_object(),
        "the job form's schema"
    );

    // The README's curl commands, run as written against this admin, with a token of its admin.
    let admin = console(&app, "admin", "123456").await?;
    let token = RestClient::issued_by(&app.base, &admin, None).await?.token.context("token")?;
    let script: String = readme_example()?
        .lines()
        .filter(|line| !line.starts_with("XXL=") && !line.starts_with("TOKEN="))
        .collect::<Vec<_>>()
        .join("\n");
    let base = format!("{}/openapi/v1", app.base);
    // The admin serves the script's requests on this runtime: the script runs on a blocking thread.
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new("sh").arg("-ec").arg(&script).env("XXL", base).env("TOKEN", token).output()
    })
    .await
    .context("join")?
    .context("sh (with curl)")?;
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    ensure!(
        output.status.success(),
        "README example failed: {}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let created = app.app.db.load_job(2).await.context("load")?.context("the README's job")?;
    ensure_eq!(
        (created.job_desc.as_str(), created.trigger_status, created.schedule_conf.as_deref()),
        ("nightly report", TriggerStatus::Running, Some("0 0 2 * * ?"))
    );
    ensure!(stdout.contains("\"jobDesc\":\"nightly report\""), "{stdout}");
    let manual = eventually(Duration::from_secs(10), "the README's manual run", || async {
        let (logs, _) = app
            .app
            .db
            .page_logs(&xxl_job_admin::storage::LogFilter { job_id: 2, ..Default::default() }, 0, 10)
            .await
            .ok()?;
        logs.into_iter().find(|l| l.trigger_code != 0)
    })
    .await?;
    ensure_eq!(manual.executor_param.as_deref(), Some("date=2026-01-31"));
    app.stop().await;
    Ok(())
}

/// A fresh admin with its administrator logged in to the console and holding an API token.
async fn as_admin(
    backend: Backend,
) -> Result<(TestDb, TestApp, ConsoleClient, RestClient), libtest_mimic::Failed> {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let admin = console(&app, "admin", "123456").await?;
    let api = RestClient::issued_by(&app.base, &admin, None).await?;
    Ok((db, app, admin, api))
}

/// NUL characters, mistyped numbers, other media types and methods: refused at the edge, alike on every
/// backend, with a 400 (415, 405) whose message names the field in the admin's language.
async fn the_edge_refuses_what_the_contract_forbids(backend: Backend) -> TestResult {
    let (_db, app, admin, api) = as_admin(backend).await?;
    let t = I18n::new("en");
    let nul = |field: &str| refusal(400, "Bad Request", &t.format("system_nul_refused", &[&field]));
    let invalid = |field: &str| refusal(400, "Bad Request", &t.format("system_param_invalid", &[&field]));

    let mut job = new_job(1);
    job["jobDesc"] = json!("a\u{0}b");
    ensure_eq!(api.expect(400, api.post("/jobs", job)).await?, nul("jobDesc"));
    ensure_eq!(api.expect(400, api.get("/jobs?jobDesc=%00")).await?, nul("jobDesc"));
    ensure_eq!(api.expect(400, api.get("/logs?from=2024-01-01%2000:00:00%00")).await?, nul("from"));
    let mut group = json!({"appname": "nul-app", "title": "t", "addressType": 0});
    group["title"] = json!("\u{0}");
    ensure_eq!(api.expect(400, api.post("/groups", group)).await?, nul("title"));
    let page = admin
        .request(
            reqwest::Method::POST,
            "/jobinfo/pageList",
            &[("jobGroup", "1"), ("triggerStatus", "-1"), ("jobDesc", "\u{0}")],
            &[],
        )
        .await?;
    ensure_eq!(
        (page.status, page.json()?["message"].clone()),
        (400, json!(t.format("system_nul_refused", &[&"jobDesc"])))
    );
    ensure!(app.app.db.load_job(2).await.context("load")?.is_none(), "nothing was stored");

    // Framework texts become the admin's own, naming the field.
    ensure_eq!(api.expect(400, api.get("/jobs/2147483648")).await?, invalid("id"));
    ensure_eq!(api.expect(400, api.get("/jobs?limit=many")).await?, invalid("limit"));
    ensure_eq!(api.expect(400, api.get("/logs/1/rolling?fromLine=0")).await?, invalid("fromLine"));
    ensure_eq!(
        api.expect(200, api.get("/logs?from=2024-01-01T00:00:00%2B08:00&to=2099-01-01T00:00:00Z")).await?
            ["total"],
        0,
        "ISO 8601 with an offset"
    );
    let mut misspelt = new_job(1);
    misspelt["jobDesk"] = json!("typo");
    let refused = api.expect(400, api.post("/jobs", misspelt)).await?;
    ensure!(refused["message"].as_str().is_some_and(|m| m.contains("`jobDesk`")), "{refused}");
    let read = api.expect(200, api.get("/jobs/1")).await?;
    ensure_eq!(
        api.expect(200, api.put("/jobs/1", read.clone())).await?["id"],
        1,
        "a job as read goes back unchanged: {read}"
    );
    let unknown = api.expect(400, api.get("/jobs?colour=red")).await?;
    ensure!(unknown["message"].as_str().is_some_and(|m| m.contains("colour")), "{unknown}");
    // JSON Schema's integers: `1.0` is one; what a view holds beside the form is ignored whatever it is, even NUL.
    let mut whole = read.clone();
    whole["jobGroup"] = json!(1.0);
    whole["updateTime"] = json!({"nested": "\u{0}"});
    ensure_eq!(api.expect(200, api.put("/jobs/1", whole)).await?["jobGroup"], 1);
    ensure_eq!(
        api.expect(400, api.post("/jobs/1/trigger", json!([null]))).await?["message"],
        "the request body must be a JSON object"
    );

    let plain = api.send(reqwest::Method::POST, "/jobs", None, &[("Content-Type", "text/plain")]).await?;
    ensure_eq!((plain.status, plain.body["status"].clone()), (415, json!(415)));
    let patch = api.send(reqwest::Method::PATCH, "/jobs/1", None, &[]).await?;
    ensure_eq!((patch.status, patch.body["error"].clone()), (405, json!("Method Not Allowed")));
    app.stop().await;
    Ok(())
}

/// The document's AppName pattern is the rule both edges apply: control characters, which it forbids, are
/// refused on creation and on change with a 400 naming AppName (the console's form alike), and the group
/// is left as it was; the white space it names blank is blank to the server too. A registration type other
/// than the document's 0 and 1 is refused the same way.
async fn app_names_keep_to_the_documented_pattern(backend: Backend) -> TestResult {
    let (_db, app, admin, api) = as_admin(backend).await?;
    let doc = api.expect(200, api.get("/openapi.json")).await?;
    let pattern = doc["components"]["schemas"]["GroupForm"]["properties"]["appname"]["pattern"].clone();
    ensure!(pattern.as_str().is_some_and(|p| p.contains(r"\x00-\x1f\x7f-\x9f")), "{pattern}");
    let unvalid = refusal(400, "Bad Request", &format!("AppName{}", msg(&["system_unvalid"])));
    let blank = refusal(400, "Bad Request", &format!("{}AppName", msg(&["system_please_input"])));
    let form = |appname: &str| json!({"appname": appname, "title": "t", "addressType": 0});

    for bad in ["\u{1c}\u{1d}\u{1e}\u{1f}", "app\u{7f}name", "app\nname", "app\u{85}name", "app\tname"] {
        ensure_eq!(api.expect(400, api.post("/groups", form(bad))).await?, unvalid, "POST {bad:?}");
    }
    ensure_eq!(api.expect(400, api.post("/groups", form("\u{3000}\u{a0} \u{2028}"))).await?, blank);
    let created = api.expect(201, api.post("/groups", form("plain-app"))).await?;
    let id = created["id"].as_i64().context("id")?;
    for bad in ["\u{1c}\u{1d}\u{1e}\u{1f}", "plain\u{9b}app"] {
        ensure_eq!(
            api.expect(400, api.put(&format!("/groups/{id}"), form(bad))).await?,
            unvalid,
            "PUT {bad:?}"
        );
    }
    let console = admin
        .post(
            "/jobgroup/save",
            &[("appname", "\u{1c}\u{1d}\u{1e}\u{1f}"), ("title", "t"), ("addressType", "0")],
        )
        .await?;
    ensure_eq!((console["code"].clone(), console["msg"].clone()), (json!(500), unvalid["message"].clone()));
    // The registration type too: the document offers 0 and 1 only.
    let other_type = refusal(400, "Bad Request", &msg(&["jobgroup_field_addressType", "system_unvalid"]));
    let manual = |address_type: i64| json!({"appname": "plain-app", "title": "t", "addressType": address_type, "addressList": "127.0.0.1:9"});
    ensure_eq!(api.expect(400, api.post("/groups", manual(-1))).await?, other_type);
    ensure_eq!(api.expect(400, api.put(&format!("/groups/{id}"), manual(2))).await?, other_type);
    let kept = api.expect(200, api.get(&format!("/groups/{id}"))).await?;
    ensure_eq!(
        (kept["appname"].clone(), kept["addressType"].clone()),
        (json!("plain-app"), json!(0)),
        "the refused changes left the group as it was"
    );
    let names: Vec<String> =
        app.app.db.all_groups().await.context("groups")?.into_iter().map(|g| g.app_name).collect();
    ensure!(!names.iter().any(|n| n.chars().any(char::is_control)), "nothing refused was stored: {names:?}");
    // U+FEFF is not white space to the server, whatever `\s` means to a regex dialect: the document agrees.
    api.expect(201, api.post("/groups", form("\u{feff}app"))).await?;
    app.stop().await;
    Ok(())
}

/// Where a write went: `Location` on a creation, the run's log on a trigger (typed API), an `ETag` that a
/// stale edit cannot match, and the console's '' in the GLUE columns.
async fn writes_answer_where_they_went(backend: Backend) -> TestResult {
    let (_db, app, _admin, api) = as_admin(backend).await?;

    let created = api.post("/jobs", new_job(1)).await?;
    ensure_eq!(created.status, 201, "{}", created.body);
    let id = created.body["id"].as_i64().context("id")?;
    ensure_eq!(created.header("location"), Some(format!("/xxl-job-admin/openapi/v1/jobs/{id}")));
    let stored = app.app.db.load_job(id as i32).await.context("load")?.context("job")?;
    ensure_eq!((stored.glue_source.as_deref(), stored.glue_remark.as_deref()), (Some(""), Some("")));
    let group =
        api.post("/groups", json!({"appname": "located-app", "title": "Located", "addressType": 0})).await?;
    ensure_eq!(
        group.header("location"),
        Some(format!("/xxl-job-admin/openapi/v1/groups/{}", group.body["id"]))
    );

    // Two editors read the same version; the second save is refused, then succeeds on a fresh read.
    let read = api.get(&format!("/jobs/{id}")).await?;
    let tag = read.header("etag").context("ETag")?;
    ensure_eq!(Some(tag.clone()), created.header("etag"));
    let mut first = new_job(1);
    first["jobDesc"] = json!("first editor");
    let saved =
        api.send(reqwest::Method::PUT, &format!("/jobs/{id}"), Some(first), &[("If-Match", &tag)]).await?;
    ensure_eq!(saved.status, 200, "{}", saved.body);
    let mut second = new_job(1);
    second["jobDesc"] = json!("second editor");
    let stale = api
        .send(reqwest::Method::PUT, &format!("/jobs/{id}"), Some(second.clone()), &[("If-Match", &tag)])
        .await?;
    ensure_eq!((stale.status, stale.body["status"].clone()), (412, json!(412)));
    let fresh = saved.header("etag").context("ETag of the save")?;
    ensure_eq!(
        api.expect(
            200,
            api.send(reqwest::Method::PUT, &format!("/jobs/{id}"), Some(second), &[("If-Match", &fresh)])
        )
        .await?["jobDesc"],
        "second editor"
    );

    // A trigger is typed API; a run that never reached an executor has an empty, ended log.
    let triggered = api.post(&format!("/jobs/{id}/trigger"), json!({})).await?;
    ensure_eq!(triggered.status, 202, "{}", triggered.body);
    let log_id = triggered.body["logId"].as_i64().context("logId")?;
    ensure_eq!(triggered.header("location"), Some(format!("/xxl-job-admin/openapi/v1/logs/{log_id}")));
    let log = eventually(Duration::from_secs(10), "the API trigger's log", || async {
        let log = api.expect(200, api.get(&format!("/logs/{log_id}"))).await.ok()?;
        log["triggerCode"].as_i64().filter(|code| *code != 0).map(|_| log)
    })
    .await?;
    ensure_eq!(log["jobId"], id);
    let api_type = I18n::new("en").get("jobconf_trigger_type_api").to_string();
    ensure!(log["triggerMsg"].as_str().is_some_and(|m| m.contains(&api_type)), "{log}");
    let lines = api.expect(200, api.get(&format!("/logs/{}/rolling?fromLine=1", log["id"]))).await?;
    ensure_eq!(lines, json!({"fromLineNum": 1, "toLineNum": 0, "logContent": null, "end": true}));
    app.stop().await;
    Ok(())
}
