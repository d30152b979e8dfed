//! PostgreSQL enum types: create, drop, and the rename-recreate sequence a removed or moved label
//! needs. Apart from the table statements because that sequence touches every column using the
//! type and carries its own naming rule for the type set aside.

use super::{SQL, alter_column};
use crate::diff::{EnumChange, EnumChangeMethod, EnumPosition};
use crate::model::{EnumType, QualifiedName};
use crate::plan::{PlannedStatement, Severity};
use crate::render::stmt;

/// The suffix of an enum type renamed out of the way while it is recreated.
const OLD_SUFFIX: &str = "__ptah_old";

/// PostgreSQL's identifier limit, in bytes.
const MAX_IDENT_BYTES: usize = 63;

fn enum_labels(values: &[String]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| SQL.string(v)).collect();
    quoted.join(", ")
}

pub(in crate::render) fn create_enum(e: &EnumType) -> PlannedStatement {
    let sql = format!(
        "CREATE TYPE {} AS ENUM ({})",
        SQL.qualified(&e.name),
        enum_labels(&e.values)
    );
    stmt(sql, Severity::Safe, "creates an enum type")
}

pub(in crate::render) fn drop_enum(e: &EnumType) -> PlannedStatement {
    let sql = format!("DROP TYPE {}", SQL.qualified(&e.name));
    stmt(sql, Severity::Destructive, "drops an enum type")
}

/// `ADD VALUE` per new label, or the rename-recreate sequence when labels go or move.
pub(in crate::render) fn change_enum(change: &EnumChange) -> Vec<PlannedStatement> {
    let name = SQL.qualified(&change.name);
    let uses = match &change.method {
        EnumChangeMethod::AddValues(added) => {
            return added
                .iter()
                .map(|a| {
                    let mut sql = format!("ALTER TYPE {name} ADD VALUE {}", SQL.string(&a.value));
                    match &a.position {
                        EnumPosition::End => {}
                        EnumPosition::Before(v) => sql.push_str(&format!(" BEFORE {}", SQL.string(v))),
                        EnumPosition::After(v) => sql.push_str(&format!(" AFTER {}", SQL.string(v))),
                    }
                    stmt(sql, Severity::Warning, "adds an enum label")
                })
                .collect();
        }
        EnumChangeMethod::Recreate(uses) => uses,
    };
    let removes = change.from.iter().any(|v| !change.to.contains(v));
    let (convert_severity, why) = if removes {
        (
            Severity::Destructive,
            "enum label removal: rows holding a removed label fail the conversion",
        )
    } else {
        (
            Severity::Warning,
            "enum labels reordered: the column is converted to the recreated type",
        )
    };
    let old_name = QualifiedName::new(change.name.schema.clone(), old_type_name(&change.name.name));
    let old = SQL.qualified(&old_name);
    let mut out = Vec::new();
    for u in uses.iter().filter(|u| u.default.is_some()) {
        let sql = format!("{} DROP DEFAULT", alter_column(&u.table, &u.column));
        out.push(stmt(
            sql,
            Severity::Warning,
            "drops a default while its enum type is recreated",
        ));
    }
    let rename = format!("ALTER TYPE {name} RENAME TO {}", SQL.ident(&old_name.name));
    out.push(stmt(
        rename,
        Severity::Warning,
        "renames the enum type out of the way to recreate it",
    ));
    out.push(create_enum(&EnumType {
        name: change.name.clone(),
        values: change.to.clone(),
    }));
    for u in uses {
        let col = SQL.ident(&u.column);
        let (via, target) = if u.array {
            ("text[]", format!("{name}[]"))
        } else {
            ("text", name.clone())
        };
        let sql = format!(
            "{} TYPE {target} USING {col}::{via}::{target}",
            alter_column(&u.table, &u.column)
        );
        out.push(stmt(sql, convert_severity, why));
    }
    for u in uses.iter().filter(|u| u.restore_default) {
        if let Some(d) = &u.default {
            let sql = format!(
                "{} SET DEFAULT {}",
                alter_column(&u.table, &u.column),
                SQL.default(d)
            );
            out.push(stmt(
                sql,
                Severity::Safe,
                "restores the default after the enum conversion",
            ));
        }
    }
    out.push(stmt(
        format!("DROP TYPE {old}"),
        Severity::Destructive,
        "drops the replaced enum type",
    ));
    out
}

/// `<name>__ptah_old`, shortened on a character boundary to fit the identifier limit.
fn old_type_name(name: &str) -> String {
    let mut base = name;
    while base.len() + OLD_SUFFIX.len() > MAX_IDENT_BYTES {
        let mut cut = base.len() - 1;
        while !base.is_char_boundary(cut) {
            cut -= 1;
        }
        base = &base[..cut];
    }
    format!("{base}{OLD_SUFFIX}")
}
