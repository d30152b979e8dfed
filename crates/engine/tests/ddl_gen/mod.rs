//! DDL as people write it, generated: the shapes proptest draws and shrinks, and the SQL text they
//! become. The text is written the way hand-written and dumped schemas spell things (`int` and
//! `int4`, `IN (…)` lists, casts in defaults, expression and partial indexes), never through the
//! planner's renderer, so the server's own reading of it is the reference.
//!
//! A column's name carries its type family (`i0` is always an integer, `t1` always text), so two
//! generated schemas share columns whose changes are alterations (defaults, checks, nullability,
//! spelling, indexes), not type conversions that need a `USING` the planner cannot know.

#![allow(dead_code)]

mod families;
mod objects;

use std::fmt::Write;

use proptest::prelude::*;
use ptah_engine::Dialect;

pub use families::Family;
use objects::Kind;

/// One column: a family, and selectors the family maps onto its spellings, defaults and checks.
#[derive(Debug, Clone)]
pub struct ColumnSpec {
    /// Index into the dialect's families.
    pub family: u8,
    /// Which spelling of the type.
    pub spelling: u8,
    /// Which default, if any.
    pub default: Option<u8>,
    /// `NOT NULL`.
    pub not_null: bool,
    /// Which CHECK, if any (named `<table>_<column>_check` or left unnamed).
    pub check: Option<(u8, bool)>,
}

/// One index over one column, in one of the forms of [`index_sql`].
#[derive(Debug, Clone)]
pub struct IndexSpec {
    /// Which column (modulo the table's).
    pub column: u8,
    /// Which form.
    pub form: u8,
}

/// One table: `t<k>` with an `id` key, its columns and indexes, and a foreign key to `t0`.
#[derive(Debug, Clone)]
pub struct TableSpec {
    /// The columns besides `id`.
    pub columns: Vec<ColumnSpec>,
    /// The indexes.
    pub indexes: Vec<IndexSpec>,
    /// A foreign key to `t0` (tables after the first), with its action.
    pub foreign_key: Option<u8>,
}

/// A whole schema: tables and, on PostgreSQL, the other object kinds by flag.
#[derive(Debug, Clone)]
pub struct SchemaSpec {
    /// The tables, `t0`…
    pub tables: Vec<TableSpec>,
    /// Bit flags for the other object kinds ([`objects::of`]).
    pub extras: u16,
}

fn column_spec() -> impl Strategy<Value = ColumnSpec> {
    (
        any::<u8>(),
        any::<u8>(),
        proptest::option::weighted(0.6, any::<u8>()),
        any::<bool>(),
        proptest::option::weighted(0.4, (any::<u8>(), any::<bool>())),
    )
        .prop_map(|(family, spelling, default, not_null, check)| ColumnSpec {
            family,
            spelling,
            default,
            not_null,
            check,
        })
}

fn table_spec() -> impl Strategy<Value = TableSpec> {
    (
        proptest::collection::vec(column_spec(), 1..5),
        proptest::collection::vec(
            (any::<u8>(), any::<u8>()).prop_map(|(column, form)| IndexSpec { column, form }),
            0..3,
        ),
        proptest::option::of(any::<u8>()),
    )
        .prop_map(|(columns, indexes, foreign_key)| TableSpec {
            columns,
            indexes,
            foreign_key,
        })
}

/// The strategy for a schema of one to three tables.
pub fn schema_spec() -> impl Strategy<Value = SchemaSpec> {
    (proptest::collection::vec(table_spec(), 1..4), any::<u16>())
        .prop_map(|(tables, extras)| SchemaSpec { tables, extras })
}

/// A column as the generator names and types it.
struct Col<'a> {
    name: String,
    family: &'a Family,
    spec: &'a ColumnSpec,
}

/// The table's columns, one per family and ordinal (a repeated family gets the next ordinal).
fn columns<'a>(dialect: Dialect, table: &'a TableSpec) -> Vec<Col<'a>> {
    let families = families::of(dialect);
    let mut out: Vec<Col<'a>> = Vec::new();
    for spec in &table.columns {
        let family = &families[usize::from(spec.family) % families.len()];
        let ordinal = out.iter().filter(|c| std::ptr::eq(c.family, family)).count();
        out.push(Col {
            name: format!("{}{ordinal}", family.tag),
            family,
            spec,
        });
    }
    out
}

fn pick<'a>(options: &[&'a str], selector: u8) -> Option<&'a str> {
    (!options.is_empty()).then(|| options[usize::from(selector) % options.len()])
}

/// The SQL text of `spec`, statement per line group, each ending in `;\n`.
pub fn sql(dialect: Dialect, spec: &SchemaSpec) -> String {
    let kinds: Vec<&Kind> = objects::of(dialect)
        .iter()
        .enumerate()
        .filter(|(bit, _)| spec.extras & (1 << bit) != 0)
        .map(|(_, kind)| kind)
        .collect();
    let mut out = String::new();
    for kind in &kinds {
        out.push_str(kind.before);
    }
    for (k, table) in spec.tables.iter().enumerate() {
        let extra: Vec<&str> = if k == 0 {
            kinds
                .iter()
                .flat_map(|kind| kind.columns.iter().copied())
                .collect()
        } else {
            Vec::new()
        };
        table_sql(dialect, &mut out, k, table, &extra);
    }
    for kind in &kinds {
        out.push_str(kind.after);
    }
    out
}

fn table_sql(dialect: Dialect, out: &mut String, k: usize, table: &TableSpec, extra: &[&str]) {
    let cols = columns(dialect, table);
    let mut lines = vec!["id bigint NOT NULL PRIMARY KEY".to_owned()];
    lines.extend(extra.iter().map(|l| (*l).to_owned()));
    for c in &cols {
        let ty = pick(c.family.spellings, c.spec.spelling).unwrap_or("text");
        let mut line = format!("{} {ty}", c.name);
        if let Some(d) = c.spec.default.and_then(|d| pick(c.family.defaults, d)) {
            let _ = write!(line, " DEFAULT {d}");
        }
        if c.spec.not_null {
            line.push_str(" NOT NULL");
        }
        lines.push(line);
    }
    if k > 0
        && let Some(action) = table.foreign_key
    {
        let actions = ["NO ACTION", "CASCADE", "SET NULL", "RESTRICT"];
        lines.push("parent_id bigint".to_owned());
        lines.push(format!(
            "CONSTRAINT t{k}_parent_fk FOREIGN KEY (parent_id) REFERENCES t0 (id) ON DELETE {}",
            actions[usize::from(action) % actions.len()]
        ));
    }
    for c in &cols {
        let Some((check, named)) = c.spec.check else {
            continue;
        };
        let Some(body) = pick(c.family.checks, check) else {
            continue;
        };
        let body = body.replace("{c}", &c.name);
        lines.push(if named {
            format!("CONSTRAINT t{k}_{}_ck CHECK ({body})", c.name)
        } else {
            format!("CHECK ({body})")
        });
    }
    let _ = writeln!(out, "CREATE TABLE t{k} (\n  {}\n);", lines.join(",\n  "));
    for (n, ix) in table.indexes.iter().enumerate() {
        let c = &cols[usize::from(ix.column) % cols.len()];
        let _ = writeln!(
            out,
            "{};",
            index_sql(dialect, k, n, c.name.as_str(), c.family, ix.form)
        );
    }
}

/// One index over column `c` of table `t<k>`, in form `form` (forms a family cannot take fall
/// back to a plain index).
fn index_sql(dialect: Dialect, k: usize, n: usize, c: &str, family: &Family, form: u8) -> String {
    let name = format!("t{k}_ix{n}");
    let plain = format!("CREATE INDEX {name} ON t{k} ({c})");
    let forms = if dialect == Dialect::Postgres {
        family.pg_index_forms
    } else {
        family.my_index_forms
    };
    match pick(forms, form) {
        None => plain,
        Some(f) => f
            .replace("{name}", &name)
            .replace("{t}", &format!("t{k}"))
            .replace("{c}", c),
    }
}
