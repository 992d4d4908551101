//! Templates (a job node's `param`, a sub-workflow's string params) and expressions (a branch way's
//! `when`), in minijinja, sandboxed: no loader (so no `include`/`import`), no I/O, strict undefined
//! (a misspelt parameter or node name is an error, not an empty string), and a fuel budget on every
//! render and evaluation so that no template can loop for ever. Under strict undefined an optional
//! parameter is tested with `is defined` or given a `default(...)`; `{% if params.x %}` on a missing
//! `x` is an error.

use std::collections::BTreeMap;
use std::io;
use std::sync::OnceLock;

use minijinja::{AutoEscape, Environment, ErrorKind, UndefinedBehavior};
use serde::Serialize;
use serde_json::{Map, Value};

use super::model::NodeState;

/// Instructions one render or evaluation may execute: a parameter template loops over a few hundred
/// items at most; a hundred thousand steps take a few milliseconds.
pub const FUEL: u64 = 100_000;

/// The longest rendered text a template may make (a bound on memory; where a parameter goes may hold
/// less: the engine checks its own limits).
pub const MAX_PARAM_BYTES: usize = 65_535;

/// What templates and expressions see.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Context {
    /// The run's parameters: the definition's defaults overlaid by the run's own.
    pub params: Map<String, Value>,
    /// Epoch milliseconds of the run's logical instant.
    pub logical_time: i64,
    /// The logical instant's date, YYYY-MM-DD, in the admin's zone.
    pub ds: String,
    pub run_id: i64,
    /// The nodes that came before the one being rendered, by name.
    pub nodes: BTreeMap<String, NodeResult>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeResult {
    pub output: Value,
    pub state: NodeState,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("does not compile: {0}")]
    Compile(String),
    #[error("failed: {0}")]
    Render(String),
    #[error("took more than {FUEL} steps to evaluate (an endless or too large loop?)")]
    OutOfFuel,
    #[error("rendered to more than {MAX_PARAM_BYTES} bytes, the most an executor parameter holds")]
    TooLong,
    #[error("evaluated to an undefined value (a misspelt name?)")]
    Undefined,
}

/// The one environment every workflow template and expression is compiled and run in.
pub fn environment() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_fuel(Some(FUEL));
        // Parameters go to executors as plain text, never into HTML.
        env.set_auto_escape_callback(|_| AutoEscape::None);
        env
    })
}

/// Whether `source` compiles as a template.
pub fn check_template(source: &str) -> Result<(), TemplateError> {
    environment().template_from_str(source).map(|_| ()).map_err(|e| TemplateError::Compile(e.to_string()))
}

/// Whether `source` compiles as an expression.
pub fn check_expression(source: &str) -> Result<(), TemplateError> {
    environment().compile_expression(source).map(|_| ()).map_err(|e| TemplateError::Compile(e.to_string()))
}

/// Renders a job node's parameter. A result over [`MAX_PARAM_BYTES`] is refused, never truncated.
pub fn render_param(template: &str, ctx: &Context) -> Result<String, TemplateError> {
    let compiled =
        environment().template_from_str(template).map_err(|e| TemplateError::Compile(e.to_string()))?;
    let mut out = Bounded { bytes: Vec::new(), overflowed: false };
    match compiled.render_captured_to(ctx, &mut out) {
        Ok(_) => String::from_utf8(out.bytes).map_err(|e| TemplateError::Render(e.to_string())),
        Err(_) if out.overflowed => Err(TemplateError::TooLong),
        Err(e) => Err(run_error(e)),
    }
}

/// Evaluates a branch way's condition, truthy in Jinja's sense (empty strings, lists and 0 are false).
pub fn evaluate(expr: &str, ctx: &Context) -> Result<bool, TemplateError> {
    let compiled =
        environment().compile_expression(expr).map_err(|e| TemplateError::Compile(e.to_string()))?;
    let value = compiled.eval(ctx).map_err(run_error)?;
    // Strict mode refuses undefined values where they are used, not a bare `params.typo`: refuse it here.
    if value.is_undefined() {
        return Err(TemplateError::Undefined);
    }
    Ok(value.is_true())
}

fn run_error(e: minijinja::Error) -> TemplateError {
    if e.kind() == ErrorKind::OutOfFuel {
        TemplateError::OutOfFuel
    } else {
        TemplateError::Render(e.to_string())
    }
}

/// Collects output and fails the render as soon as it would pass [`MAX_PARAM_BYTES`], so that a
/// template cannot fill memory before the length is checked.
struct Bounded {
    bytes: Vec<u8>,
    overflowed: bool,
}

impl io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.bytes.len() + buf.len() > MAX_PARAM_BYTES {
            self.overflowed = true;
            return Err(io::Error::other("parameter too long"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> Context {
        let mut nodes = BTreeMap::new();
        nodes.insert(
            "extract".to_string(),
            NodeResult { output: json!({"rows": 42, "file": "a.csv"}), state: NodeState::Succeeded },
        );
        Context {
            params: json!({"env": "prod", "n": 3, "html": "<b>"}).as_object().unwrap().clone(),
            logical_time: 1_700_000_000_000,
            ds: "2023-11-14".into(),
            run_id: 77,
            nodes,
        }
    }

    #[test]
    fn renders_params_dates_run_ids_and_earlier_nodes() {
        let out = render_param(
            "{{ params.env }} {{ ds }} {{ run_id }} {{ logical_time }} {{ nodes.extract.output.rows }} \
             {{ nodes.extract.state }} {{ params.html }}",
            &ctx(),
        )
        .unwrap();
        assert_eq!(out, "prod 2023-11-14 77 1700000000000 42 succeeded <b>");
        assert_eq!(render_param("", &ctx()).unwrap(), "");
        assert_eq!(render_param("{% for i in range(params.n) %}{{ i }}{% endfor %}", &ctx()).unwrap(), "012");
    }

    #[test]
    fn misspelt_names_are_errors_not_empty_strings() {
        for t in ["{{ params.evn }}", "{{ nodes.extrct.output }}", "{{ dss }}"] {
            assert!(matches!(render_param(t, &ctx()), Err(TemplateError::Render(_))), "{t}");
        }
        // Testing for presence and defaults still work; a bare truth test of a missing name does not.
        assert_eq!(render_param("{{ 'y' if params.evn is defined else 'n' }}", &ctx()).unwrap(), "n");
        assert_eq!(render_param("{{ params.evn | default('d') }}", &ctx()).unwrap(), "d");
        assert!(render_param("{% if params.evn %}x{% endif %}", &ctx()).is_err());
    }

    #[test]
    fn compile_errors_carry_minijinja_s_message() {
        let err = render_param("{{ params.env ", &ctx()).unwrap_err();
        assert!(matches!(&err, TemplateError::Compile(m) if m.contains("syntax error")), "{err}");
        assert!(check_template("{% if %}").is_err());
        assert!(check_template("{{ a | upper }}").is_ok());
        assert!(check_expression("params.n >").is_err());
        assert!(check_expression("params.n > 2 and ds").is_ok());
        assert!(err.to_string().starts_with("does not compile: "));
    }

    #[test]
    fn nothing_can_be_loaded() {
        let err = render_param("{% include 'x.html' %}", &ctx()).unwrap_err();
        assert!(matches!(err, TemplateError::Render(_)), "{err}");
    }

    #[test]
    fn endless_work_runs_out_of_fuel() {
        let t = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}";
        assert_eq!(render_param(t, &ctx()), Err(TemplateError::OutOfFuel));
        // Expressions have no loops; a filter's own work counts as one step.
        assert_eq!(evaluate("range(100000) | map('string') | list | length > 0", &ctx()), Ok(true));
    }

    #[test]
    fn a_parameter_over_the_limit_is_refused_not_truncated() {
        let exact = format!("{{{{ 'x' * {MAX_PARAM_BYTES} }}}}");
        assert_eq!(render_param(&exact, &ctx()).unwrap().len(), MAX_PARAM_BYTES);
        let over = format!("{{{{ 'x' * {} }}}}", MAX_PARAM_BYTES + 1);
        assert_eq!(render_param(&over, &ctx()), Err(TemplateError::TooLong));
        let many = "{% for i in range(70000) %}x{% endfor %}";
        assert!(matches!(render_param(many, &ctx()), Err(TemplateError::TooLong | TemplateError::OutOfFuel)));
        assert!(TemplateError::TooLong.to_string().contains("65535 bytes"));
    }

    #[test]
    fn expressions_are_truthy_in_jinja_s_sense() {
        assert_eq!(evaluate("params.n > 2", &ctx()), Ok(true));
        assert_eq!(evaluate("nodes.extract.output.rows == 0", &ctx()), Ok(false));
        assert_eq!(evaluate("nodes.extract.state == 'succeeded'", &ctx()), Ok(true));
        assert_eq!(evaluate("''", &ctx()), Ok(false));
        assert_eq!(evaluate("[]", &ctx()), Ok(false));
        assert_eq!(evaluate("params.env", &ctx()), Ok(true));
        assert_eq!(evaluate("params.typo", &ctx()), Err(TemplateError::Undefined));
        assert!(matches!(evaluate("nodes.nope.state == 'x'", &ctx()), Err(TemplateError::Render(_))));
        assert!(matches!(evaluate("1 +", &ctx()), Err(TemplateError::Compile(_))));
    }
}
