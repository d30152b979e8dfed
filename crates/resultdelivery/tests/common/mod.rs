//! Bindings and payloads for the tests.
#![allow(dead_code)]

use ptah_dataplane::{Operation, OperationId, PlanOutcome, PlanResult, ResultPayload};
use ptah_fingerprint::{Digest, Fingerprint};
use ptah_resultdelivery::{
    ResultBody,
    binding::{ClaimRef, ObjectRef, ResourceKind, ResourceRef, ResultBinding},
};

fn fp(n: u32) -> Fingerprint {
    Fingerprint::of(&n).expect("fingerprint")
}

/// A valid binding of a Plan.
pub fn binding() -> ResultBinding {
    ResultBinding {
        resource: ResourceRef {
            namespace: "shop".to_owned(),
            kind: ResourceKind::PtahSchema,
            name: "orders".to_owned(),
            uid: "0b6f1c0e-2f0e-4c54-9d0b-8f3c2a1d7e01".to_owned(),
            generation: 3,
        },
        claim: ClaimRef {
            execution_binding_id: "eb-7f3a".to_owned(),
            input_fingerprint: fp(9),
            operation: Operation::Plan,
            operation_id: OperationId::new("op-1").expect("id"),
        },
        job: ObjectRef {
            name: "orders-plan-1".to_owned(),
            uid: "5c2e0c1a-0000-4000-8000-000000000001".to_owned(),
        },
        pod: ObjectRef {
            name: "orders-plan-1-x7k2p".to_owned(),
            uid: "5c2e0c1a-0000-4000-8000-000000000002".to_owned(),
        },
    }
}

/// A successful Plan result carrying `plan` as its bytes.
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

/// The body of a Plan result carrying `plan`.
pub fn plan_body(plan: &str) -> ResultBody {
    ResultBody {
        binding: binding(),
        payload: plan_payload(plan),
    }
}
