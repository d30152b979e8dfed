//! Claims: the operation's inputs, their fingerprint, its id and deterministic Job name.
//!
//! The input fingerprint is re-derived on every pass from the same sources the claim was made
//! from; a read-only claim whose inputs moved is discarded, a dispatched Apply never is.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ptah_api::{
    schema::{DevDatabaseSpec, DriftSeverityPolicy, SchemaOperationStatus, SchemaOperationType},
    shared::{GoDuration, OperationSource, OperationTarget, RegistryAuthSpec, Sha256Digest, TransportSpec},
};
use ptah_dataplane::Operation;
use serde::Serialize;

use super::observed::{Observed, PolicyRead, Realm};

pub use crate::operation::claim::{
    DISPATCH_WINDOW_SECONDS, LEASE_GRACE_SECONDS, TERMINATION_GRACE_SECONDS, apply_job_deadline, deadlines,
    digest_of,
};

/// The data-plane operation a claim runs.
pub fn operation(op: SchemaOperationType) -> Operation {
    crate::operation::claim::schema_operation(op)
}

/// The holder identity of a claim: the Apply's for a proof step, else its own.
pub fn holder_op(o: &Observed<'_>, c: &SchemaOperationStatus) -> Sha256Digest {
    match &o.status.pending_observation {
        Some(p)
            if c.operation_type != SchemaOperationType::Apply
                && c.lease_epoch.as_ref() == Some(&p.lease_epoch) =>
        {
            p.apply_operation_id.clone()
        }
        _ => c.id.clone(),
    }
}

/// Whether the operation holds the realm Lease.
pub fn locks(op: SchemaOperationType) -> bool {
    matches!(op, SchemaOperationType::Plan | SchemaOperationType::Apply)
}

/// Everything an operation depends on, in one canonical document.
#[derive(Serialize)]
struct Inputs<'a> {
    operation: &'static str,
    execution_binding_id: &'a str,
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
    exclude: &'a [String],
    protected_tables: &'a [String],
    drift_severity: Option<DriftSeverityPolicy>,
    dev: Option<&'a DevDatabaseSpec>,
    connect_timeout: Option<&'a str>,
    lock_timeout: Option<&'a str>,
    plan_uid: Option<&'a str>,
    plan_fingerprint: Option<&'a str>,
    proof_of: Option<&'a str>,
}

/// The sources a claim is built from: the spec and status now, or the proof an Apply owes.
pub struct ClaimSources<'a> {
    /// The operation.
    pub op: SchemaOperationType,
    /// The source the operation reads (absent for Resolve).
    pub source: Option<OperationSource>,
    /// The target (database operations).
    pub target: Option<OperationTarget>,
    /// The realm.
    pub coordination_digest: Option<Sha256Digest>,
    /// The expected database identity, once an Observe learned it.
    pub target_identity_digest: Option<Sha256Digest>,
    /// The policy (Verify and Plan).
    pub policy: Option<(String, Sha256Digest)>,
    /// Managed scope and refusals (Plan; Observe reads raw drift).
    pub exclude: Vec<String>,
    /// Protected tables (Plan).
    pub protected_tables: Vec<String>,
    /// Drift severity.
    pub drift_severity: Option<DriftSeverityPolicy>,
    /// Scratch database (Plan).
    pub dev: Option<DevDatabaseSpec>,
    /// Connect timeout.
    pub connect_timeout: Option<GoDuration>,
    /// Lock timeout.
    pub lock_timeout: Option<GoDuration>,
    /// The plan (Apply).
    pub plan: Option<(String, Sha256Digest)>,
    /// The Apply operation a proof belongs to.
    pub proof_of: Option<Sha256Digest>,
    /// The requested reference (Resolve).
    pub requested_reference: Option<&'a str>,
}

impl ClaimSources<'_> {
    /// The canonical fingerprint of these inputs under `epoch`.
    pub fn fingerprint(&self, epoch: &str) -> Sha256Digest {
        let source = self.source.as_ref();
        let auth_source = source.and_then(|s| s.registry_auth_from.as_ref());
        let inputs = Inputs {
            operation: operation(self.op).as_str(),
            execution_binding_id: epoch,
            requested_reference: self.requested_reference,
            source_digest: source.map(|s| s.digest.as_str()),
            resolved_reference: source.map(|s| s.resolved_reference.as_str()),
            registry_auth: auth_source,
            transport: source.and_then(|s| s.transport.as_ref()),
            verification_policy_uid: self.policy.as_ref().map(|p| p.0.as_str()),
            verification_policy_digest: self.policy.as_ref().map(|p| p.1.as_str()),
            target: self.target.as_ref(),
            coordination_digest: self.coordination_digest.as_ref().map(Sha256Digest::as_str),
            target_identity_digest: self.target_identity_digest.as_ref().map(Sha256Digest::as_str),
            exclude: &self.exclude,
            protected_tables: &self.protected_tables,
            drift_severity: self.drift_severity,
            dev: self.dev.as_ref(),
            connect_timeout: self.connect_timeout.as_ref().map(GoDuration::as_str),
            lock_timeout: self.lock_timeout.as_ref().map(GoDuration::as_str),
            plan_uid: self.plan.as_ref().map(|p| p.0.as_str()),
            plan_fingerprint: self.plan.as_ref().map(|p| p.1.as_str()),
            proof_of: self.proof_of.as_ref().map(Sha256Digest::as_str),
        };
        digest_of(&inputs)
    }
}

/// The sources of `op` as the spec and status say now (not a proof).
pub fn from_spec<'a>(o: &'a Observed<'_>, op: SchemaOperationType) -> ClaimSources<'a> {
    let spec = o.spec;
    let status = o.status;
    let recorded_source = status.source.as_ref().and_then(|s| {
        Some(OperationSource {
            resolved_reference: s.resolved_reference.clone()?,
            digest: s.digest.clone()?,
            registry_auth_from: spec.desired.registry_auth_from.clone(),
            transport: spec.desired.transport.clone(),
        })
    });
    let coordination = match o.realm {
        Realm::Claimable {
            coordination_digest, ..
        } => Some(coordination_digest.clone()),
        _ => None,
    };
    let policy = match o.policy {
        PolicyRead::Ok { uid, digest } => Some((uid.clone(), digest.clone())),
        PolicyRead::Refused(_) => None,
    };
    let target = OperationTarget {
        engine: spec.target.engine.clone(),
        url_from: spec.target.url_from.clone(),
        ca_from: spec.target.ca_from.clone(),
    };
    let identity = status.target.as_ref().and_then(|t| t.identity_digest.clone());
    let policy_spec = &spec.policy;
    let mut s = ClaimSources {
        op,
        source: None,
        target: None,
        coordination_digest: None,
        target_identity_digest: None,
        policy: None,
        exclude: Vec::new(),
        protected_tables: Vec::new(),
        drift_severity: None,
        dev: None,
        connect_timeout: None,
        lock_timeout: None,
        plan: None,
        proof_of: None,
        requested_reference: None,
    };
    match op {
        SchemaOperationType::Resolve => {
            s.requested_reference = Some(spec.desired.oci_ref.as_str());
            // The Resolve verifies the digest it resolves under this policy (one Job, not two).
            s.policy = policy;
            s.source = Some(OperationSource {
                resolved_reference: spec.desired.oci_ref.clone(),
                digest: placeholder_digest(),
                registry_auth_from: spec.desired.registry_auth_from.clone(),
                transport: spec.desired.transport.clone(),
            });
        }
        SchemaOperationType::Verify => {
            s.source = recorded_source;
            s.policy = policy;
        }
        SchemaOperationType::Observe => {
            s.source = recorded_source;
            s.target = Some(target);
            s.coordination_digest = coordination;
            s.target_identity_digest = identity;
            s.drift_severity = Some(policy_spec.drift_severity);
            s.connect_timeout = Some(spec.execution.connect_timeout.clone());
        }
        SchemaOperationType::Plan | SchemaOperationType::Apply => {
            s.source = recorded_source;
            s.target = Some(target);
            s.coordination_digest = coordination;
            s.target_identity_digest = identity;
            s.policy = policy;
            s.exclude = sorted(&policy_spec.exclude);
            s.protected_tables = sorted(&policy_spec.protected_tables);
            s.drift_severity = Some(policy_spec.drift_severity);
            s.connect_timeout = Some(spec.execution.connect_timeout.clone());
            s.lock_timeout = Some(policy_spec.lock_timeout.clone());
            if op == SchemaOperationType::Plan {
                s.dev = spec.dev.clone();
            } else {
                s.plan = status
                    .plan
                    .as_ref()
                    .map(|p| (p.uid.clone(), p.fingerprint.clone()));
            }
        }
    }
    s
}

/// The sources of a proof step (`op` is Observe or Plan) for the Apply `status.pendingObservation` names.
pub fn from_proof<'a>(o: &'a Observed<'_>, op: SchemaOperationType) -> Option<ClaimSources<'a>> {
    let p = o.status.pending_observation.as_ref()?;
    let identity = o.status.target.as_ref().and_then(|t| t.identity_digest.clone());
    let policy = match o.policy {
        PolicyRead::Ok { uid, digest } => Some((uid.clone(), digest.clone())),
        PolicyRead::Refused(_) => None,
    };
    Some(ClaimSources {
        op,
        source: Some(p.source.clone()),
        target: Some(p.target.clone()),
        coordination_digest: Some(p.coordination_digest.clone()),
        target_identity_digest: identity,
        policy: if op == SchemaOperationType::Plan {
            policy
        } else {
            None
        },
        exclude: if op == SchemaOperationType::Plan {
            sorted(&p.exclude)
        } else {
            Vec::new()
        },
        protected_tables: if op == SchemaOperationType::Plan {
            sorted(&p.protected_tables)
        } else {
            Vec::new()
        },
        drift_severity: p.drift_severity,
        dev: if op == SchemaOperationType::Plan {
            p.dev.clone()
        } else {
            None
        },
        connect_timeout: p.connect_timeout.clone(),
        lock_timeout: if op == SchemaOperationType::Plan {
            p.lock_timeout.clone()
        } else {
            None
        },
        plan: None,
        proof_of: Some(p.apply_operation_id.clone()),
        requested_reference: None,
    })
}

fn sorted(v: &[String]) -> Vec<String> {
    let mut v = v.to_vec();
    v.sort();
    v.dedup();
    v
}

/// A digest that stands for "not resolved yet" inside a Resolve claim's source.
fn placeholder_digest() -> Sha256Digest {
    ptah_fingerprint::Digest::of(b"").into()
}

/// The operation id of a schema claim ([`crate::operation::claim::operation_id`]).
pub fn operation_id(
    uid: &str,
    op: SchemaOperationType,
    input: &Sha256Digest,
    attempt: i32,
    epoch: &str,
    claimed_at: Timestamp,
) -> Sha256Digest {
    crate::operation::claim::operation_id(uid, operation(op), input, attempt, epoch, claimed_at)
}

/// A new claim for `sources` (attempt from 1), persisted before any Job exists.
pub fn new_claim(o: &Observed<'_>, sources: &ClaimSources<'_>, attempt: i32) -> SchemaOperationStatus {
    let epoch = o.binding.epoch.as_str();
    let input = sources.fingerprint(epoch);
    let id = operation_id(&o.meta.uid, sources.op, &input, attempt, epoch, o.now);
    let job_name = ptah_workload::job_name(
        &o.meta.name,
        &o.meta.uid,
        operation(sources.op),
        id.as_str(),
        input.as_str(),
        attempt,
        epoch,
    );
    let deadline = o.spec.execution.active_deadline_seconds;
    SchemaOperationStatus {
        operation_type: sources.op,
        id,
        input_fingerprint: input,
        job_name,
        job_uid: None,
        started_at: Time(o.now),
        attempt,
        execution_binding_id: o.binding.epoch.clone(),
        admission_snapshot: None,
        admission_snapshot_refreshed: None,
        generation: Some(o.meta.generation),
        result_enrolment_digest: None,
        dispatch_started: None,
        dispatch_not_after: None,
        execution_not_after: None,
        termination_grace_period_seconds: Some(TERMINATION_GRACE_SECONDS),
        coordination_digest: sources.coordination_digest.clone(),
        target_identity_digest: sources.target_identity_digest.clone(),
        target: sources.target.clone(),
        observation_exclude: sources.exclude.clone(),
        observation_protected_tables: sources.protected_tables.clone(),
        observation_severity: sources.drift_severity,
        observation_dev: sources.dev.clone(),
        observation_connect_timeout: sources.connect_timeout.clone(),
        observation_lock_timeout: sources.lock_timeout.clone(),
        verification_policy_uid: sources.policy.as_ref().map(|p| p.0.clone()),
        verification_policy_digest: sources.policy.as_ref().map(|p| p.1.clone()),
        source: sources.source.clone(),
        lease_duration_seconds: (locks(sources.op) || sources.proof_of.is_some())
            .then(|| crate::operation::claim::lease_duration(deadline)),
        lease_epoch: None,
        lease_continuity_lost: None,
    }
}
