//! The PtahSchema lifecycle as a pure decision over observed state.

pub mod action;
pub mod claim;
pub mod classify;
mod cycle;
pub mod decide;
pub mod gate;
pub mod intent;
pub mod observed;
pub mod record;
pub mod rehearsal;
mod settle;
mod start;

pub use action::{Action, Event, PlanDraft, Renewal};
pub use decide::decide;
pub use observed::{
    ApprovalView, Binding, Finished, JobState, Meta, Observed, PlanState, PolicyRead, Realm, ResultRead,
};
pub use settle::SCHEMA_ARTIFACT_TYPE;

#[cfg(test)]
pub(crate) mod tests;
