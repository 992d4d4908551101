//! The user manager's endpoints.

use crate::support::console::{admin, en, ensure_page, fail, form_with, msg, ok, ConsoleClient, FormCase};
use crate::support::{Backend, Context, TestApp, TestDb};
use crate::{ensure, ensure_eq, TestResult};
use serde_json::json;
use xxl_job_admin::storage::Role;

pub(super) async fn user_manager_endpoints(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let client = admin(&app).await?;
    let length = format!("{}[4-20]", en().get("system_lengh_limit"));
    let base = [("username", "newuser"), ("password", "secret1"), ("role", "0"), ("permission", "1")];
    let long_password = "p".repeat(21);
    let add_cases: Vec<FormCase> = vec![
        (vec![("username", None)], msg(&["system_please_input", "user_username"])),
        (vec![("username", Some("  "))], msg(&["system_please_input", "user_username"])),
        (vec![("username", Some(" abc "))], length.clone()),
        (vec![("username", Some("abcdefghijklmnopqrstu"))], length.clone()),
        (vec![("password", None)], msg(&["system_please_input", "user_password"])),
        (vec![("password", Some(" "))], msg(&["system_please_input", "user_password"])),
        (vec![("password", Some(" abc "))], length.clone()),
        (vec![("password", Some(&long_password))], length.clone()),
        (vec![("username", Some("admin"))], msg(&["user_username_repeat"])),
        (vec![("username", Some("😀"))], length.clone()),
        (vec![("password", Some("a😀"))], length.clone()),
    ];
    for (changes, expected) in &add_cases {
        ensure_eq!(
            client.post("/user/add", &form_with(&base, changes)).await?,
            fail(expected.clone()),
            "add with {changes:?}"
        );
    }
    ensure_eq!(client.status_of("/user/add", &form_with(&base, &[("role", Some("admin"))])).await?, 400);
    for form in [
        vec![("username", " carol "), ("password", " carol-pw "), ("role", "0"), ("permission", "1")],
        vec![("username", "dave1"), ("password", "dave-pw"), ("role", "1"), ("permission", "")],
        vec![("username", "erin"), ("password", "erin-pw")],
    ] {
        ensure_eq!(client.post("/user/add", &form).await?, ok(json!(null)), "{form:?}");
    }
    // Lengths count UTF-16 units, as Java does: two emoji are four.
    ensure_eq!(
        client.post("/user/add", &[("username", "😀😀"), ("password", "😀😀")]).await?,
        ok(json!(null))
    );
    ensure_eq!(ConsoleClient::new(&app.base).login("😀😀", "😀😀", false).await?, ok(json!(null)));
    ensure_eq!(
        client
            .post(
                "/user/remove",
                &[(
                    "id",
                    &store.load_user_by_name("😀😀").await.context("load")?.context("emoji")?.id.to_string()
                )]
            )
            .await?,
        ok(json!(null))
    );
    let id_of = |name: &'static str| async move {
        store.load_user_by_name(name).await.ok().flatten().map(|u| u.id as i64).unwrap_or(-1)
    };
    let (carol, dave, erin) = (id_of("carol").await, id_of("dave1").await, id_of("erin").await);
    ensure!(carol > 0 && dave > 0 && erin > 0, "the names are stored trimmed");
    let mut carol_login = ConsoleClient::new(&app.base);
    ensure_eq!(
        carol_login.login("carol", "carol-pw", false).await?,
        ok(json!(null)),
        "the password is stored trimmed"
    );

    // pageList: ordered by name, role and name filters, paging, never a password hash.
    let list = client.post("/user/pageList", &[("role", "-1")]).await?;
    ensure_page(&list, 4, &[1, carol, dave, erin], "all users")?;
    ensure_eq!(
        list["data"][1],
        json!({"id": carol, "username": "carol", "password": null, "role": 0, "permission": "1"})
    );
    ensure_eq!(
        list["data"][2],
        json!({"id": dave, "username": "dave1", "password": null, "role": 1, "permission": ""})
    );
    ensure_eq!(
        list["data"][3],
        json!({"id": erin, "username": "erin", "password": null, "role": 0, "permission": null})
    );
    let raw = client.request(reqwest::Method::POST, "/user/pageList", &[("role", "-1")], &[]).await?.body;
    for hash in
        ["e10adc3949ba59abbe56e057f20f883e", &xxl_job_admin::http::console::session::md5_hex("carol-pw")]
    {
        ensure!(!raw.contains(hash), "no password hash in {raw}");
    }
    ensure_page(&client.post("/user/pageList", &[("role", "0")]).await?, 2, &[carol, erin], "role 0")?;
    ensure_page(&client.post("/user/pageList", &[("role", "1")]).await?, 2, &[1, dave], "role 1")?;
    ensure_page(
        &client.post("/user/pageList", &[("role", "-1"), ("username", "ar")]).await?,
        1,
        &[carol],
        "name",
    )?;
    ensure_page(
        &client.post("/user/pageList", &[("role", "-1"), ("start", "1"), ("length", "2")]).await?,
        4,
        &[carol, dave],
        "paging",
    )?;
    ensure_page(
        &client.post("/user/pageList", &[("role", "-1"), ("username", "' OR ''='")]).await?,
        0,
        &[],
        "quotes are data",
    )?;
    ensure_eq!(client.post("/user/pageList", &[]).await?["code"], 500, "role is required");

    // update: role and permission by id, the password only when given, never oneself.
    let carol_id = carol.to_string();
    ensure_eq!(
        client
            .post(
                "/user/update",
                &[("id", &carol_id), ("username", "carol"), ("password", "abc"), ("role", "0")]
            )
            .await?,
        fail(length.clone())
    );
    ensure_eq!(
        client
            .post(
                "/user/update",
                &[
                    ("id", &carol_id),
                    ("username", "carol"),
                    ("password", ""),
                    ("role", "1"),
                    ("permission", "")
                ]
            )
            .await?,
        ok(json!(null))
    );
    let carol_row = store.load_user(carol as i32).await.context("load")?.context("carol")?;
    ensure_eq!(
        (carol_row.role, carol_row.permission.as_deref(), carol_row.username.as_str()),
        (Role::Admin, Some(""), "carol")
    );
    ensure_eq!(
        ConsoleClient::new(&app.base).login("carol", "carol-pw", false).await?["code"],
        200,
        "an empty password keeps the old one"
    );
    ensure_eq!(
        client
            .post(
                "/user/update",
                &[
                    ("id", &carol_id),
                    ("username", "renamed"),
                    ("password", " new-pw "),
                    ("role", "0"),
                    ("permission", "1")
                ]
            )
            .await?,
        ok(json!(null))
    );
    ensure_eq!(
        ConsoleClient::new(&app.base).login("carol", "new-pw", false).await?["code"],
        200,
        "the new password, trimmed"
    );
    ensure_eq!(
        store.load_user(carol as i32).await.context("load")?.context("carol")?.username,
        "carol",
        "the name never changes"
    );
    ensure_eq!(carol_login.get("/").await?.status, 302, "a changed password ends the user's sessions");
    ensure_eq!(
        client.post("/user/update", &[("id", "1"), ("username", "someone"), ("role", "0")]).await?,
        fail(msg(&["user_update_loginuser_limit"])),
        "own id, other name"
    );
    ensure_eq!(
        store.load_user(1).await.context("load")?.context("admin")?.role,
        Role::Admin,
        "the admin was not demoted"
    );

    // Role changes and removal take effect on the user's next request.
    let mut demoted = ConsoleClient::new(&app.base);
    ensure_eq!(demoted.login("dave1", "dave-pw", false).await?["code"], 200);
    ensure!(
        demoted.post("/user/pageList", &[("role", "-1")]).await?["recordsTotal"].is_i64(),
        "an admin lists users"
    );
    ensure_eq!(
        client
            .post(
                "/user/update",
                &[("id", &dave.to_string()), ("username", "dave1"), ("role", "0"), ("permission", "")]
            )
            .await?,
        ok(json!(null))
    );
    ensure_eq!(
        demoted.post("/user/pageList", &[("role", "-1")]).await?,
        fail(msg(&["system_permission_limit"])),
        "demoted at once"
    );
    ensure_eq!(
        client
            .post(
                "/user/update",
                &[("id", &dave.to_string()), ("username", "dave1"), ("role", "1"), ("permission", "")]
            )
            .await?,
        ok(json!(null))
    );
    let mut erin_client = ConsoleClient::new(&app.base);
    ensure_eq!(erin_client.login("erin", "erin-pw", false).await?["code"], 200);

    // remove: others yes (unknown ids too), oneself no.
    ensure_eq!(client.post("/user/remove", &[("id", &erin.to_string())]).await?, ok(json!(null)));
    ensure!(store.load_user(erin as i32).await.context("load")?.is_none(), "erin removed");
    ensure_eq!(erin_client.get("/").await?.status, 302, "a removed user's session ends");
    ensure_eq!(client.post("/user/remove", &[("id", "99999")]).await?, ok(json!(null)));
    ensure_eq!(
        client.post("/user/update", &[("id", "99999"), ("username", "ghost"), ("role", "0")]).await?,
        ok(json!(null)),
        "no row: still a success"
    );
    ensure_eq!(client.post("/user/remove", &[]).await?["code"], 500, "id is required");

    // updatePwd for any user: its checks, in order.
    let mut dave_client = ConsoleClient::new(&app.base);
    ensure_eq!(dave_client.login("dave1", "dave-pw", false).await?["code"], 200);
    let pwd_cases: Vec<(Vec<(&str, &str)>, String)> = vec![
        (vec![("password", "dave-new")], msg(&["system_please_input", "change_pwd_field_oldpwd"])),
        (
            vec![("oldPassword", " "), ("password", "dave-new")],
            msg(&["system_please_input", "change_pwd_field_oldpwd"]),
        ),
        (vec![("oldPassword", "dave-pw")], msg(&["system_please_input", "change_pwd_field_newpwd"])),
        (vec![("oldPassword", "dave-pw"), ("password", " ab ")], length.clone()),
        (
            vec![("oldPassword", "wrong-pw"), ("password", "dave-new")],
            msg(&["change_pwd_field_oldpwd", "system_unvalid"]),
        ),
        (
            vec![("oldPassword", " dave-pw"), ("password", "dave-new")],
            msg(&["change_pwd_field_oldpwd", "system_unvalid"]),
        ),
        (vec![("oldPassword", "dave-pw"), ("password", "dave-pw")], msg(&["change_pwd_same"])),
    ];
    for (form, expected) in &pwd_cases {
        ensure_eq!(dave_client.post("/user/updatePwd", form).await?, fail(expected.clone()), "{form:?}");
    }
    ensure_eq!(
        dave_client
            .post("/user/updatePwd", &[("oldPassword", "dave-pw"), ("password", " dave-new ")])
            .await?,
        ok(json!(null))
    );
    let dave_row = store.load_user(dave as i32).await.context("load")?.context("dave")?;
    ensure_eq!(
        (dave_row.role, dave_row.permission.as_deref()),
        (Role::Admin, Some("")),
        "role and permission unchanged"
    );
    ensure_eq!(ConsoleClient::new(&app.base).login("dave1", "dave-new", false).await?["code"], 200);
    let page = client.get("/user").await?;
    ensure_eq!((page.status, page.content_type.starts_with("text/html")), (200, true));
    app.stop().await;
    Ok(())
}
