//! `ptah`: the executor CLI. Parses arguments, sets up logging on stderr, runs one command.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = ptah_cli::Cli::parse();
    ptah_cli::init_tracing(cli.log_level.as_deref());
    // The one TLS provider of the workspace; an error only means one is installed already.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return ExitCode::from(ptah_cli::common::EXIT_FAILURE);
        }
    };
    ExitCode::from(runtime.block_on(ptah_cli::run(cli)))
}
