//! Selectors of one key in a Secret or ConfigMap, always mandatory.
//!
//! The wire shape is Kubernetes' own (`name`, `key`, `optional`); the CRD refuses an empty name or
//! key and `optional: true`, because the operator never runs with a missing credential or policy.

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

/// One key of a Secret in the resource's namespace (read only by the kubelet, never the manager).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, KubeSchema)]
#[x_kube(validation = Rule::new("self.name != '' && self.key != ''").message("name and key must both be non-empty"))]
#[x_kube(validation = Rule::new("!has(self.optional) || !self.optional").message("the selector may not be optional"))]
pub struct SecretKeySelector {
    /// The Secret's name.
    #[schemars(length(max = 253))]
    pub name: String,
    /// The key inside the Secret.
    #[schemars(length(max = 253))]
    pub key: String,
    /// Must be absent or false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

/// One key of a ConfigMap in the resource's namespace.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, KubeSchema)]
#[x_kube(validation = Rule::new("self.name != '' && self.key != ''").message("name and key must both be non-empty"))]
#[x_kube(validation = Rule::new("!has(self.optional) || !self.optional").message("the selector may not be optional"))]
pub struct ConfigMapKeySelector {
    /// The ConfigMap's name.
    #[schemars(length(max = 253))]
    pub name: String,
    /// The key inside the ConfigMap.
    #[schemars(length(max = 253))]
    pub key: String,
    /// Must be absent or false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

impl SecretKeySelector {
    /// A mandatory selector of `key` in Secret `name`.
    pub fn new(name: impl Into<String>, key: impl Into<String>) -> Self {
        SecretKeySelector {
            name: name.into(),
            key: key.into(),
            optional: None,
        }
    }
}

impl ConfigMapKeySelector {
    /// A mandatory selector of `key` in ConfigMap `name`.
    pub fn new(name: impl Into<String>, key: impl Into<String>) -> Self {
        ConfigMapKeySelector {
            name: name.into(),
            key: key.into(),
            optional: None,
        }
    }
}
