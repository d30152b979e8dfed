mod guarantees;
mod outcomes;
mod refusals;
pub(crate) mod situations;
mod world;
