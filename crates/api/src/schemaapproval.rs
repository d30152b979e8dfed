//! `PtahSchemaApproval`: one person's immutable approval of one exact schema plan.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use crate::shared::{
    ApprovalBindingCopies, Approver, DecisionStatus, ImmutableObjectReference, Sha256Digest,
};

/// An approval of one schema plan. A person supplies the three references; the admission webhook
/// fills the binding copies from the plan and stamps the requester's identity.
#[derive(CustomResource, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[kube(
    group = "operator.ptah.run",
    version = "v1alpha1",
    kind = "PtahSchemaApproval",
    plural = "ptahschemaapprovals",
    namespaced,
    status = "DecisionStatus",
    shortname = "ptahapprove",
    category = "ptah",
    derive = "PartialEq",
    printcolumn(name = "Schema", type_ = "string", json_path = ".spec.schemaRef.name"),
    printcolumn(name = "Plan", type_ = "string", json_path = ".spec.planRef.name"),
    printcolumn(name = "Approver", type_ = "string", json_path = ".spec.approver.username"),
    printcolumn(
        name = "Accepted",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"Accepted\")].status"
    ),
    printcolumn(
        name = "Stale",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"Stale\")].status"
    ),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp")
)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("self == oldSelf").message("an approval is immutable"))]
pub struct PtahSchemaApprovalSpec {
    /// The PtahSchema, by name and UID.
    pub schema_ref: ImmutableObjectReference,
    /// The PtahSchemaPlan, by name and UID.
    pub plan_ref: ImmutableObjectReference,
    /// The plan fingerprint being approved.
    pub plan_fingerprint: Sha256Digest,
    /// Copy of the plan's observed-state fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual_state_fingerprint: Option<Sha256Digest>,
    /// Copy of the plan's desired-state fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desired_state_fingerprint: Option<Sha256Digest>,
    /// Copies of the plan's execution and target bindings.
    #[serde(flatten)]
    pub bindings: ApprovalBindingCopies,
    /// The approver (stamped by the webhook; client values are overwritten).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approver: Option<Approver>,
    /// When it was approved (stamped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_at: Option<Time>,
    /// UID of the mutating admission request (stamped).
    #[serde(
        default,
        rename = "mutationRequestUID",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(min = 1, max = 128))]
    pub mutation_request_uid: Option<String>,
}
