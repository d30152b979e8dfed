//! Types shared by several kinds: database targets, artifact sources, execution settings,
//! selectors, identities and the status blocks both resource families record.

mod admission;
mod binding;
mod duration;
mod engine;
mod execution;
mod identity;
mod references;
mod selectors;
mod source;
mod status;
mod target;

pub use admission::{
    AdmissionObjectRef, LimitRangeSnapshot, PodAdmissionSnapshot, PriorityClassSnapshot,
    RuntimeClassSnapshot, ServiceAccountSnapshot,
};
pub use binding::{ApprovalBindingCopies, PRINTABLE_TRIMMED_PATTERN, PlanExecutionBinding};
pub use duration::{DurationError, GoDuration};
pub use engine::{CanonicalEngine, DatabaseEngine, EngineFamily};
pub use execution::{ExecutionSpec, PodMetadata};
pub use identity::{Epoch, IdentityError, PinnedImage, Sha256Digest};
pub use references::{
    ApplyPolicy, Approver, DNS_SUBDOMAIN_PATTERN, ImmutableObjectReference, PlanSeverity, RealmReference,
};
pub use selectors::{ConfigMapKeySelector, SecretKeySelector};
pub use source::{OCIArtifactSourceSpec, RegistryAuthMode, RegistryAuthSpec, TransportSpec};
pub use status::{
    ArtifactSourceStatus, DecisionStatus, ExecutionBindingStatus, OperationRefusal, OperationSource,
    OperationTarget, PendingLockRelease,
};
pub use target::{Coordination, DatabaseTargetSpec};
