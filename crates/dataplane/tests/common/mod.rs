//! Payloads for the tests.
#![allow(dead_code)]

use ptah_dataplane::{Operation, OperationId, PlanOutcome, PlanResult, ResultPayload, frame::encode_frame};
use ptah_fingerprint::{Digest, Fingerprint};

pub fn fp(n: u32) -> Fingerprint {
    Fingerprint::of(&n).expect("fingerprint")
}

/// A successful plan carrying `plan` as its bytes.
pub fn plan_payload(plan: &str) -> ResultPayload {
    let mut p = ResultPayload::new(Operation::Plan, Some(OperationId::new("op-1").expect("id")));
    p.child_exit_code = 1;
    p.coordination_digest = Some(fp(1));
    p.target_identity_digest = Some(fp(2));
    p.stdout = Some(plan.to_owned());
    p.plan = Some(PlanResult {
        plan_content_digest: Digest::of(plan.as_bytes()),
        plan_outcome: PlanOutcome::Changes,
        statement_count: 1,
        destructive: false,
        from_fingerprint: fp(3),
        to_fingerprint: fp(4),
    });
    p
}

/// The frame bytes of a payload.
pub fn frame(p: &ResultPayload) -> Vec<u8> {
    encode_frame(p).expect("encode").0
}
