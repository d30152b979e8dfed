//! Serial columns as `pg_dump` spells them out: `CREATE SEQUENCE t_c_seq …`,
//! `ALTER SEQUENCE t_c_seq OWNED BY t.c` and `ALTER TABLE t ALTER COLUMN c SET DEFAULT
//! nextval('t_c_seq'::regclass)`; and identities added after the table
//! (`ALTER TABLE … ADD GENERATED … AS IDENTITY`).
//!
//! A sequence is read only as the implicit sequence of such a column: owned by it, with the
//! default options, and the column's default drawing from it. The model has no standalone
//! sequence, so any other sequence is refused by name when the document ends.

use sqlparser::ast::{Expr, Ident, ObjectName, SequenceOptions, Value};

use crate::model::{DefaultValue, Dialect, Identity, QualifiedName};
use crate::names::serial_default;

use super::super::{Location, ReadError};
use super::Reader;

/// A sequence declared, waiting for its owner.
#[derive(Debug)]
pub(crate) struct PendingSequence {
    at: Location,
    /// Whether every option is the default (`AS` aside: the column's type decides).
    default_options: bool,
    owner: Option<(QualifiedName, String)>,
}

fn is_one(e: &Expr) -> bool {
    matches!(e, Expr::Value(v) if matches!(&v.value, Value::Number(n, _) if n == "1"))
}

impl Reader {
    pub(super) fn create_sequence(
        &mut self,
        name: &ObjectName,
        if_not_exists: bool,
        options: &[SequenceOptions],
        at: Location,
    ) -> Result<(), ReadError> {
        let q = self.qualified(name, &at)?;
        self.check_namespace(&q, &at)?;
        if self.sequences.contains_key(&q) {
            return if if_not_exists {
                Ok(())
            } else {
                Err(ReadError::Duplicate {
                    at,
                    what: format!("sequence {q}"),
                })
            };
        }
        let mut owner = None;
        let mut default_options = true;
        for option in options {
            match option {
                SequenceOptions::DataType(_)
                | SequenceOptions::MinValue(None)
                | SequenceOptions::MaxValue(None)
                | SequenceOptions::Cycle(false) => {}
                SequenceOptions::IncrementBy(e, _)
                | SequenceOptions::StartWith(e, _)
                | SequenceOptions::Cache(e)
                    if is_one(e) => {}
                SequenceOptions::OwnedBy(Some(target)) => {
                    owner = Some(self.owner_of(target, &at)?);
                }
                _ => default_options = false,
            }
        }
        self.sequences.insert(
            q,
            PendingSequence {
                at,
                default_options,
                owner,
            },
        );
        Ok(())
    }

    /// `table.column` (or `schema.table.column`) as a qualified table and a column name.
    fn owner_of(&self, target: &ObjectName, at: &Location) -> Result<(QualifiedName, String), ReadError> {
        let mut parts = target.0.clone();
        let column = match parts.pop().and_then(|p| p.as_ident().cloned()) {
            Some(c) => self.ident(&c),
            None => return Err(self.unsupported(at, format!("OWNED BY {target}"))),
        };
        Ok((self.qualified(&ObjectName(parts), at)?, column))
    }

    pub(super) fn owned_by(
        &mut self,
        sequence: &ObjectName,
        table: &ObjectName,
        column: &Ident,
        at: Location,
    ) -> Result<(), ReadError> {
        let q = self.qualified(sequence, &at)?;
        let owner = (self.qualified(table, &at)?, self.ident(column));
        match self.sequences.get_mut(&q) {
            Some(pending) => {
                pending.owner = Some(owner);
                Ok(())
            }
            None => Err(ReadError::BadReference {
                at,
                what: format!("sequence {q}"),
            }),
        }
    }

    pub(super) fn add_identity(
        &mut self,
        table: &ObjectName,
        column: &Ident,
        identity: Identity,
        at: Location,
    ) -> Result<(), ReadError> {
        let q = self.qualified(table, &at)?;
        let name = self.ident(column);
        let t = self.table_mut(&q, &at)?;
        match t.columns.iter_mut().find(|c| c.name == name) {
            Some(c) => {
                c.identity = Some(identity);
                c.nullable = false;
                Ok(())
            }
            None => Err(ReadError::BadReference {
                at,
                what: format!("column {name} of {q}"),
            }),
        }
    }

    /// Every sequence must be a serial column's: owned by it, default options, drawn by its
    /// default.
    pub(super) fn check_sequences(&self) -> Result<(), ReadError> {
        debug_assert!(self.sequences.is_empty() || self.dialect == Dialect::Postgres);
        for (q, pending) in &self.sequences {
            let refuse = |why: &str| {
                Err(self.unsupported(
                    &pending.at,
                    format!("CREATE SEQUENCE {q} ({why}; standalone sequences are not modelled)"),
                ))
            };
            if !pending.default_options {
                return refuse("options other than the defaults");
            }
            let Some((table, column)) = &pending.owner else {
                return refuse("owned by no column");
            };
            let draws = self
                .schema
                .tables
                .get(table)
                .and_then(|t| t.column(column))
                .is_some_and(|c| c.default == Some(DefaultValue::Expression(serial_default(q, &q.name))));
            if !draws {
                return refuse(&format!("{table}.{column} does not draw its default from it"));
            }
        }
        Ok(())
    }
}
