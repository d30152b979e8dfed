//! Why an invocation failed, and the exit code each failure gives a script.

use ptah_planstore::PlanStoreError;

/// The documented exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// 0: printed (or approved).
    Printed = 0,
    /// 1: a read failed or a plan failed verification.
    Failed = 1,
    /// 2: usage (bad arguments, a question nobody answered).
    Usage = 2,
    /// 3: nothing is stored (no plan yet, no history yet).
    NothingStored = 3,
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(code: ExitCode) -> Self {
        std::process::ExitCode::from(code as u8)
    }
}

/// Why an invocation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The kubeconfig or context cannot be used.
    #[error("cannot use the kubeconfig: {0}")]
    Config(String),
    /// An API request failed.
    #[error("{what}: {source}")]
    Api {
        /// What was being read or written.
        what: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// No object of that name.
    #[error("{0}")]
    NotFound(String),
    /// The object exists but holds nothing to show yet.
    #[error("{0}")]
    NothingStored(String),
    /// The plan failed a check; it is never shown.
    #[error("plan {name} REFUSED, not shown: {reason}")]
    Refused {
        /// The plan.
        name: String,
        /// The failed check.
        reason: String,
    },
    /// The object to create exists already.
    #[error("{0}")]
    Exists(String),
    /// The approval was not confirmed.
    #[error("{0}")]
    NotConfirmed(String),
    /// Writing the output failed.
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}

impl Error {
    /// The exit code this failure gives.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Error::Config(_) | Error::NotConfirmed(_) => ExitCode::Usage,
            Error::NothingStored(_) => ExitCode::NothingStored,
            Error::Api { .. }
            | Error::NotFound(_)
            | Error::Exists(_)
            | Error::Refused { .. }
            | Error::Output(_) => ExitCode::Failed,
        }
    }

    /// A failed API request about `what`.
    pub(crate) fn api(what: impl Into<String>) -> impl FnOnce(kube::Error) -> Error {
        let what = what.into();
        move |source| Error::Api { what, source }
    }

    /// A plan the store refused to load.
    pub(crate) fn refused(name: &str, err: &PlanStoreError) -> Error {
        Error::Refused {
            name: name.to_owned(),
            reason: err.to_string(),
        }
    }
}

/// Whether a client error is a 404.
pub(crate) fn is_not_found(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.is_not_found())
}
