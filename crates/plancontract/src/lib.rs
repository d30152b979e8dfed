//! Plan byte-size contract (8 MiB, 16 chunks of 512 KiB), chunk maths and the schema plan fingerprint.
//!
//! Pure: the publisher (`ptah-planstore`), the controller, the admission webhook and the runner
//! all compute names, chunk boundaries and fingerprints here, so they cannot disagree.

mod binding;
mod chunks;

pub use binding::{BOUND_FIELDS, binding, fingerprint, plan_fingerprint};
pub use chunks::{
    CHUNK_BYTES, CHUNK_KEY, CONTRACT_VERSION, ContractError, MAX_CHUNKS, MAX_PLAN_BYTES, chunk_name,
    chunk_sizes, plan_name, split,
};
