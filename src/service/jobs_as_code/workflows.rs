//! A document's workflows and stored definitions, each into the other. The document names a workflow's
//! executor group by AppName and a job node's job as `child_jobs` name one, where a definition holds ids;
//! it flattens a node's `kind` into the node (`job = …`, `workflow = …`, `branch = […]`, `approvers = […]`)
//! and writes the fields in snake_case. Pure: the plan resolves the names.

use super::document::{Workflow, WorkflowNode};
use super::reason::Reason;
use crate::domain::workflow::model::{Definition, Node, NodeKind};
use crate::domain::workflow::DefinitionError;

/// The definition `workflow` stands for, in executor group `job_group`, each job node's job given by
/// `job_id` from the name the node uses. Refused, naming the node, when its fields do not say one kind.
pub fn definition(
    workflow: &Workflow,
    job_group: i32,
    job_id: &dyn Fn(&str) -> i32,
) -> Result<Definition, Reason> {
    let nodes = workflow
        .nodes
        .iter()
        .map(|node| {
            Ok(Node {
                name: node.name.clone(),
                upstream: node.upstream.clone(),
                kind: kind(workflow, node, job_id)?,
                trigger_rule: node.trigger_rule,
                retry: (&node.retry).into(),
                timeout_seconds: node.timeout_seconds,
                allow_failure: node.allow_failure,
                disabled: node.disabled,
            })
        })
        .collect::<Result<_, Reason>>()?;
    Ok(Definition {
        name: workflow.name.clone(),
        job_group,
        description: workflow.description.clone(),
        schedule: workflow.schedule.clone(),
        params: workflow.params.clone(),
        concurrency: (&workflow.concurrency).into(),
        failure_strategy: workflow.failure_strategy,
        deadline: workflow.deadline.clone(),
        alarm_email: workflow.alarm_email.clone(),
        nodes,
    })
}

/// The fields that say a node's kind, in the order messages list them.
const KINDS: [&str; 4] = ["job", "workflow", "branch", "approvers"];

/// The kind a node's fields say: exactly one of [`KINDS`], with only its own companion field (`param`
/// for `job`, `params` for `workflow`, `default` for `branch`).
fn kind(workflow: &Workflow, node: &WorkflowNode, job_id: &dyn Fn(&str) -> i32) -> Result<NodeKind, Reason> {
    let (entry, name) = (workflow.label(), format!("{:?}", node.name));
    let said = kinds_said(node);
    let Some(&one) = said.first() else {
        return Err(Reason::new("code_error_node_no_kind", &[&entry, &name]));
    };
    if said.len() > 1 {
        return Err(Reason::new("code_error_node_kinds", &[&entry, &name, &said.join(", ")]));
    }
    let companions = [
        ("param", node.param.is_some(), "job"),
        ("params", node.params.is_some(), "workflow"),
        ("default", node.default.is_some(), "branch"),
    ];
    if let Some((field, _, owner)) = companions.iter().find(|(_, set, owner)| *set && *owner != one) {
        return Err(Reason::new("code_error_node_field", &[&entry, &name, field, owner]));
    }
    Ok(match one {
        "job" => NodeKind::Job {
            job_id: job_id(node.job.as_deref().unwrap_or_default()),
            param: node.param.clone().unwrap_or_default(),
        },
        "workflow" => NodeKind::SubWorkflow {
            workflow: node.workflow.clone().unwrap_or_default(),
            params: node.params.clone().unwrap_or_default(),
        },
        "branch" => NodeKind::Branch {
            ways: node.branch.clone().unwrap_or_default(),
            default: node.default.clone().unwrap_or_default(),
        },
        _ => NodeKind::Approval { approvers: node.approvers.clone().unwrap_or_default() },
    })
}

/// The fields of [`KINDS`] a node has.
fn kinds_said(node: &WorkflowNode) -> Vec<&'static str> {
    let present =
        [node.job.is_some(), node.workflow.is_some(), node.branch.is_some(), node.approvers.is_some()];
    KINDS.into_iter().zip(present).filter(|(_, set)| *set).map(|(kind, _)| kind).collect()
}

/// A stored definition as the document writes it: its group as the AppName `app_name`, each job node's
/// job as `key_of` names it (`#id` for a job that exists no more, which no apply will find), fields left
/// at their defaults left out.
pub fn exported(
    def: &Definition,
    app_name: &str,
    key_of: &dyn Fn(i32) -> Option<String>,
    trigger_status: Option<i16>,
) -> Workflow {
    let nodes = def
        .nodes
        .iter()
        .map(|node| {
            let mut out = WorkflowNode {
                name: node.name.clone(),
                upstream: node.upstream.clone(),
                trigger_rule: node.trigger_rule,
                retry: node.retry.clone().into(),
                timeout_seconds: node.timeout_seconds,
                allow_failure: node.allow_failure,
                disabled: node.disabled,
                ..WorkflowNode::default()
            };
            match &node.kind {
                NodeKind::Job { job_id, param } => {
                    out.job = Some(key_of(*job_id).unwrap_or_else(|| format!("#{job_id}")));
                    out.param = Some(param.clone()).filter(|p| !p.is_empty());
                }
                NodeKind::SubWorkflow { workflow, params } => {
                    out.workflow = Some(workflow.clone());
                    out.params = Some(params.clone()).filter(|p| !p.is_empty());
                }
                NodeKind::Branch { ways, default } => {
                    out.branch = Some(ways.clone());
                    out.default = Some(default.clone()).filter(|d| !d.is_empty());
                }
                NodeKind::Approval { approvers } => out.approvers = Some(approvers.clone()),
            }
            out
        })
        .collect();
    Workflow {
        name: def.name.clone(),
        executor: app_name.to_string(),
        description: def.description.clone(),
        schedule: def.schedule.clone(),
        params: def.params.clone(),
        concurrency: def.concurrency.clone().into(),
        failure_strategy: def.failure_strategy,
        deadline: def.deadline.clone(),
        alarm_email: def.alarm_email.clone(),
        trigger_status,
        nodes,
        line: None,
    }
}

/// A definition's problems as the document names them: the workflow, then the node, then the field in the
/// document's words (`retry.delay_ms`, `branch[0].when`), then what is wrong.
pub fn problems(workflow: &Workflow, errors: &[DefinitionError]) -> Vec<String> {
    errors
        .iter()
        .map(|e| {
            let node = e.node.as_ref().and_then(|name| workflow.nodes.iter().find(|n| n.name == *name));
            match node {
                Some(node) => format!(
                    "{}: node {:?}: {}: {}",
                    workflow.label(),
                    node.name,
                    field_in_node(&e.field, node),
                    e.problem
                ),
                None => format!("{}: {}: {}", workflow.label(), field_in_document(&e.field), e.problem),
            }
        })
        .collect()
}

/// A node's field as the document writes it: the path after `nodes[i].`, its kind flattened into the node
/// (a bare `kind` is the field that says it).
fn field_in_node(path: &str, node: &WorkflowNode) -> String {
    let own = path.split_once("].").map_or("", |(_, rest)| rest);
    if own == "kind" {
        return kinds_said(node).first().copied().unwrap_or("kind").to_string();
    }
    field_in_document(own.strip_prefix("kind.").unwrap_or(own))
}

/// A definition's path in the document's words: each name in snake_case, `jobGroup` as `executor`, a
/// kind's `jobId` as `job` and `ways` as `branch`, `nodes` as `node`.
fn field_in_document(path: &str) -> String {
    path.split('.')
        .map(|segment| {
            let (name, index) = segment.split_at(segment.find('[').unwrap_or(segment.len()));
            let name = match name {
                "jobGroup" => "executor".to_string(),
                "jobId" => "job".to_string(),
                "ways" => "branch".to_string(),
                "nodes" => "node".to_string(),
                other => snake_case(other),
            };
            name + index
        })
        .collect::<Vec<_>>()
        .join(".")
}

fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 2);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::workflow::validate;
    use serde_json::json;

    /// Every kind and every field away from its default.
    fn stored() -> Definition {
        serde_json::from_value(json!({
            "name": "daily", "jobGroup": 2, "description": "d",
            "schedule": {"type": "CRON", "conf": "0 30 2 * * ?", "misfire": "FIRE_ONCE_NOW"},
            "params": {"region": "eu", "n": 2},
            "concurrency": {"maxRuns": 2, "onLimit": "discard", "maxQueued": 5},
            "failureStrategy": "end",
            "deadline": {"seconds": 3600, "stop": true},
            "alarmEmail": "ops@example.com",
            "nodes": [
                {"name": "extract", "kind": {"type": "job", "jobId": 7, "param": "{{ ds }}"},
                 "retry": {"count": 3, "delayMs": 60000, "factor": 2.0}, "timeoutSeconds": 60},
                {"name": "load", "upstream": ["extract"], "kind": {"type": "job", "jobId": 8}, "allowFailure": true},
                {"name": "outcome", "upstream": ["load"], "triggerRule": "all_done",
                 "kind": {"type": "branch", "ways": [{"when": "nodes.load.state == 'succeeded'", "to": ["report"]}],
                          "default": ["check"]}},
                {"name": "report", "upstream": ["outcome"], "kind": {"type": "subworkflow", "workflow": "reports",
                 "params": {"day": "{{ ds }}"}}, "disabled": true},
                {"name": "check", "upstream": ["outcome"], "kind": {"type": "approval", "approvers": []}}
            ]
        }))
        .unwrap()
    }

    fn key_of(id: i32) -> Option<String> {
        match id {
            7 => Some("sales-app/extract/extractor".into()),
            8 => Some("sales-app/load/loader".into()),
            _ => None,
        }
    }

    fn id_of(key: &str) -> i32 {
        match key {
            "sales-app/extract/extractor" => 7,
            "sales-app/load/loader" => 8,
            _ => 0,
        }
    }

    #[test]
    fn a_definition_exported_and_read_back_is_the_same_definition() {
        let def = stored();
        assert!(validate(&def).is_ok());
        let workflow = exported(&def, "sales-app", &key_of, Some(1));
        assert_eq!(workflow.executor, "sales-app");
        assert_eq!(workflow.nodes[0].job.as_deref(), Some("sales-app/extract/extractor"));
        assert_eq!(
            (workflow.nodes[1].param.as_ref(), workflow.nodes[4].approvers.as_deref()),
            (None, Some(&[][..]))
        );
        assert_eq!(definition(&workflow, 2, &id_of).unwrap(), def);
        // Through both formats too.
        for format in [super::super::Format::Json, super::super::Format::Toml] {
            let doc = super::super::Document { workflows: vec![workflow.clone()], ..Default::default() };
            let text = doc.render(format).unwrap();
            let read = super::super::Document::parse(&text, format).unwrap();
            assert_eq!(definition(&read.workflows[0], 2, &id_of).unwrap(), def, "{text}");
        }
    }

    #[test]
    fn an_export_leaves_defaults_out_and_flattens_the_kinds() {
        let minimal: Definition = serde_json::from_value(
            json!({"name": "w", "jobGroup": 1, "nodes": [{"name": "a", "kind": {"type": "job", "jobId": 99}}]}),
        )
        .unwrap();
        let doc = super::super::Document {
            workflows: vec![exported(&minimal, "app", &key_of, None)],
            ..Default::default()
        };
        assert_eq!(
            doc.render(super::super::Format::Toml).unwrap(),
            "[[workflow]]\nname = \"w\"\nexecutor = \"app\"\n\n[workflow.schedule]\ntype = \"NONE\"\nmisfire = \"DO_NOTHING\"\n\n\
             [[workflow.node]]\nname = \"a\"\njob = \"#99\"\n",
            "a job that exists no more is named by its old id, which no apply finds"
        );
        let toml = stored();
        let text = super::super::Document {
            workflows: vec![exported(&toml, "sales-app", &key_of, None)],
            ..Default::default()
        }
        .render(super::super::Format::Toml)
        .unwrap();
        for line in [
            "[[workflow.node.branch]]\nwhen = \"nodes.load.state == 'succeeded'\"\nto = [\"report\"]",
            "default = [\"check\"]",
            "workflow = \"reports\"",
            "approvers = []",
            "max_runs = 2",
            "delay_ms = 60000",
            "failure_strategy = \"end\"",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
    }

    fn node(fields: serde_json::Value) -> Workflow {
        let mut node = json!({"name": "a"});
        node.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        serde_json::from_value(json!({"name": "w", "executor": "app", "node": [node]})).unwrap()
    }

    #[test]
    fn a_node_says_exactly_one_kind_with_its_own_companions() {
        let refused =
            |fields: serde_json::Value| definition(&node(fields), 1, &id_of).unwrap_err().to_string();
        assert_eq!(
            refused(json!({})),
            "workflow \"w\": node \"a\": give it one of job, workflow, branch or approvers, which says what it does"
        );
        assert_eq!(
            refused(json!({"job": "k", "approvers": []})),
            "workflow \"w\": node \"a\": job, approvers: a node does one thing; keep one of them"
        );
        assert_eq!(
            refused(json!({"workflow": "other", "param": "x"})),
            "workflow \"w\": node \"a\": param: only a job node has it"
        );
        assert_eq!(
            refused(json!({"job": "k", "default": ["b"]})),
            "workflow \"w\": node \"a\": default: only a branch node has it"
        );
        let approval = definition(&node(json!({"approvers": ["alice"]})), 1, &id_of).unwrap();
        assert_eq!(approval.nodes[0].kind, NodeKind::Approval { approvers: vec!["alice".into()] });
    }

    #[test]
    fn problems_name_the_workflow_the_node_and_the_field_in_the_documents_words() {
        let mut workflow = exported(&stored(), "sales-app", &key_of, None);
        workflow.line = Some(12);
        workflow.nodes[0].retry.delay_ms = 90_000_000;
        workflow.nodes[2].branch = Some(vec![]);
        workflow.nodes[2].default = None;
        workflow.concurrency.max_runs = 0;
        let def = definition(&workflow, 2, &id_of).unwrap();
        let found = problems(&workflow, &validate(&def).unwrap_err());
        let expected = [
            "workflow \"daily\" (line 12): concurrency.max_runs: must be between 1 and 1000, not 0",
            "workflow \"daily\" (line 12): node \"extract\": retry.delay_ms: must be between 0 and 86400000, not 90000000",
            "workflow \"daily\" (line 12): node \"outcome\": branch: a branch needs at least one way or a default",
        ];
        for line in expected {
            assert!(found.iter().any(|f| f == line), "{line} in {found:#?}");
        }
        assert_eq!(field_in_document("jobGroup"), "executor");
        let job = &workflow.nodes[0];
        assert_eq!(field_in_node("nodes[0].kind.jobId", job), "job");
        assert_eq!(field_in_node("nodes[0].timeoutSeconds", job), "timeout_seconds");
        assert_eq!(field_in_node("nodes[2].kind.ways[1].to[0]", &workflow.nodes[2]), "branch[1].to[0]");
        assert_eq!(field_in_node("nodes[3].kind.params.day", &workflow.nodes[3]), "params.day");
    }

    #[test]
    fn the_documented_workflow_reads_and_passes_validation() {
        let docs = include_str!("../../../docs/jobs-as-code.md");
        let section = docs.split("### Workflows").nth(1).unwrap();
        let example = section.split("```toml\n").nth(1).and_then(|rest| rest.split("```").next()).unwrap();
        let doc = super::super::Document::parse(example, super::super::Format::Toml).unwrap();
        let def = definition(&doc.workflows[0], 1, &|key| if key == "extract" { 7 } else { 0 }).unwrap();
        assert_eq!(validate(&def), Ok(()));
        let kinds: Vec<&str> = doc.workflows[0].nodes.iter().flat_map(kinds_said).collect();
        assert_eq!(kinds, ["job", "branch", "workflow", "approvers"], "a node of every kind");
    }

    #[test]
    fn toml_cannot_write_a_null_parameter_and_says_so() {
        let mut def = stored();
        def.params.insert("none".into(), serde_json::Value::Null);
        let doc = super::super::Document {
            workflows: vec![exported(&def, "app", &key_of, None)],
            ..Default::default()
        };
        let e = doc.render(super::super::Format::Toml).unwrap_err().to_string();
        assert!(
            e.starts_with("TOML cannot write this document (") && e.ends_with("); export it as JSON"),
            "{e}"
        );
        assert!(doc.render(super::super::Format::Json).unwrap().contains("\"none\": null"));
    }
}
