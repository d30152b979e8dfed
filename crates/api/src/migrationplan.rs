//! `PtahMigrationPlan`: the immutable, ordered sequence of migrations one Apply may run.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::shared::{ImmutableObjectReference, PlanExecutionBinding, Sha256Digest};

/// The migration plan contract version this API carries.
pub const MIGRATION_PLAN_CONTRACT_VERSION: i32 = 1;

/// Per-file transaction mode as Ptah reports it (`""` = Ptah's default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum PlannedTransactionMode {
    /// Ptah's default.
    #[default]
    #[serde(rename = "")]
    Default,
    /// One transaction per file.
    #[serde(rename = "file")]
    File,
    /// No transaction.
    #[serde(rename = "none")]
    None,
}

/// One migration in the planned sequence (no SQL: Apply re-reads the verified artifact).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlannedMigration {
    /// The version (from 1).
    #[schemars(range(min = 1))]
    pub version: i64,
    /// The version as spelled in the file name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 128))]
    pub version_key: Option<String>,
    /// The description from the file name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 128))]
    pub description: Option<String>,
    /// The file's checksum from `ptah.sum`.
    #[schemars(length(min = 1, max = 128))]
    pub checksum: String,
    /// Whether the file is a checkpoint.
    #[serde(default)]
    pub checkpoint: bool,
    /// The file's transaction mode.
    #[serde(default)]
    pub transaction_mode: PlannedTransactionMode,
    /// What the migration linter found in the file, when the History reading was linted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lint: Option<PlannedLint>,
}

/// How much a planned migration's lint findings matter: `Safe` when it has none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
pub enum LintSeverity {
    /// No finding.
    Safe,
    /// Only notices (what the linter could not read).
    Notice,
    /// A lock hazard, a table copy or a rename.
    Warning,
    /// A destructive change, or a statement that cannot run as written.
    Error,
}

/// The linter's verdict on one planned migration (`ptah migrations lint` codes, no SQL).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlannedLint {
    /// The highest severity of its findings.
    pub severity: LintSeverity,
    /// The codes found, sorted, each once (at most 32).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32))]
    pub codes: Vec<String>,
}

/// An immutable migration plan.
#[derive(CustomResource, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[kube(
    group = "operator.ptah.run",
    version = "v1alpha1",
    kind = "PtahMigrationPlan",
    plural = "ptahmigrationplans",
    namespaced,
    status = "PtahMigrationPlanStatus",
    shortname = "ptahmplan",
    category = "ptah",
    derive = "PartialEq",
    printcolumn(name = "Migration", type_ = "string", json_path = ".spec.migrationRef.name"),
    printcolumn(name = "From", type_ = "integer", json_path = ".spec.currentVersion"),
    printcolumn(name = "Steps", type_ = "string", json_path = ".spec.migrations[*].version"),
    printcolumn(
        name = "Current",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"Current\")].status"
    ),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp")
)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("self == oldSelf").message("a published plan is immutable"))]
pub struct PtahMigrationPlanSpec {
    /// The plan contract version (exactly 1).
    #[schemars(extend("enum" = [1]))]
    pub contract_version: i32,
    /// The PtahMigration the plan belongs to.
    pub migration_ref: ImmutableObjectReference,
    /// The plan fingerprint approvals name.
    #[schemars(length(min = 1, max = 128))]
    pub fingerprint: String,
    /// The ordered sequence (1–256).
    #[schemars(length(min = 1, max = 256))]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["version".into()]))]
    pub migrations: Vec<PlannedMigration>,
    /// The history reading the plan was derived from.
    pub history_fingerprint: Sha256Digest,
    /// The version the database was at.
    #[schemars(range(min = 0))]
    pub current_version: i64,
    /// The execution and target bindings.
    #[serde(flatten)]
    pub binding: PlanExecutionBinding,
    /// When the plan was published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<Time>,
}

/// Status of a migration plan: `Current` and `Executed` conditions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct PtahMigrationPlanStatus {
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Conditions, one per type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
}
