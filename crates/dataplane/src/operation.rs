//! The operations a data-plane Job runs.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};

/// One data-plane operation. The JSON and command-line spelling is kebab-case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Operation {
    /// Resolve an OCI reference to a digest (registry only).
    Resolve,
    /// Verify an artifact against a verification policy (registry only).
    Verify,
    /// Compare the live schema with the desired one (`schema drift`).
    Observe,
    /// Compute a schema plan (`schema plan`).
    Plan,
    /// Apply an approved schema plan (`schema apply`).
    Apply,
    /// Read the migration history (`migrations status`).
    MigrationHistory,
    /// Apply pending migrations (`migrations up`).
    MigrationApply,
}

/// Every operation, in a fixed order.
pub const ALL: [Operation; 7] = [
    Operation::Resolve,
    Operation::Verify,
    Operation::Observe,
    Operation::Plan,
    Operation::Apply,
    Operation::MigrationHistory,
    Operation::MigrationApply,
];

impl Operation {
    /// Every operation.
    pub fn all() -> [Operation; 7] {
        ALL
    }

    /// The kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Resolve => "resolve",
            Operation::Verify => "verify",
            Operation::Observe => "observe",
            Operation::Plan => "plan",
            Operation::Apply => "apply",
            Operation::MigrationHistory => "migration-history",
            Operation::MigrationApply => "migration-apply",
        }
    }

    /// True when the operation may change the database.
    pub fn is_mutating(self) -> bool {
        matches!(self, Operation::Apply | Operation::MigrationApply)
    }

    /// True when the operation talks to the target database (and never to a registry).
    pub fn uses_database(self) -> bool {
        !self.uses_registry()
    }

    /// True when the operation talks to a registry (and never to a database).
    pub fn uses_registry(self) -> bool {
        matches!(self, Operation::Resolve | Operation::Verify)
    }

    /// The child exit codes that mean "the command ran": observe and plan exit 1 when they
    /// find drift or pending changes, which is a successful observation.
    pub fn success_exit_codes(self) -> &'static [i32] {
        match self {
            Operation::Observe | Operation::Plan => &[0, 1],
            _ => &[0],
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text names no operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown operation {0:?}")]
pub struct UnknownOperation(pub String);

impl FromStr for Operation {
    type Err = UnknownOperation;

    fn from_str(s: &str) -> Result<Self, UnknownOperation> {
        ALL.into_iter()
            .find(|op| op.as_str() == s)
            .ok_or_else(|| UnknownOperation(s.chars().take(64).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_text_and_json() {
        for op in ALL {
            assert_eq!(op.as_str().parse::<Operation>(), Ok(op));
            let json = serde_json::to_string(&op).expect("json");
            assert_eq!(json, format!("\"{}\"", op.as_str()));
        }
        assert_eq!(
            "Apply".parse::<Operation>(),
            Err(UnknownOperation("Apply".to_owned()))
        );
    }

    #[test]
    fn registry_and_database_operations_are_disjoint() {
        for op in ALL {
            assert_ne!(op.uses_registry(), op.uses_database(), "{op}");
            assert!(!(op.is_mutating() && op.uses_registry()), "{op}");
        }
    }
}
