//! The shell: gathers what a decision looks at, performs the decided action with kube-rs, and
//! loops until the decision is to wait. It holds no lifecycle logic of its own.

mod context;
mod gather;
mod perform;
mod results;
mod run;

pub use context::{Context, ManagerConfig};
pub use perform::write_status;
pub use run::{FIELD_MANAGER, FINALIZER, ShellError, error_policy, reconcile, run};
