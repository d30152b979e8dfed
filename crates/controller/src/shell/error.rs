//! Why a pass could not finish, and the category that decides its backoff.

use std::time::Duration;

/// Why a pass could not finish.
#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    /// The API server refused or failed a call.
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    /// The plan store failed.
    #[error("plan store: {0}")]
    Plan(#[from] ptah_planstore::PlanStoreError),
    /// The realm Lease could not be handled.
    #[error("realm lease: {0}")]
    Lease(#[from] ptah_targetlock::LockError),
    /// The claim could not become a Job.
    #[error("building the Job: {0}")]
    Build(String),
    /// Durable result delivery could not be prepared (no token could be drawn).
    #[error("result delivery: {0}")]
    ResultDelivery(String),
    /// An object lacks what the API guarantees.
    #[error("invalid object: {0}")]
    Invalid(&'static str),
}

/// What kind of failure a pass met; each has its own backoff and log level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCategory {
    /// A write from a stale read was refused (409): optimistic concurrency doing its job. The
    /// next pass reads the newer state at once.
    Conflict,
    /// The API server is unreachable, overloaded or failing (429, 5xx, transport): retried soon.
    Transient,
    /// Something only a person can fix (403, 422, an invalid object, a claim that cannot become
    /// a Job): retried slowly.
    Configuration,
}

impl ErrorCategory {
    /// The backoff of the category.
    pub fn backoff(self) -> Duration {
        match self {
            ErrorCategory::Conflict => Duration::ZERO,
            ErrorCategory::Transient => Duration::from_secs(5),
            ErrorCategory::Configuration => Duration::from_secs(60),
        }
    }
}

fn of_kube(e: &kube::Error) -> ErrorCategory {
    match e {
        kube::Error::Api(s) if s.code == 409 => ErrorCategory::Conflict,
        kube::Error::Api(s) if s.code == 429 || s.code >= 500 || s.code == 404 => ErrorCategory::Transient,
        kube::Error::Api(_) => ErrorCategory::Configuration,
        // Transport, TLS and service errors: the API server may be back soon.
        _ => ErrorCategory::Transient,
    }
}

impl ShellError {
    /// The category of this failure.
    pub fn category(&self) -> ErrorCategory {
        use ptah_planstore::PlanStoreError as P;
        use ptah_targetlock::LockError as L;
        match self {
            ShellError::Kube(e) | ShellError::Plan(P::Api(e)) | ShellError::Lease(L::Api(e)) => of_kube(e),
            ShellError::Lease(L::Conflict) | ShellError::Plan(P::Conflict { .. } | P::Stale { .. }) => {
                ErrorCategory::Conflict
            }
            ShellError::Plan(P::NotReady { .. } | P::Deleting { .. } | P::NotFound { .. })
            | ShellError::ResultDelivery(_) => ErrorCategory::Transient,
            ShellError::Plan(_) | ShellError::Lease(_) | ShellError::Build(_) | ShellError::Invalid(_) => {
                ErrorCategory::Configuration
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(code: u16) -> ShellError {
        let mut status = kube::core::Status::failure("x", "y");
        status.code = code;
        ShellError::Kube(kube::Error::Api(status.boxed()))
    }

    #[test]
    fn a_conflict_from_a_stale_read_is_requeued_at_once() {
        assert_eq!(api(409).category(), ErrorCategory::Conflict);
        assert_eq!(ErrorCategory::Conflict.backoff(), Duration::ZERO);
        assert_eq!(
            ShellError::Lease(ptah_targetlock::LockError::Conflict).category(),
            ErrorCategory::Conflict
        );
    }

    #[test]
    fn server_trouble_is_transient_and_refusals_are_configuration() {
        assert_eq!(api(503).category(), ErrorCategory::Transient);
        assert_eq!(api(429).category(), ErrorCategory::Transient);
        assert_eq!(api(403).category(), ErrorCategory::Configuration);
        assert_eq!(api(422).category(), ErrorCategory::Configuration);
        assert_eq!(
            ShellError::Build("x".into()).category(),
            ErrorCategory::Configuration
        );
        assert!(ErrorCategory::Transient.backoff() < ErrorCategory::Configuration.backoff());
    }
}
