//! What the controller decided: everything one operation Job is built from, and nothing read
//! from a Secret (the manager has no Secret access; it names Secrets, the kubelet reads them).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use ptah_api::shared::{ConfigMapKeySelector, ExecutionSpec, RegistryAuthSpec, SecretKeySelector};
use ptah_dataplane::{Operation, SequenceError, SequenceStep};

/// Who built the Job: recorded in its annotations so a later manager can tell its own Jobs apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagerIdentity {
    /// The manager's image reference.
    pub controller_image: String,
    /// The manager's build revision.
    pub controller_revision: String,
    /// The version of the durable manager-state contract.
    pub controller_state_version: i64,
    /// The version of the executor (`ptah`) the Job runs.
    pub ptah_version: String,
    /// The execution binding (manager epoch) the Job belongs to.
    pub execution_binding_id: String,
}

/// The two data-plane images (they may be the same image).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Images {
    /// Runs `ptah` (and the runner installed next to it); the fetch init container uses it too.
    pub executor: String,
    /// Provides `ptah-runner`, copied into a shared volume by the `install-runner` init container
    /// when it is another image than the executor's.
    pub runner: String,
}

impl Images {
    /// Whether one image provides both `ptah` and `ptah-runner`: the main container then runs the
    /// runner where the image has it, and the Pod needs no `install-runner`.
    pub fn shared(&self) -> bool {
        self.executor == self.runner
    }
}

/// How a container reaches the registry: credentials, plain HTTP, a custom CA.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceAccess {
    /// The registry credentials Secret, if the registry needs any.
    pub registry_auth: Option<RegistryAuthSpec>,
    /// Talk plain HTTP to the registry.
    pub plain_http: bool,
    /// A ConfigMap key holding the CA bundle of the registry.
    pub ca_from: Option<ConfigMapKeySelector>,
}

/// The digest-pinned artifact (the desired schema, or the migration directory) a database
/// operation pulls before it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetch {
    /// `oci://host/repo@sha256:<64 hex>` (a tag alone is refused).
    pub resolved_reference: String,
    /// How the fetch init container reaches the registry.
    pub access: SourceAccess,
}

/// The target database of a database operation, by reference only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseAccess {
    /// The Secret key holding the database URL (`PTAH_DB_URL`).
    pub url_from: SecretKeySelector,
    /// The engine family, as `PTAH_EXPECTED_DATABASE_ENGINE` wants it (`postgresql`, `mysql`).
    pub engine: String,
    /// The realm lock digest (`sha256:<hex>`) the runner echoes.
    pub coordination_digest: String,
    /// The target identity digest the runner must find (`sha256:<hex>`), when known.
    pub expected_target_identity: Option<String>,
    /// `spec.target.caFrom`: the database CA bundle, mounted for `PTAH_DB_CA_FILE`.
    pub ca_from: Option<ConfigMapKeySelector>,
    /// `PTAH_CONNECT_TIMEOUT` (e.g. `10s`).
    pub connect_timeout: Option<String>,
    /// `PTAH_LOCK_TIMEOUT` of a schema Apply, or `PTAH_MIGRATION_LOCK_TIMEOUT` of a migration
    /// Apply (how long it waits for the migration lock); no other operation gets it.
    pub lock_timeout: Option<String>,
    /// `spec.policy.exclude` as snapshotted in the claim: `PTAH_EXCLUDE` of a Plan, omitted when
    /// empty. Observe reads raw drift and Apply takes the scope recorded in its plan, so neither
    /// gets it.
    pub exclude: Vec<String>,
    /// `spec.policy.protectedTables` as snapshotted in the claim: `PTAH_PROTECTED_TABLES` of a
    /// Plan only, omitted when empty.
    pub protected_tables: Vec<String>,
}

/// The approved plan of an Apply, as projection ConfigMaps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanProjection {
    /// The chunk ConfigMaps in order; each has binaryData key `chunk`.
    pub chunk_config_maps: Vec<String>,
    /// The sha256 of the concatenated chunks (`sha256:<hex>`).
    pub content_digest: String,
    /// Whether the approval allows destructive statements.
    pub allow_destructive: bool,
    /// Whether a MySQL/MariaDB Apply may copy a table the server cannot change online
    /// (`PTAH_ALLOW_TABLE_COPY`, set only when true).
    pub allow_table_copy: bool,
}

/// The approved sequence of a migration Apply: `PTAH_EXPECTED_MIGRATION_SEQUENCE` and
/// `PTAH_EXPECTED_MIGRATION_SEQUENCE_DIGEST`. The builder refuses a digest the JSON does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectedSequence {
    /// The JSON array `ptah migrations up --expect-sequence` parses
    /// ([`ptah_dataplane::expected_sequence`]).
    pub json: String,
    /// Its digest (`sha256:<hex>`, [`ptah_dataplane::sequence_digest`]): the `sequence_fingerprint`
    /// a run of exactly this sequence reports.
    pub digest: String,
}

impl ExpectedSequence {
    /// The expected sequence of approved `steps` (a History reading's `pendingSequence`).
    pub fn from_steps(steps: &[SequenceStep]) -> Result<Self, SequenceError> {
        let (json, digest) = ptah_dataplane::expected_sequence(steps)?;
        Ok(ExpectedSequence {
            json,
            digest: digest.to_string(),
        })
    }
}

/// The operation-specific inputs; the variant must match [`JobIntent::operation`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperationInputs {
    /// Resolve a reference to a digest (registry only).
    Resolve {
        /// The reference as the user wrote it.
        requested_reference: String,
        /// How to reach the registry.
        access: SourceAccess,
        /// The ConfigMap key holding the verification policy, when the Resolve also verifies
        /// the digest it resolved (one Pod instead of a Resolve and a Verify).
        policy: Option<ConfigMapKeySelector>,
    },
    /// Verify the resolved artifact against a policy (registry only).
    Verify {
        /// The digest-pinned reference.
        resolved_reference: String,
        /// The reference as the user wrote it: the digest-pin rule is judged on it.
        requested_reference: String,
        /// How to reach the registry.
        access: SourceAccess,
        /// The ConfigMap key holding the verification policy.
        policy: ConfigMapKeySelector,
    },
    /// Compare the live schema with the desired one.
    Observe {
        /// The target database.
        db: DatabaseAccess,
        /// The desired schema artifact.
        fetch: Fetch,
    },
    /// Compute a plan.
    Plan {
        /// The target database.
        db: DatabaseAccess,
        /// The dev database Secret key (`PTAH_DEV_URL`), if any.
        dev_url_from: Option<SecretKeySelector>,
        /// The desired schema artifact.
        fetch: Fetch,
    },
    /// Apply an approved plan.
    Apply {
        /// The target database.
        db: DatabaseAccess,
        /// The desired schema artifact.
        fetch: Fetch,
        /// The approved plan.
        plan: PlanProjection,
    },
    /// Read the migration history (`ptah migrations status`).
    MigrationHistory {
        /// The target database.
        db: DatabaseAccess,
        /// The migration directory artifact.
        fetch: Fetch,
    },
    /// Apply the approved migration sequence (`ptah migrations up --expect-sequence`).
    MigrationApply {
        /// The target database.
        db: DatabaseAccess,
        /// The migration directory artifact.
        fetch: Fetch,
        /// The approved sequence.
        sequence: ExpectedSequence,
    },
}

impl OperationInputs {
    /// The target database of a database operation; `None` for the registry operations.
    pub fn database(&self) -> Option<&DatabaseAccess> {
        match self {
            OperationInputs::Resolve { .. } | OperationInputs::Verify { .. } => None,
            OperationInputs::Observe { db, .. }
            | OperationInputs::Plan { db, .. }
            | OperationInputs::Apply { db, .. }
            | OperationInputs::MigrationHistory { db, .. }
            | OperationInputs::MigrationApply { db, .. } => Some(db),
        }
    }

    /// The operation these inputs are for.
    pub fn operation(&self) -> Operation {
        match self {
            OperationInputs::Resolve { .. } => Operation::Resolve,
            OperationInputs::Verify { .. } => Operation::Verify,
            OperationInputs::Observe { .. } => Operation::Observe,
            OperationInputs::Plan { .. } => Operation::Plan,
            OperationInputs::Apply { .. } => Operation::Apply,
            OperationInputs::MigrationHistory { .. } => Operation::MigrationHistory,
            OperationInputs::MigrationApply { .. } => Operation::MigrationApply,
        }
    }
}

/// The time bounds of one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadlines {
    /// `activeDeadlineSeconds` of the Job and of its Pod.
    pub active_deadline_seconds: i64,
    /// `terminationGracePeriodSeconds` of the Pod (and `PTAH_TERMINATION_GRACE_PERIOD_SECONDS`).
    pub termination_grace_period_seconds: i64,
    /// The child must not start after this (mutating operations; required for Apply).
    pub dispatch_not_after: Option<jiff::Timestamp>,
    /// The child is stopped at this instant (mutating operations; required for Apply).
    pub execution_not_after: Option<jiff::Timestamp>,
}

/// Everything one operation Job is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct JobIntent {
    /// The namespace of the resource (and of the Job).
    pub namespace: String,
    /// The owner reference to the resource (controller=true, blockOwnerDeletion=true).
    pub owner: OwnerReference,
    /// The resource's name.
    pub resource_name: String,
    /// The operation.
    pub operation: Operation,
    /// The claim's operation id (`sha256:<64 hex>`).
    pub operation_id: String,
    /// The input fingerprint of the claim (`sha256:<64 hex>`).
    pub input_fingerprint: String,
    /// The Job's name, from [`crate::job_name`].
    pub job_name: String,
    /// Who builds the Job.
    pub identity: ManagerIdentity,
    /// The data-plane images.
    pub images: Images,
    /// The resource's execution settings (resources, scheduling, Pod metadata).
    pub execution: ExecutionSpec,
    /// The time bounds.
    pub deadlines: Deadlines,
    /// The operation-specific inputs.
    pub inputs: OperationInputs,
    /// Where the runner delivers its result durably; `None`: the log frame.
    pub result_delivery: Option<ResultDelivery>,
}

/// Durable result delivery (docs/security.md, "Durable result delivery"): the runner enrols with
/// the manager's receiver and delivers its result there instead of writing a log frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultDelivery {
    /// The ConfigMap, named after the Job, holding the enrolment ticket and the result CA bundle.
    pub config_map: String,
    /// The receiver's `host:port`.
    pub endpoint: String,
    /// The DNS name on the receiver's certificate.
    pub server_name: String,
}
