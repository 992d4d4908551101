//! The schema contract: an empty MySQL database gets exactly the 2.4 schema of the reference script
//! (`../shared/reference/tables_xxl_job.sql`), and a database made by that script is left as it is. An
//! empty PostgreSQL database gets what `migrations/postgres.sql` means to create, written out below as
//! catalogue facts, and one that has the tables is left as it is.

use crate::support::fixtures::{self, manual_group};
use crate::support::{Backend, Context, ServerConnection, TestApp, TestDb};
use crate::{cases, ensure, ensure_eq, Case, TestResult, ALL, MYSQL_ONLY, POSTGRES_ONLY, SERVERS};
use libtest_mimic::Failed;
use sqlx::{MySqlConnection, PgConnection};
use std::path::PathBuf;
use xxl_job_admin::storage::{Role, SESSION_SECRET_PREFIX};

pub fn cases() -> Vec<Case> {
    cases! {
        "schema" {
            MYSQL_ONLY => empty_database_gets_the_reference_schema needs [ReferenceSchema],
            MYSQL_ONLY => reference_database_is_left_unchanged needs [ReferenceSchema],
            ALL => new_database_gets_every_table_and_the_initial_rows,
            SERVERS => admins_starting_together_on_a_new_database_all_start,
            SERVERS => partial_schema_refuses_to_start,
            POSTGRES_ONLY => postgres_gets_the_intended_schema,
            POSTGRES_ONLY => postgres_database_with_the_tables_is_left_unchanged,
            POSTGRES_ONLY => postgres_columns_of_other_types_refuse_to_start,
        }
    }
}

/// The reference script shipped beside the repository (shared/), or `XXL_TEST_REFERENCE_SQL`.
pub fn reference_script_path() -> PathBuf {
    std::env::var_os("XXL_TEST_REFERENCE_SQL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/tables_xxl_job.sql")
    })
}

/// Runs the reference script in `db` (minus its own CREATE DATABASE / USE).
async fn load_reference(db: &TestDb) -> Result<(), Failed> {
    let path = reference_script_path();
    let script = std::fs::read_to_string(&path).context(&format!("read {}", path.display()))?;
    db.create().await?;
    let mut conn = db.mysql().await?;
    for statement in script.split(";\n").map(str::trim).filter(|s| !s.is_empty()) {
        let body: String =
            statement.lines().filter(|l| !l.trim_start().starts_with('#')).collect::<Vec<_>>().join("\n");
        let lower = body.trim().to_lowercase();
        if lower.is_empty() || lower.starts_with("create database") || lower.starts_with("use ") {
            continue;
        }
        sqlx::query(&body).execute(&mut conn).await.context(&format!("reference statement {body}"))?;
    }
    Ok(())
}

/// Every schema fact information_schema holds for a database, one line each, comments excluded
/// (ours are in English).
async fn describe(conn: &mut MySqlConnection, database: &str) -> Result<Vec<String>, Failed> {
    let queries = [
        "SELECT CONCAT_WS('|', 'table', TABLE_NAME, ENGINE, TABLE_COLLATION) AS fact FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = ?",
        "SELECT CONCAT_WS('|', 'column', TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, COALESCE(COLUMN_DEFAULT, '<none>'), \
         IS_NULLABLE, COLUMN_TYPE, COALESCE(CHARACTER_SET_NAME, '-'), COALESCE(COLLATION_NAME, '-'), EXTRA) AS fact \
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ?",
        "SELECT CONCAT_WS('|', 'index', TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE, INDEX_TYPE) AS fact \
         FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ?",
    ];
    let mut facts = Vec::new();
    for query in queries {
        let rows: Vec<String> = sqlx::query_scalar(&format!("SELECT CAST(fact AS CHAR) FROM ({query}) AS t"))
            .bind(database)
            .fetch_all(&mut *conn)
            .await
            .context("information_schema")?;
        facts.extend(rows);
    }
    facts.sort();
    Ok(facts)
}

/// The initial rows, as text.
async fn rows(conn: &mut MySqlConnection) -> Result<Vec<String>, Failed> {
    let mut all = Vec::new();
    for (table, columns) in [
        // update_time left out: the registry monitor refreshes it at start, as 2.4.2's does.
        ("xxl_job_group", "id, app_name, title, address_type, COALESCE(address_list, '<null>')"),
        ("xxl_job_user", "id, username, password, role, COALESCE(permission, '<null>')"),
        ("xxl_job_lock", "lock_name"),
        (
            "xxl_job_info",
            "id, job_group, job_desc, add_time, update_time, author, alarm_email, schedule_type, schedule_conf, \
             misfire_strategy, executor_route_strategy, executor_handler, executor_param, executor_block_strategy, \
             executor_timeout, executor_fail_retry_count, glue_type, glue_source, glue_remark, glue_updatetime, \
             child_jobid, trigger_status, trigger_last_time, trigger_next_time",
        ),
    ] {
        let sql = format!("SELECT CAST(CONCAT_WS('|', '{table}', {columns}) AS CHAR) FROM {table} ORDER BY 1");
        let found: Vec<String> = sqlx::query_scalar(&sql).fetch_all(&mut *conn).await.context(table)?;
        all.extend(found);
    }
    Ok(all)
}

/// Splits off the one extra row the README documents: the console's session secret in `xxl_job_lock`,
/// checking its form.
fn without_session_secret(rows: Vec<String>) -> Result<Vec<String>, Failed> {
    let prefix = format!("xxl_job_lock|{SESSION_SECRET_PREFIX}");
    let (secrets, others): (Vec<String>, Vec<String>) =
        rows.into_iter().partition(|r| r.starts_with(&prefix));
    ensure!(
        secrets.len() == 1 && secrets[0].len() == "xxl_job_lock|".len() + 50,
        "one session secret row: {secrets:?}"
    );
    Ok(others)
}

async fn empty_database_gets_the_reference_schema(backend: Backend) -> TestResult {
    let reference = TestDb::fresh(backend)?;
    load_reference(&reference).await?;
    let ours = TestDb::fresh(backend)?;
    // The database does not even exist yet: the admin creates it, then the schema.
    let app = TestApp::start(&ours, &[]).await?;
    app.stop().await;
    let mut conn = reference.mysql().await?;
    let expected = describe(&mut conn, &reference.name).await?;
    let actual = describe(&mut conn, &ours.name).await?;
    ensure!(expected.len() > 80, "the reference schema was not loaded: {expected:?}");
    let missing: Vec<_> = expected.iter().filter(|f| !actual.contains(f)).collect();
    let extra: Vec<_> = actual.iter().filter(|f| !expected.contains(f)).collect();
    ensure!(
        missing.is_empty() && extra.is_empty(),
        "schema differs\n missing: {missing:#?}\n extra: {extra:#?}"
    );
    let charset: Vec<String> = sqlx::query_scalar(
        "SELECT CAST(CONCAT(DEFAULT_CHARACTER_SET_NAME, '/', DEFAULT_COLLATION_NAME) AS CHAR) \
         FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN (?, ?)",
    )
    .bind(&reference.name)
    .bind(&ours.name)
    .fetch_all(&mut conn)
    .await
    .context("schemata")?;
    ensure_eq!(charset, vec!["utf8mb4/utf8mb4_unicode_ci".to_string(); 2]);
    let expected_rows = rows(&mut reference.mysql().await?).await?;
    let actual_rows = without_session_secret(rows(&mut ours.mysql().await?).await?)?;
    ensure_eq!(actual_rows, expected_rows, "initial rows");
    Ok(())
}

async fn reference_database_is_left_unchanged(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    load_reference(&db).await?;
    let mut conn = db.mysql().await?;
    let before = describe(&mut conn, &db.name).await?;
    let user_rows_before = rows(&mut db.mysql().await?).await?;
    let app = TestApp::start(&db, &[]).await?;
    app.stop().await;
    ensure_eq!(describe(&mut conn, &db.name).await?, before, "schema changed");
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT CAST(TABLE_NAME AS CHAR) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY 1",
    )
    .bind(&db.name)
    .fetch_all(&mut conn)
    .await
    .context("tables")?;
    ensure_eq!(tables.len(), 8, "no bookkeeping table may appear: {tables:?}");
    // Users, jobs and the lock are untouched (groups may get their address list refreshed); the session
    // secret is the one row added.
    let after: Vec<String> = without_session_secret(rows(&mut db.mysql().await?).await?)?
        .into_iter()
        .filter(|r| !r.starts_with("xxl_job_group"))
        .collect();
    let before: Vec<String> =
        user_rows_before.into_iter().filter(|r| !r.starts_with("xxl_job_group")).collect();
    ensure_eq!(after, before);
    Ok(())
}

async fn new_database_gets_every_table_and_the_initial_rows(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let app = TestApp::start(&db, &[]).await?;
    let store = &app.app.db;
    let admin = store.load_user_by_name("admin").await.context("user")?.context("admin user")?;
    ensure_eq!((admin.password.as_str(), admin.role), ("e10adc3949ba59abbe56e057f20f883e", Role::Admin));
    let job = store.load_job(1).await.context("job")?.context("sample job")?;
    ensure_eq!((job.job_desc.as_str(), job.schedule_conf.as_deref()), ("测试任务1", Some("0 0 0 * * ? *")));
    ensure_eq!(job.glue_updatetime.map(|t| t.to_string()), Some("2018-11-03 22:21:31".to_string()));
    let group = store.load_group(1).await.context("group")?.context("sample group")?;
    ensure_eq!(group.app_name, "xxl-job-executor-sample");
    ensure_eq!(store.count_jobs().await.context("count")?, 1);
    // Generated ids continue after the initial rows (PostgreSQL's sequences do not see explicit ids).
    let mut second = fixtures::job(1);
    second.job_desc = "second".into();
    ensure_eq!(store.insert_job(&second).await.context("insert job")?, 2);
    ensure_eq!(manual_group(store, "second-app", &["http://e:1"]).await?, 2);
    app.stop().await;
    // A second start on the same database finds the schema and adds nothing.
    let app = TestApp::start(&db, &[]).await?;
    ensure_eq!(app.app.db.count_jobs().await.context("count")?, 2);
    app.stop().await;
    Ok(())
}

/// Three admins started at once on a database that does not exist yet: one creates the database and the
/// schema, the others wait for it and find them made; all start, and the initial rows are there once.
async fn admins_starting_together_on_a_new_database_all_start(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let (a, b, c) =
        tokio::join!(TestApp::start(&db, &[]), TestApp::start(&db, &[]), TestApp::start(&db, &[]));
    let started = [a, b, c].into_iter().collect::<Result<Vec<_>, _>>()?;
    ensure_eq!(started[0].app.db.count_jobs().await.context("count")?, 1);
    ensure_eq!(started[1].app.db.all_groups().await.context("groups")?.len(), 1);
    for app in started {
        app.stop().await;
    }
    Ok(())
}

async fn partial_schema_refuses_to_start(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    db.create().await?;
    db.connect().await?.execute("CREATE TABLE xxl_job_user (id int PRIMARY KEY)").await?;
    let error = match TestApp::start(&db, &[]).await {
        Ok(app) => {
            app.stop().await;
            return Err("the admin started on a partial schema".into());
        }
        Err(e) => format!("{e:?}"),
    };
    ensure!(error.contains("xxl_job_info") && error.contains("missing"), "{error}");
    Ok(())
}

/// What `migrations/postgres.sql` means to create, as the catalogue reports it: per column its position,
/// default, nullability, type and length; per index its definition. The MySQL schema in PostgreSQL
/// types: int(11) → integer, bigint → bigint, tinyint → smallint, datetime → timestamp without time zone,
/// text/mediumtext → text, AUTO_INCREMENT → a sequence of the column.
const POSTGRES_INTENT: &str = include_str!("schema_postgres.txt");

/// Every schema fact PostgreSQL's catalogue holds for the current schema, one line each.
async fn describe_postgres(conn: &mut PgConnection) -> Result<Vec<String>, Failed> {
    let queries = [
        "SELECT concat_ws('|', 'table', table_name, table_type) FROM information_schema.tables \
         WHERE table_schema = current_schema()",
        "SELECT concat_ws('|', 'column', table_name, column_name, ordinal_position, COALESCE(column_default, '<none>'), \
         is_nullable, data_type, COALESCE(character_maximum_length::text, '-')) \
         FROM information_schema.columns WHERE table_schema = current_schema()",
        "SELECT concat_ws('|', 'index', tablename, indexname, indexdef) FROM pg_indexes WHERE schemaname = current_schema()",
        "SELECT concat_ws('|', 'sequence', sequencename, data_type, start_value, increment_by) FROM pg_sequences \
         WHERE schemaname = current_schema()",
    ];
    let mut facts = Vec::new();
    for query in queries {
        let rows: Vec<String> = sqlx::query_scalar(query).fetch_all(&mut *conn).await.context("catalogue")?;
        facts.extend(rows);
    }
    // The catalogue names the schema in index definitions; the intent does not depend on it.
    let schema: String =
        sqlx::query_scalar("SELECT current_schema()").fetch_one(&mut *conn).await.context("schema")?;
    let mut facts: Vec<String> = facts.into_iter().map(|f| f.replace(&format!(" {schema}."), " ")).collect();
    facts.sort();
    Ok(facts)
}

fn postgres_intent() -> Vec<String> {
    let mut facts: Vec<String> = POSTGRES_INTENT
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    facts.sort();
    facts
}

async fn postgres_gets_the_intended_schema(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    // The database does not even exist yet: the admin creates it, then the schema.
    let app = TestApp::start(&db, &[]).await?;
    app.stop().await;
    let actual = describe_postgres(&mut db.postgres().await?).await?;
    let expected = postgres_intent();
    ensure!(expected.len() > 80, "the intent lost its lines: {expected:?}");
    let missing: Vec<_> = expected.iter().filter(|f| !actual.contains(f)).collect();
    let extra: Vec<_> = actual.iter().filter(|f| !expected.contains(f)).collect();
    ensure!(
        missing.is_empty() && extra.is_empty(),
        "schema differs\n missing: {missing:#?}\n extra: {extra:#?}"
    );
    let encoding: String = sqlx::query_scalar(
        "SELECT pg_encoding_to_char(encoding) FROM pg_database WHERE datname = current_database()",
    )
    .fetch_one(&mut db.postgres().await?)
    .await
    .context("encoding")?;
    ensure_eq!(encoding, "UTF8");
    Ok(())
}

/// Creates the database and runs our PostgreSQL script and the initial rows in it by hand, as a team
/// would that made the tables beforehand; returns a connection to it.
async fn tables_made_beforehand(db: &TestDb) -> Result<ServerConnection, Failed> {
    db.create().await?;
    let mut conn = db.connect().await?;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    for file in ["postgres.sql", "seed.sql"] {
        let script = std::fs::read_to_string(root.join(file)).context(file)?;
        let code: Vec<&str> = script.lines().filter(|l| !l.trim_start().starts_with("--")).collect();
        for statement in code.join("\n").split(';').map(str::trim).filter(|s| !s.is_empty()) {
            conn.execute(statement).await?;
        }
    }
    Ok(conn)
}

/// A database whose tables were made beforehand (by a PostgreSQL port of the Java admin, or by hand from
/// our script) keeps its schema, rows and sequences.
async fn postgres_database_with_the_tables_is_left_unchanged(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let mut conn = tables_made_beforehand(&db).await?;
    conn.execute("INSERT INTO xxl_job_user (username, password, role) VALUES ('ops', 'e10adc3949ba59abbe56e057f20f883e', 0)").await?;
    conn.execute("UPDATE xxl_job_info SET job_desc = 'renamed' WHERE id = 1").await?;
    let mut pg = db.postgres().await?;
    let before = describe_postgres(&mut pg).await?;
    let rows_sql = "SELECT concat_ws('|', id, username, role) FROM xxl_job_user \
                    UNION ALL SELECT concat_ws('|', id, job_desc) FROM xxl_job_info ORDER BY 1";
    let rows_before: Vec<String> = sqlx::query_scalar(rows_sql).fetch_all(&mut pg).await.context("rows")?;
    let app = TestApp::start(&db, &[]).await?;
    ensure_eq!(app.app.db.load_user_by_name("ops").await.context("user")?.map(|u| u.id), Some(2));
    app.stop().await;
    ensure_eq!(describe_postgres(&mut pg).await?, before, "schema changed");
    let rows_after: Vec<String> = sqlx::query_scalar(rows_sql).fetch_all(&mut pg).await.context("rows")?;
    ensure_eq!(rows_after, rows_before);
    Ok(())
}

/// PostgreSQL decodes only exact types: tables whose columns differ where it matters are refused at
/// start, naming each column; text instead of varchar is fine.
async fn postgres_columns_of_other_types_refuse_to_start(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let mut conn = tables_made_beforehand(&db).await?;
    conn.execute("ALTER TABLE xxl_job_log ALTER COLUMN id TYPE integer").await?;
    conn.execute("ALTER TABLE xxl_job_info ALTER COLUMN add_time TYPE timestamptz").await?;
    conn.execute("ALTER TABLE xxl_job_info ALTER COLUMN glue_remark TYPE text").await?;
    let error = match TestApp::start(&db, &[]).await {
        Ok(app) => {
            app.stop().await;
            return Err("the admin started on columns it cannot read".into());
        }
        Err(e) => format!("{e:?}"),
    };
    ensure!(error.contains("xxl_job_log.id is integer, not bigint"), "{error}");
    ensure!(error.contains("xxl_job_info.add_time is timestamp with time zone"), "{error}");
    ensure!(!error.contains("glue_remark"), "{error}");
    Ok(())
}
