//! One trigger after its log row: its executor address chosen, its `/run` made ready, held until released
//! (a planned fire) and written, and its result reported (2.4.2: XxlJobTrigger.processTrigger).

use super::address::{choose_address, AddressChoice};
use super::resolve::{Sharding, Trigger};
use super::TriggerContext;
use crate::domain::codes::AddressType;
use crate::domain::protocol::FAIL_CODE;
use crate::domain::routing::RouteStrategy;
use crate::domain::trigger_msg::{block_title_key, call_report, TriggerReport};
use crate::domain::{is_blank, java_split};
use crate::executor::{FireHeaders, ReadyRun, TriggerParam};
use crate::storage::TriggerInfo;
use std::future::Future;
use std::pin::Pin;

/// Holds a planned trigger back until it may be written. Either `false` means it is not sent (and gets no
/// result: whoever held it back accounts for its row).
pub struct Release {
    /// Resolves once the trigger is due (and covered by the watermark); `false`: it is held back.
    pub due: Pin<Box<dyn Future<Output = bool> + Send>>,
    /// The last check, made once it is due and its `/run` is ready: right before the write, however long
    /// the connection took to come (a slow executor keeps its connections busy), so that a later fire of
    /// the job that went out meanwhile, or a successor that took over, stops it.
    pub last_check: Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = bool> + Send>> + Send>,
}

/// A `/run` made ready, with the address it goes to.
struct Outgoing<'a> {
    address: &'a str,
    run: ReadyRun,
}

/// One trigger after its log row: the address, `/run`, and the report. Returns when its own work began
/// (when `release` let it go, if later), `None` when `release` held it back. Unlike 2.4.2, a missing group
/// or an unknown route strategy ends as a failed trigger with a message, never as a log row stuck
/// "running" (see `docs/differences.md`).
pub(super) async fn process(
    context: &TriggerContext,
    trigger: Trigger,
    release: Option<Release>,
) -> Option<i64> {
    let mut started = context.clock.now_ms();
    let param = run_param(context, &trigger);
    let choice = choose_address(context, &trigger.resolved, trigger.sharding.index).await;
    let fire = FireHeaders { planned_ms: trigger.planned_ms, trigger_type: trigger.trigger_type.name() };
    // The connection is taken while the fire is held, so that at its instant only the write is left; the
    // last check of the decision comes once both are done, right before the write.
    let readying = make_ready(context, choice.address.as_deref(), &param, fire);
    let outgoing = match release {
        Some(release) => {
            let (released_at, outgoing) = when_released(context, readying, release).await?;
            started = released_at;
            outgoing
        }
        None => readying.await,
    };
    let (code, run_msg) = match outgoing {
        Some(Outgoing { address, run }) => {
            context.metrics.run_sent(trigger.trigger_type, trigger.planned_ms, context.clock.now_ms());
            let result = context.executors.send_run(run).await;
            let label = context.i18n.get("jobconf_trigger_run");
            (result.code, Some(call_report(label, address, result.code, result.msg.as_deref())))
        }
        None => (FAIL_CODE, None),
    };
    context.metrics.trigger(trigger.trigger_type, code == 200);
    let info = trigger_info(context, &trigger, choice, code, run_msg);
    write_result(context, &trigger, info).await;
    Some(started)
}

/// What the executor is asked to run.
fn run_param(context: &TriggerContext, trigger: &Trigger) -> TriggerParam {
    let job = &trigger.resolved.job;
    let glue_updatetime = job.glue_updatetime.map(|t| context.db.zone().to_epoch_ms(t)).unwrap_or(0);
    TriggerParam {
        job_id: job.id,
        executor_handler: job.executor_handler.clone(),
        executor_params: job.executor_param.clone(),
        executor_block_strategy: job.executor_block_strategy.clone(),
        executor_timeout: job.executor_timeout,
        log_id: trigger.log_id,
        log_date_time: trigger.trigger_time,
        glue_type: job.glue_type.clone(),
        glue_source: job.glue_source.clone(),
        glue_updatetime,
        broadcast_index: trigger.sharding.index,
        broadcast_total: trigger.sharding.total,
    }
}

/// The `/run` to `address` made ready (its connection taken); nothing without an address.
async fn make_ready<'a>(
    context: &TriggerContext,
    address: Option<&'a str>,
    param: &TriggerParam,
    fire: FireHeaders,
) -> Option<Outgoing<'a>> {
    let address = address?;
    let run = context.executors.ready_run(context.executors.prepare_run(address, param, fire)).await;
    Some(Outgoing { address, run })
}

/// Waits for `release` while the `/run` is made ready: when it lets the trigger go, the instant it did and
/// the `/run`; `None` when it holds the trigger back.
async fn when_released<'a>(
    context: &TriggerContext,
    readying: impl Future<Output = Option<Outgoing<'a>>>,
    release: Release,
) -> Option<(i64, Option<Outgoing<'a>>)> {
    let Release { mut due, last_check } = release;
    let mut readying = std::pin::pin!(readying);
    // A fire held back stops connecting; only a connection already taken is given back.
    let (go, ready) = tokio::select! {
        biased;
        ready = &mut readying => (due.await, Some(ready)),
        go = &mut due => (go, None),
    };
    if !go {
        if let Some(Some(outgoing)) = ready {
            context.executors.unsent(outgoing.run);
        }
        return None;
    }
    let released_at = context.clock.now_ms();
    let outgoing = match ready {
        Some(ready) => ready,
        None => readying.await,
    };
    // Only a `/run` that can be written is checked: one that failed to connect fails, as it would have on
    // time, rather than collapsing into the job's next fire (which then fails alike, and so on).
    match outgoing {
        Some(outgoing) if outgoing.run.is_ready() => {
            if !last_check().await {
                context.executors.unsent(outgoing.run);
                return None;
            }
            Some((released_at, Some(outgoing)))
        }
        outgoing => Some((released_at, outgoing)),
    }
}

/// The trigger's result for its log row, with the report the console shows (2.4.2's trigger_msg).
fn trigger_info(
    context: &TriggerContext,
    trigger: &Trigger,
    choice: AddressChoice,
    code: i32,
    run_msg: Option<String>,
) -> TriggerInfo {
    let i18n = &context.i18n;
    let resolved = &*trigger.resolved;
    let job = &resolved.job;
    let Sharding { index, total } = trigger.sharding;
    let sharding_text =
        (resolved.route == Some(RouteStrategy::ShardingBroadcast)).then(|| format!("{index}/{total}"));
    let address_items: Vec<&str> = resolved
        .group
        .as_ref()
        .and_then(|g| g.address_list.as_deref())
        .filter(|l| !is_blank(Some(l)))
        .map(java_split)
        .unwrap_or_default();
    let route_title = match resolved.route {
        Some(route) => i18n.get(route.i18n_key()).to_string(),
        None => job.executor_route_strategy.clone().unwrap_or_else(|| "null".into()),
    };
    let report = TriggerReport {
        trigger_type_title: i18n.get(trigger.trigger_type.i18n_key()),
        admin_address: &context.admin_address,
        manual_addresses: resolved.group.as_ref().is_some_and(|g| g.address_type != AddressType::Auto),
        address_list: (!address_items.is_empty()).then_some(&address_items[..]),
        route_title: &route_title,
        sharding: sharding_text.as_deref(),
        block_title: i18n.get(block_title_key(job.executor_block_strategy.as_deref())),
        timeout: job.executor_timeout,
        fail_retry_count: resolved.fail_retry_count,
        route_msg: choice.route_msg.as_deref(),
        run_msg: run_msg.as_deref(),
    };
    TriggerInfo {
        trigger_time_ms: trigger.trigger_time,
        trigger_code: code,
        trigger_msg: Some(context.results.shared_text(report.render(i18n))),
        executor_address: choice.address,
        executor_handler: job.executor_handler.clone(),
        executor_param: job.executor_param.clone(),
        executor_sharding_param: sharding_text,
        executor_fail_retry_count: resolved.fail_retry_count,
    }
}

/// Hands the result to the writer task, which writes it with other triggers' results (and with the
/// callback, should it come first, unless child jobs are to start); writes it directly if the writer is gone.
async fn write_result(context: &TriggerContext, trigger: &Trigger, info: TriggerInfo) {
    let job = &trigger.resolved.job;
    let log_id = trigger.log_id;
    let joinable = job.child_jobid.as_deref().is_none_or(|c| c.trim().is_empty());
    if let Some(info) = context.results.send(log_id, info, joinable) {
        if let Err(e) = context.db.update_trigger_info(log_id, &info).await {
            tracing::error!(job_id = job.id, log_id, "trigger result not written: {e}");
        }
    }
}
