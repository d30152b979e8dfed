//! The steps of the PtahMigration lifecycle.

use ptah_api::{PtahMigrationPlanSpec, PtahMigrationStatus};

pub use crate::operation::Event;

/// A migration plan to publish before the status that names it is written.
#[derive(Clone, Debug, PartialEq)]
pub struct MigrationPlanDraft {
    /// The deterministic name (`ptah-mplan-<24 hex>` of the fingerprint).
    pub name: String,
    /// The plan object's spec.
    pub spec: PtahMigrationPlanSpec,
}

/// One step of the PtahMigration lifecycle.
pub type Action = crate::operation::Action<PtahMigrationStatus, MigrationPlanDraft>;
/// A Lease renewal of a running PtahMigration Apply.
pub type Renewal = crate::operation::Renewal<PtahMigrationStatus>;
