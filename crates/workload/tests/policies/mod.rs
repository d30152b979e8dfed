//! The parts of `admission_policies.rs`: the refused cases, the owners they run under, and the
//! weakenings each case must catch.

pub mod cases;
pub mod job_cases;
pub mod owners;
pub mod weakening;
