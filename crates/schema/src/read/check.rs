//! Checks both readers run once a whole document is read: references must resolve, and forms a
//! catalog can only report one way are rewritten into that way.

use crate::model::{
    DataType, DefaultValue, Dialect, IndexTarget, Literal, QualifiedName, Schema, UniqueConstraint,
};
use crate::normalize::{canonical_number, mysql_action, temporal_default};

use super::{Location, ReadError};

/// A foreign key to check, by table and constraint name, with where it was declared.
pub(crate) struct PendingForeignKey {
    /// The referencing table.
    pub table: QualifiedName,
    /// The constraint's name.
    pub name: String,
    /// Where it was declared.
    pub at: Location,
}

/// Fills omitted referenced columns with the target's primary key and checks every foreign key
/// points at an existing table and columns, with as many columns on both sides.
pub(crate) fn foreign_keys(schema: &mut Schema, pending: &[PendingForeignKey]) -> Result<(), ReadError> {
    for p in pending {
        let Some(fk) = schema
            .tables
            .get(&p.table)
            .and_then(|t| t.foreign_keys.get(&p.name))
            .cloned()
        else {
            continue;
        };
        let bad = |what: String| ReadError::BadReference {
            at: p.at.clone(),
            what,
        };
        let Some(target) = schema.tables.get(&fk.referenced_table) else {
            return Err(bad(format!("referenced table {}", fk.referenced_table)));
        };
        let mut referenced = fk.referenced_columns.clone();
        if referenced.is_empty() {
            match &target.primary_key {
                Some(pk) => referenced = pk.columns.clone(),
                None => return Err(bad(format!("a primary key on {}", fk.referenced_table))),
            }
        }
        if let Some(missing) = referenced.iter().find(|c| target.column(c).is_none()) {
            return Err(bad(format!("column {missing} of {}", fk.referenced_table)));
        }
        if referenced.len() != fk.columns.len() {
            return Err(ReadError::Invalid {
                at: p.at.clone(),
                message: format!(
                    "foreign key {} has {} columns but references {}",
                    fk.name,
                    fk.columns.len(),
                    referenced.len()
                ),
            });
        }
        if let Some(fk) = schema
            .tables
            .get_mut(&p.table)
            .and_then(|t| t.foreign_keys.get_mut(&p.name))
        {
            fk.referenced_columns = referenced;
        }
    }
    Ok(())
}

/// Rewrites what a catalog can only report one way into that form, so a document and the live
/// database compare equal: `DEFAULT NULL` is no default; a quoted number as the default of a
/// numeric column is that number (`int DEFAULT '0'` reads back as `0`); on MySQL a UNIQUE index
/// on whole ascending columns is a UNIQUE constraint (the server cannot tell them apart), and a
/// foreign key's NO ACTION is RESTRICT ([`mysql_action`]).
pub(crate) fn canonical_forms(dialect: Dialect, schema: &mut Schema) {
    for table in schema.tables.values_mut() {
        for column in &mut table.columns {
            column.default = match column.default.take() {
                Some(DefaultValue::Literal(Literal::Null)) => None,
                Some(DefaultValue::Literal(Literal::String(s))) if numeric(&column.data_type) => {
                    let number = canonical_number(&s);
                    let is_number = number
                        .strip_prefix('-')
                        .unwrap_or(&number)
                        .chars()
                        .all(|c| c.is_ascii_digit() || c == '.')
                        && number.chars().any(|c| c.is_ascii_digit());
                    Some(DefaultValue::Literal(if is_number {
                        Literal::Number(number)
                    } else {
                        Literal::String(s)
                    }))
                }
                other => other,
            }
            .map(|d| temporal_default(&column.data_type, d));
        }
        if dialect != Dialect::Mysql {
            continue;
        }
        for fk in table.foreign_keys.values_mut() {
            fk.on_delete = mysql_action(fk.on_delete);
            fk.on_update = mysql_action(fk.on_update);
        }
        let as_unique: Vec<String> = table
            .indexes
            .values()
            .filter(|i| i.unique && i.predicate.is_none() && i.method.as_deref().is_none_or(|m| m == "btree"))
            // A commented key stays an index, as the inspector reads it (its comment is the index's).
            .filter(|i| !table.index_comments.contains_key(&i.name))
            .filter(|i| {
                i.parts.iter().all(|p| {
                    matches!(p.target, IndexTarget::Column(_)) && !p.descending && p.prefix_length.is_none()
                })
            })
            .map(|i| i.name.clone())
            .collect();
        for name in as_unique {
            if let Some(index) = table.indexes.remove(&name) {
                let columns = index
                    .parts
                    .into_iter()
                    .filter_map(|p| match p.target {
                        IndexTarget::Column(c) => Some(c),
                        IndexTarget::Expression(_) => None,
                    })
                    .collect();
                table
                    .uniques
                    .insert(name.clone(), UniqueConstraint { name, columns });
            }
        }
    }
}

fn numeric(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Integer { .. } | DataType::Decimal { .. } | DataType::Float32 | DataType::Float64
    )
}

/// Refuses rename hints that cannot describe one set of renames of the document's tables
/// ([`crate::model::RenameHints::conflict`]), and CHECK constraints named with the planner's
/// reserved prefix; the message names the objects.
pub(crate) fn renames(schema: &Schema, file: &str) -> Result<(), ReadError> {
    // The plan's own helper checks carry a reserved prefix; a declared one would be dropped as such.
    let reserved = schema.tables.values().find_map(|t| {
        t.checks
            .keys()
            .find(|c| crate::names::is_not_null_check(c))
            .map(|c| {
                format!(
                    "constraint {c} of {}: the prefix {} is reserved",
                    t.name,
                    crate::names::NOT_NULL_CHECK_PREFIX
                )
            })
    });
    match reserved.or_else(|| schema.renames.conflict(&schema.tables)) {
        Some(message) => Err(ReadError::Invalid {
            at: Location {
                file: file.to_owned(),
                line: 1,
                column: 1,
            },
            message,
        }),
        None => Ok(()),
    }
}
