//! PostgreSQL sequences that are objects of their own: standalone ones, and owned ones whose
//! options are not a serial column's. A serial column's implicit sequence (owned by it, default
//! options, drawn by its default) is folded into the column and never appears here.
//!
//! Every option is held resolved (`MINVALUE` of an ascending sequence is 1 when not written), as
//! `pg_sequence` stores it, so a written default and the catalog's value compare equal.

use serde::{Deserialize, Serialize};

use super::keyed::Keyed;
use super::name::QualifiedName;

/// A `CREATE SEQUENCE`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sequence {
    /// The sequence's name.
    pub name: QualifiedName,
    /// `smallint`, `integer` or `bigint`.
    pub data_type: SequenceType,
    /// `START WITH`.
    pub start: i64,
    /// `INCREMENT BY` (never zero).
    pub increment: i64,
    /// `MINVALUE`.
    pub min: i64,
    /// `MAXVALUE`.
    pub max: i64,
    /// `CACHE`.
    pub cache: i64,
    /// `CYCLE`.
    pub cycle: bool,
    /// `OWNED BY table.column`: dropped with that column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owned_by: Option<SequenceOwner>,
    /// The sequence's comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// The column a sequence belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SequenceOwner {
    /// The table.
    pub table: QualifiedName,
    /// The column.
    pub column: String,
}

/// A sequence's value type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SequenceType {
    /// `smallint`.
    Smallint,
    /// `integer`.
    Integer,
    /// `bigint` (the default).
    Bigint,
}

impl SequenceType {
    /// The SQL name.
    pub fn sql(self) -> &'static str {
        match self {
            SequenceType::Smallint => "smallint",
            SequenceType::Integer => "integer",
            SequenceType::Bigint => "bigint",
        }
    }

    /// The type named `name` (`int2`, `int4`, `int8` and `int` too), if it is one of the three.
    pub fn parse(name: &str) -> Option<SequenceType> {
        match name.to_ascii_lowercase().as_str() {
            "smallint" | "int2" => Some(SequenceType::Smallint),
            "integer" | "int" | "int4" => Some(SequenceType::Integer),
            "bigint" | "int8" => Some(SequenceType::Bigint),
            _ => None,
        }
    }

    /// The largest value of the type.
    pub fn max_value(self) -> i64 {
        match self {
            SequenceType::Smallint => i64::from(i16::MAX),
            SequenceType::Integer => i64::from(i32::MAX),
            SequenceType::Bigint => i64::MAX,
        }
    }

    /// The smallest value of the type.
    pub fn min_value(self) -> i64 {
        match self {
            SequenceType::Smallint => i64::from(i16::MIN),
            SequenceType::Integer => i64::from(i32::MIN),
            SequenceType::Bigint => i64::MIN,
        }
    }
}

/// The options as written; what is left out takes PostgreSQL's default when resolved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SequenceOptions {
    /// `AS type`.
    pub data_type: Option<SequenceType>,
    /// `START WITH`.
    pub start: Option<i64>,
    /// `INCREMENT BY`.
    pub increment: Option<i64>,
    /// `MINVALUE` (`NO MINVALUE` is `None`).
    pub min: Option<i64>,
    /// `MAXVALUE` (`NO MAXVALUE` is `None`).
    pub max: Option<i64>,
    /// `CACHE`.
    pub cache: Option<i64>,
    /// `CYCLE`.
    pub cycle: bool,
}

impl SequenceOptions {
    /// The sequence `name` with every option resolved as `CREATE SEQUENCE` resolves it.
    pub fn resolve(&self, name: QualifiedName) -> Sequence {
        let data_type = self.data_type.unwrap_or(SequenceType::Bigint);
        let increment = self.increment.unwrap_or(1);
        let ascending = increment > 0;
        let min = self
            .min
            .unwrap_or(if ascending { 1 } else { data_type.min_value() });
        let max = self
            .max
            .unwrap_or(if ascending { data_type.max_value() } else { -1 });
        Sequence {
            name,
            data_type,
            start: self.start.unwrap_or(if ascending { min } else { max }),
            increment,
            min,
            max,
            cache: self.cache.unwrap_or(1),
            cycle: self.cycle,
            owned_by: None,
            comment: None,
        }
    }
}

impl Sequence {
    /// Whether the options are what a serial column's implicit sequence of its type gets, and it
    /// carries no comment: such a sequence is folded into its column.
    pub fn has_serial_options(&self) -> bool {
        *self
            == Sequence {
                owned_by: self.owned_by.clone(),
                ..SequenceOptions {
                    data_type: Some(self.data_type),
                    ..SequenceOptions::default()
                }
                .resolve(self.name.clone())
            }
    }
}

/// An identity column's sequence options, resolved for the column's type as `pg_sequence` holds
/// them; a column carries them only where they are not that type's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdentityOptions {
    /// `START WITH`.
    pub start: i64,
    /// `INCREMENT BY`.
    pub increment: i64,
    /// `MINVALUE`.
    pub min: i64,
    /// `MAXVALUE`.
    pub max: i64,
    /// `CACHE`.
    pub cache: i64,
    /// `CYCLE`.
    pub cycle: bool,
}

impl IdentityOptions {
    /// The options as written, resolved for an identity of `column_type`; `None` when they are
    /// that type's defaults (so writing them out and leaving them out read alike).
    pub fn resolve(written: &SequenceOptions, column_type: SequenceType) -> Option<IdentityOptions> {
        let options = SequenceOptions {
            data_type: Some(column_type),
            ..*written
        };
        let resolved = IdentityOptions::of(&options.resolve(QualifiedName::new("", "")));
        (resolved != IdentityOptions::defaults(column_type)).then_some(resolved)
    }

    /// What an identity of `column_type` gets when no option is written.
    pub fn defaults(column_type: SequenceType) -> IdentityOptions {
        let options = SequenceOptions {
            data_type: Some(column_type),
            ..SequenceOptions::default()
        };
        IdentityOptions::of(&options.resolve(QualifiedName::new("", "")))
    }

    /// The options of a resolved sequence.
    pub fn of(s: &Sequence) -> IdentityOptions {
        IdentityOptions {
            start: s.start,
            increment: s.increment,
            min: s.min,
            max: s.max,
            cache: s.cache,
            cycle: s.cycle,
        }
    }
}

impl Keyed for Sequence {
    fn key(&self) -> QualifiedName {
        self.name.clone()
    }
}
