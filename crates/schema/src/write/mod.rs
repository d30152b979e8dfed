//! Writers from the model back to documents.

pub mod hcl;
mod mysql;
mod program;
mod security;
mod sequence;
mod words;
