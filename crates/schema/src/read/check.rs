//! Checks both readers run once a whole document is read: references must resolve.

use crate::model::{QualifiedName, Schema};

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
