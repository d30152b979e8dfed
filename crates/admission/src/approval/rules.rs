//! The pure rules of PtahSchemaApproval admission, built on the shared ones in
//! [`super::common`]: each takes what was read and returns the refusal, if any.

use ptah_api::schema::{SchemaOperationType, SchemaPhase};
use ptah_api::{PtahSchema, PtahSchemaApprovalSpec, PtahSchemaPlan, PtahSchemaStatus};
use ptah_planstore::PlanStoreError;
use serde_json::{Map, Value};

use super::common::{self, Stamped, Waiting};

/// The plan the approval names is that object, belongs to that schema, and has that fingerprint.
pub fn check_references(spec: &PtahSchemaApprovalSpec, plan: &PtahSchemaPlan) -> Result<(), String> {
    common::check_plan_ref(&spec.plan_ref, &plan.metadata)?;
    common::check_owner("schemaRef", &spec.schema_ref, &plan.spec.schema_ref)?;
    let plan_name = plan.metadata.name.as_deref().unwrap_or_default();
    common::check_fingerprint(&spec.plan_fingerprint, plan_name, plan.spec.fingerprint.as_str())
}

/// Every binding the client copied equals the plan's; omitted copies are not checked.
pub fn check_bindings(spec: &PtahSchemaApprovalSpec, plan: &PtahSchemaPlan) -> Result<(), String> {
    let p = &plan.spec;
    let mut wrong = Vec::new();
    if spec
        .actual_state_fingerprint
        .as_ref()
        .is_some_and(|v| *v != p.actual_state_fingerprint)
    {
        wrong.push("actualStateFingerprint");
    }
    if spec
        .desired_state_fingerprint
        .as_ref()
        .is_some_and(|v| *v != p.desired_state_fingerprint)
    {
        wrong.push("desiredStateFingerprint");
    }
    wrong.extend(common::copies_mismatch(&spec.bindings, &p.binding));
    common::bindings_verdict(&wrong)
}

/// What the mutating webhook fills in when omitted: every binding copy and both state fingerprints.
pub fn derived(plan: &PtahSchemaPlan) -> Result<Map<String, Value>, String> {
    let p = &plan.spec;
    common::derived_fields(
        &p.binding,
        [
            (
                "actualStateFingerprint",
                Value::from(p.actual_state_fingerprint.as_str()),
            ),
            (
                "desiredStateFingerprint",
                Value::from(p.desired_state_fingerprint.as_str()),
            ),
        ],
    )
}

/// The stamped fields are present and the identity is exactly the requester's.
pub fn check_identity(
    spec: &PtahSchemaApprovalSpec,
    requester: &ptah_api::shared::Approver,
) -> Result<(), String> {
    let stamped = Stamped {
        identity: spec.approver.as_ref(),
        at: spec.approved_at.as_ref(),
        request_uid: spec.mutation_request_uid.as_deref(),
    };
    common::check_stamped(&stamped, &common::APPROVAL_STAMP, requester)
}

/// What a failed plan load means to the person approving.
pub fn plan_refusal(err: &PlanStoreError) -> String {
    match err {
        PlanStoreError::NotFound { name } => format!("plan {name} does not exist"),
        PlanStoreError::UidMismatch {
            name,
            expected,
            actual,
        } => {
            format!("plan {name} was replaced: its UID is {actual}, the approval names {expected}")
        }
        PlanStoreError::NotReady { name, why } => format!("plan is not Ready: {name}: {why}"),
        PlanStoreError::Deleting { what } => format!("plan is being deleted: {what}"),
        PlanStoreError::Tampered { what } => format!("plan storage fails its checks: {what}"),
        other => format!("cannot load the plan: {other}"),
    }
}

/// A refresh is in flight: an operation of the cycle other than the Apply, in its own phase, and
/// no convergence proof owed (that follows an Apply, after which the plan was spent).
fn refreshing(status: &PtahSchemaStatus) -> bool {
    use SchemaPhase as P;
    status.pending_observation.is_none()
        && status
            .active_operation
            .as_ref()
            .is_some_and(|op| op.operation_type != SchemaOperationType::Apply)
        && matches!(
            status.phase,
            Some(P::Resolving | P::Verifying | P::Observing | P::Planning)
        )
}

/// The schema is the referenced one and is waiting for exactly this plan's approval (or
/// refreshing while this plan is still its current one).
pub fn check_schema(
    spec: &PtahSchemaApprovalSpec,
    schema: &PtahSchema,
    plan: &PtahSchemaPlan,
) -> Result<(), String> {
    let name = &spec.schema_ref.name;
    common::check_live("schema", "approval", &spec.schema_ref, &schema.metadata)?;
    let status = schema
        .status
        .as_ref()
        .ok_or_else(|| format!("schema {name} has no status yet"))?;
    let current = status
        .plan
        .as_ref()
        .ok_or_else(|| format!("plan is stale: schema {name} has no current plan"))?;
    if current.name != spec.plan_ref.name || current.uid != spec.plan_ref.uid {
        return Err(format!(
            "plan is stale: schema {name}'s current plan is {} ({}), not {}",
            current.name, current.uid, spec.plan_ref.name
        ));
    }
    if current.fingerprint != spec.plan_fingerprint {
        return Err(format!(
            "plan is stale: the current plan's fingerprint is {}, the approval names {}",
            current.fingerprint, spec.plan_fingerprint
        ));
    }
    let phase = status.phase.map(|p| format!("{p:?}"));
    common::check_waiting(&Waiting {
        noun: "schema",
        waits_for: "an approval",
        phase: phase.as_deref(),
        awaiting: status.phase == Some(SchemaPhase::AwaitingApproval),
        refreshing: refreshing(status),
        conditions: &status.conditions,
        in_flight: status.active_operation.as_ref().map(|op| op.job_name.as_str()),
    })?;
    if let Some(recorded) = current.approval.as_ref() {
        return Err(format!(
            "schema already recorded approval {} for this plan",
            recorded.name
        ));
    }
    let b = &plan.spec.binding;
    let source = status.source.as_ref().and_then(|s| s.digest.as_ref());
    common::stale_unless(source, &b.artifact_digest, "the artifact digest changed")?;
    let target = status.target.as_ref();
    common::stale_unless(
        target.and_then(|t| t.identity_digest.as_ref()),
        &b.target_identity_digest,
        "the database identity changed",
    )?;
    common::stale_unless(
        target.and_then(|t| t.coordination_digest.as_ref()),
        &b.coordination_digest,
        "the realm changed",
    )
}
