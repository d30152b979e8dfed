//! `ptah-crd-manager`: parse flags, set up logs and TLS, run one release-lifecycle hook.

use clap::Parser;
use ptah_crdupgrade::Args;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // One TLS provider for every client in the process: ring (never aws-lc).
    let _ = rustls::crypto::ring::default_provider().install_default();
    ptah_telemetry::init(args.log_format.unwrap_or_else(ptah_telemetry::LogFormat::detect))?;
    let client = kube::Client::try_default().await?;
    for line in ptah_crdupgrade::run(client, args.command).await? {
        println!("{line}");
    }
    Ok(())
}
