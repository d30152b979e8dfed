//! The schema model, its readers, the differ and the planner. Pure: no database, no Kubernetes.

pub mod model;
pub mod normalize;
pub mod plan;
pub mod types;

pub use model::*;
pub use plan::{PLAN_FORMAT_VERSION, Plan, PlannedStatement, Severity};
