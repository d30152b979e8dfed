//! What both families observe about the world: identity, realm, policy, the claim's Job and its
//! result. Plain values gathered by the shell, so every guarantee is testable without a cluster.

use ptah_api::shared::{Epoch, PinnedImage, Sha256Digest};
use ptah_dataplane::ResultPayload;
use ptah_targetlock::census::CensusVerdict;

/// The manager's identity and the execution binding every result is bound to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    /// The current execution-binding epoch.
    pub epoch: Epoch,
    /// The controller-state version.
    pub controller_state_version: i64,
    /// The executor's version.
    pub ptah_version: String,
    /// The executor image (digest-pinned).
    pub executor_image: PinnedImage,
    /// The runner image (digest-pinned).
    pub runner_image: PinnedImage,
    /// The runner protocol version the manager expects.
    pub runner_protocol_version: i64,
    /// The manager's own image.
    pub controller_image: String,
    /// The manager's revision.
    pub controller_revision: String,
    /// Where operation Pods deliver their results durably; `None`: through their logs.
    pub result_endpoint: Option<ResultEndpoint>,
}

/// Where operation Pods deliver their results durably: the manager's receiver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultEndpoint {
    /// `host:port` the Pods connect to.
    pub endpoint: String,
    /// The DNS name on the receiver's certificate.
    pub server_name: String,
}

impl Binding {
    /// The status record of this binding.
    pub fn status(&self) -> ptah_api::shared::ExecutionBindingStatus {
        ptah_api::shared::ExecutionBindingStatus {
            epoch: Some(self.epoch.clone()),
            controller_state_version: Some(self.controller_state_version),
            ptah_version: Some(self.ptah_version.clone()),
            executor_image: Some(self.executor_image.clone()),
            runner_protocol_version: Some(self.runner_protocol_version),
        }
    }
}

/// The resource's identity and lifecycle metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// UID.
    pub uid: String,
    /// `metadata.generation`.
    pub generation: i64,
    /// A deletion timestamp is set.
    pub deleting: bool,
    /// Our finalizer is present.
    pub has_finalizer: bool,
}

/// Whether the resource may claim its realm.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Realm {
    /// The engine is not supported: no Job may run.
    UnsupportedEngine,
    /// `realmRef` names a PtahRealm that does not authorize this namespace and engine (or is missing).
    NotAuthorized,
    /// The realm and what the census says about it.
    Claimable {
        /// The canonical engine (`postgresql`, `mysql`).
        engine: &'static str,
        /// The realm identity.
        coordination_digest: Sha256Digest,
        /// Other claimants of the same realm, of either kind.
        census: CensusVerdict,
    },
}

impl Realm {
    /// The realm identity when it may be claimed.
    pub fn digest(&self) -> Option<&Sha256Digest> {
        match self {
            Realm::Claimable {
                coordination_digest, ..
            } => Some(coordination_digest),
            _ => None,
        }
    }
}

/// The verification-policy ConfigMap as read uncached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicyRead {
    /// Readable, immutable, with the key present.
    Ok {
        /// The ConfigMap's UID.
        uid: String,
        /// sha256 of the policy bytes.
        digest: Sha256Digest,
    },
    /// Missing, mutable or without the key: a configuration error the user must fix.
    Refused(String),
}

/// The Job of the active claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobState {
    /// No Job has the claim's name.
    Absent,
    /// A Job has the claim's name.
    Present {
        /// Its UID.
        uid: String,
        /// It equals the Job the claim would build (owner, labels, annotations, spec).
        matches_intent: bool,
        /// Terminal state, if finished (its condition, or its one Pod having ended).
        finished: Option<Finished>,
        /// The cleanup TTL is set.
        ttl_set: bool,
        /// A container of its Pod that cannot start (an image that cannot be pulled, a missing
        /// Secret or key), when that is visible.
        stuck: Option<Stuck>,
    },
}

/// A container of the claim's Pod waiting on something that will not come by itself, as the
/// kubelet reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stuck {
    /// The Pod.
    pub pod: String,
    /// The container (an init container or the main one).
    pub container: String,
    /// The kubelet's waiting reason (`CreateContainerConfigError`, `ImagePullBackOff`, …).
    pub reason: String,
    /// The kubelet's message.
    pub message: String,
}

impl std::fmt::Display for Stuck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Pod {} container {}: {}: {}",
            self.pod, self.container, self.reason, self.message
        )
    }
}

/// An init container of the claim's one Pod that exited non-zero: the main container, the only
/// one that may hold a database credential, never started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InitFailure {
    /// The init container (`fetch-schema`, `fetch-migrations`).
    pub container: String,
    /// Its exit code.
    pub exit_code: i32,
    /// Its termination message as the kubelet recorded it: `ptah`'s error line, or anything.
    pub message: Option<String>,
}

/// How a Job finished: its condition, or before that its one Pod's phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finished {
    /// `Complete`, or the Pod `Succeeded`.
    Succeeded,
    /// `Failed` (including the deadline), or the Pod `Failed`.
    Failed,
    /// The Pod's main container has exited but neither the Pod nor the Job is terminal yet: a
    /// result that cannot be read now is waited for, not judged (its log may still be flushing).
    Exited,
}

/// What the Pods of a finished Job said.
#[derive(Clone, Debug, PartialEq)]
pub enum ResultRead {
    /// Not read (the Job is not finished, or the claim does not need it).
    NotRead,
    /// The log could not be read now; try again shortly.
    Unavailable(String),
    /// Exactly one Pod, and its log held a valid frame.
    Frame(Box<ResultPayload>),
    /// Exactly one Pod, without a valid frame (lost, truncated or malformed).
    NoFrame(String),
    /// More or fewer than one Pod ran: nothing can be attributed.
    PodCount(usize),
    /// Exactly one Pod, stopped by an init container before its main container started.
    InitFailed(InitFailure),
}
