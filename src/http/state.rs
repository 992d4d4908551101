//! What every request handler can reach: the services' context, and what only HTTP needs.

use crate::config::Config;
use crate::http::console::state::ConsoleState;
use crate::ldap::Directory;
use crate::metrics::Metrics;
use crate::service::tokens::ApiTokens;
use crate::service::ServiceContext;
use crate::storage::StorageError;
use crate::workers::registry::RegistryQueue;
use axum::extract::FromRef;
use std::sync::Arc;

#[derive(Clone)]
pub struct AppState {
    pub services: ServiceContext,
    pub config: Arc<Config>,
    /// Executors' registrations, written in batches.
    pub registry: RegistryQueue,
    pub console: Arc<ConsoleState>,
    /// Signs and checks the REST API's personal tokens.
    pub api_tokens: ApiTokens,
    pub metrics: Arc<Metrics>,
}

impl AppState {
    pub async fn build(
        services: ServiceContext,
        config: Arc<Config>,
        registry: RegistryQueue,
        metrics: Arc<Metrics>,
        ldap: Option<Directory>,
    ) -> Result<AppState, StorageError> {
        let console =
            Arc::new(ConsoleState::build(&config, &services.db, services.i18n.clone(), ldap).await?);
        // API tokens are keyed by the session secret: valid on every admin whose sessions are.
        let api_tokens = ApiTokens::new(&console.secret.derive("api-token"));
        Ok(AppState { services, config, registry, console, api_tokens, metrics })
    }
}

/// Makes each named field a part handlers extract on their own (`State<ServiceContext>`,
/// `State<Arc<Config>>`, …) rather than the whole state.
macro_rules! parts {
    ($($field:ident: $part:ty),* $(,)?) => {$(
        impl FromRef<AppState> for $part {
            fn from_ref(state: &AppState) -> $part {
                state.$field.clone()
            }
        }
    )*};
}

parts!(
    services: ServiceContext,
    config: Arc<Config>,
    console: Arc<ConsoleState>,
    registry: RegistryQueue,
    api_tokens: ApiTokens,
    metrics: Arc<Metrics>,
);
