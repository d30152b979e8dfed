//! Condition types and reasons: a stable API, each written once here and never repurposed.
//!
//! Controllers use [`ConditionType`] and [`Reason`] and call [`ConditionType::as_str`] /
//! [`Reason::as_str`] when writing a `metav1.Condition`; no condition string is spelled anywhere
//! else.

use std::{fmt, str::FromStr};

/// A condition type or reason string that is not one of ours.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown {what} {value:?}")]
pub struct UnknownCondition {
    /// `condition type` or `reason`.
    pub what: &'static str,
    /// The string that was not recognised.
    pub value: String,
}

macro_rules! string_enum {
    ($(#[$doc:meta])* $name:ident, $what:literal, { $($(#[$vdoc:meta])* $variant:ident,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)*
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The string written to the API.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => stringify!($variant),)*
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownCondition;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $name::ALL
                    .iter()
                    .copied()
                    .find(|v| v.as_str() == s)
                    .ok_or_else(|| UnknownCondition { what: $what, value: s.to_owned() })
            }
        }
    };
}

string_enum!(
    /// The `type` of a condition on any kind of this API group.
    ConditionType, "condition type", {
        /// The requested reference resolved to a digest.
        ArtifactResolved,
        /// The resolved digest passed the verification policy.
        ArtifactVerified,
        /// The engine is one the operator supports.
        EngineSupported,
        /// The last database operation reached the database.
        DatabaseReachable,
        /// The last observation found drift.
        DriftDetected,
        /// A plan is published and current.
        PlanReady,
        /// The current plan needs an approval.
        ApprovalRequired,
        /// An Apply is in flight.
        Applying,
        /// The database matches the desired state.
        InSync,
        /// The resource is ready (kstatus).
        Ready,
        /// The resource is suspended.
        Suspended,
        /// The last reconciliation failed.
        ReconciliationFailed,
        /// Work is in progress (kstatus).
        Progressing,
        /// kstatus's abnormal-true `Reconciling`: the resource has not reached its desired state
        /// and work toward it is under way.
        Reconciling,
        /// kstatus's abnormal-true `Stalled`: no progress is made until a person or an input acts.
        Stalled,
        /// Progress is blocked until an input changes.
        Blocked,
        /// An approval or acknowledgment was accepted.
        Accepted,
        /// An approval or acknowledgment was spent.
        Consumed,
        /// An approval or acknowledgment no longer matches anything current.
        Stale,
        /// A migration plan is the current one.
        Current,
        /// A migration plan was executed.
        Executed,
    }
);

string_enum!(
    /// The `reason` of a condition on any kind of this API group.
    Reason, "reason", {
        /// The resource is active.
        Active,
        /// `policy.apply` is `Never`.
        ApplyDisabled,
        /// An Apply may or may not have run.
        ApplyOutcomeUnknown,
        /// An Apply is waiting to be dispatched.
        ApplyPending,
        /// An approval stopped matching before dispatch.
        ApprovalRevoked,
        /// The plan has an accepted approval.
        ApprovedPlan,
        /// The artifact failed verification.
        ArtifactUnverified,
        /// The plan waits for an approval.
        AwaitingApproval,
        /// The spec or cluster configuration is unusable.
        ConfigurationError,
        /// An uncertain Apply was followed by a converged proof.
        ConvergedAfterUnknownOutcome,
        /// The plan is the current one.
        CurrentPlan,
        /// The desired state changed.
        DesiredStateChanged,
        /// The plan is destructive and `allowDestructive` is false.
        DestructiveChangesDisabled,
        /// The reference is pinned by digest.
        DigestPinned,
        /// The Job create was committed.
        DispatchCommitted,
        /// The desired schema declares nothing, and is refused.
        EmptySchema,
        /// The execution-binding epoch changed.
        ExecutionBindingChanged,
        /// Inputs of the operation changed.
        InputsChanged,
        /// The database matches.
        InSync,
        /// The Job completed.
        JobCompleted,
        /// The realm Lease was lost during an operation.
        LeaseContinuityLost,
        /// The plan has no changes.
        NoChanges,
        /// Not required.
        NotRequired,
        /// The database was observed.
        Observed,
        /// The operation failed.
        OperationFailed,
        /// An operation is in progress.
        OperationInProgress,
        /// The outcome is unknown.
        OutcomeUnknown,
        /// Nothing has happened yet.
        Pending,
        /// The plan is no longer current.
        PlanNoLongerCurrent,
        /// The plan is ready.
        PlanReady,
        /// Policy blocks progress.
        PolicyBlocked,
        /// The policy changed.
        PolicyChanged,
        /// The verification policy refused the artifact.
        PolicyRefused,
        /// The verification policy accepted the artifact.
        PolicySatisfied,
        /// The plan changes privileges.
        PrivilegeChanges,
        /// Inputs of a post-Apply proof changed.
        ProofInputsChanged,
        /// The plan touches a protected table.
        ProtectedTable,
        /// The plan and its chunks are published.
        Published,
        /// Another resource claims the same database.
        RealmConflict,
        /// The realm does not grant this namespace the database.
        RealmNotAuthorized,
        /// A refresh failed.
        RefreshFailed,
        /// A refresh is running.
        Refreshing,
        /// Refreshing is suspended.
        RefreshSuspended,
        /// Requested.
        Requested,
        /// Resolving the reference failed.
        ResolveFailed,
        /// Satisfied.
        Satisfied,
        /// A scoped plan has changes.
        ScopedChanges,
        /// The managed scope converged.
        ScopedConverged,
        /// A scoped plan is pending.
        ScopedPlanPending,
        /// The freshness of the source is unknown.
        SourceFreshnessUnknown,
        /// A source refresh is pending.
        SourceRefreshPending,
        /// Whether the source resolves is unknown.
        SourceResolutionUnknown,
        /// The source is unresolved.
        SourceUnresolved,
        /// Stale.
        Stale,
        /// The observation is stale.
        StaleObservation,
        /// The plan is stale.
        StalePlan,
        /// Succeeded.
        Succeeded,
        /// A concurrent approval won.
        SupersededApproval,
        /// The engine is supported.
        SupportedEngine,
        /// The resource is suspended.
        Suspended,
        /// The engine is not supported.
        UnsupportedEngine,
        /// Convergence is being proved.
        VerifyingConvergence,
        /// Waiting.
        Waiting,
        /// Under `BySeverity`, the plan has a warning-severity change (or one not judged).
        WarningChanges,
        /// Pod admission refused the operation Pod.
        PodAdmissionRefused,
        /// The runner speaks another protocol version.
        RunnerProtocolMismatch,
        /// The migration history matches the artifact.
        HistoryMatched,
        /// Migrations are pending.
        MigrationsPending,
        /// The history has a dirty row.
        HistoryDirty,
        /// An applied migration's checksum changed.
        HistoryModified,
        /// A pending migration sorts before an applied one.
        HistoryOutOfOrder,
        /// The database is ahead of the artifact.
        HistoryAhead,
        /// An unresolved run was acknowledged.
        RunAcknowledged,
        /// The acknowledged run is not the unresolved one.
        RunNotUnresolved,
        /// The fetch container refused the artifact itself (an unsafe path, a limit, a size or
        /// digest mismatch, an invalid manifest): nothing runs on that digest until it or the spec
        /// changes.
        ArtifactRefused,
        /// A Secret (or a key of it) the operation Pod names does not exist.
        SecretNotFound,
        /// The registry Secret names no registry, or another one than the reference.
        RegistryAuthorityMismatch,
        /// Plain HTTP was asked for and the registry Secret does not allow it.
        PlainHTTPNotGranted,
        /// The CA bundle is not the one the registry Secret grants.
        CANotGranted,
        /// The plan's rehearsal on the dev database failed, or could not run: it is neither
        /// approved nor applied.
        RehearsalFailed,
    }
);

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn is_valid_reason(s: &str) -> bool {
        // metav1.Condition: ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$, at most 1024.
        let bytes = s.as_bytes();
        !bytes.is_empty()
            && bytes[0].is_ascii_alphabetic()
            && bytes
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || b"_,:".contains(b))
            && !s.ends_with([',', ':'])
    }

    #[test]
    fn strings_are_unique_and_round_trip() {
        let reasons: BTreeSet<_> = Reason::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(reasons.len(), Reason::ALL.len());
        for reason in Reason::ALL {
            assert_eq!(reason.as_str().parse::<Reason>(), Ok(*reason));
            assert!(is_valid_reason(reason.as_str()), "{reason}");
        }
        for ty in ConditionType::ALL {
            assert_eq!(ty.to_string().parse::<ConditionType>(), Ok(*ty));
        }
        assert_eq!(
            "Bogus".parse::<Reason>(),
            Err(UnknownCondition {
                what: "reason",
                value: "Bogus".to_owned()
            })
        );
    }

    #[test]
    fn reference_reasons_are_present() {
        for name in [
            "PodAdmissionRefused",
            "RunAcknowledged",
            "HistoryAhead",
            "UnsupportedEngine",
            "ArtifactRefused",
            "SecretNotFound",
            "RegistryAuthorityMismatch",
            "PlainHTTPNotGranted",
            "CANotGranted",
        ] {
            assert!(name.parse::<Reason>().is_ok(), "{name}");
        }
        assert_eq!(ConditionType::Ready.as_str(), "Ready");
        // kstatus reads exactly these spellings.
        assert_eq!(ConditionType::Reconciling.as_str(), "Reconciling");
        assert_eq!(ConditionType::Stalled.as_str(), "Stalled");
    }
}
