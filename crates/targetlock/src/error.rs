//! The one error type of the crate; contention and lost continuity are results, not errors.

/// Why a Lease operation could not reach an answer.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// A foreign holder's Lease lacks a valid duration or epoch: it is never taken over (fail closed).
    #[error("Lease {lease} is malformed: {why}")]
    Malformed {
        /// The Lease name.
        lease: String,
        /// What is missing or invalid.
        why: String,
    },
    /// Every compare-and-swap attempt lost a race with another writer.
    #[error("Lease changed under {attempts} consecutive compare-and-swap attempts", attempts = crate::MAX_CAS_ATTEMPTS)]
    Conflict,
    /// The requested duration is not whole seconds in the allowed range.
    #[error(
        "Lease duration must be whole seconds in [{min}, {max}]",
        min = crate::MIN_DURATION_SECONDS,
        max = crate::MAX_DURATION_SECONDS
    )]
    InvalidDuration,
    /// The API server refused the request or could not be reached.
    #[error("Lease request failed: {0}")]
    Api(#[from] kube::Error),
}

impl LockError {
    /// Whether retrying the same call later may succeed (contention, throttling, outages).
    pub fn is_transient(&self) -> bool {
        match self {
            LockError::Conflict => true,
            LockError::Malformed { .. } | LockError::InvalidDuration => false,
            LockError::Api(kube::Error::Api(status)) => {
                status.code == 409 || status.code == 429 || status.code >= 500
            }
            // Transport, TLS and service errors: the API server may be back soon.
            LockError::Api(_) => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use kube::core::Status;

    use super::*;

    fn api(code: u16) -> LockError {
        let mut status = Status::failure("x", "y");
        status.code = code;
        LockError::Api(kube::Error::Api(status.boxed()))
    }

    #[test]
    fn transient_errors_are_the_retryable_ones() {
        assert!(LockError::Conflict.is_transient());
        assert!(api(503).is_transient());
        assert!(api(429).is_transient());
        assert!(api(409).is_transient());
        assert!(!api(403).is_transient());
        assert!(!api(422).is_transient());
        assert!(!LockError::InvalidDuration.is_transient());
        assert!(
            !LockError::Malformed {
                lease: "l".into(),
                why: "w".into()
            }
            .is_transient()
        );
    }
}
