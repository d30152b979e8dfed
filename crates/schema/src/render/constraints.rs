//! Constraints that change on tables that exist, and the foreign keys of new tables.
//!
//! Modified foreign keys go first, since a key they reference may be dropped below; then
//! constraints, then foreign keys, so the keys they reference exist. On PostgreSQL a CHECK or
//! FOREIGN KEY added to a table that exists is added `NOT VALID` and validated after the
//! transaction ([`super::postgres::validate`]), as is a declared constraint the server holds
//! unvalidated.

use crate::diff::{Constraint, DiffCategory as C, SchemaDiff};
use crate::model::{Dialect, QualifiedName};

use super::{Forms, MysqlFlavor, Out, add_constraint, drop_constraint, postgres};

/// The constraint statements of `diff`, in the order above.
pub(super) fn adds(diff: &SchemaDiff, dialect: Dialect, flavor: MysqlFlavor, forms: Forms, out: &mut Out) {
    let add = |table: &QualifiedName, c: &Constraint, category: C, out: &mut Out| {
        let lock_safe = dialect == Dialect::Postgres
            && forms == Forms::LockSafe
            && postgres::validate::applies(c, diff.partitioned.contains(table));
        if lock_safe {
            out.push(category, postgres::validate::add_not_valid(table, c));
            out.push(category, postgres::validate::validate(table, c.name(), false));
        } else {
            out.push(category, add_constraint(dialect, table, c));
        }
    };
    for c in diff
        .constraints_modified
        .iter()
        .filter(|c| c.from.is_foreign_key())
    {
        out.push(
            C::ConstraintsModified,
            drop_constraint(dialect, flavor, &c.table, &c.from),
        );
    }
    for fk_phase in [false, true] {
        for c in diff
            .constraints_modified
            .iter()
            .filter(|c| c.to.is_foreign_key() == fk_phase)
        {
            if !c.from.is_foreign_key() {
                out.push(
                    C::ConstraintsModified,
                    drop_constraint(dialect, flavor, &c.table, &c.from),
                );
            }
            add(&c.table, &c.to, C::ConstraintsModified, out);
        }
        for c in diff
            .constraints_added
            .iter()
            .filter(|c| c.constraint.is_foreign_key() == fk_phase)
        {
            add(&c.table, &c.constraint, C::ConstraintsAdded, out);
        }
    }
    for c in &diff.constraints_validated {
        let transactional = forms == Forms::Transactional;
        out.push(
            C::ConstraintsModified,
            postgres::validate::validate(&c.table, c.constraint.name(), transactional),
        );
    }
    for t in &diff.tables_added {
        for fk in t.foreign_keys.values() {
            let c = Constraint::ForeignKey(fk.clone());
            out.push(C::TablesAdded, add_constraint(dialect, &t.name, &c));
        }
    }
}
