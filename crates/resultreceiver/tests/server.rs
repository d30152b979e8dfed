//! The receiver over real TLS on a loopback port, with the cluster in memory: enrolment once,
//! delivery stored before it is acknowledged, an identical replay acknowledged, and every
//! refusal a client can provoke over the wire.

mod common;

use std::net::{IpAddr, Ipv4Addr};

use base64::{Engine as _, engine::general_purpose::STANDARD};
use common::server::{client, digest_of, post};
use hyper::StatusCode;
use ptah_dataplane::{Operation, OperationId, ResultPayload};
use ptah_fingerprint::canonical_json;
use ptah_resultdelivery::wire::{EnrolAnswer, EnrolRequest, ROUTE_ENROL, ROUTE_RESULTS, RefusalBody};
use ptah_resultdelivery::{CONTENT_TYPE, DIGEST_HEADER, ResourceKind, ResultBinding, ResultBody};
use ptah_resultreceiver::testing::{Memory, POD_NAME, POD_UID, Running, live, start};
use ptah_resultreceiver::{EnrolmentToken, Live};
use rcgen::{CertificateParams, KeyPair, PKCS_ECDSA_P256_SHA256};

fn token() -> EnrolmentToken {
    EnrolmentToken::from_bytes([3; 32])
}

const OP: &str = "op-1";
const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

async fn receiver() -> Running {
    let memory = Memory::default();
    *memory.live.lock().expect("lock") = live(Operation::Observe, OP, &token(), LOOPBACK);
    start(memory).await
}

fn enrol_request(key: &KeyPair, token: &EnrolmentToken) -> Vec<u8> {
    let csr = CertificateParams::default().serialize_request(key).expect("csr");
    let request = EnrolRequest {
        namespace: "shop".to_owned(),
        kind: ResourceKind::PtahSchema,
        name: "orders".to_owned(),
        operation_id: OperationId::new(OP).expect("id"),
        pod_name: POD_NAME.to_owned(),
        pod_uid: POD_UID.to_owned(),
        token: token.reveal(),
        csr: STANDARD.encode(csr.der()),
    };
    serde_json::to_vec(&request).expect("json")
}

fn reason(body: &[u8]) -> String {
    serde_json::from_slice::<RefusalBody>(body)
        .map_or_else(|_| String::from_utf8_lossy(body).into_owned(), |r| r.reason)
}

/// Enrols and returns the client identity (certificate DER, key PEM) and its binding.
async fn enrolled(running: &Running) -> ((Vec<u8>, String), ResultBinding) {
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).expect("key");
    let (status, body) = post(
        running.addr,
        client(&running.ca_der, None),
        ROUTE_ENROL,
        &[],
        enrol_request(&key, &token()),
    )
    .await
    .expect("enrol");
    assert_eq!(status, StatusCode::CREATED, "{}", reason(&body));
    let answer: EnrolAnswer = serde_json::from_slice(&body).expect("answer");
    let der = answer.certificate_der().expect("der");
    let binding = ptah_resultreceiver::binding_of(&der).expect("binding");
    ((der, key.serialize_pem()), binding)
}

fn result_body(binding: &ResultBinding, exit: i32) -> Vec<u8> {
    let mut payload = ResultPayload::new(Operation::Observe, Some(OperationId::new(OP).expect("id")));
    payload.child_exit_code = exit;
    payload.error = Some(ptah_dataplane::ResultError {
        code: ptah_dataplane::ErrorCode::Internal,
        child_code: None,
        message: format!("exit {exit}"),
    });
    let body = ResultBody {
        binding: binding.clone(),
        payload,
    };
    body.encode().expect("encode").bytes
}

fn delivery_headers(bytes: &[u8]) -> Vec<(&'static str, String)> {
    vec![
        ("content-type", CONTENT_TYPE.to_owned()),
        (DIGEST_HEADER, digest_of(bytes)),
    ]
}

#[tokio::test]
async fn a_pod_enrols_once_delivers_and_a_replay_is_acknowledged_without_a_write() {
    let running = receiver().await;
    let (identity, binding) = enrolled(&running).await;
    assert_eq!(binding.pod.uid, "pod-uid");
    // The one-time check: a second enrolment, even with a fresh key, is refused.
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).expect("key");
    let again = post(
        running.addr,
        client(&running.ca_der, None),
        ROUTE_ENROL,
        &[],
        enrol_request(&key, &token()),
    )
    .await
    .expect("second enrolment");
    assert_eq!(
        (again.0, reason(&again.1)),
        (StatusCode::CONFLICT, "AlreadyEnrolled".to_owned())
    );

    let tls = client(&running.ca_der, Some(identity));
    let bytes = result_body(&binding, 2);
    let (status, _) = post(
        running.addr,
        tls.clone(),
        ROUTE_RESULTS,
        &delivery_headers(&bytes),
        bytes.clone(),
    )
    .await
    .expect("deliver");
    assert_eq!(status, StatusCode::CREATED);
    let records = running.memory.records.lock().expect("lock").len();
    assert_eq!(records, 3, "intent, one chunk, complete");
    // The acknowledgment was lost, the claim settled on it, and the runner sends it again.
    *running.memory.live.lock().expect("lock") = Live::default();
    let (status, _) = post(
        running.addr,
        tls.clone(),
        ROUTE_RESULTS,
        &delivery_headers(&bytes),
        bytes,
    )
    .await
    .expect("replay");
    assert_eq!(status, StatusCode::OK);
    assert_eq!(running.memory.records.lock().expect("lock").len(), records);
    let other = result_body(&binding, 3);
    let (status, body) = post(running.addr, tls, ROUTE_RESULTS, &delivery_headers(&other), other)
        .await
        .expect("other");
    assert_eq!(
        (status, reason(&body)),
        (StatusCode::CONFLICT, "Conflict".to_owned())
    );
}

#[tokio::test]
async fn enrolment_from_another_address_or_with_another_token_is_refused() {
    let memory = Memory::default();
    *memory.live.lock().expect("lock") = live(
        Operation::Observe,
        OP,
        &token(),
        IpAddr::V4(Ipv4Addr::new(10, 244, 0, 9)),
    );
    let running = start(memory).await;
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).expect("key");
    let tls = client(&running.ca_der, None);
    let (status, body) = post(
        running.addr,
        tls.clone(),
        ROUTE_ENROL,
        &[],
        enrol_request(&key, &token()),
    )
    .await
    .expect("enrol");
    assert_eq!(
        (status, reason(&body)),
        (StatusCode::FORBIDDEN, "SourceAddress".to_owned())
    );
    *running.memory.live.lock().expect("lock") = live(Operation::Observe, OP, &token(), LOOPBACK);
    let other = EnrolmentToken::from_bytes([4; 32]);
    let (status, body) = post(
        running.addr,
        tls.clone(),
        ROUTE_ENROL,
        &[],
        enrol_request(&key, &other),
    )
    .await
    .expect("enrol");
    assert_eq!(
        (status, reason(&body)),
        (StatusCode::FORBIDDEN, "WrongToken".to_owned())
    );
    assert!(!String::from_utf8_lossy(&body).contains(&other.reveal()));
    // Refusals spent nothing: the real runner still enrols.
    let (status, _) = post(
        running.addr,
        tls.clone(),
        ROUTE_ENROL,
        &[],
        enrol_request(&key, &token()),
    )
    .await
    .expect("enrol");
    assert_eq!(status, StatusCode::CREATED);
    let (status, _) = post(running.addr, tls, ROUTE_ENROL, &[], vec![b'{'; 17 * 1024])
        .await
        .expect("big");
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn a_delivery_without_the_enrolled_certificate_or_with_a_bad_body_is_refused() {
    let running = receiver().await;
    let (identity, binding) = enrolled(&running).await;
    let bytes = result_body(&binding, 2);
    let anonymous = client(&running.ca_der, None);
    let (status, body) = post(
        running.addr,
        anonymous,
        ROUTE_RESULTS,
        &delivery_headers(&bytes),
        bytes.clone(),
    )
    .await
    .expect("anonymous");
    assert_eq!(
        (status, reason(&body)),
        (StatusCode::UNAUTHORIZED, "NoClientCertificate".to_owned())
    );

    // A certificate from another CA does not get past the handshake.
    let (foreign_ca, foreign_key) = common::ca_pem();
    let foreign = ptah_resultreceiver::ResultCa::from_pem(&foreign_ca, &foreign_key).expect("ca");
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).expect("key");
    let csr = CertificateParams::default().serialize_request(&key).expect("csr");
    let forged = ptah_resultreceiver::issue_client(
        &foreign,
        csr.der(),
        &binding,
        jiff::Timestamp::now(),
        jiff::Timestamp::now() + jiff::SignedDuration::from_secs(60),
    )
    .expect("forged");
    let forged_tls = client(&running.ca_der, Some((forged.to_vec(), key.serialize_pem())));
    let outcome = post(
        running.addr,
        forged_tls,
        ROUTE_RESULTS,
        &delivery_headers(&bytes),
        bytes.clone(),
    )
    .await;
    assert!(
        outcome.is_err(),
        "a foreign certificate was accepted: {outcome:?}"
    );

    let tls = client(&running.ca_der, Some(identity));
    let mut wrong_digest = delivery_headers(&bytes);
    wrong_digest[1].1 = digest_of(b"other");
    let (status, body) = post(
        running.addr,
        tls.clone(),
        ROUTE_RESULTS,
        &wrong_digest,
        bytes.clone(),
    )
    .await
    .expect("digest");
    assert_eq!(
        (status, reason(&body)),
        (StatusCode::BAD_REQUEST, "Body".to_owned())
    );
    let pretty =
        serde_json::to_vec_pretty(&serde_json::from_slice::<serde_json::Value>(&bytes).expect("json"))
            .expect("pretty");
    let (status, _) = post(
        running.addr,
        tls.clone(),
        ROUTE_RESULTS,
        &delivery_headers(&pretty),
        pretty,
    )
    .await
    .expect("pretty");
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let plain = vec![
        ("content-type", "application/json".to_owned()),
        (DIGEST_HEADER, digest_of(&bytes)),
    ];
    let (status, _) = post(running.addr, tls.clone(), ROUTE_RESULTS, &plain, bytes.clone())
        .await
        .expect("type");
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    // A body for another operation than the certificate names.
    let mut other_binding = binding.clone();
    other_binding.pod.uid = "another-pod".to_owned();
    let other = result_body(&other_binding, 2);
    let (status, body) = post(
        running.addr,
        tls.clone(),
        ROUTE_RESULTS,
        &delivery_headers(&other),
        other,
    )
    .await
    .expect("other binding");
    assert_eq!(
        (status, reason(&body)),
        (StatusCode::FORBIDDEN, "OtherBinding".to_owned())
    );
    // The claim moved on (a new generation) before the result arrived.
    if let Some(claim) = running.memory.live.lock().expect("lock").claim.as_mut() {
        claim.resource.generation = 3;
    }
    let (status, body) = post(running.addr, tls, ROUTE_RESULTS, &delivery_headers(&bytes), bytes)
        .await
        .expect("stale");
    assert_eq!(
        (status, reason(&body)),
        (StatusCode::FORBIDDEN, "Stale".to_owned())
    );
    assert!(
        running.memory.records.lock().expect("lock").is_empty(),
        "nothing was stored"
    );
}

#[tokio::test]
async fn a_delivery_cut_short_between_chunk_and_complete_is_finished_by_the_retry() {
    let running = receiver().await;
    let (identity, binding) = enrolled(&running).await;
    // The manager dies after the intent, before the first chunk.
    let mut payload = ResultPayload::new(Operation::Observe, Some(OperationId::new(OP).expect("id")));
    payload.child_exit_code = 2;
    payload.error = Some(ptah_dataplane::ResultError {
        code: ptah_dataplane::ErrorCode::Internal,
        child_code: None,
        message: "x".repeat(2000),
    });
    let bytes = canonical_json(&ResultBody { binding, payload }).expect("json");
    *running.memory.stop_after_chunks.lock().expect("lock") = Some(0);
    let tls = client(&running.ca_der, Some(identity));
    let (status, _) = post(
        running.addr,
        tls.clone(),
        ROUTE_RESULTS,
        &delivery_headers(&bytes),
        bytes.clone(),
    )
    .await
    .expect("cut");
    assert_eq!(
        status,
        StatusCode::SERVICE_UNAVAILABLE,
        "no acknowledgment before complete"
    );
    assert_eq!(
        running.memory.records.lock().expect("lock").len(),
        1,
        "the intent only"
    );
    let (status, _) = post(running.addr, tls, ROUTE_RESULTS, &delivery_headers(&bytes), bytes)
        .await
        .expect("retry");
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(running.memory.records.lock().expect("lock").len(), 3);
}

#[tokio::test]
async fn tls_1_2_is_refused() {
    let running = receiver().await;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(running.ca_der.clone()).expect("root");
    let tls12 = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[&rustls::version::TLS12])
    .expect("versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    let outcome = post(
        running.addr,
        std::sync::Arc::new(tls12),
        ROUTE_ENROL,
        &[],
        Vec::new(),
    )
    .await;
    assert!(outcome.is_err(), "{outcome:?}");
}
