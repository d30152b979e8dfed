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

impl DriftSeverity {
    /// The status severity of an executor severity (`safe`, `warning`, `destructive`; the
    /// executor emits no other), or `None` for an unknown name.
    pub fn from_executor(severity: &str) -> Option<DriftSeverity> {
        match severity {
            "safe" => Some(DriftSeverity::Safe),
            "info" => Some(DriftSeverity::Info),
            "warning" => Some(DriftSeverity::Warning),
            "error" => Some(DriftSeverity::Error),
            "destructive" => Some(DriftSeverity::Destructive),
            _ => None,
        }
    }
}

/// The closed vocabulary of drift categories: the reference list (36) plus the twenty-six the
/// executor also emits (`tables_renamed`, `columns_renamed`, `namespaces_added`,
/// `enums_modified`, `domains_added`, `domains_modified`, `domains_removed`, `grants_added`, `grants_removed`, `sequences_added`, `sequences_modified`,
/// `sequences_removed`, `table_comments_modified`, `table_options_modified`, `indexes_modified`,
/// `constraints_modified`, `views_added`, `views_modified`, `views_removed`, `triggers_added`,
/// `triggers_modified`, `triggers_removed`, `partitions_attached`, `partitions_detached`,
/// `partitions_modified`, `partition_keys_modified`); [`DriftCategory::from_executor`] maps every
/// executor category here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DriftCategory {
    /// `columns_added`: columns added.
    ColumnsAdded,
    /// `columns_modified`: columns modified.
    ColumnsModified,
    /// `columns_removed`: columns removed.
    ColumnsRemoved,
    /// `columns_renamed`: columns a declared hint renames.
    ColumnsRenamed,
    /// `constraints_added`: constraints added.
    ConstraintsAdded,
    /// `constraints_modified`: constraints modified.
    ConstraintsModified,
    /// `constraints_removed`: constraints removed.
    ConstraintsRemoved,
    /// `data_rows_deleted`: data rows deleted.
    DataRowsDeleted,
    /// `data_rows_inserted`: data rows inserted.
    DataRowsInserted,
    /// `data_rows_updated`: data rows updated.
    DataRowsUpdated,
    /// `domains_added`: domains added.
    DomainsAdded,
    /// `domains_modified`: domains modified.
    DomainsModified,
    /// `domains_removed`: domains removed.
    DomainsRemoved,
    /// `enum_values_added`: enum values added.
    EnumValuesAdded,
    /// `enum_values_removed`: enum values removed.
    EnumValuesRemoved,
    /// `enums_added`: enums added.
    EnumsAdded,
    /// `enums_modified`: enums modified.
    EnumsModified,
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
    /// `grants_added`: table privileges granted.
    GrantsAdded,
    /// `grants_removed`: table privileges (or their grant option) revoked.
    GrantsRemoved,
    /// `indexes_added`: indexes added.
    IndexesAdded,
    /// `indexes_modified`: indexes modified.
    IndexesModified,
    /// `indexes_removed`: indexes removed.
    IndexesRemoved,
    /// `namespaces_added`: namespaces added.
    NamespacesAdded,
    /// `partition_keys_modified`: a table's partition key differs (PostgreSQL; no plan changes it).
    PartitionKeysModified,
    /// `partitions_attached`: plain tables attached as partitions.
    PartitionsAttached,
    /// `partitions_detached`: partitions detached as plain tables.
    PartitionsDetached,
    /// `partitions_modified`: partitions whose bound or parent changes.
    PartitionsModified,
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
    /// `sequences_added`: sequences added.
    SequencesAdded,
    /// `sequences_modified`: sequences whose options, owner or comment changed.
    SequencesModified,
    /// `sequences_removed`: sequences removed.
    SequencesRemoved,
    /// `table_comments_modified`: table comments modified.
    TableCommentsModified,
    /// `table_constraints_added`: table constraints added.
    TableConstraintsAdded,
    /// `table_constraints_removed`: table constraints removed.
    TableConstraintsRemoved,
    /// `table_options_modified`: a table's default character set or collation modified (MySQL).
    TableOptionsModified,
    /// `tables_added`: tables added.
    TablesAdded,
    /// `tables_removed`: tables removed.
    TablesRemoved,
    /// `tables_renamed`: tables a declared hint renames.
    TablesRenamed,
    /// `triggers_added`: triggers added.
    TriggersAdded,
    /// `triggers_modified`: triggers modified.
    TriggersModified,
    /// `triggers_removed`: triggers removed.
    TriggersRemoved,
    /// `unique_protections_removed`: unique protections removed.
    UniqueProtectionsRemoved,
    /// `vector_dimension_changed`: vector dimension changed.
    VectorDimensionChanged,
    /// `views_added`: views added.
    ViewsAdded,
    /// `views_modified`: views rebuilt or re-commented.
    ViewsModified,
    /// `views_removed`: views removed.
    ViewsRemoved,
}

impl DriftCategory {
    /// Every category, in wire-name order.
    pub const ALL: [DriftCategory; 62] = [
        DriftCategory::ColumnsAdded,
        DriftCategory::ColumnsModified,
        DriftCategory::ColumnsRemoved,
        DriftCategory::ColumnsRenamed,
        DriftCategory::ConstraintsAdded,
        DriftCategory::ConstraintsModified,
        DriftCategory::ConstraintsRemoved,
        DriftCategory::DataRowsDeleted,
        DriftCategory::DataRowsInserted,
        DriftCategory::DataRowsUpdated,
        DriftCategory::DomainsAdded,
        DriftCategory::DomainsModified,
        DriftCategory::DomainsRemoved,
        DriftCategory::EnumValuesAdded,
        DriftCategory::EnumValuesRemoved,
        DriftCategory::EnumsAdded,
        DriftCategory::EnumsModified,
        DriftCategory::EnumsRemoved,
        DriftCategory::ExtensionsAdded,
        DriftCategory::ExtensionsModified,
        DriftCategory::ExtensionsRemoved,
        DriftCategory::FunctionsAdded,
        DriftCategory::FunctionsModified,
        DriftCategory::FunctionsRemoved,
        DriftCategory::GrantsAdded,
        DriftCategory::GrantsRemoved,
        DriftCategory::IndexesAdded,
        DriftCategory::IndexesModified,
        DriftCategory::IndexesRemoved,
        DriftCategory::NamespacesAdded,
        DriftCategory::PartitionKeysModified,
        DriftCategory::PartitionsAttached,
        DriftCategory::PartitionsDetached,
        DriftCategory::PartitionsModified,
        DriftCategory::RlsEnabledTablesAdded,
        DriftCategory::RlsEnabledTablesRemoved,
        DriftCategory::RlsForceAdded,
        DriftCategory::RlsForceRemoved,
        DriftCategory::RlsPoliciesAdded,
        DriftCategory::RlsPoliciesModified,
        DriftCategory::RlsPoliciesRemoved,
        DriftCategory::RolesAdded,
        DriftCategory::RolesModified,
        DriftCategory::RolesRemoved,
        DriftCategory::SequencesAdded,
        DriftCategory::SequencesModified,
        DriftCategory::SequencesRemoved,
        DriftCategory::TableCommentsModified,
        DriftCategory::TableConstraintsAdded,
        DriftCategory::TableConstraintsRemoved,
        DriftCategory::TableOptionsModified,
        DriftCategory::TablesAdded,
        DriftCategory::TablesRemoved,
        DriftCategory::TablesRenamed,
        DriftCategory::TriggersAdded,
        DriftCategory::TriggersModified,
        DriftCategory::TriggersRemoved,
        DriftCategory::UniqueProtectionsRemoved,
        DriftCategory::VectorDimensionChanged,
        DriftCategory::ViewsAdded,
        DriftCategory::ViewsModified,
        DriftCategory::ViewsRemoved,
    ];

    /// The wire name, as serialized in `status.target.driftFindings[].category`.
    pub fn as_str(self) -> &'static str {
        match self {
            DriftCategory::ColumnsAdded => "columns_added",
            DriftCategory::ColumnsModified => "columns_modified",
            DriftCategory::ColumnsRemoved => "columns_removed",
            DriftCategory::ColumnsRenamed => "columns_renamed",
            DriftCategory::ConstraintsAdded => "constraints_added",
            DriftCategory::ConstraintsModified => "constraints_modified",
            DriftCategory::ConstraintsRemoved => "constraints_removed",
            DriftCategory::DataRowsDeleted => "data_rows_deleted",
            DriftCategory::DataRowsInserted => "data_rows_inserted",
            DriftCategory::DataRowsUpdated => "data_rows_updated",
            DriftCategory::DomainsAdded => "domains_added",
            DriftCategory::DomainsModified => "domains_modified",
            DriftCategory::DomainsRemoved => "domains_removed",
            DriftCategory::EnumValuesAdded => "enum_values_added",
            DriftCategory::EnumValuesRemoved => "enum_values_removed",
            DriftCategory::EnumsAdded => "enums_added",
            DriftCategory::EnumsModified => "enums_modified",
            DriftCategory::EnumsRemoved => "enums_removed",
            DriftCategory::ExtensionsAdded => "extensions_added",
            DriftCategory::ExtensionsModified => "extensions_modified",
            DriftCategory::ExtensionsRemoved => "extensions_removed",
            DriftCategory::FunctionsAdded => "functions_added",
            DriftCategory::FunctionsModified => "functions_modified",
            DriftCategory::FunctionsRemoved => "functions_removed",
            DriftCategory::GrantsAdded => "grants_added",
            DriftCategory::GrantsRemoved => "grants_removed",
            DriftCategory::IndexesAdded => "indexes_added",
            DriftCategory::IndexesModified => "indexes_modified",
            DriftCategory::IndexesRemoved => "indexes_removed",
            DriftCategory::NamespacesAdded => "namespaces_added",
            DriftCategory::PartitionKeysModified => "partition_keys_modified",
            DriftCategory::PartitionsAttached => "partitions_attached",
            DriftCategory::PartitionsDetached => "partitions_detached",
            DriftCategory::PartitionsModified => "partitions_modified",
            DriftCategory::RlsEnabledTablesAdded => "rls_enabled_tables_added",
            DriftCategory::RlsEnabledTablesRemoved => "rls_enabled_tables_removed",
            DriftCategory::RlsForceAdded => "rls_force_added",
            DriftCategory::RlsForceRemoved => "rls_force_removed",
            DriftCategory::RlsPoliciesAdded => "rls_policies_added",
            DriftCategory::RlsPoliciesModified => "rls_policies_modified",
            DriftCategory::RlsPoliciesRemoved => "rls_policies_removed",
            DriftCategory::RolesAdded => "roles_added",
            DriftCategory::RolesModified => "roles_modified",
            DriftCategory::RolesRemoved => "roles_removed",
            DriftCategory::SequencesAdded => "sequences_added",
            DriftCategory::SequencesModified => "sequences_modified",
            DriftCategory::SequencesRemoved => "sequences_removed",
            DriftCategory::TableCommentsModified => "table_comments_modified",
            DriftCategory::TableOptionsModified => "table_options_modified",
            DriftCategory::TableConstraintsAdded => "table_constraints_added",
            DriftCategory::TableConstraintsRemoved => "table_constraints_removed",
            DriftCategory::TablesAdded => "tables_added",
            DriftCategory::TablesRemoved => "tables_removed",
            DriftCategory::TablesRenamed => "tables_renamed",
            DriftCategory::TriggersAdded => "triggers_added",
            DriftCategory::TriggersModified => "triggers_modified",
            DriftCategory::TriggersRemoved => "triggers_removed",
            DriftCategory::UniqueProtectionsRemoved => "unique_protections_removed",
            DriftCategory::VectorDimensionChanged => "vector_dimension_changed",
            DriftCategory::ViewsAdded => "views_added",
            DriftCategory::ViewsModified => "views_modified",
            DriftCategory::ViewsRemoved => "views_removed",
        }
    }

    /// The status category of an executor drift category (`ptah schema drift --json`'s
    /// `findings[].category`), or `None` for a name neither vocabulary has.
    ///
    /// The executor's reference-row categories `rows_inserted`, `rows_updated` and `rows_deleted`
    /// are the reference list's `data_rows_*`; every other executor name is spelt the same in both
    /// vocabularies. A name already in this vocabulary maps to itself.
    pub fn from_executor(category: &str) -> Option<DriftCategory> {
        match category {
            "rows_inserted" => Some(DriftCategory::DataRowsInserted),
            "rows_updated" => Some(DriftCategory::DataRowsUpdated),
            "rows_deleted" => Some(DriftCategory::DataRowsDeleted),
            other => DriftCategory::ALL.into_iter().find(|c| c.as_str() == other),
        }
    }
}

impl std::fmt::Display for DriftCategory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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
