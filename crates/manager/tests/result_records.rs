//! T3 against the real API server (`cargo xtask cluster up --tier api`): the manager's result
//! receiver, started from its own flags and key material, over its Kubernetes backend. A runner
//! whose Pod is the claim's (its status written by the test: no kubelet runs) enrols once,
//! delivers an exactly 8 MiB plan into `PtahResultRecord`s, which read back byte for byte through
//! the reconcilers' reader; a replay is acknowledged, other bytes are refused, a second enrolment
//! is refused, and a stranger's token gets nothing.

use clap::Parser as _;
use k8s_openapi::api::{batch::v1::Job, core::v1::Pod};
use kube::{
    Api, ResourceExt,
    api::{PatchParams, PostParams},
};
use ptah_api::{PtahResultRecord, PtahSchema};
use ptah_apitests::{
    client::{admin_client, install_crds, namespace},
    e2e::create,
};
use ptah_controller::resultrecords::{self, Found};
use ptah_dataplane::{MAX_PLAN_BYTES, Operation, OperationId, PlanOutcome, PlanResult, ResultPayload};
use ptah_fingerprint::{Digest, Fingerprint};
use ptah_manager::{Args, results};
use ptah_resultclient::{ClientError, Delivered, Endpoint, Enrolment, deliver, enrol};
use ptah_resultdelivery::{EnrolmentToken, ResourceKind, ResultBody, wire::EnrolmentTicket};
use rustls_pki_types::{CertificateDer, ServerName, pem::PemObject as _};
use serde_json::json;

const SERVER_NAME: &str = "ptah-operator-webhook.ptah-system.svc";
const JOB: &str = "orders-plan-t3";
const POD: &str = "orders-plan-t3-pod";

fn operation_id() -> String {
    format!("sha256:{}", "7".repeat(64))
}

/// A PtahSchema whose Plan claim was dispatched with `token`'s digest, its Job, and that Job's
/// Running Pod at 127.0.0.1 (where the test connects from).
async fn dispatched(client: &kube::Client, ns: &str, token: &EnrolmentToken) -> (String, String) {
    let schemas: Api<PtahSchema> = Api::namespaced(client.clone(), ns);
    let schema = create(&schemas, json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchema",
        "metadata": {"name": "orders"},
        "spec": {
            "target": {"engine": "PostgreSQL", "coordinationKey": "orders", "urlFrom": {"name": "db", "key": "url"}},
            "desired": {"ociRef": "oci://registry.invalid/shop/orders:v1", "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"}}
        }
    }))
    .await;
    let claim = json!({
        "type": "Plan",
        "id": operation_id(),
        "inputFingerprint": format!("sha256:{}", "8".repeat(64)),
        "jobName": JOB,
        "startedAt": jiff::Timestamp::now().to_string(),
        "attempt": 1,
        "executionBindingID": "v1-0123456789abcdef0123456789abcdef",
        "generation": 1,
        "dispatchStarted": true,
        "resultEnrolmentDigest": token.digest().to_string(),
    });
    schemas
        .patch_status(
            "orders",
            &PatchParams::default(),
            &kube::api::Patch::Merge(json!({"status": {"activeOperation": claim}})),
        )
        .await
        .expect("the claim");
    let jobs: Api<Job> = Api::namespaced(client.clone(), ns);
    let job = create(&jobs, json!({
        "metadata": {"name": JOB},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "ptah", "image": "registry.invalid/ptah"}]}}}
    }))
    .await;
    let job_uid = job.uid().expect("uid");
    // On a full cluster the Job controller releases a Pod its selector does not match (it drops
    // the controller reference); the Pod carries the selector's labels as the Job's own would.
    let selected = job
        .spec
        .as_ref()
        .and_then(|s| s.selector.as_ref())
        .and_then(|s| s.match_labels.clone())
        .unwrap_or_default();
    // The API tier runs no controller manager to create the namespace's default ServiceAccount;
    // on a full cluster its controller may already have made it.
    let accounts: Api<k8s_openapi::api::core::v1::ServiceAccount> = Api::namespaced(client.clone(), ns);
    let account = serde_json::from_value(json!({"metadata": {"name": "default"}})).expect("account");
    match accounts.create(&PostParams::default(), &account).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 409 => {}
        Err(e) => panic!("the default ServiceAccount: {e}"),
    }
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    create(&pods, json!({
        "metadata": {"name": POD, "labels": selected, "ownerReferences": [{
            "apiVersion": "batch/v1", "kind": "Job", "name": JOB, "uid": job_uid, "controller": true}]},
        "spec": {"nodeName": "nowhere", "restartPolicy": "Never", "containers": [{"name": "ptah", "image": "registry.invalid/ptah"}]}
    }))
    .await;
    let pod = pods
        .patch_status(
            POD,
            &PatchParams::default(),
            &kube::api::Patch::Merge(json!({"status": {"phase": "Running", "podIP": "127.0.0.1", "podIPs": [{"ip": "127.0.0.1"}]}})),
        )
        .await
        .expect("the Pod's status");
    (schema.uid().expect("uid"), pod.uid().expect("uid"))
}

fn enrolment(ns: &str, token: &EnrolmentToken, pod_uid: &str) -> Enrolment {
    Enrolment {
        ticket: EnrolmentTicket {
            namespace: ns.to_owned(),
            kind: ResourceKind::PtahSchema,
            name: "orders".to_owned(),
            operation_id: OperationId::new(operation_id()).expect("id"),
            token: token.reveal(),
        },
        pod_name: POD.to_owned(),
        pod_uid: pod_uid.to_owned(),
    }
}

fn plan_payload(plan: &str) -> ResultPayload {
    let mut payload = ResultPayload::new(
        Operation::Plan,
        Some(OperationId::new(operation_id()).expect("id")),
    );
    payload.child_exit_code = 1;
    payload.coordination_digest = Some(Fingerprint::of(&1).expect("fp"));
    payload.target_identity_digest = Some(Fingerprint::of(&2).expect("fp"));
    payload.stdout = Some(plan.to_owned());
    payload.plan = Some(PlanResult {
        plan_content_digest: Digest::of(plan.as_bytes()),
        plan_outcome: PlanOutcome::Changes,
        statement_count: 1,
        destructive: false,
        from_fingerprint: Fingerprint::of(&3).expect("fp"),
        to_fingerprint: Fingerprint::of(&4).expect("fp"),
    });
    payload
}

/// The manager's receiver started from its own flags on a free loopback port, with the rotator's
/// material for the Service name, and the runner's view of it.
struct Receiver {
    delivery: results::Delivery,
    endpoint: Endpoint,
    ca_pem: String,
    stop: tokio::sync::watch::Sender<bool>,
    _dir: tempfile::TempDir,
}

impl Receiver {
    async fn start(client: &kube::Client) -> Receiver {
        let dir = tempfile::tempdir().expect("dir");
        ptah_apitests::resultdelivery::write_material(dir.path(), SERVER_NAME);
        let ca_pem = std::fs::read_to_string(dir.path().join("ca.crt")).expect("ca.crt");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let args = Args::parse_from([
            "manager",
            "--executor-image=x",
            "--runner-image=x",
            &format!("--result-endpoint=127.0.0.1:{port}"),
            &format!("--result-server-name={SERVER_NAME}"),
            &format!("--result-tls-dir={}", dir.path().display()),
            &format!("--result-addr=127.0.0.1:{port}"),
        ]);
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let delivery = results::start(client.clone(), &args, stopped)
            .await
            .expect("started")
            .expect("durable delivery is configured");
        assert_eq!(delivery.endpoint.endpoint, format!("127.0.0.1:{port}"));
        let endpoint = Endpoint {
            address: format!("127.0.0.1:{port}"),
            server_name: ServerName::try_from(SERVER_NAME.to_owned()).expect("name"),
            trusted: CertificateDer::pem_slice_iter(ca_pem.as_bytes())
                .collect::<Result<Vec<_>, _>>()
                .expect("ca"),
        };
        Receiver {
            delivery,
            endpoint,
            ca_pem,
            stop,
            _dir: dir,
        }
    }

    async fn stop(self) {
        let _ = self.stop.send(true);
        self.delivery.task.await.expect("the receiver stopped");
    }
}

#[tokio::test]
async fn a_durable_result_is_stored_in_records_once_and_read_back_whole() {
    let client = admin_client().await;
    install_crds(&client).await;
    let ns = namespace(&client, "results-t3").await;
    let token = EnrolmentToken::generate().expect("token");
    let (schema_uid, pod_uid) = dispatched(&client, &ns, &token).await;

    let receiver = Receiver::start(&client).await;
    assert_eq!(
        *receiver.delivery.ca_bundle.borrow(),
        receiver.ca_pem,
        "the bundle handed to tickets"
    );
    let endpoint = receiver.endpoint.clone();
    // A stranger's token is refused before anything is written.
    let stranger = EnrolmentToken::generate().expect("token");
    let refused = enrol(&endpoint, &enrolment(&ns, &stranger, &pod_uid)).await;
    assert!(
        matches!(&refused, Err(ClientError::Refused { reason, .. }) if reason == "WrongToken"),
        "{refused:?}"
    );

    let identity = enrol(&endpoint, &enrolment(&ns, &token, &pod_uid))
        .await
        .expect("enrolled");
    assert_eq!(identity.binding().resource.uid, schema_uid);
    assert_eq!(identity.binding().pod.uid, pod_uid);
    // Once per operation, across every replica: the credential record exists now.
    let again = enrol(&endpoint, &enrolment(&ns, &token, &pod_uid)).await;
    assert!(
        matches!(&again, Err(ClientError::Refused { reason, .. }) if reason == "AlreadyEnrolled"),
        "{again:?}"
    );

    let plan = format!("{}\n", "x".repeat(MAX_PLAN_BYTES - 1));
    let body = ResultBody {
        binding: identity.binding().clone(),
        payload: plan_payload(&plan),
    }
    .encode()
    .expect("encoded");
    assert_eq!(
        deliver(&endpoint, &identity, &body).await.expect("delivered"),
        Delivered::Stored
    );
    assert_eq!(
        deliver(&endpoint, &identity, &body).await.expect("replayed"),
        Delivered::AlreadyStored
    );
    let other = ResultBody {
        binding: identity.binding().clone(),
        payload: plan_payload("SELECT 1;\n"),
    }
    .encode()
    .expect("encoded");
    let conflict = deliver(&endpoint, &identity, &other).await;
    assert!(
        matches!(&conflict, Err(ClientError::Refused { status: 409, .. })),
        "{conflict:?}"
    );

    let stem = identity.binding().record_stem();
    let records: Api<PtahResultRecord> = Api::namespaced(client.clone(), &ns);
    let list = records
        .list(&resultrecords::list_params(&stem))
        .await
        .expect("records");
    // credential, intent, 17 chunks of at most 512 KiB, complete.
    assert_eq!(
        list.items.len(),
        20,
        "{:?}",
        list.items.iter().map(ResourceExt::name_any).collect::<Vec<_>>()
    );
    assert!(
        list.items
            .iter()
            .all(|r| r.owner_references().iter().any(|o| o.uid == schema_uid))
    );
    match resultrecords::stored(&list.items, &stem).expect("readable") {
        Found::Complete(bytes, digest) => {
            assert_eq!(digest, body.digest);
            assert_eq!(bytes, body.bytes);
        }
        other => panic!("not complete: {other:?}"),
    }
    // Records are immutable, whoever asks.
    let mut changed = list.items[1].clone();
    changed.spec.stem = format!("ptah-result-{}", "0".repeat(64));
    let refused = records
        .replace(&changed.name_any(), &kube::api::PostParams::default(), &changed)
        .await;
    assert!(
        matches!(&refused, Err(kube::Error::Api(s)) if s.code == 422),
        "{refused:?}"
    );
    // Nothing here is old enough for retention.
    assert_eq!(results::sweep(&client).await.expect("swept"), 0);
    receiver.stop().await;
}

/// A manager killed between `chunk` and `complete` left an intent and some chunks; the runner's
/// retry of the same bytes (to this replica or another) finishes the records, and the reconcilers
/// read the whole body.
#[tokio::test]
async fn a_delivery_cut_short_between_chunks_and_complete_is_finished_by_the_retry() {
    let client = admin_client().await;
    install_crds(&client).await;
    let ns = namespace(&client, "results-cut").await;
    let token = EnrolmentToken::generate().expect("token");
    let (_, pod_uid) = dispatched(&client, &ns, &token).await;
    let receiver = Receiver::start(&client).await;
    let endpoint = receiver.endpoint.clone();
    let identity = enrol(&endpoint, &enrolment(&ns, &token, &pod_uid))
        .await
        .expect("enrolled");
    let plan = format!("{}\n", "y".repeat(3 * 512 * 1024));
    let body = ResultBody {
        binding: identity.binding().clone(),
        payload: plan_payload(&plan),
    }
    .encode()
    .expect("encoded");
    // What the killed manager wrote: the intent and the first two of four chunks.
    let stem = identity.binding().record_stem();
    let owner = resultrecords::owner(
        ResourceKind::PtahSchema,
        "orders",
        &identity.binding().resource.uid,
    );
    let (intent, chunks) = ptah_resultdelivery::split(&body);
    assert_eq!(chunks.len(), 4);
    let records: Api<PtahResultRecord> = Api::namespaced(client.clone(), &ns);
    let params = kube::api::PostParams::default();
    let mut partial = vec![resultrecords::Content::Intent(&intent)];
    partial.extend((0u32..2).map(|i| resultrecords::Content::Chunk(i, chunks[i as usize])));
    for content in partial {
        records
            .create(
                &params,
                &resultrecords::record(&ns, &stem, owner.clone(), content),
            )
            .await
            .expect("a record of the cut-short delivery");
    }
    let listed = records
        .list(&resultrecords::list_params(&stem))
        .await
        .expect("records");
    assert_eq!(
        resultrecords::stored(&listed.items, &stem).expect("readable"),
        Found::Partial(body.digest),
        "nothing is read from a delivery without its complete record"
    );

    assert_eq!(
        deliver(&endpoint, &identity, &body).await.expect("delivered"),
        Delivered::Stored
    );
    let listed = records
        .list(&resultrecords::list_params(&stem))
        .await
        .expect("records");
    assert_eq!(listed.items.len(), 7, "credential, intent, four chunks, complete");
    assert_eq!(
        resultrecords::stored(&listed.items, &stem).expect("readable"),
        Found::Complete(body.bytes.clone(), body.digest)
    );
    receiver.stop().await;
}
