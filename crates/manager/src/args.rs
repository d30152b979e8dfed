//! Command-line arguments (each also read from the environment the chart sets).

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;
use ptah_telemetry::LogFormat;

/// The ptah-operator manager.
#[derive(Clone, Debug, Parser)]
#[command(name = "manager", version, about)]
pub struct Args {
    /// Namespace of realm Leases, the leader Lease and the state ConfigMap.
    #[arg(long, env = "PTAH_COORDINATION_NAMESPACE", default_value = "ptah-system")]
    pub coordination_namespace: String,
    /// Reconcile PtahSchemas of this namespace only (default: every namespace).
    #[arg(long, env = "PTAH_WATCH_NAMESPACE")]
    pub watch_namespace: Option<String>,
    /// The executor image, pinned by digest (`name@sha256:…`).
    #[arg(long, env = "PTAH_EXECUTOR_IMAGE")]
    pub executor_image: String,
    /// The runner image, pinned by digest.
    #[arg(long, env = "PTAH_RUNNER_IMAGE")]
    pub runner_image: String,
    /// This manager's own image (recorded with every plan; not part of the binding).
    #[arg(long, env = "PTAH_CONTROLLER_IMAGE", default_value = "unknown")]
    pub controller_image: String,
    /// This manager's revision.
    #[arg(long, env = "PTAH_CONTROLLER_REVISION", default_value = env!("CARGO_PKG_VERSION"))]
    pub controller_revision: String,
    /// The executor's version (part of the execution binding).
    #[arg(long, env = "PTAH_VERSION", default_value = env!("CARGO_PKG_VERSION"))]
    pub ptah_version: String,
    /// This replica's identity (the Pod name in a cluster).
    #[arg(long, env = "POD_NAME", default_value = "manager-local")]
    pub identity: String,
    /// Where `/healthz`, `/readyz` and `/metrics` are served.
    #[arg(long, env = "PTAH_HTTP_ADDR", default_value = "0.0.0.0:8080")]
    pub http_addr: SocketAddr,
    /// Name of the leader-election Lease.
    #[arg(long, default_value = "ptah-operator-leader")]
    pub leader_lease: String,
    /// Leader Lease duration in seconds.
    #[arg(long, default_value_t = 15)]
    pub leader_lease_seconds: u64,
    /// Where the admission webhooks are served (TLS).
    #[arg(long, env = "PTAH_WEBHOOK_ADDR", default_value = "0.0.0.0:9443")]
    pub webhook_addr: SocketAddr,
    /// Directory holding the webhook serving `tls.crt`/`tls.key` (re-read when they change);
    /// when it does not exist no webhook is served.
    #[arg(long, env = "PTAH_WEBHOOK_CERT_DIR", default_value = "/etc/ptah/webhook-tls")]
    pub webhook_cert_dir: PathBuf,
    /// The manager's own username (`system:serviceaccount:<ns>:<sa>`), the only writer of
    /// manager-owned objects the write guard admits.
    #[arg(long, env = "PTAH_MANAGER_USERNAME", default_value = "")]
    pub manager_username: String,
    /// Four-eyes: refuse approvals by the last writer of a schema's spec.
    #[arg(long, env = "PTAH_REQUIRE_DISTINCT_APPROVER")]
    pub require_distinct_approver: bool,
    /// Durable result delivery: the manager Service (`<namespace>/<name>`) whose `results` port
    /// operation Pods deliver to. Without it (or --result-endpoint) results travel through Pod
    /// logs.
    #[arg(long, env = "PTAH_RESULT_SERVICE")]
    pub result_service: Option<String>,
    /// Durable result delivery to this `host:port` instead of a Service (a manager outside the
    /// cluster); needs --result-server-name.
    #[arg(long, env = "PTAH_RESULT_ENDPOINT", conflicts_with = "result_service")]
    pub result_endpoint: Option<String>,
    /// The DNS name on the receiver's certificate, with --result-endpoint.
    #[arg(long, env = "PTAH_RESULT_SERVER_NAME", requires = "result_endpoint")]
    pub result_server_name: Option<String>,
    /// Directory of the result TLS material (`ca.crt`, `ca.key`, `tls.crt`, `tls.key`, written
    /// by ptah-cert-rotator; re-read when they change).
    #[arg(long, env = "PTAH_RESULT_TLS_DIR", default_value = "/etc/ptah/result-tls")]
    pub result_tls_dir: PathBuf,
    /// Where the result receiver listens (TLS 1.3).
    #[arg(long, env = "PTAH_RESULT_ADDR", default_value = "0.0.0.0:8444")]
    pub result_addr: SocketAddr,
    /// Log format: `json` or `pretty` (default: pretty on a terminal, else JSON).
    #[arg(long, env = "PTAH_LOG_FORMAT")]
    pub log_format: Option<LogFormat>,
}
