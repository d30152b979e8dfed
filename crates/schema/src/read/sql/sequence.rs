//! Sequences as `pg_dump` spells them out: `CREATE SEQUENCE s …`, `ALTER SEQUENCE s OWNED BY
//! t.c`, `ALTER TABLE t ALTER COLUMN c SET DEFAULT nextval('s'::regclass)` and `COMMENT ON
//! SEQUENCE`; and identities added after the table (`ALTER TABLE … ADD GENERATED … AS IDENTITY`).
//!
//! When the document ends, a sequence that is exactly a serial column's implicit one (owned by
//! it, the default options, drawn by its default, no comment) folds into that column, which reads
//! as a serial column; every other sequence is a [`crate::model::Sequence`] of its own.

use sqlparser::ast::{DataType as SqlType, Expr, Ident, ObjectName, SequenceOptions};

use crate::model::{
    DataType, DefaultValue, Dialect, Identity, IdentityOptions, QualifiedName, SequenceOptions as Options,
    SequenceOwner, SequenceType,
};
use crate::names::serial_default;

use super::super::{Location, ReadError};
use super::Reader;

/// A sequence declared, waiting for the end of the document to know whether it is a serial's.
#[derive(Debug)]
pub(crate) struct PendingSequence {
    at: Location,
    options: Options,
    owner: Option<(QualifiedName, String)>,
    comment: Option<String>,
}

/// A whole number written as an option's value (`-1`, `1000`).
fn number(e: &Expr) -> Option<i64> {
    e.to_string().replace(' ', "").parse().ok()
}

impl Reader {
    /// An identity's `(START WITH … INCREMENT BY …)`, resolved for the column's type.
    pub(super) fn identity_options(
        &self,
        column_type: &DataType,
        options: &[SequenceOptions],
        at: &Location,
    ) -> Result<Option<IdentityOptions>, ReadError> {
        let mut written = Options::default();
        for option in options {
            let value = |e: &Expr| {
                number(e).ok_or_else(|| self.unsupported(at, format!("identity option value {e}")))
            };
            match option {
                SequenceOptions::IncrementBy(e, _) => written.increment = Some(value(e)?),
                SequenceOptions::StartWith(e, _) => written.start = Some(value(e)?),
                SequenceOptions::Cache(e) => written.cache = Some(value(e)?),
                SequenceOptions::MinValue(e) => written.min = e.as_ref().map(value).transpose()?,
                SequenceOptions::MaxValue(e) => written.max = e.as_ref().map(value).transpose()?,
                SequenceOptions::Cycle(no) => written.cycle = !*no,
                other => return Err(self.unsupported(at, format!("identity option {other}"))),
            }
        }
        self.resolve_identity(column_type, &written, at)
    }

    /// Options as written, resolved for an identity over `column_type`.
    pub(super) fn resolve_identity(
        &self,
        column_type: &DataType,
        written: &Options,
        at: &Location,
    ) -> Result<Option<IdentityOptions>, ReadError> {
        if *written == Options::default() {
            return Ok(None);
        }
        if written.increment == Some(0) {
            return Err(self.unsupported(at, "an identity's INCREMENT BY 0"));
        }
        let kind = column_type
            .sequence_type()
            .ok_or_else(|| self.unsupported(at, format!("an identity over {column_type:?}")))?;
        Ok(IdentityOptions::resolve(written, kind))
    }

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
        let mut parsed = Options::default();
        for option in options {
            let value = |e: &Expr| {
                number(e).ok_or_else(|| self.unsupported(&at, format!("sequence option value {e} of {q}")))
            };
            match option {
                SequenceOptions::DataType(t) => {
                    let named = match t {
                        SqlType::SmallInt(_) | SqlType::Int2(_) => Some(SequenceType::Smallint),
                        SqlType::Int(_) | SqlType::Integer(_) | SqlType::Int4(_) => {
                            Some(SequenceType::Integer)
                        }
                        SqlType::BigInt(_) | SqlType::Int8(_) => Some(SequenceType::Bigint),
                        other => SequenceType::parse(&other.to_string()),
                    };
                    parsed.data_type =
                        Some(named.ok_or_else(|| self.unsupported(&at, format!("sequence type {t}")))?);
                }
                SequenceOptions::IncrementBy(e, _) => parsed.increment = Some(value(e)?),
                SequenceOptions::StartWith(e, _) => parsed.start = Some(value(e)?),
                SequenceOptions::Cache(e) => parsed.cache = Some(value(e)?),
                SequenceOptions::MinValue(e) => parsed.min = e.as_ref().map(value).transpose()?,
                SequenceOptions::MaxValue(e) => parsed.max = e.as_ref().map(value).transpose()?,
                SequenceOptions::Cycle(no) => parsed.cycle = !*no,
                SequenceOptions::OwnedBy(Some(target)) => owner = Some(self.owner_of(target, &at)?),
                SequenceOptions::OwnedBy(None) => owner = None,
            }
        }
        if parsed.increment == Some(0) {
            return Err(self.unsupported(&at, format!("INCREMENT BY 0 of sequence {q}")));
        }
        self.sequences.insert(
            q,
            PendingSequence {
                at,
                options: parsed,
                owner,
                comment: None,
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
        written: &Options,
        at: Location,
    ) -> Result<(), ReadError> {
        let q = self.qualified(table, &at)?;
        let name = self.ident(column);
        let data_type = self
            .table_mut(&q, &at)?
            .column(&name)
            .map(|c| c.data_type.clone());
        let options = match &data_type {
            Some(t) => self.resolve_identity(t, written, &at)?,
            None => None,
        };
        let t = self.table_mut(&q, &at)?;
        match t.columns.iter_mut().find(|c| c.name == name) {
            Some(c) => {
                c.identity = Some(identity);
                c.identity_options = options;
                c.nullable = false;
                Ok(())
            }
            None => Err(ReadError::BadReference {
                at,
                what: format!("column {name} of {q}"),
            }),
        }
    }

    /// `COMMENT ON SEQUENCE`.
    pub(super) fn sequence_comment(
        &mut self,
        name: &ObjectName,
        comment: Option<String>,
        at: Location,
    ) -> Result<(), ReadError> {
        let q = self.qualified(name, &at)?;
        match self.sequences.get_mut(&q) {
            Some(pending) => {
                pending.comment = comment;
                Ok(())
            }
            None => Err(ReadError::BadReference {
                at,
                what: format!("sequence {q}"),
            }),
        }
    }

    /// Folds each serial column's implicit sequence into its column and declares every other
    /// sequence; an owner that is not a declared column is an error.
    pub(super) fn finish_sequences(&mut self) -> Result<(), ReadError> {
        debug_assert!(self.sequences.is_empty() || self.dialect == Dialect::Postgres);
        for (q, pending) in std::mem::take(&mut self.sequences) {
            let mut sequence = pending.options.resolve(q.clone());
            sequence.comment = pending.comment;
            if let Some((table, column)) = &pending.owner {
                let Some(owner) = self.schema.tables.get(table).and_then(|t| t.column(column)) else {
                    return Err(ReadError::BadReference {
                        at: pending.at,
                        what: format!("column {column} of {table} (owner of sequence {q})"),
                    });
                };
                let serial = DefaultValue::Expression(serial_default(&q, &q.name));
                let draws = owner.default.as_ref() == Some(&serial);
                if draws && sequence.comment.is_none() && sequence.has_serial_options() {
                    continue;
                }
                sequence.owned_by = Some(SequenceOwner {
                    table: table.clone(),
                    column: column.clone(),
                });
            }
            self.schema.sequences.insert(q, sequence);
        }
        Ok(())
    }
}
