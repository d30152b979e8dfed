mod guarantees;
mod lint;
mod outcomes;
mod refusals;
mod severity;
pub(crate) mod situations;
mod world;
