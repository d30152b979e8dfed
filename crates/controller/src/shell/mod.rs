//! The shell: gathers what a decision looks at, performs the decided action with kube-rs, and
//! loops until the decision is to wait. It holds no lifecycle logic of its own: no condition is
//! built, no latch set and no sleep taken here; a busy resource is a requeue.

mod census;
mod context;
mod controllers;
mod delivered;
mod delivery;
mod error;
pub mod family;
mod gather;
mod gauges;
mod jobs;
mod migration;
mod perform;
mod results;
mod run;
mod schema;

pub use context::{Context, ManagerConfig, Stores};
pub use controllers::run;
pub use error::{ErrorCategory, ShellError};
pub use perform::{Performed, perform, write_status};
pub use ptah_api::FIELD_MANAGER;
pub use run::{FINALIZER, error_policy, reconcile};
