//! The database engine a target speaks, as written by a person and as understood by the operator.

use std::{borrow::Cow, fmt};

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

/// A database engine name exactly as the user wrote it (1–63 characters).
///
/// Any well-formed value is stored, so GitOps tools can apply it; [`DatabaseEngine::canonical`]
/// says whether the operator supports it. Unsupported values are reported, never executed.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DatabaseEngine(String);

/// An engine family the operator can drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EngineFamily {
    /// PostgreSQL (spelled `postgres`, `postgresql` or `pgx`).
    PostgreSQL,
    /// MySQL and MariaDB (spelled `mysql` or `mariadb`).
    MySQL,
}

/// The result of canonicalising a [`DatabaseEngine`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CanonicalEngine<'a> {
    /// A supported family.
    Supported(EngineFamily),
    /// A value the operator stores but does not support (reported as `UnsupportedEngine`).
    Unsupported(&'a str),
}

impl EngineFamily {
    /// The canonical lowercase name used in digests and Job inputs (`postgresql`, `mysql`).
    pub fn as_str(self) -> &'static str {
        match self {
            EngineFamily::PostgreSQL => "postgresql",
            EngineFamily::MySQL => "mysql",
        }
    }
}

impl fmt::Display for EngineFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl DatabaseEngine {
    /// Wraps a value as written (no validation: the API server checks the pattern).
    pub fn new(value: impl Into<String>) -> Self {
        DatabaseEngine(value.into())
    }

    /// The value as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Maps the written value onto a supported family, case-insensitively.
    pub fn canonical(&self) -> CanonicalEngine<'_> {
        match self.0.to_ascii_lowercase().as_str() {
            "postgres" | "postgresql" | "pgx" => CanonicalEngine::Supported(EngineFamily::PostgreSQL),
            "mysql" | "mariadb" => CanonicalEngine::Supported(EngineFamily::MySQL),
            _ => CanonicalEngine::Unsupported(&self.0),
        }
    }

    /// The supported family, if any.
    pub fn family(&self) -> Option<EngineFamily> {
        match self.canonical() {
            CanonicalEngine::Supported(family) => Some(family),
            CanonicalEngine::Unsupported(_) => None,
        }
    }
}

impl From<EngineFamily> for DatabaseEngine {
    fn from(family: EngineFamily) -> Self {
        DatabaseEngine(family.as_str().to_owned())
    }
}

impl fmt::Display for DatabaseEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl JsonSchema for DatabaseEngine {
    fn schema_name() -> Cow<'static, str> {
        "DatabaseEngine".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "minLength": 1,
            "maxLength": 63,
            "pattern": "^[A-Za-z][A-Za-z0-9._-]*$"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonicalises_known_spellings() {
        for spelling in ["postgres", "PostgreSQL", "pgx", "POSTGRESQL"] {
            assert_eq!(
                DatabaseEngine::new(spelling).family(),
                Some(EngineFamily::PostgreSQL),
                "{spelling}"
            );
        }
        for spelling in ["mysql", "MySQL", "mariadb", "MariaDB"] {
            assert_eq!(DatabaseEngine::new(spelling).family(), Some(EngineFamily::MySQL));
        }
    }

    #[test]
    fn keeps_unknown_values_as_written() {
        let engine = DatabaseEngine::new("CockroachDB");
        assert_eq!(engine.canonical(), CanonicalEngine::Unsupported("CockroachDB"));
        let json = serde_json::to_string(&engine).expect("serializes");
        assert_eq!(json, "\"CockroachDB\"");
    }
}
