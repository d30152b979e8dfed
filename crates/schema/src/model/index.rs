//! Indexes: their parts (columns or expressions, order, MySQL prefixes, PostgreSQL operator
//! classes and nulls order) and PostgreSQL's index options.

use serde::{Deserialize, Serialize};

/// An index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    /// The index name.
    pub name: String,
    /// Whether it is UNIQUE.
    pub unique: bool,
    /// The indexed parts in order.
    pub parts: Vec<IndexPart>,
    /// PostgreSQL partial-index predicate, normalized.
    pub predicate: Option<String>,
    /// The access method when not the default (`btree`), e.g. `gin`, `hash`.
    pub method: Option<String>,
    /// PostgreSQL `INCLUDE (…)`: columns stored in the index but not part of its key.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    /// PostgreSQL 15 `NULLS NOT DISTINCT` on a unique index.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nulls_not_distinct: bool,
    /// PostgreSQL storage parameters (`WITH (fillfactor=70)`) as `pg_class.reloptions` holds
    /// them, `name=value`, sorted by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub storage: Vec<String>,
}

/// One element of an index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexPart {
    /// A column or an expression.
    pub target: IndexTarget,
    /// DESC order.
    pub descending: bool,
    /// MySQL prefix length in characters.
    pub prefix_length: Option<u32>,
    /// PostgreSQL operator class when not the type's default (`text_pattern_ops`); qualified
    /// when it lives outside `pg_catalog`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opclass: Option<String>,
    /// PostgreSQL `NULLS FIRST` (`true`) or `NULLS LAST` (`false`), only where it is not the
    /// default for the direction (last ascending, first descending): one spelling per order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nulls_first: Option<bool>,
}

impl IndexPart {
    /// The explicit nulls order a part needs, from what was written: `None` where it is the
    /// direction's default, so `ASC NULLS LAST` and `ASC` read alike.
    pub fn nulls_order(descending: bool, nulls_first: Option<bool>) -> Option<bool> {
        nulls_first.filter(|first| *first != descending)
    }
}

/// What an index part indexes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IndexTarget {
    /// A column by name.
    Column(String),
    /// An expression, normalized.
    Expression(String),
}
