//! The REST API, `{context}/openapi/v1/…`: executor groups, jobs and trigger logs as JSON resources,
//! authenticated by a user's personal token (`Authorization: Bearer …`, no cookies, so no CSRF).
//! Every rule, message and group permission is the console's, from [`crate::service`]; this module only
//! binds JSON and maps refusals to HTTP statuses. Its OpenAPI 3 document is derived from these handlers.

mod code;
mod groups;
mod jobs;
mod logs;
mod shapes;
pub mod workflow_runs;
mod workflows;

use crate::config::Config;
use crate::domain::workflow::DefinitionError;
use crate::http::client::request_address;
use crate::http::console::params::MAX_FORM_BODY;
use crate::http::state::AppState;
use crate::service::audit::METHOD_TOKEN;
use crate::service::groups::GroupForm;
use crate::service::jobs::JobForm;
use crate::service::logs::LogLines;
use crate::service::tokens::TokenError;
use crate::service::ServiceContext;
use crate::service::{LoginUser, Origin, ServiceError};
use crate::storage::JobUser;
use axum::extract::rejection::JsonRejection;
use axum::extract::{DefaultBodyLimit, FromRequest, FromRequestParts, Request};
use axum::http::header::{HeaderName, AUTHORIZATION, LOCATION, WWW_AUTHENTICATE};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Json, Router};
use serde::de::DeserializeOwned;
use serde::Serialize;
use shapes::{GroupView, JobView, LogView};
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::server::Server;
use utoipa::OpenApi;

/// Where the API lives under the context path.
pub const BASE: &str = "/openapi/v1";
/// Longest page a list answers.
pub const MAX_LIMIT: i64 = 1000;

pub fn routes() -> Router<AppState> {
    let api = Router::new()
        .route("/openapi.json", get(document))
        .route("/groups", get(groups::list).post(groups::create))
        .route("/groups/{id}", get(groups::get).put(groups::update).delete(groups::delete))
        .route("/jobs", get(jobs::list).post(jobs::create))
        .route("/jobs/{id}", get(jobs::get).put(jobs::update).delete(jobs::delete))
        .route("/jobs/{id}/start", post(jobs::start))
        .route("/jobs/{id}/stop", post(jobs::stop))
        .route("/jobs/{id}/trigger", post(jobs::trigger))
        .route("/jobs/{id}/next-fire-times", get(jobs::next_fire_times))
        .route("/export", get(code::export))
        .route("/apply", post(code::apply))
        .route("/logs", get(logs::list))
        .route("/logs/{id}", get(logs::get))
        .route("/logs/{id}/rolling", get(logs::rolling))
        .route("/logs/{id}/kill", post(logs::kill))
        .route("/workflows/{id}/runs", get(workflow_runs::list).post(workflow_runs::start))
        .route("/workflows/{id}/backfills", post(workflow_runs::start_backfill))
        .route("/workflow-backfills/{id}", get(workflow_runs::get_backfill))
        .route("/workflow-backfills/{id}/stop", post(workflow_runs::stop_backfill))
        .route("/workflow-runs/{id}", get(workflow_runs::get))
        .route("/workflow-runs/{id}/{operation}", post(workflow_runs::run_operation))
        .route("/workflow-runs/{id}/nodes/{node}/mark-succeeded", post(workflow_runs::mark_succeeded))
        .route("/workflow-runs/{id}/nodes/{node}/{operation}", post(workflow_runs::node_operation))
        .route("/workflows", get(workflows::list).post(workflows::create))
        .route("/workflows/{id}", get(workflows::get).put(workflows::update).delete(workflows::delete))
        .route("/workflows/{id}/versions", get(workflows::versions))
        .route("/workflows/{id}/versions/{version}", get(workflows::version))
        .route("/workflows/{id}/versions/{version}/restore", post(workflows::restore))
        .route("/workflows/{id}/diff", get(workflows::diff))
        .route("/workflows/{id}/start", post(workflows::start))
        .route("/workflows/{id}/stop", post(workflows::stop))
        .route("/{*unknown}", any(|| async { ApiError::NotFoundRoute }))
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        // GLUE sources may be as large as the console accepts them.
        .layer(DefaultBodyLimit::max(MAX_FORM_BODY));
    Router::new().nest(BASE, api)
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "xxl-job-admin REST API",
        description = "Executor groups, jobs, trigger logs and workflows of the xxl-job scheduling centre, with the console's rules, \
                       messages and group permissions. Authenticate with a personal API token created in the console's \
                       user menu: `Authorization: Bearer <token>`. A token acts with its user's role and groups, and is \
                       revoked when that user's password or role changes."
    ),
    paths(
        groups::list, groups::create, groups::get, groups::update, groups::delete,
        jobs::list, jobs::create, jobs::get, jobs::update, jobs::delete, jobs::start, jobs::stop, jobs::trigger,
        jobs::next_fire_times,
        logs::list, logs::get, logs::rolling, logs::kill,
        code::export, code::apply,
        workflow_runs::start, workflow_runs::list, workflow_runs::get, workflow_runs::run_operation,
        workflow_runs::node_operation, workflow_runs::mark_succeeded, workflow_runs::start_backfill, workflow_runs::get_backfill,
        workflow_runs::stop_backfill,
        workflows::list, workflows::create, workflows::get, workflows::update, workflows::delete,
        workflows::versions, workflows::version, workflows::diff, workflows::restore, workflows::start,
        workflows::stop,
    ),
    components(schemas(ErrorBody, GroupForm, JobForm, JobView, LogView, GroupView, LogLines, jobs::TriggerBody, jobs::Triggered, jobs::FireTimes, logs::Killed, logs::LogStatus, code::Applied, workflow_runs::StartBody, workflow_runs::Started, workflow_runs::RunView, workflow_runs::RunDetailView, workflow_runs::NodeView, workflow_runs::AttemptView, workflow_runs::Operated, workflow_runs::MarkBody, workflow_runs::BackfillBody, workflow_runs::BackfillStarted, workflow_runs::BackfillView, crate::domain::workflow::model::RunState)),
    modifiers(&BearerAuth),
    security(("bearer" = [])),
    tags(
        (name = "groups", description = "Executor groups: everyone reads the permitted ones, administrators manage them"),
        (name = "jobs", description = "Jobs: create, change, schedule, run"),
        (name = "logs", description = "Trigger logs and the executor's log of a run"),
        (name = "jobs as code", description = "Executors and jobs exported to a document and applied from one (docs/jobs-as-code.md)"),
        (name = "workflow runs", description = "Runs of workflows: start, follow, stop, pause, retry, rerun, mark, skip, approve (docs/workflows.md)"),
        (name = "workflows", description = "Workflow definitions: DAGs of jobs, versioned, compared, restored and scheduled"),
    )
)]
struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme("bearer", SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)));
    }
}

/// The OpenAPI 3 document, with this admin's context path as its server.
pub fn openapi_document(context_path: &str) -> serde_json::Value {
    let mut doc = ApiDoc::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    doc.servers = Some(vec![Server::new(format!("{context_path}{BASE}"))]);
    let mut doc = serde_json::to_value(doc).unwrap_or_default();
    declare_edge(&mut doc);
    doc
}

/// What [`JsonBody`], [`QueryParams`] and the forms' rules hold every request to, written into the document
/// where the derive cannot say it: no text holds NUL, a body names only the fields of its form (or of the
/// view it was read as), and the rules that tie one field to another. A new job also needs its GLUE type, and
/// its JobHandler when it is a BEAN job (a change keeps the job's GLUE type, so only creation checks them).
fn declare_edge(doc: &mut serde_json::Value) {
    use serde_json::{json, Value};
    let mut bodies = BTreeSet::new();
    for (path, item) in doc["paths"].as_object_mut().into_iter().flatten() {
        for (method, operation) in item.as_object_mut().into_iter().flatten() {
            for parameter in
                operation.get_mut("parameters").and_then(Value::as_array_mut).into_iter().flatten()
            {
                without_nul(&mut parameter["schema"]);
                if let Some(items) = parameter["schema"].get_mut("items") {
                    without_nul(items);
                }
            }
            if (path.as_str(), method.as_str()) == ("/apply", "post") {
                for media in operation
                    .pointer_mut("/requestBody/content")
                    .and_then(Value::as_object_mut)
                    .into_iter()
                    .flat_map(|m| m.values_mut())
                {
                    media["schema"] = json!({ "$ref": "#/components/schemas/AppliedDocument" });
                }
                continue;
            }
            let Some(body) = operation.pointer_mut("/requestBody/content/application~1json/schema") else {
                continue;
            };
            bodies.extend(body["$ref"].as_str().and_then(|r| r.rsplit('/').next()).map(str::to_string));
            if (path.as_str(), method.as_str()) == ("/jobs", "post") {
                *body = json!({ "$ref": "#/components/schemas/NewJob" });
            }
        }
    }
    let fields = schema_fields();
    let schemas = &mut doc["components"]["schemas"];
    for name in bodies {
        let schema = &mut schemas[&name];
        // A field whose shape depends on another is described by its rules alone: a second pattern beside
        // them would hide a `format` from generators.
        let (rules, ruled) = crate::service::schema::conditions(&name);
        for (field, property) in
            schema.get_mut("properties").and_then(Value::as_object_mut).into_iter().flatten()
        {
            if !ruled.contains(&field.as_str()) {
                without_nul(property);
            }
        }
        if schema["additionalProperties"] != Value::Bool(false) {
            let view =
                READ_BACK.iter().find(|(form, _)| *form == name).and_then(|(_, view)| fields.get(*view));
            let names: BTreeSet<&String> = fields.get(&name).into_iter().chain(view).flatten().collect();
            schema["propertyNames"] = json!({ "enum": names });
        }
        if !rules.is_empty() {
            schema["allOf"] = Value::from(rules);
        }
    }
    declare_applied(schemas);
    let mut new_job = vec![json!({ "$ref": "#/components/schemas/JobForm" })];
    new_job.extend(crate::service::schema::conditions("NewJob").0);
    schemas["NewJob"] = json!({ "description": "A new job: the job form, with its GLUE type, and the JobHandler of a BEAN job.", "allOf": new_job });
}

/// The schemas of a document sent to `/apply`: the exported shapes (`Document`, `Executor`, `Job`,
/// `Workflow`…), each field held to what the apply checks of it and the rules between fields. An export answers the plain
/// shapes: rows written by older versions or another admin need not pass today's checks to be read.
fn declare_applied(schemas: &mut serde_json::Value) {
    use serde_json::{json, Value};
    const APPLIED: [(&str, &str); 8] = [
        ("Document", "AppliedDocument"),
        ("Executor", "AppliedExecutor"),
        ("Job", "AppliedJob"),
        ("GlueVersion", "AppliedGlueVersion"),
        ("Workflow", "AppliedWorkflow"),
        ("WorkflowNode", "AppliedWorkflowNode"),
        ("WorkflowConcurrency", "AppliedWorkflowConcurrency"),
        ("NodeRetry", "AppliedNodeRetry"),
    ];
    for (plain, applied) in APPLIED {
        let mut text = schemas[plain].to_string();
        for (from, to) in APPLIED {
            text = text.replace(
                &format!("\"#/components/schemas/{from}\""),
                &format!("\"#/components/schemas/{to}\""),
            );
        }
        let Ok(mut schema) = serde_json::from_str::<Value>(&text) else { continue };
        let mut fields = crate::service::schema::applied_fields(plain);
        if plain == "Job" {
            for (field, width) in crate::service::jobs_as_code::JOB_TEXT_WIDTHS {
                fields[field]["maxLength"] = json!(width);
            }
        }
        if plain == "GlueVersion" {
            fields["glue_remark"]["maxLength"] = json!(crate::service::jobs_as_code::GLUE_REMARK_WIDTH);
        }
        for bound in WORKFLOW_BOUNDS.iter().filter(|b| b.schema == plain) {
            let mut source = &schemas[bound.source];
            if let Some(variant) = bound.variant {
                let mut variants = source["oneOf"].as_array().into_iter().flatten();
                source =
                    variants.find(|v| v["properties"]["type"]["enum"][0] == variant).unwrap_or(&Value::Null);
            }
            for (key, value) in source["properties"][bound.source_field].as_object().into_iter().flatten() {
                if BOUND_KEYS.contains(&key.as_str()) {
                    fields[bound.field][key] = value.clone();
                }
            }
        }
        let (rules, ruled) = crate::service::schema::conditions(applied);
        for (field, property) in
            schema.get_mut("properties").and_then(Value::as_object_mut).into_iter().flatten()
        {
            for (key, value) in fields[field.as_str()].as_object().into_iter().flatten() {
                property[key] = value.clone();
            }
            if !ruled.contains(&field.as_str()) {
                without_nul(property);
            }
            if let Some(items) = property.get_mut("items") {
                without_nul(items);
            }
        }
        if !rules.is_empty() {
            schema["allOf"] = Value::from(rules);
        }
        schemas[applied] = schema;
    }
}

/// A jobs-as-code workflow's field held to the bounds a definition's schema states for the field it stands
/// for, as validation holds both.
struct Bound {
    /// The document's schema and field.
    schema: &'static str,
    field: &'static str,
    /// The definition's schema, the `NodeKind` variant if any, and its field.
    source: &'static str,
    variant: Option<&'static str>,
    source_field: &'static str,
}

const fn bound(
    (schema, field): (&'static str, &'static str),
    (source, variant, source_field): (&'static str, Option<&'static str>, &'static str),
) -> Bound {
    Bound { schema, field, source, variant, source_field }
}

const WORKFLOW_BOUNDS: [Bound; 15] = [
    bound(("Workflow", "name"), ("Definition", None, "name")),
    bound(("Workflow", "description"), ("Definition", None, "description")),
    bound(("Workflow", "alarm_email"), ("Definition", None, "alarmEmail")),
    bound(("Workflow", "node"), ("Definition", None, "nodes")),
    bound(("WorkflowNode", "name"), ("Node", None, "name")),
    bound(("WorkflowNode", "timeout_seconds"), ("Node", None, "timeoutSeconds")),
    bound(("WorkflowNode", "param"), ("NodeKind", Some("job"), "param")),
    bound(("WorkflowNode", "workflow"), ("NodeKind", Some("subworkflow"), "workflow")),
    bound(("WorkflowConcurrency", "max_runs"), ("Concurrency", None, "maxRuns")),
    bound(("WorkflowConcurrency", "max_queued"), ("Concurrency", None, "maxQueued")),
    bound(("NodeRetry", "count"), ("Retry", None, "count")),
    bound(("NodeRetry", "delay_ms"), ("Retry", None, "delayMs")),
    bound(("NodeRetry", "factor"), ("Retry", None, "factor")),
    bound(("NodeRetry", "cap_ms"), ("Retry", None, "capMs")),
    bound(("NodeRetry", "jitter"), ("Retry", None, "jitter")),
];

/// The keywords of a bound, copied from a definition's field to the document's.
const BOUND_KEYS: [&str; 7] =
    ["minimum", "maximum", "minLength", "maxLength", "pattern", "minItems", "maxItems"];

/// A text schema of no narrower shape gets the pattern that refuses NUL.
fn without_nul(schema: &mut serde_json::Value) {
    let is_text = match &schema["type"] {
        serde_json::Value::String(t) => t == "string",
        serde_json::Value::Array(types) => types.iter().any(|t| t == "string"),
        _ => false,
    };
    if is_text
        && schema.get("enum").is_none()
        && schema.get("pattern").is_none()
        && schema.get("format").is_none()
    {
        schema["pattern"] = serde_json::Value::from(crate::service::schema::NO_NUL);
    }
}

/// The document needs no token: it describes, it does not act.
async fn document(axum::extract::State(config): axum::extract::State<Arc<Config>>) -> Response {
    Json(openapi_document(&config.server.context_path)).into_response()
}

/// Every failure's body.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// The HTTP status.
    pub status: u16,
    /// Its reason phrase.
    pub error: String,
    /// What went wrong, in the admin's language (`xxl.job.i18n`) for the console's rules.
    pub message: String,
    /// A refused workflow definition: every problem found.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub errors: Option<Vec<DefinitionProblem>>,
}

/// One problem of a workflow definition.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DefinitionProblem {
    /// The node it is in; null for the workflow's own fields.
    pub node: Option<String>,
    /// Where, as a path in the document: `nodes[3].upstream[1]`, `concurrency.maxRuns`.
    pub field: String,
    /// What is wrong.
    pub problem: String,
}

impl DefinitionProblem {
    fn of(error: &DefinitionError) -> DefinitionProblem {
        DefinitionProblem {
            node: error.node.clone(),
            field: error.field.clone(),
            problem: error.problem.to_string(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    BadRequest(String),
    #[error("no such resource")]
    NotFoundRoute,
    /// The media types the endpoint reads.
    #[error("the request body must be {0}")]
    UnsupportedMediaType(&'static str),
    #[error("method not allowed here")]
    MethodNotAllowed,
    #[error("the job changed since it was read (If-Match does not match its ETag): read it again")]
    PreconditionFailed,
    #[error(transparent)]
    Service(#[from] ServiceError),
}

impl From<TokenError> for ApiError {
    fn from(error: TokenError) -> ApiError {
        ApiError::Unauthorized(error.to_string())
    }
}

impl ApiError {
    fn status(&self) -> StatusCode {
        match self {
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::BadRequest(_)
            | ApiError::Service(ServiceError::Invalid(_) | ServiceError::Definition(_)) => {
                StatusCode::BAD_REQUEST
            }
            ApiError::Service(ServiceError::Forbidden(_)) => StatusCode::FORBIDDEN,
            ApiError::NotFoundRoute | ApiError::Service(ServiceError::NotFound(_)) => StatusCode::NOT_FOUND,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::PreconditionFailed => StatusCode::PRECONDITION_FAILED,
            ApiError::Service(ServiceError::Conflict(_)) => StatusCode::CONFLICT,
            ApiError::Service(ServiceError::Executor(_)) => StatusCode::BAD_GATEWAY,
            ApiError::Service(ServiceError::Unavailable(_)) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Service(ServiceError::Failed | ServiceError::Storage(_)) => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let message = match &self {
            ApiError::Service(ServiceError::Storage(e)) => {
                tracing::error!("API request failed: {e}");
                "database error; see the admin's log".to_string()
            }
            other => other.to_string(),
        };
        let errors = match &self {
            ApiError::Service(ServiceError::Definition(errors)) => {
                Some(errors.iter().map(DefinitionProblem::of).collect())
            }
            _ => None,
        };
        let body = ErrorBody {
            status: status.as_u16(),
            error: status.canonical_reason().unwrap_or("").to_string(),
            message,
            errors,
        };
        let mut response = (status, Json(body)).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer realm=\"xxl-job-admin\""),
            );
        }
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// The user a bearer token stands for, as stored now.
pub struct ApiUser(pub LoginUser);

impl FromRequestParts<AppState> for ApiUser {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let address = request_address(state.config.server.forward_headers, &parts.extensions, &parts.headers);
        let header = parts.headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok());
        let token = header
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim());
        let result = match token {
            Some(token) => authenticate(state, token).await,
            None => Err((
                None,
                ApiError::Unauthorized("an API token is required: Authorization: Bearer <token>".into()),
            )),
        };
        match result {
            Ok((user, token_id)) => {
                Ok(ApiUser(LoginUser(user, Origin { address, token_id: Some(token_id) })))
            }
            Err((uid, error)) => {
                // A refused token is a failed sign-in; its text is never recorded.
                if let (Some(address), ApiError::Unauthorized(reason)) = (address, &error) {
                    state.services.audit.sign_in("(token)", uid, METHOD_TOKEN, address, Some(reason));
                }
                Err(error)
            }
        }
    }
}

/// The user of a token, as stored now, and the token's id; on refusal, the user id the token named
/// when its signature held.
async fn authenticate(state: &AppState, token: &str) -> Result<(JobUser, String), (Option<i32>, ApiError)> {
    let claims =
        state.api_tokens.verify(token, state.services.clock.now_ms()).map_err(|e| (None, e.into()))?;
    let refused = |e: ApiError| (Some(claims.uid), e);
    let user =
        state.services.db.load_user(claims.uid).await.map_err(|e| refused(ServiceError::from(e).into()))?;
    let user = user.ok_or_else(|| refused(TokenError::Revoked.into()))?;
    state.api_tokens.check_user(&claims, &user).map_err(|e| refused(e.into()))?;
    Ok((user, claims.id().to_string()))
}

/// A JSON body; malformed ones are a 400 with serde's reason (which names an unknown or mistyped field), a
/// body that is not `application/json` a 415, and a string holding NUL a 400 naming its field (PostgreSQL
/// cannot store NUL in text, MySQL and SQLite would keep it; refused everywhere alike).
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned + utoipa::ToSchema> FromRequest<AppState> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let Json(value) =
            Json::<serde_json::Value>::from_request(request, state).await.map_err(|e| match e {
                JsonRejection::MissingJsonContentType(_) => {
                    ApiError::UnsupportedMediaType("JSON: Content-Type: application/json")
                }
                other => ApiError::BadRequest(other.body_text()),
            })?;
        let serde_json::Value::Object(mut fields) = integral(value) else {
            // serde would read a struct from an array too; the document says object.
            return Err(ApiError::BadRequest("the request body must be a JSON object".into()));
        };
        if let Some(refusal) = unknown_field(&T::name(), &fields) {
            return Err(refusal);
        }
        // The read-only fields of a view sent back are ignored whatever they hold, so they are not checked.
        let own = schema_fields().get(T::name().as_ref());
        fields.retain(|key, _| own.is_none_or(|own| own.contains(key)));
        let value = serde_json::Value::Object(fields);
        if let Some(field) = nul_in_json(&value, "") {
            return Err(nul_refused(&state.services, &field));
        }
        let value = serde_json::from_value(value)
            .map_err(|e| ApiError::BadRequest(format!("invalid JSON body: {e}")))?;
        Ok(JsonBody(value))
    }
}

/// Forms whose resource, as read, may be sent back changed: the read-only fields of the view are accepted
/// (and ignored) beside the form's own.
const READ_BACK: [(&str, &str); 2] = [("JobForm", "JobView"), ("GroupForm", "GroupView")];

/// The property names of each schema of the document, read once.
fn schema_fields() -> &'static HashMap<String, BTreeSet<String>> {
    static FIELDS: OnceLock<HashMap<String, BTreeSet<String>>> = OnceLock::new();
    FIELDS.get_or_init(|| {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap_or_default();
        let schemas = doc["components"]["schemas"].as_object().cloned().unwrap_or_default();
        schemas.iter().map(|(name, schema)| (name.clone(), properties(schema, &schemas, 0))).collect()
    })
}

/// The property names of a schema, with those of the schemas it is composed of (`allOf`, `$ref`): a view
/// is its row plus a few fields.
fn properties(
    schema: &serde_json::Value,
    schemas: &serde_json::Map<String, serde_json::Value>,
    depth: usize,
) -> BTreeSet<String> {
    let mut fields: BTreeSet<String> =
        schema["properties"].as_object().map(|p| p.keys().cloned().collect()).unwrap_or_default();
    if depth > 8 {
        return fields;
    }
    if let Some(target) =
        schema["$ref"].as_str().and_then(|r| r.rsplit('/').next()).and_then(|name| schemas.get(name))
    {
        fields.extend(properties(target, schemas, depth + 1));
    }
    for part in schema["allOf"].as_array().into_iter().flatten() {
        fields.extend(properties(part, schemas, depth + 1));
    }
    fields
}

/// A misspelt field would otherwise be dropped without a word; it is refused with its name.
fn unknown_field(schema: &str, object: &serde_json::Map<String, serde_json::Value>) -> Option<ApiError> {
    let fields = schema_fields();
    let own = fields.get(schema)?;
    let view = READ_BACK.iter().find(|(form, _)| *form == schema).and_then(|(_, view)| fields.get(*view));
    let unknown = object.keys().find(|key| !own.contains(*key) && !view.is_some_and(|v| v.contains(*key)))?;
    let known: Vec<&str> = own.iter().map(String::as_str).collect();
    Some(ApiError::BadRequest(format!(
        "unknown field `{}`; {schema} has {}",
        unknown.replace('\0', "\\0"),
        known.join(", ")
    )))
}

/// JSON Schema's integers include `1.0`: numbers without a fraction become integers before serde, which
/// would refuse a float for an integer field.
fn integral(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => match n.as_f64() {
            // Within ±2^53 an f64 holds every integer exactly; beyond, it stays a float for serde to refuse.
            Some(f) if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => Value::from(f as i64),
            _ => Value::Number(n),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(integral).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, integral(v))).collect()),
        other => other,
    }
}

/// Where a string holding NUL sits in `value` (`jobDesc`, `items[2]`), keys included.
fn nul_in_json(value: &serde_json::Value, path: &str) -> Option<String> {
    use serde_json::Value;
    match value {
        Value::String(text) => text.contains('\0').then(|| path.to_string()),
        Value::Array(items) => {
            items.iter().enumerate().find_map(|(i, v)| nul_in_json(v, &format!("{path}[{i}]")))
        }
        Value::Object(map) => map.iter().find_map(|(key, v)| {
            let here = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
            if key.contains('\0') {
                Some(here)
            } else {
                nul_in_json(v, &here)
            }
        }),
        _ => None,
    }
}

fn nul_refused(services: &ServiceContext, field: &str) -> ApiError {
    ApiError::BadRequest(services.i18n.format("system_nul_refused", &[&field.replace('\0', "\\0")]))
}

/// Query parameters; malformed ones are a 400 naming the parameter in the admin's language.
pub struct QueryParams<T>(pub T);

impl<T: DeserializeOwned> FromRequestParts<AppState> for QueryParams<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let pairs: Vec<(String, String)> = parts
            .uri
            .query()
            .map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect())
            .unwrap_or_default();
        if let Some((name, _)) =
            pairs.iter().find(|(name, value)| name.contains('\0') || value.contains('\0'))
        {
            return Err(nul_refused(&state.services, name));
        }
        match axum::extract::Query::<T>::try_from_uri(&parts.uri) {
            Ok(axum::extract::Query(value)) => Ok(QueryParams(value)),
            Err(rejection) => Err(match culprit::<T>(&pairs) {
                Some(name) => {
                    ApiError::BadRequest(state.services.i18n.format("system_param_invalid", &[&name]))
                }
                None => ApiError::BadRequest(rejection.body_text()),
            }),
        }
    }
}

/// The first parameter that alone fails to bind: serde's own text names no field for a mistyped number.
fn culprit<T: DeserializeOwned>(pairs: &[(String, String)]) -> Option<String> {
    pairs.iter().find_map(|(name, value)| {
        let query = url::form_urlencoded::Serializer::new(String::new()).append_pair(name, value).finish();
        let uri: axum::http::Uri = format!("/?{query}").parse().ok()?;
        axum::extract::Query::<T>::try_from_uri(&uri).is_err().then(|| name.clone())
    })
}

/// A resource id from the path (or a struct of the path's parameters); not a number (or out of range) is
/// a 400 naming the parameter (`id` unless a struct names another).
pub struct Id<T>(pub T);

impl<T: DeserializeOwned + Send> FromRequestParts<AppState> for Id<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        use axum::extract::path::ErrorKind;
        use axum::extract::rejection::PathRejection;
        let axum::extract::Path(value) =
            axum::extract::Path::<T>::from_request_parts(parts, state).await.map_err(|rejection| {
                let name = match &rejection {
                    PathRejection::FailedToDeserializePathParams(e) => match e.kind() {
                        ErrorKind::ParseErrorAtKey { key, .. }
                        | ErrorKind::InvalidUtf8InPathParam { key }
                        | ErrorKind::DeserializeError { key, .. } => key.as_str(),
                        _ => "id",
                    },
                    _ => "id",
                };
                ApiError::BadRequest(state.services.i18n.format("system_param_invalid", &[&name]))
            })?;
        Ok(Id(value))
    }
}

/// The `Location` of a resource created at `{BASE}{path}`.
pub fn location(config: &Config, path: &str) -> [(HeaderName, String); 1] {
    [(LOCATION, format!("{}{BASE}{path}", config.server.context_path))]
}

/// A strong validator of what a GET answers: the SHA-256 of its JSON, quoted.
pub fn etag(view: &impl Serialize) -> String {
    use sha2::Digest;
    let json = serde_json::to_vec(view).unwrap_or_default();
    format!("\"{}\"", hex::encode(&sha2::Sha256::digest(&json)[..16]))
}

/// One page of a list.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Listing<T> {
    /// How many match the filters in all.
    pub total: i64,
    pub items: Vec<T>,
}

/// A number parameter within what the document declares; outside it, a 400 naming it.
pub fn within(
    services: &ServiceContext,
    name: &str,
    value: Option<i32>,
    range: std::ops::RangeInclusive<i32>,
) -> ApiResult<()> {
    match value {
        Some(value) if !range.contains(&value) => {
            Err(ApiError::BadRequest(services.i18n.format("system_param_invalid", &[&name])))
        }
        _ => Ok(()),
    }
}

/// `offset` from 0, `limit` from 1 to [`MAX_LIMIT`].
pub fn paging(offset: Option<i64>, limit: Option<i64>) -> ApiResult<(i64, i64)> {
    let (offset, limit) = (offset.unwrap_or(0), limit.unwrap_or(20));
    if offset < 0 {
        return Err(ApiError::BadRequest("offset must not be negative".into()));
    }
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::BadRequest(format!("limit must be between 1 and {MAX_LIMIT}")));
    }
    Ok((offset, limit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_names_every_route_and_the_bearer_scheme() {
        let doc = serde_json::to_value(openapi_document("/xxl-job-admin")).unwrap();
        assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
        assert_eq!(doc["servers"][0]["url"], "/xxl-job-admin/openapi/v1");
        assert_eq!(doc["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");
        let ids: Vec<&str> = doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|p| p.as_object().unwrap().values())
            .map(|op| op["operationId"].as_str().unwrap())
            .collect();
        let unique: std::collections::BTreeSet<&str> = ids.iter().copied().collect();
        assert_eq!(unique.len(), ids.len(), "operation ids are unique: {ids:?}");
        let mut refs = Vec::new();
        collect_refs(&doc, &mut refs);
        for target in refs {
            let name = target.strip_prefix("#/components/schemas/").unwrap_or(&target);
            assert!(doc["components"]["schemas"][name].is_object(), "{target} resolves");
        }
        let paths = doc["paths"].as_object().unwrap();
        for path in [
            "/groups",
            "/groups/{id}",
            "/jobs",
            "/jobs/{id}",
            "/jobs/{id}/start",
            "/jobs/{id}/stop",
            "/jobs/{id}/trigger",
            "/jobs/{id}/next-fire-times",
            "/logs",
            "/logs/{id}",
            "/logs/{id}/rolling",
            "/logs/{id}/kill",
            "/export",
            "/apply",
            "/workflows",
            "/workflows/{id}",
            "/workflows/{id}/versions",
            "/workflows/{id}/versions/{version}",
            "/workflows/{id}/versions/{version}/restore",
            "/workflows/{id}/diff",
            "/workflows/{id}/start",
            "/workflows/{id}/stop",
        ] {
            assert!(paths.contains_key(path), "{path} documented");
        }
    }

    /// The definition's schema states validate's bounds: what the document allows, the server accepts
    /// (as far as each field alone goes), and what it forbids, the server refuses.
    #[test]
    fn the_definition_schema_states_what_validation_holds_to() {
        use crate::domain::workflow::validate::*;
        let doc = openapi_document("");
        let schemas = &doc["components"]["schemas"];
        let bound = |schema: &str, field: &str, key: &str| {
            let property = &schemas[schema]["properties"][field];
            property[key].as_f64().unwrap_or_else(|| panic!("{schema}.{field} has a {key}: {property}"))
        };
        let kind = |variant: &str| {
            let variants = schemas["NodeKind"]["oneOf"].as_array().unwrap();
            variants.iter().find(|v| v["properties"]["type"]["enum"][0] == variant).unwrap().clone()
        };
        let as_f64 = |n: usize| n as f64;
        assert_eq!(bound("Definition", "name", "maxLength"), as_f64(MAX_NAME_CHARS));
        assert_eq!(bound("Definition", "description", "maxLength"), as_f64(MAX_DESCRIPTION_CHARS));
        assert_eq!(bound("Definition", "alarmEmail", "maxLength"), as_f64(MAX_ALARM_EMAIL_CHARS));
        assert_eq!(bound("Definition", "nodes", "maxItems"), as_f64(MAX_NODES));
        assert_eq!(bound("Node", "name", "maxLength"), as_f64(MAX_NODE_NAME_CHARS));
        assert_eq!(bound("Node", "timeoutSeconds", "maximum"), MAX_SECONDS as f64);
        assert_eq!(bound("Deadline", "seconds", "maximum"), MAX_SECONDS as f64);
        assert_eq!(bound("Retry", "delayMs", "maximum"), MAX_RETRY_DELAY_MS as f64);
        assert_eq!(bound("Retry", "capMs", "maximum"), MAX_RETRY_DELAY_MS as f64);
        let job = kind("job");
        assert_eq!(job["properties"]["param"]["maxLength"].as_f64(), Some(as_f64(MAX_TEMPLATE_CHARS)));
        assert_eq!(job["required"], serde_json::json!(["jobId", "type"]), "the field names serde reads");
        let sub = kind("subworkflow");
        assert_eq!(
            sub["properties"]["workflow"]["pattern"],
            schemas["Definition"]["properties"]["name"]["pattern"]
        );
        for schema in ["Definition", "Node", "Schedule", "Retry", "Concurrency", "Deadline", "Way"] {
            assert_eq!(schemas[schema]["additionalProperties"], false, "{schema} refuses other fields");
        }
        for path in ["/workflows", "/workflows/{id}"] {
            let method = if path == "/workflows" { "post" } else { "put" };
            assert_eq!(
                doc["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]["$ref"],
                "#/components/schemas/Definition"
            );
        }
        let names = |schema: &str| schemas[schema]["enum"].clone();
        let stored = |all: Vec<&str>| serde_json::json!(all);
        use crate::domain::workflow::model::{FailureStrategy, LimitPolicy, TriggerRule};
        assert_eq!(names("TriggerRule"), stored(TriggerRule::ALL.iter().map(|r| r.as_str()).collect()));
        assert_eq!(
            names("FailureStrategy"),
            stored(FailureStrategy::ALL.iter().map(|f| f.as_str()).collect())
        );
        assert_eq!(names("LimitPolicy"), stored(LimitPolicy::ALL.iter().map(|l| l.as_str()).collect()));
        assert_eq!(names("ScheduleType"), serde_json::json!(["NONE", "CRON", "FIX_RATE"]));
        let problem = &schemas["DefinitionProblem"]["properties"];
        assert!(
            problem["node"].is_object() && problem["field"].is_object() && problem["problem"].is_object()
        );
    }

    /// A workflow's name is refused when blank or holding a control character, as an AppName is, whose
    /// pattern is checked against the server's blank check: the same pattern but for markup.
    #[test]
    fn the_workflow_name_pattern_is_the_app_name_one_without_markup() {
        let doc = openapi_document("");
        let schemas = &doc["components"]["schemas"];
        let app_name = schemas["GroupForm"]["properties"]["appname"]["pattern"].as_str().unwrap();
        let name = schemas["Definition"]["properties"]["name"]["pattern"].as_str().unwrap();
        assert_eq!(name, app_name.replace("<>", ""));
    }

    #[test]
    fn the_document_declares_what_the_server_enforces() {
        let doc = serde_json::to_value(openapi_document("")).unwrap();
        let schemas = &doc["components"]["schemas"];
        let required = |schema: &str| schemas[schema]["required"].as_array().cloned().unwrap_or_default();
        for field in [
            "jobGroup",
            "jobDesc",
            "author",
            "scheduleType",
            "misfireStrategy",
            "executorRouteStrategy",
            "executorBlockStrategy",
        ] {
            assert!(required("JobForm").contains(&serde_json::json!(field)), "JobForm requires {field}");
        }
        assert!(required("GroupForm").contains(&serde_json::json!("appname")));
        let appname = &schemas["GroupForm"]["properties"]["appname"];
        assert_eq!((appname["minLength"].as_i64(), appname["maxLength"].as_i64()), (Some(4), Some(64)));
        let job = &schemas["JobForm"]["properties"];
        assert_eq!(job["scheduleType"]["enum"], serde_json::json!(["NONE", "CRON", "FIX_RATE"]));
        assert_eq!(job["executorRouteStrategy"]["enum"].as_array().map(Vec::len), Some(10));
        assert_eq!(job["executorBlockStrategy"]["enum"].as_array().map(Vec::len), Some(3));
        assert_eq!(job["glueType"]["enum"].as_array().map(Vec::len), Some(7));
        let list = doc["paths"]["/jobs"]["get"]["parameters"].as_array().unwrap();
        let param = |name: &str| list.iter().find(|p| p["name"] == name).unwrap()["schema"].clone();
        assert_eq!(
            (param("limit")["minimum"].as_f64(), param("limit")["maximum"].as_f64()),
            (Some(1.0), Some(1000.0))
        );
        assert_eq!(param("offset")["minimum"].as_f64(), Some(0.0));
        assert_eq!(
            (param("triggerStatus")["minimum"].as_f64(), param("triggerStatus")["maximum"].as_f64()),
            (Some(-1.0), Some(1.0))
        );
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                assert!(op["responses"]["400"].is_object(), "{method} {path} declares its 400");
            }
        }
        // What the derive cannot say: no NUL, the names a body may use, the rules between fields.
        assert_eq!(job["alarmEmail"]["pattern"], crate::service::schema::NO_NUL);
        assert_eq!(param("jobDesc")["pattern"], crate::service::schema::NO_NUL);
        let names = schemas["JobForm"]["propertyNames"]["enum"].as_array().unwrap();
        assert!(
            names.contains(&serde_json::json!("jobDesc")) && names.contains(&serde_json::json!("updateTime")),
            "form and view fields"
        );
        let cron = &schemas["JobForm"]["allOf"][0]["anyOf"][0];
        assert_eq!(
            (
                cron["properties"]["scheduleType"]["const"].as_str(),
                cron["properties"]["scheduleConf"]["format"].as_str()
            ),
            (Some("CRON"), Some("quartz-cron"))
        );
        assert!(job["scheduleConf"].get("pattern").is_none(), "the rules alone describe scheduleConf");
        assert_eq!(
            doc["paths"]["/jobs"]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/NewJob"
        );
        assert_eq!(schemas["NewJob"]["allOf"][1]["required"], serde_json::json!(["glueType"]));
    }

    #[test]
    fn the_jobs_as_code_operations_declare_what_the_server_checks() {
        let doc = serde_json::to_value(openapi_document("")).unwrap();
        let schemas = &doc["components"]["schemas"];
        let param = |path: &str, method: &str, name: &str| {
            let list = doc["paths"][path][method]["parameters"].as_array().unwrap();
            list.iter().find(|p| p["name"] == name).unwrap()["schema"].clone()
        };
        assert_eq!(param("/export", "get", "format")["enum"], serde_json::json!(["json", "toml"]));
        assert_eq!(param("/export", "get", "group")["items"]["pattern"], crate::service::schema::NO_NUL);
        assert_eq!(
            (
                param("/apply", "post", "dryRun")["type"].as_str(),
                param("/apply", "post", "prune")["type"].as_str()
            ),
            (Some("boolean"), Some("boolean"))
        );
        let export = &doc["paths"]["/export"]["get"]["responses"]["200"]["content"];
        assert_eq!(
            export["application/json"]["schema"]["$ref"], "#/components/schemas/Document",
            "an export answers the plain shape"
        );
        assert!(export["application/toml"].is_object());
        let apply = &doc["paths"]["/apply"]["post"];
        for media in ["application/json", "application/toml", "text/toml"] {
            assert_eq!(
                apply["requestBody"]["content"][media]["schema"]["$ref"],
                "#/components/schemas/AppliedDocument",
                "{media}"
            );
        }
        for status in ["200", "400", "401", "403", "404", "409", "415"] {
            assert!(apply["responses"][status].is_object(), "apply declares its {status}");
        }
        assert_eq!(
            schemas["AppliedDocument"]["properties"]["executor"]["items"]["$ref"],
            "#/components/schemas/AppliedExecutor"
        );
        let executor = &schemas["AppliedExecutor"];
        assert_eq!(executor["properties"]["job"]["items"]["$ref"], "#/components/schemas/AppliedJob");
        assert_eq!(
            (
                executor["properties"]["app_name"]["minLength"].as_i64(),
                executor["properties"]["title"]["maxLength"].as_i64()
            ),
            (Some(4), Some(12))
        );
        assert_eq!(executor["allOf"][0]["anyOf"][0]["properties"]["addresses"]["minItems"], 1);
        let job = &schemas["AppliedJob"];
        assert_eq!(job["properties"]["author"]["maxLength"], 64);
        assert_eq!(job["properties"]["trigger_status"]["enum"], serde_json::json!([0, 1, null]));
        assert_eq!(job["properties"]["route_strategy"]["enum"].as_array().map(Vec::len), Some(10));
        let none = &job["allOf"][0]["anyOf"][2]["properties"];
        assert_eq!(
            (none["schedule_type"]["const"].as_str(), none["trigger_status"]["enum"].clone()),
            (Some("NONE"), serde_json::json!([0, null]))
        );
        assert_eq!(
            job["allOf"][1]["anyOf"][1]["required"],
            serde_json::json!(["handler"]),
            "a BEAN job, the default, needs its JobHandler"
        );
        assert!(
            schemas["Job"]["properties"]["author"].get("maxLength").is_none(),
            "the exported shape is left as it is"
        );
    }

    /// A workflow of `/apply`'s document is held to a definition's bounds, under the document's names; a
    /// node to one kind; the exported shape is left as it is.
    #[test]
    fn the_applied_workflow_states_a_definitions_bounds_and_one_kind_a_node() {
        let doc = serde_json::to_value(openapi_document("")).unwrap();
        let schemas = &doc["components"]["schemas"];
        let executor = &schemas["AppliedExecutor"];
        use crate::domain::workflow::validate::{MAX_NODES, MAX_RETRY_DELAY_MS};
        let workflow = &schemas["AppliedWorkflow"]["properties"];
        assert_eq!(
            schemas["AppliedDocument"]["properties"]["workflow"]["items"]["$ref"],
            "#/components/schemas/AppliedWorkflow"
        );
        assert_eq!(workflow["node"]["items"]["$ref"], "#/components/schemas/AppliedWorkflowNode");
        assert_eq!(workflow["node"]["maxItems"].as_u64(), Some(MAX_NODES as u64));
        assert_eq!(workflow["name"]["pattern"], schemas["Definition"]["properties"]["name"]["pattern"]);
        assert_eq!(workflow["executor"]["pattern"], executor["properties"]["app_name"]["pattern"]);
        assert_eq!(workflow["trigger_status"]["enum"], serde_json::json!([0, 1, null]));
        let retry = &schemas["AppliedNodeRetry"]["properties"];
        assert_eq!(retry["delay_ms"]["maximum"].as_u64(), Some(MAX_RETRY_DELAY_MS));
        assert_eq!(schemas["AppliedWorkflowConcurrency"]["properties"]["max_runs"]["minimum"], 1);
        let node = &schemas["AppliedWorkflowNode"];
        assert_eq!(node["properties"]["name"]["pattern"], "^[A-Za-z0-9_-]+$");
        let kinds: Vec<&serde_json::Value> =
            node["allOf"][0]["anyOf"].as_array().into_iter().flatten().map(|k| &k["required"][0]).collect();
        assert_eq!(kinds, ["job", "workflow", "branch", "approvers"]);
        let job = &node["allOf"][0]["anyOf"][0]["properties"];
        assert!(job.get("param").is_none() && job["workflow"]["type"] == "null", "{job}");
        assert!(
            schemas["Workflow"]["properties"]["name"].get("maxLength").is_none(),
            "the exported shape is left as it is"
        );
    }

    /// openapi-spec-validator holds every `default` and `enum` value to the schema it sits in: a `null`
    /// needs a type that admits null (or no type), a number the schema's bounds.
    #[test]
    fn defaults_and_enumerations_fit_their_own_schemas() {
        let mut misfits = Vec::new();
        misfits_in(&openapi_document(""), "#", &mut misfits);
        assert!(misfits.is_empty(), "{misfits:#?}");
    }

    /// The forms' derives write the patterns out as literals: they are the ones `/apply` holds the same
    /// fields to, which `service::schema` checks against the server's blank check.
    #[test]
    fn the_forms_write_the_shared_patterns_out() {
        let doc = openapi_document("");
        let pattern = |schema: &str, field: &str| {
            doc["components"]["schemas"][schema]["properties"][field]["pattern"].clone()
        };
        for ((form, field), (applied, as_applied)) in [
            (("GroupForm", "appname"), ("AppliedExecutor", "app_name")),
            (("GroupForm", "title"), ("AppliedExecutor", "title")),
            (("JobForm", "jobDesc"), ("AppliedJob", "description")),
            (("JobForm", "author"), ("AppliedJob", "author")),
        ] {
            assert!(pattern(form, field).is_string(), "{form}.{field}");
            assert_eq!(pattern(form, field), pattern(applied, as_applied), "{form}.{field}");
        }
    }

    fn misfits_in(value: &serde_json::Value, at: &str, misfits: &mut Vec<String>) {
        use serde_json::Value;
        match value {
            Value::Object(map) => {
                let admits_null = match map.get("type") {
                    None => true,
                    Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
                    Some(one) => one == "null",
                };
                let bound = |key: &str| map.get(key).and_then(Value::as_f64);
                let listed = map.get("enum").and_then(Value::as_array).into_iter().flatten();
                for (what, v) in
                    map.get("default").map(|d| ("default", d)).into_iter().chain(listed.map(|v| ("enum", v)))
                {
                    let below = v.as_f64().zip(bound("minimum")).is_some_and(|(v, min)| v < min);
                    let above = v.as_f64().zip(bound("maximum")).is_some_and(|(v, max)| v > max);
                    if (v.is_null() && !admits_null) || below || above {
                        misfits.push(format!("{at}: {what} {v} in {value}"));
                    }
                }
                map.iter().for_each(|(key, v)| misfits_in(v, &format!("{at}/{key}"), misfits));
            }
            Value::Array(items) => {
                items.iter().enumerate().for_each(|(i, v)| misfits_in(v, &format!("{at}/{i}"), misfits))
            }
            _ => {}
        }
    }

    fn collect_refs(value: &serde_json::Value, refs: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                refs.extend(map.get("$ref").and_then(|r| r.as_str()).map(str::to_string));
                map.values().for_each(|v| collect_refs(v, refs));
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| collect_refs(v, refs)),
            _ => {}
        }
    }

    #[test]
    fn paging_is_bounded() {
        assert_eq!(paging(None, None).unwrap(), (0, 20));
        assert!(paging(Some(-1), None).is_err());
        assert!(paging(None, Some(0)).is_err());
        assert!(paging(None, Some(MAX_LIMIT + 1)).is_err());
        assert_eq!(paging(Some(5), Some(MAX_LIMIT)).unwrap(), (5, MAX_LIMIT));
    }
}
