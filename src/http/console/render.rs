//! Server-rendered pages: minijinja templates and static assets, both embedded in the binary.

use super::error::PageError;
use crate::http::state::AppState;
use crate::storage::{JobUser, Role};
use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use minijinja::{context, Environment, Value};
use rust_embed::RustEmbed;
use std::sync::OnceLock;

#[derive(RustEmbed)]
#[folder = "templates/"]
struct Templates;

#[derive(RustEmbed)]
#[folder = "static/"]
struct Static;

/// Parsed once; autoescaping is on for every `.html` template.
fn environment() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_loader(|name| {
            Ok(Templates::get(name).map(|file| String::from_utf8_lossy(&file.data).into_owned()))
        });
        env
    })
}

/// Renders `template` with the context every page shares plus `page`.
pub fn render(
    state: &AppState,
    user: Option<&JobUser>,
    sidebar_collapsed: bool,
    template: &str,
    page: Value,
) -> Result<Html<String>, PageError> {
    let i18n = &state.services.i18n;
    let common = context! {
        base_url => state.config.server.context_path.clone(),
        i18n => Value::from_serialize(i18n.all()),
        i18n_json => script_json(&i18n.all()),
        lang => i18n.lang_code(),
        user => user.map(|u| context! { id => u.id, username => u.username.clone(), role => u.role }),
        is_admin => user.is_some_and(|u| u.role == Role::Admin),
        sidebar_collapsed => sidebar_collapsed,
        year => chrono::Local::now().format("%Y").to_string(),
    };
    let ctx = context! { ..page, ..common };
    let html = environment().get_template(template).and_then(|t| t.render(ctx)).map_err(|e| {
        tracing::error!("template {template}: {e:#}");
        PageError(super::error::ConsoleError::msg("page rendering failed"))
    })?;
    Ok(Html(html))
}

/// JSON for embedding in a `<script>` element: `<` is escaped so no text can close the element.
pub fn script_json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into()).replace('<', "\\u003c")
}

/// `{context}/static/*path`: embedded assets, cacheable for a day.
pub async fn static_file(Path(path): Path<String>) -> Response {
    match Static::get(&path) {
        Some(file) => {
            let mime = mime_guess::from_path(&path).first_or_octet_stream();
            (
                [
                    (header::CONTENT_TYPE, mime.as_ref().to_string()),
                    (header::CACHE_CONTROL, "public, max-age=86400".to_string()),
                ],
                file.data.into_owned(),
            )
                .into_response()
        }
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_json_cannot_close_the_script_element() {
        let json = script_json(&serde_json::json!({"x": "</script><script>alert(1)</script>"}));
        assert!(!json.contains('<'));
        let back: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(back["x"], "</script><script>alert(1)</script>");
    }

    #[test]
    fn every_template_parses() {
        let env = environment();
        let names: Vec<_> = Templates::iter().collect();
        assert!(!names.is_empty());
        for name in names {
            env.get_template(&name).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        }
    }
}
