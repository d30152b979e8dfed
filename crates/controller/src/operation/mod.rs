//! The operation mechanism both families share: the claim protocol (finalizer, claim, Lease
//! epoch, `dispatchStarted`, one create, read-back, TTL, one-Pod result), result binding, and the
//! Lease release staged after the durable write. The models (`schema`, `migration`) decide what
//! each outcome means for them; this module decides only what the claim's Job and result say.

pub mod action;
pub mod bind;
pub mod claim;
pub mod job;
pub mod observed;
pub mod prestart;
pub mod refusal;
pub mod source;
pub mod supervise;
pub mod time;

pub use action::{Action, Event, Renewal};
pub use claim::{Claim, LeaseHold};
pub use observed::{Binding, Finished, InitFailure, JobState, Meta, PolicyRead, Realm, ResultRead, Stuck};
pub use supervise::{Supervision, supervise};
