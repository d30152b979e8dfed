mod guarantees;
mod outcomes;
mod world;
