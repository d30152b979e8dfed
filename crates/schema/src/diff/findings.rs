//! Diff categories and the drift summary the operator publishes: counts and severities, never values.

use serde::{Deserialize, Serialize};

use super::{RenamedKind, SchemaDiff};
use crate::plan::Severity;

/// A category of difference, in the reference's vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiffCategory {
    /// `namespaces_added`.
    NamespacesAdded,
    /// `extensions_added`.
    ExtensionsAdded,
    /// `enums_added`.
    EnumsAdded,
    /// `enums_modified`.
    EnumsModified,
    /// `enums_removed`.
    EnumsRemoved,
    /// `tables_added`.
    TablesAdded,
    /// `tables_removed`.
    TablesRemoved,
    /// `table_comments_modified`.
    TableCommentsModified,
    /// `table_options_modified`: a declared default character set or collation (MySQL).
    TableOptionsModified,
    /// `columns_added`.
    ColumnsAdded,
    /// `columns_removed`.
    ColumnsRemoved,
    /// `columns_modified`.
    ColumnsModified,
    /// `indexes_added`.
    IndexesAdded,
    /// `indexes_removed`.
    IndexesRemoved,
    /// `indexes_modified`.
    IndexesModified,
    /// `constraints_added`.
    ConstraintsAdded,
    /// `constraints_removed`.
    ConstraintsRemoved,
    /// `constraints_modified`.
    ConstraintsModified,
    /// `rows_inserted`.
    RowsInserted,
    /// `rows_updated`.
    RowsUpdated,
    /// `rows_deleted`.
    RowsDeleted,
    /// `domains_added`.
    DomainsAdded,
    /// `domains_modified`.
    DomainsModified,
    /// `domains_removed`.
    DomainsRemoved,
    /// `sequences_added`.
    SequencesAdded,
    /// `sequences_modified`.
    SequencesModified,
    /// `sequences_removed`.
    SequencesRemoved,
    /// `views_added`.
    ViewsAdded,
    /// `views_modified`: a view rebuilt or re-commented.
    ViewsModified,
    /// `views_removed`.
    ViewsRemoved,
    /// `functions_added`: functions and procedures (on MySQL also events).
    FunctionsAdded,
    /// `functions_modified`.
    FunctionsModified,
    /// `functions_removed`.
    FunctionsRemoved,
    /// `triggers_added`.
    TriggersAdded,
    /// `triggers_modified`.
    TriggersModified,
    /// `triggers_removed`.
    TriggersRemoved,
    /// `rls_enabled_tables_added`: row-level security enabled on a table.
    RlsEnabledTablesAdded,
    /// `rls_enabled_tables_removed`: row-level security disabled.
    RlsEnabledTablesRemoved,
    /// `rls_force_added`: row-level security forced on the owner too.
    RlsForceAdded,
    /// `rls_force_removed`: no longer forced.
    RlsForceRemoved,
    /// `rls_policies_added`.
    RlsPoliciesAdded,
    /// `rls_policies_modified`.
    RlsPoliciesModified,
    /// `rls_policies_removed`.
    RlsPoliciesRemoved,
    /// `grants_added`: privileges granted on a table.
    GrantsAdded,
    /// `grants_removed`: privileges (or grant options) revoked.
    GrantsRemoved,
    /// `partitions_attached`: a plain table attached as a partition.
    PartitionsAttached,
    /// `partitions_detached`: a partition detached as a plain table.
    PartitionsDetached,
    /// `partitions_modified`: a partition's bound or parent (detached and attached again).
    PartitionsModified,
    /// `partition_keys_modified`: a partition key differs (no plan can change it).
    PartitionKeysModified,
    /// `tables_renamed`: a table a declared hint renames.
    TablesRenamed,
    /// `columns_renamed`: a column a declared hint renames.
    ColumnsRenamed,
}

impl DiffCategory {
    /// Every category the differ can report, in declaration order: the executor's drift vocabulary.
    pub const ALL: [DiffCategory; 51] = [
        DiffCategory::NamespacesAdded,
        DiffCategory::ExtensionsAdded,
        DiffCategory::EnumsAdded,
        DiffCategory::EnumsModified,
        DiffCategory::EnumsRemoved,
        DiffCategory::TablesAdded,
        DiffCategory::TablesRemoved,
        DiffCategory::TableCommentsModified,
        DiffCategory::TableOptionsModified,
        DiffCategory::ColumnsAdded,
        DiffCategory::ColumnsRemoved,
        DiffCategory::ColumnsModified,
        DiffCategory::IndexesAdded,
        DiffCategory::IndexesRemoved,
        DiffCategory::IndexesModified,
        DiffCategory::ConstraintsAdded,
        DiffCategory::ConstraintsRemoved,
        DiffCategory::ConstraintsModified,
        DiffCategory::RowsInserted,
        DiffCategory::RowsUpdated,
        DiffCategory::RowsDeleted,
        DiffCategory::DomainsAdded,
        DiffCategory::DomainsModified,
        DiffCategory::DomainsRemoved,
        DiffCategory::SequencesAdded,
        DiffCategory::SequencesModified,
        DiffCategory::SequencesRemoved,
        DiffCategory::ViewsAdded,
        DiffCategory::ViewsModified,
        DiffCategory::ViewsRemoved,
        DiffCategory::FunctionsAdded,
        DiffCategory::FunctionsModified,
        DiffCategory::FunctionsRemoved,
        DiffCategory::TriggersAdded,
        DiffCategory::TriggersModified,
        DiffCategory::TriggersRemoved,
        DiffCategory::RlsEnabledTablesAdded,
        DiffCategory::RlsEnabledTablesRemoved,
        DiffCategory::RlsForceAdded,
        DiffCategory::RlsForceRemoved,
        DiffCategory::RlsPoliciesAdded,
        DiffCategory::RlsPoliciesModified,
        DiffCategory::RlsPoliciesRemoved,
        DiffCategory::GrantsAdded,
        DiffCategory::GrantsRemoved,
        DiffCategory::PartitionsAttached,
        DiffCategory::PartitionsDetached,
        DiffCategory::PartitionsModified,
        DiffCategory::PartitionKeysModified,
        DiffCategory::TablesRenamed,
        DiffCategory::ColumnsRenamed,
    ];

    /// The category's name as it appears in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            DiffCategory::NamespacesAdded => "namespaces_added",
            DiffCategory::ExtensionsAdded => "extensions_added",
            DiffCategory::EnumsAdded => "enums_added",
            DiffCategory::EnumsModified => "enums_modified",
            DiffCategory::EnumsRemoved => "enums_removed",
            DiffCategory::TablesAdded => "tables_added",
            DiffCategory::TablesRemoved => "tables_removed",
            DiffCategory::TableCommentsModified => "table_comments_modified",
            DiffCategory::TableOptionsModified => "table_options_modified",
            DiffCategory::ColumnsAdded => "columns_added",
            DiffCategory::ColumnsRemoved => "columns_removed",
            DiffCategory::ColumnsModified => "columns_modified",
            DiffCategory::IndexesAdded => "indexes_added",
            DiffCategory::IndexesRemoved => "indexes_removed",
            DiffCategory::IndexesModified => "indexes_modified",
            DiffCategory::ConstraintsAdded => "constraints_added",
            DiffCategory::ConstraintsRemoved => "constraints_removed",
            DiffCategory::ConstraintsModified => "constraints_modified",
            DiffCategory::RowsInserted => "rows_inserted",
            DiffCategory::RowsUpdated => "rows_updated",
            DiffCategory::RowsDeleted => "rows_deleted",
            DiffCategory::DomainsAdded => "domains_added",
            DiffCategory::DomainsModified => "domains_modified",
            DiffCategory::DomainsRemoved => "domains_removed",
            DiffCategory::SequencesAdded => "sequences_added",
            DiffCategory::SequencesModified => "sequences_modified",
            DiffCategory::SequencesRemoved => "sequences_removed",
            DiffCategory::ViewsAdded => "views_added",
            DiffCategory::ViewsModified => "views_modified",
            DiffCategory::ViewsRemoved => "views_removed",
            DiffCategory::FunctionsAdded => "functions_added",
            DiffCategory::FunctionsModified => "functions_modified",
            DiffCategory::FunctionsRemoved => "functions_removed",
            DiffCategory::TriggersAdded => "triggers_added",
            DiffCategory::TriggersModified => "triggers_modified",
            DiffCategory::TriggersRemoved => "triggers_removed",
            DiffCategory::RlsEnabledTablesAdded => "rls_enabled_tables_added",
            DiffCategory::RlsEnabledTablesRemoved => "rls_enabled_tables_removed",
            DiffCategory::RlsForceAdded => "rls_force_added",
            DiffCategory::RlsForceRemoved => "rls_force_removed",
            DiffCategory::RlsPoliciesAdded => "rls_policies_added",
            DiffCategory::RlsPoliciesModified => "rls_policies_modified",
            DiffCategory::RlsPoliciesRemoved => "rls_policies_removed",
            DiffCategory::GrantsAdded => "grants_added",
            DiffCategory::GrantsRemoved => "grants_removed",
            DiffCategory::PartitionsAttached => "partitions_attached",
            DiffCategory::PartitionsDetached => "partitions_detached",
            DiffCategory::PartitionsModified => "partitions_modified",
            DiffCategory::PartitionKeysModified => "partition_keys_modified",
            DiffCategory::TablesRenamed => "tables_renamed",
            DiffCategory::ColumnsRenamed => "columns_renamed",
        }
    }
}

impl std::fmt::Display for DiffCategory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One line of the drift summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The category.
    pub category: DiffCategory,
    /// How many objects (or rows) differ.
    pub count: usize,
    /// The highest severity of the statements that would resolve them.
    pub severity: Severity,
}

impl SchemaDiff {
    /// How many entries each non-empty category has, sorted by category name.
    pub fn counts(&self) -> Vec<(DiffCategory, usize)> {
        let mut out = vec![
            (DiffCategory::NamespacesAdded, self.namespaces_added.len()),
            (DiffCategory::ExtensionsAdded, self.extensions_added.len()),
            (DiffCategory::EnumsAdded, self.enums_added.len()),
            (DiffCategory::EnumsModified, self.enums_modified.len()),
            (DiffCategory::EnumsRemoved, self.enums_removed.len()),
            (DiffCategory::TablesAdded, self.tables_added.len()),
            (DiffCategory::TablesRemoved, self.tables_removed.len()),
            (
                DiffCategory::TableCommentsModified,
                self.table_comments_modified.len(),
            ),
            (
                DiffCategory::TableOptionsModified,
                self.table_options_modified.len(),
            ),
            (DiffCategory::ColumnsAdded, self.columns_added.len()),
            (DiffCategory::ColumnsRemoved, self.columns_removed.len()),
            (DiffCategory::ColumnsModified, self.columns_modified.len()),
            (DiffCategory::IndexesAdded, self.indexes_added.len()),
            (DiffCategory::IndexesRemoved, self.indexes_removed.len()),
            (
                DiffCategory::IndexesModified,
                self.indexes_modified.len()
                    + self.index_comments_modified.len()
                    + self.objects_renamed(RenamedKind::Index),
            ),
            (DiffCategory::ConstraintsAdded, self.constraints_added.len()),
            (DiffCategory::ConstraintsRemoved, self.constraints_removed.len()),
            (
                DiffCategory::ConstraintsModified,
                self.constraints_modified.len()
                    + self.constraints_validated.len()
                    + self.objects_renamed(RenamedKind::Constraint),
            ),
            (DiffCategory::RowsInserted, self.rows_inserted.len()),
            (DiffCategory::RowsUpdated, self.rows_updated.len()),
            (DiffCategory::RowsDeleted, self.rows_deleted.len()),
            (DiffCategory::DomainsAdded, self.domains_added.len()),
            (DiffCategory::DomainsModified, self.domains_modified.len()),
            (DiffCategory::DomainsRemoved, self.domains_removed.len()),
            (DiffCategory::SequencesAdded, self.sequences_added.len()),
            (DiffCategory::SequencesModified, self.sequences_modified.len()),
            (DiffCategory::SequencesRemoved, self.sequences_removed.len()),
            (DiffCategory::ViewsAdded, self.views_added.len()),
            (DiffCategory::ViewsModified, self.views_modified.len()),
            (DiffCategory::ViewsRemoved, self.views_removed.len()),
            (
                DiffCategory::FunctionsAdded,
                self.routines_added.len() + self.stored_routines_added.len() + self.events_added.len(),
            ),
            (
                DiffCategory::FunctionsModified,
                self.routines_modified.len()
                    + self.stored_routines_modified.len()
                    + self.events_modified.len(),
            ),
            (
                DiffCategory::FunctionsRemoved,
                self.routines_removed.len() + self.stored_routines_removed.len() + self.events_removed.len(),
            ),
            (DiffCategory::TriggersAdded, self.triggers_added.len()),
            (DiffCategory::TriggersModified, self.triggers_modified.len()),
            (DiffCategory::TriggersRemoved, self.triggers_removed.len()),
            (
                DiffCategory::RlsEnabledTablesAdded,
                self.row_security(|c| c.enabled_changes && c.enabled),
            ),
            (
                DiffCategory::RlsEnabledTablesRemoved,
                self.row_security(|c| c.enabled_changes && !c.enabled),
            ),
            (
                DiffCategory::RlsForceAdded,
                self.row_security(|c| c.forced_changes && c.forced),
            ),
            (
                DiffCategory::RlsForceRemoved,
                self.row_security(|c| c.forced_changes && !c.forced),
            ),
            (DiffCategory::RlsPoliciesAdded, self.policies_added.len()),
            (DiffCategory::RlsPoliciesModified, self.policies_modified.len()),
            (DiffCategory::RlsPoliciesRemoved, self.policies_removed.len()),
            (DiffCategory::GrantsAdded, self.grants_added.len()),
            (DiffCategory::GrantsRemoved, self.grants_removed.len()),
            (DiffCategory::PartitionsAttached, self.partitions_attached.len()),
            (DiffCategory::PartitionsDetached, self.partitions_detached.len()),
            (DiffCategory::PartitionsModified, self.partitions_modified.len()),
            (
                DiffCategory::PartitionKeysModified,
                self.partition_keys_modified.len(),
            ),
            (DiffCategory::TablesRenamed, self.tables_renamed.len()),
            (DiffCategory::ColumnsRenamed, self.columns_renamed.len()),
        ];
        out.retain(|(_, n)| *n > 0);
        out.sort_by_key(|(c, _)| c.as_str());
        out
    }
}

impl SchemaDiff {
    /// How many row-level security changes match `which`.
    fn row_security(&self, which: impl Fn(&super::RowSecurityChange) -> bool) -> usize {
        self.row_security_modified.iter().filter(|c| which(c)).count()
    }

    /// How many indexes or constraints of renamed tables are renamed.
    fn objects_renamed(&self, kind: RenamedKind) -> usize {
        self.objects_renamed.iter().filter(|o| o.kind == kind).count()
    }
}
