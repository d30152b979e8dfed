//! What the shell needs to know about a family to perform the mechanism's steps for it.

use std::{fmt::Debug, future::Future};

use kube::{Resource, core::NamespaceResourceScope};
use serde::{Serialize, de::DeserializeOwned};

use super::{Context, ShellError};
use crate::operation::{Action, Claim};

/// A resource kind the manager reconciles.
pub trait Managed:
    Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Clone
    + Debug
    + Serialize
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
    /// Its status.
    type Status: Serialize + Clone + Default + Debug + PartialEq + Send + Sync;
    /// Its claim.
    type Claim: Claim + Clone + Send + Sync;
    /// The kind name.
    const KIND: &'static str;
    /// The kind as a result binding names it.
    const RESULT_KIND: ptah_resultdelivery::ResourceKind;
    /// The metrics label of the kind.
    const TELEMETRY: ptah_telemetry::Kind;
    /// The recorded status, if any.
    fn status_of(&self) -> Option<&Self::Status>;
    /// The active claim of a status.
    fn claim_of(status: &Self::Status) -> Option<&Self::Claim>;
    /// The active claim of a status, to record what an action produced (a Lease epoch).
    fn claim_of_mut(status: &mut Self::Status) -> Option<&mut Self::Claim>;
    /// How a dispatched claim of `before` ended, when `after` retires it (for the results metric).
    fn settled(before: &Self::Status, after: &Self::Status) -> Option<ptah_telemetry::OperationResult>;
}

/// The shared part of [`Managed::settled`]: the dispatched claim of `before` is gone from `after`.
pub fn retired<'a, C: Claim>(before: Option<&'a C>, after: Option<&C>) -> Option<&'a C> {
    let b = before.filter(|c| c.dispatched())?;
    (after.map(Claim::id) != Some(b.id())).then_some(b)
}

/// A family's lifecycle: how the shell gathers what its decision reads, decides, and performs
/// the steps only that family has (building its Job, publishing its plan, marking its decisions).
pub trait Lifecycle: Managed {
    /// Everything the decision borrows, owned.
    type Gathered: Send + Sync;
    /// A plan to publish.
    type Draft: Debug + Send + Sync;
    /// Reads everything the decision needs.
    fn gather(ctx: &Context, res: &Self) -> impl Future<Output = Result<Self::Gathered, ShellError>> + Send;
    /// The pure decision over what was gathered.
    fn decide(
        ctx: &Context,
        res: &Self,
        g: &Self::Gathered,
        now: jiff::Timestamp,
    ) -> Action<Self::Status, Self::Draft>;
    /// Builds the claim's Job (projecting what it mounts first, when it needs to); called before
    /// `dispatchStarted` is written, so a failure here commits nothing.
    fn build_job(
        ctx: &Context,
        res: &Self,
        g: &Self::Gathered,
        status: &Self::Status,
        plan: Option<&ptah_api::shared::ImmutableObjectReference>,
    ) -> impl Future<Output = Result<k8s_openapi::api::batch::v1::Job, ShellError>> + Send;
    /// Publishes a plan (idempotent) and records its name and UID in `status`.
    fn publish_plan(
        ctx: &Context,
        res: &Self,
        draft: Self::Draft,
        status: &mut Self::Status,
    ) -> impl Future<Output = Result<(), ShellError>> + Send;
    /// Marks decisions (approvals or acknowledgments) of this family consumed or stale.
    fn mark(
        ctx: &Context,
        namespace: &str,
        what: Decision,
        name: &str,
        consumed: bool,
    ) -> impl Future<Output = Result<(), ShellError>> + Send;
}

/// Which kind of decision object a mark is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// An approval of a plan.
    Approval,
    /// A run acknowledgment.
    Acknowledgment,
}
