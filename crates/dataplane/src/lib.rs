//! The contract between the manager and the data plane.
//!
//! Everything both sides must agree on lives here, in a crate without Kubernetes and without a
//! database driver: the [`Operation`]s, the environment each Job gets ([`env`]), the
//! [`ResultPayload`] the runner reports, the framing of that payload on stdout ([`frame`]) and its
//! parser ([`parse`]), the termination summary ([`summary`]), the target identity digest
//! ([`identity`]), the planning scope ([`scope`]) and the approved migration sequence
//! ([`sequence`]).

#![warn(missing_docs)]

pub mod env;
pub mod frame;
pub mod identity;
mod operation;
pub mod parse;
mod payload;
mod rehearsal;
pub mod scope;
pub mod sequence;
pub mod summary;
mod validate;

pub use frame::{encode_frame, frame_bytes};
pub use identity::{IdentityError, TargetIdentity};
pub use operation::{Operation, UnknownOperation};
pub use parse::{ParseError, ParsedFrame, parse_last_frame};
pub use payload::{
    ArtifactResult, DriftFinding, DriftResult, ErrorCode, LintFinding, LintSeverity,
    MAX_BLOCKED_REASON_BYTES, MAX_LINT_FINDINGS, MAX_OPERATION_ID_BYTES, MAX_REPORTED_VERSIONS,
    MigrationHistoryResult, MigrationOutcome, MigrationRunResult, OperationId, PendingLint, PlanOutcome,
    PlanResult, ResultError, ResultPayload, Truncation, VERIFICATION_FAILED,
};
pub use rehearsal::{MAX_REHEARSAL_TIMINGS, RehearsalOutcome, RehearsalResult};
pub use sequence::{
    MAX_SEQUENCE_STEPS, SequenceError, SequenceStep, expected_sequence, parse_expected_sequence,
    sequence_digest,
};
pub use validate::InvariantViolation;

/// The version of the runner protocol (environment, frame, payload). The manager sets
/// `PTAH_RUNNER_PROTOCOL_VERSION` to the version it speaks; a runner refuses any other.
pub const PROTOCOL_VERSION: u32 = 1;

/// The largest plan a Plan operation may produce: 8 MiB, a trailing newline counted.
pub const MAX_PLAN_BYTES: usize = 8 * 1024 * 1024;

/// Headroom for everything in a payload besides the plan.
pub const PAYLOAD_HEADROOM_BYTES: usize = 64 * 1024;

/// The largest payload line: a plan escaped at worst six bytes per byte (`\u0000`) plus headroom.
pub const MAX_PAYLOAD_BYTES: usize = MAX_PLAN_BYTES * 6 + PAYLOAD_HEADROOM_BYTES;

/// The longest error message a payload carries, in bytes.
pub const MAX_ERROR_MESSAGE_BYTES: usize = 2048;

/// How many drift findings a payload carries at most; the rest is reported as truncated.
pub const MAX_DRIFT_FINDINGS: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_cap_is_derived_from_the_plan_cap() {
        assert_eq!(MAX_PLAN_BYTES, 8_388_608);
        assert_eq!(MAX_PAYLOAD_BYTES, 50_397_184);
    }
}
