//! Console failures, mapped once at the edge: to a ReturnT JSON body (HTTP 200, code 500) for data
//! endpoints, to the standalone error page for pages (2.4.2: WebExceptionResolver). Messages are our own
//! i18n texts; database errors are logged and reported without SQL or class names.
//!
//! Handlers return [`ConsoleError`] (or [`PageError`] for a page) and `?` converts the services' and
//! storage's errors. The parts of an answer that need the context path (the login redirect's `Location`,
//! the error page's link home) are left marked, and [`fill_context_path`], one layer on the console's
//! router, fills them in.

use crate::domain::html::escape;
use crate::domain::ReturnT;
use crate::service::audit::{Failure, Outcome};
use crate::service::ServiceError;
use crate::storage::StorageError;
use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};

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
            | ServiceError::Conflict(msg)
            | ServiceError::Unavailable(msg) => ConsoleError::Message(msg),
            ServiceError::Executor(Some(msg)) => ConsoleError::Message(msg),
            refused @ ServiceError::Definition(_) => ConsoleError::Message(refused.to_string()),
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

    fn special_response(&self) -> Option<Response> {
        match self {
            // 302, as 2.4.2 answers pages and AJAX calls alike; the edge adds where to.
            ConsoleError::LoginRequired => {
                Some((StatusCode::FOUND, Extension(LoginRedirect::default())).into_response())
            }
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

/// A failure of a page: answered with the standalone error page.
#[derive(Debug)]
pub struct PageError(pub ConsoleError);

impl<E: Into<ConsoleError>> From<E> for PageError {
    fn from(error: E) -> PageError {
        PageError(error.into())
    }
}

/// A failure of a JSON endpoint; also what parameter extraction answers.
impl IntoResponse for ConsoleError {
    fn into_response(self) -> Response {
        if let Some(response) = self.special_response() {
            return response;
        }
        let body = ReturnT::<()> { code: 500, msg: self.message(), content: None };
        Json(body).into_response()
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        if let Some(response) = self.0.special_response() {
            return response;
        }
        let message = self.0.message().unwrap_or_default();
        ([(header::CONTENT_TYPE, "text/html;charset=UTF-8")], Extension(ErrorPage(message))).into_response()
    }
}

/// Marks the redirect to the login page, whose `Location` [`fill_context_path`] writes.
#[derive(Debug, Clone, Default)]
pub struct LoginRedirect {
    /// The login page's query, when it is to lead back somewhere (see `return_to`).
    pub query: Option<String>,
}

/// Marks the error page, with its message, which [`fill_context_path`] writes with a link home.
#[derive(Debug, Clone)]
struct ErrorPage(String);

/// Completes the answers of failures with the context path: the one layer that knows it.
pub async fn fill_context_path(State(context_path): State<String>, mut response: Response) -> Response {
    if let Some(LoginRedirect { query }) = response.extensions_mut().remove::<LoginRedirect>() {
        let query = query.map(|query| format!("?{query}")).unwrap_or_default();
        if let Ok(location) = HeaderValue::from_str(&format!("{context_path}/toLogin{query}")) {
            response.headers_mut().insert(header::LOCATION, location);
        }
    }
    if let Some(ErrorPage(message)) = response.extensions_mut().remove::<ErrorPage>() {
        *response.body_mut() = Body::from(error_page(&message, &context_path));
    }
    response
}

fn error_page(message: &str, context_path: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"UTF-8\"><title>Error</title>\
         <style>body{{font-family:sans-serif;margin:3em}}h1{{color:#c23632}}</style></head>\
         <body><h1>System Error</h1><p>{message}</p><p><a href=\"{ctx}/\">Back</a></p></body></html>",
        message = escape(message),
        ctx = escape(context_path),
    )
}
