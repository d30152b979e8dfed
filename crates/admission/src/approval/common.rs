//! The rules every decision kind shares — PtahSchemaApproval, PtahMigrationApproval and
//! PtahMigrationRunAcknowledgment: the identity stamp and its re-check, the binding copies
//! (hydrated from the plan, compared with it), the live-object and waiting checks, the policy
//! and four-eyes checks, and spec immutability.
//!
//! Each rule takes what was read and returns the refusal, if any; every message names its reason,
//! because a person reads it at `kubectl create` time and must know what to fix.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use ptah_api::conditions::ConditionType;
use ptah_api::shared::{
    ApprovalBindingCopies, Approver, ImmutableObjectReference, PlanExecutionBinding, Sha256Digest,
};
use ptah_managercache::{CacheError, ConfigMapRead};
use serde_json::{Map, Value, json};

/// Where a decision kind keeps the identity the mutating webhook stamps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StampFields {
    /// What the object is called in messages ("approval", "acknowledgment").
    pub noun: &'static str,
    /// The spec field holding the identity.
    pub identity: &'static str,
    /// The spec field holding the time.
    pub time: &'static str,
}

/// The stamp of both approval kinds: `approver`, `approvedAt`.
pub const APPROVAL_STAMP: StampFields = StampFields {
    noun: "approval",
    identity: "approver",
    time: "approvedAt",
};

/// The stamp of a run acknowledgment: `acknowledgedBy`, `acknowledgedAt`.
pub const ACKNOWLEDGMENT_STAMP: StampFields = StampFields {
    noun: "acknowledgment",
    identity: "acknowledgedBy",
    time: "acknowledgedAt",
};

/// The spec field holding the mutating request's UID, on every decision kind.
pub const MUTATION_REQUEST_UID: &str = "mutationRequestUID";

/// The patch stamping `identity`, `at` and `request_uid` into `object`'s spec, overwriting
/// whatever the client sent, and filling every `derived` field the client omitted (a copy the
/// client did send was compared with the plan before, so it is kept as sent).
pub fn stamp(
    object: &Value,
    fields: &StampFields,
    identity: &Approver,
    at: &str,
    request_uid: &str,
    derived: &Map<String, Value>,
) -> Result<json_patch::Patch, String> {
    let mut stamped = object.clone();
    let spec = stamped
        .get_mut("spec")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| format!("the {} has no spec", fields.noun))?;
    for (key, value) in derived {
        if spec.get(key).is_none_or(Value::is_null) {
            spec.insert(key.clone(), value.clone());
        }
    }
    let identity =
        serde_json::to_value(identity).map_err(|e| format!("cannot encode the {}: {e}", fields.identity))?;
    spec.insert(fields.identity.into(), identity);
    spec.insert(fields.time.into(), json!(at));
    spec.insert(MUTATION_REQUEST_UID.into(), json!(request_uid));
    Ok(json_patch::diff(object, &stamped))
}

/// What a decision carries of the stamp, as read at validation.
#[derive(Clone, Copy, Debug)]
pub struct Stamped<'a> {
    /// The stamped identity.
    pub identity: Option<&'a Approver>,
    /// The stamped time.
    pub at: Option<&'a Time>,
    /// The stamped request UID.
    pub request_uid: Option<&'a str>,
}

/// The stamp is complete and its identity is exactly the requester's.
pub fn check_stamped(
    stamped: &Stamped<'_>,
    fields: &StampFields,
    requester: &Approver,
) -> Result<(), String> {
    let unstamped = |what: &str| {
        format!(
            "the {} carries no {what} (the mutating webhook did not run)",
            fields.noun
        )
    };
    let identity = stamped.identity.ok_or_else(|| unstamped(fields.identity))?;
    if identity != requester {
        return Err(format!(
            "the stamped {} {:?} is not the requester {:?}",
            fields.identity, identity.username, requester.username
        ));
    }
    if stamped.request_uid.is_none_or(str::is_empty) {
        return Err(unstamped(MUTATION_REQUEST_UID));
    }
    if stamped.at.is_none() {
        return Err(unstamped(fields.time));
    }
    Ok(())
}

/// Every binding of `b` as an approval's copies.
pub fn binding_copies(b: &PlanExecutionBinding) -> ApprovalBindingCopies {
    ApprovalBindingCopies {
        artifact_digest: Some(b.artifact_digest.clone()),
        coordination_digest: Some(b.coordination_digest.clone()),
        target_identity_digest: Some(b.target_identity_digest.clone()),
        policy_fingerprint: Some(b.policy_fingerprint.clone()),
        verification_policy_uid: Some(b.verification_policy_uid.clone()),
        verification_policy_digest: Some(b.verification_policy_digest.clone()),
        execution_binding_id: Some(b.execution_binding_id.clone()),
        controller_image: Some(b.controller_image.clone()),
        controller_revision: Some(b.controller_revision.clone()),
        controller_state_version: Some(b.controller_state_version),
        ptah_version: Some(b.ptah_version.clone()),
        executor_image: Some(b.executor_image.clone()),
        runner_image: Some(b.runner_image.clone()),
        runner_protocol_version: Some(b.runner_protocol_version),
    }
}

/// The spec fields a mutating webhook fills when omitted: every binding copy of `b`, plus `extra`.
pub fn derived_fields(
    b: &PlanExecutionBinding,
    extra: impl IntoIterator<Item = (&'static str, Value)>,
) -> Result<Map<String, Value>, String> {
    let mut fields = match serde_json::to_value(binding_copies(b)) {
        Ok(Value::Object(map)) => map,
        Ok(_) => return Err("the plan's bindings do not encode as an object".into()),
        Err(e) => return Err(format!("cannot encode the plan's bindings: {e}")),
    };
    fields.extend(extra.into_iter().map(|(k, v)| (k.to_owned(), v)));
    Ok(fields)
}

/// The names of the copies in `c` that differ from `b`; omitted copies are not compared.
pub fn copies_mismatch(c: &ApprovalBindingCopies, b: &PlanExecutionBinding) -> Vec<&'static str> {
    let mut wrong = Vec::new();
    macro_rules! compare {
        ($($field:ident => $name:literal),* $(,)?) => {
            $(if c.$field.as_ref().is_some_and(|v| *v != b.$field) {
                wrong.push($name);
            })*
        };
    }
    compare!(
        artifact_digest => "artifactDigest",
        coordination_digest => "coordinationDigest",
        target_identity_digest => "targetIdentityDigest",
        policy_fingerprint => "policyFingerprint",
        verification_policy_uid => "verificationPolicyUID",
        verification_policy_digest => "verificationPolicyDigest",
        execution_binding_id => "executionBindingID",
        controller_image => "controllerImage",
        controller_revision => "controllerRevision",
        controller_state_version => "controllerStateVersion",
        ptah_version => "ptahVersion",
        executor_image => "executorImage",
        runner_image => "runnerImage",
        runner_protocol_version => "runnerProtocolVersion",
    );
    wrong
}

/// The refusal for copies named in `wrong`, if any.
pub fn bindings_verdict(wrong: &[&str]) -> Result<(), String> {
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!("bindings do not match the plan: {}", wrong.join(", ")))
    }
}

/// `plan_ref` names exactly the live plan `plan`, which is not being deleted.
pub fn check_plan_ref(plan_ref: &ImmutableObjectReference, plan: &ObjectMeta) -> Result<(), String> {
    let plan_uid = plan.uid.as_deref().unwrap_or_default();
    let plan_name = plan.name.as_deref().unwrap_or_default();
    if plan_ref.name != plan_name || plan_ref.uid != plan_uid {
        return Err(format!(
            "planRef does not match the live plan: the approval names {}/{}, the plan is {plan_name}/{plan_uid}",
            plan_ref.name, plan_ref.uid
        ));
    }
    if plan.deletion_timestamp.is_some() {
        return Err(format!("plan is being deleted: {plan_name}"));
    }
    Ok(())
}

/// The approval's `field` (`schemaRef`, `migrationRef`) names the object the plan belongs to.
pub fn check_owner(
    field: &str,
    named: &ImmutableObjectReference,
    owner: &ImmutableObjectReference,
) -> Result<(), String> {
    if named == owner {
        Ok(())
    } else {
        Err(format!(
            "{field} does not match the plan: the approval names {}/{}, the plan belongs to {}/{}",
            named.name, named.uid, owner.name, owner.uid
        ))
    }
}

/// The approval names the plan's fingerprint.
pub fn check_fingerprint(named: &Sha256Digest, plan_name: &str, planned: &str) -> Result<(), String> {
    if named.as_str() == planned {
        Ok(())
    } else {
        Err(format!(
            "fingerprint does not match: the approval names {named}, plan {plan_name} has {planned}"
        ))
    }
}

/// The live object (`noun` in messages) is the one the decision (`by`: "approval",
/// "acknowledgment") references, and it is not being deleted.
pub fn check_live(
    noun: &str,
    by: &str,
    reference: &ImmutableObjectReference,
    live: &ObjectMeta,
) -> Result<(), String> {
    let name = &reference.name;
    if live.deletion_timestamp.is_some() {
        return Err(format!("{noun} {name} is being deleted"));
    }
    let uid = live.uid.as_deref().unwrap_or_default();
    if uid != reference.uid {
        return Err(format!(
            "{noun} {name} was replaced: its UID is {uid}, the {by} names {}",
            reference.uid
        ));
    }
    Ok(())
}

/// What a reconciled object shows about waiting for a person's decision.
#[derive(Clone, Copy, Debug)]
pub struct Waiting<'a> {
    /// The kind in messages ("schema", "migration").
    pub noun: &'static str,
    /// What it waits for, in messages ("an approval", "a decision").
    pub waits_for: &'static str,
    /// The phase as written in the status, if any.
    pub phase: Option<&'a str>,
    /// Whether that phase is `AwaitingApproval`.
    pub awaiting: bool,
    /// Whether the object is re-reading its inputs (a Resolve, Verify or read, and its Plan, for
    /// the interval or a spec change; never an Apply or what follows one) with the plan it was
    /// waiting with still current. The controller matches approvals against the plan it holds
    /// after the refresh, so an approval of a plan the refresh replaces turns stale, unused.
    pub refreshing: bool,
    /// The status conditions.
    pub conditions: &'a [Condition],
    /// The Job of the operation in flight, if there is one.
    pub in_flight: Option<&'a str>,
}

/// The object is `AwaitingApproval` and runs nothing, or is refreshing with its plan still
/// current; either way `ApprovalRequired=True`.
pub fn check_waiting(w: &Waiting<'_>) -> Result<(), String> {
    let (noun, waits_for) = (w.noun, w.waits_for);
    if !w.awaiting && !w.refreshing {
        let shown = w.phase.unwrap_or("none");
        return Err(format!("{noun} is not waiting for {waits_for} (phase {shown})"));
    }
    let required = w
        .conditions
        .iter()
        .find(|c| c.type_ == ConditionType::ApprovalRequired.as_str());
    if required.is_none_or(|c| c.status != "True") {
        let shown = required.map_or("absent", |c| c.status.as_str());
        return Err(format!(
            "{noun} is not waiting for {waits_for} (ApprovalRequired is {shown})"
        ));
    }
    if let Some(job) = w.in_flight.filter(|_| !w.refreshing) {
        return Err(format!("{noun} has an operation in flight (Job {job})"));
    }
    Ok(())
}

/// `Ok` when the live value is the planned one, otherwise "plan is stale: `why`".
pub fn stale_unless(live: Option<&Sha256Digest>, planned: &Sha256Digest, why: &str) -> Result<(), String> {
    if live == Some(planned) {
        Ok(())
    } else {
        Err(format!("plan is stale: {why}"))
    }
}

/// The live verification-policy ConfigMap is the one the plan was computed under.
pub fn check_policy(
    b: &PlanExecutionBinding,
    read: Result<&ConfigMapRead, &CacheError>,
) -> Result<(), String> {
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

/// Four-eyes: there is a record of the `noun`'s spec writers, and the approver is none of them.
pub fn check_four_eyes(approver: &Approver, meta: &ObjectMeta, noun: &str) -> Result<(), String> {
    let annotations = meta.annotations.as_ref();
    let writers = crate::specwriter::recorded(|key| annotations.and_then(|a| a.get(key)).map(String::as_str))
        .map_err(|e| format!("four-eyes: {e}, so no approval can be proven distinct"))?;
    if writers.is_empty() {
        return Err(format!(
            "four-eyes: the {noun} has no recorded spec writer, so no approval can be distinct"
        ));
    }
    if writers
        .iter()
        .any(|w| w.is(&approver.username, approver.uid.as_deref()))
    {
        let mut names: Vec<&str> = Vec::new();
        for w in &writers {
            if !names.contains(&w.username.as_str()) {
                names.push(&w.username);
            }
        }
        return Err(format!(
            "four-eyes: {} has written the {noun}'s spec, and nobody who ever wrote it may approve \
             its plans (writers on record: {})",
            approver.username,
            names.join(", ")
        ));
    }
    Ok(())
}

/// An UPDATE may change metadata only: the spec stays byte-for-byte what admission stamped.
pub fn check_update(old: &Value, new: &Value, noun: &str) -> Result<(), String> {
    if old.get("spec") == new.get("spec") {
        Ok(())
    } else {
        Err(format!("an {noun}'s spec is immutable: only metadata may change"))
    }
}

/// `now` as the API's second-precision RFC 3339 time.
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}
