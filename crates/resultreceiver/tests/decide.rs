//! Every refusal of an enrolment and of a delivery, the admitted paths, and an idempotent replay.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ptah_dataplane::{Operation, OperationId, ResultPayload};
use ptah_fingerprint::{Digest, Fingerprint};
use ptah_resultdelivery::{ClaimRef, ObjectRef, ResourceKind, ResourceRef, ResultBody};
use ptah_resultreceiver::{
    DeliveryDecision, EnrolmentRequest, EnrolmentToken, Live, LiveClaim, LiveJob, LivePod, PodPhase, Refusal,
    Stored, admit_delivery, admit_enrolment,
};

const POD_IP: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 244, 0, 17));

fn token() -> EnrolmentToken {
    EnrolmentToken::from_bytes([7; 32])
}

fn object(name: &str, uid: &str) -> ObjectRef {
    ObjectRef {
        name: name.to_owned(),
        uid: uid.to_owned(),
    }
}

fn live() -> Live {
    Live {
        claim: Some(LiveClaim {
            resource: ResourceRef {
                namespace: "shop".to_owned(),
                kind: ResourceKind::PtahSchema,
                name: "orders".to_owned(),
                uid: "r-uid".to_owned(),
                generation: 2,
            },
            claim: ClaimRef {
                execution_binding_id: "eb-1".to_owned(),
                input_fingerprint: Fingerprint::of(&"inputs").expect("fingerprint"),
                operation: Operation::Observe,
                operation_id: OperationId::new("op-9").expect("id"),
            },
            job_name: "orders-observe-9".to_owned(),
            dispatched: true,
            enrolment_digest: Some(token().digest()),
            not_after: jiff::Timestamp::from_second(1_800_000_000).expect("time"),
        }),
        job: Some(LiveJob {
            id: object("orders-observe-9", "job-uid"),
        }),
        pod: Some(LivePod {
            id: object("orders-observe-9-abcde", "pod-uid"),
            controller_uid: Some("job-uid".to_owned()),
            phase: PodPhase::Running,
            pod_ip: Some(POD_IP),
        }),
    }
}

fn request() -> EnrolmentRequest {
    EnrolmentRequest {
        operation_id: OperationId::new("op-9").expect("id"),
        pod: object("orders-observe-9-abcde", "pod-uid"),
        token: token(),
        source: POD_IP,
    }
}

fn refused(request: &EnrolmentRequest, live: &Live) -> Refusal {
    admit_enrolment(request, live).expect_err("refused")
}

#[test]
fn the_operation_pod_enrols_with_its_token_from_its_address() {
    let binding = admit_enrolment(&request(), &live()).expect("admitted");
    assert_eq!(binding.job, object("orders-observe-9", "job-uid"));
    assert_eq!(binding.pod, object("orders-observe-9-abcde", "pod-uid"));
    assert_eq!(binding.claim.operation_id.as_str(), "op-9");
    // The same address reached over IPv6 as an IPv4-mapped address is the same address.
    let mut mapped = request();
    mapped.source = IpAddr::V6(Ipv4Addr::new(10, 244, 0, 17).to_ipv6_mapped());
    assert!(admit_enrolment(&mapped, &live()).is_ok());
}

#[test]
fn every_enrolment_mismatch_is_refused_with_its_reason() {
    let mut other_op = request();
    other_op.operation_id = OperationId::new("op-8").expect("id");
    assert_eq!(refused(&other_op, &live()), Refusal::NoSuchClaim);
    assert_eq!(refused(&request(), &Live::default()), Refusal::NoSuchClaim);

    let with_claim = |edit: fn(&mut LiveClaim)| {
        let mut l = live();
        if let Some(c) = l.claim.as_mut() {
            edit(c);
        }
        l
    };
    assert_eq!(
        refused(&request(), &with_claim(|c| c.dispatched = false)),
        Refusal::NotDispatched
    );
    assert_eq!(
        refused(&request(), &with_claim(|c| c.enrolment_digest = None)),
        Refusal::NotEnrolable
    );
    let mut wrong = request();
    wrong.token = EnrolmentToken::from_bytes([8; 32]);
    assert_eq!(refused(&wrong, &live()), Refusal::WrongToken);

    let mut no_job = live();
    no_job.job = None;
    assert_eq!(
        refused(&request(), &no_job),
        Refusal::NoJob("orders-observe-9".to_owned())
    );
    let mut other_job = live();
    other_job.job = Some(LiveJob {
        id: object("orders-observe-8", "job-uid"),
    });
    assert!(matches!(refused(&request(), &other_job), Refusal::NoJob(_)));

    let with_pod = |edit: fn(&mut LivePod)| {
        let mut l = live();
        if let Some(p) = l.pod.as_mut() {
            edit(p);
        }
        l
    };
    let pod = "orders-observe-9-abcde".to_owned();
    assert_eq!(
        refused(&request(), &with_pod(|p| p.id.uid = "recreated".to_owned())),
        Refusal::NoPod(pod.clone())
    );
    let mut no_pod = live();
    no_pod.pod = None;
    assert_eq!(refused(&request(), &no_pod), Refusal::NoPod(pod.clone()));
    assert_eq!(
        refused(
            &request(),
            &with_pod(|p| p.controller_uid = Some("attacker-job".to_owned()))
        ),
        Refusal::PodNotOfJob(pod.clone())
    );
    assert_eq!(
        refused(&request(), &with_pod(|p| p.controller_uid = None)),
        Refusal::PodNotOfJob(pod.clone())
    );
    assert_eq!(
        refused(&request(), &with_pod(|p| p.phase = PodPhase::Ended)),
        Refusal::PodNotRunning(pod.clone())
    );
    // A runner ahead of the kubelet's status update is asked to come back (503), not refused.
    for starting in [
        with_pod(|p| p.phase = PodPhase::Starting),
        with_pod(|p| p.pod_ip = None),
    ] {
        let refusal = refused(&request(), &starting);
        assert_eq!(refusal, Refusal::PodStarting(pod.clone()));
        assert_eq!(refusal.status(), 503);
    }
    assert_eq!(Refusal::PodNotRunning(pod.clone()).status(), 403);
    // A Pod of the attacker's holding the token connects from its own address (or the node's).
    let mut elsewhere = request();
    elsewhere.source = IpAddr::V4(Ipv4Addr::new(10, 244, 0, 18));
    assert_eq!(refused(&elsewhere, &live()), Refusal::SourceAddress(pod.clone()));
    elsewhere.source = IpAddr::V6(Ipv6Addr::LOCALHOST);
    assert_eq!(refused(&elsewhere, &live()), Refusal::SourceAddress(pod));
}

#[test]
fn refusals_never_show_the_token_and_map_to_http() {
    let mut wrong = request();
    wrong.token = EnrolmentToken::from_bytes([0x5a; 32]);
    let err = refused(&wrong, &live());
    let hex = wrong.token.reveal();
    assert!(!err.to_string().contains(&hex) && !format!("{err:?}").contains(&hex));
    assert!(!format!("{wrong:?}").contains(&hex));
    assert_eq!((err.status(), err.reason()), (403, "WrongToken"));
    assert_eq!(Refusal::Conflict.status(), 409);
    assert_eq!(Refusal::AlreadyEnrolled.status(), 409);
}

fn body() -> ResultBody {
    let binding = admit_enrolment(&request(), &live()).expect("admitted");
    let mut payload = ResultPayload::new(Operation::Observe, Some(OperationId::new("op-9").expect("id")));
    payload.child_exit_code = 2;
    ResultBody { binding, payload }
}

#[test]
fn a_delivery_is_stored_once_and_an_identical_replay_is_acknowledged() {
    let body = body();
    let digest = Digest::of(b"the body");
    let binding = body.binding.clone();
    assert_eq!(
        admit_delivery(&binding, &body, digest, Stored::Nothing, &live()),
        Ok(DeliveryDecision::Store)
    );
    // A delivery cut short by a manager restart is finished with the same bytes.
    assert_eq!(
        admit_delivery(&binding, &body, digest, Stored::Partial(digest), &live()),
        Ok(DeliveryDecision::Store)
    );
    // The acknowledgment was lost and the claim has settled since: the replay still gets its 200.
    assert_eq!(
        admit_delivery(
            &binding,
            &body,
            digest,
            Stored::Complete(digest),
            &Live::default()
        ),
        Ok(DeliveryDecision::AlreadyStored)
    );
}

#[test]
fn every_delivery_mismatch_is_refused() {
    let body = body();
    let digest = Digest::of(b"the body");
    let other = Digest::of(b"other bytes");
    let binding = body.binding.clone();
    let admit = |stored: Stored, live: &Live| admit_delivery(&binding, &body, digest, stored, live);
    assert_eq!(admit(Stored::Complete(other), &live()), Err(Refusal::Conflict));
    assert_eq!(admit(Stored::Partial(other), &live()), Err(Refusal::Conflict));

    let mut for_other_pod = binding.clone();
    for_other_pod.pod.uid = "another-pod".to_owned();
    assert_eq!(
        admit_delivery(&for_other_pod, &body, digest, Stored::Nothing, &live()),
        Err(Refusal::OtherBinding)
    );

    assert_eq!(
        admit(Stored::Nothing, &Live::default()),
        Err(Refusal::Stale("claim"))
    );
    let mut next_generation = live();
    if let Some(c) = next_generation.claim.as_mut() {
        c.resource.generation = 3;
    }
    assert_eq!(
        admit(Stored::Nothing, &next_generation),
        Err(Refusal::Stale("claim"))
    );
    let mut other_claim = live();
    if let Some(c) = other_claim.claim.as_mut() {
        c.claim.operation_id = OperationId::new("op-10").expect("id");
    }
    assert_eq!(admit(Stored::Nothing, &other_claim), Err(Refusal::Stale("claim")));
    let mut recreated_job = live();
    recreated_job.job = Some(LiveJob {
        id: object("orders-observe-9", "job-uid-2"),
    });
    assert_eq!(admit(Stored::Nothing, &recreated_job), Err(Refusal::Stale("Job")));
    let mut no_pod = live();
    no_pod.pod = None;
    assert_eq!(admit(Stored::Nothing, &no_pod), Err(Refusal::Stale("Pod")));
}

#[test]
fn a_pods_phase_is_read_with_its_deletion() {
    assert_eq!(PodPhase::of(None, false), PodPhase::Starting);
    assert_eq!(PodPhase::of(Some("Pending"), false), PodPhase::Starting);
    assert_eq!(PodPhase::of(Some("Running"), false), PodPhase::Running);
    for ended in ["Succeeded", "Failed", "Unknown"] {
        assert_eq!(PodPhase::of(Some(ended), false), PodPhase::Ended);
    }
    assert_eq!(PodPhase::of(Some("Running"), true), PodPhase::Ended);
    assert_eq!(PodPhase::of(Some("Pending"), true), PodPhase::Ended);
}
