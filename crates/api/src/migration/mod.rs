//! `PtahMigration`: an ordered directory of versioned SQL migrations matched against the
//! database's own revision table.

mod status;

pub use status::{
    MigrationHistoryStatus, MigrationOperationStatus, MigrationOperationType, MigrationPhase,
    PtahMigrationStatus, ResolvedRun, RunOutcome, RunStatus, UnresolvedRun, UnresolvedRunOutcome,
};

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::schema::LOCK_TIMEOUT_WITHIN_DEADLINE_RULE;
use crate::shared::{ApplyPolicy, DatabaseTargetSpec, ExecutionSpec, GoDuration, OCIArtifactSourceSpec};

/// The desired state of a PtahMigration.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, KubeSchema)]
#[kube(
    group = "operator.ptah.run",
    version = "v1alpha1",
    kind = "PtahMigration",
    plural = "ptahmigrations",
    namespaced,
    status = "PtahMigrationStatus",
    shortname = "ptahm",
    category = "ptah",
    derive = "PartialEq",
    validation = Rule::new("size(self.metadata.name) <= 63").message("metadata.name must be at most 63 characters (it is carried whole in Job labels)"),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(name = "Current", type_ = "integer", json_path = ".status.history.currentVersion"),
    printcolumn(name = "Pending", type_ = "integer", json_path = ".status.history.pendingCount"),
    printcolumn(name = "Outcome", type_ = "string", json_path = ".status.lastRun.outcome"),
    printcolumn(name = "Digest", type_ = "string", json_path = ".status.artifact.digest", priority = 1),
    printcolumn(name = "Realm", type_ = "string", json_path = ".spec.target.coordinationKey", priority = 1),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp")
)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new(LOCK_TIMEOUT_WITHIN_DEADLINE_RULE).message("policy.lockTimeout must not exceed execution.activeDeadlineSeconds").field_path(".policy.lockTimeout"))]
pub struct PtahMigrationSpec {
    /// The database to migrate.
    pub target: DatabaseTargetSpec,
    /// The migrations artifact.
    pub artifact: OCIArtifactSourceSpec,
    /// What may be applied.
    #[serde(default)]
    pub policy: MigrationPolicySpec,
    /// History-reading cadence (10s–24h).
    #[serde(default = "crate::schema::default_interval")]
    #[x_kube(validation = Rule::new("duration(self) >= duration('10s') && duration(self) <= duration('24h')").message("interval must be between 10s and 24h"))]
    pub interval: GoDuration,
    /// How operation Jobs run.
    #[serde(default)]
    pub execution: ExecutionSpec,
    /// Create no new Jobs.
    #[serde(default)]
    pub suspend: bool,
}

/// How each migration file runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MigrationTransactionMode {
    /// One transaction per file.
    File,
    /// No transaction.
    None,
}

fn default_migration_lock_timeout() -> GoDuration {
    GoDuration::literal("5m", 300)
}

/// What a PtahMigration may apply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct MigrationPolicySpec {
    /// When plans are applied (`Always` and `BySeverity` go by the migration linter's verdicts).
    #[serde(default)]
    pub apply: ApplyPolicy,
    /// Under `BySeverity`, permit migrations the linter finds destructive (they still need an
    /// approval). Other policies do not read it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_destructive: bool,
    /// How long to wait for the migration lock (1s–1h).
    #[serde(default = "default_migration_lock_timeout")]
    #[x_kube(validation = Rule::new("duration(self) >= duration('1s') && duration(self) <= duration('1h')").message("lockTimeout must be between 1s and 1h"))]
    pub lock_timeout: GoDuration,
    /// Transaction mode; unset lets Ptah choose (deliberately no default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_mode: Option<MigrationTransactionMode>,
}

impl Default for MigrationPolicySpec {
    fn default() -> Self {
        MigrationPolicySpec {
            apply: ApplyPolicy::default(),
            allow_destructive: false,
            lock_timeout: default_migration_lock_timeout(),
            transaction_mode: None,
        }
    }
}
