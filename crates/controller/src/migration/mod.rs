//! The PtahMigration lifecycle as a pure decision over observed state: Resolve → Verify →
//! History → plan (controller-side, no Job) → approval gate → Apply (`--expect-sequence`) →
//! a second History reading. Partial or unknown outcomes are recorded, never retried.

pub mod action;
pub mod claim;
mod cycle;
pub mod decide;
pub mod gate;
mod history;
pub mod intent;
pub mod observed;
pub mod plan;
mod record;
mod refused;
mod settle;
mod start;

pub use action::{Action, MigrationPlanDraft, Renewal};
pub use decide::decide;
pub use observed::{AcknowledgmentView, ApprovalView, Observed, PlanState};
pub use settle::MIGRATION_ARTIFACT_TYPE;

#[cfg(test)]
pub(crate) mod tests;
