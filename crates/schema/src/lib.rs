//! The schema model, its readers, the differ and the planner. Pure: no database, no Kubernetes.

pub mod classify;
pub mod diff;
pub mod model;
pub mod names;
pub mod normalize;
pub mod plan;
mod planner;
pub mod read;
pub mod render;
pub mod types;
pub mod write;

pub use model::*;
pub use plan::{PLAN_FORMAT_VERSION, Plan, PlannedStatement, Severity, StatementLock};
pub use planner::{Drift, PlanError, PlanOptions, drift, plan, plan_for};
pub use render::MysqlFlavor;
