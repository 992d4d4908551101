//! Whether a definition can be saved: every problem at once, each naming the node, the field (as a JSON
//! path) and what is wrong. Linear in the size of the definition apart from compiling its templates.

use std::collections::HashSet;
use std::fmt;

use crate::cron::{CronError, CronExpression};

use super::graph::Graph;
use super::model::{Definition, Node, NodeKind, ScheduleType, TriggerRule};
use super::nesting::MAX_NESTING;
use super::template::{self, TemplateError};

pub const MAX_NODES: usize = 2000;
pub const MAX_NAME_CHARS: usize = 128;
pub const MAX_NODE_NAME_CHARS: usize = 64;
pub const MAX_DESCRIPTION_CHARS: usize = 2000;
/// xxl_job_info.alarm_email is a varchar(255).
pub const MAX_ALARM_EMAIL_CHARS: usize = 255;
/// xxl_job_user.username is a varchar(50).
pub const MAX_USER_NAME_CHARS: usize = 50;
/// A template's source is at most as long as what it may render to.
pub const MAX_TEMPLATE_CHARS: usize = template::MAX_PARAM_BYTES;
/// Timeouts and deadlines: a leap year at most.
pub const MAX_SECONDS: u64 = 366 * 86_400;
/// The longest delay between two attempts: a day.
pub const MAX_RETRY_DELAY_MS: u64 = 86_400_000;

/// One problem of a definition.
#[derive(Debug, Clone, PartialEq)]
pub struct DefinitionError {
    /// The node it is in, if any.
    pub node: Option<String>,
    /// Where, as a JSON path: `nodes[3].upstream[1]`, `concurrency.maxRuns`.
    pub field: String,
    pub problem: Problem,
}

impl fmt::Display for DefinitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.node {
            Some(node) => write!(f, "{} (node '{node}'): {}", self.field, self.problem),
            None => write!(f, "{}: {}", self.field, self.problem),
        }
    }
}

impl std::error::Error for DefinitionError {}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Problem {
    #[error("must not be empty or blank")]
    Empty,
    #[error("is longer than {0} characters")]
    TooLong(usize),
    #[error("must not hold control characters")]
    ControlCharacter,
    #[error("may hold only letters A-Z and a-z, digits, '_' and '-'")]
    BadNodeName,
    #[error("'{name}' is already the name of nodes[{first}]")]
    DuplicateName { name: String, first: usize },
    #[error("a workflow has 1 to {MAX_NODES} nodes, not {0}")]
    NodeCount(usize),
    #[error("no node is named '{0}'")]
    UnknownNode(String),
    #[error("a node cannot follow itself")]
    SelfEdge,
    #[error("'{0}' is listed more than once")]
    Repeated(String),
    #[error("the nodes form a cycle: {}", .0.join(" → "))]
    Cycle(Vec<String>),
    #[error("a branch needs at least one way or a default")]
    EmptyBranch,
    #[error(
        "'{0}' is not a direct downstream node of this branch (it does not list the branch in its upstream)"
    )]
    NotDownstream(String),
    #[error(
        "can never run: branch '{branch}' never leads to it (no way and not the default names it) \
         and its trigger rule {rule} needs that upstream"
    )]
    NeverLedTo { branch: String, rule: TriggerRule },
    #[error(
        "can never run: it follows '{upstream}', which can never run, and its trigger rule {rule} \
         needs that upstream"
    )]
    AfterNodeThatNeverRuns { upstream: String, rule: TriggerRule },
    #[error("must be between {min} and {max}, not {found}")]
    OutOfRange { min: String, max: String, found: String },
    #[error("must not be below delayMs ({0})")]
    CapBelowDelay(u64),
    #[error("is required for schedule type {0}")]
    MissingConf(&'static str),
    #[error("is not a valid cron expression: {0}")]
    Cron(CronError),
    #[error("must be a whole number of seconds, at least 1")]
    FixRate,
    #[error("does not compile as a template: {0}")]
    Template(String),
    #[error("does not compile as an expression: {0}")]
    Expression(String),
    #[error("a workflow cannot run itself as a sub-workflow")]
    SubWorkflowItself,
    // What only the database can tell, found by the service.
    #[error("does not read as a definition: {0}")]
    Unreadable(String),
    #[error("no executor group has id {0}")]
    UnknownGroup(i32),
    #[error("no job has id {0}")]
    UnknownJob(i32),
    #[error("no workflow is named '{0}'")]
    UnknownWorkflow(String),
    #[error("the workflows form a cycle: {}", .0.join(" → "))]
    WorkflowCycle(Vec<String>),
    #[error(
        "sub-workflows nest {} levels deep here ({}); at most {MAX_NESTING} are allowed",
        .0.len() - 1, .0.join(" → ")
    )]
    NestingTooDeep(Vec<String>),
}

/// Checks everything that can be checked without a database (the name's uniqueness, the jobs, the
/// executor group and the sub-workflows' existence are the storage's and the service's to check).
pub fn validate(def: &Definition) -> Result<(), Vec<DefinitionError>> {
    let mut v = Validator { errors: Vec::new() };
    v.header(def);
    let graph = Graph::new(def);
    for (i, node) in def.nodes.iter().enumerate() {
        v.node(def, &graph, i, node);
    }
    v.cycles(def, &graph);
    if v.errors.is_empty() {
        Ok(())
    } else {
        Err(v.errors)
    }
}

struct Validator {
    errors: Vec<DefinitionError>,
}

impl Validator {
    fn push(&mut self, node: Option<&Node>, field: impl Into<String>, problem: Problem) {
        self.errors.push(DefinitionError {
            node: node.map(|n| n.name.clone()),
            field: field.into(),
            problem,
        });
    }

    fn range<T: PartialOrd + ToString>(
        &mut self,
        node: Option<&Node>,
        field: String,
        found: T,
        min: T,
        max: T,
    ) {
        // Written so that NaN is out of range too.
        if !(found >= min && found <= max) {
            let (min, max, found) = (min.to_string(), max.to_string(), found.to_string());
            self.push(node, field, Problem::OutOfRange { min, max, found });
        }
    }

    fn text(&mut self, node: Option<&Node>, field: String, text: &str, max: usize, required: bool) {
        if required && text.trim().is_empty() {
            self.push(node, field, Problem::Empty);
        } else if text.chars().count() > max {
            self.push(node, field, Problem::TooLong(max));
        } else if text.chars().any(char::is_control) {
            self.push(node, field, Problem::ControlCharacter);
        }
    }

    fn header(&mut self, def: &Definition) {
        self.text(None, "name".into(), &def.name, MAX_NAME_CHARS, true);
        self.range(None, "jobGroup".into(), def.job_group, 1, i32::MAX);
        if def.description.chars().count() > MAX_DESCRIPTION_CHARS {
            self.push(None, "description", Problem::TooLong(MAX_DESCRIPTION_CHARS));
        }
        self.text(None, "alarmEmail".into(), &def.alarm_email, MAX_ALARM_EMAIL_CHARS, false);
        let conf = def.schedule.conf.as_deref().filter(|c| !c.trim().is_empty());
        match (def.schedule.kind, conf) {
            (ScheduleType::None, _) => {}
            (kind, None) => self.push(None, "schedule.conf", Problem::MissingConf(kind.name())),
            (ScheduleType::Cron, Some(conf)) => {
                if let Err(e) = CronExpression::parse(conf) {
                    self.push(None, "schedule.conf", Problem::Cron(e));
                }
            }
            (ScheduleType::FixRate, Some(conf)) => {
                if !conf.trim().parse::<i64>().is_ok_and(|s| s >= 1) {
                    self.push(None, "schedule.conf", Problem::FixRate);
                }
            }
        }
        let c = &def.concurrency;
        self.range(None, "concurrency.maxRuns".into(), c.max_runs, 1, 1000);
        self.range(None, "concurrency.maxQueued".into(), c.max_queued, 1, 10_000);
        if let Some(deadline) = &def.deadline {
            self.range(None, "deadline.seconds".into(), deadline.seconds, 1, MAX_SECONDS);
        }
        if def.nodes.is_empty() || def.nodes.len() > MAX_NODES {
            self.push(None, "nodes", Problem::NodeCount(def.nodes.len()));
        }
    }

    fn node(&mut self, def: &Definition, graph: &Graph, i: usize, node: &Node) {
        let at = |field: &str| format!("nodes[{i}].{field}");
        let n = Some(node);
        if node.name.is_empty() {
            self.push(n, at("name"), Problem::Empty);
        } else if node.name.chars().count() > MAX_NODE_NAME_CHARS {
            self.push(n, at("name"), Problem::TooLong(MAX_NODE_NAME_CHARS));
        } else if !node.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            self.push(n, at("name"), Problem::BadNodeName);
        } else if let Some(&first) = graph.index.get(node.name.as_str()).filter(|&&first| first != i) {
            self.push(n, at("name"), Problem::DuplicateName { name: node.name.clone(), first });
        }
        let mut seen = HashSet::new();
        for (j, name) in node.upstream.iter().enumerate() {
            let field = at(&format!("upstream[{j}]"));
            if *name == node.name {
                self.push(n, field, Problem::SelfEdge);
            } else if !graph.index.contains_key(name.as_str()) {
                self.push(n, field, Problem::UnknownNode(name.clone()));
            } else if !seen.insert(name.as_str()) {
                self.push(n, field, Problem::Repeated(name.clone()));
            }
        }
        let r = &node.retry;
        self.range(n, at("retry.count"), r.count, 0, 100);
        self.range(n, at("retry.delayMs"), r.delay_ms, 0, MAX_RETRY_DELAY_MS);
        self.range(n, at("retry.factor"), r.factor, 1.0, 10.0);
        if r.cap_ms < r.delay_ms {
            self.push(n, at("retry.capMs"), Problem::CapBelowDelay(r.delay_ms));
        } else {
            self.range(n, at("retry.capMs"), r.cap_ms, 0, MAX_RETRY_DELAY_MS);
        }
        self.range(n, at("retry.jitter"), r.jitter, 0.0, 1.0);
        self.range(n, at("timeoutSeconds"), u64::from(node.timeout_seconds), 0, MAX_SECONDS);
        self.kind(def, graph, i, node);
    }

    fn kind(&mut self, def: &Definition, graph: &Graph, i: usize, node: &Node) {
        let at = |field: &str| format!("nodes[{i}].kind.{field}");
        let n = Some(node);
        match &node.kind {
            NodeKind::Job { job_id, param } => {
                self.range(n, at("jobId"), *job_id, 1, i32::MAX);
                self.template(n, at("param"), param);
            }
            NodeKind::Branch { ways, default } => {
                if ways.is_empty() && default.is_empty() {
                    self.push(n, format!("nodes[{i}].kind"), Problem::EmptyBranch);
                }
                for (w, way) in ways.iter().enumerate() {
                    if let Err(TemplateError::Compile(e)) = template::check_expression(&way.when) {
                        self.push(n, at(&format!("ways[{w}].when")), Problem::Expression(e));
                    }
                    self.targets(graph, i, node, &at(&format!("ways[{w}].to")), &way.to);
                }
                self.targets(graph, i, node, &at("default"), default);
            }
            NodeKind::SubWorkflow { workflow, params } => {
                self.text(n, at("workflow"), workflow, MAX_NAME_CHARS, true);
                if *workflow == def.name {
                    self.push(n, at("workflow"), Problem::SubWorkflowItself);
                }
                for (key, value) in params {
                    if let Some(source) = value.as_str() {
                        self.template(n, at(&format!("params.{key}")), source);
                    }
                }
            }
            NodeKind::Approval { approvers } => {
                let mut seen = HashSet::new();
                for (a, approver) in approvers.iter().enumerate() {
                    let field = at(&format!("approvers[{a}]"));
                    if !seen.insert(approver.as_str()) {
                        self.push(n, field, Problem::Repeated(approver.clone()));
                    } else {
                        self.text(n, field, approver, MAX_USER_NAME_CHARS, true);
                    }
                }
            }
        }
    }

    fn template(&mut self, node: Option<&Node>, field: String, source: &str) {
        if source.chars().count() > MAX_TEMPLATE_CHARS {
            self.push(node, field, Problem::TooLong(MAX_TEMPLATE_CHARS));
        } else if let Err(TemplateError::Compile(e)) = template::check_template(source) {
            self.push(node, field, Problem::Template(e));
        }
    }

    /// A branch's targets: known, listed once, and direct downstream nodes of the branch.
    fn targets(&mut self, graph: &Graph, i: usize, node: &Node, field: &str, names: &[String]) {
        let mut seen = HashSet::new();
        for (t, name) in names.iter().enumerate() {
            let field = format!("{field}[{t}]");
            match graph.index.get(name.as_str()) {
                None => self.push(Some(node), field, Problem::UnknownNode(name.clone())),
                Some(_) if !seen.insert(name.as_str()) => {
                    self.push(Some(node), field, Problem::Repeated(name.clone()))
                }
                Some(target) if !graph.upstream[*target].contains(&i) => {
                    self.push(Some(node), field, Problem::NotDownstream(name.clone()))
                }
                Some(_) => {}
            }
        }
    }

    /// Cycles first; only a graph without them is checked for nodes that can never run.
    fn cycles(&mut self, def: &Definition, graph: &Graph) {
        let cycles = graph.cycles();
        for cycle in &cycles {
            let (first, last) = (cycle[0], cycle[cycle.len() - 1]);
            let node = &def.nodes[first];
            let j = node.upstream.iter().position(|u| *u == def.nodes[last].name).unwrap_or(0);
            let mut names: Vec<String> = cycle.iter().map(|&v| def.nodes[v].name.clone()).collect();
            names.push(node.name.clone());
            self.push(Some(node), format!("nodes[{first}].upstream[{j}]"), Problem::Cycle(names));
        }
        if cycles.is_empty() {
            self.never_run(def, graph);
        }
    }

    /// A node can never run when the upstream its trigger rule needs is always skipped: a branch
    /// whose ways and default never name it, or a node that itself can never run. Disabled nodes are
    /// not counted: disabling is meant to be undone.
    fn never_run(&mut self, def: &Definition, graph: &Graph) {
        let mut dead = vec![false; graph.len()];
        for v in graph.topological_order() {
            let node = &def.nodes[v];
            let always_skipped = |u: usize| {
                dead[u]
                    || match &def.nodes[u].kind {
                        NodeKind::Branch { ways, default } => {
                            !ways.iter().flat_map(|w| &w.to).chain(default).any(|t| *t == node.name)
                        }
                        _ => false,
                    }
            };
            let ups = &graph.upstream[v];
            let is_dead = !ups.is_empty()
                && match node.trigger_rule {
                    TriggerRule::AllSuccess => ups.iter().any(|&u| always_skipped(u)),
                    TriggerRule::OneSuccess | TriggerRule::OneFailed => {
                        ups.iter().all(|&u| always_skipped(u))
                    }
                    TriggerRule::AllDone | TriggerRule::NoneFailed => false,
                };
            if !is_dead {
                continue;
            }
            let Some(&u) = ups.iter().find(|&&u| always_skipped(u)) else { continue };
            let name = def.nodes[u].name.clone();
            let j = node.upstream.iter().position(|x| *x == name).unwrap_or(0);
            let rule = node.trigger_rule;
            let problem = if dead[u] {
                Problem::AfterNodeThatNeverRuns { upstream: name, rule }
            } else {
                Problem::NeverLedTo { branch: name, rule }
            };
            self.push(Some(node), format!("nodes[{v}].upstream[{j}]"), problem);
            dead[v] = true;
        }
    }
}

#[cfg(test)]
mod tests;
