//! Object names.

use serde::{Deserialize, Serialize};

/// A namespace-qualified object name. MySQL has one namespace per URL, written as `""`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct QualifiedName {
    /// The PostgreSQL schema (`""` on MySQL).
    pub schema: String,
    /// The object name.
    pub name: String,
}

impl QualifiedName {
    /// A name inside `schema`.
    pub fn new(schema: impl Into<String>, name: impl Into<String>) -> Self {
        QualifiedName {
            schema: schema.into(),
            name: name.into(),
        }
    }
}

impl std::fmt::Display for QualifiedName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.schema.is_empty() {
            f.write_str(&self.name)
        } else {
            write!(f, "{}.{}", self.schema, self.name)
        }
    }
}
