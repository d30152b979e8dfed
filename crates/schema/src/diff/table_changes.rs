//! The records of what changes inside a table: comment, options, columns, indexes and
//! constraints. Apart from [`SchemaDiff`](super::SchemaDiff) so the top-level shape of a diff
//! reads on one page; the differ and the renderer use these through `crate::diff`.

use serde::{Deserialize, Serialize};

use crate::model::{CheckConstraint, Column, ForeignKey, Index, PrimaryKey, QualifiedName, UniqueConstraint};

/// A table comment change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableCommentChange {
    /// The table.
    pub table: QualifiedName,
    /// The actual comment.
    pub from: Option<String>,
    /// The desired comment.
    pub to: Option<String>,
}

/// A table's default character set and collation, as the document declares them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableOptionsChange {
    /// The table.
    pub table: QualifiedName,
    /// The character set to set, when declared.
    pub charset: Option<String>,
    /// The collation to set, when declared.
    pub collation: Option<String>,
}

/// A column of a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnRef {
    /// The table.
    pub table: QualifiedName,
    /// The column.
    pub column: Column,
}

/// One aspect of a column definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ColumnAspect {
    /// The data type.
    Type,
    /// NULL / NOT NULL.
    Nullability,
    /// The default.
    Default,
    /// PostgreSQL identity.
    Identity,
    /// MySQL `AUTO_INCREMENT`.
    AutoIncrement,
    /// The comment.
    Comment,
    /// MySQL: the character set or collation.
    Collation,
    /// Whether and how the column is generated (`GENERATED ALWAYS AS (…)`).
    Generation,
}

/// A column whose definition changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnChange {
    /// The table.
    pub table: QualifiedName,
    /// The actual column.
    pub from: Column,
    /// The desired column.
    pub to: Column,
    /// What differs, in [`ColumnAspect`] order.
    pub changes: Vec<ColumnAspect>,
}

/// An index of a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexRef {
    /// The table.
    pub table: QualifiedName,
    /// The index.
    pub index: Index,
}

/// An index whose definition changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexChange {
    /// The table.
    pub table: QualifiedName,
    /// The actual index.
    pub from: Index,
    /// The desired index.
    pub to: Index,
}

/// A table constraint of any kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Constraint {
    /// PRIMARY KEY.
    PrimaryKey(PrimaryKey),
    /// UNIQUE.
    Unique(UniqueConstraint),
    /// CHECK.
    Check(CheckConstraint),
    /// FOREIGN KEY.
    ForeignKey(ForeignKey),
}

impl Constraint {
    /// The constraint's name.
    pub fn name(&self) -> &str {
        match self {
            Constraint::PrimaryKey(c) => &c.name,
            Constraint::Unique(c) => &c.name,
            Constraint::Check(c) => &c.name,
            Constraint::ForeignKey(c) => &c.name,
        }
    }

    /// Whether it is a foreign key.
    pub fn is_foreign_key(&self) -> bool {
        matches!(self, Constraint::ForeignKey(_))
    }
}

/// A constraint of a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConstraintRef {
    /// The table.
    pub table: QualifiedName,
    /// The constraint.
    pub constraint: Constraint,
}

/// A constraint whose definition changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConstraintChange {
    /// The table.
    pub table: QualifiedName,
    /// The actual constraint.
    pub from: Constraint,
    /// The desired constraint.
    pub to: Constraint,
}
