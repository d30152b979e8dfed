//! Publish a schema plan as an immutable PtahSchemaPlan plus chunks, and load it back with every check.
//!
//! Publication is not transactional; it is ordered so that a crash anywhere leaves a state the
//! next `publish` of the same plan resumes from: plan object → chunk objects, each checked as the
//! API server stored it (the answer to its create, or a read of the one already there) →
//! `status` (`publishedChunks`, `Ready=True`). A reader trusts a plan only once `Ready`,
//! and even then re-checks every byte ([`PlanStore::load`]). Every read here goes to the API
//! server, never to a cache. Plan bytes are never logged.

mod error;
mod load;
mod objects;
mod project;
mod publish;
mod ready;

pub use error::PlanStoreError;
pub use load::LoadedPlan;
pub use objects::{LABEL_PLAN, LABEL_SCHEMA};

use kube::Client;

/// The field manager that writes plan status (server-side apply) unless told otherwise.
pub const DEFAULT_FIELD_MANAGER: &str = ptah_api::FIELD_MANAGER;

/// Publishes, loads and projects schema plans in the cluster behind one client.
#[derive(Clone)]
pub struct PlanStore {
    client: Client,
    field_manager: String,
}

impl PlanStore {
    /// A store over `client`, writing status as [`DEFAULT_FIELD_MANAGER`].
    pub fn new(client: Client) -> Self {
        PlanStore {
            client,
            field_manager: DEFAULT_FIELD_MANAGER.to_owned(),
        }
    }

    /// The same store writing status under another field manager.
    pub fn with_field_manager(mut self, field_manager: &str) -> Self {
        field_manager.clone_into(&mut self.field_manager);
        self
    }
}
