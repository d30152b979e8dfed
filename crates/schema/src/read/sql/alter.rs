//! `ALTER TABLE` as documents and dumps use it (constraints added and defaults set after the
//! table), and the `DROP … IF EXISTS` a dump writes before each `CREATE`.

use sqlparser::ast::{AlterColumnOperation, AlterTable, AlterTableOperation, ObjectName, ObjectType};

use crate::normalize::default_value;

use super::super::{IgnoreReason, Location, ReadError};
use super::Reader;
use super::text::first_words;

impl Reader {
    pub(super) fn alter_table(&mut self, alter: AlterTable, at: Location) -> Result<(), ReadError> {
        let table = self.qualified(&alter.name, &at)?;
        // `ONLY` keeps a change off a table's partitions and children; the model has neither.
        if alter.if_exists || alter.on_cluster.is_some() {
            return Err(self.unsupported(&at, "ALTER TABLE IF EXISTS / ON CLUSTER"));
        }
        for op in alter.operations {
            match op {
                AlterTableOperation::AddConstraint {
                    constraint,
                    not_valid: false,
                } => {
                    self.table_constraint(&table, constraint, &at)?;
                }
                AlterTableOperation::AlterColumn {
                    column_name,
                    op: AlterColumnOperation::SetDefault { value },
                } => {
                    let name = self.ident(&column_name);
                    let dialect = self.dialect;
                    let t = self.table_mut(&table, &at)?;
                    let Some(column) = t.columns.iter_mut().find(|c| c.name == name) else {
                        return Err(ReadError::BadReference {
                            at,
                            what: format!("column {name} of {table}"),
                        });
                    };
                    column.default = Some(default_value(dialect, &value.to_string()));
                }
                other => {
                    return Err(
                        self.unsupported(&at, format!("ALTER TABLE {}", first_words(&other.to_string(), 2)))
                    );
                }
            }
        }
        Ok(())
    }

    /// A drop of something not declared yet is what a dump writes before creating it; a drop
    /// of a declared table is refused, since a document declares and never drops; a drop of a
    /// declared view removes it (dumps replace their placeholder views so).
    pub(super) fn drop_if_exists(
        &mut self,
        object_type: ObjectType,
        names: &[ObjectName],
        at: Location,
    ) -> Result<(), ReadError> {
        let mut undeclared = Vec::new();
        for name in names {
            let q = self.qualified(name, &at)?;
            // A dump replaces its placeholder views this way: the later definition stands.
            if object_type == ObjectType::View && self.schema.views.remove(&q).is_some() {
                continue;
            }
            undeclared.push(name);
            if self.schema.tables.contains_key(&q) {
                return Err(self.unsupported(
                    &at,
                    format!("DROP {object_type} of {q}, declared before it (a document declares, it does not drop)"),
                ));
            }
        }
        if undeclared.is_empty() {
            return Ok(());
        }
        let listed: Vec<String> = undeclared.iter().map(ToString::to_string).collect();
        let text = format!("DROP {object_type} IF EXISTS {}", listed.join(", "));
        self.ignore(at, IgnoreReason::UndeclaredDrop, &text);
        Ok(())
    }
}
