//! Enum types: created, dropped, extended in place, or recreated when labels go or move.

use super::{EnumChange, EnumChangeMethod, EnumColumnUse, EnumPosition, EnumValueAdded, SchemaDiff};
use crate::model::{DataType, EnumType, QualifiedName, Schema};

/// Adds the enum differences to `d`.
pub(super) fn diff_enums(desired: &Schema, actual: &Schema, d: &mut SchemaDiff) {
    for (name, want) in &desired.enums {
        match actual.enums.get(name) {
            None => d.enums_added.push(want.clone()),
            Some(have) if have.values != want.values => d.enums_modified.push(EnumChange {
                name: name.clone(),
                from: have.values.clone(),
                to: want.values.clone(),
                method: enum_method(name, have, want, desired, actual),
            }),
            Some(_) => {}
        }
    }
    for (name, have) in &actual.enums {
        if !desired.enums.contains_key(name) {
            d.enums_removed.push(have.clone());
        }
    }
}

fn enum_method(
    name: &QualifiedName,
    have: &EnumType,
    want: &EnumType,
    desired: &Schema,
    actual: &Schema,
) -> EnumChangeMethod {
    let kept: Vec<&String> = want.values.iter().filter(|v| have.values.contains(v)).collect();
    if kept.len() == have.values.len() && kept.iter().zip(&have.values).all(|(a, b)| *a == b) {
        let mut added = Vec::new();
        for (i, value) in want.values.iter().enumerate() {
            if have.values.contains(value) {
                continue;
            }
            let position = match i.checked_sub(1).and_then(|p| want.values.get(p)) {
                Some(prev) => EnumPosition::After(prev.clone()),
                None => match want.values.iter().find(|v| have.values.contains(v)) {
                    Some(next) => EnumPosition::Before(next.clone()),
                    None => EnumPosition::End,
                },
            };
            added.push(EnumValueAdded {
                value: value.clone(),
                position,
            });
        }
        return EnumChangeMethod::AddValues(added);
    }
    let mut uses = Vec::new();
    for (table_name, table) in &actual.tables {
        let Some(kept_table) = desired.tables.get(table_name) else {
            continue;
        };
        for column in &table.columns {
            let array = match &column.data_type {
                DataType::Enum(n) if n == name => false,
                DataType::Array(inner) if matches!(&**inner, DataType::Enum(n) if n == name) => true,
                _ => continue,
            };
            let Some(kept_column) = kept_table.column(&column.name) else {
                continue;
            };
            // A default the desired column keeps must come back; one it changes is set by the
            // column phase, which compares against the actual (now dropped) default.
            let restore_default = column.default.is_some() && kept_column.default == column.default;
            uses.push(EnumColumnUse {
                table: table_name.clone(),
                column: column.name.clone(),
                array,
                default: column.default.clone(),
                restore_default,
            });
        }
    }
    EnumChangeMethod::Recreate(uses)
}
