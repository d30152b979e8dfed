//! The differ: what separates a desired schema from an actual one, by identity and canonical value.
//!
//! Objects are matched by qualified name (tables, enums), by name inside a table (columns,
//! constraints, indexes) and by key (reference rows). Nothing is matched by similarity: a renamed
//! column is one removal and one addition, unless the document declares the rename ([`rename`]). Every list is in a deterministic order; lists whose order
//! matters for execution (tables, rows) are already in that order.

mod domain;
mod enums;
mod findings;
mod keys;
mod loose;
mod mysql;
mod order;
mod partition;
mod program;
mod rename;
mod rows;
mod scope;
mod security;
mod sequence;
mod table;
mod table_changes;
mod touched;

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::model::{
    DefaultValue, Domain, EnumType, Extension, Literal, QualifiedName, Routine, Schema, Sequence, Table,
    Trigger, View,
};

pub use domain::DomainChange;
pub use findings::{DiffCategory, Finding};
pub use mysql::{EventChange, StoredRoutineChange};
pub use order::fk_order;
pub use partition::{PartitionChange, PartitionKeyChange};
pub use program::{RoutineChange, TriggerChange, ViewChange, ViewRebuild, relations, view_order};
pub use rename::{
    ColumnRenamed, ObjectRenamed, RenameConflict, RenameIgnored, RenamedKind, TableRenamed, ignored_renames,
    with_renames,
};
pub use scope::{ExcludeSet, glob_match};
pub use security::{GrantRef, PolicyChange, PolicyRef, RowSecurityChange};
pub use sequence::SequenceChange;
pub use table::IndexCommentChange;
pub use table_changes::{
    ColumnAspect, ColumnChange, ColumnRef, Constraint, ConstraintChange, ConstraintRef, IndexChange,
    IndexRef, TableCommentChange, TableOptionsChange,
};

/// Everything that differs between a desired and an actual schema.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaDiff {
    /// PostgreSQL schemas to create.
    pub namespaces_added: Vec<String>,
    /// Extensions to create (never dropped).
    pub extensions_added: Vec<Extension>,
    /// Enum types to create.
    pub enums_added: Vec<EnumType>,
    /// Enum types whose labels change.
    pub enums_modified: Vec<EnumChange>,
    /// Enum types to drop.
    pub enums_removed: Vec<EnumType>,
    /// Tables to create, parents before children.
    pub tables_added: Vec<Table>,
    /// Tables to drop (the actual definition), children before parents.
    pub tables_removed: Vec<Table>,
    /// Tables whose comment changes.
    pub table_comments_modified: Vec<TableCommentChange>,
    /// Tables whose declared default character set or collation differs (MySQL).
    pub table_options_modified: Vec<TableOptionsChange>,
    /// Columns to add to existing tables.
    pub columns_added: Vec<ColumnRef>,
    /// Columns to drop from existing tables (the actual definition).
    pub columns_removed: Vec<ColumnRef>,
    /// Columns whose definition changes.
    pub columns_modified: Vec<ColumnChange>,
    /// Indexes to create on existing tables.
    pub indexes_added: Vec<IndexRef>,
    /// Indexes to drop (the actual definition).
    pub indexes_removed: Vec<IndexRef>,
    /// Indexes whose definition changes (dropped and created again).
    pub indexes_modified: Vec<IndexChange>,
    /// PostgreSQL index comments to set or clear (counted as `indexes_modified`).
    pub index_comments_modified: Vec<IndexCommentChange>,
    /// Constraints to add to existing tables.
    pub constraints_added: Vec<ConstraintRef>,
    /// Constraints to drop (the actual definition).
    pub constraints_removed: Vec<ConstraintRef>,
    /// Constraints whose definition changes (dropped and added again).
    pub constraints_modified: Vec<ConstraintChange>,
    /// PostgreSQL: declared constraints the server has not validated (`NOT VALID`), validated in
    /// place (counted as `constraints_modified`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constraints_validated: Vec<ConstraintRef>,
    /// Reference rows to insert, parent tables first.
    pub rows_inserted: Vec<RowChange>,
    /// Reference rows to update, parent tables first.
    pub rows_updated: Vec<RowChange>,
    /// Reference rows to delete, child tables first.
    pub rows_deleted: Vec<RowChange>,
    /// Domains to create.
    pub domains_added: Vec<Domain>,
    /// Domains to drop (the actual definition).
    pub domains_removed: Vec<Domain>,
    /// Domains whose definition changes.
    pub domains_modified: Vec<DomainChange>,
    /// PostgreSQL sequences to create.
    pub sequences_added: Vec<Sequence>,
    /// Sequences to drop (the actual definition).
    pub sequences_removed: Vec<Sequence>,
    /// Sequences whose options, owner or comment change.
    pub sequences_modified: Vec<SequenceChange>,
    /// The desired schema's partitioned tables (PostgreSQL `PARTITION BY`), whose indexes are never
    /// built concurrently.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub partitioned: BTreeSet<QualifiedName>,
    /// Every sequence the desired schema declares: a column whose default draws from one of them
    /// is created with that default, never spelled `serial` (which would make its own sequence).
    pub sequence_names: BTreeSet<QualifiedName>,
    /// Views to create, each after the views it reads.
    pub views_added: Vec<View>,
    /// Views to drop (the actual definition), each before the views it reads.
    pub views_removed: Vec<View>,
    /// Views rebuilt or re-commented, in creation order.
    pub views_modified: Vec<ViewChange>,
    /// Functions and procedures to create.
    pub routines_added: Vec<Routine>,
    /// Functions and procedures to drop (the actual definition).
    pub routines_removed: Vec<Routine>,
    /// Functions and procedures whose definition changes.
    pub routines_modified: Vec<RoutineChange>,
    /// Triggers to create.
    pub triggers_added: Vec<Trigger>,
    /// Triggers to drop (not those a dropped table takes with it).
    pub triggers_removed: Vec<Trigger>,
    /// Triggers whose definition changes (dropped and created again).
    pub triggers_modified: Vec<TriggerChange>,
    /// Tables whose `ROW LEVEL SECURITY` switches change.
    pub row_security_modified: Vec<RowSecurityChange>,
    /// Policies to create on existing tables.
    pub policies_added: Vec<PolicyRef>,
    /// Policies to drop (the actual definition).
    pub policies_removed: Vec<PolicyRef>,
    /// Policies whose definition changes.
    pub policies_modified: Vec<PolicyChange>,
    /// Privileges to grant on existing tables.
    pub grants_added: Vec<GrantRef>,
    /// Privileges (or grant options) to revoke.
    pub grants_removed: Vec<GrantRef>,
    /// Existing plain tables that become partitions (`ATTACH PARTITION`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions_attached: Vec<PartitionChange>,
    /// Partitions that become plain tables (`DETACH PARTITION`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions_detached: Vec<PartitionChange>,
    /// Partitions whose bound or parent changes (detached and attached again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions_modified: Vec<PartitionChange>,
    /// New partitions (in [`Self::tables_added`]) of a parent that keeps its default partition,
    /// which creating them scans.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions_over_default: Vec<QualifiedName>,
    /// Tables whose partition key differs: no plan can make the change ([`crate::PlanError`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partition_keys_modified: Vec<PartitionKeyChange>,
    /// MySQL functions and procedures to create.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stored_routines_added: Vec<crate::model::StoredRoutine>,
    /// MySQL functions and procedures to drop (the actual definition).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stored_routines_removed: Vec<crate::model::StoredRoutine>,
    /// MySQL functions and procedures whose definition changes (dropped and created again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stored_routines_modified: Vec<StoredRoutineChange>,
    /// MySQL events to create.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events_added: Vec<crate::model::Event>,
    /// MySQL events to drop (the actual definition).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events_removed: Vec<crate::model::Event>,
    /// MySQL events whose definition changes (dropped and created again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events_modified: Vec<EventChange>,
    /// MySQL: the desired options of views that do not keep the defaults, for the views created.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub view_options: std::collections::BTreeMap<String, crate::model::ViewOptions>,
    /// MySQL: the desired index comments by table and index name, for the indexes created.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub mysql_index_comments: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
    /// MySQL: kept indexes whose comment changes (the desired index), rebuilt in one statement.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mysql_index_rebuilds: Vec<IndexRef>,
    /// Tables a declared hint renames; every other entry names them by their new name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables_renamed: Vec<TableRenamed>,
    /// Columns a declared hint renames.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub columns_renamed: Vec<ColumnRenamed>,
    /// Indexes and constraints of renamed tables the document declares under another name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objects_renamed: Vec<ObjectRenamed>,
    /// Declared hints that do not apply (already renamed, or both names exist): notices.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub renames_ignored: Vec<RenameIgnored>,
    /// Column hints whose old column has another type: no plan can be made ([`crate::PlanError`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rename_conflicts: Vec<RenameConflict>,
    /// MySQL: tables with a FULLTEXT, SPATIAL or hash index, which the server changes only by
    /// copying them or under a lock: their statements are planned without an online clause.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub offline_tables: BTreeSet<QualifiedName>,
}

/// A change to an enum type's labels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnumChange {
    /// The enum's name.
    pub name: QualifiedName,
    /// The actual labels.
    pub from: Vec<String>,
    /// The desired labels.
    pub to: Vec<String>,
    /// How the change can be made.
    pub method: EnumChangeMethod,
}

/// How an enum change is carried out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnumChangeMethod {
    /// Only labels are added: `ALTER TYPE … ADD VALUE`, one per label, in this order.
    AddValues(Vec<EnumValueAdded>),
    /// Labels are removed or reordered: rename the old type, create the new one, convert the columns
    /// that use it, drop the old type.
    Recreate(Vec<EnumColumnUse>),
}

/// A label to add to an enum, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnumValueAdded {
    /// The new label.
    pub value: String,
    /// Its position relative to an existing label.
    pub position: EnumPosition,
}

/// Where `ADD VALUE` places a label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnumPosition {
    /// At the end (no clause).
    End,
    /// `BEFORE 'label'`.
    Before(String),
    /// `AFTER 'label'`.
    After(String),
}

/// A column that uses an enum being recreated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnumColumnUse {
    /// The table.
    pub table: QualifiedName,
    /// The column.
    pub column: String,
    /// Whether the column is an array of the enum.
    pub array: bool,
    /// The actual default, dropped before the conversion.
    pub default: Option<DefaultValue>,
    /// Whether that default is restored after the conversion (the desired column keeps it).
    pub restore_default: bool,
}

/// A reference row to insert, update or delete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowChange {
    /// The table.
    pub table: QualifiedName,
    /// The key columns and their values, in key order.
    pub key: Vec<(String, Literal)>,
    /// For inserts every value; for updates the values that change; empty for deletes.
    pub values: Vec<(String, Literal)>,
}

impl SchemaDiff {
    /// MySQL: whether `table`'s columns and indexes may change online (`ALGORITHM=INSTANT|INPLACE,
    /// LOCK=NONE`); see [`Self::offline_tables`].
    pub fn online(&self, table: &QualifiedName) -> bool {
        !self.offline_tables.contains(table)
    }

    /// Whether the schemas are equal.
    pub fn is_empty(&self) -> bool {
        self.counts().is_empty()
    }
}

/// Compares `desired` with `actual`. Both should already be scoped (see [`ExcludeSet`]).
pub fn diff(desired: &Schema, actual: &Schema) -> SchemaDiff {
    let renamed = rename::resolve(desired, actual);
    let mut actual = renamed.actual;
    let mut objects_renamed = Vec::new();
    let tables = renamed.tables.iter().map(|r| &r.to);
    for name in tables.chain(renamed.columns.iter().map(|r| &r.table)) {
        if let (Some(want), Some(have)) = (desired.tables.get(name), actual.to_mut().tables.get_mut(name)) {
            // MySQL is the dialect whose tables have no schema.
            objects_renamed.extend(rename::renamed_objects(want, have, name.schema.is_empty()));
        }
    }
    let actual: &Schema = &actual;
    let mut d = SchemaDiff {
        tables_renamed: renamed.tables,
        columns_renamed: renamed.columns,
        objects_renamed,
        renames_ignored: renamed.ignored,
        rename_conflicts: renamed.conflicts,
        namespaces_added: desired
            .namespaces
            .difference(&actual.namespaces)
            .cloned()
            .collect(),
        extensions_added: desired
            .extensions
            .iter()
            .filter(|(name, _)| !actual.extensions.contains_key(*name))
            .map(|(_, e)| e.clone())
            .collect(),
        partitioned: desired
            .tables
            .values()
            .filter(|t| t.partition_by.is_some())
            .map(|t| t.name.clone())
            .collect(),
        offline_tables: mysql::offline_tables(desired, actual),
        ..SchemaDiff::default()
    };
    enums::diff_enums(desired, actual, &mut d);
    domain::diff_domains(desired, actual, &mut d);
    sequence::diff_sequences(desired, actual, &mut d);

    // The foreign-key orders only matter for tables created or dropped and for reference rows;
    // sorting thousands of unchanged tables for nothing was a fifth of an unchanged plan's time.
    let rows = desired.tables.values().any(|t| t.rows.is_some());
    let order_of = |schema: &Schema, other: &Schema| {
        let needed = rows || schema.tables.keys().any(|k| !other.tables.contains_key(k));
        if needed {
            fk_order(schema.tables.values())
        } else {
            Vec::new()
        }
    };
    let desired_order = order_of(desired, actual);
    for name in &desired_order {
        if let Some(t) = desired
            .tables
            .get(name)
            .filter(|_| !actual.tables.contains_key(name))
        {
            d.tables_added.push(t.clone());
        }
    }
    d.partitions_over_default = partition::over_default(desired, actual, &d.tables_added);
    let actual_order = order_of(actual, desired);
    for name in actual_order.iter().rev() {
        if let Some(t) = actual
            .tables
            .get(name)
            .filter(|_| !desired.tables.contains_key(name))
        {
            d.tables_removed.push(t.clone());
        }
    }
    for (name, want) in &desired.tables {
        if let Some(have) = actual.tables.get(name) {
            table::diff_table(
                want,
                &partition::as_partitioned(want, have, desired, actual),
                &mut d,
            );
            partition::diff_partitioning(want, have, &mut d);
        }
    }
    keys::rebuild_dependent_foreign_keys(actual, &mut d);
    rows::diff_rows(desired, actual, &desired_order, &actual_order, &mut d);
    program::diff_programs(desired, actual, &mut d);
    mysql::diff_mysql_programs(desired, actual, &mut d);
    d
}
