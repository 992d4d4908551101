//! After login, back to the page that was asked for: a visitor sent to the login page from a console page
//! carries that page along as `/toLogin?redirect=…`, and the login page returns there.
//!
//! Only a relative path under the context path is ever followed (no scheme, no host, no `//`, no `\`, no
//! whitespace or control character, no `.`/`..` segment, encoded or not), so the parameter cannot send a
//! visitor to another site (an open redirect) nor outside the console.

use super::error::LoginRedirect;
use crate::http::state::AppState;
use axum::extract::{OriginalUri, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// The login page's parameter naming the page to return to.
pub const PARAM: &str = "redirect";

/// Encoded in the parameter's value: all but the characters a path reads well with (`?`, `&`, `=` and
/// `%` of the page's own query are encoded).
const VALUE: &AsciiSet = &NON_ALPHANUMERIC.remove(b'/').remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// Wraps the gated pages: when the login gate answers a page request with the redirect to the login
/// page, the requested page is added to it. Data endpoints are not wrapped: a script's call is no page
/// to come back to.
pub async fn remember_page(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let requested =
        request.extensions().get::<OriginalUri>().map_or_else(|| request.uri().clone(), |uri| uri.0.clone());
    let is_get = request.method() == Method::GET;
    let mut response = next.run(request).await;
    let context = &state.config.server.context_path;
    let wanted = requested.path_and_query().map_or("/", |p| p.as_str());
    // The dashboard is where a login leads anyway.
    let is_home = wanted == context.as_str() || wanted == format!("{context}/");
    if let Some(redirect) =
        response.extensions_mut().get_mut::<LoginRedirect>().filter(|_| is_get && !is_home)
    {
        redirect.query =
            safe_return_path(context, wanted).map(|target| format!("{PARAM}={}", param_value(target)));
    }
    response
}

/// `path` encoded as the value of [`PARAM`].
pub fn param_value(path: &str) -> String {
    utf8_percent_encode(path, VALUE).to_string()
}

/// `candidate` if it is a same-site relative path under `context` (`""` or `/xxl-job-admin`), else None.
pub fn safe_return_path<'a>(context: &str, candidate: &'a str) -> Option<&'a str> {
    let under_context = candidate.strip_prefix(context).is_some_and(|rest| rest.starts_with('/'));
    // Browsers read `\` as `/` and drop tabs and line breaks, so `/\evil` or `/\t/evil` would leave the site.
    let plain = candidate.bytes().all(|b| b.is_ascii_graphic() && b != b'\\');
    if !under_context || !plain || candidate.starts_with("//") {
        return None;
    }
    let path = candidate.split(['?', '#']).next().unwrap_or_default();
    let dot_segment = path.split('/').any(|segment| {
        let decoded = percent_decode_str(segment).decode_utf8_lossy();
        decoded == "." || decoded == ".."
    });
    (!dot_segment).then_some(candidate)
}

#[cfg(test)]
mod tests {
    use super::safe_return_path;

    #[test]
    fn pages_under_the_context_path_are_kept() {
        for (context, path) in [
            ("/xxl-job-admin", "/xxl-job-admin/joblog?jobId=7"),
            ("/xxl-job-admin", "/xxl-job-admin/jobcode?jobId=7&x=%2F"),
            ("", "/joblog?jobId=7"),
            ("", "/"),
        ] {
            assert_eq!(safe_return_path(context, path), Some(path), "{context} {path}");
        }
    }

    #[test]
    fn anything_that_could_leave_the_console_is_refused() {
        for (context, path) in [
            ("/xxl-job-admin", "https://evil.example/"),
            ("/xxl-job-admin", "//evil.example/xxl-job-admin/"),
            ("/xxl-job-admin", "/xxl-job-adminx/joblog"),
            ("/xxl-job-admin", "/other/joblog"),
            ("/xxl-job-admin", "xxl-job-admin/joblog"),
            ("/xxl-job-admin", "/xxl-job-admin/../evil"),
            ("/xxl-job-admin", "/xxl-job-admin/%2e%2E/evil"),
            ("/xxl-job-admin", "/xxl-job-admin/./joblog"),
            ("/xxl-job-admin", "/xxl-job-admin/\\evil.example"),
            ("/xxl-job-admin", "/xxl-job-admin/a b"),
            ("", "//evil.example"),
            ("", "/\\evil.example"),
            ("", "/\t/evil.example"),
            ("", "javascript:alert(1)"),
            ("", ""),
        ] {
            assert_eq!(safe_return_path(context, path), None, "{context} {path:?}");
        }
    }
}
