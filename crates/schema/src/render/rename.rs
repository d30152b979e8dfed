//! Declared renames, first in a plan: every later statement names tables, columns, indexes and
//! constraints by their new names.

use crate::diff::{DiffCategory as C, RenamedKind, SchemaDiff};
use crate::model::{Dialect, QualifiedName};
use crate::plan::Severity;

use super::sql::Sql;
use super::{Out, stmt};

/// The rename statements of `diff`: tables, then columns, then the indexes and constraints that
/// follow their table's new name.
pub(super) fn renames(diff: &SchemaDiff, sql: Sql, out: &mut Out) {
    for r in &diff.tables_renamed {
        let s = format!(
            "ALTER TABLE {} RENAME TO {}",
            sql.qualified(&r.from),
            sql.ident(&r.to.name)
        );
        let why = "renames a table (its rows stay): clients still using the old name fail";
        out.push(C::TablesRenamed, stmt(s, Severity::Warning, why));
    }
    for r in &diff.columns_renamed {
        let s = format!(
            "ALTER TABLE {} RENAME COLUMN {} TO {}",
            sql.qualified(&r.table),
            sql.ident(&r.from),
            sql.ident(&r.to)
        );
        let why = "renames a column (its values stay): clients still using the old name fail";
        out.push(C::ColumnsRenamed, stmt(s, Severity::Warning, why));
    }
    for r in &diff.objects_renamed {
        let (from, to) = (sql.ident(&r.from), sql.ident(&r.to));
        let table = sql.qualified(&r.table);
        let (category, s) = match (sql.dialect, r.kind) {
            (Dialect::Postgres, RenamedKind::Index) => {
                let index = QualifiedName::new(r.table.schema.clone(), r.from.clone());
                (
                    C::IndexesModified,
                    format!("ALTER INDEX {} RENAME TO {to}", sql.qualified(&index)),
                )
            }
            (Dialect::Postgres, RenamedKind::Constraint) => (
                C::ConstraintsModified,
                format!("ALTER TABLE {table} RENAME CONSTRAINT {from} TO {to}"),
            ),
            // The differ renames no MySQL constraint but a UNIQUE one, which is an index there.
            (Dialect::Mysql, _) => (
                C::IndexesModified,
                format!("ALTER TABLE {table} RENAME INDEX {from} TO {to}"),
            ),
        };
        let why = "renames an index or constraint after its table or column";
        out.push(category, stmt(s, Severity::Safe, why));
    }
}
