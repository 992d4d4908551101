//! `xxl_job_log` statements (2.4.2: XxlJobLogDao).

use super::sql::RowsUpdate;
use super::{group_alike, placeholders, restrict_groups, Arg, DayCounts, Db, JobLog, Result, IN_LIST_MAX};
use crate::domain::codes::AlarmStatus;
use crate::time::Zone;
use chrono::NaiveDateTime;
use std::sync::Arc;

pub(super) const DELETE_LOGS_OF_JOB: &str = "DELETE FROM xxl_job_log WHERE job_id = ?";

/// What a callback reads of a log row, and whether its job starts child jobs.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct HandleState {
    pub id: i64,
    pub job_id: i32,
    pub handle_code: i32,
    pub handle_msg: Option<String>,
    /// The job's `child_jobid` (`None` when the job is gone).
    pub child_jobid: Option<String>,
}

/// Log ids after `after` and, when `upto` is given, up to it inclusive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IdSpan {
    pub after: i64,
    pub upto: Option<i64>,
}

impl IdSpan {
    /// Every log.
    pub const ALL: IdSpan = IdSpan { after: 0, upto: None };

    /// `WHERE` conditions for the logs triggered between `from` and `to` inclusive with an id in the span
    /// (ids start at 1), with their arguments.
    fn of_day(&self, from: NaiveDateTime, to: NaiveDateTime) -> (String, Vec<Arg>) {
        let mut conditions = String::from("trigger_time BETWEEN ? AND ?");
        let mut args = vec![Arg::DateTime(from), Arg::DateTime(to)];
        if self.after > 0 {
            conditions.push_str(" AND id > ?");
            args.push(Arg::Int(self.after));
        }
        if let Some(upto) = self.upto {
            conditions.push_str(" AND id <= ?");
            args.push(Arg::Int(upto));
        }
        (conditions, args)
    }
}

/// An execution's result, as a callback reports it (the `handle_*` columns).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandleInfo {
    pub time_ms: i64,
    pub code: i32,
    pub msg: String,
}

/// The trigger columns written after `/run` (and again when a retry is noted).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TriggerInfo {
    pub trigger_time_ms: i64,
    pub trigger_code: i32,
    /// Shared: thousands of results waiting to be written hold a few reports between them (a job's
    /// report reads the same fire after fire, and jobs configured alike share one).
    pub trigger_msg: Option<Arc<str>>,
    pub executor_address: Option<String>,
    pub executor_handler: Option<String>,
    pub executor_param: Option<String>,
    pub executor_sharding_param: Option<String>,
    pub executor_fail_retry_count: i32,
}

/// The console's `logStatus` filter (2.4.2: XxlJobLogDao.pageList).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LogStatusFilter {
    #[default]
    All,
    Success,
    Failure,
    Running,
}

impl LogStatusFilter {
    pub fn from_code(code: i32) -> LogStatusFilter {
        match code {
            1 => LogStatusFilter::Success,
            2 => LogStatusFilter::Failure,
            3 => LogStatusFilter::Running,
            _ => LogStatusFilter::All,
        }
    }
}

/// The console's log list filters.
#[derive(Debug, Clone, Default)]
pub struct LogFilter {
    /// Only applied when `job_id` is 0.
    pub job_group: i32,
    pub job_id: i32,
    /// Only logs of these groups (a restricted user's permitted groups); `None` = no restriction.
    pub permitted_groups: Option<Vec<i32>>,
    pub trigger_time_from: Option<NaiveDateTime>,
    pub trigger_time_to: Option<NaiveDateTime>,
    pub status: LogStatusFilter,
}

impl LogFilter {
    fn where_clause(&self) -> (String, Vec<Arg>) {
        let mut sql = String::from(" WHERE 1 = 1");
        let mut args = Vec::new();
        if self.job_id == 0 && self.job_group > 0 {
            sql.push_str(" AND job_group = ?");
            args.push(Arg::Int(self.job_group.into()));
        }
        if self.job_id > 0 {
            sql.push_str(" AND job_id = ?");
            args.push(Arg::Int(self.job_id.into()));
        }
        restrict_groups(&mut sql, &mut args, self.permitted_groups.as_deref());
        if let Some(from) = self.trigger_time_from {
            sql.push_str(" AND trigger_time >= ?");
            args.push(Arg::DateTime(from));
        }
        if let Some(to) = self.trigger_time_to {
            sql.push_str(" AND trigger_time <= ?");
            args.push(Arg::DateTime(to));
        }
        sql.push_str(match self.status {
            LogStatusFilter::All => "",
            LogStatusFilter::Success => " AND handle_code = 200",
            LogStatusFilter::Failure => " AND (trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200))",
            LogStatusFilter::Running => " AND trigger_code = 200 AND handle_code = 0",
        });
        (sql, args)
    }
}

impl Db {
    /// Creates the row of a trigger before anything is sent (2.4.2: XxlJobTrigger.processTrigger); returns
    /// its id.
    pub async fn insert_log(&self, job_group: i32, job_id: i32, trigger_time_ms: i64) -> Result<i64> {
        let args = [
            Arg::Int(job_group.into()),
            Arg::Int(job_id.into()),
            Arg::DateTime(self.datetime(trigger_time_ms)),
        ];
        self.insert_id(
            "INSERT INTO xxl_job_log (job_group, job_id, trigger_time, trigger_code, handle_code) VALUES (?, ?, ?, 0, 0)",
            &args,
        )
        .await
    }

    pub async fn update_trigger_info(&self, id: i64, info: &TriggerInfo) -> Result<u64> {
        let args: Vec<Arg> =
            trigger_cells(self, info).into_iter().map(Cell::to_arg).chain([Arg::Int(id)]).collect();
        let sets = bound_assignments(&TRIGGER_COLUMNS);
        self.execute(&format!("UPDATE xxl_job_log SET {sets} WHERE id = ?"), &args).await
    }

    /// Writes a result. With `only_if_unfinished` the row must still have no result (`handle_code <= 0`),
    /// which makes the repeat-callback guard atomic; returns the rows matched (0 = someone finished it first).
    pub async fn update_handle_info(
        &self,
        id: i64,
        handle_time_ms: i64,
        handle_code: i32,
        handle_msg: &str,
        only_if_unfinished: bool,
    ) -> Result<u64> {
        let sql = if only_if_unfinished {
            "UPDATE xxl_job_log SET handle_time = ?, handle_code = ?, handle_msg = ?, \
             trigger_code = CASE WHEN trigger_code = 0 THEN 200 ELSE trigger_code END WHERE id = ? AND handle_code <= 0"
        } else {
            "UPDATE xxl_job_log SET handle_time = ?, handle_code = ?, handle_msg = ? WHERE id = ?"
        };
        let args = [
            Arg::DateTime(self.datetime(handle_time_ms)),
            Arg::Int(handle_code.into()),
            Arg::Text(handle_msg.to_string()),
            Arg::Int(id),
        ];
        self.execute(sql, &args).await
    }

    pub async fn load_log(&self, id: i64) -> Result<Option<JobLog>> {
        self.fetch_optional("SELECT * FROM xxl_job_log WHERE id = ?", &[Arg::Int(id)]).await
    }

    /// Failed logs not yet examined by a fail monitor (2.4.2: XxlJobLogDao.findFailJobLogIds), of those
    /// with no result and a failed trigger only the ones after `untriggered_after` (see
    /// [`Db::first_untriggered_log_after`]).
    ///
    /// 2.4.2's condition `NOT ((trigger_code IN (0, 200) AND handle_code = 0) OR handle_code = 200)`, split
    /// into its two disjoint halves (a result other than 0/200; no result and a failed trigger). Written as
    /// one WHERE, MariaDB walks the whole table in id order for the ORDER BY … LIMIT (seconds at a million
    /// rows, every 10 s); each half alone is a range of `I_handle_code` (the first spelt as three ranges:
    /// SQLite and PostgreSQL read every row for a `NOT IN`). The second half's range starts at
    /// `untriggered_after`: `handle_code = 0` alone is half of the index by its statistics, so MariaDB read
    /// the whole table for it (2 s at 735,000 rows), and failed triggers keep `handle_code = 0` for ever.
    pub async fn find_fail_log_ids(&self, untriggered_after: i64, limit: i64) -> Result<Vec<i64>> {
        let ids: Vec<(i64,)> = self
            .fetch_all(
                "SELECT id FROM (\
             SELECT id FROM xxl_job_log WHERE (handle_code < 0 OR handle_code > 0 AND handle_code < 200 OR handle_code > 200) \
             AND alarm_status = 0 \
             UNION ALL \
             SELECT id FROM xxl_job_log WHERE handle_code = 0 AND id > ? AND trigger_code NOT IN (0, 200) AND alarm_status = 0\
             ) t ORDER BY id ASC LIMIT ?",
                &[Arg::Int(untriggered_after), Arg::Int(limit)],
            )
            .await?;
        Ok(ids.into_iter().map(|(id,)| id).collect())
    }

    /// The optimistic claim/release of the fail monitor; returns the rows matched.
    pub async fn update_alarm_status(&self, id: i64, old: AlarmStatus, new: AlarmStatus) -> Result<u64> {
        let args = [Arg::Int(new.code().into()), Arg::Int(id), Arg::Int(old.code().into())];
        self.execute("UPDATE xxl_job_log SET alarm_status = ? WHERE id = ? AND alarm_status = ?", &args).await
    }

    /// Running logs triggered before `losed_time_ms` on an address with no registry row (2.4.2:
    /// XxlJobLogDao.findLostJobIds).
    ///
    /// Up to `limit` of them after the id `after`, in id order. 2.4.2's statement, without the order and
    /// the limit, made MariaDB read the whole table whenever the rows without a result were a tenth of it
    /// or more (a young table at a high rate, or many failed triggers, which keep `handle_code = 0`);
    /// with them it reads those rows along `I_handle_code`, from `after` on.
    pub async fn find_lost_log_ids(&self, losed_time_ms: i64, after: i64, limit: i64) -> Result<Vec<i64>> {
        let losed_time = self.datetime(losed_time_ms);
        let ids: Vec<(i64,)> = self
            .fetch_all(
                "SELECT t.id FROM xxl_job_log t LEFT JOIN xxl_job_registry t2 ON t.executor_address = t2.registry_value \
                 WHERE t.handle_code = 0 AND t.id > ? AND t.trigger_code = 200 AND t.trigger_time <= ? AND t2.id IS NULL \
                 ORDER BY t.id LIMIT ?",
                &[Arg::Int(after), Arg::DateTime(losed_time), Arg::Int(limit)],
            )
            .await?;
        Ok(ids.into_iter().map(|(id,)| id).collect())
    }

    /// Total, running and successful logs triggered between `from` and `to` inclusive (2.4.2:
    /// XxlJobLogDao.findLogReport), of those whose id is in `ids`.
    pub async fn day_counts(&self, from: NaiveDateTime, to: NaiveDateTime, ids: IdSpan) -> Result<DayCounts> {
        let (day, args) = ids.of_day(from, to);
        let sql = format!(
            "SELECT COUNT(handle_code) AS total, \
             COUNT(CASE WHEN trigger_code IN (0, 200) AND handle_code = 0 THEN 1 END) AS running, \
             COUNT(CASE WHEN handle_code = 200 THEN 1 END) AS success \
             FROM xxl_job_log WHERE {day}"
        );
        // An aggregate without GROUP BY always yields its one row.
        Ok(self.fetch_optional(&sql, &args).await?.unwrap_or_default())
    }

    /// How many logs triggered between `from` and `to` inclusive have an id in `ids`: read from the
    /// trigger-time index alone (it holds the id), without the rows.
    pub async fn day_total(&self, from: NaiveDateTime, to: NaiveDateTime, ids: IdSpan) -> Result<i64> {
        let (day, args) = ids.of_day(from, to);
        self.scalar(&format!("SELECT COUNT(*) FROM xxl_job_log WHERE {day}"), &args).await
    }

    /// The lowest id after `after` of a log the report counts as running (no result yet), if any.
    pub async fn first_running_log_after(&self, after: i64) -> Result<Option<i64>> {
        self.first_log_without_result_after(after, "trigger_code IN (0, 200)").await
    }

    /// The lowest id after `after` of a log whose trigger has no result yet (planned, or being sent), if
    /// any. Below it every trigger code is final: a failed trigger without a result there stays one.
    pub async fn first_untriggered_log_after(&self, after: i64) -> Result<Option<i64>> {
        self.first_log_without_result_after(after, "trigger_code = 0").await
    }

    /// `ORDER BY … LIMIT 1` rather than `MIN`: the walk along `I_handle_code` stops at the first match.
    async fn first_log_without_result_after(&self, after: i64, trigger: &str) -> Result<Option<i64>> {
        let sql = format!(
            "SELECT id FROM xxl_job_log WHERE handle_code = 0 AND id > ? AND {trigger} ORDER BY id LIMIT 1"
        );
        let first: Option<(i64,)> = self.fetch_optional(&sql, &[Arg::Int(after)]).await?;
        Ok(first.map(|(id,)| id))
    }

    /// The highest log id (0 for an empty table).
    pub async fn max_log_id(&self) -> Result<i64> {
        self.scalar("SELECT COALESCE(MAX(id), 0) FROM xxl_job_log", &[]).await
    }

    /// Up to `limit` ids to delete: of a group/job (0 = any), triggered at or before a time, and/or not
    /// among the newest `keep_newest` (2.4.2: XxlJobLogDao.findClearLogIds).
    pub async fn find_clear_log_ids(
        &self,
        job_group: i32,
        job_id: i32,
        clear_before: Option<NaiveDateTime>,
        keep_newest: i64,
        limit: i64,
    ) -> Result<Vec<i64>> {
        let mut scope = String::from(" WHERE 1 = 1");
        let mut scope_args = Vec::new();
        if job_group > 0 {
            scope.push_str(" AND job_group = ?");
            scope_args.push(Arg::Int(job_group.into()));
        }
        if job_id > 0 {
            scope.push_str(" AND job_id = ?");
            scope_args.push(Arg::Int(job_id.into()));
        }
        let mut sql = format!("SELECT id FROM xxl_job_log{scope}");
        let mut args = scope_args.clone();
        if let Some(before) = clear_before {
            sql.push_str(" AND trigger_time <= ?");
            args.push(Arg::DateTime(before));
        }
        if keep_newest > 0 {
            // The derived table works around MySQL's refusal of LIMIT inside an IN subquery.
            sql.push_str(&format!(
                " AND id NOT IN (SELECT id FROM (SELECT id FROM xxl_job_log{scope} \
                 ORDER BY trigger_time DESC LIMIT ?) t1)"
            ));
            args.extend(scope_args);
            args.push(Arg::Int(keep_newest));
        }
        sql.push_str(" ORDER BY id ASC LIMIT ?");
        args.push(Arg::Int(limit));
        let ids: Vec<(i64,)> = self.fetch_all(&sql, &args).await?;
        Ok(ids.into_iter().map(|(id,)| id).collect())
    }

    pub async fn delete_logs(&self, ids: &[i64]) -> Result<u64> {
        if ids.is_empty() {
            return Ok(0);
        }
        let sql = format!("DELETE FROM xxl_job_log WHERE id IN ({})", placeholders(ids.len()));
        let args: Vec<Arg> = ids.iter().map(|id| Arg::Int(*id)).collect();
        self.execute(&sql, &args).await
    }

    pub async fn delete_logs_of_job(&self, job_id: i32) -> Result<u64> {
        self.execute(DELETE_LOGS_OF_JOB, &[Arg::Int(job_id.into())]).await
    }

    /// One page of logs, newest trigger first, and the number matching the filter.
    pub async fn page_logs(&self, filter: &LogFilter, offset: i64, limit: i64) -> Result<(Vec<JobLog>, i64)> {
        let (clause, args) = filter.where_clause();
        self.page("xxl_job_log", &clause, &args, "ORDER BY trigger_time DESC", offset, limit).await
    }

    /// The newest log row of each of these jobs that has one (the job dependency graph's colours).
    pub async fn last_logs_of_jobs(&self, job_ids: &[i32]) -> Result<Vec<JobLog>> {
        let mut rows = Vec::with_capacity(job_ids.len());
        for chunk in job_ids.chunks(IN_LIST_MAX) {
            let sql = format!(
                "SELECT * FROM xxl_job_log WHERE id IN \
                 (SELECT MAX(id) FROM xxl_job_log WHERE job_id IN ({}) GROUP BY job_id)",
                placeholders(chunk.len())
            );
            let args: Vec<Arg> = chunk.iter().map(|id| Arg::Int((*id).into())).collect();
            rows.extend(self.fetch_all::<JobLog>(&sql, &args).await?);
        }
        Ok(rows)
    }
}

/// The columns of a trigger result ([`Db::update_trigger_info`] writes them), in [`trigger_cells`]' order.
const TRIGGER_COLUMNS: [&str; 8] = [
    "trigger_time",
    "trigger_code",
    "trigger_msg",
    "executor_address",
    "executor_handler",
    "executor_param",
    "executor_sharding_param",
    "executor_fail_retry_count",
];
/// The columns of the execution's result a callback joined to a trigger result.
const HANDLE_COLUMNS: [&str; 3] = ["handle_time", "handle_code", "handle_msg"];

/// `a = ?, b = ?, …`: each of `columns` set to an argument, in order.
fn bound_assignments(columns: &[&str]) -> String {
    columns.iter().map(|name| format!("{name} = ?")).collect::<Vec<_>>().join(", ")
}

/// A value to write, borrowed from the row it belongs to: a round's rows are compared and grouped
/// without copying their texts, which are copied into a statement's arguments only when it is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Cell<'a> {
    Int(i64),
    Text(Option<&'a str>),
    DateTime(NaiveDateTime),
}

impl Cell<'_> {
    fn to_arg(self) -> Arg {
        match self {
            Cell::Int(v) => Arg::Int(v),
            Cell::Text(v) => Arg::OptText(v.map(str::to_string)),
            Cell::DateTime(v) => Arg::DateTime(v),
        }
    }
}

/// A trigger result's values, in the order of [`TRIGGER_COLUMNS`].
fn trigger_cells<'a>(db: &Db, info: &'a TriggerInfo) -> [Cell<'a>; 8] {
    [
        Cell::DateTime(db.datetime(info.trigger_time_ms)),
        Cell::Int(info.trigger_code.into()),
        Cell::Text(info.trigger_msg.as_deref()),
        Cell::Text(info.executor_address.as_deref()),
        Cell::Text(info.executor_handler.as_deref()),
        Cell::Text(info.executor_param.as_deref()),
        Cell::Text(info.executor_sharding_param.as_deref()),
        Cell::Int(info.executor_fail_retry_count.into()),
    ]
}

/// One row's values in column order: [`TRIGGER_COLUMNS`], then [`HANDLE_COLUMNS`] when a callback
/// joined. Rows of one round are all of either width.
#[derive(PartialEq, Eq, Hash)]
struct ResultCells<'a> {
    trigger: [Cell<'a>; 8],
    handle: Option<[Cell<'a>; 3]>,
}

impl<'a> ResultCells<'a> {
    fn of(db: &Db, info: &'a TriggerInfo, handled: Option<&'a HandleInfo>) -> Self {
        let handle = handled.map(|h| {
            [Cell::DateTime(db.datetime(h.time_ms)), Cell::Int(h.code.into()), Cell::Text(Some(&h.msg))]
        });
        ResultCells { trigger: trigger_cells(db, info), handle }
    }

    fn names(handled: bool) -> Vec<&'static str> {
        TRIGGER_COLUMNS.iter().chain(if handled { &HANDLE_COLUMNS[..] } else { &[] }).copied().collect()
    }

    fn cell(&self, column: usize) -> Cell<'a> {
        match column.checked_sub(TRIGGER_COLUMNS.len()) {
            None => self.trigger[column],
            Some(k) => self.handle.map_or(Cell::Text(None), |h| h[k]),
        }
    }

    fn args(&self) -> impl Iterator<Item = Arg> + '_ {
        self.trigger.iter().chain(self.handle.iter().flatten()).map(|cell| cell.to_arg())
    }
}

// ---- Batched statements of the trigger and callback paths -------------------------------------------

/// A new log row: written before its trigger is sent, with no result yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLog {
    pub job_group: i32,
    pub job_id: i32,
    pub trigger_time_ms: i64,
    /// What `trigger_msg` says until the trigger result is written: for a planned fire, who planned it
    /// and when it goes out (see `crate::domain::ownership`).
    pub trigger_msg: Option<String>,
}

/// The multi-row INSERTs of `rows`, one per [`LOG_BATCH`]: statement, arguments and row count.
pub(super) fn log_inserts(
    zone: Zone,
    rows: &[NewLog],
) -> impl Iterator<Item = (String, Vec<Arg>, usize)> + '_ {
    rows.chunks(LOG_BATCH).map(move |chunk| {
        let values = vec!["(?, ?, ?, 0, ?, 0)"; chunk.len()].join(", ");
        let insert = format!(
            "INSERT INTO xxl_job_log (job_group, job_id, trigger_time, trigger_code, trigger_msg, handle_code) VALUES {values}"
        );
        let args = chunk
            .iter()
            .flat_map(|r| {
                [
                    Arg::Int(r.job_group.into()),
                    Arg::Int(r.job_id.into()),
                    Arg::DateTime(zone.to_datetime(r.trigger_time_ms)),
                    Arg::OptText(r.trigger_msg.clone()),
                ]
            })
            .collect();
        (insert, args, chunk.len())
    })
}

/// Rows per batched INSERT/UPDATE of log rows.
const LOG_BATCH: usize = RowsUpdate::MAX_ROWS;

impl Db {
    /// Creates the rows of several triggers, all at `trigger_time_ms`, before anything is sent (2.4.2:
    /// XxlJobTrigger.processTrigger); returns their ids in the order of `rows` (`(job_group, job_id)`).
    pub async fn insert_logs(&self, rows: &[(i32, i32)], trigger_time_ms: i64) -> Result<Vec<i64>> {
        let rows: Vec<NewLog> = rows
            .iter()
            .map(|&(job_group, job_id)| NewLog { job_group, job_id, trigger_time_ms, trigger_msg: None })
            .collect();
        self.insert_rows(&rows).await
    }

    /// [`Db::insert_logs`] with a trigger time per row, one multi-row INSERT per 200 rows.
    pub async fn insert_rows(&self, rows: &[NewLog]) -> Result<Vec<i64>> {
        let mut ids = Vec::with_capacity(rows.len());
        for (insert, args, n) in log_inserts(self.zone(), rows) {
            ids.extend(self.insert_ids(&insert, &args, n).await?);
        }
        Ok(ids)
    }

    /// Writes the trigger columns of several rows (what [`Db::update_trigger_info`] writes for one) and,
    /// for those a callback joined, the handle columns too (what [`Db::update_handle_info`] writes).
    /// Rows with the same values (jobs alike, the same second) are written by one UPDATE of an id list;
    /// when most rows differ, one UPDATE per 200 rows takes each row's values from a derived table (a
    /// column whose value is the same in every row bound once). Returns the rows matched.
    pub async fn update_trigger_results(
        &self,
        rows: &[(i64, TriggerInfo, Option<HandleInfo>)],
    ) -> Result<u64> {
        let (joined, alone): (Vec<_>, Vec<_>) = rows.iter().partition(|(_, _, handled)| handled.is_some());
        let mut written = 0;
        for kind in [alone, joined] {
            let Some((_, _, handled)) = kind.first() else { continue };
            let names = ResultCells::names(handled.is_some());
            let cells =
                kind.iter().map(|(id, info, handled)| (ResultCells::of(self, info, handled.as_ref()), *id));
            if let Some(alike) = group_alike(cells) {
                let sets = bound_assignments(&names);
                for (cells, ids) in alike {
                    let row: Vec<Arg> = cells.args().collect();
                    for chunk in ids.chunks(IN_LIST_MAX) {
                        let sql = format!(
                            "UPDATE xxl_job_log SET {sets} WHERE id IN ({})",
                            placeholders(chunk.len())
                        );
                        let args: Vec<Arg> =
                            row.iter().cloned().chain(chunk.iter().map(|id| Arg::Int(*id))).collect();
                        written += self.execute(&sql, &args).await?;
                    }
                }
                continue;
            }
            for chunk in kind.chunks(LOG_BATCH) {
                let ids: Vec<i64> = chunk.iter().map(|(id, _, _)| *id).collect();
                let rows: Vec<ResultCells> = chunk
                    .iter()
                    .map(|(_, info, handled)| ResultCells::of(self, info, handled.as_ref()))
                    .collect();
                let columns: Vec<(&str, Vec<Arg>)> = names
                    .iter()
                    .enumerate()
                    .map(|(c, name)| (*name, rows.iter().map(|row| row.cell(c).to_arg()).collect()))
                    .collect();
                written += self.update_columns(&ids, &columns).await?;
            }
        }
        Ok(written)
    }

    /// Writes the same result into several rows that have none yet (`handle_code <= 0`, the atomic
    /// repeat-callback guard of [`Db::update_handle_info`]); returns the rows written.
    pub async fn update_handle_infos(
        &self,
        ids: &[i64],
        handle_time_ms: i64,
        handle_code: i32,
        handle_msg: &str,
    ) -> Result<u64> {
        let handle_time = self.datetime(handle_time_ms);
        let mut written = 0;
        for chunk in ids.chunks(IN_LIST_MAX) {
            let sql = format!(
                "UPDATE xxl_job_log SET handle_time = ?, handle_code = ?, handle_msg = ?, \
                 trigger_code = CASE WHEN trigger_code = 0 THEN 200 ELSE trigger_code END WHERE id IN ({}) AND handle_code <= 0",
                placeholders(chunk.len())
            );
            let mut args = vec![
                Arg::DateTime(handle_time),
                Arg::Int(handle_code.into()),
                Arg::Text(handle_msg.to_string()),
            ];
            args.extend(chunk.iter().map(|id| Arg::Int(*id)));
            written += self.execute(&sql, &args).await?;
        }
        Ok(written)
    }

    /// The handle state of the log rows with these ids (missing ones are simply absent): what a callback
    /// needs, without the reports, with its job's child jobs in the same statement.
    pub async fn load_handle_states(&self, ids: &[i64]) -> Result<Vec<HandleState>> {
        let mut rows = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(IN_LIST_MAX) {
            let sql = format!(
                "SELECT l.id, l.job_id, l.handle_code, l.handle_msg, j.child_jobid FROM xxl_job_log l \
                 LEFT JOIN xxl_job_info j ON j.id = l.job_id WHERE l.id IN ({})",
                placeholders(chunk.len())
            );
            let args: Vec<Arg> = chunk.iter().map(|id| Arg::Int(*id)).collect();
            rows.extend(self.fetch_all::<HandleState>(&sql, &args).await?);
        }
        Ok(rows)
    }

    /// `UPDATE xxl_job_log SET <columns> WHERE id IN (ids)`; a column whose value differs between rows
    /// takes each row's own (see [`RowsUpdate`]).
    async fn update_columns(&self, ids: &[i64], columns: &[(&str, Vec<Arg>)]) -> Result<u64> {
        let (uniform, varying): (Vec<_>, Vec<_>) =
            columns.iter().partition(|(_, cells)| cells.windows(2).all(|w| w[0] == w[1]));
        let mut sets: Vec<String> = uniform.iter().map(|(name, _)| format!("{name} = ?")).collect();
        let set_args: Vec<Arg> = uniform.iter().map(|(_, cells)| cells[0].clone()).collect();
        if varying.is_empty() {
            let sql = format!(
                "UPDATE xxl_job_log SET {} WHERE id IN ({})",
                sets.join(", "),
                placeholders(ids.len())
            );
            let args: Vec<Arg> = set_args.into_iter().chain(ids.iter().map(|id| Arg::Int(*id))).collect();
            return self.execute(&sql, &args).await;
        }
        sets.extend(varying.iter().enumerate().map(|(k, (name, _))| format!("{name} = v.c{k}")));
        let rows = ids
            .iter()
            .enumerate()
            .map(|(row, id)| (*id, varying.iter().map(|(_, cells)| cells[row].clone()).collect()))
            .collect();
        let (sql, args) = RowsUpdate { table: "xxl_job_log", sets: &sets, set_args, rows, condition: "" }
            .build(&self.dialect);
        self.execute(&sql, &args).await
    }
}

#[cfg(test)]
mod batch_tests {
    use super::*;
    use crate::storage::testing::{memory_db, trigger_info as info};

    #[tokio::test]
    async fn batched_inserts_return_the_ids_in_row_order_and_updates_write_each_row_its_values() {
        let db = memory_db().await;
        let rows: Vec<(i32, i32)> = (0..450).map(|i| (1, 100 + i)).collect();
        let ids = db.insert_logs(&rows, 1_700_000_000_000).await.unwrap();
        assert_eq!(ids.len(), 450);
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        for (id, (_, job)) in ids.iter().zip(&rows) {
            assert_eq!(db.load_log(*id).await.unwrap().unwrap().job_id, *job);
        }

        // Mixed values come from the derived table, equal ones are bound once; both must land on the right rows.
        let updates: Vec<(i64, TriggerInfo, Option<HandleInfo>)> = ids
            .iter()
            .map(|id| (*id, info(if id % 2 == 0 { 200 } else { 500 }, &format!("msg {id}")), None))
            .collect();
        assert_eq!(db.update_trigger_results(&updates).await.unwrap(), 450);
        for (id, expected, _) in &updates {
            let log = db.load_log(*id).await.unwrap().unwrap();
            assert_eq!(
                (log.trigger_code, log.trigger_msg.as_deref()),
                (expected.trigger_code, expected.trigger_msg.as_deref())
            );
            assert_eq!(
                (log.executor_fail_retry_count, log.executor_address.as_deref()),
                (2, Some("http://e:9999/"))
            );
        }

        // The result is written once: a second write of the same rows matches none of them.
        assert_eq!(db.update_handle_infos(&ids[..10], 1_700_000_001_000, 200, "ok").await.unwrap(), 10);
        assert_eq!(db.update_handle_infos(&ids[..20], 1_700_000_002_000, 500, "late").await.unwrap(), 10);
        let results = db.load_handle_states(&ids[..20]).await.unwrap();
        assert_eq!(
            results.iter().filter(|r| r.handle_code == 200 && r.handle_msg.as_deref() == Some("ok")).count(),
            10
        );
        assert_eq!(results.iter().filter(|r| r.handle_code == 500).count(), 10);
    }
}
