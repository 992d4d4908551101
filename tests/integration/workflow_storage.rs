//! The workflow tables (`xxl_job_ext_*`) and their storage API, on every backend: absent until first
//! needed, created once however many admins ask together, accepted by the 2.4 schema check, made by a DBA
//! from `xxl-job-admin ddl` where the account may not create tables; and every statement of the API,
//! compare-and-set losers included.

use crate::support::{Backend, Context, TestDb};
use crate::{cases, ensure, ensure_eq, Case, TestResult, ALL, SERVERS};
use libtest_mimic::Failed;
use std::process::Command;
use xxl_job_admin::storage::{
    extension_ddl, Backend as Dialect, Db, NewRun, NodeChange, NodeTrigger, RunChange, RunFilter,
    StorageError, WorkflowFilter, WorkflowHead, WorkflowSchedule, EXTENSION_TABLES,
};

pub fn cases() -> Vec<Case> {
    const ONCE: &[Backend] = &[Backend::Sqlite];
    cases! {
        "workflow_storage" {
            ALL => tables_come_on_first_use_once_for_all_admins,
            ALL => every_statement_and_its_compare_and_set,
            ALL => workflow_with_unfinished_runs_is_not_deleted,
            SERVERS => account_without_create_rights_is_given_the_statements,
            ONCE => ddl_command_prints_the_script_of_each_database,
        }
    }
}

const T: i64 = 1_700_000_000_000;

/// The workflow tables the database's catalogue lists (SQLite: those a read finds).
async fn present_tables(db: &TestDb, store: &Db) -> Result<usize, Failed> {
    if db.backend == Backend::Sqlite {
        return Ok(if store.load_workflow(1).await.is_ok() { EXTENSION_TABLES.len() } else { 0 });
    }
    let sql = match db.backend {
        Backend::Postgres => {
            "SELECT CAST(COUNT(*) AS BIGINT) FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_name LIKE 'xxl\\_job\\_ext\\_%'"
        }
        _ => {
            "SELECT CAST(COUNT(*) AS SIGNED) FROM information_schema.tables \
             WHERE table_schema = DATABASE() AND table_name LIKE 'xxl\\_job\\_ext\\_%'"
        }
    };
    let count: i64 = match db.connect().await? {
        crate::support::ServerConnection::MySql(mut c) => sqlx::query_scalar(sql).fetch_one(&mut c).await,
        crate::support::ServerConnection::Postgres(mut c) => sqlx::query_scalar(sql).fetch_one(&mut c).await,
    }
    .context("catalogue")?;
    Ok(count as usize)
}

/// A fresh database has the 2.4 schema only; two admins' first uses at once create the tables once, a
/// second use costs nothing, and a later start accepts the database with them.
async fn tables_come_on_first_use_once_for_all_admins(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let (first, second) = (db.open().await?, db.open().await?);
    ensure_eq!(present_tables(&db, &first).await?, 0, "a new database has the 2.4 schema only");
    let (a, b) = tokio::join!(first.ensure_extension_tables(), second.ensure_extension_tables());
    a.context("first admin")?;
    b.context("second admin")?;
    ensure_eq!(present_tables(&db, &first).await?, EXTENSION_TABLES.len());
    first.ensure_extension_tables().await.context("again")?;
    first.close().await;
    second.close().await;
    // The 2.4 schema check at the next start accepts the extra tables and leaves them.
    let again = db.open().await?;
    ensure_eq!(present_tables(&db, &again).await?, EXTENSION_TABLES.len());
    again.ensure_extension_tables().await.context("after a restart")?;
    ensure_eq!(again.count_jobs().await.context("2.4 tables")?, 1);
    again.close().await;
    Ok(())
}

fn head(name: &str) -> WorkflowHead {
    WorkflowHead {
        name: name.into(),
        job_group: 1,
        schedule_type: "CRON".into(),
        schedule_conf: Some("0 0 * * * ?".into()),
        misfire_strategy: "DO_NOTHING".into(),
    }
}

fn new_run(workflow_id: i64, state: &str) -> NewRun {
    NewRun {
        workflow_id,
        version: 1,
        state: state.into(),
        trigger_type: "MANUAL".into(),
        logical_time: T,
        params: "{\"day\":\"2023-11-14\"}".into(),
        started_by: Some("admin".into()),
        parent_run_id: None,
        parent_node: None,
        backfill_id: None,
        add_time: T,
        deadline_time: Some(T + 60_000),
    }
}

async fn ready_store(backend: Backend) -> Result<(TestDb, Db), Failed> {
    let db = TestDb::fresh(backend)?;
    let store = db.open().await?;
    store.ensure_extension_tables().await.context("ensure")?;
    Ok((db, store))
}

async fn every_statement_and_its_compare_and_set(backend: Backend) -> TestResult {
    let (_db, store) = ready_store(backend).await?;
    // Definitions and versions.
    let definition = "{\"name\":\"nightly\",\"nodes\":[{\"name\":\"a\"}],\"text\":\"中文\"}";
    let id = store.insert_workflow(&head("nightly"), definition, Some("admin"), T).await.context("insert")?;
    let other = store.insert_workflow(&head("Hourly-Report"), "{}", None, T).await.context("insert 2")?;
    ensure!(other > id, "ids grow: {id}, {other}");
    match store.insert_workflow(&head("nightly"), "{}", None, T).await {
        Err(StorageError::WorkflowNameTaken(name)) => ensure_eq!(name, "nightly"),
        other => return Err(format!("a second 'nightly': {other:?}").into()),
    }
    let row = store.load_workflow(id).await.context("load")?.context("workflow")?;
    ensure_eq!(
        (row.name.as_str(), row.current_version, row.trigger_status, row.schedule_conf.as_deref()),
        ("nightly", 1, 0, Some("0 0 * * * ?"))
    );
    ensure_eq!((row.add_time, row.update_time, row.author.as_deref()), (T, T, Some("admin")));
    ensure_eq!(store.load_workflow_by_name("nightly").await.context("by name")?.map(|w| w.id), Some(id));
    ensure_eq!(store.load_workflow_by_name("NIGHTLY").await.context("by name")?, None, "exact names");
    let v1 = store.load_workflow_version(id, 1).await.context("version")?.context("version 1")?;
    ensure_eq!(v1.definition, definition);

    let mut renamed = head("nightly-v2");
    renamed.job_group = 2;
    ensure!(
        store
            .save_workflow_version(id, 1, &renamed, "{\"v\":2}", Some("bob"), T + 1)
            .await
            .context("save")?,
        "the first save from version 1 wins"
    );
    ensure!(
        !store
            .save_workflow_version(id, 1, &head("late"), "{\"v\":\"late\"}", None, T + 2)
            .await
            .context("save")?,
        "a second save from version 1 loses"
    );
    match store.save_workflow_version(id, 2, &head("Hourly-Report"), "{}", None, T + 3).await {
        Err(StorageError::WorkflowNameTaken(_)) => {}
        other => return Err(format!("renamed onto another workflow: {other:?}").into()),
    }
    let row = store.load_workflow(id).await.context("load")?.context("workflow")?;
    ensure_eq!((row.name.as_str(), row.job_group, row.current_version), ("nightly-v2", 2, 2));
    let versions = store.workflow_versions(id).await.context("versions")?;
    ensure_eq!(
        versions.iter().map(|v| (v.version, v.author.clone())).collect::<Vec<_>>(),
        vec![(2, Some("bob".to_string())), (1, Some("admin".to_string()))]
    );
    ensure_eq!(store.load_workflow_version(id, 3).await.context("version 3")?, None);

    // The list: groups, a name part in any case, paging.
    let all = WorkflowFilter::default();
    let (page, total) = store.workflow_page(&all, 0, 1).await.context("page")?;
    ensure_eq!((page.iter().map(|w| w.name.as_str()).collect::<Vec<_>>(), total), (vec!["Hourly-Report"], 2));
    let filter = WorkflowFilter { groups: Some(vec![2]), name: Some("V2".into()), last_run: None };
    ensure_eq!(store.workflow_page(&filter, 0, 10).await.context("page")?.1, 1);
    let filter = WorkflowFilter { groups: Some(vec![]), name: None, last_run: None };
    ensure_eq!(store.workflow_page(&filter, 0, 10).await.context("page")?.1, 0);
    let filter = WorkflowFilter { groups: None, name: Some("hourly".into()), last_run: None };
    ensure_eq!(store.workflow_page(&filter, 0, 10).await.context("page")?.0[0].id, other);

    // Scheduling.
    let schedule = WorkflowSchedule {
        trigger_status: 1,
        schedule_type: "FIX_RATE".into(),
        schedule_conf: Some("60".into()),
        misfire_strategy: "FIRE_ONCE_NOW".into(),
        trigger_next_time: T + 60_000,
        trigger_last_time: T,
    };
    ensure!(store.set_workflow_schedule(id, &schedule, T + 5).await.context("schedule")?, "scheduled");
    ensure!(!store.set_workflow_schedule(-1, &schedule, T).await.context("schedule")?, "no such workflow");
    let row = store.load_workflow(id).await.context("load")?.context("workflow")?;
    ensure_eq!(
        (row.trigger_status, row.schedule_type.as_str(), row.trigger_next_time, row.update_time),
        (1, "FIX_RATE", T + 60_000, T + 5)
    );

    // Runs.
    let run = store.insert_run(&new_run(id, "queued")).await.context("run")?.context("run id")?;
    let mut child = new_run(other, "queued");
    (child.parent_run_id, child.parent_node, child.backfill_id) = (Some(run), Some("sub".into()), Some(7));
    let child = store.insert_run(&child).await.context("child run")?.context("child id")?;
    ensure_eq!(store.insert_run(&new_run(-1, "queued")).await.context("orphan")?, None);
    let start = RunChange { state: "running".into(), start_time: Some(T + 10), ..RunChange::default() };
    ensure!(store.change_run_state(run, 0, &start).await.context("cas")?, "from seq 0");
    ensure!(!store.change_run_state(run, 0, &start).await.context("cas")?, "seq 0 is gone");
    let end = RunChange {
        state: "failed".into(),
        end_time: Some(T + 20),
        message: Some("node a failed".into()),
        ..RunChange::default()
    };
    ensure!(store.change_run_state(run, 1, &end).await.context("cas")?, "from seq 1");
    let row = store.load_run(run).await.context("load run")?.context("run")?;
    ensure_eq!(
        (row.state.as_str(), row.seq, row.start_time, row.end_time, row.message.as_deref()),
        ("failed", 2, Some(T + 10), Some(T + 20), Some("node a failed"))
    );
    ensure_eq!((row.params.as_str(), row.deadline_time), ("{\"day\":\"2023-11-14\"}", Some(T + 60_000)));
    let row = store.load_run(child).await.context("load child")?.context("child")?;
    ensure_eq!(
        (row.parent_run_id, row.parent_node.as_deref(), row.backfill_id, row.start_time),
        (Some(run), Some("sub"), Some(7), None)
    );
    let (runs, total) = store.run_page(&RunFilter::default(), 0, 10).await.context("runs")?;
    ensure_eq!((runs.iter().map(|r| r.id).collect::<Vec<_>>(), total), (vec![child, run], 2));
    let filter = RunFilter {
        workflow_id: Some(id),
        states: vec!["failed".into(), "running".into()],
        ..RunFilter::default()
    };
    ensure_eq!(store.run_page(&filter, 0, 10).await.context("runs")?.0[0].id, run);
    let filter =
        RunFilter { workflow_id: Some(other), states: vec!["failed".into()], ..RunFilter::default() };
    ensure_eq!(store.run_page(&filter, 0, 10).await.context("runs")?.1, 0);

    // Node attempts.
    let queued = NodeChange { state: "queued".into(), ready_time: Some(T + 11), ..NodeChange::default() };
    ensure!(store.insert_node_attempt(run, "a", 1, &queued).await.context("node")?, "inserted");
    ensure!(!store.insert_node_attempt(run, "a", 1, &queued).await.context("node")?, "exists already");
    ensure!(store.insert_node_attempt(run, "b", 1, &queued).await.context("node")?, "inserted");
    let sent = NodeChange {
        state: "running".into(),
        send_time: Some(T + 12),
        param: Some("day=2023-11-14".into()),
        ..NodeChange::default()
    };
    ensure!(store.change_node_state(run, "a", 1, 0, &sent).await.context("cas")?, "from seq 0");
    ensure!(!store.change_node_state(run, "a", 1, 0, &sent).await.context("cas")?, "seq 0 is gone");
    let failed = NodeChange {
        state: "waiting_retry".into(),
        retry_time: Some(T + 5_000),
        end_time: Some(T + 13),
        output: Some("{\"rows\":0}".into()),
        message: Some("exit 1".into()),
        acted_by: Some("admin".into()),
        ..NodeChange::default()
    };
    ensure!(store.change_node_state(run, "a", 1, 1, &failed).await.context("cas")?, "from seq 1");
    ensure!(store.insert_node_attempt(run, "a", 2, &queued).await.context("retry")?, "attempt 2");
    let latest = store.latest_node_attempts(run).await.context("latest")?;
    ensure_eq!(
        latest.iter().map(|n| (n.node.as_str(), n.attempt, n.state.as_str())).collect::<Vec<_>>(),
        vec![("a", 2, "queued"), ("b", 1, "queued")]
    );
    let all = store.node_attempts(run).await.context("attempts")?;
    ensure_eq!(all.len(), 3);
    let first = &all[0];
    ensure_eq!(
        (first.attempt, first.seq, first.ready_time, first.send_time, first.retry_time, first.end_time),
        (1, 2, Some(T + 11), Some(T + 12), Some(T + 5_000), Some(T + 13))
    );
    ensure_eq!(
        (
            first.param.as_deref(),
            first.output.as_deref(),
            first.message.as_deref(),
            first.acted_by.as_deref()
        ),
        (Some("day=2023-11-14"), Some("{\"rows\":0}"), Some("exit 1"), Some("admin"))
    );

    // Trigger ids of a sharded attempt.
    for shard in 0..2 {
        let trigger = NodeTrigger {
            log_id: 900 + i64::from(shard),
            run_id: run,
            node: "a".into(),
            attempt: 2,
            shard_index: shard,
            shard_total: 2,
        };
        store.insert_node_trigger(&trigger).await.context("trigger")?;
    }
    let found = store.node_trigger(901).await.context("by log id")?.context("trigger 901")?;
    ensure_eq!((found.run_id, found.node.as_str(), found.attempt, found.shard_index), (run, "a", 2, 1));
    ensure_eq!(store.node_trigger(902).await.context("by log id")?, None);
    let shards = store.node_triggers(run, "a", 2).await.context("shards")?;
    ensure_eq!(shards.iter().map(|t| t.log_id).collect::<Vec<_>>(), vec![900, 901]);
    Ok(())
}

async fn workflow_with_unfinished_runs_is_not_deleted(backend: Backend) -> TestResult {
    let (_db, store) = ready_store(backend).await?;
    let id = store.insert_workflow(&head("busy"), "{}", None, T).await.context("insert")?;
    let keep = store.insert_workflow(&head("kept"), "{}", None, T).await.context("insert")?;
    let kept_run = store.insert_run(&new_run(keep, "running")).await.context("run")?.context("id")?;
    let run = store.insert_run(&new_run(id, "succeeded")).await.context("run")?.context("id")?;
    store
        .insert_node_attempt(run, "a", 1, &NodeChange { state: "succeeded".into(), ..NodeChange::default() })
        .await
        .context("node")?;
    let trigger =
        NodeTrigger { log_id: 1, run_id: run, node: "a".into(), attempt: 1, shard_index: 0, shard_total: 1 };
    store.insert_node_trigger(&trigger).await.context("trigger")?;
    for state in ["queued", "running", "paused"] {
        let live = store.insert_run(&new_run(id, state)).await.context("run")?.context("id")?;
        match store.delete_workflow(id).await {
            Err(StorageError::WorkflowBusy { id: busy, runs: 1 }) => ensure_eq!(busy, id),
            other => return Err(format!("deleted with a {state} run: {other:?}").into()),
        }
        ensure!(store.load_workflow(id).await.context("load")?.is_some(), "still there ({state})");
        let over = RunChange { state: "stopped".into(), end_time: Some(T), ..RunChange::default() };
        ensure!(store.change_run_state(live, 0, &over).await.context("stop")?, "stopped");
    }
    ensure!(store.delete_workflow(id).await.context("delete")?, "deleted once its runs are over");
    ensure!(!store.delete_workflow(id).await.context("delete")?, "gone");
    ensure_eq!(store.load_workflow(id).await.context("load")?, None);
    ensure_eq!(store.load_workflow_version(id, 1).await.context("version")?, None);
    ensure_eq!(store.load_run(run).await.context("run")?, None);
    ensure_eq!(store.node_attempts(run).await.context("nodes")?.len(), 0);
    ensure_eq!(store.node_trigger(1).await.context("trigger")?, None);
    // The other workflow keeps everything.
    ensure_eq!(store.load_run(kept_run).await.context("kept run")?.map(|r| r.workflow_id), Some(keep));
    ensure_eq!(store.insert_run(&new_run(id, "queued")).await.context("run of a deleted workflow")?, None);
    Ok(())
}

/// The statements of a script, as schema.rs splits them.
fn statements(script: &str) -> Vec<String> {
    let code: Vec<&str> = script.lines().filter(|l| !l.trim_start().starts_with("--")).collect();
    code.join("\n").split(';').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect()
}

/// An account that may read and write but not create tables is refused with the missing tables and the
/// statements to run; once a DBA ran them, it uses the tables as they are.
async fn account_without_create_rights_is_given_the_statements(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    db.open().await?.close().await;
    let user = format!("u{}", &db.name[db.name.len().saturating_sub(20)..]);
    let (grants, dialect): (Vec<String>, _) = match backend {
        Backend::Postgres => (
            vec![
                format!("CREATE ROLE {user} LOGIN PASSWORD 'pw'"),
                "REVOKE CREATE ON SCHEMA public FROM PUBLIC".into(),
                format!("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {user}"),
                format!("GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {user}"),
                format!("ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {user}"),
                format!("ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE ON SEQUENCES TO {user}"),
            ],
            Dialect::Postgres,
        ),
        _ => (
            vec![
                format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'"),
                format!("GRANT SELECT, INSERT, UPDATE, DELETE ON `{}`.* TO '{user}'@'%'", db.name),
            ],
            Dialect::MySql,
        ),
    };
    let mut root = db.connect().await?;
    for grant in &grants {
        root.execute(grant).await?;
    }
    let outcome = limited_account(&db, &user, dialect).await;
    // The account is the server's, not the database's: dropped whatever happened.
    let drop = match backend {
        Backend::Postgres => vec![format!("DROP OWNED BY {user}")],
        _ => vec![format!("DROP USER '{user}'@'%'")],
    };
    for statement in drop {
        root.execute(&statement).await?;
    }
    drop_role(&db, &user).await?;
    outcome
}

async fn limited_account(db: &TestDb, user: &str, dialect: Dialect) -> TestResult {
    let server = db.backend.server_url().context("server")?;
    let (scheme, rest) = server.split_once("://").context("URL")?;
    let host = rest.rsplit('@').next().unwrap_or(rest);
    let url = format!("{scheme}://{user}:pw@{host}/{}", db.name);
    let args = vec![format!("--spring.datasource.url={url}")];
    let cwd = tempfile::tempdir().context("temp dir")?;
    let loaded = xxl_job_admin::config::Config::load(&args, Vec::<(String, String)>::new(), cwd.path())
        .map_err(|e| Failed::from(format!("config: {e}")))?;
    let (store, _) = xxl_job_admin::storage::connect(&loaded.config.datasource).await.context("connect")?;
    let message = match store.ensure_extension_tables().await {
        Err(e @ StorageError::ExtensionTablesDenied { .. }) => e.to_string(),
        other => return Err(format!("created without the right: {other:?}").into()),
    };
    for part in ["xxl_job_ext_workflow_trigger", "xxl-job-admin ddl", "CREATE TABLE IF NOT EXISTS"] {
        ensure!(message.contains(part), "{part:?} in {message}");
    }
    // A DBA runs the script; the same handle then finds the tables, needing no right to create.
    let mut root = db.connect().await?;
    for statement in statements(extension_ddl(dialect)) {
        root.execute(&statement).await?;
    }
    store.ensure_extension_tables().await.context("after the DBA")?;
    let id = store.insert_workflow(&head("limited"), "{}", None, T).await.context("insert")?;
    ensure_eq!(store.load_workflow(id).await.context("load")?.map(|w| w.name), Some("limited".to_string()));
    store.close().await;
    Ok(())
}

/// A PostgreSQL role outlives the database; MySQL's user is gone already.
async fn drop_role(db: &TestDb, user: &str) -> TestResult {
    if db.backend == Backend::Postgres {
        let mut server = db.server().await?;
        // The database goes first: a role with rights in a database cannot be dropped.
        server.execute(&format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", db.name)).await?;
        server.execute(&format!("DROP ROLE {user}")).await?;
    }
    Ok(())
}

/// `ddl` prints each backend's script whole, for `--dialect` or the configured database, and connects to
/// nothing (no SQLite file appears).
async fn ddl_command_prints_the_script_of_each_database(_: Backend) -> TestResult {
    let binary = env!("CARGO_BIN_EXE_xxl-job-admin");
    let dir = tempfile::tempdir().context("temp dir")?;
    let file = dir.path().join("never.db");
    let sqlite_url = format!("--spring.datasource.url=sqlite:{}", file.display());
    for (args, dialect) in [
        (vec!["ddl", "--dialect", "mysql"], Dialect::MySql),
        (vec!["ddl", "--dialect=PostgreSQL"], Dialect::Postgres),
        (vec!["ddl", "--dialect", "sqlite"], Dialect::Sqlite),
        (vec!["ddl", "--spring.datasource.url=jdbc:postgresql://db.invalid:5432/xxl_job"], Dialect::Postgres),
        (vec!["ddl", "--spring.datasource.url=jdbc:mysql://db.invalid:3306/xxl_job"], Dialect::MySql),
        (vec!["ddl", sqlite_url.as_str()], Dialect::Sqlite),
    ] {
        let output =
            Command::new(binary).args(&args).current_dir(dir.path()).env_clear().output().context("run")?;
        ensure_eq!(output.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        ensure_eq!(String::from_utf8_lossy(&output.stdout), extension_ddl(dialect), "{args:?}");
    }
    ensure!(!file.exists(), "ddl created the SQLite file");
    let refused =
        Command::new(binary).args(["ddl", "--dialect", "oracle"]).env_clear().output().context("run")?;
    ensure_eq!(refused.status.code(), Some(2));
    ensure!(String::from_utf8_lossy(&refused.stderr).contains("mysql, postgres or sqlite"), "{refused:?}");
    let help = Command::new(binary).args(["ddl", "--help"]).env_clear().output().context("run")?;
    ensure!(String::from_utf8_lossy(&help.stdout).contains("xxl-job-admin ddl [--dialect"), "{help:?}");
    Ok(())
}
