//! Leader election: every replica serves health and metrics; only the leader reconciles.

use std::{sync::Arc, time::Duration};

use ptah_controller::{schema::Binding, shell};
use ptah_targetlock::leader::LeaderElector;
use ptah_telemetry::Metrics;
use tokio::sync::watch;
use tracing::info;

use crate::Args;

/// What every controller run shares beside the client and binding.
pub struct Shared {
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// The result CA bundle handed to operation Pods, when results are delivered durably.
    pub result_ca: Option<watch::Receiver<String>>,
}

/// Campaigns for leadership; runs the controller while leading and stops it when leadership or
/// the process ends.
pub async fn lead(
    client: kube::Client,
    args: Args,
    binding: Binding,
    config: shell::ManagerConfig,
    shared: Shared,
    ready: watch::Sender<bool>,
    mut stop: watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let duration = Duration::from_secs(args.leader_lease_seconds.max(5));
    let elector = LeaderElector::new(
        client.clone(),
        config.coordination_namespace.clone(),
        args.leader_lease.clone(),
        config.identity.clone(),
        duration,
        duration / 3,
    );
    let Shared { metrics, result_ca } = shared;
    let mut leading = elector.is_leader();
    let (elector_stop_tx, elector_stop_rx) = watch::channel(false);
    let election = tokio::spawn(elector.run(elector_stop_rx));
    let _ = ready.send(true);
    loop {
        tokio::select! {
            _ = stop.wait_for(|s| *s) => break,
            changed = leading.wait_for(|l| *l) => {
                if changed.is_err() {
                    break;
                }
            }
        }
        info!(identity = %config.identity, "leading: starting the PtahSchema and PtahMigration controllers");
        metrics.set_leader(true);
        let mut lost = leading.clone();
        let mut stopping = stop.clone();
        let until = async move {
            tokio::select! {
                _ = lost.wait_for(|l| !*l) => {}
                _ = stopping.wait_for(|s| *s) => {}
            }
        };
        let (c, b, cfg, m) = (client.clone(), binding.clone(), config.clone(), metrics.clone());
        let ca = result_ca.clone();
        let scope = config.watch_namespace.clone();
        shell::run(
            move |stores| {
                let ctx = shell::Context::new(c.clone(), b, cfg, m, stores);
                match ca {
                    Some(ca) => ctx.with_result_ca(ca),
                    None => ctx,
                }
            },
            client.clone(),
            scope.as_deref(),
            until,
        )
        .await;
        metrics.set_leader(false);
        info!("the controllers stopped");
        if *stop.borrow() {
            break;
        }
    }
    let _ = elector_stop_tx.send(true);
    election.await??;
    Ok(())
}
