use super::*;
use serde_json::{json, Value};
use NodeState::*;

fn def(nodes: Value) -> Definition {
    serde_json::from_value(json!({"name": "wf", "jobGroup": 1, "nodes": nodes})).unwrap()
}

fn job(name: &str, upstream: &[&str]) -> Value {
    json!({"name": name, "upstream": upstream, "kind": {"type": "job", "jobId": 1}})
}

fn ruled(name: &str, upstream: &[&str], rule: &str) -> Value {
    let mut node = job(name, upstream);
    node["triggerRule"] = json!(rule);
    node
}

#[derive(Clone, Default)]
struct Run {
    nodes: HashMap<String, NodeStatus>,
    choices: HashMap<String, Vec<String>>,
    strategy: FailureStrategy,
    paused: bool,
    stopping: bool,
}

impl Run {
    fn with(mut self, name: &str, state: NodeState) -> Run {
        self.nodes.insert(name.into(), NodeStatus { state, allow_failure: false });
        self
    }

    fn failed_allowed(mut self, name: &str) -> Run {
        self.nodes.insert(name.into(), NodeStatus { state: Failed, allow_failure: true });
        self
    }

    fn chose(mut self, branch: &str, to: &[&str]) -> Run {
        self.choices.insert(branch.into(), to.iter().map(|s| s.to_string()).collect());
        self.with(branch, Succeeded)
    }

    fn ask(&self, d: &Definition) -> Decisions {
        let view = RunView {
            nodes: &self.nodes,
            branch_choices: &self.choices,
            failure_strategy: self.strategy,
            paused: self.paused,
            stopping: self.stopping,
        };
        decide(d, &view)
    }

    /// The decisions, checked to be idempotent: once applied, asking again gives nothing new.
    fn decide(&self, d: &Definition) -> Decisions {
        let out = self.ask(d);
        let mut next = self.clone();
        let lists = [(&out.start, Queued), (&out.skip, Skipped), (&out.upstream_failed, UpstreamFailed)];
        for (names, state) in lists.into_iter().chain([(&out.stop, Stopped)]) {
            for name in names {
                next = next.with(name, state);
            }
        }
        let again = next.ask(d);
        assert!(again.is_idle(), "not idempotent: {out:?} then {again:?}");
        assert_eq!(again.finished, out.finished);
        out
    }
}

fn names(list: &[String]) -> Vec<&str> {
    list.iter().map(String::as_str).collect()
}

#[test]
fn roots_start_at_once_and_only_once() {
    let d = def(json!([job("a", &[]), job("b", &[]), job("c", &["a", "b"])]));
    let out = Run::default().decide(&d);
    assert_eq!(names(&out.start), ["a", "b"]);
    assert_eq!(out.finished, None);
    let out = Run::default().with("a", Succeeded).with("b", Running).decide(&d);
    assert!(out.is_idle());
    let out = Run::default().with("a", Succeeded).with("b", Succeeded).decide(&d);
    assert_eq!(names(&out.start), ["c"]);
}

/// The decision for node `x` following `a` and `b` under `rule`, given their states.
fn under(rule: &str, run: Run) -> Decisions {
    run.decide(&def(json!([job("a", &[]), job("b", &[]), ruled("x", &["a", "b"], rule)])))
}

#[test]
fn all_success() {
    let r = |a, b| under("all_success", Run::default().with("a", a).with("b", b));
    assert_eq!(names(&r(Succeeded, Succeeded).start), ["x"]);
    assert!(r(Succeeded, Running).is_idle());
    assert!(r(Succeeded, WaitingRetry).is_idle());
    assert_eq!(names(&r(Failed, Running).upstream_failed), ["x"]);
    assert_eq!(names(&r(UpstreamFailed, Skipped).upstream_failed), ["x"]);
    assert_eq!(names(&r(Stopped, Succeeded).upstream_failed), ["x"]);
    assert_eq!(names(&r(Skipped, Running).skip), ["x"]);
    let allowed = under("all_success", Run::default().failed_allowed("a").with("b", Succeeded));
    assert_eq!(names(&allowed.start), ["x"]);
}

#[test]
fn all_done() {
    let r = |a, b| under("all_done", Run::default().with("a", a).with("b", b));
    assert_eq!(names(&r(Failed, Skipped).start), ["x"]);
    assert_eq!(names(&r(UpstreamFailed, Stopped).start), ["x"]);
    assert!(r(Failed, Running).is_idle());
    assert!(r(Succeeded, WaitingApproval).is_idle());
}

#[test]
fn one_success() {
    let r = |a, b| under("one_success", Run::default().with("a", a).with("b", b));
    assert_eq!(names(&r(Succeeded, Running).start), ["x"]);
    assert!(r(Failed, Running).is_idle());
    assert_eq!(names(&r(Failed, Skipped).upstream_failed), ["x"]);
    assert_eq!(names(&r(Skipped, Skipped).skip), ["x"]);
    let allowed = under("one_success", Run::default().failed_allowed("a").with("b", Running));
    assert_eq!(names(&allowed.start), ["x"]);
}

#[test]
fn one_failed() {
    let r = |a, b| under("one_failed", Run::default().with("a", a).with("b", b));
    assert_eq!(names(&r(Failed, Running).start), ["x"]);
    assert_eq!(names(&r(UpstreamFailed, Queued).start), ["x"]);
    assert!(r(Succeeded, Running).is_idle());
    assert_eq!(names(&r(Succeeded, Skipped).skip), ["x"]);
    // An allowed failure counts as success, so it does not trigger one_failed.
    let allowed = under("one_failed", Run::default().failed_allowed("a").with("b", Succeeded));
    assert_eq!(names(&allowed.skip), ["x"]);
}

#[test]
fn none_failed() {
    let r = |a, b| under("none_failed", Run::default().with("a", a).with("b", b));
    assert_eq!(names(&r(Succeeded, Skipped).start), ["x"]);
    assert_eq!(names(&r(Skipped, Skipped).start), ["x"]);
    assert!(r(Skipped, Running).is_idle());
    assert!(r(Failed, Running).is_idle());
    assert_eq!(names(&r(Failed, Succeeded).upstream_failed), ["x"]);
    let allowed = under("none_failed", Run::default().failed_allowed("a").with("b", Succeeded));
    assert_eq!(names(&allowed.start), ["x"]);
}

#[test]
fn any_rule_starts_a_node_without_upstream() {
    for rule in TriggerRule::ALL {
        let d = def(json!([ruled("a", &[], rule.as_str())]));
        assert_eq!(names(&Run::default().decide(&d).start), ["a"], "{rule}");
    }
}

#[test]
fn skips_and_failures_cascade_in_one_answer() {
    let d = def(json!([
        job("a", &[]),
        job("b", &["a"]),
        job("c", &["b"]),
        ruled("d", &["c"], "all_done"),
        ruled("e", &["c"], "one_failed"),
    ]));
    let out = Run::default().with("a", Failed).decide(&d);
    assert_eq!(names(&out.upstream_failed), ["b", "c"]);
    assert_eq!(names(&out.start), ["d", "e"]);
    let out = Run::default().with("a", Skipped).decide(&d);
    assert_eq!(names(&out.skip), ["b", "c", "e"]);
    assert_eq!(names(&out.start), ["d"]);
}

#[test]
fn disabled_nodes_are_skipped_when_they_would_be_ready() {
    let mut d =
        def(json!([job("a", &[]), job("b", &["a"]), ruled("c", &["b"], "none_failed"), job("d", &["b"])]));
    d.nodes[0].disabled = true;
    d.nodes[1].disabled = true;
    let out = Run::default().decide(&d);
    assert_eq!(names(&out.skip), ["a", "b", "d"]);
    assert_eq!(names(&out.start), ["c"]);
    // A disabled node whose rule fails it is upstream_failed like any other.
    let d2 = def(json!([job("a", &[]), job("b", &["a"])]));
    let mut d2 = d2;
    d2.nodes[1].disabled = true;
    assert_eq!(names(&Run::default().with("a", Failed).decide(&d2).upstream_failed), ["b"]);
    assert_eq!(Run::default().with("a", Failed).decide(&d2).finished, Some(RunOutcome::Failed));
}

#[test]
fn a_branch_leads_only_to_what_it_chose() {
    let d = def(json!([
        {"name": "b",
         "kind": {"type": "branch", "ways": [{"when": "true", "to": ["yes"]}], "default": ["no"]}},
        job("yes", &["b"]),
        job("no", &["b"]),
        job("after_no", &["no"]),
        ruled("join", &["yes", "no"], "none_failed"),
    ]));
    let out = Run::default().chose("b", &["yes"]).decide(&d);
    assert_eq!(names(&out.start), ["yes"]);
    assert_eq!(names(&out.skip), ["no", "after_no"]);
    // The choice is recorded with the branch's success; until then its followers wait.
    assert!(Run::default().with("b", Succeeded).decide(&d).is_idle());
    // A failed branch fails its followers; one failed with allow-failure and no choice chose nothing.
    assert_eq!(
        names(&Run::default().with("b", Failed).decide(&d).upstream_failed),
        ["yes", "no", "after_no", "join"]
    );
    let out = Run::default().failed_allowed("b").decide(&d);
    assert_eq!(names(&out.skip), ["yes", "no", "after_no"]);
    assert_eq!(names(&out.start), ["join"]);
}

#[test]
fn failure_strategy_end_stops_everything_not_running() {
    let d = def(json!([
        job("a", &[]),
        job("b", &[]),
        job("c", &[]),
        job("d", &[]),
        job("e", &[]),
        job("f", &["a"]),
    ]));
    let run = Run { strategy: FailureStrategy::End, ..Run::default() }
        .with("a", Failed)
        .with("b", Running)
        .with("c", Queued)
        .with("d", WaitingRetry)
        .with("e", WaitingApproval);
    let out = run.decide(&d);
    assert_eq!(names(&out.stop), ["c", "d", "e", "f"]);
    assert!(out.start.is_empty() && out.upstream_failed.is_empty() && out.finished.is_none());
    let done =
        run.with("b", Succeeded).with("c", Stopped).with("d", Stopped).with("e", Stopped).with("f", Stopped);
    assert_eq!(done.decide(&d).finished, Some(RunOutcome::Failed));
    // An allowed failure does not end the run.
    let run = Run { strategy: FailureStrategy::End, ..Run::default() }.failed_allowed("a");
    assert_eq!(names(&run.decide(&d).start), ["b", "c", "d", "e", "f"]);
}

#[test]
fn failure_strategy_continue_affects_only_what_depends_on_the_failure() {
    let d = def(json!([job("a", &[]), job("b", &[]), job("after_a", &["a"]), job("after_b", &["b"])]));
    let out = Run::default().with("a", Failed).with("b", Succeeded).decide(&d);
    assert_eq!(names(&out.upstream_failed), ["after_a"]);
    assert_eq!(names(&out.start), ["after_b"]);
    assert!(out.stop.is_empty());
}

#[test]
fn a_paused_run_starts_nothing_but_still_settles_skips() {
    let d = def(json!([job("a", &[]), job("b", &["a"]), job("c", &[])]));
    let paused = Run { paused: true, ..Run::default() };
    assert!(paused.decide(&d).is_idle());
    let out = paused.clone().with("a", Skipped).decide(&d);
    assert_eq!(names(&out.skip), ["b"]);
    assert!(out.start.is_empty());
    let out = Run { paused: false, ..paused }.with("a", Succeeded).decide(&d);
    assert_eq!(names(&out.start), ["b", "c"]);
}

#[test]
fn stopping_stops_all_but_running_nodes() {
    let d = def(json!([job("a", &[]), job("b", &[]), job("c", &["a"])]));
    let run = Run { stopping: true, ..Run::default() }.with("a", Running).with("b", Succeeded);
    let out = run.decide(&d);
    assert_eq!(names(&out.stop), ["c"]);
    assert_eq!(out.finished, None);
    assert_eq!(run.with("a", Succeeded).decide(&d).finished, Some(RunOutcome::Failed));
}

#[test]
fn a_run_ends_when_every_node_is_terminal() {
    let d = def(json!([job("a", &[]), job("b", &["a"]), ruled("c", &["b"], "one_failed")]));
    let ok = Run::default().with("a", Succeeded).with("b", Succeeded).decide(&d);
    assert_eq!((names(&ok.skip), ok.finished), (vec!["c"], Some(RunOutcome::Succeeded)));
    let allowed = Run::default().with("a", Succeeded).failed_allowed("b").decide(&d);
    assert_eq!(allowed.finished, Some(RunOutcome::Succeeded));
    let handled = Run::default().with("a", Succeeded).with("b", Failed).with("c", Succeeded).decide(&d);
    assert_eq!(handled.finished, Some(RunOutcome::Failed));
    assert_eq!(Run::default().with("a", Succeeded).with("b", Running).decide(&d).finished, None);
}

#[test]
fn every_combination_of_states_gets_an_idempotent_answer_that_touches_only_open_nodes() {
    let d = def(json!([
        job("a", &[]),
        {"name": "b", "upstream": ["a"],
         "kind": {"type": "branch", "ways": [{"when": "true", "to": ["c"]}], "default": ["d"]}},
        ruled("c", &["b"], "one_success"),
        ruled("d", &["b", "a"], "none_failed"),
        ruled("e", &["c", "d"], "all_done"),
        ruled("f", &["a", "e"], "one_failed"),
    ]));
    let states = [Pending, Running, Succeeded, Failed, Skipped, UpstreamFailed, Stopped, WaitingRetry];
    let mut asked = 0;
    for combo in 0..states.len().pow(4) {
        let pick = |k: u32| states[combo / states.len().pow(k) % states.len()];
        let base = Run::default().with("a", pick(0)).with("b", pick(1)).with("d", pick(2)).with("e", pick(3));
        let base = if pick(1) == Succeeded { base.chose("b", &["d"]) } else { base };
        for flags in 0..16u8 {
            let mut run = base.clone();
            run.strategy = if flags & 1 == 0 { FailureStrategy::Continue } else { FailureStrategy::End };
            run.paused = flags & 2 != 0;
            run.stopping = flags & 4 != 0;
            if flags & 8 != 0 {
                run.nodes.values_mut().for_each(|s| s.allow_failure = true);
            }
            let out = run.decide(&d);
            asked += 1;
            let state = |name: &String| run.nodes.get(name).map_or(Pending, |s| s.state);
            for name in out.skip.iter().chain(&out.upstream_failed).chain(&out.stop) {
                assert!(!state(name).is_terminal() && state(name) != Running, "{name} {:?}", state(name));
            }
            for name in &out.start {
                assert_eq!(state(name), Pending);
                assert!(!run.paused && !run.stopping);
            }
            if run.stopping {
                assert!(out.start.is_empty() && out.skip.is_empty() && out.upstream_failed.is_empty());
            }
        }
    }
    assert_eq!(asked, 8usize.pow(4) * 16);
}
