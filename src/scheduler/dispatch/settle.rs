//! The fires not sent, settled in batches by a writer task: those the console cancelled lose their row,
//! the others get a result that says why.

use crate::domain::codes::AlarmStatus;
use crate::domain::misfire::DropReason;
use crate::domain::protocol::FAIL_CODE;
use crate::scheduler::trigger::TriggerContext;
use std::sync::Arc;
use tokio::sync::mpsc;

/// Rows settled per statement.
const SETTLE_BATCH: usize = 1_000;

/// A planned fire not sent, for the settlement writer.
pub(super) struct Settled {
    pub(super) log_id: i64,
    pub(super) reason: DropReason,
    pub(super) fire_once_now: bool,
}

/// Writes what becomes of the fires not sent, many rows per statement: cancelled fires lose their rows,
/// the others get a result that says why (`alarm_status` 1: nothing to retry or alarm about). Each is
/// counted in the log and the metrics.
pub(super) async fn write_settlements(
    context: Arc<TriggerContext>,
    mut settled: mpsc::UnboundedReceiver<Settled>,
) {
    let mut batch = Vec::with_capacity(SETTLE_BATCH);
    while settled.recv_many(&mut batch, SETTLE_BATCH).await > 0 {
        let now = context.clock.now_ms();
        for reason in DropReason::ALL {
            let ids: Vec<i64> = batch.iter().filter(|s| s.reason == reason).map(|s| s.log_id).collect();
            if ids.is_empty() {
                continue;
            }
            let written = if reason.is_cancellation() {
                context.db.delete_unsent_logs(&ids).await.map(drop)
            } else {
                let key = match reason {
                    DropReason::Collapsed => "joblog_skipped_collapsed",
                    DropReason::Deposed => "joblog_skipped_deposed",
                    _ => "joblog_skipped_misfire",
                };
                context
                    .db
                    .settle_unsent(&ids, FAIL_CODE, context.i18n.get(key), AlarmStatus::NotNeeded)
                    .await
                    .map(drop)
            };
            if let Err(e) = written {
                // Left for the lost-result sweep, which settles them with a message.
                tracing::warn!(
                    "{} fire(s) not sent ({}) left to the lost-result sweep: {e}",
                    ids.len(),
                    reason.label()
                );
            }
            context.counts.drop_fires(reason, ids.len() as u64, now);
            // Settled by a misfire rule (the lead lost is not one).
            if !reason.is_cancellation() && reason != DropReason::Deposed {
                let fire_once_now =
                    batch.iter().filter(|s| s.reason == reason && s.fire_once_now).count() as u64;
                let counted_as = if reason == DropReason::Collapsed { "collapsed" } else { "at_release" };
                context.metrics.misfires_settled("FIRE_ONCE_NOW", counted_as, fire_once_now);
                context.metrics.misfires_settled("DO_NOTHING", counted_as, ids.len() as u64 - fire_once_now);
            }
        }
        batch.clear();
    }
}
