//! What can go wrong, in terms a caller acts on: retry, wait, or stop and tell a human.

use ptah_plancontract::ContractError;

/// Why a plan could not be published, loaded or projected.
#[derive(Debug, thiserror::Error)]
pub enum PlanStoreError {
    /// The document is empty; nothing was written.
    #[error("the plan document is empty")]
    Empty,
    /// The document exceeds the plan contract; nothing was written.
    #[error("the plan document is {size} bytes, more than the {max} a plan may hold")]
    TooLarge {
        /// The document's size in bytes.
        size: usize,
        /// The contract's limit.
        max: usize,
    },
    /// The owning PtahSchema lacks an identity field (namespace, name or UID).
    #[error("the owning PtahSchema has no metadata.{field}")]
    InvalidOwner {
        /// The missing field.
        field: &'static str,
    },
    /// The plan does not exist.
    #[error("PtahSchemaPlan {name} does not exist")]
    NotFound {
        /// The plan's name.
        name: String,
    },
    /// An object with the referenced name exists but is another object (recreated).
    #[error("PtahSchemaPlan {name} has UID {actual}, not the referenced {expected}")]
    UidMismatch {
        /// The plan's name.
        name: String,
        /// The UID the reference names.
        expected: String,
        /// The UID of the live object.
        actual: String,
    },
    /// The plan's publication has not completed (no `Ready=True` for its generation).
    #[error("PtahSchemaPlan {name} is not ready: {why}")]
    NotReady {
        /// The plan's name.
        name: String,
        /// What is missing.
        why: String,
    },
    /// The object is being deleted.
    #[error("{what} is being deleted")]
    Deleting {
        /// The object.
        what: String,
    },
    /// Stored content disagrees with what the plan records: someone changed it behind our back.
    #[error("tampered plan storage: {what}")]
    Tampered {
        /// Which object and which check.
        what: String,
    },
    /// An object with the deterministic name exists and differs from what would be written.
    #[error("conflicting object: {what}")]
    Conflict {
        /// Which object and how it differs.
        what: String,
    },
    /// An object left over from a deleted owner still holds the name; garbage collection removes it.
    #[error("stale object: {what}")]
    Stale {
        /// Which object and whose it is.
        what: String,
    },
    /// The API server refused or could not be reached.
    #[error("API request failed: {0}")]
    Api(#[from] kube::Error),
}

impl From<ContractError> for PlanStoreError {
    fn from(err: ContractError) -> Self {
        match err {
            ContractError::Empty => PlanStoreError::Empty,
            ContractError::TooLarge { size, max } => PlanStoreError::TooLarge { size, max },
        }
    }
}

impl PlanStoreError {
    /// Whether retrying the same call later can succeed without anyone changing anything.
    pub fn is_transient(&self) -> bool {
        match self {
            // Publication may still be running, a deletion finishing, or GC catching up.
            PlanStoreError::NotReady { .. }
            | PlanStoreError::Deleting { .. }
            | PlanStoreError::Stale { .. } => true,
            PlanStoreError::Api(err) => api_error_is_transient(err),
            PlanStoreError::Empty
            | PlanStoreError::TooLarge { .. }
            | PlanStoreError::InvalidOwner { .. }
            | PlanStoreError::NotFound { .. }
            | PlanStoreError::UidMismatch { .. }
            | PlanStoreError::Tampered { .. }
            | PlanStoreError::Conflict { .. } => false,
        }
    }
}

/// Server overload, optimistic-concurrency conflicts, timeouts and connection failures pass;
/// refusals (forbidden, invalid, not found) stay until someone changes something.
fn api_error_is_transient(err: &kube::Error) -> bool {
    match err {
        kube::Error::Api(status) => matches!(status.code, 0 | 409 | 429 | 500..=599),
        kube::Error::HyperError(_) | kube::Error::Service(_) | kube::Error::ReadEvents(_) => true,
        _ => false,
    }
}

/// Whether `err` is the API server's 404.
pub(crate) fn is_not_found(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.is_not_found())
}

/// Whether `err` is the API server's AlreadyExists.
pub(crate) fn is_already_exists(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.is_already_exists())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(code: u16, reason: &str) -> PlanStoreError {
        PlanStoreError::Api(kube::Error::Api(Box::new(kube::core::Status {
            code,
            reason: reason.to_owned(),
            ..Default::default()
        })))
    }

    #[test]
    fn transient_and_permanent() {
        assert!(api(503, "ServiceUnavailable").is_transient());
        assert!(api(429, "TooManyRequests").is_transient());
        assert!(api(409, "Conflict").is_transient());
        assert!(!api(403, "Forbidden").is_transient());
        assert!(!api(422, "Invalid").is_transient());
        assert!(
            PlanStoreError::NotReady {
                name: "p".into(),
                why: "x".into()
            }
            .is_transient()
        );
        assert!(PlanStoreError::Stale { what: "c".into() }.is_transient());
        assert!(!PlanStoreError::Tampered { what: "c".into() }.is_transient());
        assert!(!PlanStoreError::from(ContractError::Empty).is_transient());
        assert!(matches!(
            PlanStoreError::from(ContractError::TooLarge { size: 9, max: 8 }),
            PlanStoreError::TooLarge { size: 9, max: 8 }
        ));
    }
}
