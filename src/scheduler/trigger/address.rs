//! Which executor a trigger goes to: a sharding broadcast's part goes to its own address, FAILOVER and
//! BUSYOVER probe the executors in turn, the other route strategies pick from the list
//! (`crate::domain::routing`); no group or no address is a failed trigger with a message
//! (2.4.2: XxlJobTrigger.processTrigger and the ExecutorRouter of each strategy).

use super::resolve::ResolvedRequest;
use super::TriggerContext;
use crate::domain::routing::RouteStrategy;
use crate::domain::trigger_msg::call_report;
use crate::domain::ReturnT;
use std::future::Future;

/// The executor address chosen for a trigger, if any, and the router's message when there is one.
pub(super) struct AddressChoice {
    pub(super) address: Option<String>,
    pub(super) route_msg: Option<String>,
}

/// The executor address for this trigger, and the router's message when there is one.
pub(super) async fn choose_address(
    context: &TriggerContext,
    resolved: &ResolvedRequest,
    index: i32,
) -> AddressChoice {
    let i18n = &context.i18n;
    let addresses = &resolved.addresses;
    if resolved.group.is_none() {
        let missing = format!("{}{}", i18n.get("jobinfo_field_jobgroup"), i18n.get("system_not_found"));
        let route_msg = format!("{missing} (id={})", resolved.job.job_group);
        return AddressChoice { address: None, route_msg: Some(route_msg) };
    }
    if addresses.is_empty() {
        let route_msg = i18n.get("jobconf_trigger_address_empty").to_string();
        return AddressChoice { address: None, route_msg: Some(route_msg) };
    }
    let job_id = resolved.job.id;
    match resolved.route {
        Some(RouteStrategy::ShardingBroadcast) => {
            let address = addresses.get(index as usize).unwrap_or(&addresses[0]);
            AddressChoice { address: Some(address.clone()), route_msg: None }
        }
        Some(RouteStrategy::Failover) => {
            probe(context, addresses, "jobconf_beat", |a| context.executors.beat(a)).await
        }
        Some(RouteStrategy::Busyover) => {
            probe(context, addresses, "jobconf_idleBeat", |a| context.executors.idle_beat(a, job_id)).await
        }
        Some(strategy) => {
            let now = context.clock.now_ms();
            AddressChoice { address: context.router.pick(strategy, job_id, addresses, now), route_msg: None }
        }
        None => {
            let route_msg = format!(
                "{}{} ({})",
                i18n.get("jobinfo_field_executorRouteStrategy"),
                i18n.get("system_unvalid"),
                resolved.job.executor_route_strategy.as_deref().unwrap_or("null")
            );
            AddressChoice { address: None, route_msg: Some(route_msg) }
        }
    }
}

/// FAILOVER / BUSYOVER: asks each executor in turn and takes the first that answers 200; the report of
/// every probe made is the route message (2.4.2: ExecutorRouteFailover.route, ExecutorRouteBusyover.route).
async fn probe<'a, F, Fut>(
    context: &TriggerContext,
    addresses: &'a [String],
    label_key: &str,
    call: F,
) -> AddressChoice
where
    F: Fn(&'a str) -> Fut,
    Fut: Future<Output = ReturnT<String>>,
{
    let label = context.i18n.get(label_key);
    let mut report = String::new();
    for address in addresses {
        let result = call(address).await;
        if !report.is_empty() {
            report.push_str("<br><br>");
        }
        report.push_str(&call_report(label, address, result.code, result.msg.as_deref()));
        if result.is_success() {
            return AddressChoice { address: Some(address.clone()), route_msg: Some(report) };
        }
    }
    AddressChoice { address: None, route_msg: Some(report) }
}
