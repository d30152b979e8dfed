//! Index and constraint statements, picked by dialect. Apart from the phase ordering so the
//! ordering reads as phases, and shared by the reuse and stored-index rules that need the same
//! choice.

use super::{MysqlFlavor, mysql, postgres};
use crate::diff::Constraint;
use crate::model::{Dialect, Index, QualifiedName};
use crate::plan::PlannedStatement;

pub(super) fn create_index(dialect: Dialect, table: &QualifiedName, i: &Index) -> PlannedStatement {
    match dialect {
        Dialect::Postgres => postgres::create_index(table, i),
        Dialect::Mysql => mysql::create_index(table, i),
    }
}

/// `online`: MySQL may keep writes going ([`crate::diff::SchemaDiff::online`]).
pub(super) fn drop_index(
    dialect: Dialect,
    table: &QualifiedName,
    i: &Index,
    online: bool,
) -> PlannedStatement {
    match dialect {
        Dialect::Postgres => postgres::drop_index(table, i),
        Dialect::Mysql => mysql::drop_index(table, i, online),
    }
}

pub(super) fn add_constraint(dialect: Dialect, table: &QualifiedName, c: &Constraint) -> PlannedStatement {
    match dialect {
        Dialect::Postgres => postgres::add_constraint(table, c),
        Dialect::Mysql => mysql::add_constraint(table, c),
    }
}

pub(super) fn drop_constraint(
    dialect: Dialect,
    flavor: MysqlFlavor,
    table: &QualifiedName,
    c: &Constraint,
) -> PlannedStatement {
    match dialect {
        Dialect::Postgres => postgres::drop_constraint(table, c),
        Dialect::Mysql => mysql::drop_constraint(table, c, flavor),
    }
}
