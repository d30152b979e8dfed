//! `ptah-cert-rotator`: parse flags, set up logs and TLS, rotate the webhook certificate until SIGTERM.

use clap::Parser;
use ptah_certrotation::Args;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // One TLS provider for every client in the process: ring (never aws-lc).
    let _ = rustls::crypto::ring::default_provider().install_default();
    ptah_telemetry::init(args.log_format)?;
    let config = args.config()?;
    let client = kube::Client::try_default().await?;
    ptah_certrotation::run(client, config, args.once, ptah_certrotation::termination()).await?;
    Ok(())
}
