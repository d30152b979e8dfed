//! What the receiver reads and writes in Kubernetes. The manager implements it with uncached
//! reads of the claim, its Job and its Pod, and with `PtahResultRecord` creates; the tests with
//! a table in memory.

use std::future::Future;

use ptah_dataplane::OperationId;
use ptah_resultdelivery::{EncodedBody, ResourceKind, ResultBinding};

use crate::{Live, Stored};

/// The resource and Pod an enrolment names, before anything is verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnrolmentTarget {
    /// The resource's namespace.
    pub namespace: String,
    /// The resource's kind.
    pub kind: ResourceKind,
    /// The resource's name.
    pub name: String,
    /// The claim's operation id.
    pub operation_id: OperationId,
    /// The Pod's name.
    pub pod_name: String,
}

/// A read or write that did not happen (the API server unreachable, a timeout): the client
/// should retry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the receiver cannot reach the API server: {0}")]
pub struct Unavailable(pub String);

/// The receiver's view of, and writes to, the cluster.
pub trait Backend: Send + Sync + 'static {
    /// Uncached reads of the claim of `target`'s resource, the claim's Job and `target`'s Pod.
    fn live_for_enrolment(
        &self,
        target: &EnrolmentTarget,
    ) -> impl Future<Output = Result<Live, Unavailable>> + Send;

    /// Uncached reads of the claim, Job and Pod a client certificate's binding names.
    fn live_for_binding(
        &self,
        binding: &ResultBinding,
    ) -> impl Future<Output = Result<Live, Unavailable>> + Send;

    /// Creates the operation's one-time `credential` record; `Ok(false)` when it exists already
    /// (another replica, or an earlier enrolment, got there first).
    fn create_credential(
        &self,
        binding: &ResultBinding,
    ) -> impl Future<Output = Result<bool, Unavailable>> + Send;

    /// What is stored for the binding's operation.
    fn stored(&self, binding: &ResultBinding) -> impl Future<Output = Result<Stored, Unavailable>> + Send;

    /// Stores a body as [`ptah_resultdelivery::split`] cuts it: the `intent`, then every chunk in
    /// order, then `complete`. Records that exist already with the same content count as written,
    /// so a cut-short delivery finishes.
    fn store(
        &self,
        binding: &ResultBinding,
        body: &EncodedBody,
    ) -> impl Future<Output = Result<(), Unavailable>> + Send;
}
