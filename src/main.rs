//! The `xxl-job-admin` command: runs the admin, or one of its tools.

use std::process::ExitCode;
use xxl_job_admin::cli::{self, Invocation};
use xxl_job_admin::config::{help_text, Config};
use xxl_job_admin::{logging, memory};

#[global_allocator]
static ALLOCATOR: memory::Allocator = memory::Allocator;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut out, mut err) = (std::io::stdout(), std::io::stderr());
    let code = match Invocation::parse(&args) {
        Invocation::Serve(settings) => return serve(&settings),
        Invocation::Cron(args) => xxl_job_admin::cron::cli::run(&args, &mut out, &mut err),
        Invocation::Jobs(command, args) => {
            let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
            cli::run(command, &args, std::env::vars(), &cwd, &mut out, &mut err)
        }
        Invocation::Help => {
            print!("{}", help_text(cli::terminal_width()));
            0
        }
        Invocation::Version => {
            println!("xxl-job-admin {}", env!("CARGO_PKG_VERSION"));
            0
        }
    };
    ExitCode::from(code.clamp(0, 255) as u8)
}

fn serve(args: &[String]) -> ExitCode {
    memory::tune_allocators();
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let loaded = match Config::load(args, std::env::vars(), &cwd) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("xxl-job-admin: configuration error: {e}");
            eprintln!("Run `xxl-job-admin --help` for the configuration keys.");
            return ExitCode::from(2);
        }
    };
    // Colours only on a terminal: log files and journald get plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stdout());
    if let Err(e) = logging::init_tracing(&loaded.config.log_filter, std::io::stdout, ansi) {
        eprintln!("xxl-job-admin: cannot install the log subscriber: {e}");
        return ExitCode::FAILURE;
    }
    if let Some(file) = &loaded.source_file {
        tracing::info!("configuration file: {}", file.display());
    }
    for warning in &loaded.warnings {
        tracing::warn!("configuration: {warning}");
    }
    tracing::info!("configuration:\n{}", loaded.config.redacted_summary());

    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("xxl-job-admin: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let grace = loaded.config.shutdown_grace;
    runtime.block_on(async {
        match xxl_job_admin::app::start(loaded.config).await {
            Ok(app) => {
                memory::release_start_up_code();
                if !app.run_until_signal(grace).await {
                    // Without waiting for tasks still blocked on the database.
                    std::process::exit(1);
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                tracing::error!("start-up failed: {e}");
                ExitCode::FAILURE
            }
        }
    })
}
