//! `COMMENT ON` a table, column, view, domain, sequence or index. Apart from the statement
//! dispatch because each object kind finds its target differently, and several delegate to the
//! modules that read those objects.

use sqlparser::ast::{CommentObject, ObjectName, ObjectNamePart};

use super::Reader;
use crate::model::Dialect;
use crate::read::{Location, ReadError};

impl Reader {
    pub(super) fn comment(
        &mut self,
        object_type: CommentObject,
        object_name: &ObjectName,
        comment: Option<String>,
        at: Location,
    ) -> Result<(), ReadError> {
        match object_type {
            CommentObject::Table => {
                let q = self.qualified(object_name, &at)?;
                let table = self.table_mut(&q, &at)?;
                table.comment = comment;
                Ok(())
            }
            CommentObject::Column => {
                let mut parts = object_name.0.clone();
                let column = match parts.pop() {
                    Some(ObjectNamePart::Identifier(c)) => self.ident(&c),
                    _ => return Err(self.unsupported(&at, format!("column name {object_name}"))),
                };
                let q = self.qualified(&ObjectName(parts), &at)?;
                let table = self.table_mut(&q, &at)?;
                match table.columns.iter_mut().find(|c| c.name == column) {
                    Some(c) => {
                        c.comment = comment;
                        Ok(())
                    }
                    None => Err(ReadError::BadReference {
                        at,
                        what: format!("column {column} of {q}"),
                    }),
                }
            }
            CommentObject::View => self.view_comment(object_name, comment, false, at),
            CommentObject::Domain => self.domain_comment(object_name, comment, at),
            // `COMMENT ON TYPE` names a domain too (pg_dump writes DOMAIN, people may not).
            CommentObject::Type if self.dialect == Dialect::Postgres => {
                let q = self.qualified(object_name, &at)?;
                if self.schema.domains.contains_key(&q) {
                    self.domain_comment(object_name, comment, at)
                } else if self.schema.enums.contains_key(&q) {
                    Err(self.unsupported(
                        &at,
                        format!("COMMENT ON TYPE {q} (comments on enum types are not modelled)"),
                    ))
                } else {
                    Err(ReadError::BadReference {
                        at,
                        what: format!("type {q}"),
                    })
                }
            }
            CommentObject::Sequence => self.sequence_comment(object_name, comment, at),
            CommentObject::Index if self.dialect == Dialect::Postgres => {
                self.index_comment(object_name, comment, at)
            }
            CommentObject::MaterializedView => self.view_comment(object_name, comment, true, at),
            other => Err(self.unsupported(&at, format!("COMMENT ON {other}"))),
        }
    }
}
