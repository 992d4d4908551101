//! The reconciler's pure core: from a run's current node states, what to do next (Airflow's trigger
//! rules, branches, disabled nodes, allow-failure, failure strategy, pause and stop).
//!
//! One call settles everything that follows from the states it is given, in topological order: a node
//! it marks skipped makes its all_success followers skipped in the same answer. So applying the
//! decisions and asking again yields nothing new (only `finished`, once every node is terminal).
//! Retries are not decided here: a `waiting_retry` node is the engine's to send again at its time.

use std::collections::HashMap;

use super::graph::Graph;
use super::model::{Definition, FailureStrategy, NodeKind, NodeState, TriggerRule};

/// A node's latest attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeStatus {
    pub state: NodeState,
    /// Whether a failure of this attempt counts as success for what follows.
    pub allow_failure: bool,
}

/// What the reconciler knows of a run.
#[derive(Debug, Clone, Copy)]
pub struct RunView<'a> {
    /// Each node's latest attempt by name; a node not listed is `pending`.
    pub nodes: &'a HashMap<String, NodeStatus>,
    /// The downstream nodes each finished branch chose, by branch name.
    pub branch_choices: &'a HashMap<String, Vec<String>>,
    pub failure_strategy: FailureStrategy,
    /// No node starts; what is running finishes, and skips still propagate.
    pub paused: bool,
    /// The run is being stopped: nothing starts any more, what is not running ends `stopped`.
    pub stopping: bool,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Decisions {
    /// Ready now: to be queued and sent (an approval node to wait for approval).
    pub start: Vec<String>,
    pub skip: Vec<String>,
    pub upstream_failed: Vec<String>,
    pub stop: Vec<String>,
    /// Set once every node is terminal (counting these decisions).
    pub finished: Option<RunOutcome>,
}

impl Decisions {
    /// Whether nothing is to be done to any node.
    pub fn is_idle(&self) -> bool {
        self.start.is_empty()
            && self.skip.is_empty()
            && self.upstream_failed.is_empty()
            && self.stop.is_empty()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOutcome {
    Succeeded,
    /// Some node failed (allow-failure excepted) or was stopped: a run cut short did not succeed.
    Failed,
}

/// What an upstream node means to one of its followers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edge {
    Success,
    /// Failed (without allow-failure), upstream_failed or stopped.
    Failed,
    Skipped,
    NotDone,
}

enum Verdict {
    Wait,
    Ready,
    Skip,
    UpstreamFailed,
}

/// The decisions for a run of `def` in the state `run` describes.
pub fn decide(def: &Definition, run: &RunView) -> Decisions {
    let graph = Graph::new(def);
    let status = |name: &str| run.nodes.get(name).copied();
    let mut state: Vec<NodeState> =
        def.nodes.iter().map(|n| status(&n.name).map_or(NodeState::Pending, |s| s.state)).collect();
    let allow: Vec<bool> =
        def.nodes.iter().map(|n| status(&n.name).is_some_and(|s| s.allow_failure)).collect();
    let hard_failure = (0..state.len()).any(|i| state[i] == NodeState::Failed && !allow[i]);
    let halted = run.stopping || (run.failure_strategy == FailureStrategy::End && hard_failure);
    let mut out = Decisions::default();
    if halted {
        for (i, node) in def.nodes.iter().enumerate() {
            if !state[i].is_terminal() && state[i] != NodeState::Running {
                out.stop.push(node.name.clone());
                state[i] = NodeState::Stopped;
            }
        }
    } else {
        for v in graph.topological_order() {
            if state[v] != NodeState::Pending {
                continue;
            }
            let node = &def.nodes[v];
            let edges = graph.upstream[v].iter().map(|&u| edge(def, run, &state, &allow, u, &node.name));
            match verdict(node.trigger_rule, edges) {
                Verdict::Wait => {}
                Verdict::Ready if node.disabled => {
                    out.skip.push(node.name.clone());
                    state[v] = NodeState::Skipped;
                }
                Verdict::Ready if run.paused => {}
                Verdict::Ready => {
                    out.start.push(node.name.clone());
                    state[v] = NodeState::Queued;
                }
                Verdict::Skip => {
                    out.skip.push(node.name.clone());
                    state[v] = NodeState::Skipped;
                }
                Verdict::UpstreamFailed => {
                    out.upstream_failed.push(node.name.clone());
                    state[v] = NodeState::UpstreamFailed;
                }
            }
        }
    }
    if state.iter().all(|s| s.is_terminal()) {
        let failed = (0..state.len())
            .any(|i| (state[i] == NodeState::Failed && !allow[i]) || state[i] == NodeState::Stopped);
        out.finished = Some(if failed { RunOutcome::Failed } else { RunOutcome::Succeeded });
    }
    out
}

/// Upstream `u` as seen by its follower `follower`. A branch leads only to the nodes it chose: a
/// succeeded branch whose choice is not recorded yet is not done; a branch that failed with
/// allow-failure chose nothing unless a choice is recorded.
fn edge(
    def: &Definition,
    run: &RunView,
    state: &[NodeState],
    allow: &[bool],
    u: usize,
    follower: &str,
) -> Edge {
    match state[u] {
        NodeState::Succeeded => {}
        NodeState::Failed if allow[u] => {}
        NodeState::Failed | NodeState::UpstreamFailed | NodeState::Stopped => return Edge::Failed,
        NodeState::Skipped => return Edge::Skipped,
        _ => return Edge::NotDone,
    }
    let upstream = &def.nodes[u];
    if !matches!(upstream.kind, NodeKind::Branch { .. }) {
        return Edge::Success;
    }
    match run.branch_choices.get(&upstream.name) {
        Some(chosen) if chosen.iter().any(|c| c == follower) => Edge::Success,
        Some(_) => Edge::Skipped,
        None if state[u] == NodeState::Succeeded => Edge::NotDone,
        None => Edge::Skipped,
    }
}

fn verdict(rule: TriggerRule, edges: impl Iterator<Item = Edge>) -> Verdict {
    let (mut success, mut failed, mut skipped, mut not_done) = (0, 0, 0, 0);
    for e in edges {
        match e {
            Edge::Success => success += 1,
            Edge::Failed => failed += 1,
            Edge::Skipped => skipped += 1,
            Edge::NotDone => not_done += 1,
        }
    }
    if success + failed + skipped + not_done == 0 {
        // A node without upstream is ready when the run starts, whatever its rule.
        return Verdict::Ready;
    }
    let all_done = not_done == 0;
    match rule {
        TriggerRule::AllSuccess if failed > 0 => Verdict::UpstreamFailed,
        TriggerRule::AllSuccess if skipped > 0 => Verdict::Skip,
        TriggerRule::AllSuccess | TriggerRule::AllDone if all_done => Verdict::Ready,
        TriggerRule::OneSuccess if success > 0 => Verdict::Ready,
        TriggerRule::OneSuccess if all_done && failed > 0 => Verdict::UpstreamFailed,
        TriggerRule::OneFailed if failed > 0 => Verdict::Ready,
        TriggerRule::OneSuccess | TriggerRule::OneFailed if all_done => Verdict::Skip,
        TriggerRule::NoneFailed if all_done && failed > 0 => Verdict::UpstreamFailed,
        TriggerRule::NoneFailed if all_done => Verdict::Ready,
        _ => Verdict::Wait,
    }
}

#[cfg(test)]
mod tests;
