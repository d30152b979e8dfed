//! The release lifecycle of ptah-operator: what `ptah-crd-manager` does as the chart's Helm hooks.
//!
//! * **preflight** (every install, upgrade and rollback): one release per cluster (the admission
//!   configurations are a singleton), an API server inside the matrix window, and no stored
//!   controller state newer than this release understands;
//! * **reconcile**: the preflight, then the CRDs this binary was built with, installed or upgraded
//!   behind their schema identity (never a lower `crd-schema-version`, never two digests under one
//!   version, never an unserved stored version), `spec` and identity only, until Established;
//! * **retire** (post-upgrade): the new manager rolled out and holding the execution binding; the
//!   resources a narrowed `watchNamespace` strands with the manager's finalizer, each named with
//!   the command that releases it;
//! * **teardown** (pre-delete): the admission configurations removed first; CRDs and user objects
//!   stay unless told otherwise; never any SQL.
//!
//! Every refusal happens before the first write of its hook, so a refused hook changes nothing.

mod args;
pub mod crds;
mod error;
pub mod identity;
pub mod preflight;
pub mod retire;
pub mod scan;
pub mod stranded;
pub mod teardown;
pub mod window;

pub use args::{Args, Command, ReleaseArgs};
pub use error::{Error, Refusal};

use kube::Client;

/// Runs one hook and returns its report, one line per fact, for the hook's log.
pub async fn run(client: Client, command: Command) -> Result<Vec<String>, Error> {
    let shipped = ptah_api::crds().map_err(|e| Error::Build(e.to_string()))?;
    let window = window::SupportWindow::built_in()?;
    let mut report = Vec::new();
    match command {
        Command::Preflight(release) => {
            let seen = preflight::run(&client, &release.release(), window, None).await?;
            report.extend(preflight_report(&seen, window));
        }
        Command::Reconcile {
            release,
            wait_seconds,
        } => {
            let seen = preflight::run(&client, &release.release(), window, None).await?;
            report.extend(preflight_report(&seen, window));
            for applied in crds::apply(&client, &shipped, args::seconds(wait_seconds)).await? {
                report.push(format!(
                    "CustomResourceDefinition {}: {:?}, Established",
                    applied.name, applied.change
                ));
            }
        }
        Command::Retire {
            release,
            deployment,
            executor_image,
            watch_namespace,
            wait_seconds,
        } => {
            let retired = retire::run(
                &client,
                &retire::Manager {
                    namespace: &release.release_namespace,
                    deployment: &deployment,
                    coordination_namespace: &release.coordination_namespace,
                    watch_namespace: watch_namespace.as_deref().filter(|n| !n.is_empty()),
                },
                &executor_image,
                args::seconds(wait_seconds),
            )
            .await?;
            report.push(format!("the manager runs execution binding {}", retired.epoch));
            for (kind, stale, total) in retired.pending {
                report.push(format!(
                    "{kind}: {stale} of {total} recorded an earlier binding; the manager retires their plans and approvals (ExecutionBindingChanged)"
                ));
            }
            if let Some(watched) = watch_namespace.as_deref().filter(|n| !n.is_empty()) {
                if retired.stranded.is_empty() {
                    report.push(format!(
                        "no PtahSchema or PtahMigration outside watchNamespace {watched} carries the finalizer {}",
                        ptah_api::FINALIZER
                    ));
                }
                report.extend(retired.stranded.iter().map(|s| s.warning(watched)));
            }
        }
        Command::Teardown { release, keep_crds } => {
            let done = teardown::run(&client, &release.release(), &shipped, keep_crds).await?;
            for removed in done.removed {
                report.push(format!("removed {removed}"));
            }
            for (kind, count) in done.remaining {
                report.push(format!("{kind}: {count} object(s) stay"));
            }
            if done.deleted_crds.is_empty() {
                report
                    .push("the CustomResourceDefinitions stay (crds.keepOnUninstall); no SQL ran".to_owned());
            }
            for crd in done.deleted_crds {
                report.push(format!(
                    "deleted CustomResourceDefinition {crd} (it held no object)"
                ));
            }
        }
    }
    Ok(report)
}

fn preflight_report(seen: &preflight::Preflight, window: window::SupportWindow) -> Vec<String> {
    let mut lines = vec![format!(
        "API server {} is inside the supported window {window}",
        seen.server
    )];
    for (kind, count) in &seen.scanned {
        lines.push(format!(
            "{kind}: {count} object(s) hold no newer controller state"
        ));
    }
    lines
}
