//! Migration claims: the operation's inputs, their fingerprint, its id and deterministic Job name.
//!
//! The generation is an input: a spec edit (a suspension among them) moves every fingerprint, so
//! an undispatched claim made before it is discarded, and a dispatched Apply becomes uncertain.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ptah_api::{
    migration::{MigrationOperationStatus, MigrationOperationType as Op, MigrationTransactionMode},
    shared::{
        ImmutableObjectReference, OperationSource, OperationTarget, RegistryAuthSpec, Sha256Digest,
        TransportSpec,
    },
};
use serde::Serialize;

use super::observed::{Observed, PlanState, PolicyRead};
use crate::operation::claim::{digest_of, lease_duration, migration_operation, operation_id};

/// Everything an operation depends on, in one canonical document.
#[derive(Serialize)]
struct Inputs<'a> {
    operation: &'static str,
    execution_binding_id: &'a str,
    generation: i64,
    requested_reference: Option<&'a str>,
    source_digest: Option<&'a str>,
    resolved_reference: Option<&'a str>,
    registry_auth: Option<&'a RegistryAuthSpec>,
    transport: Option<&'a TransportSpec>,
    verification_policy_uid: Option<&'a str>,
    verification_policy_digest: Option<&'a str>,
    target: Option<&'a OperationTarget>,
    coordination_digest: Option<&'a str>,
    target_identity_digest: Option<&'a str>,
    connect_timeout: &'a str,
    lock_timeout: &'a str,
    transaction_mode: Option<MigrationTransactionMode>,
    plan_uid: Option<&'a str>,
    plan_fingerprint: Option<&'a str>,
}

/// The claim `op` would be made from now.
pub struct Sources {
    /// The operation.
    pub op: Op,
    /// The artifact (the requested reference with a placeholder digest for Resolve).
    pub source: OperationSource,
    /// The database (History and Apply).
    pub target: Option<OperationTarget>,
    /// The realm (History and Apply).
    pub coordination_digest: Option<Sha256Digest>,
    /// The database identity a History reading learned.
    pub target_identity_digest: Option<Sha256Digest>,
    /// The verification policy (Verify).
    pub policy: Option<(String, Sha256Digest)>,
    /// The plan (Apply).
    pub plan: Option<(ImmutableObjectReference, String)>,
}

impl Sources {
    /// The canonical fingerprint of these inputs.
    pub fn fingerprint(&self, o: &Observed<'_>) -> Sha256Digest {
        let auth = self.source.registry_auth_from.as_ref();
        digest_of(&Inputs {
            operation: migration_operation(self.op).as_str(),
            execution_binding_id: o.binding.epoch.as_str(),
            generation: o.meta.generation,
            requested_reference: (self.op == Op::Resolve).then_some(o.spec.artifact.oci_ref.as_str()),
            source_digest: Some(self.source.digest.as_str()),
            resolved_reference: Some(self.source.resolved_reference.as_str()),
            registry_auth: auth,
            transport: self.source.transport.as_ref(),
            verification_policy_uid: self.policy.as_ref().map(|p| p.0.as_str()),
            verification_policy_digest: self.policy.as_ref().map(|p| p.1.as_str()),
            target: self.target.as_ref(),
            coordination_digest: self.coordination_digest.as_ref().map(Sha256Digest::as_str),
            target_identity_digest: self.target_identity_digest.as_ref().map(Sha256Digest::as_str),
            connect_timeout: o.spec.execution.connect_timeout.as_str(),
            lock_timeout: o.spec.policy.lock_timeout.as_str(),
            transaction_mode: o.spec.policy.transaction_mode,
            plan_uid: self.plan.as_ref().map(|p| p.0.uid.as_str()),
            plan_fingerprint: self.plan.as_ref().map(|p| p.1.as_str()),
        })
    }
}

/// A digest that stands for "not resolved yet" inside a Resolve claim's source.
fn placeholder_digest() -> Sha256Digest {
    ptah_fingerprint::Digest::of(b"").into()
}

/// The sources of `op` as the spec and status say now; `None` when they cannot be derived yet.
pub fn sources(o: &Observed<'_>, op: Op) -> Option<Sources> {
    let spec = &o.spec.artifact;
    let art = o.status.artifact.as_ref();
    let recorded = || {
        Some(OperationSource {
            resolved_reference: art?.resolved_reference.clone()?,
            digest: art?.digest.clone()?,
            registry_auth_from: spec.registry_auth_from.clone(),
            transport: spec.transport.clone(),
        })
    };
    let target = OperationTarget {
        engine: o.spec.target.engine.clone(),
        url_from: o.spec.target.url_from.clone(),
        ca_from: o.spec.target.ca_from.clone(),
    };
    let identity = o
        .status
        .history
        .as_ref()
        .map(|h| h.target_identity_digest.clone());
    let policy = match o.policy {
        PolicyRead::Ok { uid, digest } => Some((uid.clone(), digest.clone())),
        PolicyRead::Refused(_) => None,
    };
    let source = match op {
        Op::Resolve => OperationSource {
            resolved_reference: spec.oci_ref.clone(),
            digest: placeholder_digest(),
            registry_auth_from: spec.registry_auth_from.clone(),
            transport: spec.transport.clone(),
        },
        _ => recorded()?,
    };
    let database = matches!(op, Op::History | Op::Apply);
    let plan = match (op, &o.status.plan, o.plan) {
        (Op::Apply, Some(r), PlanState::Present(p)) => Some((r.clone(), p.fingerprint.clone())),
        (Op::Apply, _, _) => return None,
        _ => None,
    };
    Some(Sources {
        op,
        source,
        target: database.then_some(target),
        coordination_digest: if database {
            Some(o.realm.digest()?.clone())
        } else {
            None
        },
        target_identity_digest: if database { identity } else { None },
        policy: (op == Op::Verify).then_some(policy?),
        plan,
    })
}

/// A new claim for `sources`, persisted before any Job exists. Only an Apply locks the realm.
pub fn new_claim(o: &Observed<'_>, s: &Sources, attempt: i32) -> MigrationOperationStatus {
    let epoch = o.binding.epoch.as_str();
    let input = s.fingerprint(o);
    let operation = migration_operation(s.op);
    let id = operation_id(&o.meta.uid, operation, &input, attempt, epoch, o.now);
    let job_name = ptah_workload::job_name(
        &o.meta.name,
        &o.meta.uid,
        operation,
        id.as_str(),
        input.as_str(),
        attempt,
        epoch,
    );
    MigrationOperationStatus {
        operation_type: s.op,
        id,
        input_fingerprint: input,
        job_name,
        job_uid: None,
        started_at: Time(o.now),
        attempt,
        execution_binding_id: o.binding.epoch.clone(),
        source: Some(s.source.clone()),
        target: s.target.clone(),
        coordination_digest: s.coordination_digest.clone(),
        plan_ref: s.plan.as_ref().map(|p| p.0.clone()),
        generation: Some(o.meta.generation),
        result_enrolment_digest: None,
        dispatch_started: None,
        dispatch_not_after: None,
        execution_not_after: None,
        admission_snapshot: None,
        lease_duration_seconds: (s.op == Op::Apply)
            .then(|| lease_duration(o.spec.execution.active_deadline_seconds)),
        lease_epoch: None,
        lease_continuity_lost: None,
        target_identity_digest: s.target_identity_digest.clone(),
        approval_ref: None,
    }
}
