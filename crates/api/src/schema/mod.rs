//! `PtahSchema`: a database kept converged on a declarative schema published as an OCI artifact.

mod drift;
mod operation;
mod status;

pub use drift::{
    DriftCategory, DriftFinding, DriftSeverity, DriftSeverityPolicy, MAX_DRIFT_FINDINGS, SchemaTargetStatus,
};
pub use operation::{
    PendingBindingRetirement, PendingObservation, PendingObservationOutcome, PendingObservationSource,
    SchemaOperationStatus, SchemaOperationType,
};
pub use status::{
    AppliedPlanStatus, CurrentPlanApproval, CurrentPlanStatus, DispatchedBy, PlanRehearsal, PtahSchemaStatus,
    RehearsalOutcome, SchemaPhase,
};

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::shared::{
    ApplyPolicy, DatabaseTargetSpec, ExecutionSpec, GoDuration, OCIArtifactSourceSpec,
    PRINTABLE_TRIMMED_PATTERN, SecretKeySelector,
};

/// CEL: `policy.lockTimeout` may not exceed the Job deadline (defaults included).
pub(crate) const LOCK_TIMEOUT_WITHIN_DEADLINE_RULE: &str = "!has(self.policy) || !has(self.policy.lockTimeout) || duration(self.policy.lockTimeout).getMilliseconds() <= (has(self.execution) && has(self.execution.activeDeadlineSeconds) ? self.execution.activeDeadlineSeconds : 900) * 1000";

/// The desired state of a PtahSchema.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, KubeSchema)]
#[kube(
    group = "operator.ptah.run",
    version = "v1alpha1",
    kind = "PtahSchema",
    plural = "ptahschemas",
    namespaced,
    status = "PtahSchemaStatus",
    shortname = "ptahs",
    category = "ptah",
    derive = "PartialEq",
    validation = Rule::new("size(self.metadata.name) <= 63").message("metadata.name must be at most 63 characters (it is carried whole in Job labels)"),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(name = "Digest", type_ = "string", json_path = ".status.source.digest", priority = 1),
    printcolumn(name = "Realm", type_ = "string", json_path = ".spec.target.coordinationKey", priority = 1),
    printcolumn(name = "Drift", type_ = "string", json_path = ".status.conditions[?(@.type==\"DriftDetected\")].status"),
    printcolumn(name = "Approval", type_ = "string", json_path = ".status.conditions[?(@.type==\"ApprovalRequired\")].status"),
    printcolumn(name = "In Sync", type_ = "string", json_path = ".status.conditions[?(@.type==\"InSync\")].status"),
    printcolumn(name = "Ready", type_ = "string", json_path = ".status.conditions[?(@.type==\"Ready\")].status"),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp")
)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new(LOCK_TIMEOUT_WITHIN_DEADLINE_RULE).message("policy.lockTimeout must not exceed execution.activeDeadlineSeconds").field_path(".policy.lockTimeout"))]
pub struct PtahSchemaSpec {
    /// The database to manage.
    pub target: DatabaseTargetSpec,
    /// The desired schema artifact.
    pub desired: OCIArtifactSourceSpec,
    /// A scratch database used only by Plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dev: Option<DevDatabaseSpec>,
    /// What may be applied and what is managed.
    #[serde(default)]
    pub policy: SchemaPolicySpec,
    /// Resolve/observe cadence (10s–24h).
    #[serde(default = "default_interval")]
    #[x_kube(validation = Rule::new("duration(self) >= duration('10s') && duration(self) <= duration('24h')").message("interval must be between 10s and 24h"))]
    pub interval: GoDuration,
    /// How operation Jobs run.
    #[serde(default)]
    pub execution: ExecutionSpec,
    /// Create no new Jobs (an Apply in flight is still supervised).
    #[serde(default)]
    pub suspend: bool,
}

pub(crate) fn default_interval() -> GoDuration {
    GoDuration::literal("10m", 600)
}

/// A scratch database for planning.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DevDatabaseSpec {
    /// The Secret key holding the scratch database URL.
    pub url_from: SecretKeySelector,
}

/// How statements of one plan are grouped into transactions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SchemaTransactionMode {
    /// One transaction for the whole plan.
    All,
    /// One transaction per file.
    #[default]
    File,
    /// No transaction.
    None,
}

fn default_lock_timeout() -> GoDuration {
    GoDuration::literal("30s", 30)
}

/// Pattern of a protected table: `table` or `schema.table`.
pub const PROTECTED_TABLE_PATTERN: &str = r"^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)?$";

/// What a PtahSchema may apply and which part of the database it manages.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct SchemaPolicySpec {
    /// When plans are applied.
    #[serde(default)]
    pub apply: ApplyPolicy,
    /// Permit destructive plans (they still need an approval).
    #[serde(default)]
    pub allow_destructive: bool,
    /// MySQL/MariaDB: let an Apply copy a table, or block its writes, when the server cannot
    /// change it online (`ALGORITHM=INSTANT|INPLACE, LOCK=NONE`); otherwise that statement fails.
    #[serde(default)]
    pub allow_table_copy: bool,
    /// Which drift is reported.
    #[serde(default)]
    pub drift_severity: DriftSeverityPolicy,
    /// Objects outside the managed scope (the one authoritative scope).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 128), inner(length(min = 1, max = 256), regex(pattern = PRINTABLE_TRIMMED_PATTERN)))]
    #[x_kube(merge_strategy = ListMerge::Set)]
    pub exclude: Vec<String>,
    /// How long the executor waits for database locks (1s–10m).
    #[serde(default = "default_lock_timeout")]
    #[x_kube(validation = Rule::new("duration(self) >= duration('1s') && duration(self) <= duration('10m')").message("lockTimeout must be between 1s and 10m"))]
    pub lock_timeout: GoDuration,
    /// Transaction grouping of applied plans.
    #[serde(default)]
    pub transaction_mode: SchemaTransactionMode,
    /// Tables no plan may touch (matched case-insensitively).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 128), inner(length(min = 1, max = 129), regex(pattern = PROTECTED_TABLE_PATTERN)))]
    #[x_kube(merge_strategy = ListMerge::Set)]
    pub protected_tables: Vec<String>,
}

impl Default for SchemaPolicySpec {
    fn default() -> Self {
        SchemaPolicySpec {
            apply: ApplyPolicy::default(),
            allow_destructive: false,
            allow_table_copy: false,
            drift_severity: DriftSeverityPolicy::default(),
            exclude: Vec::new(),
            lock_timeout: default_lock_timeout(),
            transaction_mode: SchemaTransactionMode::default(),
            protected_tables: Vec::new(),
        }
    }
}
