//! Writes a model as canonical `schema.hcl`: deterministic (maps in key order, attributes in a
//! fixed order, two-space indentation), and [`crate::read::hcl::parse`] reads it back to the same
//! model.

use std::fmt::Write as _;

use crate::model::{
    Column, DataType, DefaultValue, Dialect, Identity, Index, IndexTarget, ReferentialAction, Schema, Table,
};
use crate::types::render_type;

pub use super::words::quote;
use super::words::{is_ident, literal, object_key, part};

/// Renders `schema` as canonical `schema.hcl` for `dialect`.
pub fn to_hcl(dialect: Dialect, schema: &Schema) -> String {
    let mut out = String::new();
    let pg = dialect == Dialect::Postgres;
    if pg {
        for ns in &schema.namespaces {
            let _ = writeln!(out, "schema {} {{}}\n", quote(ns));
        }
        for ext in schema.extensions.values() {
            let _ = writeln!(out, "extension {} {{", quote(&ext.name));
            if let Some(s) = &ext.schema {
                let _ = writeln!(out, "  schema = schema{}", part(s));
            }
            if let Some(v) = &ext.version {
                let _ = writeln!(out, "  version = {}", quote(v));
            }
            out.push_str("}\n\n");
        }
        for e in schema.enums.values() {
            let _ = writeln!(out, "enum {} {{", quote(&e.name.name));
            let _ = writeln!(out, "  schema = schema{}", part(&e.name.schema));
            let values: Vec<String> = e.values.iter().map(|v| quote(v)).collect();
            let _ = writeln!(out, "  values = [{}]", values.join(", "));
            out.push_str("}\n\n");
        }
    }
    if pg {
        super::program::write_domains(&mut out, schema);
        super::sequence::write_sequences(&mut out, schema);
    }
    for table in schema.tables.values() {
        write_table(&mut out, dialect, schema, table);
    }
    super::program::write(&mut out, dialect, schema);
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

fn write_table(out: &mut String, dialect: Dialect, schema: &Schema, table: &Table) {
    let _ = writeln!(out, "table {} {{", quote(&table.name.name));
    if dialect == Dialect::Postgres {
        let _ = writeln!(out, "  schema = schema{}", part(&table.name.schema));
    }
    if let Some(c) = &table.comment {
        let _ = writeln!(out, "  comment = {}", quote(c));
    }
    if let Some(c) = &table.charset {
        let _ = writeln!(out, "  charset = {}", quote(c));
    }
    if let Some(c) = &table.collation {
        let _ = writeln!(out, "  collate = {}", quote(c));
    }
    if let Some(key) = &table.partition_by {
        let _ = writeln!(out, "  partition_by = {}", quote(key));
    }
    // A partition's columns are its parent's: the reader copies them.
    if let Some(of) = &table.partition_of {
        let _ = writeln!(out, "  partition_of = {}", quote(&of.parent.to_string()));
        let _ = writeln!(out, "  partition_bound = {}", quote(&of.bound));
    } else {
        for column in &table.columns {
            write_column(out, dialect, schema, table, column);
        }
    }
    if let Some(pk) = &table.primary_key {
        let _ = writeln!(
            out,
            "  primary_key {} {{\n    columns = {}\n  }}",
            quote(&pk.name),
            columns(&pk.columns)
        );
    }
    for u in table.uniques.values() {
        let _ = writeln!(
            out,
            "  unique {} {{\n    columns = {}\n  }}",
            quote(&u.name),
            columns(&u.columns)
        );
    }
    for index in table.indexes.values() {
        write_index(out, index, table.index_comments.get(&index.name));
    }
    for fk in table.foreign_keys.values() {
        let _ = writeln!(out, "  foreign_key {} {{", quote(&fk.name));
        let _ = writeln!(out, "    columns = {}", columns(&fk.columns));
        let refs: Vec<String> = fk
            .referenced_columns
            .iter()
            .map(|c| format!("table{}.column{}", part(&fk.referenced_table.name), part(c)))
            .collect();
        let _ = writeln!(out, "    ref_columns = [{}]", refs.join(", "));
        for (key, action) in [("on_delete", fk.on_delete), ("on_update", fk.on_update)] {
            if action != ReferentialAction::NoAction {
                let _ = writeln!(out, "    {key} = {}", action_keyword(action));
            }
        }
        if fk.options.match_full {
            out.push_str("    match = FULL\n");
        }
        if fk.options.deferrable {
            out.push_str("    deferrable = true\n");
        }
        if fk.options.initially_deferred {
            out.push_str("    initially_deferred = true\n");
        }
        out.push_str("  }\n");
    }
    for check in table.checks.values() {
        let _ = writeln!(
            out,
            "  check {} {{\n    expr = {}\n  }}",
            quote(&check.name),
            quote(&check.expression)
        );
    }
    if let Some(rows) = &table.rows {
        let _ = writeln!(out, "  data {{\n    key = {}\n    rows = [", columns(&rows.key));
        for row in &rows.rows {
            let items: Vec<String> = row
                .iter()
                .map(|(k, v)| format!("{} = {}", object_key(k), literal(v)))
                .collect();
            let _ = writeln!(out, "      {{ {} }},", items.join(", "));
        }
        out.push_str("    ]\n  }\n");
    }
    super::security::write(out, &table.security);
    out.push_str("}\n\n");
}

fn write_column(out: &mut String, dialect: Dialect, schema: &Schema, table: &Table, column: &Column) {
    let _ = writeln!(out, "  column {} {{", quote(&column.name));
    let _ = writeln!(
        out,
        "    type = {}",
        type_expr(dialect, schema, table, &column.data_type)
    );
    if column.nullable {
        out.push_str("    null = true\n");
    }
    match &column.default {
        None => {}
        Some(DefaultValue::Literal(l)) => {
            let _ = writeln!(out, "    default = {}", literal(l));
        }
        Some(DefaultValue::Expression(e)) => {
            let _ = writeln!(out, "    default = sql({})", quote(e));
        }
    }
    if column.auto_increment {
        out.push_str("    auto_increment = true\n");
    }
    if let Some(c) = &column.comment {
        let _ = writeln!(out, "    comment = {}", quote(c));
    }
    if let Some(c) = &column.charset {
        let _ = writeln!(out, "    charset = {}", quote(c));
    }
    if let Some(c) = &column.collation {
        let _ = writeln!(out, "    collate = {}", quote(c));
    }
    if let Some(identity) = column.identity {
        let generated = match identity {
            Identity::Always => "ALWAYS",
            Identity::ByDefault => "BY_DEFAULT",
        };
        let _ = writeln!(out, "    identity {{\n      generated = {generated}");
        if let Some(o) = &column.identity_options {
            let _ = writeln!(
                out,
                "      start = {}\n      increment = {}\n      min = {}\n      max = {}\n      cache = {}\n      cycle = {}",
                o.start, o.increment, o.min, o.max, o.cache, o.cycle
            );
        }
        out.push_str("    }\n");
    }
    if let Some(g) = &column.generated {
        let kind = if g.stored { "STORED" } else { "VIRTUAL" };
        let _ = writeln!(
            out,
            "    as {{\n      expr = {}\n      type = {kind}\n    }}",
            quote(&g.expression)
        );
    }
    out.push_str("  }\n");
}

fn write_index(out: &mut String, index: &Index, comment: Option<&String>) {
    let _ = writeln!(out, "  index {} {{", quote(&index.name));
    if index.unique {
        out.push_str("    unique = true\n");
    }
    let plain: Option<Vec<String>> = index
        .parts
        .iter()
        .map(|p| {
            match (
                &p.target,
                p.descending,
                p.prefix_length,
                &p.opclass,
                p.nulls_first,
            ) {
                (IndexTarget::Column(c), false, None, None, None) => Some(c.clone()),
                _ => None,
            }
        })
        .collect();
    match plain {
        Some(cols) => {
            let _ = writeln!(out, "    columns = {}", columns(&cols));
        }
        None => {
            for p in &index.parts {
                out.push_str("    on {\n");
                match &p.target {
                    IndexTarget::Column(c) => {
                        let _ = writeln!(out, "      column = column{}", part(c));
                    }
                    IndexTarget::Expression(e) => {
                        let _ = writeln!(out, "      expr = {}", quote(e));
                    }
                }
                if p.descending {
                    out.push_str("      desc = true\n");
                }
                if let Some(n) = p.prefix_length {
                    let _ = writeln!(out, "      prefix = {n}");
                }
                if let Some(o) = &p.opclass {
                    let _ = writeln!(out, "      opclass = {}", quote(o));
                }
                if let Some(first) = p.nulls_first {
                    let _ = writeln!(out, "      nulls = {}", if first { "FIRST" } else { "LAST" });
                }
                out.push_str("    }\n");
            }
        }
    }
    if !index.include.is_empty() {
        let _ = writeln!(out, "    include = {}", columns(&index.include));
    }
    if index.nulls_not_distinct {
        out.push_str("    nulls_distinct = false\n");
    }
    if !index.storage.is_empty() {
        let quoted: Vec<String> = index.storage.iter().map(|s| quote(s)).collect();
        let _ = writeln!(out, "    storage = [{}]", quoted.join(", "));
    }
    if let Some(w) = &index.predicate {
        let _ = writeln!(out, "    where = {}", quote(w));
    }
    if let Some(c) = comment {
        let _ = writeln!(out, "    comment = {}", quote(c));
    }
    if let Some(m) = &index.method {
        let _ = writeln!(out, "    type = {}", m.to_ascii_uppercase());
    }
    out.push_str("  }\n");
}

fn type_expr(dialect: Dialect, schema: &Schema, table: &Table, t: &DataType) -> String {
    if let DataType::Enum(q) = t {
        let local = q.schema == table.name.schema;
        let unique = schema.enums.keys().filter(|k| k.name == q.name).count() == 1;
        if is_ident(&q.name) && (local || unique) {
            return format!("enum.{}", q.name);
        }
    }
    let text = render_type(dialect, t);
    if is_ident(&text) && !matches!(text.as_str(), "null" | "true" | "false") {
        text
    } else {
        format!("sql({})", quote(&text))
    }
}

fn action_keyword(a: ReferentialAction) -> &'static str {
    match a {
        ReferentialAction::NoAction => "NO_ACTION",
        ReferentialAction::Restrict => "RESTRICT",
        ReferentialAction::Cascade => "CASCADE",
        ReferentialAction::SetNull => "SET_NULL",
        ReferentialAction::SetDefault => "SET_DEFAULT",
    }
}

fn columns(cols: &[String]) -> String {
    let refs: Vec<String> = cols.iter().map(|c| format!("column{}", part(c))).collect();
    format!("[{}]", refs.join(", "))
}
