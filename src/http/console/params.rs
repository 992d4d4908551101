//! Request parameters as the Java console binds them: query string and form body (url-encoded or
//! multipart) merged, any HTTP method (as 2.4.2's controllers). A name sent more than once binds as Spring's
//! conversion does: a string gets the values joined with commas (`permission=1&permission=2` is "1,2"),
//! a number the first value.

use super::error::ConsoleError;
use crate::http::state::AppState;
use axum::extract::{FromRequest, Multipart, Request};
use axum::http::header::CONTENT_TYPE;
use std::collections::HashMap;

/// GLUE sources can be large (the column is MEDIUMTEXT); nothing else comes near this.
pub const MAX_FORM_BODY: usize = 16 * 1024 * 1024;

#[derive(Debug, Clone, Default)]
pub struct Params {
    /// Every value of each name, in the order sent (query string first).
    values: HashMap<String, Vec<String>>,
}

impl Params {
    pub fn from_pairs<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Params {
        let mut values: HashMap<String, Vec<String>> = HashMap::new();
        for (name, value) in pairs {
            values.entry(name).or_default().push(value);
        }
        Params { values }
    }

    /// A string parameter: absent ⇒ `None`, otherwise exactly as sent (never trimmed).
    pub fn string(&self, name: &str) -> Option<String> {
        self.values.get(name).map(|all| all.join(","))
    }

    fn first(&self, name: &str) -> Option<&str> {
        self.values.get(name).and_then(|all| all.first()).map(String::as_str)
    }

    /// A required number: absent ⇒ a ReturnT failure naming it; empty or not a number ⇒ HTTP 400.
    pub fn required<T: std::str::FromStr>(&self, name: &str) -> Result<T, ConsoleError> {
        match self.first(name) {
            None => Err(ConsoleError::MissingParameter(name.to_string())),
            Some(value) => parse(name, value),
        }
    }

    /// A number with a default for absent or empty values; not a number ⇒ HTTP 400.
    pub fn number_or<T: std::str::FromStr>(&self, name: &str, default: T) -> Result<T, ConsoleError> {
        match self.first(name) {
            None | Some("") => Ok(default),
            Some(value) => parse(name, value),
        }
    }
}

fn parse<T: std::str::FromStr>(name: &str, value: &str) -> Result<T, ConsoleError> {
    value
        .trim()
        .parse()
        .map_err(|_| ConsoleError::BadRequest(format!("parameter '{name}' is not a valid number")))
}

impl FromRequest<AppState> for Params {
    type Rejection = ConsoleError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let mut pairs: Vec<(String, String)> = request
            .uri()
            .query()
            .map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect())
            .unwrap_or_default();
        let content_type = request
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if content_type.starts_with("multipart/form-data") {
            let mut multipart = Multipart::from_request(request, state)
                .await
                .map_err(|e| ConsoleError::BadRequest(format!("malformed multipart body: {e}")))?;
            while let Some(field) = multipart
                .next_field()
                .await
                .map_err(|e| ConsoleError::BadRequest(format!("malformed multipart body: {e}")))?
            {
                let name = field.name().unwrap_or("").to_string();
                let value = field
                    .text()
                    .await
                    .map_err(|e| ConsoleError::BadRequest(format!("unreadable form field: {e}")))?;
                pairs.push((name, value));
            }
        } else if content_type.starts_with("application/x-www-form-urlencoded") {
            let body = axum::body::to_bytes(request.into_body(), MAX_FORM_BODY).await.map_err(|_| {
                ConsoleError::BadRequest(format!("form body larger than {MAX_FORM_BODY} bytes"))
            })?;
            pairs.extend(url::form_urlencoded::parse(&body).into_owned());
        }
        // PostgreSQL cannot store NUL in text (MySQL and SQLite would): refused on every backend alike.
        if let Some((name, _)) =
            pairs.iter().find(|(name, value)| name.contains('\0') || value.contains('\0'))
        {
            let name = name.replace('\0', "\\0");
            return Err(ConsoleError::BadRequest(state.services.i18n.format("system_nul_refused", &[&name])));
        }
        Ok(Params::from_pairs(pairs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Params {
        Params::from_pairs(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
    }

    #[test]
    fn numbers_follow_springs_binding_rules() {
        let p = params(&[("id", "7"), ("empty", ""), ("bad", "x"), ("start", "")]);
        assert_eq!(p.required::<i32>("id").unwrap(), 7);
        assert!(matches!(p.required::<i32>("missing"), Err(ConsoleError::MissingParameter(_))));
        assert!(matches!(p.required::<i32>("empty"), Err(ConsoleError::BadRequest(_))));
        assert!(matches!(p.required::<i32>("bad"), Err(ConsoleError::BadRequest(_))));
        assert_eq!(p.number_or("start", 0).unwrap(), 0);
        assert_eq!(p.number_or("length", 10).unwrap(), 10);
        assert!(p.number_or::<i32>("bad", 1).is_err());
    }

    #[test]
    fn repeated_strings_join_with_commas_and_are_otherwise_untouched() {
        let p = params(&[("a", " x "), ("a", "y"), ("one", " z "), ("id", "3"), ("id", "x")]);
        assert_eq!(p.string("a").as_deref(), Some(" x ,y"));
        assert_eq!(p.string("one").as_deref(), Some(" z "));
        assert_eq!(p.string("b"), None);
        assert_eq!(p.required::<i32>("id").unwrap(), 3, "a number takes the first value");
    }
}
