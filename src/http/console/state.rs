//! The console's own state: session keys, the login throttle, ended sessions and the origin policy.

use super::origin::OriginPolicy;
use super::secret;
use super::session::{EndedSessions, SessionSecret};
use super::throttle::LoginThrottle;
use crate::config::Config;
use crate::i18n::I18n;
use crate::ldap::Directory;
use crate::service::oidc::Oidc;
use crate::storage::{Db, StorageError};

/// Console-only state shared by every instance of the handlers.
pub struct ConsoleState {
    pub secret: SessionSecret,
    pub throttle: LoginThrottle,
    pub ended: EndedSessions,
    pub origins: OriginPolicy,
    /// The console's language, for the refusals its middleware answers.
    pub i18n: I18n,
    /// Checks console passwords when `xxl.job.auth.ldap.*` is configured.
    pub ldap: Option<Directory>,
    /// The OpenID Connect sign-in, when `xxl.job.auth.oidc.issuer` is set.
    pub oidc: Option<Oidc>,
}

impl ConsoleState {
    /// The session secret as configured, or the one kept for this database (see `secret::resolve`).
    pub async fn build(
        config: &Config,
        db: &Db,
        i18n: I18n,
        ldap: Option<Directory>,
    ) -> Result<ConsoleState, StorageError> {
        let secret = secret::resolve(config, db).await?;
        let origins = OriginPolicy::new(config.trusted_origins.clone());
        let oidc = config.auth.oidc.clone().map(Oidc::new);
        Ok(ConsoleState {
            secret,
            throttle: LoginThrottle::default(),
            ended: EndedSessions::default(),
            origins,
            i18n,
            ldap,
            oidc,
        })
    }
}
