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

impl Operation {
    /// The operations a resource of `kind` dispatches: a PtahSchema observes and plans, a
    /// PtahMigration reads its history; both resolve, verify and apply.
    pub fn of(kind: Kind) -> &'static [Operation] {
        match kind {
            Kind::Schema => &[
                Operation::Resolve,
                Operation::Verify,
                Operation::Observe,
                Operation::Plan,
                Operation::Apply,
            ],
            Kind::Migration => &[
                Operation::Resolve,
                Operation::Verify,
                Operation::History,
                Operation::Apply,
            ],
        }
    }
}

label_enum!(
    /// A resource's `status.phase`, PtahSchema and PtahMigration phases together.
    Phase {
        /// `Pending`: nothing has run yet (both kinds; also a resource with no phase yet).
        Pending => "pending",
        /// `Resolving`: resolving the reference to a digest (both kinds).
        Resolving => "resolving",
        /// `Verifying`: evaluating the verification policy (both kinds).
        Verifying => "verifying",
        /// `Observing`: reading drift from the database (PtahSchema).
        Observing => "observing",
        /// `Reading`: reading the revision table (PtahMigration).
        Reading => "reading",
        /// `Planning`: computing or publishing a plan (both kinds).
        Planning => "planning",
        /// `ReadyToApply`: a plan may be applied now (PtahSchema).
        ReadyToApply => "ready_to_apply",
        /// `AwaitingApproval`: the plan waits for an approval (both kinds).
        AwaitingApproval => "awaiting_approval",
        /// `Blocked`: nothing changes until an input or a person does (both kinds).
        Blocked => "blocked",
        /// `Applying`: an Apply is running (both kinds).
        Applying => "applying",
        /// `VerifyingConvergence`: proving an Apply converged (PtahSchema).
        VerifyingConvergence => "verifying_convergence",
        /// `VerifyingHistory`: reading the history again after an Apply (PtahMigration).
        VerifyingHistory => "verifying_history",
        /// `InSync`: the database matches the desired state (both kinds).
        InSync => "in_sync",
        /// `Suspended`: no new Jobs are created (both kinds).
        Suspended => "suspended",
        /// `Failed`: a retryable fault (both kinds).
        Failed => "failed",
    }
);

impl Phase {
    /// The phases a resource of `kind` can be in, in the order its status type declares them.
    pub fn of(kind: Kind) -> &'static [Phase] {
        match kind {
            Kind::Schema => &[
                Phase::Pending,
                Phase::Resolving,
                Phase::Verifying,
                Phase::Observing,
                Phase::Planning,
                Phase::ReadyToApply,
                Phase::AwaitingApproval,
                Phase::Blocked,
                Phase::Applying,
                Phase::VerifyingConvergence,
                Phase::InSync,
                Phase::Suspended,
                Phase::Failed,
            ],
            Kind::Migration => &[
                Phase::Pending,
                Phase::Resolving,
                Phase::Verifying,
                Phase::Reading,
                Phase::Planning,
                Phase::AwaitingApproval,
                Phase::Blocked,
                Phase::Applying,
                Phase::VerifyingHistory,
                Phase::InSync,
                Phase::Suspended,
                Phase::Failed,
            ],
        }
    }
}

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
            .chain(Phase::ALL.iter().map(|v| v.as_str()))
            .collect();
        for value in &all {
            assert!(
                value
                    .split('_')
                    .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase())),
                "{value}"
            );
        }
        let phases: std::collections::BTreeSet<&str> = Phase::ALL.iter().map(|p| p.as_str()).collect();
        assert_eq!(phases.len(), Phase::ALL.len(), "phase values are distinct");
        assert_eq!(Kind::ALL.len(), 2);
        assert_eq!(ReconcileOutcome::ALL.len(), 4);
        assert_eq!(Operation::ALL.len(), 6);
        assert_eq!(OperationResult::ALL.len(), 5);
        assert_eq!(Phase::ALL.len(), 15);
    }

    #[test]
    fn each_kind_has_its_status_phases_and_operations() {
        let names = |phases: &[Phase]| phases.iter().map(|p| p.as_str()).collect::<Vec<_>>();
        // The order and spelling of `MigrationPhase` (crates/api/src/migration/status.rs).
        assert_eq!(
            names(Phase::of(Kind::Migration)),
            [
                "pending",
                "resolving",
                "verifying",
                "reading",
                "planning",
                "awaiting_approval",
                "blocked",
                "applying",
                "verifying_history",
                "in_sync",
                "suspended",
                "failed",
            ]
        );
        // The order and spelling of `SchemaPhase` (crates/api/src/schema/status.rs).
        assert_eq!(
            names(Phase::of(Kind::Schema)),
            [
                "pending",
                "resolving",
                "verifying",
                "observing",
                "planning",
                "ready_to_apply",
                "awaiting_approval",
                "blocked",
                "applying",
                "verifying_convergence",
                "in_sync",
                "suspended",
                "failed",
            ]
        );
        // Every phase belongs to at least one kind.
        for phase in Phase::ALL {
            assert!(
                Kind::ALL.iter().any(|&k| Phase::of(k).contains(phase)),
                "{phase:?}"
            );
        }
        assert!(Operation::of(Kind::Migration).contains(&Operation::History));
        assert!(Operation::of(Kind::Migration).contains(&Operation::Apply));
        assert!(!Operation::of(Kind::Migration).contains(&Operation::Observe));
        assert!(!Operation::of(Kind::Schema).contains(&Operation::History));
        for operation in Operation::ALL {
            assert!(
                Kind::ALL.iter().any(|&k| Operation::of(k).contains(operation)),
                "{operation:?}"
            );
        }
    }
}
