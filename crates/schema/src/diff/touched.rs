//! Which existing tables a diff alters, for the protected-table refusal.

use std::collections::BTreeSet;

use super::{DiffCategory, EnumChangeMethod, SchemaDiff};
use crate::model::QualifiedName;

impl SchemaDiff {
    /// Every table the diff alters or whose rows it changes, with the category that touches it
    /// (created tables are not included: creating is not altering).
    pub fn touched_tables(&self) -> Vec<(QualifiedName, DiffCategory)> {
        let mut out: BTreeSet<(QualifiedName, DiffCategory)> = BTreeSet::new();
        let mut add = |t: &QualifiedName, c: DiffCategory| {
            out.insert((t.clone(), c));
        };
        self.tables_removed
            .iter()
            .for_each(|t| add(&t.name, DiffCategory::TablesRemoved));
        for r in &self.tables_renamed {
            add(&r.from, DiffCategory::TablesRenamed);
            add(&r.to, DiffCategory::TablesRenamed);
        }
        self.columns_renamed
            .iter()
            .for_each(|c| add(&c.table, DiffCategory::ColumnsRenamed));
        self.objects_renamed.iter().for_each(|o| {
            let category = match o.kind {
                super::RenamedKind::Index => DiffCategory::IndexesModified,
                super::RenamedKind::Constraint => DiffCategory::ConstraintsModified,
            };
            add(&o.table, category);
        });
        let comments = DiffCategory::TableCommentsModified;
        self.table_comments_modified
            .iter()
            .for_each(|c| add(&c.table, comments));
        self.table_options_modified
            .iter()
            .for_each(|c| add(&c.table, DiffCategory::TableOptionsModified));
        self.columns_added
            .iter()
            .for_each(|c| add(&c.table, DiffCategory::ColumnsAdded));
        self.columns_removed
            .iter()
            .for_each(|c| add(&c.table, DiffCategory::ColumnsRemoved));
        self.columns_modified
            .iter()
            .for_each(|c| add(&c.table, DiffCategory::ColumnsModified));
        self.indexes_added
            .iter()
            .for_each(|c| add(&c.table, DiffCategory::IndexesAdded));
        self.indexes_removed
            .iter()
            .for_each(|c| add(&c.table, DiffCategory::IndexesRemoved));
        self.indexes_modified
            .iter()
            .for_each(|c| add(&c.table, DiffCategory::IndexesModified));
        self.index_comments_modified
            .iter()
            .for_each(|c| add(&c.table, DiffCategory::IndexesModified));
        let added = DiffCategory::ConstraintsAdded;
        self.constraints_added.iter().for_each(|c| add(&c.table, added));
        let removed = DiffCategory::ConstraintsRemoved;
        self.constraints_removed
            .iter()
            .for_each(|c| add(&c.table, removed));
        let modified = DiffCategory::ConstraintsModified;
        self.constraints_modified
            .iter()
            .for_each(|c| add(&c.table, modified));
        self.constraints_validated
            .iter()
            .for_each(|c| add(&c.table, modified));
        for change in &self.enums_modified {
            if let EnumChangeMethod::Recreate(uses) = &change.method {
                uses.iter()
                    .for_each(|u| add(&u.table, DiffCategory::EnumsModified));
            }
        }
        self.rows_inserted
            .iter()
            .for_each(|r| add(&r.table, DiffCategory::RowsInserted));
        self.rows_updated
            .iter()
            .for_each(|r| add(&r.table, DiffCategory::RowsUpdated));
        self.rows_deleted
            .iter()
            .for_each(|r| add(&r.table, DiffCategory::RowsDeleted));
        self.triggers_added
            .iter()
            .for_each(|t| add(&t.table, DiffCategory::TriggersAdded));
        self.triggers_removed
            .iter()
            .for_each(|t| add(&t.table, DiffCategory::TriggersRemoved));
        self.triggers_modified
            .iter()
            .for_each(|t| add(&t.to.table, DiffCategory::TriggersModified));
        super::partition::touched_tables(self, &mut add);
        out.extend(self.security_touched());
        out.into_iter().collect()
    }
}
