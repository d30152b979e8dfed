//! Bounded-cardinality metrics and tracing setup of the manager.
//!
//! Every metric label is a closed enum, so the number of series a manager can export is fixed by
//! its types: no object name, namespace or error text can ever become a label value.
//!
//! ```
//! use ptah_telemetry::{Kind, Metrics, ReconcileOutcome};
//! let metrics = Metrics::new();
//! metrics.reconciled(Kind::Schema, ReconcileOutcome::Success);
//! assert!(metrics.encode()?.contains(r#"kind="schema""#));
//! # Ok::<(), ptah_telemetry::TelemetryError>(())
//! ```
//!
//! A string, such as an object's name, does not type-check as a label value:
//!
//! ```compile_fail
//! use ptah_telemetry::{Metrics, ReconcileOutcome};
//! let metrics = Metrics::new();
//! metrics.reconciled("orders-db", ReconcileOutcome::Success);
//! ```

mod labels;
mod logging;
mod metrics;
mod requests;

pub use labels::{Kind, Operation, OperationResult, Phase, ReconcileOutcome};
pub use logging::{DEFAULT_FILTER, LogFormat, filter_from, init};
pub use metrics::Metrics;
pub use requests::Verb;

/// Why telemetry could not be set up or exported.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// `RUST_LOG` holds a directive the filter cannot parse; fix or unset it.
    #[error("RUST_LOG is not a valid filter ({0}); unset it for the default `info` or fix the directive")]
    InvalidFilter(String),
    /// A global subscriber was installed already; call `init` once per process.
    #[error(
        "a tracing subscriber is already installed ({0}); call ptah_telemetry::init once, first thing in main"
    )]
    AlreadyInitialized(String),
    /// The log format name is neither `json` nor `pretty`.
    #[error("unknown log format {0:?}; use `json` or `pretty`")]
    UnknownLogFormat(String),
    /// Writing the text exposition failed (a metric refused to encode).
    #[error("cannot encode the metrics exposition: {0}")]
    Encode(#[from] std::fmt::Error),
}
