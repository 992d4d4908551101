//! The `xxl-job-admin` command: runs the admin, or one of its tools.

use std::process::ExitCode;
use xxl_job_admin::config::{help_text, Config};
use xxl_job_admin::{cli, logging, memory};

#[global_allocator]
static ALLOCATOR: memory::Allocator = memory::Allocator;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("cron") => {
            let code =
                xxl_job_admin::cron::cli::run(&args[1..], &mut std::io::stdout(), &mut std::io::stderr());
            ExitCode::from(code.clamp(0, 255) as u8)
        }
        Some(command @ ("export" | "apply")) => {
            let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
            let code = cli::run(
                command,
                &args[1..],
                std::env::vars(),
                &cwd,
                &mut std::io::stdout(),
                &mut std::io::stderr(),
            );
            ExitCode::from(code.clamp(0, 255) as u8)
        }
        Some("--version" | "-V" | "version") => {
            println!("xxl-job-admin {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        // Anywhere among the server's arguments (`serve --help`, `--server.port=9 -h`): help, not a start.
        first if first == Some("help") || args.iter().any(|a| a == "--help" || a == "-h") => {
            print!("{}", help_text(cli::terminal_width()));
            ExitCode::SUCCESS
        }
        Some("serve") => serve(&args[1..]),
        _ => serve(&args),
    }
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
