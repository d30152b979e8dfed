//! Why the runner refused or failed, each with the typed code the frame carries.

use ptah_dataplane::ErrorCode;
use ptah_registrygrant::Refusal;

/// A refusal or failure of the runner itself (the child's own failures are mapped in `report`).
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    /// The manager speaks another protocol version.
    #[error("the manager speaks runner protocol {expected}, this runner speaks {ours}")]
    ProtocolMismatch {
        /// What the manager set.
        expected: String,
        /// This runner's version.
        ours: u32,
    },
    /// A variable of the environment contract is missing or malformed.
    #[error("invalid input {name}: {reason}")]
    InvalidInput {
        /// The variable or argument.
        name: &'static str,
        /// What is wrong (never the value of a credential).
        reason: String,
    },
    /// The database URL does not hash to the expected identity.
    #[error("the database URL's target identity {actual} differs from the expected {expected}")]
    TargetIdentityMismatch {
        /// What the manager expects.
        expected: String,
        /// What the URL hashes to.
        actual: String,
    },
    /// The dispatch deadline passed.
    #[error("the dispatch deadline {0} has passed; the child was not started")]
    DispatchDeadline(String),
    /// The execution deadline passed before the child started.
    #[error("the execution deadline {0} has passed; the child was not started")]
    ExecutionDeadline(String),
    /// The plan file's content is not the approved one.
    #[error("the plan file's digest {actual} differs from the approved {expected}")]
    PlanContentMismatch {
        /// The approved digest.
        expected: String,
        /// The file's digest.
        actual: String,
    },
    /// The approved migration sequence does not have the approved digest.
    #[error("the approved migration sequence's digest {actual} differs from the approved {expected}")]
    SequenceMismatch {
        /// The approved digest (`PTAH_EXPECTED_MIGRATION_SEQUENCE_DIGEST`).
        expected: String,
        /// The digest of `PTAH_EXPECTED_MIGRATION_SEQUENCE`.
        actual: String,
    },
    /// The registry Secret does not grant this request its credentials; nothing was sent.
    #[error("{0}")]
    NotGranted(#[from] ptah_registrygrant::Refusal),
    /// SIGTERM arrived before the child started.
    #[error("SIGTERM arrived before ptah started; it was not started")]
    Terminated,
    /// The child could not be started.
    #[error("cannot start ptah: {0}")]
    Spawn(std::io::Error),
    /// Anything else that went wrong in the runner.
    #[error("runner failure: {0}")]
    Internal(String),
}

impl RunnerError {
    /// The frame's error code for this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            RunnerError::ProtocolMismatch { .. } => ErrorCode::RunnerProtocolMismatch,
            RunnerError::InvalidInput { .. } => ErrorCode::InvalidInput,
            RunnerError::TargetIdentityMismatch { .. } => ErrorCode::TargetIdentityMismatch,
            RunnerError::DispatchDeadline(_) => ErrorCode::DispatchDeadlineExpired,
            RunnerError::ExecutionDeadline(_) => ErrorCode::ExecutionDeadlineExpired,
            RunnerError::PlanContentMismatch { .. } => ErrorCode::PlanContentMismatch,
            RunnerError::SequenceMismatch { .. } => ErrorCode::MigrationSequenceMismatch,
            RunnerError::NotGranted(refusal) => match refusal {
                Refusal::RegistryAuthorityMismatch(_) => ErrorCode::RegistryAuthorityMismatch,
                Refusal::PlainHttpNotGranted(_) => ErrorCode::PlainHttpNotGranted,
                Refusal::CaNotGranted(_) => ErrorCode::CaNotGranted,
                Refusal::Malformed(_) => ErrorCode::InvalidInput,
            },
            RunnerError::Terminated => ErrorCode::Terminated,
            RunnerError::Spawn(_) => ErrorCode::ChildSpawnFailed,
            RunnerError::Internal(_) => ErrorCode::Internal,
        }
    }

    /// Shorthand for [`RunnerError::InvalidInput`].
    pub fn input(name: &'static str, reason: impl Into<String>) -> Self {
        RunnerError::InvalidInput {
            name,
            reason: reason.into(),
        }
    }
}
