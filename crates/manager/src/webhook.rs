//! The admission webhooks every replica serves, leader or not: the API server may call any of them.

use std::time::Duration;

use anyhow::Context as _;
use ptah_admission::{Admission, AdmissionConfig, ReloadingCert};
use tokio::sync::watch;
use tracing::{info, warn};

use crate::Args;

/// How often the serving certificate files are checked for a rotation.
const CERT_POLL: Duration = Duration::from_secs(5);

/// Serves the webhooks until `stop`; when the certificate directory does not exist, logs a
/// warning and serves nothing (a manager run outside a cluster, or the controller-only tests).
pub(crate) async fn serve(
    client: kube::Client,
    args: Args,
    serving: watch::Sender<bool>,
    stop: watch::Receiver<bool>,
) -> anyhow::Result<()> {
    // Logged now: the caller only sees the error at shutdown.
    run(client, args, serving, stop)
        .await
        .inspect_err(|e| tracing::error!(error = format!("{e:#}"), "admission webhooks failed"))
}

async fn run(
    client: kube::Client,
    args: Args,
    serving: watch::Sender<bool>,
    mut stop: watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let dir = &args.webhook_cert_dir;
    if !dir.is_dir() {
        warn!(dir = %dir.display(), "webhook certificate directory does not exist; admission webhooks are not served");
        return Ok(());
    }
    // The Secret is mounted optionally: until the rotator has written it the directory is empty.
    // Wait for a loadable pair instead of giving up; readiness stays false meanwhile.
    let cert = loop {
        match ReloadingCert::load(dir) {
            Ok(cert) => break cert,
            Err(e) => warn!(dir = %dir.display(), error = %e, "waiting for the webhook serving certificate"),
        }
        tokio::select! {
            _ = stop.wait_for(|s| *s) => return Ok(()),
            _ = tokio::time::sleep(CERT_POLL) => {}
        }
    };
    let tls = ptah_admission::server_config(cert.clone())?;
    let listener = tokio::net::TcpListener::bind(args.webhook_addr)
        .await
        .with_context(|| format!("binding the webhook server to {}", args.webhook_addr))?;
    let config = AdmissionConfig {
        manager_username: args.manager_username.clone(),
        require_distinct_approver: args.require_distinct_approver,
    };
    if config.manager_username.is_empty() {
        warn!("--manager-username is empty: the write guard refuses every write to manager-owned objects");
    }
    info!(addr = %args.webhook_addr, four_eyes = config.require_distinct_approver, "serving admission webhooks");
    let _ = serving.send(true);
    let watcher = tokio::spawn(cert.watch(CERT_POLL, stop.clone()));
    let router = ptah_admission::router(Admission::new(client, config));
    ptah_admission::serve(listener, tls, router, stop).await?;
    watcher.await.context("the certificate watcher panicked")?;
    Ok(())
}
