//! PostgreSQL foreign key options: `MATCH FULL` and `DEFERRABLE [INITIALLY DEFERRED]`, as
//! `pg_constraint` keeps them (`confmatchtype`, `condeferrable`, `condeferred`).

use sqlparser::ast::{ConstraintReferenceMatchKind, DeferrableInitial, ForeignKeyConstraint};

use crate::model::ForeignKeyOptions;

use super::super::{Location, ReadError};
use super::Reader;

impl Reader {
    /// The options written on `fk`. `MATCH SIMPLE`, `NOT DEFERRABLE` and `INITIALLY IMMEDIATE`
    /// are the defaults; `INITIALLY DEFERRED` alone makes a key deferrable, as the server has it.
    pub(super) fn foreign_key_options(
        &self,
        fk: &ForeignKeyConstraint,
        at: &Location,
    ) -> Result<ForeignKeyOptions, ReadError> {
        let mut options = ForeignKeyOptions::default();
        match fk.match_kind {
            None | Some(ConstraintReferenceMatchKind::Simple) => {}
            Some(ConstraintReferenceMatchKind::Full) => options.match_full = true,
            Some(ConstraintReferenceMatchKind::Partial) => {
                return Err(self.unsupported(at, "MATCH PARTIAL (the server does not implement it)"));
            }
        }
        if let Some(c) = &fk.characteristics {
            if c.enforced.is_some() {
                return Err(self.unsupported(at, "a foreign key's [NOT] ENFORCED (not modelled)"));
            }
            options.initially_deferred = c.initially == Some(DeferrableInitial::Deferred);
            options.deferrable = c.deferrable.unwrap_or(false) || options.initially_deferred;
            if c.deferrable == Some(false) && options.initially_deferred {
                return Err(ReadError::Invalid {
                    at: at.clone(),
                    message: "NOT DEFERRABLE INITIALLY DEFERRED contradicts itself".to_owned(),
                });
            }
        }
        Ok(options)
    }
}
