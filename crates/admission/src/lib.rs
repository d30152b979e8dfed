//! The admission webhooks of ptah-operator and the TLS server that carries them.
//!
//! Every handler is a pure decision over the AdmissionReview and what it read, plus a thin shell
//! that does the reads — always uncached GETs, because an approval must be checked against the
//! live plan, schema and policy, never against a cache that may lag. Each refusal names its reason.
//!
//! - `/mutate/v1/approvals`: binds a PtahSchemaApproval or PtahMigrationApproval to its live plan
//!   (filling the omitted binding copies) and stamps approver, time and request UID; stamps who
//!   acknowledged a PtahMigrationRunAcknowledgment.
//! - `/validate/v1/approvals`: re-checks the whole binding (or, for an acknowledgment, the
//!   unresolved run it names) on CREATE, refuses spec changes on UPDATE.
//! - `/mutate/v1/spec-writer`: records everyone who has written a PtahSchema's or PtahMigration's
//!   spec (four-eyes).
//! - `/validate/v1/operation-pods`: admits an operation Pod only when it equals its Job's template.
//! - `/validate/v1/manager-owned`: only the manager writes plans, chunks and its Jobs/ConfigMaps.
//!
//! The server ([`serve`]) speaks TLS 1.2/1.3 (ring) with a certificate that [`ReloadingCert`]
//! re-reads from disk when it changes, so rotation needs no restart.

mod approval;
mod error;
mod guard;
mod podintent;
mod review;
mod server;
mod specwriter;
mod tls;

pub use approval::common as approval_common;
pub use approval::migration_rules;
pub use approval::rules as approval_rules;
pub use error::AdmissionError;
pub use guard::{GARBAGE_COLLECTOR, JOB_CONTROLLER, NAMESPACE_CONTROLLER, TTL_CONTROLLER, guard_decision};
pub use podintent::pod_matches_template;
pub use review::{Verdict, approver_from, decode, respond};
pub use server::{
    MAX_BODY_BYTES, ROUTE_MANAGER_OWNED, ROUTE_MUTATE_APPROVALS, ROUTE_OPERATION_PODS, ROUTE_SPEC_WRITER,
    ROUTE_VALIDATE_APPROVALS, router, serve,
};
pub use specwriter::{
    MAX_SPEC_WRITERS, SPEC_WRITER_KINDS, SPEC_WRITERS_ANNOTATION, SpecWriter, WRITER_UID_ANNOTATION,
    WRITER_USERNAME_ANNOTATION, stamp_spec_writer,
};
pub use tls::{CERT_FILE, KEY_FILE, ReloadingCert, server_config};

/// What the webhooks need to know about the deployment.
#[derive(Clone, Debug, Default)]
pub struct AdmissionConfig {
    /// The manager's own username (`system:serviceaccount:<ns>:<sa>`): the only writer of
    /// manager-owned objects.
    pub manager_username: String,
    /// Four-eyes: refuse an approval by anyone who has written the schema's or migration's spec.
    pub require_distinct_approver: bool,
}

/// The webhooks' shared state: a client for uncached reads and the configuration.
#[derive(Clone)]
pub struct Admission {
    client: kube::Client,
    config: AdmissionConfig,
}

impl Admission {
    /// Webhooks reading through `client` (which needs get on schema and migration plans, chunks,
    /// schemas, migrations, ConfigMaps and Jobs).
    pub fn new(client: kube::Client, config: AdmissionConfig) -> Self {
        Admission { client, config }
    }

    /// The configuration the webhooks run with.
    pub fn config(&self) -> &AdmissionConfig {
        &self.config
    }
}
