mod guarantees;
mod lint;
mod outcomes;
mod refusals;
pub(crate) mod situations;
mod world;
