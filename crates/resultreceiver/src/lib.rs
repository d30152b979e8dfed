//! The manager's result receiver (docs/security.md, "Durable result delivery").
//!
//! An operation Pod enrols once with the token its claim's digest names and gets a client
//! certificate bound to exactly its operation; it then delivers its result over mutual TLS. This
//! crate holds the receiver's rules: the client certificate it
//! signs ([`issue`]) and reads back ([`identity`]), and the decisions on an
//! enrolment and a delivery from what an uncached read of the claim, its Job and its Pod found
//! ([`decide`]), each refusal typed ([`Refusal`]), and which records have outlived their use
//! ([`retention`]).

#![warn(missing_docs)]

pub mod backend;
pub mod decide;
pub mod identity;
pub mod issue;
pub mod retention;
pub mod routes;
pub mod server;
pub mod testing;

pub use backend::Backend;
pub use decide::{
    DeliveryDecision, EnrolmentRequest, Live, LiveClaim, LiveJob, LivePod, PodPhase, Refusal, Stored,
    admit_delivery, admit_enrolment,
};
pub use identity::{IdentityError, binding_of};
pub use issue::{IssueError, ResultCa, issue_client};
pub use ptah_resultdelivery::EnrolmentToken;
