//! Console failures, mapped once at the edge: to a ReturnT JSON body (HTTP 200, code 500) for data
//! endpoints, to the standalone error page for pages (2.4.2: WebExceptionResolver). Messages are our own
//! i18n texts; database errors are logged and reported without SQL or class names.

use crate::domain::html::escape;
use crate::domain::ReturnT;
use crate::service::audit::{Failure, Outcome};
use crate::service::ServiceError;
use crate::storage::StorageError;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    /// A validation or business failure with its message.
    #[error("{0}")]
    Message(String),
    /// A failure 2.4.2 reports without a message (`{"code":500,"msg":null,...}`).
    #[error("operation failed")]
    Silent,
    #[error("required parameter '{0}' is missing")]
    MissingParameter(String),
    /// Framework-level binding failure: HTTP 400.
    #[error("{0}")]
    BadRequest(String),
    /// Not logged in: redirect to the login page.
    #[error("login required")]
    LoginRequired,
    /// A request the CSRF rules refuse (another origin's page, a GET no browser marked): HTTP 403.
    #[error("{0}")]
    Refused(String),
    /// A method the endpoint never takes: HTTP 405 with `Allow`.
    #[error("{message}")]
    MethodRefused { allow: &'static str, message: String },
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error("session: {0}")]
    Session(#[from] tower_sessions::session::Error),
}

/// The console reports every refusal of the shared rules as 2.4.2 does: a ReturnT failure with the
/// message (HTTP 200, code 500), or without one.
impl From<ServiceError> for ConsoleError {
    fn from(error: ServiceError) -> ConsoleError {
        match error {
            ServiceError::Invalid(msg)
            | ServiceError::Forbidden(msg)
            | ServiceError::NotFound(msg)
            | ServiceError::Conflict(msg) => ConsoleError::Message(msg),
            ServiceError::Executor(Some(msg)) => ConsoleError::Message(msg),
            ServiceError::Failed | ServiceError::Executor(None) => ConsoleError::Silent,
            ServiceError::Storage(e) => ConsoleError::Storage(e),
        }
    }
}

impl Failure for ConsoleError {
    fn audited(&self) -> (Outcome, String) {
        match self {
            ConsoleError::Storage(_) | ConsoleError::Session(_) => {
                (Outcome::Failure, "database or session error".to_string())
            }
            other => (Outcome::Failure, other.message().unwrap_or_default()),
        }
    }
}

impl ConsoleError {
    pub fn msg(text: impl Into<String>) -> ConsoleError {
        ConsoleError::Message(text.into())
    }

    fn message(&self) -> Option<String> {
        match self {
            ConsoleError::Silent => None,
            ConsoleError::Storage(e) => {
                tracing::error!("console request failed: {e}");
                Some("database error; see the admin's log".to_string())
            }
            ConsoleError::Session(e) => {
                tracing::error!("console session failed: {e}");
                Some("session error; see the admin's log".to_string())
            }
            other => Some(other.to_string()),
        }
    }

    fn special_response(&self, context_path: &str) -> Option<Response> {
        match self {
            // 302, as 2.4.2 answers pages and AJAX calls alike.
            ConsoleError::LoginRequired => Some(
                (StatusCode::FOUND, [(header::LOCATION, format!("{context_path}/toLogin"))]).into_response(),
            ),
            ConsoleError::BadRequest(msg) => Some(
                (
                    StatusCode::BAD_REQUEST,
                    Json(serde_json::json!({
                        "status": 400, "error": "Bad Request", "message": msg
                    })),
                )
                    .into_response(),
            ),
            // The console's envelope, whose `msg` its pages show, with the status scripts check.
            ConsoleError::Refused(msg) => {
                Some((StatusCode::FORBIDDEN, envelope(StatusCode::FORBIDDEN, msg)).into_response())
            }
            ConsoleError::MethodRefused { allow, message } => Some(
                (
                    StatusCode::METHOD_NOT_ALLOWED,
                    [(header::ALLOW, *allow)],
                    envelope(StatusCode::METHOD_NOT_ALLOWED, message),
                )
                    .into_response(),
            ),
            _ => None,
        }
    }
}

fn envelope(status: StatusCode, msg: &str) -> Json<ReturnT<()>> {
    Json(ReturnT { code: i32::from(status.as_u16()), msg: Some(msg.to_string()), content: None })
}

/// A failure of a JSON endpoint.
#[derive(Debug)]
pub struct JsonError {
    pub error: ConsoleError,
    pub context_path: String,
}

/// A failure of a page.
#[derive(Debug)]
pub struct PageError {
    pub error: ConsoleError,
    pub context_path: String,
}

impl IntoResponse for JsonError {
    fn into_response(self) -> Response {
        if let Some(response) = self.error.special_response(&self.context_path) {
            return response;
        }
        let body = ReturnT::<()> { code: 500, msg: self.error.message(), content: None };
        Json(body).into_response()
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        if let Some(response) = self.error.special_response(&self.context_path) {
            return response;
        }
        let message = escape(&self.error.message().unwrap_or_default());
        let html = format!(
            "<!DOCTYPE html><html><head><meta charset=\"UTF-8\"><title>Error</title>\
             <style>body{{font-family:sans-serif;margin:3em}}h1{{color:#c23632}}</style></head>\
             <body><h1>System Error</h1><p>{message}</p><p><a href=\"{ctx}/\">Back</a></p></body></html>",
            ctx = escape(&self.context_path),
        );
        ([(header::CONTENT_TYPE, "text/html;charset=UTF-8")], html).into_response()
    }
}

impl IntoResponse for ConsoleError {
    /// Used where the context path is not at hand (parameter extraction): JSON, rooted redirects.
    fn into_response(self) -> Response {
        JsonError { error: self, context_path: String::new() }.into_response()
    }
}
