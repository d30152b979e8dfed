//! Values: column defaults, generation expressions and the constants of defaults and reference rows.

use serde::{Deserialize, Serialize};

/// A column default: a literal compared by value, or an expression compared by its normalized text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DefaultValue {
    /// A constant.
    Literal(Literal),
    /// An expression such as `now()` or `gen_random_uuid()`, normalized (lowercase keywords, no casts
    /// the catalog adds).
    Expression(String),
}

/// A constant value, in defaults and reference rows.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Literal {
    /// SQL NULL.
    Null,
    /// TRUE or FALSE.
    Bool(bool),
    /// A number, kept as its canonical decimal text so `1.50` and `1.5` compare equal after normalizing.
    Number(String),
    /// A string.
    String(String),
}

/// How a generated column computes its value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Generated {
    /// The expression, normalized as CHECK expressions are.
    pub expression: String,
    /// `STORED` (written on every change) or, MySQL only, `VIRTUAL` (computed when read).
    pub stored: bool,
}
