//! Start-up and shutdown: wires configuration, storage, services, workers and the HTTP server.

use chrono::NaiveDateTime;
use crate::alarm::email::EmailAlarm;
use crate::config::Config;
use crate::http::console::{secret, ConsoleState};
use crate::executor::ExecutorClient;
use crate::http;
use crate::i18n::I18n;
use crate::scheduler::complete::Completer;
use crate::scheduler::trigger::TriggerPool;
use crate::scheduler::{Engine, TriggerSink};
use crate::storage::{self, Db, SchemaOutcome};
use crate::time::{Clock, SystemClock, Zone, CRON_ZONE};
use crate::workers::registry::{self, RegistryQueue};
use crate::workers::{shutdown_channel, ShutdownTrigger};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::task::JoinHandle;

/// What every request handler can reach.
#[derive(Clone)]
pub struct AppState {
    pub config: Arc<Config>,
    pub db: Db,
    pub i18n: I18n,
    pub registry: RegistryQueue,
    pub completer: Completer,
    pub triggers: Arc<dyn TriggerSink>,
    pub executors: ExecutorClient,
    pub console: Arc<ConsoleState>,
    pub clock: Arc<dyn Clock>,
}

impl AppState {
    /// The zone cron expressions and schedule previews are evaluated in.
    pub fn cron_zone(&self) -> Zone {
        CRON_ZONE
    }

    /// A wall-clock time typed into the console, as the stored DATETIME of the same instant: the Java
    /// admin parses form dates in the JVM's zone and the driver writes them in `serverTimezone`.
    pub fn stored_time(&self, typed: NaiveDateTime) -> NaiveDateTime {
        self.db.datetime(self.cron_zone().to_epoch_ms(typed))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Storage(#[from] storage::StorageError),
    #[error(transparent)]
    Mail(#[from] crate::alarm::email::MailSetupError),
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

    /// Runs until SIGINT/SIGTERM, then stops gracefully.
    pub async fn run_until_signal(self) {
        wait_for_signal().await;
        tracing::info!("shutdown requested; finishing in-flight work");
        self.stop().await;
        tracing::info!("stopped");
    }
}

/// Connects to the database, starts the workers and binds the HTTP server.
pub async fn start(config: Config) -> Result<RunningApp, StartError> {
    warn_about_token(&config);
    let (db, outcome) = storage::connect(&config.datasource).await?;
    match outcome {
        SchemaOutcome::Created => tracing::info!("empty database: created the xxl-job 2.4 schema and initial rows"),
        SchemaOutcome::Existing { lock_row_present: true } => tracing::info!("using the existing xxl-job schema"),
        SchemaOutcome::Existing { lock_row_present: false } => tracing::error!(
            "xxl_job_lock has no 'schedule_lock' row: admins sharing this database cannot exclude each other; \
             insert it with: INSERT INTO xxl_job_lock (lock_name) VALUES ('schedule_lock')"
        ),
    }

    let config = Arc::new(config);
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let i18n = I18n::new(config.i18n.code());
    let (stop_workers, shutdown) = shutdown_channel();
    let executors = ExecutorClient::new(config.access_token.expose());
    // The lanes stop after the loops that feed them.
    let (stop_lanes, lanes_shutdown) = shutdown_channel();
    let (pool, pool_tasks) = TriggerPool::start(db.clone(), i18n.clone(), executors.clone(), clock.clone(), &config, lanes_shutdown);
    let triggers: Arc<dyn TriggerSink> = Arc::new(pool);
    let completer = Completer::new(db.clone(), i18n.clone(), triggers.clone(), clock.clone());
    let (registry_queue, registry_writers) = RegistryQueue::start(db.clone(), clock.clone(), config.registry_max_per_app);
    let mut workers = vec![tokio::spawn(registry::run_monitor(db.clone(), clock.clone(), shutdown.clone()))];
    let engine = Engine {
        db: db.clone(),
        i18n: i18n.clone(),
        completer: completer.clone(),
        triggers: triggers.clone(),
        alarms: vec![Arc::new(EmailAlarm::new(db.clone(), i18n.clone(), &config.mail)?)],
        clock: clock.clone(),
    };
    workers.extend(engine.start(&config, &shutdown));

    let state = AppState {
        config: config.clone(),
        db: db.clone(),
        i18n,
        registry: registry_queue,
        completer,
        triggers: triggers.clone(),
        executors,
        console: Arc::new(ConsoleState::new(secret::resolve(&config, &db).await?)),
        clock,
    };
    let addr = SocketAddr::new(config.server.address, config.server.port);
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|source| StartError::Bind { addr, source })?;
    let addr = listener.local_addr().map_err(|source| StartError::Bind { addr, source })?;
    tracing::info!("xxl-job-admin listening on http://{addr}{}/", config.server.context_path);

    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let app = http::router(state);
    let server_db = db.clone();
    let server = tokio::spawn(async move {
        // The peer address is the client's unless `server.forward-headers-strategy` says otherwise.
        let serve = axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).with_graceful_shutdown(async move {
            let _ = stopped.await;
        });
        if let Err(e) = serve.await {
            tracing::error!("HTTP server failed: {e}");
        }
        shutdown_workers(stop_workers, workers, registry_writers, stop_lanes, pool_tasks).await;
        server_db.close().await;
    });
    Ok(RunningApp { addr, db, triggers, stop, server })
}

/// Stops the loops, lets the registry writers drain their queue (the senders went with the router),
/// then lets queued triggers finish.
async fn shutdown_workers(
    stop: ShutdownTrigger,
    workers: Vec<JoinHandle<()>>,
    writers: Vec<JoinHandle<()>>,
    stop_lanes: ShutdownTrigger,
    pool_tasks: Vec<JoinHandle<()>>,
) {
    stop.trigger();
    for handle in workers.into_iter().chain(writers) {
        let _ = handle.await;
    }
    stop_lanes.trigger();
    for handle in pool_tasks {
        let _ = handle.await;
    }
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
