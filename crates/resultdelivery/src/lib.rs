//! The contract of durable result delivery (docs/security.md, "Durable result delivery").
//!
//! An operation's runner sends its result over mutual TLS to the manager's receiver, which stores
//! it in `PtahResultRecord` objects. Both sides must agree on three things, and they live here,
//! without Kubernetes, TLS or a database driver:
//! - the [`ResultBinding`]: the one operation a client certificate is good for, carried in the
//!   certificate's only URI SAN ([`binding`]);
//! - the [`ResultBody`]: the binding and the [`ptah_dataplane::ResultPayload`], in canonical JSON
//!   with a sha256 digest header, refused when it is anything else ([`body`]);
//! - how a body is cut into records of at most [`MAX_RECORD_DATA_BYTES`] and put back together
//!   ([`records`]);
//! - the HTTP routes and the enrolment's request and answer ([`wire`]);
//! - the one-time enrolment token the manager draws for a claim ([`token`]).

#![warn(missing_docs)]

pub mod binding;
pub mod body;
pub mod records;
pub mod token;
pub mod wire;

pub use binding::{BindingError, ClaimRef, ObjectRef, ResourceKind, ResourceRef, ResultBinding, stem};
pub use body::{BodyError, EncodedBody, ResultBody};
pub use records::{Intent, ReassemblyError, RecordType, reassemble, split};
pub use token::EnrolmentToken;

/// The most body bytes one `PtahResultRecord` holds: 512 KiB (base64 in the object, well under
/// etcd's 1.5 MiB request limit).
pub const MAX_RECORD_DATA_BYTES: usize = 512 * 1024;

/// Room for the binding and the body's framing beside the payload.
pub const BINDING_HEADROOM_BYTES: usize = 16 * 1024;

/// The largest body a runner sends and a receiver reads: the payload bound plus the binding.
pub const MAX_BODY_BYTES: usize = ptah_dataplane::MAX_PAYLOAD_BYTES + BINDING_HEADROOM_BYTES;

/// The content type of a delivery.
pub const CONTENT_TYPE: &str = "application/vnd.ptah.result.v1+json";

/// The header that carries the body's digest, `sha256:<64 lowercase hex>`.
pub const DIGEST_HEADER: &str = "x-ptah-result-digest";
