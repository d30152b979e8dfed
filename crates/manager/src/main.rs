//! `manager`: parse arguments, set up logs and TLS, run the manager until SIGTERM.

use clap::Parser;
use ptah_manager::Args;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // One TLS provider for every client in the process: ring (never aws-lc).
    let _ = rustls::crypto::ring::default_provider().install_default();
    ptah_telemetry::init(args.log_format.unwrap_or_else(ptah_telemetry::LogFormat::detect))?;
    ptah_manager::run(args).await
}
