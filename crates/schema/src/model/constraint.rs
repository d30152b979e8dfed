//! Table constraints: PRIMARY KEY, UNIQUE, CHECK and FOREIGN KEY (with PostgreSQL's `MATCH FULL`
//! and deferral).

use serde::{Deserialize, Serialize};

use super::name::QualifiedName;

/// A PRIMARY KEY constraint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrimaryKey {
    /// The constraint name (PostgreSQL `<table>_pkey` by default; MySQL always `PRIMARY`).
    pub name: String,
    /// The key columns in order.
    pub columns: Vec<String>,
}

/// A UNIQUE constraint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UniqueConstraint {
    /// The constraint name.
    pub name: String,
    /// The columns in order.
    pub columns: Vec<String>,
}

/// A CHECK constraint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckConstraint {
    /// The constraint name.
    pub name: String,
    /// The boolean expression, normalized.
    pub expression: String,
}

/// What a foreign key does when the referenced row changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReferentialAction {
    /// `NO ACTION` (the default).
    #[default]
    NoAction,
    /// `RESTRICT`.
    Restrict,
    /// `CASCADE`.
    Cascade,
    /// `SET NULL`.
    SetNull,
    /// `SET DEFAULT`.
    SetDefault,
}

/// A (possibly composite) FOREIGN KEY.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignKey {
    /// The constraint name.
    pub name: String,
    /// Referencing columns, in order.
    pub columns: Vec<String>,
    /// The referenced table.
    pub referenced_table: QualifiedName,
    /// Referenced columns, in the same order.
    pub referenced_columns: Vec<String>,
    /// ON DELETE.
    pub on_delete: ReferentialAction,
    /// ON UPDATE.
    pub on_update: ReferentialAction,
    /// PostgreSQL `MATCH FULL` and deferral; absent from the JSON when all are defaults.
    #[serde(default, skip_serializing_if = "ForeignKeyOptions::is_default")]
    pub options: ForeignKeyOptions,
}

/// A PostgreSQL foreign key's options other than its actions, as `pg_constraint` keeps them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ForeignKeyOptions {
    /// `MATCH FULL` (`confmatchtype = 'f'`): a row with some key columns NULL must have all NULL.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub match_full: bool,
    /// `DEFERRABLE` (`condeferrable`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deferrable: bool,
    /// `INITIALLY DEFERRED` (`condeferred`); only a deferrable key has it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub initially_deferred: bool,
}

impl ForeignKeyOptions {
    /// Whether every option is the default (`MATCH SIMPLE NOT DEFERRABLE`).
    pub fn is_default(&self) -> bool {
        *self == ForeignKeyOptions::default()
    }
}
