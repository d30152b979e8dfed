//! One test per guarantee of the PtahSchema lifecycle, each named after it.

mod claims;
mod gates;
mod lifecycle;
mod refusals;
mod rehearsal;
mod severity;
pub(crate) mod situations;
mod world;
