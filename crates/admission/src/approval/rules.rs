//! The pure rules of approval admission: each takes what was read and returns the refusal, if any.
//!
//! Every message names its reason, because a person reads it at `kubectl create` time and must
//! know what to fix (or that the plan moved on).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use ptah_api::conditions::ConditionType;
use ptah_api::schema::SchemaPhase;
use ptah_api::shared::{ApprovalBindingCopies, Approver, Sha256Digest};
use ptah_api::{PtahSchema, PtahSchemaApprovalSpec, PtahSchemaPlan};
use ptah_managercache::{CacheError, ConfigMapRead};
use ptah_planstore::PlanStoreError;
use serde_json::{Value, json};

use crate::specwriter::{WRITER_UID_ANNOTATION, WRITER_USERNAME_ANNOTATION};

/// The plan the approval names is that object, belongs to that schema, and has that fingerprint.
pub fn check_references(spec: &PtahSchemaApprovalSpec, plan: &PtahSchemaPlan) -> Result<(), String> {
    let plan_uid = plan.metadata.uid.as_deref().unwrap_or_default();
    let plan_name = plan.metadata.name.as_deref().unwrap_or_default();
    if spec.plan_ref.name != plan_name || spec.plan_ref.uid != plan_uid {
        return Err(format!(
            "planRef does not match the live plan: the approval names {}/{}, the plan is {plan_name}/{plan_uid}",
            spec.plan_ref.name, spec.plan_ref.uid
        ));
    }
    if spec.schema_ref != plan.spec.schema_ref {
        return Err(format!(
            "schemaRef does not match the plan: the approval names {}/{}, the plan belongs to {}/{}",
            spec.schema_ref.name, spec.schema_ref.uid, plan.spec.schema_ref.name, plan.spec.schema_ref.uid
        ));
    }
    if spec.plan_fingerprint != plan.spec.fingerprint {
        return Err(format!(
            "fingerprint does not match: the approval names {}, plan {plan_name} has {}",
            spec.plan_fingerprint, plan.spec.fingerprint
        ));
    }
    Ok(())
}

/// Every binding the client copied equals the plan's; omitted copies are not checked.
pub fn check_bindings(spec: &PtahSchemaApprovalSpec, plan: &PtahSchemaPlan) -> Result<(), String> {
    let p = &plan.spec;
    let b = &p.binding;
    let c: &ApprovalBindingCopies = &spec.bindings;
    let mut wrong: Vec<&str> = Vec::new();
    let mut check = |name, same: Option<bool>| {
        if same == Some(false) {
            wrong.push(name);
        }
    };
    check(
        "actualStateFingerprint",
        spec.actual_state_fingerprint
            .as_ref()
            .map(|v| *v == p.actual_state_fingerprint),
    );
    check(
        "desiredStateFingerprint",
        spec.desired_state_fingerprint
            .as_ref()
            .map(|v| *v == p.desired_state_fingerprint),
    );
    check(
        "artifactDigest",
        c.artifact_digest.as_ref().map(|v| *v == b.artifact_digest),
    );
    check(
        "coordinationDigest",
        c.coordination_digest
            .as_ref()
            .map(|v| *v == b.coordination_digest),
    );
    check(
        "targetIdentityDigest",
        c.target_identity_digest
            .as_ref()
            .map(|v| *v == b.target_identity_digest),
    );
    check(
        "policyFingerprint",
        c.policy_fingerprint.as_ref().map(|v| *v == b.policy_fingerprint),
    );
    check(
        "verificationPolicyUID",
        c.verification_policy_uid
            .as_ref()
            .map(|v| *v == b.verification_policy_uid),
    );
    check(
        "verificationPolicyDigest",
        c.verification_policy_digest
            .as_ref()
            .map(|v| *v == b.verification_policy_digest),
    );
    check(
        "executionBindingID",
        c.execution_binding_id
            .as_ref()
            .map(|v| *v == b.execution_binding_id),
    );
    check(
        "controllerImage",
        c.controller_image.as_ref().map(|v| *v == b.controller_image),
    );
    check(
        "controllerRevision",
        c.controller_revision
            .as_ref()
            .map(|v| *v == b.controller_revision),
    );
    check(
        "controllerStateVersion",
        c.controller_state_version
            .map(|v| v == b.controller_state_version),
    );
    check(
        "ptahVersion",
        c.ptah_version.as_ref().map(|v| *v == b.ptah_version),
    );
    check(
        "executorImage",
        c.executor_image.as_ref().map(|v| *v == b.executor_image),
    );
    check(
        "runnerImage",
        c.runner_image.as_ref().map(|v| *v == b.runner_image),
    );
    check(
        "runnerProtocolVersion",
        c.runner_protocol_version.map(|v| v == b.runner_protocol_version),
    );
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!("bindings do not match the plan: {}", wrong.join(", ")))
    }
}

/// The webhook stamps exactly these three fields, overwriting whatever the client sent.
pub fn stamp(
    object: &Value,
    approver: &Approver,
    approved_at: &str,
    request_uid: &str,
) -> Result<json_patch::Patch, String> {
    let mut stamped = object.clone();
    let spec = stamped
        .get_mut("spec")
        .and_then(Value::as_object_mut)
        .ok_or("the approval has no spec")?;
    let approver = serde_json::to_value(approver).map_err(|e| format!("cannot encode the approver: {e}"))?;
    spec.insert("approver".into(), approver);
    spec.insert("approvedAt".into(), json!(approved_at));
    spec.insert("mutationRequestUID".into(), json!(request_uid));
    Ok(json_patch::diff(object, &stamped))
}

/// The stamped fields are present and the identity is exactly the requester's.
pub fn check_identity(spec: &PtahSchemaApprovalSpec, requester: &Approver) -> Result<(), String> {
    let Some(approver) = spec.approver.as_ref() else {
        return Err("the approval carries no approver (the mutating webhook did not run)".into());
    };
    if approver != requester {
        return Err(format!(
            "the stamped approver {:?} is not the requester {:?}",
            approver.username, requester.username
        ));
    }
    if spec.mutation_request_uid.as_deref().is_none_or(str::is_empty) {
        return Err("the approval carries no mutationRequestUID (the mutating webhook did not run)".into());
    }
    if spec.approved_at.is_none() {
        return Err("the approval carries no approvedAt (the mutating webhook did not run)".into());
    }
    Ok(())
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

fn deleting(meta: &ObjectMeta) -> bool {
    meta.deletion_timestamp.is_some()
}

/// The schema is the referenced one and is waiting for exactly this plan's approval.
pub fn check_schema(
    spec: &PtahSchemaApprovalSpec,
    schema: &PtahSchema,
    plan: &PtahSchemaPlan,
) -> Result<(), String> {
    let name = &spec.schema_ref.name;
    if deleting(&schema.metadata) {
        return Err(format!("schema {name} is being deleted"));
    }
    let uid = schema.metadata.uid.as_deref().unwrap_or_default();
    if uid != spec.schema_ref.uid {
        return Err(format!(
            "schema {name} was replaced: its UID is {uid}, the approval names {}",
            spec.schema_ref.uid
        ));
    }
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
    let phase = status.phase;
    if phase != Some(SchemaPhase::AwaitingApproval) {
        let shown = phase.map_or_else(|| "none".to_owned(), |p| format!("{p:?}"));
        return Err(format!("schema is not waiting for an approval (phase {shown})"));
    }
    let required = status
        .conditions
        .iter()
        .find(|c| c.type_ == ConditionType::ApprovalRequired.as_str());
    if required.is_none_or(|c| c.status != "True") {
        let shown = required.map_or("absent", |c| c.status.as_str());
        return Err(format!(
            "schema does not require an approval (ApprovalRequired is {shown})"
        ));
    }
    if let Some(op) = status.active_operation.as_ref() {
        return Err(format!("schema has an operation in flight (Job {})", op.job_name));
    }
    if let Some(recorded) = current.approval.as_ref() {
        return Err(format!(
            "schema already recorded approval {} for this plan",
            recorded.name
        ));
    }
    let b = &plan.spec.binding;
    let source = status.source.as_ref().and_then(|s| s.digest.as_ref());
    stale_unless(source, &b.artifact_digest, "the artifact digest changed")?;
    let target = status.target.as_ref();
    stale_unless(
        target.and_then(|t| t.identity_digest.as_ref()),
        &b.target_identity_digest,
        "the database identity changed",
    )?;
    stale_unless(
        target.and_then(|t| t.coordination_digest.as_ref()),
        &b.coordination_digest,
        "the realm changed",
    )?;
    Ok(())
}

fn stale_unless(live: Option<&Sha256Digest>, planned: &Sha256Digest, why: &str) -> Result<(), String> {
    if live == Some(planned) {
        Ok(())
    } else {
        Err(format!("plan is stale: {why}"))
    }
}

/// The live verification-policy ConfigMap is the one the plan was computed under.
pub fn check_policy(plan: &PtahSchemaPlan, read: Result<&ConfigMapRead, &CacheError>) -> Result<(), String> {
    let b = &plan.spec.binding;
    match read {
        Err(err) => Err(format!("verification policy unusable: {err}")),
        Ok(read) if read.uid != b.verification_policy_uid => Err(format!(
            "plan is stale: the verification policy ConfigMap was replaced (UID {}, plan has {})",
            read.uid, b.verification_policy_uid
        )),
        Ok(read) if read.digest != b.verification_policy_digest => {
            Err("plan is stale: the verification policy bytes changed".into())
        }
        Ok(_) => Ok(()),
    }
}

/// Four-eyes: the approver is not the last writer of the schema's spec, and there is one.
pub fn check_four_eyes(approver: &Approver, schema: &ObjectMeta) -> Result<(), String> {
    let annotations = schema.annotations.as_ref();
    let get = |key: &str| annotations.and_then(|a| a.get(key)).filter(|v| !v.is_empty());
    let Some(writer) = get(WRITER_USERNAME_ANNOTATION) else {
        return Err(
            "four-eyes: the schema has no recorded spec writer, so no approval can be distinct".into(),
        );
    };
    let writer_uid = get(WRITER_UID_ANNOTATION);
    if *writer == approver.username && writer_uid == approver.uid.as_ref() {
        return Err(format!(
            "four-eyes: {writer} wrote the schema's current spec and may not approve its plan"
        ));
    }
    Ok(())
}

/// An UPDATE may change metadata only: the spec stays byte-for-byte what admission stamped.
pub fn check_update(old: &Value, new: &Value) -> Result<(), String> {
    if old.get("spec") == new.get("spec") {
        Ok(())
    } else {
        Err("an approval's spec is immutable: only metadata may change".into())
    }
}

/// `now` as the API's second-precision RFC 3339 time.
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}
