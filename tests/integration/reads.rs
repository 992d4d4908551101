//! What the statements every admin runs every few seconds read, counted by the database server: on a
//! log table of many settled rows, the monitors' searches for rows without a result must read those
//! rows, not the table. An `ORDER BY trigger_time … LIMIT` in the lost-result sweep once made MariaDB
//! walk the trigger-time index over every row older than a minute, every 10 s.
//!
//! A private MariaDB server, so that its global handler counters count this test's reads alone.

use crate::support::fixtures::db_at;
use crate::support::private_mariadb::PrivateMariaDb;
use crate::support::{now_ms, Backend, Context};
use crate::{cases, ensure, Case, TestResult, MYSQL_ONLY};
use sqlx::{MySqlConnection, Row};
use std::future::Future;

pub fn cases() -> Vec<Case> {
    cases! {
        "reads" {
            MYSQL_ONLY => the_monitors_read_the_rows_without_a_result_not_the_log_table needs [PrivateMariadb],
        }
    }
}

const DATABASE: &str = "xxl_job";
/// Settled rows, an hour to 45 minutes old: older than every monitor's cut-off.
const SETTLED: i64 = 100_000;
/// Rows whose trigger was sent a moment ago and whose result has not come yet: a tenth of the settled
/// ones, as in a busy admin's first minutes, the share at which MariaDB chose the trigger-time index for
/// the sweep's former `ORDER BY trigger_time` (with fewer, it read `I_handle_code` either way).
const IN_FLIGHT: i64 = 10_000;
/// What one search may read: the rows without a result, with room for the server's own reads (this
/// count's query reads a few dozen status rows); the whole table is eleven times as many.
const READ_LIMIT: u64 = 2 * IN_FLIGHT as u64;

async fn the_monitors_read_the_rows_without_a_result_not_the_log_table(_backend: Backend) -> TestResult {
    let server = PrivateMariaDb::start().await?;
    let url = server.jdbc_url(DATABASE);
    // Opening the data layer creates the database and its schema.
    let db = db_at(&url).await?;
    let mut conn = server.connect(DATABASE).await?;
    let now = now_ms();
    let settled_from = db.datetime(now - 3_600_000);
    let in_flight_at = db.datetime(now - 1_000);
    // A hundred rows a second, as a busy admin writes them; `seq_1_to_N` is MariaDB's sequence engine.
    let settled = format!(
        "INSERT INTO xxl_job_log (job_group, job_id, trigger_time, trigger_code, handle_time, handle_code, alarm_status) \
         SELECT 1, seq % 100 + 1, ? + INTERVAL seq DIV 100 SECOND, 200, ? + INTERVAL seq DIV 100 SECOND, 200, 1 FROM seq_1_to_{SETTLED}"
    );
    sqlx::query(&settled)
        .bind(settled_from)
        .bind(settled_from)
        .execute(&mut conn)
        .await
        .context("settled rows")?;
    let in_flight = format!(
        "INSERT INTO xxl_job_log (job_group, job_id, trigger_time, trigger_code, handle_code, executor_address) \
         SELECT 1, seq % 100 + 1, ?, 200, 0, 'http://127.0.0.1:9999/' FROM seq_1_to_{IN_FLIGHT}"
    );
    sqlx::query(&in_flight).bind(in_flight_at).execute(&mut conn).await.context("rows in flight")?;
    // Statistics as a long-running database has them.
    sqlx::query("ANALYZE TABLE xxl_job_log").execute(&mut conn).await.context("analyze")?;

    let mut reads = Vec::new();
    let (unsettled, read) = counting(&mut conn, db.find_unsettled_logs(now - 60_000, 1_000)).await?;
    ensure!(unsettled.context("lost-result sweep")?.is_empty(), "the rows in flight are not a minute old");
    reads.push(("lost-result sweep (rows without a trigger result a minute old)", read));
    let (lost, read) = counting(&mut conn, db.find_lost_log_ids(now - 600_000, 0, 1_000)).await?;
    ensure!(lost.context("lost monitor")?.is_empty(), "no run is ten minutes old");
    reads.push(("lost monitor (runs ten minutes old on a vanished executor)", read));
    let (failed, read) = counting(&mut conn, db.find_fail_log_ids(0, 1_000)).await?;
    ensure!(failed.context("fail monitor")?.is_empty(), "nothing failed");
    reads.push(("fail monitor (failed logs not yet alarmed)", read));
    let (untriggered, read) = counting(&mut conn, db.first_untriggered_log_after(0)).await?;
    ensure!(untriggered.context("fail monitor's cursor")?.is_none(), "every trigger has its result");
    reads.push(("fail monitor's cursor (first row without a trigger result)", read));

    let over: Vec<String> = reads
        .iter()
        .filter(|(_, read)| *read > READ_LIMIT)
        .map(|(what, read)| format!("{what}: {read} rows"))
        .collect();
    ensure!(
        over.is_empty(),
        "with {SETTLED} settled rows and {IN_FLIGHT} in flight, a search may read {READ_LIMIT} rows; these read more:\n{}",
        over.join("\n")
    );
    Ok(())
}

/// The result of `search`, and the rows the server read meanwhile: every kind of handler read (index
/// lookups and steps, table scans), as MariaDB counts them for all its connections.
async fn counting<T>(
    conn: &mut MySqlConnection,
    search: impl Future<Output = T>,
) -> Result<(T, u64), libtest_mimic::Failed> {
    let before = rows_read(conn).await?;
    let result = search.await;
    let after = rows_read(conn).await?;
    Ok((result, after.saturating_sub(before)))
}

async fn rows_read(conn: &mut MySqlConnection) -> Result<u64, libtest_mimic::Failed> {
    let rows = sqlx::query("SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Handler_read%'")
        .fetch_all(conn)
        .await
        .context("status")?;
    let mut total = 0;
    for status in rows {
        let value: String = status.try_get(1).context("status value")?;
        total += value.parse::<u64>().context("status number")?;
    }
    Ok(total)
}
