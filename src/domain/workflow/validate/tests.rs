use super::*;
use crate::domain::workflow::model;
use serde_json::{json, Value};

fn def(nodes: Value) -> Definition {
    serde_json::from_value(json!({"name": "wf", "jobGroup": 1, "nodes": nodes})).unwrap()
}

fn job(name: &str, upstream: &[&str]) -> Value {
    json!({"name": name, "upstream": upstream, "kind": {"type": "job", "jobId": 1}})
}

fn branch(name: &str, upstream: &[&str], ways: Value, default: &[&str]) -> Value {
    json!({"name": name, "upstream": upstream, "kind": {"type": "branch", "ways": ways, "default": default}})
}

fn errors(d: &Definition) -> Vec<(String, Problem)> {
    validate(d).unwrap_err().into_iter().map(|e| (e.field, e.problem)).collect()
}

fn only(d: &Definition) -> (String, Problem) {
    let mut all = errors(d);
    assert_eq!(all.len(), 1, "{all:?}");
    all.remove(0)
}

#[test]
fn a_good_definition_passes() {
    let d = def(json!([
        job("a", &[]),
        branch("b", &["a"], json!([{"when": "params.x > 1", "to": ["c"]}]), &["d"]),
        job("c", &["b"]),
        job("d", &["b"]),
        {"name": "e", "upstream": ["c", "d"], "triggerRule": "none_failed",
         "kind": {"type": "job", "jobId": 2,
            "param": "{{ nodes.c.output }}"}},
    ]));
    assert_eq!(validate(&d), Ok(()));
}

#[test]
fn every_header_problem_is_reported_at_once() {
    let mut d = def(json!([job("a", &[])]));
    d.name = " ".into();
    d.job_group = 0;
    d.description = "x".repeat(MAX_DESCRIPTION_CHARS + 1);
    d.alarm_email = "a\nb".into();
    d.concurrency.max_runs = 0;
    d.concurrency.max_queued = 10_001;
    d.deadline = Some(model::Deadline { seconds: 0, stop: false });
    let fields: Vec<String> = errors(&d).into_iter().map(|(f, _)| f).collect();
    let want = [
        "name",
        "jobGroup",
        "description",
        "alarmEmail",
        "concurrency.maxRuns",
        "concurrency.maxQueued",
        "deadline.seconds",
    ];
    assert_eq!(fields, want);
    d.name = "x".repeat(129);
    assert!(errors(&d).contains(&("name".into(), Problem::TooLong(128))));
}

#[test]
fn schedules_are_checked_with_the_quartz_parser_and_fix_rate_rules() {
    let mut d = def(json!([job("a", &[])]));
    d.schedule.kind = ScheduleType::Cron;
    assert_eq!(only(&d), ("schedule.conf".into(), Problem::MissingConf("CRON")));
    d.schedule.conf = Some("0 0 * * * ?".into());
    assert_eq!(validate(&d), Ok(()));
    d.schedule.conf = Some("0 0 * * *".into());
    assert!(matches!(only(&d).1, Problem::Cron(CronError::MissingFields { found: 5 })));
    d.schedule.kind = ScheduleType::FixRate;
    for bad in ["0", "-3", "1.5", "ten"] {
        d.schedule.conf = Some(bad.into());
        assert_eq!(only(&d), ("schedule.conf".into(), Problem::FixRate), "{bad}");
    }
    d.schedule.conf = Some(" 30 ".into());
    assert_eq!(validate(&d), Ok(()));
    d.schedule.kind = ScheduleType::None;
    d.schedule.conf = Some("whatever".into());
    assert_eq!(validate(&d), Ok(()));
}

#[test]
fn node_counts_are_bounded() {
    assert_eq!(only(&def(json!([]))), ("nodes".into(), Problem::NodeCount(0)));
    let many: Vec<Value> = (0..=MAX_NODES).map(|i| job(&format!("n{i}"), &[])).collect();
    assert_eq!(only(&def(Value::Array(many))), ("nodes".into(), Problem::NodeCount(MAX_NODES + 1)));
}

#[test]
fn node_names_must_be_short_plain_and_unique() {
    let long = "x".repeat(65);
    let d =
        def(json!([job("", &[]), job("a b", &[]), job(&long, &[]), job("ok-1_A", &[]), job("ok-1_A", &[])]));
    let errs = validate(&d).unwrap_err();
    let got: Vec<_> = errs.iter().map(|e| (e.field.as_str(), e.problem.clone())).collect();
    assert_eq!(
        got,
        [
            ("nodes[0].name", Problem::Empty),
            ("nodes[1].name", Problem::BadNodeName),
            ("nodes[2].name", Problem::TooLong(64)),
            ("nodes[4].name", Problem::DuplicateName { name: "ok-1_A".into(), first: 3 }),
        ]
    );
    assert_eq!(errs[3].node.as_deref(), Some("ok-1_A"));
    assert_eq!(
        errs[3].to_string(),
        "nodes[4].name (node 'ok-1_A'): 'ok-1_A' is already the name of nodes[3]"
    );
}

#[test]
fn edges_must_name_other_known_nodes_once() {
    let d = def(json!([job("a", &[]), job("b", &["a", "zz", "b", "a"])]));
    assert_eq!(
        errors(&d),
        [
            ("nodes[1].upstream[1]".into(), Problem::UnknownNode("zz".into())),
            ("nodes[1].upstream[2]".into(), Problem::SelfEdge),
            ("nodes[1].upstream[3]".into(), Problem::Repeated("a".into())),
        ]
    );
}

#[test]
fn a_cycle_is_named_in_flow_order_once_per_component() {
    // a → b → c → a, and separately d ⇄ e; f hangs off the first cycle.
    let d = def(json!([
        job("a", &["c"]),
        job("b", &["a"]),
        job("c", &["b"]),
        job("d", &["e"]),
        job("e", &["d"]),
        job("f", &["a"]),
    ]));
    let errs = validate(&d).unwrap_err();
    assert_eq!(errs.len(), 2);
    assert_eq!(errs[0].to_string(), "nodes[0].upstream[0] (node 'a'): the nodes form a cycle: a → b → c → a");
    assert_eq!(errs[1].problem, Problem::Cycle(vec!["d".into(), "e".into(), "d".into()]));
    // A component with several loops reports its shortest one through the first node.
    let d = def(json!([job("a", &["d", "b"]), job("b", &["a"]), job("c", &["b"]), job("d", &["c"])]));
    assert_eq!(
        only(&d),
        ("nodes[0].upstream[1]".into(), Problem::Cycle(vec!["a".into(), "b".into(), "a".into()]))
    );
}

#[test]
fn branches_need_ways_or_a_default_naming_direct_downstream_nodes() {
    let d = def(json!([branch("b", &[], json!([]), &[]), job("c", &["b"])]));
    assert_eq!(errors(&d)[0], ("nodes[0].kind".into(), Problem::EmptyBranch));
    let d = def(json!([
        job("x", &[]),
        branch(
            "b",
            &[],
            json!([{"when": "true", "to": ["c", "x", "c", "nope"]}, {"when": "1 +", "to": []}]),
            &["d"]
        ),
        job("c", &["b"]),
        job("d", &["x"]),
    ]));
    assert_eq!(
        errors(&d),
        [
            ("nodes[1].kind.ways[0].to[1]".into(), Problem::NotDownstream("x".into())),
            ("nodes[1].kind.ways[0].to[2]".into(), Problem::Repeated("c".into())),
            ("nodes[1].kind.ways[0].to[3]".into(), Problem::UnknownNode("nope".into())),
            ("nodes[1].kind.ways[1].when".into(), Problem::Expression(compile_message("1 +"))),
            ("nodes[1].kind.default[0]".into(), Problem::NotDownstream("d".into())),
        ]
    );
}

fn compile_message(expr: &str) -> String {
    match template::check_expression(expr) {
        Err(TemplateError::Compile(message)) => message,
        other => panic!("{other:?}"),
    }
}

#[test]
fn nodes_a_branch_never_leads_to_can_never_run_unless_their_rule_accepts_skips() {
    let rule = |name: &str, rule: &str| {
        let mut node = job(name, &["b"]);
        node["triggerRule"] = json!(rule);
        node
    };
    let d = def(json!([
        branch("b", &[], json!([{"when": "true", "to": ["t"]}]), &[]),
        job("t", &["b"]),
        rule("s1", "all_success"),
        rule("s2", "one_success"),
        rule("s3", "one_failed"),
        rule("ok1", "all_done"),
        rule("ok2", "none_failed"),
        job("after", &["s1"]),
        {"name": "mixed", "upstream": ["t", "s2"], "triggerRule": "one_success",
         "kind": {"type": "job", "jobId": 1}},
    ]));
    let rule_of = |r| TriggerRule::parse(r).unwrap();
    assert_eq!(
        errors(&d),
        [
            (
                "nodes[2].upstream[0]".into(),
                Problem::NeverLedTo { branch: "b".into(), rule: rule_of("all_success") }
            ),
            (
                "nodes[3].upstream[0]".into(),
                Problem::NeverLedTo { branch: "b".into(), rule: rule_of("one_success") }
            ),
            (
                "nodes[4].upstream[0]".into(),
                Problem::NeverLedTo { branch: "b".into(), rule: rule_of("one_failed") }
            ),
            (
                "nodes[7].upstream[0]".into(),
                Problem::AfterNodeThatNeverRuns { upstream: "s1".into(), rule: rule_of("all_success") }
            ),
        ]
    );
}

#[test]
fn numeric_fields_are_bounded() {
    let d = def(json!([{"name": "a", "kind": {"type": "job", "jobId": 0}, "timeoutSeconds": 40_000_000u32,
        "retry": {"count": 101, "delayMs": 86_400_001u64, "factor": 0.5, "capMs": 5, "jitter": 1.5}}]));
    let fields: Vec<String> = errors(&d).into_iter().map(|(f, _)| f).collect();
    let want = ["count", "delayMs", "factor", "capMs", "jitter"].map(|f| format!("nodes[0].retry.{f}"));
    assert_eq!(fields[..5], want);
    assert_eq!(fields[5..], ["nodes[0].timeoutSeconds", "nodes[0].kind.jobId"]);
    let mut d = def(json!([job("a", &[])]));
    d.nodes[0].retry.cap_ms = MAX_RETRY_DELAY_MS + 1;
    d.nodes[0].retry.factor = f64::NAN;
    let got = errors(&d);
    assert_eq!(got[0].0, "nodes[0].retry.factor");
    assert!(matches!(&got[1], (f, Problem::OutOfRange { max, .. })
            if f == "nodes[0].retry.capMs" && max == "86400000"));
    d.nodes[0].retry = model::Retry { count: 100, delay_ms: 0, factor: 10.0, cap_ms: 0, jitter: 1.0 };
    assert_eq!(validate(&d), Ok(()));
    d.nodes[0].retry.delay_ms = 10;
    assert_eq!(only(&d), ("nodes[0].retry.capMs".into(), Problem::CapBelowDelay(10)));
}

#[test]
fn templates_sub_workflows_and_approvers_are_checked() {
    let d = def(json!([
        {"name": "j", "kind": {"type": "job", "jobId": 1, "param": "{{ params.x "}},
        {"name": "s", "kind": {"type": "subworkflow", "workflow": "wf", "params": {"p": "{% if %}", "n": 3}}},
        {"name": "t", "kind": {"type": "subworkflow", "workflow": " "}},
        {"name": "a", "kind": {"type": "approval", "approvers": ["bob", "", "bob"]}},
    ]));
    let got = errors(&d);
    let fields: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        fields,
        [
            "nodes[0].kind.param",
            "nodes[1].kind.workflow",
            "nodes[1].kind.params.p",
            "nodes[2].kind.workflow",
            "nodes[3].kind.approvers[1]",
            "nodes[3].kind.approvers[2]",
        ]
    );
    assert!(matches!(&got[0].1, Problem::Template(m) if m.contains("syntax error")));
    assert_eq!(got[1].1, Problem::SubWorkflowItself);
    let shown = validate(&d).unwrap_err()[0].to_string();
    assert!(
        shown.starts_with("nodes[0].kind.param (node 'j'): does not compile as a template: syntax error"),
        "{shown}"
    );
}

#[test]
fn five_hundred_nodes_validate_correctly() {
    // Layers of 10; every node follows every node of the layer before: 4,500 edges.
    let nodes: Vec<Value> = (0..500)
        .map(|i| {
            let ups: Vec<String> = if i < 10 {
                vec![]
            } else {
                (0..10).map(|k| format!("n{}", (i / 10 - 1) * 10 + k)).collect()
            };
            let ups: Vec<&str> = ups.iter().map(String::as_str).collect();
            let mut node = job(&format!("n{i}"), &ups);
            node["kind"]["param"] = json!("{{ params.day }}-{{ run_id }}");
            node
        })
        .collect();
    let mut d = def(Value::Array(nodes));
    assert_eq!(validate(&d), Ok(()));
    // Close one long loop: n0 follows n499.
    d.nodes[0].upstream.push("n499".into());
    let (field, problem) = only(&d);
    assert_eq!(field, "nodes[0].upstream[0]");
    let Problem::Cycle(path) = problem else { panic!("{problem:?}") };
    assert_eq!(path.len(), 51);
    assert_eq!((path[0].as_str(), path[49].as_str(), path[50].as_str()), ("n0", "n499", "n0"));
}
