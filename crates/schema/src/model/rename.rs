//! Declared rename hints: a table or column that was called something else before.
//!
//! A hint is part of the desired document, never of a live schema. It only changes what a plan
//! does when the live schema still has the old object and not the new one; once the rename has
//! been applied it is stale and the planner ignores it (with a notice).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::{QualifiedName, Table};

/// Every rename hint of a document, in the order they were declared.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RenameHints {
    /// Tables renamed inside their schema.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<TableRename>,
    /// Columns renamed inside their table (named by the table's declared name).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<ColumnRename>,
}

impl RenameHints {
    /// Whether the document declares no rename.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty() && self.columns.is_empty()
    }

    /// The name `table` had before, when a hint declares one.
    pub fn table_from(&self, table: &QualifiedName) -> Option<&str> {
        self.tables
            .iter()
            .find(|r| &r.table == table)
            .map(|r| r.from.as_str())
    }
}

/// `table` was called `from` (in the same schema).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableRename {
    /// The declared (new) name.
    pub table: QualifiedName,
    /// The old name, in the same schema.
    pub from: String,
}

/// Column `column` of `table` was called `from`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnRename {
    /// The table, by its declared name.
    pub table: QualifiedName,
    /// The declared (new) column name.
    pub column: String,
    /// The old column name.
    pub from: String,
}

impl RenameHints {
    /// Why the hints cannot describe one set of renames of `tables` (the document's), if they
    /// cannot: an object renamed from its own name, two objects renamed from one, or an old name
    /// the document still declares.
    pub fn conflict(&self, tables: &BTreeMap<QualifiedName, Table>) -> Option<String> {
        let mut seen = BTreeSet::new();
        for r in &self.tables {
            let old = QualifiedName::new(r.table.schema.clone(), r.from.clone());
            if r.from.is_empty() || old == r.table {
                return Some(format!("table {}: renamed_from must name its old name", r.table));
            }
            if !seen.insert(old.clone()) {
                return Some(format!("two tables are renamed from {old}"));
            }
            if tables.contains_key(&old) {
                return Some(format!(
                    "table {} is renamed from {old}, which the document also declares",
                    r.table
                ));
            }
        }
        let mut seen = BTreeSet::new();
        for r in &self.columns {
            let owner = format!("column {} of {}", r.column, r.table);
            if r.from.is_empty() || r.from == r.column {
                return Some(format!("{owner}: renamed_from must name its old name"));
            }
            if !seen.insert((r.table.clone(), r.from.clone())) {
                return Some(format!("two columns of {} are renamed from {}", r.table, r.from));
            }
            if tables.get(&r.table).and_then(|t| t.column(&r.from)).is_some() {
                return Some(format!(
                    "{owner} is renamed from {}, which the table also declares",
                    r.from
                ));
            }
        }
        None
    }
}
