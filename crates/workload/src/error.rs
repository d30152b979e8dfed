//! Why an intent cannot become a Job. Each variant names the field to fix; none carries a secret
//! (the intent holds none).

use ptah_dataplane::Operation;

/// An intent the builder refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkloadError {
    /// `operation` and the variant of `inputs` disagree.
    #[error("the intent is for {operation} but carries the inputs of {inputs}")]
    InputsMismatch {
        /// `JobIntent::operation`.
        operation: Operation,
        /// The operation of `JobIntent::inputs`.
        inputs: Operation,
    },
    /// A field that must be `sha256:<64 lowercase hex>` is not.
    #[error("{field} is not sha256:<64 lowercase hex>")]
    InvalidDigest {
        /// The field.
        field: &'static str,
    },
    /// A reference that must be pinned (`oci://…@sha256:<64 hex>`) is not.
    #[error("{field} is not a digest-pinned oci:// reference")]
    UnpinnedReference {
        /// The field.
        field: &'static str,
    },
    /// A required text field is empty.
    #[error("{field} is empty")]
    Empty {
        /// The field.
        field: &'static str,
    },
    /// The Job name is not the one `job_name` can produce (too long, or not a DNS label).
    #[error("job name {0:?} is not a DNS label of at most 63 characters")]
    InvalidJobName(String),
    /// A user Pod label or annotation key is reserved for the operator or Kubernetes.
    #[error("pod metadata {kind} key {key:?} is reserved")]
    ReservedPodMetadata {
        /// `label` or `annotation`.
        kind: &'static str,
        /// The refused key.
        key: String,
    },
    /// A mutating operation lacks the expected target identity the runner requires.
    #[error("{0} needs the expected target identity")]
    MissingTargetIdentity(Operation),
    /// A mutating operation lacks a deadline the runner requires.
    #[error("a mutating operation needs {0}")]
    MissingDeadline(&'static str),
    /// A deadline is out of range or out of order.
    #[error("invalid deadline: {0}")]
    InvalidDeadline(&'static str),
    /// An Apply without plan chunks, or with more than a plan can have.
    #[error("an Apply needs 1..={max} plan chunk ConfigMaps, got {got}")]
    PlanChunks {
        /// How many were given.
        got: usize,
        /// The most allowed.
        max: usize,
    },
    /// A migration Apply's sequence is not one the runner would accept.
    #[error("sequence.json {0}")]
    InvalidSequence(ptah_dataplane::SequenceError),
    /// A migration Apply's sequence does not have the digest it names.
    #[error("sequence.digest is not the digest of sequence.json")]
    SequenceDigestMismatch,
    /// A Plan's exclude or protected-table list is one the runner would refuse.
    #[error("{field} {reason}")]
    InvalidScope {
        /// `db.exclude` or `db.protected_tables`.
        field: &'static str,
        /// What is wrong, from [`ptah_dataplane::scope::ScopeError`].
        reason: ptah_dataplane::scope::ScopeError,
    },
}
