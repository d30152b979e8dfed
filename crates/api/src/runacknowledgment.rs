//! `PtahMigrationRunAcknowledgment`: a person's statement that an unresolved run was dealt with.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use crate::shared::{Approver, DecisionStatus, ImmutableObjectReference, Sha256Digest};

/// Acknowledges the unresolved run of a PtahMigration, naming its operation ID. Ends `Consumed`
/// (reason `RunAcknowledged`) or `Stale` (reason `RunNotUnresolved`).
#[derive(CustomResource, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[kube(
    group = "operator.ptah.run",
    version = "v1alpha1",
    kind = "PtahMigrationRunAcknowledgment",
    plural = "ptahmigrationrunacknowledgments",
    namespaced,
    status = "DecisionStatus",
    shortname = "ptahmack",
    category = "ptah",
    derive = "PartialEq",
    printcolumn(name = "Migration", type_ = "string", json_path = ".spec.migrationRef.name"),
    printcolumn(
        name = "Acknowledged By",
        type_ = "string",
        json_path = ".spec.acknowledgedBy.username"
    ),
    printcolumn(
        name = "Consumed",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"Consumed\")].status"
    ),
    printcolumn(
        name = "Stale",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"Stale\")].status"
    ),
    printcolumn(
        name = "Operation",
        type_ = "string",
        json_path = ".spec.operationID",
        priority = 1
    ),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp")
)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("self == oldSelf").message("an acknowledgment is immutable"))]
pub struct PtahMigrationRunAcknowledgmentSpec {
    /// The PtahMigration, by name and UID.
    pub migration_ref: ImmutableObjectReference,
    /// The unresolved run's operation ID (`status.unresolvedRun.operationID`).
    #[serde(rename = "operationID")]
    pub operation_id: Sha256Digest,
    /// Who acknowledged (stamped by the webhook).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acknowledged_by: Option<Approver>,
    /// When (stamped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acknowledged_at: Option<Time>,
    /// UID of the mutating admission request (stamped).
    #[serde(
        default,
        rename = "mutationRequestUID",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(min = 1, max = 128))]
    pub mutation_request_uid: Option<String>,
}
