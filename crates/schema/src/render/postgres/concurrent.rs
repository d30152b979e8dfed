//! Index builds on tables that already exist, without blocking their writers (issue 37):
//! `CREATE INDEX CONCURRENTLY` takes a `SHARE UPDATE EXCLUSIVE` lock where the plain form takes
//! `SHARE`, which makes every write wait for the whole build. It cannot run in a transaction, so
//! the executor runs it alone, after the plan's transaction, and drops the invalid index an
//! interrupted build leaves behind before it builds again (`ptah_engine` apply). An index being
//! redefined loses its old definition inside the transaction (a plain `DROP INDEX`, brief).
//!
//! Only non-unique indexes of tables that are not partitioned take this form: a foreign key in the
//! same plan may need a unique index inside the transaction, and PostgreSQL builds no index of a
//! partitioned table concurrently.

use crate::model::{Index, QualifiedName};
use crate::plan::PlannedStatement;

/// Whether an index of `table` is changed with the concurrent forms.
pub(in crate::render) fn applies(i: &Index, partitioned: bool) -> bool {
    !i.unique && !partitioned
}

/// `CREATE INDEX CONCURRENTLY`, outside the transaction.
pub(in crate::render) fn create_index(table: &QualifiedName, i: &Index) -> PlannedStatement {
    let plain = super::create_index(table, i);
    PlannedStatement {
        sql: plain
            .sql
            .replacen("CREATE INDEX ", "CREATE INDEX CONCURRENTLY ", 1),
        severity: plain.severity,
        reason: "creates an index without blocking writes (CONCURRENTLY, outside the transaction)".to_owned(),
        transactional: false,
    }
}
