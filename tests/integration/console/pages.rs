//! The pages themselves: what the console points to, the dashboard and its chart.

use crate::support::console::{admin, en, ok};
use crate::support::fixtures::{local, manual_group};
use crate::support::{Backend, Context, TestApp, TestDb};
use crate::{ensure, ensure_eq, TestResult};
use serde_json::json;

/// What the console shows to find the REST API and to leave the default password: the token dialog's
/// base URL, OpenAPI link, Copy and Close; the warning's link to the password dialog; even dashboard boxes.
pub(super) async fn the_console_points_to_what_it_offers(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let client = admin(&app).await?;
    let page = client.get("/").await?;
    ensure_eq!(page.status, 200);
    // The templates escape `/` in values.
    let body = page.body.replace("&#x2f;", "/");
    let t = en();
    for expected in [
        r#"data-path="/xxl-job-admin/openapi/v1""#.to_string(),
        format!(
            r#"href="/xxl-job-admin/openapi/v1/openapi.json" target="_blank" rel="noopener">{}</a>"#,
            t.get("api_token_openapi")
        ),
        r#"id="apiTokenCopy""#.to_string(),
        format!(r#"data-dismiss="modal">{}</button>"#, t.get("system_close")),
        format!(r#"id="defaultPasswordChange">{}</a>"#, t.get("change_pwd")),
        r#"class="row xj-even-row""#.to_string(),
    ] {
        ensure!(body.contains(&expected), "the page lacks {expected}");
    }
    let openapi = client.get("/openapi/v1/openapi.json").await?;
    ensure_eq!(openapi.status, 200, "the link leads to the document");
    app.stop().await;
    Ok(())
}

pub(super) async fn dashboard_and_chart(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let client = admin(&app).await?;
    manual_group(store, "dash-one", &["http://a:1/", "http://b:1/"]).await?;
    manual_group(store, "dash-two", &["http://b:1/", "http://c:1/"]).await?;
    let day = |text: &str| local(&format!("{text} 00:00:00"));
    let counts = |running, success, fail| xxl_job_admin::storage::DayCounts {
        total: running + success + fail,
        running,
        success,
    };
    store.save_report(day("2001-02-03"), &counts(1, 2, 3)).await.context("report")?;
    store.save_report(day("2001-02-05"), &counts(4, 5, 6)).await.context("report")?;

    let chart = client
        .post("/chartInfo", &[("startDate", "2001-02-01 00:00:00"), ("endDate", "2001-02-28 23:59:59")])
        .await?;
    ensure_eq!(
        chart,
        ok(json!({
            "triggerDayList": ["2001-02-03", "2001-02-05"],
            "triggerDayCountRunningList": [1, 4],
            "triggerDayCountSucList": [2, 5],
            "triggerDayCountFailList": [3, 6],
            "triggerCountRunningTotal": 5,
            "triggerCountSucTotal": 7,
            "triggerCountFailTotal": 9,
        })),
        "rows as stored, no gap filling"
    );
    let one =
        client.get_json("/chartInfo?startDate=2001-02-03%2000:00:00&endDate=2001-02-03%2000:00:00").await?;
    ensure_eq!(one["content"]["triggerDayList"], json!(["2001-02-03"]), "both ends inclusive: {one}");
    ensure_eq!(one["content"]["triggerCountFailTotal"], 3);
    for form in [vec![], vec![("startDate", "2001-02-01 00:00:00")], vec![("startDate", ""), ("endDate", "")]]
    {
        let empty = client.post("/chartInfo", &form).await?;
        let content = &empty["content"];
        let days: Vec<chrono::NaiveDate> = content["triggerDayList"]
            .as_array()
            .context("days")?
            .iter()
            .filter_map(|d| d.as_str().and_then(|d| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").ok()))
            .collect();
        ensure_eq!(days.len(), 7, "{form:?}: {empty}");
        ensure!(days.windows(2).all(|w| (w[1] - w[0]).num_days() == 1), "consecutive days: {empty}");
        ensure!((days[6] - chrono::Local::now().date_naive()).num_days().abs() <= 1, "ending today: {empty}");
        for key in ["triggerDayCountRunningList", "triggerDayCountSucList", "triggerDayCountFailList"] {
            ensure_eq!(content[key], json!([0, 0, 0, 0, 0, 0, 0]), "{key}");
        }
        for key in ["triggerCountRunningTotal", "triggerCountSucTotal", "triggerCountFailTotal"] {
            ensure_eq!(content[key], 0, "{key}");
        }
        ensure_eq!((empty["code"].clone(), empty["msg"].clone()), (json!(200), json!(null)));
    }
    for bad in ["2001-02-30 00:00:00", "2001-02-03", "yesterday"] {
        ensure_eq!(
            client.status_of("/chartInfo", &[("startDate", bad), ("endDate", "2001-02-28 23:59:59")]).await?,
            400,
            "{bad}"
        );
    }

    let dashboard = client.get("/").await?;
    ensure_eq!(dashboard.status, 200);
    for fragment in
        ["id=\"jobInfoCount\">1<", "id=\"jobLogCount\" data-success=\"7\">21<", "id=\"executorCount\">3<"]
    {
        ensure!(dashboard.body.contains(fragment), "{fragment} in the dashboard");
    }
    app.stop().await;
    Ok(())
}
