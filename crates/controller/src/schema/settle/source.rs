//! Recording Resolve and Verify: the digest everything later uses, and the policy verdict.

use ptah_api::{
    conditions::{ConditionType, Reason},
    schema::{
        PtahSchemaStatus as SchemaStatus, SchemaOperationStatus, SchemaOperationType as Op, SchemaPhase,
    },
    shared::{ArtifactSourceStatus, Sha256Digest},
};
use ptah_dataplane::{ArtifactResult, ResultPayload};

use super::failed::failed;
use crate::schema::{
    action::{Action, Event},
    observed::Observed,
    record::{self, cond, edit, phase},
};

/// The artifact type a schema artifact must carry (checked independently of the policy).
pub const SCHEMA_ARTIFACT_TYPE: &str = "application/vnd.stokaro.ptah.schema.v1";

use crate::conditions::Status;

/// Records a Resolve or Verify result; a Resolve that was given the policy also carries the
/// verdict on the digest it resolved, recorded as a Verify's would be.
pub fn artifact(o: &Observed<'_>, c: &SchemaOperationStatus, p: &ResultPayload) -> Action {
    let Some(a) = &p.artifact else {
        return failed(
            o,
            c,
            Reason::OperationFailed,
            "the result carries no artifact report",
        );
    };
    let digest: Sha256Digest = a.resolved_digest.into();
    let mut s = edit(o);
    record::clear_claim(&mut s, c, None);
    s.last_attempt_time = Some(record::now(o));
    cond(
        o,
        &mut s,
        ConditionType::ReconciliationFailed,
        Status::False,
        Reason::Succeeded,
        "",
    );
    if c.operation_type == Op::Resolve {
        let event = resolved(o, &mut s, a, digest);
        // Only a verdict under the policy the claim named counts; without one a Verify follows.
        if a.verification_passed.is_some() && c.verification_policy_uid.is_some() {
            return verified(o, s, c, a, event);
        }
        return Action::WriteStatus {
            status: Box::new(s),
            event,
        };
    }
    // Verify: the recorded digest must be the one verified.
    if o.status.source.as_ref().and_then(|x| x.digest.as_ref()) != Some(&digest) {
        return failed(
            o,
            c,
            Reason::OperationFailed,
            "Verify reports another digest than the one resolved",
        );
    }
    verified(o, s, c, a, None)
}

/// Records the digest a Resolve pinned; the Event when it moved.
fn resolved(
    o: &Observed<'_>,
    s: &mut SchemaStatus,
    a: &ArtifactResult,
    digest: Sha256Digest,
) -> Option<Event> {
    let moved = o.status.source.as_ref().and_then(|x| x.digest.as_ref()) != Some(&digest);
    let event = moved.then(|| {
        Event::normal(
            "ArtifactResolved",
            format!("{} resolved to {}", o.spec.desired.oci_ref, digest.as_str()),
        )
    });
    s.source = Some(resolved_source(
        o,
        &a.resolved_reference,
        digest,
        a.artifact_type.clone(),
    ));
    s.next_reconciliation_time = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        record::after(o.now, o.spec.interval.as_duration()),
    ));
    s.phase = Some(SchemaPhase::Verifying);
    cond(
        o,
        s,
        ConditionType::ArtifactResolved,
        Status::True,
        Reason::DigestPinned,
        "the reference is pinned to a digest",
    );
    if moved && s.plan.take().is_some() {
        cond(
            o,
            s,
            ConditionType::PlanReady,
            Status::False,
            Reason::DesiredStateChanged,
            "the artifact moved; the plan was retired",
        );
    }
    event
}

/// Records the policy verdict (and the artifact type check) on the digest in `s`; `event` is the
/// Resolve's, kept when nothing is refused.
fn verified(
    o: &Observed<'_>,
    mut s: SchemaStatus,
    c: &SchemaOperationStatus,
    a: &ArtifactResult,
    event: Option<Event>,
) -> Action {
    let passed = a.verification_passed == Some(true);
    // The type comes from the manifest read at Resolve (same digest) when Verify does not
    // repeat it: either way it is checked here, independently of what the policy requires.
    let artifact_type = a
        .artifact_type
        .clone()
        .or_else(|| s.source.as_ref().and_then(|x| x.artifact_type.clone()));
    let type_ok = artifact_type.as_deref() == Some(SCHEMA_ARTIFACT_TYPE);
    if let Some(src) = s.source.as_mut() {
        src.verified = Some(passed && type_ok);
        src.verified_at = Some(record::now(o));
        src.verification_policy_uid = c.verification_policy_uid.clone();
        src.verification_policy_digest = c.verification_policy_digest.clone();
        src.artifact_type = artifact_type.clone();
    }
    if !type_ok {
        let m = format!(
            "the artifact type is {:?}, not {SCHEMA_ARTIFACT_TYPE}",
            a.artifact_type.as_deref().unwrap_or("")
        );
        phase(
            o,
            &mut s,
            SchemaPhase::Blocked,
            false,
            Reason::ArtifactUnverified,
            m.clone(),
        );
        cond(
            o,
            &mut s,
            ConditionType::ArtifactVerified,
            Status::False,
            Reason::ArtifactUnverified,
            m.clone(),
        );
        return Action::WriteStatus {
            status: Box::new(s),
            event: Some(Event::warning("ArtifactVerificationRefused", m)),
        };
    }
    if !passed {
        let m = if a.violated_requirements.is_empty() {
            "the verification policy refused the artifact".to_owned()
        } else {
            format!(
                "the verification policy refused the artifact: {}",
                a.violated_requirements.join(", ")
            )
        };
        phase(
            o,
            &mut s,
            SchemaPhase::Blocked,
            false,
            Reason::PolicyRefused,
            m.clone(),
        );
        cond(
            o,
            &mut s,
            ConditionType::ArtifactVerified,
            Status::False,
            Reason::PolicyRefused,
            m.clone(),
        );
        s.plan = None;
        return Action::WriteStatus {
            status: Box::new(s),
            event: Some(Event::warning("ArtifactVerificationRefused", m)),
        };
    }
    s.phase = Some(SchemaPhase::Planning);
    cond(
        o,
        &mut s,
        ConditionType::ArtifactVerified,
        Status::True,
        Reason::PolicySatisfied,
        "the artifact satisfies the verification policy",
    );
    Action::WriteStatus {
        status: Box::new(s),
        event,
    }
}

/// The source recorded by a Resolve.
pub fn resolved_source(
    o: &Observed<'_>,
    reference: &str,
    digest: Sha256Digest,
    artifact_type: Option<String>,
) -> ArtifactSourceStatus {
    ArtifactSourceStatus {
        requested_reference: Some(o.spec.desired.oci_ref.clone()),
        resolved_reference: Some(reference.to_owned()),
        digest: Some(digest),
        media_type: None,
        artifact_type,
        size: None,
        verified: Some(false),
        verification_policy_uid: None,
        verification_policy_digest: None,
        resolved_at: Some(record::now(o)),
        verified_at: None,
    }
}
