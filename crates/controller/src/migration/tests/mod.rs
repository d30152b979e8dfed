mod guarantees;
mod outcomes;
pub(crate) mod situations;
mod world;
