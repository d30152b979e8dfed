//! The closed label values. Adding a variant is the only way to add a series.

use std::fmt::Write as _;

use prometheus_client::encoding::{EncodeLabelValue, LabelValueEncoder};

/// Declares a closed label enum with its wire names, `ALL`, `as_str` and the label encoding.
macro_rules! label_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// Every value, in declaration order: the full range of this label.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The label value as exported.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl EncodeLabelValue for $name {
            fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
                encoder.write_str(self.as_str())
            }
        }
    };
}

label_enum!(
    /// The reconciled resource kind.
    Kind {
        /// `PtahSchema`.
        Schema => "schema",
        /// `PtahMigration`.
        Migration => "migration",
    }
);

label_enum!(
    /// How one reconciliation ended.
    ReconcileOutcome {
        /// Finished; nothing further until the next change.
        Success => "success",
        /// Finished and asked to be called again after a delay (waiting on a Job, a Lease, ...).
        Requeue => "requeue",
        /// Stopped on a condition a person must resolve (approval, conflict, retired binding).
        Blocked => "blocked",
        /// Failed with an error and went to the error policy.
        Error => "error",
    }
);

label_enum!(
    /// A Job operation the manager dispatches.
    Operation {
        /// Resolve an artifact tag to a digest.
        Resolve => "resolve",
        /// Verify an artifact against the policy.
        Verify => "verify",
        /// Observe the live database schema.
        Observe => "observe",
        /// Plan the changes from observed to desired.
        Plan => "plan",
        /// Apply an approved plan or migration sequence.
        Apply => "apply",
        /// Read the migration history table.
        History => "history",
    }
);

label_enum!(
    /// What the manager concluded from an operation's result.
    OperationResult {
        /// A valid frame reporting success.
        Succeeded => "succeeded",
        /// A valid frame reporting failure before any change.
        Failed => "failed",
        /// A valid frame reporting some changes made and others not.
        Partial => "partial",
        /// No usable frame: the outcome is unknown and treated as uncertain.
        Unknown => "unknown",
        /// A frame was present but refused (size, digest, operation id, protocol, identity, epoch).
        Refused => "refused",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_distinct_lowercase_words() {
        let all: Vec<&str> = Kind::ALL
            .iter()
            .map(|v| v.as_str())
            .chain(ReconcileOutcome::ALL.iter().map(|v| v.as_str()))
            .chain(Operation::ALL.iter().map(|v| v.as_str()))
            .chain(OperationResult::ALL.iter().map(|v| v.as_str()))
            .collect();
        for value in &all {
            assert!(value.bytes().all(|b| b.is_ascii_lowercase()), "{value}");
        }
        assert_eq!(Kind::ALL.len(), 2);
        assert_eq!(ReconcileOutcome::ALL.len(), 4);
        assert_eq!(Operation::ALL.len(), 6);
        assert_eq!(OperationResult::ALL.len(), 5);
    }
}
