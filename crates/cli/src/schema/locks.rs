//! What each planned statement does to the writers of a live table: the lock it takes
//! (`ptah_migrationlint::lock` on PostgreSQL, the algorithm `ptah_migrationlint::online` reads on
//! MySQL/MariaDB) and the table's estimated rows. A statement that
//! blocks the writers of a table above the threshold is at least a warning, so that a plan which
//! would stall a busy table is never applied unseen under `policy.apply: BySeverity`.

use std::collections::BTreeMap;

use ptah_migrationlint::{lock, online};
use ptah_schema::{Dialect, Plan, QualifiedName, Schema, Severity, StatementLock};

/// The default threshold of `--lock-warning-rows`.
pub const LOCK_WARNING_ROWS: u64 = 100_000;

/// Names the locks `plan`'s statements take on tables of `live`, with `sizes`; raises a safe
/// statement that blocks the writers of a table of at least `threshold` rows to a warning.
pub(crate) fn annotate(plan: &mut Plan, live: &Schema, sizes: &BTreeMap<QualifiedName, u64>, threshold: u64) {
    let dialect = plan.dialect;
    for (index, statement) in plan.statements.iter_mut().enumerate() {
        let (Some((taken, blocks_writes)), Some((schema, table))) = (
            held(&statement.sql, dialect),
            lock::table(&statement.sql, dialect),
        ) else {
            continue;
        };
        // A table the plan creates holds no rows and no writers yet.
        let Some(name) = live
            .tables
            .keys()
            .find(|k| k.name == table && (schema.is_empty() || k.schema == schema))
        else {
            continue;
        };
        let rows = sizes.get(name).copied();
        let shown = if name.schema.is_empty() {
            name.name.clone()
        } else {
            format!("{}.{}", name.schema, name.name)
        };
        if blocks_writes && rows.is_some_and(|r| r >= threshold) && statement.severity == Severity::Safe {
            statement.severity = Severity::Warning;
            statement.reason = format!(
                "{}; takes {taken} on {shown} (about {} rows): its writers wait until it ends",
                statement.reason,
                rows.unwrap_or_default()
            );
        }
        plan.locks.push(StatementLock {
            statement: index,
            lock: taken,
            blocks_writes,
            table: shown,
            estimated_rows: rows,
        });
    }
    plan.destructive = plan
        .statements
        .iter()
        .any(|s| s.severity == Severity::Destructive);
}

/// The lock `sql` takes (PostgreSQL's mode, or how MySQL/MariaDB changes the table) and whether
/// the table's writers wait for it.
fn held(sql: &str, dialect: Dialect) -> Option<(String, bool)> {
    match dialect {
        Dialect::Postgres => lock::taken(sql, dialect).map(|l| (format!("{l:?}"), l.blocks_writes())),
        Dialect::Mysql => online::taken(sql).map(|o| (format!("{o:?}"), o.blocks_writes())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptah_schema::{PlanOptions, read::sql};

    fn planned(before: &str, after: &str) -> (Plan, Schema) {
        let read = |text: &str| sql::parse(Dialect::Postgres, "s.sql", text).expect("reads");
        let live = read(before);
        let plan = ptah_schema::plan(&read(after), &live, Dialect::Postgres, &PlanOptions::default())
            .expect("plans");
        (plan, live)
    }

    #[test]
    fn a_unique_index_on_a_large_table_is_a_warning_and_a_concurrent_one_is_not() {
        let before = "CREATE TABLE orders (id int PRIMARY KEY, sku text, note text);\n";
        let after = "CREATE TABLE orders (id int PRIMARY KEY, sku text, note text);\n\
                     CREATE UNIQUE INDEX orders_sku ON orders (sku);\n\
                     CREATE INDEX orders_note ON orders (note);\n\
                     CREATE TABLE items (id int PRIMARY KEY, sku text);\n\
                     CREATE INDEX items_sku ON items (sku);\n";
        let name = QualifiedName::new("public", "orders");
        for rows in [2_000_000, 10] {
            let (mut plan, live) = planned(before, after);
            annotate(
                &mut plan,
                &live,
                &BTreeMap::from([(name.clone(), rows)]),
                LOCK_WARNING_ROWS,
            );
            assert_eq!(plan.locks.len(), 2, "only the existing table: {:?}", plan.locks);
            let lock_of = |index: &str| {
                plan.locks
                    .iter()
                    .find(|l| plan.statements[l.statement].sql.contains(index))
                    .expect("a lock")
            };
            let unique = lock_of("orders_sku");
            assert_eq!((unique.lock.as_str(), unique.blocks_writes), ("ShareLock", true));
            assert_eq!(
                (unique.table.as_str(), unique.estimated_rows),
                ("public.orders", Some(rows))
            );
            let concurrent = lock_of("orders_note");
            assert_eq!(
                (concurrent.lock.as_str(), concurrent.blocks_writes),
                ("ShareUpdateExclusiveLock", false)
            );
            let st = &plan.statements[concurrent.statement];
            assert_eq!(st.severity, Severity::Safe, "{rows} rows: {}", st.reason);
        }
    }

    #[test]
    fn without_an_estimate_the_lock_is_named_and_the_severity_kept() {
        let (mut plan, live) = planned(
            "CREATE TABLE t (id int PRIMARY KEY);\n",
            "CREATE TABLE t (id int PRIMARY KEY, note text);\n",
        );
        annotate(&mut plan, &live, &BTreeMap::new(), 0);
        assert_eq!(plan.locks.len(), 1);
        assert_eq!(plan.locks[0].lock, "AccessExclusiveLock");
        assert_eq!(plan.locks[0].estimated_rows, None);
        assert_eq!(plan.statements[0].severity, Severity::Safe);
    }

    #[test]
    fn on_mysql_the_algorithm_names_the_cost_and_a_copy_of_a_large_table_is_a_warning() {
        let read = |text: &str| sql::parse(Dialect::Mysql, "s.sql", text).expect("reads");
        let before = "CREATE TABLE parent (id int PRIMARY KEY);\n\
                      CREATE TABLE orders (id int PRIMARY KEY, parent_id int, sku varchar(20));\n\
                      CREATE TABLE docs (id int PRIMARY KEY, body text);\n";
        let after = "CREATE TABLE parent (id int PRIMARY KEY);\n\
                     CREATE TABLE orders (id int PRIMARY KEY, parent_id int, sku varchar(20), note text,\n\
                       CONSTRAINT orders_parent FOREIGN KEY (parent_id) REFERENCES parent (id));\n\
                     CREATE INDEX orders_sku ON orders (sku);\n\
                     CREATE TABLE docs (id int PRIMARY KEY, body text, FULLTEXT KEY docs_body (body));\n";
        let live = read(before);
        let mut plan =
            ptah_schema::plan(&read(after), &live, Dialect::Mysql, &PlanOptions::default()).expect("plans");
        let sizes = BTreeMap::from([
            (QualifiedName::new("", "orders"), 500_000),
            (QualifiedName::new("", "docs"), 500_000),
        ]);
        annotate(&mut plan, &live, &sizes, LOCK_WARNING_ROWS);
        let lock_of = |needle: &str| {
            let l = plan
                .locks
                .iter()
                .find(|l| plan.statements[l.statement].sql.contains(needle))
                .unwrap_or_else(|| panic!("a lock for {needle}: {:?} {:?}", plan.locks, plan.statements));
            (
                l.lock.as_str(),
                l.blocks_writes,
                l.table.as_str(),
                l.estimated_rows,
                l.statement,
            )
        };
        let (lock, blocks, table, rows, column) = lock_of("ADD COLUMN");
        assert_eq!(
            (lock, blocks, table, rows),
            ("Instant", false, "orders", Some(500_000))
        );
        assert_eq!(plan.statements[column].severity, Severity::Safe);
        let (lock, blocks, _, _, index) = lock_of("orders_sku");
        assert_eq!((lock, blocks), ("InplaceLockNone", false));
        assert_eq!(plan.statements[index].severity, Severity::Safe);
        let (lock, blocks, _, _, _) = lock_of("FOREIGN KEY");
        assert_eq!((lock, blocks), ("ServerDefault", true));
        // A full-text index is built only under a lock: safe by itself, a warning on 500,000 rows.
        let (lock, blocks, _, _, fulltext) = lock_of("docs_body");
        assert_eq!((lock, blocks), ("ServerDefault", true));
        let st = &plan.statements[fulltext];
        assert_eq!(st.severity, Severity::Warning, "{}", st.reason);
        assert!(
            st.reason
                .contains("takes ServerDefault on docs (about 500000 rows)"),
            "{}",
            st.reason
        );
    }
}
