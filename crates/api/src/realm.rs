//! `PtahRealm`: a cluster administrator's grant of one database to a list of namespaces.

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::shared::DatabaseEngine;

/// Pattern of a DNS label (a namespace name).
pub const DNS_LABEL_PATTERN: &str = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

/// Whether several resources may claim the realm at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum RealmSharing {
    /// One claimant at a time.
    #[default]
    Exclusive,
    /// Several claimants, each declaring `sharedRealm`.
    Shared,
}

/// A cluster-scoped database grant; the manager only reads it (no status).
#[derive(CustomResource, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[kube(
    group = "operator.ptah.run",
    version = "v1alpha1",
    kind = "PtahRealm",
    plural = "ptahrealms",
    shortname = "ptahr",
    category = "ptah",
    derive = "PartialEq",
    printcolumn(name = "Engine", type_ = "string", json_path = ".spec.engine"),
    printcolumn(name = "Sharing", type_ = "string", json_path = ".spec.sharing"),
    printcolumn(name = "Namespaces", type_ = "string", json_path = ".spec.namespaces"),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp")
)]
pub struct PtahRealmSpec {
    /// The database family; immutable.
    #[x_kube(validation = Rule::new("self == oldSelf").message("engine is immutable"))]
    pub engine: DatabaseEngine,
    /// The namespaces granted the database, by name (1–256; no selector by design).
    #[schemars(length(min = 1, max = 256), inner(length(min = 1, max = 63), regex(pattern = DNS_LABEL_PATTERN)))]
    #[x_kube(merge_strategy = ListMerge::Set)]
    pub namespaces: Vec<String>,
    /// Whether several resources may claim it.
    #[serde(default)]
    pub sharing: RealmSharing,
}
