//! What one decision asks the shell to do: exactly one step, durable order preserved.

use ptah_api::{PtahSchemaPlanSpec, PtahSchemaStatus};

pub use crate::operation::Event;

/// A plan to publish before the status that names it is written.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanDraft {
    /// The plan object's spec; the store fills digests, size, chunks and fingerprint.
    pub spec: PtahSchemaPlanSpec,
    /// The plan document bytes.
    pub bytes: Vec<u8>,
}

/// One step of the PtahSchema lifecycle.
pub type Action = crate::operation::Action<PtahSchemaStatus, PlanDraft>;
/// A Lease renewal of a running PtahSchema claim.
pub type Renewal = crate::operation::Renewal<PtahSchemaStatus>;
