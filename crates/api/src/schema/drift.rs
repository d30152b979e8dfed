//! Drift as the status reports it: aggregates by category, never object names or values.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::shared::{DatabaseEngine, Sha256Digest};

/// The most drift categories the status publishes.
pub const MAX_DRIFT_FINDINGS: usize = 64;

/// Which drift a PtahSchema reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DriftSeverityPolicy {
    /// Every difference.
    #[default]
    All,
    /// Only destructive differences.
    Destructive,
}

/// How one drift category rates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DriftSeverity {
    /// Harmless.
    Safe,
    /// Informational.
    Info,
    /// Worth a look.
    Warning,
    /// An error.
    Error,
    /// Applying the desired state would destroy data.
    Destructive,
}

/// The closed vocabulary (v1) of drift categories; extending it needs a runner protocol bump.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DriftCategory {
    /// `columns_added`: columns added.
    ColumnsAdded,
    /// `columns_modified`: columns modified.
    ColumnsModified,
    /// `columns_removed`: columns removed.
    ColumnsRemoved,
    /// `constraints_added`: constraints added.
    ConstraintsAdded,
    /// `constraints_removed`: constraints removed.
    ConstraintsRemoved,
    /// `data_rows_deleted`: data rows deleted.
    DataRowsDeleted,
    /// `data_rows_inserted`: data rows inserted.
    DataRowsInserted,
    /// `data_rows_updated`: data rows updated.
    DataRowsUpdated,
    /// `enum_values_added`: enum values added.
    EnumValuesAdded,
    /// `enum_values_removed`: enum values removed.
    EnumValuesRemoved,
    /// `enums_added`: enums added.
    EnumsAdded,
    /// `enums_removed`: enums removed.
    EnumsRemoved,
    /// `extensions_added`: extensions added.
    ExtensionsAdded,
    /// `extensions_modified`: extensions modified.
    ExtensionsModified,
    /// `extensions_removed`: extensions removed.
    ExtensionsRemoved,
    /// `functions_added`: functions added.
    FunctionsAdded,
    /// `functions_modified`: functions modified.
    FunctionsModified,
    /// `functions_removed`: functions removed.
    FunctionsRemoved,
    /// `indexes_added`: indexes added.
    IndexesAdded,
    /// `indexes_removed`: indexes removed.
    IndexesRemoved,
    /// `rls_enabled_tables_added`: rls enabled tables added.
    RlsEnabledTablesAdded,
    /// `rls_enabled_tables_removed`: rls enabled tables removed.
    RlsEnabledTablesRemoved,
    /// `rls_force_added`: rls force added.
    RlsForceAdded,
    /// `rls_force_removed`: rls force removed.
    RlsForceRemoved,
    /// `rls_policies_added`: rls policies added.
    RlsPoliciesAdded,
    /// `rls_policies_modified`: rls policies modified.
    RlsPoliciesModified,
    /// `rls_policies_removed`: rls policies removed.
    RlsPoliciesRemoved,
    /// `roles_added`: roles added.
    RolesAdded,
    /// `roles_modified`: roles modified.
    RolesModified,
    /// `roles_removed`: roles removed.
    RolesRemoved,
    /// `table_constraints_added`: table constraints added.
    TableConstraintsAdded,
    /// `table_constraints_removed`: table constraints removed.
    TableConstraintsRemoved,
    /// `tables_added`: tables added.
    TablesAdded,
    /// `tables_removed`: tables removed.
    TablesRemoved,
    /// `unique_protections_removed`: unique protections removed.
    UniqueProtectionsRemoved,
    /// `vector_dimension_changed`: vector dimension changed.
    VectorDimensionChanged,
}

/// How many differences of one category the last observation found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DriftFinding {
    /// The kind of difference (never the object it was found in).
    pub category: DriftCategory,
    /// How many differences of that kind.
    #[schemars(range(min = 1))]
    pub count: i32,
    /// How the category rates.
    pub severity: DriftSeverity,
}

/// The observed target: identities and drift aggregates, never the URL or its credentials.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(self.driftFindingsTruncated) || !self.driftFindingsTruncated || (has(self.driftFindings) && size(self.driftFindings) == 64)").message("truncated drift findings require exactly 64 published summaries").field_path(".driftFindings"))]
pub struct SchemaTargetStatus {
    /// The engine this target speaks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<DatabaseEngine>,
    /// The realm identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordination_digest: Option<Sha256Digest>,
    /// The database identity reported by the runner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_digest: Option<Sha256Digest>,
    /// Digest of the raw drift report (which stays in the Pod).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_report_digest: Option<Sha256Digest>,
    /// When the database was last observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_observed_at: Option<Time>,
    /// The highest severity found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub highest_drift_severity: Option<DriftSeverity>,
    /// Total number of differences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub drift_finding_count: Option<i64>,
    /// Per-category aggregates (at most 64).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64))]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["category".into()]))]
    pub drift_findings: Vec<DriftFinding>,
    /// More categories existed than were published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_findings_truncated: Option<bool>,
}
