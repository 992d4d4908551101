//! What the cases need beyond the admin itself, what this machine offers, and the one rule that turns a
//! missing need into an ignored case (or, with `CI` set, a failed run).

use crate::support::{self, Backend};
use crate::{metrics, oidc, schema, Case};

/// Something a case needs that a machine may lack. A case's variant on MySQL or PostgreSQL needs that
/// shared server too, unless the case starts database servers of its own ([`Need::is_own_server`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// The shared MariaDB/MySQL server (`XXL_TEST_MYSQL_URL`).
    MySql,
    /// The shared PostgreSQL server (`XXL_TEST_POSTGRES_URL`).
    Postgres,
    /// Upstream's `tables_xxl_job.sql`, in shared/ beside the repository rather than in it
    /// (`XXL_TEST_REFERENCE_SQL`).
    ReferenceSchema,
    /// Headless Chromium and chromedriver.
    Chromium,
    /// curl, to run the documented REST examples (docs/rest-api.md) as written.
    Curl,
    /// A private nginx as the reverse proxy.
    Nginx,
    /// Prometheus's promtool, to check the metrics exposition.
    Promtool,
    /// A private OpenLDAP server (slapd, ldapadd).
    Slapd,
    /// The OpenID Provider: Node and tools/oidc-provider's node_modules.
    OidcProvider,
    /// MariaDB servers of the case's own (mariadb-install-db, mariadbd).
    PrivateMariadb,
    /// PostgreSQL servers of the case's own (the programs of the postgresql package).
    PrivatePostgres,
    /// A MariaDB Galera cluster of the case's own (mariadb-server, galera-4, rsync).
    Galera,
    /// libfaketime, to run an admin with its clock off (package faketime).
    Faketime,
    /// The fault campaign on the database servers was asked for (`XXL_CAMPAIGN_SECONDS` is set): it is
    /// not part of a plain run while its findings with a slow executor are open (issue 44).
    CampaignAsked,
}

impl Need {
    /// Whether the case starts its own database servers and so does not use the shared one.
    fn is_own_server(self) -> bool {
        matches!(self, Need::PrivateMariadb | Need::PrivatePostgres | Need::Galera)
    }

    /// The shared server a backend's variants use, if any.
    fn shared_server(backend: Backend) -> Option<Need> {
        match backend {
            Backend::Sqlite => None,
            Backend::MySql => Some(Need::MySql),
            Backend::Postgres => Some(Need::Postgres),
        }
    }
}

/// One need as found on this machine.
struct Probe {
    need: Need,
    up: Result<(), String>,
    /// What a run with `CI` set says before failing for its absence; `None` if it runs on without it.
    required: Option<&'static str>,
    /// What a run without it says of the cases it ignores.
    note: &'static str,
}

/// What this machine offers, probed once per run, in the order the notes are printed.
pub struct Available {
    probes: Vec<Probe>,
}

impl Available {
    pub fn probe() -> Available {
        let probe = |need, up, required, note| Probe { need, up, required: Some(required), note };
        let reference = schema::reference_script_path();
        let reference = Probe {
            need: Need::ReferenceSchema,
            up: if reference.exists() { Ok(()) } else { Err(format!("{} not found", reference.display())) },
            required: None,
            note: "the reference comparisons are ignored",
        };
        let promtool = if succeeds(metrics::PROMTOOL, "--version") {
            Ok(())
        } else {
            Err(format!("{} is not installed", metrics::PROMTOOL))
        };
        let curl = if succeeds("curl", "--version") { Ok(()) } else { Err("curl is not installed".into()) };
        let campaign = Probe {
            need: Need::CampaignAsked,
            up: if std::env::var_os("XXL_CAMPAIGN_SECONDS").is_some() {
                Ok(())
            } else {
                Err("XXL_CAMPAIGN_SECONDS is not set".into())
            },
            required: None,
            note: "the fault campaign on MariaDB and PostgreSQL is ignored (docs/failure-behaviour.md)",
        };
        let probes = vec![
            reference,
            campaign,
            probe(
                Need::Chromium,
                support::browser::browser_availability(),
                "Chromium is required in CI but unavailable",
                "browser tests are ignored",
            ),
            probe(
                Need::PrivateMariadb,
                support::private_mariadb::availability().map(drop),
                "mariadb-install-db and mariadbd are required in CI but unavailable",
                "the fault suite, the MariaDB fault campaign, the read counts and the MariaDB high-availability test are ignored",
            ),
            probe(
                Need::PrivatePostgres,
                support::private_postgres::availability().map(drop),
                "the PostgreSQL programs are required in CI but unavailable",
                "the PostgreSQL fault campaign and high-availability test are ignored",
            ),
            probe(
                Need::Galera,
                support::galera::availability(),
                "a MariaDB Galera cluster is required in CI but cannot be started",
                "the Galera test is ignored",
            ),
            probe(
                Need::Faketime,
                support::nemesis::faketime_library().map(drop),
                "libfaketime is required in CI but unavailable",
                "the skewed-clock test and the fault campaigns on MariaDB and PostgreSQL are ignored",
            ),
            probe(
                Need::Nginx,
                support::nginx::availability(),
                "nginx is required in CI but unavailable",
                "the reverse-proxy tests are ignored",
            ),
            probe(
                Need::Slapd,
                support::slapd::availability(),
                "slapd and ldapadd are required in CI but unavailable",
                "the LDAP login tests are ignored",
            ),
            probe(
                Need::OidcProvider,
                oidc::provider_availability(),
                "the OpenID Provider of the OIDC tests is required in CI but unavailable",
                "the OpenID Connect tests against a real provider are ignored",
            ),
            probe(
                Need::Promtool,
                promtool,
                "promtool is required in CI but unavailable",
                "the promtool check of the metrics is ignored",
            ),
            probe(
                Need::Curl,
                curl,
                "curl is required in CI but unavailable",
                "the documented curl examples are ignored",
            ),
            probe(
                Need::MySql,
                Backend::MySql.availability(),
                "mysql is required in CI but unavailable",
                "mysql tests are ignored",
            ),
            probe(
                Need::Postgres,
                Backend::Postgres.availability(),
                "postgres is required in CI but unavailable",
                "postgres tests are ignored",
            ),
        ];
        Available { probes }
    }

    /// Whether the case's variant on `backend` needs something this machine lacks.
    pub fn lacks(&self, case: &Case, backend: Backend) -> bool {
        let own_server = case.needs.iter().any(|need| need.is_own_server());
        let shared = Need::shared_server(backend).filter(|_| !own_server);
        case.needs.iter().copied().chain(shared).any(|need| !self.offers(need))
    }

    fn offers(&self, need: Need) -> bool {
        self.probes.iter().any(|probe| probe.need == need && probe.up.is_ok())
    }

    /// A note for each missing need; with `CI` set, the first missing requirement ends the run instead.
    pub fn report(&self) {
        let ci = std::env::var_os("CI").is_some();
        for probe in &self.probes {
            let Err(reason) = &probe.up else { continue };
            if let Some(required) = probe.required.filter(|_| ci) {
                eprintln!("{required}: {reason}");
                std::process::exit(1);
            }
            eprintln!("note: {}: {reason}", probe.note);
        }
    }
}

/// Whether `program argument` runs and exits with success.
fn succeeds(program: &str, argument: &str) -> bool {
    std::process::Command::new(program).arg(argument).output().is_ok_and(|o| o.status.success())
}
