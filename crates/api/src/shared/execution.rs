//! How the operation Jobs of one resource run: deadlines, timeouts, scheduling, extra metadata.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Affinity, LocalObjectReference, ResourceRequirements, Toleration};
use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use super::GoDuration;

/// Label and annotation keys a user may not set on operation Pods: the operator's own domain,
/// Kubernetes' domains (and their subdomains), and the bare keys the Job controller uses.
pub(crate) const RESERVED_POD_METADATA_RULE: &str = "self.all(k, !k.matches('^((?:[^/]*\\\\.)?(?:ptah\\\\.run|kubernetes\\\\.io|k8s\\\\.io)/|(?:controller-uid|job-name)$)'))";

const RESERVED_POD_METADATA_MESSAGE: &str = "keys under ptah.run, kubernetes.io, k8s.io (or their subdomains) and the bare keys controller-uid and job-name are reserved";

fn default_active_deadline_seconds() -> i64 {
    900
}

fn default_failure_retry_interval() -> GoDuration {
    GoDuration::literal("30s", 30)
}

fn default_connect_timeout() -> GoDuration {
    GoDuration::literal("10s", 10)
}

/// Settings of the Jobs that run this resource's operations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(self.connectTimeout) || duration(self.connectTimeout).getMilliseconds() <= (has(self.activeDeadlineSeconds) ? self.activeDeadlineSeconds : 900) * 1000").message("connectTimeout must not exceed activeDeadlineSeconds").field_path(".connectTimeout"))]
pub struct ExecutionSpec {
    /// The Job deadline in seconds (30–86400).
    #[serde(default = "default_active_deadline_seconds")]
    #[schemars(range(min = 30, max = 86400))]
    pub active_deadline_seconds: i64,
    /// How long to wait before retrying a failed operation (5s–1h).
    #[serde(default = "default_failure_retry_interval")]
    #[x_kube(validation = Rule::new("duration(self) >= duration('5s') && duration(self) <= duration('1h')").message("failureRetryInterval must be between 5s and 1h"))]
    pub failure_retry_interval: GoDuration,
    /// How long the executor waits to connect to the database (1s–10m).
    #[serde(default = "default_connect_timeout")]
    #[x_kube(validation = Rule::new("duration(self) >= duration('1s') && duration(self) <= duration('10m')").message("connectTimeout must be between 1s and 10m"))]
    pub connect_timeout: GoDuration,
    /// Resources of the main and init containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    /// The Pod's service account (it needs no Kubernetes permission).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub service_account_name: Option<String>,
    /// Pull secrets for the executor and runner images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub image_pull_secrets: Option<Vec<LocalObjectReference>>,
    /// Node selector of the Pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<BTreeMap<String, String>>,
    /// Tolerations of the Pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerations: Option<Vec<Toleration>>,
    /// Affinity of the Pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,
    /// RuntimeClass of the Pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub runtime_class_name: Option<String>,
    /// PriorityClass of the Pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub priority_class_name: Option<String>,
    /// Extra labels and annotations for the Pod (service meshes, policy engines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_metadata: Option<PodMetadata>,
}

impl Default for ExecutionSpec {
    fn default() -> Self {
        ExecutionSpec {
            active_deadline_seconds: default_active_deadline_seconds(),
            failure_retry_interval: default_failure_retry_interval(),
            connect_timeout: default_connect_timeout(),
            resources: None,
            service_account_name: None,
            image_pull_secrets: None,
            node_selector: None,
            tolerations: None,
            affinity: None,
            runtime_class_name: None,
            priority_class_name: None,
            pod_metadata: None,
        }
    }
}

/// Extra Pod labels and annotations; reserved keys are refused.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
pub struct PodMetadata {
    /// Extra Pod labels (at most 16).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 16, "additionalProperties" = {"type": "string", "maxLength": 63}))]
    #[x_kube(validation = Rule::new(RESERVED_POD_METADATA_RULE).message(RESERVED_POD_METADATA_MESSAGE))]
    pub labels: BTreeMap<String, String>,
    /// Extra Pod annotations (at most 16, each value at most 1024 bytes).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 16, "additionalProperties" = {"type": "string", "maxLength": 1024}))]
    #[x_kube(validation = Rule::new(RESERVED_POD_METADATA_RULE).message(RESERVED_POD_METADATA_MESSAGE))]
    #[x_kube(validation = Rule::new("self.all(k, size(bytes(self[k])) <= 1024)").message("annotation values are limited to 1024 bytes"))]
    pub annotations: BTreeMap<String, String>,
}
