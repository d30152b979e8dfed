//! `manager`: parse arguments, set up logs and TLS, run the manager until SIGTERM.

use clap::Parser;
use ptah_manager::Args;

/// jemalloc, with one arena and dirty pages returned after a second (`.cargo/config.toml`): under
/// 1,200 resources it settles 8 MiB below glibc's malloc for less CPU (docs/manager.md, Scale).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // One TLS provider for every client in the process: ring (never aws-lc).
    let _ = rustls::crypto::ring::default_provider().install_default();
    ptah_telemetry::init(args.log_format.unwrap_or_else(ptah_telemetry::LogFormat::detect))?;
    ptah_manager::run(args).await
}
