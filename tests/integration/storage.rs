//! The data layer's batched statements of the trigger path, on every backend: each row gets its own
//! values, whatever mix of equal, different and NULL values a batch carries, and the rows a callback
//! joined get its result too.

use crate::support::{fixtures, Backend, Context, TestDb};
use crate::{cases, ensure_eq, Case, TestResult, ALL};
use xxl_job_admin::domain::codes::{AddressType, AlarmStatus, Role, TriggerStatus};
use xxl_job_admin::storage::{HandleInfo, JobGroup, JobUser, TriggerInfo};

pub fn cases() -> Vec<Case> {
    cases! {
        "storage" {
            ALL => batched_trigger_results_land_on_their_rows,
            ALL => job_versions_are_read_by_range_or_list,
            ALL => odd_codes_are_read_and_written_back_as_stored,
        }
    }
}

/// Codes 2.4 never writes (a Java admin or a hand-made row may hold them) read back as they are, in the
/// rows the pages and the scheduler read, without failing the read, and a save writes them back.
async fn odd_codes_are_read_and_written_back_as_stored(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let store = db.open().await?;
    let odd_group = JobGroup {
        id: 0,
        app_name: "odd-app".into(),
        title: "Odd".into(),
        address_type: AddressType::from(2),
        address_list: Some("http://127.0.0.1:9999".into()),
        update_time: None,
    };
    let group = store.insert_group(&odd_group).await.context("insert group")?;
    let mut job = fixtures::job(group);
    job.trigger_status = TriggerStatus::from(2);
    let job = fixtures::insert(&store, &job).await?;
    let log = store.insert_log(group, job, 1_700_000_000_000).await.context("insert log")?;
    ensure_eq!(
        store.update_alarm_status(log, AlarmStatus::New, AlarmStatus::from(7)).await.context("alarm")?,
        1
    );

    let stored = store.load_group(group).await.context("load group")?.context("group")?;
    ensure_eq!(stored.address_type, AddressType::Other(2));
    let auto = store.groups_by_address_type(AddressType::Auto).await.context("auto groups")?;
    ensure_eq!(auto.iter().any(|g| g.id == group), false, "not refreshed from registrations");
    let row = store.load_job(job).await.context("load job")?.context("job")?;
    ensure_eq!(row.trigger_status, TriggerStatus::Other(2));
    let versions = store.job_versions(&[job]).await.context("versions")?;
    ensure_eq!(versions.iter().map(|v| v.trigger_status).collect::<Vec<_>>(), [TriggerStatus::Other(2)]);
    ensure_eq!(
        store.load_log(log).await.context("load log")?.context("log")?.alarm_status,
        AlarmStatus::Other(7)
    );

    // Saved again (a console update of other fields), each code stays.
    store.update_job(&row).await.context("update job")?;
    store.update_group(&stored).await.context("update group")?;
    ensure_eq!(store.load_job(job).await.context("reload")?.context("job")?.trigger_status.code(), 2);
    ensure_eq!(store.load_group(group).await.context("reload")?.context("group")?.address_type.code(), 2);

    // A role other than 0 and 1 is a limited user's, as in 2.4.2, and a password change keeps it.
    let user = JobUser {
        id: 0,
        username: "odd-role".into(),
        password: "x".into(),
        role: Role::from(5),
        permission: None,
    };
    let user = store.insert_user(&user).await.context("insert user")?;
    let read = store.load_user(user).await.context("load user")?.context("user")?;
    ensure_eq!((read.role, read.role == Role::Admin), (Role::Other(5), false));
    store.update_user(user, Some("y"), read.role, None).await.context("update user")?;
    ensure_eq!(store.load_user(user).await.context("reload")?.context("user")?.role.code(), 5);
    Ok(())
}

/// The leader's check of the jobs it is about to fire: dense ids are read as one range, sparse ones as
/// lists; either way exactly the jobs asked for, stopped ones with their status, deleted ones absent.
async fn job_versions_are_read_by_range_or_list(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let store = db.open().await?;
    let mut ids = Vec::new();
    for n in 0..300 {
        let mut job = fixtures::job(1);
        job.trigger_status = TriggerStatus::from(i16::from(n % 3 != 0));
        ids.push(fixtures::insert(&store, &job).await?);
    }
    store.delete_job(ids[1]).await.context("delete")?;
    // Dense: most of a range, with holes the range read must leave out.
    let dense: Vec<i32> =
        ids[..250].iter().copied().enumerate().filter(|(n, _)| n % 7 != 4).map(|(_, id)| id).collect();
    let sparse: Vec<i32> = ids.iter().copied().step_by(3).collect();
    for (what, asked) in [("dense", dense), ("sparse", sparse)] {
        let mut got: Vec<(i32, i16)> = store
            .job_versions(&asked)
            .await
            .context("versions")?
            .into_iter()
            .map(|v| (v.id, v.trigger_status.code()))
            .collect();
        got.sort_unstable();
        let wanted: Vec<(i32, i16)> = ids
            .iter()
            .enumerate()
            .filter(|(n, id)| asked.contains(id) && *n != 1)
            .map(|(n, id)| (*id, i16::from(n % 3 != 0)))
            .collect();
        ensure_eq!(got, wanted, "{what}");
    }
    Ok(())
}

/// More rows than one statement takes (200), so the batches' edges are crossed too.
const ROWS: i64 = 450;
const T: i64 = 1_700_000_000_000;

fn info(row: i64) -> TriggerInfo {
    TriggerInfo {
        trigger_time_ms: T + (row % 3) * 1_000,
        trigger_code: if row % 2 == 0 { 200 } else { 500 },
        trigger_msg: Some(format!("msg {row}").into()),
        executor_address: (row % 5 != 0).then(|| format!("http://e{}:9999/", row % 4)),
        executor_handler: Some("handler".into()),
        executor_param: None,
        executor_sharding_param: (row % 7 == 0).then(|| "0/2".to_string()),
        executor_fail_retry_count: 2,
    }
}

async fn batched_trigger_results_land_on_their_rows(backend: Backend) -> TestResult {
    let db = TestDb::fresh(backend)?;
    let store = db.open().await?;
    let rows: Vec<(i32, i32)> = (0..ROWS as i32).map(|i| (1, 100 + i)).collect();
    let ids = store.insert_logs(&rows, T).await.context("insert")?;
    ensure_eq!(ids.len() as i64, ROWS);
    // Every third row with a callback's result joined, of two kinds.
    let handled = |row: i64| {
        (row % 3 == 0).then(|| HandleInfo {
            time_ms: T + 5_000 + row,
            code: if row % 2 == 0 { 200 } else { 500 },
            msg: format!("done {row}"),
        })
    };
    let updates: Vec<(i64, TriggerInfo, Option<HandleInfo>)> =
        ids.iter().enumerate().map(|(row, id)| (*id, info(row as i64), handled(row as i64))).collect();
    ensure_eq!(store.update_trigger_results(&updates).await.context("update")?, ROWS as u64);
    for (row, (id, expected, handled)) in updates.iter().enumerate() {
        let log = store.load_log(*id).await.context("load")?.context("row")?;
        let zone = store.zone();
        let got = (
            log.job_id,
            log.trigger_time.map(|t| zone.to_epoch_ms(t)),
            log.trigger_code,
            log.trigger_msg.clone(),
            log.executor_address.clone(),
            log.executor_sharding_param.clone(),
            log.executor_param.clone(),
            log.executor_fail_retry_count,
        );
        let wanted = (
            100 + row as i32,
            Some(expected.trigger_time_ms),
            expected.trigger_code,
            expected.trigger_msg.as_deref().map(str::to_string),
            expected.executor_address.clone(),
            expected.executor_sharding_param.clone(),
            None,
            2,
        );
        ensure_eq!(got, wanted, "row {row} (log {id})");
        let handle = (log.handle_time.map(|t| zone.to_epoch_ms(t)), log.handle_code, log.handle_msg.clone());
        let wanted = match handled {
            // handle_time keeps whole seconds, rounded as the column stores them.
            Some(h) => (Some((h.time_ms + 500) / 1_000 * 1_000), h.code, Some(h.msg.clone())),
            None => (None, 0, None),
        };
        ensure_eq!(handle, wanted, "the handle columns of row {row} (log {id})");
    }
    // Alike rows (jobs configured the same, finished in the same second) take the id-list path: two sets
    // of values, each written whole, and nothing else touched.
    let alike: Vec<(i64, TriggerInfo, Option<HandleInfo>)> = ids[..300]
        .iter()
        .enumerate()
        .map(|(row, id)| {
            (
                *id,
                info(row as i64 % 2 * 2),
                Some(HandleInfo { time_ms: T, code: 200, msg: format!("alike {}", row % 2) }),
            )
        })
        .collect();
    ensure_eq!(store.update_trigger_results(&alike).await.context("update alike")?, 300);
    for (row, id) in ids.iter().enumerate() {
        let log = store.load_log(*id).await.context("load")?.context("row")?;
        let wanted = if row < 300 {
            format!("alike {}", row % 2)
        } else {
            updates[row].2.as_ref().map(|h| h.msg.clone()).unwrap_or_default()
        };
        ensure_eq!(
            (log.handle_msg.unwrap_or_default(), log.trigger_msg),
            (
                wanted,
                info(if row < 300 { row as i64 % 2 * 2 } else { row as i64 })
                    .trigger_msg
                    .as_deref()
                    .map(str::to_string)
            ),
            "row {row} after the alike update"
        );
    }
    Ok(())
}
