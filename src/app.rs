//! Start-up and shutdown: wires configuration, storage, services, workers and the HTTP server.

use crate::alarm::Alarms;
use crate::config::Config;
use crate::domain::ownership::Owner;
use crate::executor::ExecutorClient;
use crate::host;
use crate::http::{self, AppState};
use crate::i18n::I18n;
use crate::ldap::Directory;
use crate::metrics::Metrics;
use crate::scheduler::complete::Completer;
use crate::scheduler::lease::Leadership;
use crate::scheduler::trigger::{LaneServices, Started, TriggerPool};
use crate::scheduler::workflow::{EngineServices, Workflows};
use crate::scheduler::{Engine, TriggerSink};
use crate::service::audit::Audit;
use crate::service::jobs_as_code::{self, ApplyOptions, Setting};
use crate::service::ServiceContext;
use crate::storage::{self, Db, SchemaOutcome};
use crate::time::{Clock, OffsetClock};
use crate::workers;
use crate::workers::registry::{self, RegistryQueue};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Storage(#[from] storage::StorageError),
    #[error(transparent)]
    Alarm(#[from] crate::alarm::AlarmSetupError),
    #[error(transparent)]
    Ldap(#[from] crate::ldap::LdapSetupError),
    #[error("xxl.job.apply.file: {0}")]
    Apply(String),
    #[error(transparent)]
    Audit(#[from] crate::service::audit::SinkError),
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
}

/// A started admin: its address, and the handle that stops it.
pub struct RunningApp {
    pub addr: SocketAddr,
    pub db: Db,
    /// Where manual triggers go (what the console's "run once" uses).
    pub triggers: Arc<dyn TriggerSink>,
    stop: tokio::sync::oneshot::Sender<()>,
    server: JoinHandle<()>,
}

impl RunningApp {
    /// Stops accepting, finishes in-flight requests and background passes, and closes the pool.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.server.await;
    }

    /// Runs until SIGINT/SIGTERM, then stops gracefully within `grace`; returns false when in-flight work
    /// was left (the grace ran out, or a second signal came): the caller exits at once, and the other admins
    /// or the next start take over what is left, as after a crash (a fire is covered by the lease's watermark
    /// before it is sent, so nothing is sent twice). Every wait of a stop is bounded this way, whatever the database does.
    pub async fn run_until_signal(self, grace: std::time::Duration) -> bool {
        wait_for_signal().await;
        tracing::info!("shutdown requested; finishing in-flight work for at most {grace:?} (a second signal exits at once)");
        tokio::select! {
            _ = self.stop() => {
                tracing::info!("stopped");
                true
            }
            _ = tokio::time::sleep(grace) => {
                tracing::warn!("in-flight work not finished within {grace:?}; exiting, it is left to the other admins or the next start");
                false
            }
            _ = wait_for_signal() => {
                tracing::warn!("second shutdown signal; exiting at once");
                false
            }
        }
    }
}

/// Connects to the database, starts the workers and binds the HTTP server.
pub async fn start(config: Config) -> Result<RunningApp, StartError> {
    warn_about_token(&config);
    let ldap = config.ldap.clone().map(Directory::new).transpose()?;
    let local_logins = ldap.as_ref().is_none_or(Directory::falls_back_to_local);
    let db = open_database(&config).await?;
    let config = Arc::new(config);
    let server_clock = Arc::new(OffsetClock::default());
    let clock: Arc<dyn Clock> = server_clock.clone();
    let i18n = I18n::new(config.i18n.code());
    // Before anything can change: a file that cannot be opened stops the start.
    let audit = Audit::start(&config.audit, clock.clone())?;
    if let Some(path) = &config.apply_file {
        // Before the alarm channels exist: their names, as configured, are all a job's check needs.
        let alarm_channels: Vec<String> = config.alarm.webhooks.iter().map(|w| w.name.clone()).collect();
        let setting =
            Setting { db: &db, i18n: &i18n, alarm_channels: &alarm_channels, now_ms: clock.now_ms() };
        apply_at_start(&setting, &audit, path).await?;
    }
    let stop_workers = CancellationToken::new();
    let metrics = Arc::new(Metrics::with_counting(config.server.prometheus));
    // Before anything is planned: the first pass already decides on the database server's clock.
    let warned = match workers::clock::measure(&db).await {
        Ok(Some(offset)) => workers::clock::adopt(&server_clock, &metrics, offset, false),
        Ok(None) => false,
        Err(e) => {
            tracing::warn!(
                "the database server's clock could not be read ({e}): this host's is used until it can"
            );
            false
        }
    };
    // Bound before the services start, so alarms can link to the console's actual port.
    let (listener, addr) = bind(&config).await?;
    let base = Base { db: db.clone(), i18n, clock, metrics: metrics.clone() };
    let (mut background, services) = start_background(&config, base, audit, addr, &stop_workers)?;
    background.workers.push(tokio::spawn(workers::clock::run(
        db.clone(),
        server_clock,
        metrics.clone(),
        warned,
        stop_workers.clone(),
    )));
    let triggers = services.triggers.clone();
    let state = AppState::build(services, config.clone(), background.registry_queue, metrics, ldap).await?;
    tracing::info!(
        "xxl-job-admin listening on {addr}; console: {}",
        clickable_console_url(addr, &config.server.context_path)
    );
    http::console::session::warn_about_default_passwords(&db, local_logins).await;

    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let app = http::router(state);
    let server_db = db.clone();
    let Background { workers, registry_writers, stop_lanes, pool_tasks, leadership, .. } = background;
    let server = tokio::spawn(async move {
        serve(listener, app, stopped).await;
        shutdown_workers(stop_workers, workers, registry_writers, stop_lanes, pool_tasks).await;
        leadership.resign().await;
        server_db.close_checkpointed().await;
    });
    Ok(RunningApp { addr, db, triggers, stop, server })
}

/// Connects, creating the schema in an empty database, and says what it found.
async fn open_database(config: &Config) -> Result<Db, StartError> {
    let (db, outcome) = storage::connect(&config.datasource).await?;
    match outcome {
        SchemaOutcome::Created => tracing::info!("empty database: created the xxl-job 2.4 schema and initial rows"),
        SchemaOutcome::Existing { lock_row_present: true } => tracing::info!("using the existing xxl-job schema"),
        SchemaOutcome::Existing { lock_row_present: false } => tracing::error!(
            "xxl_job_lock has no 'schedule_lock' row: admins sharing this database cannot exclude each other; \
             insert it with: INSERT INTO xxl_job_lock (lock_name) VALUES ('schedule_lock')"
        ),
    }
    Ok(db)
}

/// The listener on the configured address, and the address it got (port 0 picks one).
async fn bind(config: &Config) -> Result<(tokio::net::TcpListener, SocketAddr), StartError> {
    let addr = SocketAddr::new(config.server.address, config.server.port);
    let listener =
        tokio::net::TcpListener::bind(addr).await.map_err(|source| StartError::Bind { addr, source })?;
    let addr = listener.local_addr().map_err(|source| StartError::Bind { addr, source })?;
    Ok((listener, addr))
}

/// Serves until `stopped` fires, then lets in-flight requests finish.
async fn serve(listener: tokio::net::TcpListener, app: axum::Router, stopped: oneshot::Receiver<()>) {
    // The peer address is the client's unless `server.forward-headers-strategy` says otherwise.
    let serve = axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(async move {
            let _ = stopped.await;
        });
    if let Err(e) = serve.await {
        tracing::error!("HTTP server failed: {e}");
    }
}

/// What the services and the background work both start from.
struct Base {
    db: Db,
    i18n: I18n,
    clock: Arc<dyn Clock>,
    metrics: Arc<Metrics>,
}

/// The background work once started, and what stops it (see [`shutdown_workers`]).
struct Background {
    registry_queue: RegistryQueue,
    workers: Vec<JoinHandle<()>>,
    registry_writers: Vec<JoinHandle<()>>,
    stop_lanes: CancellationToken,
    pool_tasks: Vec<JoinHandle<()>>,
    leadership: Leadership,
}

/// Starts the trigger lanes, the registry writers and monitor, and the scheduling engine; returns them
/// with the services' context the HTTP handlers use.
fn start_background(
    config: &Config,
    base: Base,
    audit: Audit,
    addr: SocketAddr,
    shutdown: &CancellationToken,
) -> Result<(Background, ServiceContext), StartError> {
    let Base { db, i18n, clock, metrics } = base;
    let executors = ExecutorClient::new(config.access_token.expose());
    // The lanes stop after the loops that feed them.
    let stop_lanes = CancellationToken::new();
    let owner = Owner::random();
    tracing::info!("this admin plans as admin {} (see docs/failure-behaviour.md)", owner.id());
    let lane_services = LaneServices {
        db: db.clone(),
        i18n: i18n.clone(),
        executors: executors.clone(),
        clock: clock.clone(),
        metrics: metrics.clone(),
    };
    let Started { pool, context: trigger_context, results, tasks: pool_tasks } =
        TriggerPool::start(lane_services, config, stop_lanes.clone());
    let lanes = pool.lanes();
    let triggers: Arc<dyn TriggerSink> = Arc::new(pool);
    let console_url = console_url(config, addr);
    let alarms =
        Alarms::from_config(db.clone(), config, &i18n, clock.clone(), &console_url, metrics.clone())?;
    let workflows = Workflows::new(EngineServices {
        db: db.clone(),
        i18n: i18n.clone(),
        clock: clock.clone(),
        executors: executors.clone(),
        sending: (trigger_context.clone(), lanes.clone()),
        metrics: metrics.clone(),
        alarms: alarms.clone(),
    });
    let completer =
        Completer::new(db.clone(), i18n.clone(), triggers.clone(), clock.clone(), results, workflows.clone());
    let (registry_queue, registry_writers) =
        RegistryQueue::start(db.clone(), clock.clone(), metrics.clone(), config);
    let monitor = registry::run_monitor(db.clone(), clock.clone(), registry_queue.gate(), shutdown.clone());
    let mut workers = vec![tokio::spawn(monitor)];
    let engine = Engine {
        db: db.clone(),
        i18n: i18n.clone(),
        completer: completer.clone(),
        triggers: triggers.clone(),
        sending: (trigger_context, lanes),
        alarms: alarms.clone(),
        clock: clock.clone(),
        metrics,
        owner,
        workflows: workflows.clone(),
    };
    let (engine_tasks, leadership) = engine.start(config, shutdown);
    workers.extend(engine_tasks);
    let services =
        ServiceContext { db, i18n, clock, triggers, completer, executors, alarms, audit, workflows };
    let background =
        Background { registry_queue, workers, registry_writers, stop_lanes, pool_tasks, leadership };
    Ok((background, services))
}

/// Applies `xxl.job.apply.file` before anything is scheduled. Under the schedule lock, so of admins
/// starting together on one database one applies and the others find nothing left to change.
async fn apply_at_start(
    setting: &Setting<'_>,
    audit: &Audit,
    path: &std::path::Path,
) -> Result<(), StartError> {
    let failed = |e: &dyn std::fmt::Display| StartError::Apply(format!("{}: {e}", path.display()));
    let doc = jobs_as_code::read_documents(path).map_err(|e| failed(&e))?;
    let plan =
        jobs_as_code::apply_audited(setting, audit, &jobs_as_code::operator(), &doc, ApplyOptions::default())
            .await
            .map_err(|e| failed(&e))?;
    match plan.changes() {
        0 => tracing::info!(
            "xxl.job.apply.file {}: nothing to change (applied already, here or by another admin)",
            path.display()
        ),
        n => tracing::info!("xxl.job.apply.file {}: applied {n} change(s):\n{plan}", path.display()),
    }
    Ok(())
}

/// Stops the loops, lets the registry writers drain their queue (the senders went with the router),
/// then lets queued triggers finish.
async fn shutdown_workers(
    stop: CancellationToken,
    workers: Vec<JoinHandle<()>>,
    writers: Vec<JoinHandle<()>>,
    stop_lanes: CancellationToken,
    pool_tasks: Vec<JoinHandle<()>>,
) {
    stop.cancel();
    for handle in workers.into_iter().chain(writers) {
        let _ = handle.await;
    }
    stop_lanes.cancel();
    for handle in pool_tasks {
        let _ = handle.await;
    }
}

/// Where alarms link to when `xxl.job.alarm.console-url` is not set: the listening address, or this
/// host's address (as trigger reports show it) when listening on all interfaces.
fn console_url(config: &Config, addr: SocketAddr) -> String {
    let host = if addr.ip().is_unspecified() { host::address() } else { addr.ip().to_string() };
    let host = if host.contains(':') { format!("[{host}]") } else { host };
    format!("http://{host}:{}{}", addr.port(), config.server.context_path)
}

/// The console's address as a person can click it: a wildcard or loopback listener is reached through
/// `localhost`, any other address as itself.
fn clickable_console_url(addr: SocketAddr, context_path: &str) -> String {
    let host = match addr.ip() {
        ip if ip.is_unspecified() || ip.is_loopback() => "localhost".to_string(),
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    };
    format!("http://{host}:{}{context_path}/", addr.port())
}

fn warn_about_token(config: &Config) {
    let token = config.access_token.expose();
    if token.trim().is_empty() {
        tracing::warn!(
            "xxl.job.accessToken is empty: ANY host can register executors and report results, and executors \
             accept jobs from anyone. Set the same secret token on the admin and on every executor."
        );
    } else if token == "default_token" {
        tracing::warn!(
            "xxl.job.accessToken is the public default 'default_token': anyone who knows xxl-job can talk to \
             this admin and its executors. Set a secret token on the admin and on every executor."
        );
    }
}

async fn wait_for_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
}

#[cfg(test)]
mod tests {
    use super::clickable_console_url;

    #[test]
    fn console_url_is_clickable() {
        let url = |addr: &str, context: &str| clickable_console_url(addr.parse().unwrap(), context);
        assert_eq!(url("0.0.0.0:8080", "/xxl-job-admin"), "http://localhost:8080/xxl-job-admin/");
        assert_eq!(url("127.0.0.1:9000", ""), "http://localhost:9000/");
        assert_eq!(url("[::]:8080", "/x"), "http://localhost:8080/x/");
        assert_eq!(url("192.168.1.5:8080", "/xxl-job-admin"), "http://192.168.1.5:8080/xxl-job-admin/");
        assert_eq!(url("[fe80::1]:8080", ""), "http://[fe80::1]:8080/");
    }
}
