//! The admission envelope of an operation Pod: what built-in admission may add to it.
//!
//! Bounded and credential-free; its canonical JSON is digested into `digest`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Toleration;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Sha256Digest;

/// A snapshot of the admission inputs that shape an operation Pod.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodAdmissionSnapshot {
    /// Snapshot format; only `v1`.
    #[schemars(regex(pattern = "^v1$"))]
    pub version: String,
    /// Digest of the snapshot's canonical JSON.
    pub digest: Sha256Digest,
    /// Digest of the Pod template the snapshot was taken for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_digest: Option<Sha256Digest>,
    /// The Pod's service account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account: Option<ServiceAccountSnapshot>,
    /// LimitRanges of the namespace (at most 32).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32))]
    pub limit_ranges: Vec<LimitRangeSnapshot>,
    /// The RuntimeClass, when one is named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_class: Option<RuntimeClassSnapshot>,
    /// The PriorityClass, named or global default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class: Option<PriorityClassSnapshot>,
    /// Whether the DefaultTolerationSeconds plugin is assumed on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_tolerations_enabled: Option<bool>,
    /// Its not-ready toleration seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_not_ready_toleration_seconds: Option<i64>,
    /// Its unreachable toleration seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_unreachable_toleration_seconds: Option<i64>,
    /// Whether ExtendedResourceToleration is assumed on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_resource_toleration_enabled: Option<bool>,
    /// Whether AlwaysPullImages is assumed on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub always_pull_images_enabled: Option<bool>,
}

/// An object read for the snapshot, by name, UID and resource version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionObjectRef {
    /// Name of the object.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// UID of the object.
    #[schemars(length(min = 1, max = 128))]
    pub uid: String,
    /// Resource version that was read.
    #[schemars(length(min = 1, max = 128))]
    pub resource_version: String,
}

/// The service account and the pull secrets it adds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceAccountSnapshot {
    /// The service account object.
    pub object: AdmissionObjectRef,
    /// Names of its image pull secrets (at most 64).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64), inner(length(min = 1, max = 253)))]
    #[x_kube(merge_strategy = ListMerge::Set)]
    pub image_pull_secrets: Vec<String>,
}

/// A LimitRange and the container defaults it injects.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LimitRangeSnapshot {
    /// The LimitRange object.
    pub object: AdmissionObjectRef,
    /// Default requests per resource (at most 64).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 64))]
    pub default_requests: BTreeMap<String, Quantity>,
    /// Default limits per resource (at most 64).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 64))]
    pub default_limits: BTreeMap<String, Quantity>,
}

/// A RuntimeClass and what it adds to a Pod.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeClassSnapshot {
    /// The RuntimeClass object.
    pub object: AdmissionObjectRef,
    /// Its handler.
    #[schemars(length(max = 63))]
    pub handler: String,
    /// Whether it defines Pod overhead.
    #[serde(default)]
    pub overhead_defined: bool,
    /// The Pod overhead it adds.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 64))]
    pub overhead: BTreeMap<String, Quantity>,
    /// The node selector it merges in.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 64))]
    pub node_selector: BTreeMap<String, String>,
    /// The tolerations it merges in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64))]
    pub tolerations: Vec<Toleration>,
}

/// The PriorityClass that resolves the Pod's priority.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PriorityClassSnapshot {
    /// The PriorityClass object, absent when no class applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<AdmissionObjectRef>,
    /// The class name the Pod ends up with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 253))]
    pub name: Option<String>,
    /// The priority value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<i32>,
    /// The preemption policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub preemption_policy: Option<String>,
}
