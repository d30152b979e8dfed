//! References to other objects, the approval policy and the identity of an approver.

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The pattern of a Kubernetes DNS subdomain name (at most 253 characters).
pub const DNS_SUBDOMAIN_PATTERN: &str = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

/// When a published plan may be applied.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum ApplyPolicy {
    /// Plans are published and never applied.
    Never,
    /// Every plan waits for an exact approval.
    #[default]
    OnApproval,
    /// Safe plans apply without approval (destructive and privilege changes still need one).
    Always,
    /// By the plan's severity: a safe plan applies on its own, a warning plan waits for one
    /// approval, and a destructive or privilege-changing one needs an approval and
    /// `allowDestructive`.
    BySeverity,
}

impl ApplyPolicy {
    /// Whether some plans apply with no person's approval (the policies the apply-policy guard
    /// keeps to its exempt groups).
    pub fn applies_unapproved(self) -> bool {
        matches!(self, ApplyPolicy::Always | ApplyPolicy::BySeverity)
    }
}

/// How risky a plan is, as the operator read it: its highest statement's severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
pub enum PlanSeverity {
    /// Additive; cannot lose data or fail on existing rows.
    Safe,
    /// Can fail on existing rows or block writers, but loses nothing.
    Warning,
    /// Can lose data.
    Destructive,
}

/// A name plus the UID the object had: a recreated object with the same name does not match.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct ImmutableObjectReference {
    /// The object's name.
    #[schemars(length(min = 1, max = 253), regex(pattern = DNS_SUBDOMAIN_PATTERN))]
    pub name: String,
    /// The object's UID when it was referenced.
    #[schemars(length(min = 1, max = 128))]
    pub uid: String,
}

/// A reference to a cluster-scoped `PtahRealm` by name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct RealmReference {
    /// The realm's name.
    #[schemars(length(min = 1, max = 253), regex(pattern = DNS_SUBDOMAIN_PATTERN))]
    pub name: String,
}

/// The authenticated identity that approved or acknowledged something (stamped by the webhook).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
pub struct Approver {
    /// The requester's username.
    #[schemars(length(min = 1, max = 512))]
    pub username: String,
    /// The requester's UID, when the authenticator supplies one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 128))]
    pub uid: Option<String>,
    /// The requester's groups, sorted and de-duplicated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64), inner(length(min = 1, max = 512)))]
    #[x_kube(merge_strategy = ListMerge::Set)]
    pub groups: Vec<String>,
}
