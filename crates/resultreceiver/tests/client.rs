//! The runner's client against the real receiver over TLS on loopback (the cluster in memory):
//! enrolment, delivery, an acknowledged replay, a retry through an unavailable receiver, a
//! refusal that is not retried, and an exactly 8 MiB plan through the wire into its records.

use std::{
    net::{IpAddr, Ipv4Addr},
    time::Duration,
};

use ptah_dataplane::{MAX_PLAN_BYTES, Operation, OperationId, PlanOutcome, PlanResult, ResultPayload};
use ptah_fingerprint::{Digest, Fingerprint};
use ptah_resultclient::{ClientError, Delivered, Endpoint, Enrolment, deliver, deliver_until, enrol};
use ptah_resultdelivery::{
    RecordType, ResourceKind, ResultBinding, ResultBody, reassemble, wire::EnrolmentTicket,
};
use ptah_resultreceiver::testing::{Memory, POD_NAME, POD_UID, Running, live, start};
use ptah_resultreceiver::{EnrolmentToken, binding_of};
use rustls_pki_types::ServerName;

fn token() -> EnrolmentToken {
    EnrolmentToken::from_bytes([9; 32])
}

async fn receiver(operation: Operation) -> (Running, Endpoint) {
    let memory = Memory::default();
    *memory.live.lock().expect("lock") = live(operation, "op-1", &token(), IpAddr::V4(Ipv4Addr::LOCALHOST));
    let running = start(memory).await;
    let endpoint = Endpoint {
        address: running.addr.to_string(),
        server_name: ServerName::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST).into()),
        trusted: vec![running.ca_der.clone()],
    };
    (running, endpoint)
}

fn enrolment(token: &EnrolmentToken) -> Enrolment {
    Enrolment {
        ticket: EnrolmentTicket {
            namespace: "shop".to_owned(),
            kind: ResourceKind::PtahSchema,
            name: "orders".to_owned(),
            operation_id: OperationId::new("op-1").expect("id"),
            token: token.reveal(),
        },
        pod_name: POD_NAME.to_owned(),
        pod_uid: POD_UID.to_owned(),
    }
}

fn observe_failure(binding: ResultBinding) -> ResultBody {
    let mut payload = ResultPayload::new(Operation::Observe, Some(OperationId::new("op-1").expect("id")));
    payload.child_exit_code = 2;
    payload.error = Some(ptah_dataplane::ResultError {
        code: ptah_dataplane::ErrorCode::Internal,
        child_code: None,
        message: "boom".to_owned(),
    });
    ResultBody { binding, payload }
}

#[tokio::test]
async fn the_runner_enrols_delivers_and_a_replay_is_acknowledged() {
    let (running, endpoint) = receiver(Operation::Observe).await;
    let identity = enrol(&endpoint, &enrolment(&token())).await.expect("enrolled");
    let binding = binding_of(identity.certificate()).expect("binding");
    assert_eq!(
        &binding,
        identity.binding(),
        "the answer names the certificate's binding"
    );
    let body = observe_failure(binding).encode().expect("encode");
    assert_eq!(
        deliver(&endpoint, &identity, &body).await.expect("delivered"),
        Delivered::Stored
    );
    assert_eq!(
        deliver(&endpoint, &identity, &body).await.expect("replayed"),
        Delivered::AlreadyStored
    );
    assert_eq!(running.memory.records.lock().expect("lock").len(), 3);
}

#[tokio::test]
async fn a_refusal_is_final_and_an_unavailable_receiver_is_retried() {
    let (running, endpoint) = receiver(Operation::Observe).await;
    let wrong = EnrolmentToken::from_bytes([1; 32]);
    match enrol(&endpoint, &enrolment(&wrong)).await {
        Err(ClientError::Refused {
            status: 403, reason, ..
        }) => assert_eq!(reason, "WrongToken"),
        other => panic!("{other:?}"),
    }
    let identity = enrol(&endpoint, &enrolment(&token())).await.expect("enrolled");
    let body = observe_failure(binding_of(identity.certificate()).expect("binding"))
        .encode()
        .expect("encode");
    // The first attempt dies between intent and chunks (503); the retry a second later stores.
    *running.memory.stop_after_chunks.lock().expect("lock") = Some(0);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let delivered = deliver_until(&endpoint, &identity, &body, deadline)
        .await
        .expect("delivered");
    assert_eq!(delivered, Delivered::Stored);
    // Nobody listens any more: the client gives up at its deadline with the last error.
    drop(running);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    let outcome = deliver_until(&endpoint, &identity, &body, deadline).await;
    assert!(matches!(outcome, Err(ClientError::Deadline(_))), "{outcome:?}");
}

#[tokio::test]
async fn an_exactly_8_mib_plan_arrives_whole_in_its_records() {
    let (running, endpoint) = receiver(Operation::Plan).await;
    let identity = enrol(&endpoint, &enrolment(&token())).await.expect("enrolled");
    let binding = binding_of(identity.certificate()).expect("binding");
    let plan = format!("{}\n", "x".repeat(MAX_PLAN_BYTES - 1));
    let mut payload = ResultPayload::new(Operation::Plan, Some(OperationId::new("op-1").expect("id")));
    payload.child_exit_code = 1;
    payload.coordination_digest = Some(Fingerprint::of(&1).expect("fp"));
    payload.target_identity_digest = Some(Fingerprint::of(&2).expect("fp"));
    payload.stdout = Some(plan.clone());
    payload.plan = Some(PlanResult {
        plan_content_digest: Digest::of(plan.as_bytes()),
        plan_outcome: PlanOutcome::Changes,
        statement_count: 1,
        destructive: false,
        from_fingerprint: Fingerprint::of(&3).expect("fp"),
        to_fingerprint: Fingerprint::of(&4).expect("fp"),
    });
    let body = ResultBody {
        binding: binding.clone(),
        payload,
    }
    .encode()
    .expect("encode");
    assert_eq!(
        deliver(&endpoint, &identity, &body).await.expect("delivered"),
        Delivered::Stored
    );
    let records = running.memory.records.lock().expect("lock");
    let stem = binding.record_stem();
    let intent = records
        .get(&RecordType::Intent.record_name(&stem, 0))
        .and_then(|r| r.1)
        .expect("intent");
    assert_eq!(intent.chunks, 17);
    let chunks: Vec<(u32, &[u8])> = (0..intent.chunks)
        .map(|i| {
            let record = records
                .get(&RecordType::Chunk.record_name(&stem, i))
                .expect("chunk");
            (i, record.2.as_slice())
        })
        .collect();
    assert_eq!(reassemble(&intent, &chunks).expect("reassembled"), body.bytes);
    assert!(records.contains_key(&RecordType::Complete.record_name(&stem, 0)));
}
