//! Command-line arguments of `ptah-crd-manager`, one subcommand per Helm hook.

use std::time::Duration;

use clap::{Parser, Subcommand};
use ptah_telemetry::LogFormat;

use crate::preflight::Release;

/// The release lifecycle of ptah-operator, run by the chart as Helm hooks.
#[derive(Debug, Parser)]
#[command(name = "ptah-crd-manager", version, about)]
pub struct Args {
    /// Log format: `json` or `pretty` (default: pretty on a terminal, else JSON).
    #[arg(long, env = "PTAH_LOG_FORMAT", global = true)]
    pub log_format: Option<LogFormat>,
    /// The hook to run.
    #[command(subcommand)]
    pub command: Command,
}

/// One hook.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check only: one release per cluster, a supported API server, no newer stored state.
    Preflight(ReleaseArgs),
    /// pre-install, pre-upgrade, pre-rollback: the preflight, then install or upgrade the CRDs.
    Reconcile {
        /// The release.
        #[command(flatten)]
        release: ReleaseArgs,
        /// How long to wait for every CRD to be Established.
        #[arg(long, default_value_t = 120)]
        wait_seconds: u64,
    },
    /// post-upgrade: wait until the new manager runs and holds the execution binding.
    Retire {
        /// The release.
        #[command(flatten)]
        release: ReleaseArgs,
        /// The manager Deployment.
        #[arg(long)]
        deployment: String,
        /// The executor image this release binds.
        #[arg(long)]
        executor_image: String,
        /// The namespace the manager reconciles (empty: every namespace).
        #[arg(long)]
        watch_namespace: Option<String>,
        /// How long to wait.
        #[arg(long, default_value_t = 300)]
        wait_seconds: u64,
    },
    /// pre-delete: remove the admission configurations, report what stays.
    Teardown {
        /// The release.
        #[command(flatten)]
        release: ReleaseArgs,
        /// Keep the CRDs (and so every PtahSchema, PtahMigration, plan and approval).
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        keep_crds: bool,
    },
}

/// Which release a hook runs for.
#[derive(Debug, clap::Args)]
pub struct ReleaseArgs {
    /// The Helm release name.
    #[arg(long)]
    pub release_name: String,
    /// The release namespace.
    #[arg(long)]
    pub release_namespace: String,
    /// Where realm Leases and the controller state live.
    #[arg(long)]
    pub coordination_namespace: String,
    /// Name of both admission configurations.
    #[arg(long, default_value = "ptah-operator")]
    pub webhook_configuration: String,
}

impl ReleaseArgs {
    /// The release these arguments name.
    pub fn release(&self) -> Release {
        Release {
            name: self.release_name.clone(),
            namespace: self.release_namespace.clone(),
            webhook_configuration: self.webhook_configuration.clone(),
            coordination_namespace: self.coordination_namespace.clone(),
        }
    }
}

/// Seconds as a [`Duration`].
pub fn seconds(s: u64) -> Duration {
    Duration::from_secs(s)
}
