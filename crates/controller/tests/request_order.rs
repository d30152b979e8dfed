//! Request order of the shared shell, on a recorded API server: `perform` runs against a
//! `kube::Client` over `tower_test::mock`, and a spawned verifier answers each expected request in
//! turn, asserting its method, path, query and (where it matters) body. Once `perform` returns,
//! every client is dropped; the verifier then demands the channel closes with no request left, so
//! any unexpected extra write fails the test. No cluster is needed.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use http::{Method, Request, Response, StatusCode, header::CONTENT_TYPE};
use jiff::Timestamp;
use kube::{Client, client::Body, runtime::reflector};
use ptah_api::{
    PtahSchema, PtahSchemaSpec, PtahSchemaStatus,
    schema::SchemaOperationType as Op,
    shared::{Epoch, PinnedImage, Sha256Digest},
};
use ptah_controller::{
    operation::{Action, Binding, Claim},
    schema::{JobState, Meta, Observed, PlanDraft, PlanState, PolicyRead, Realm, ResultRead, decide},
    shell::{
        Context, ErrorCategory, FIELD_MANAGER, FINALIZER, ManagerConfig, Performed, ShellError, Stores,
        family::Lifecycle, perform,
    },
};
use ptah_fingerprint::Digest;
use ptah_targetlock::{
    COORDINATION_LABEL, COORDINATION_VALUE, EPOCH_ANNOTATION, census::CensusVerdict, holder_identity,
    lease_name,
};
use ptah_telemetry::Metrics;
use serde_json::{Value, json};
use tower_test::mock::{self, Handle, SendResponse};

type SchemaAction = Action<PtahSchemaStatus, PlanDraft>;
/// `Lifecycle::Gathered` of a PtahSchema; its fields are public, so a test can build it.
type Gathered = <PtahSchema as Lifecycle>::Gathered;

const NS: &str = "shop";
const NAME: &str = "orders";
const UID: &str = "uid-orders";
const COORDINATION_NS: &str = "ptah-system";
const IDENTITY: &str = "manager-0";
const HEX: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
/// How long the verifier waits for the next request before calling it missing.
const PATIENCE: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------------------------
// The recorded API server.

/// One request as the verifier received it.
struct Seen {
    method: Method,
    path: String,
    query: BTreeMap<String, String>,
    content_type: Option<String>,
    body: Value,
    respond: SendResponse<Response<Body>>,
}

impl Seen {
    /// Asserts method and path, with `what` naming the step in the failure message.
    fn expect(self, what: &str, method: Method, path: &str) -> Self {
        assert_eq!(
            (&self.method, self.path.as_str()),
            (&method, path),
            "{what}: expected {method} {path}, got {} {}",
            self.method,
            self.path
        );
        self
    }

    /// Asserts the request names the manager's field manager.
    fn by_the_manager(self, what: &str) -> Self {
        assert_eq!(
            self.query.get("fieldManager").map(String::as_str),
            Some(FIELD_MANAGER),
            "{what}: fieldManager in {:?}",
            self.query
        );
        self
    }

    fn reply(self, status: StatusCode, body: &Value) {
        let response = Response::builder()
            .status(status)
            .header(CONTENT_TYPE, "application/json")
            .body(Body::from(serde_json::to_vec(body).expect("a JSON body")))
            .expect("a response");
        self.respond.send_response(response);
    }
}

/// The API server side of the mocked client.
struct Verifier(Handle<Request<Body>, Response<Body>>);

impl Verifier {
    /// The next request; `what` names the step that expects it.
    async fn next(&mut self, what: &str) -> Seen {
        let (request, respond) = tokio::time::timeout(PATIENCE, self.0.next_request())
            .await
            .unwrap_or_else(|_| panic!("{what}: no request within {PATIENCE:?}"))
            .unwrap_or_else(|| panic!("{what}: the client finished without making this request"));
        let (parts, body) = request.into_parts();
        let bytes = body.collect_bytes().await.expect("a request body");
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).expect("a JSON request body")
        };
        let query = parts
            .uri
            .query()
            .unwrap_or_default()
            .split('&')
            .filter(|kv| !kv.is_empty())
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                (k.to_owned(), v.to_owned())
            })
            .collect();
        Seen {
            method: parts.method,
            path: parts.uri.path().to_owned(),
            query,
            content_type: parts
                .headers
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            body,
            respond,
        }
    }

    /// Once every client is dropped the channel closes; any request still arriving is an extra.
    async fn no_more_requests(mut self) {
        let extra = tokio::time::timeout(PATIENCE, self.0.next_request())
            .await
            .expect("the client was never dropped");
        if let Some((request, _)) = extra {
            panic!("unexpected extra request: {} {}", request.method(), request.uri());
        }
    }
}

/// A client whose every request is answered by the returned verifier.
fn recorded_client() -> (Client, Verifier) {
    let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
    (Client::new(service, NS), Verifier(handle))
}

/// Runs `scenario` as the API server while `perform` does `action`. Once the scenario has
/// answered what it expects, the verifier refuses any further request (failing the test and
/// the request) until every client is dropped. The verifier's failure, if any, is reported
/// before `perform`'s outcome.
async fn run<F>(
    res: &PtahSchema,
    g: &Gathered,
    action: SchemaAction,
    scenario: impl FnOnce(Verifier) -> F,
) -> (Result<Performed<PtahSchema>, ShellError>, Arc<Metrics>)
where
    F: Future<Output = Verifier> + Send + 'static,
{
    run_delivering(res, g, action, false, scenario).await
}

/// [`run`] by a manager that delivers results durably when `durable`.
async fn run_delivering<F>(
    res: &PtahSchema,
    g: &Gathered,
    action: SchemaAction,
    durable: bool,
    scenario: impl FnOnce(Verifier) -> F,
) -> (Result<Performed<PtahSchema>, ShellError>, Arc<Metrics>)
where
    F: Future<Output = Verifier> + Send + 'static,
{
    let (client, verifier) = recorded_client();
    let script = scenario(verifier);
    let server = tokio::spawn(async move { script.await.no_more_requests().await });
    let metrics = Arc::new(Metrics::new());
    let outcome = {
        let ctx = context(client, metrics.clone(), durable);
        tokio::time::timeout(PATIENCE * 2, perform(&ctx, res, g, action)).await
        // The context, and with it every clone of the client, is dropped here.
    };
    match tokio::time::timeout(PATIENCE * 2, server).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Ok(Err(e)) => panic!("the verifier did not finish: {e}"),
        Err(_) => panic!("the verifier hung"),
    }
    (outcome.expect("perform hung"), metrics)
}

/// The result CA bundle a durable manager hands to its tickets.
const RESULT_CA: &str = "-----BEGIN CERTIFICATE-----\nresult-ca\n-----END CERTIFICATE-----\n";

fn context(client: Client, metrics: Arc<Metrics>, durable: bool) -> Context {
    let (schemas, _) = reflector::store();
    let (migrations, _) = reflector::store();
    let mut binding = binding();
    if durable {
        binding.result_endpoint = Some(ptah_controller::operation::observed::ResultEndpoint {
            endpoint: "10.96.0.20:8444".into(),
            server_name: "ptah-operator-webhook.ptah-system.svc".into(),
        });
    }
    let ctx = Context::new(
        client,
        binding,
        ManagerConfig {
            coordination_namespace: COORDINATION_NS.into(),
            identity: IDENTITY.into(),
            watch_namespace: None,
        },
        metrics,
        Stores { schemas, migrations },
    );
    if durable {
        ctx.with_result_ca(tokio::sync::watch::channel(RESULT_CA.to_owned()).1)
    } else {
        ctx
    }
}

// ---------------------------------------------------------------------------------------------
// A hand-built world (after the crate's own `schema/tests/world.rs`), on the public API only.

fn digest(tag: &str) -> Sha256Digest {
    Digest::of(tag.as_bytes()).into()
}

fn binding() -> Binding {
    let image = || PinnedImage::parse(&format!("registry.test/ptah@sha256:{HEX}")).expect("image");
    Binding {
        epoch: Epoch::parse(&format!("v1-{}", &HEX[..32])).expect("epoch"),
        controller_state_version: 1,
        ptah_version: "0.1.0".into(),
        executor_image: image(),
        runner_image: image(),
        runner_protocol_version: i64::from(ptah_dataplane::PROTOCOL_VERSION),
        controller_image: "registry.test/manager:dev".into(),
        controller_revision: "dev".into(),
        result_endpoint: None,
    }
}

fn spec() -> PtahSchemaSpec {
    serde_json::from_value(json!({
        "target": {"engine": "PostgreSQL", "coordinationKey": "orders", "urlFrom": {"name": "db", "key": "url"}},
        "desired": {"ociRef": "oci://registry.test/shop/orders:v1",
                    "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"}},
        "policy": {"apply": "OnApproval"}
    }))
    .expect("spec")
}

fn meta() -> Meta {
    Meta {
        namespace: NS.into(),
        name: NAME.into(),
        uid: UID.into(),
        generation: 1,
        deleting: false,
        has_finalizer: true,
    }
}

/// What the shell would have gathered for a schema whose realm is free and policy readable.
fn gathered() -> Gathered {
    Gathered {
        meta: meta(),
        realm: Realm::Claimable {
            engine: "postgresql",
            coordination_digest: digest("realm"),
            census: CensusVerdict::Sole,
        },
        policy: PolicyRead::Ok {
            uid: "policy-uid".into(),
            digest: digest("policy"),
        },
        job: JobState::Absent,
        result: ResultRead::NotRead,
        plan: PlanState::None,
        approvals: Vec::new(),
    }
}

/// The decision over `g` and `status`.
fn decide_on(g: &Gathered, spec: &PtahSchemaSpec, status: &PtahSchemaStatus) -> SchemaAction {
    // Whole seconds: a status round-trips through `metav1.Time`, which keeps no fraction.
    let now = Timestamp::from_second(Timestamp::now().as_second()).expect("now");
    decide(&Observed {
        now,
        meta: &g.meta,
        spec,
        status,
        binding: &binding(),
        realm: &g.realm,
        policy: &g.policy,
        job: &g.job,
        result: &g.result,
        plan: &g.plan,
        approvals: &g.approvals,
    })
}

/// The live object whose recorded status is `status` (resourceVersion "1", finalizer present).
fn schema(status: PtahSchemaStatus) -> PtahSchema {
    let mut s = PtahSchema::new(NAME, spec());
    s.metadata.namespace = Some(NS.into());
    s.metadata.uid = Some(UID.into());
    s.metadata.generation = Some(1);
    s.metadata.resource_version = Some("1".into());
    s.metadata.finalizers = Some(vec![FINALIZER.into()]);
    s.status = Some(status);
    s
}

/// Steps the decision from a fresh schema, writing each status it builds, until it dispatches
/// the Resolve claim (which takes no Lease). Returns the status recorded just before the
/// dispatch (the claim, undispatched) and the Dispatch action itself.
fn resolve_dispatch(g: &Gathered) -> (PtahSchemaStatus, SchemaAction) {
    let spec = spec();
    let mut status = PtahSchemaStatus::default();
    for _ in 0..10 {
        match decide_on(g, &spec, &status) {
            Action::WriteStatus { status: next, .. } => status = *next,
            a @ Action::Dispatch { .. } => return (status, a),
            other => panic!("unexpected step before the Resolve dispatch: {}", other.name()),
        }
    }
    panic!("the Resolve claim was never dispatched");
}

/// The recorded claim of `status`.
fn claim(status: &PtahSchemaStatus) -> &ptah_api::schema::SchemaOperationStatus {
    status.active_operation.as_ref().expect("an active claim")
}

/// The object an API server returns for a status apply: `res` with the applied status and a
/// new resourceVersion.
fn applied(res: &PtahSchema, patch: &Value) -> Value {
    let mut obj = serde_json::to_value(res).expect("serialize");
    obj["status"] = patch["status"].clone();
    obj["metadata"]["resourceVersion"] = json!("2");
    obj
}

fn api_status(code: u16, reason: &str) -> Value {
    json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "message": reason, "reason": reason, "code": code
    })
}

fn status_path() -> String {
    format!("/apis/operator.ptah.run/v1alpha1/namespaces/{NS}/ptahschemas/{NAME}/status")
}

fn lease_path(digest: &Sha256Digest) -> String {
    format!(
        "/apis/coordination.k8s.io/v1/namespaces/{COORDINATION_NS}/leases/{}",
        lease_name(digest)
    )
}

/// Asserts `seen` is the manager's status write: a forced server-side apply, conditional on the
/// resourceVersion the decision read.
fn assert_status_apply(seen: &Seen, what: &str) {
    assert_eq!(
        seen.content_type.as_deref(),
        Some("application/apply-patch+yaml"),
        "{what}: a server-side apply"
    );
    assert_eq!(
        seen.query.get("force").map(String::as_str),
        Some("true"),
        "{what}: forced"
    );
    assert_eq!(seen.body["kind"], "PtahSchema", "{what}");
    assert_eq!(seen.body["metadata"]["name"], NAME, "{what}");
    assert_eq!(
        seen.body["metadata"]["resourceVersion"], "1",
        "{what}: conditional on the read"
    );
}

// ---------------------------------------------------------------------------------------------
// The guarantees.

#[tokio::test]
async fn dispatch_writes_the_claim_status_before_creating_the_job() {
    let g = gathered();
    let (before, action) = resolve_dispatch(&g);
    let Action::Dispatch { status, plan } = &action else {
        unreachable!()
    };
    assert!(plan.is_none(), "a Resolve runs no plan");
    let dispatched = (**status).clone();
    let c = claim(&dispatched);
    assert_eq!(c.operation_type, Op::Resolve);
    let job_name = c.job_name.clone();
    let res = schema(before);
    let echo = res.clone();
    let (outcome, metrics) = run(&res, &g, action, move |mut api| async move {
        let patch = api
            .next("the claim's status")
            .await
            .expect("the claim's status", Method::PATCH, &status_path())
            .by_the_manager("the claim's status");
        assert_status_apply(&patch, "the claim's status");
        let claim = &patch.body["status"]["activeOperation"];
        assert_eq!(
            claim["dispatchStarted"],
            json!(true),
            "dispatchStarted is persisted first"
        );
        assert_eq!(claim["jobName"], json!(job_name));
        let snapshot = claim["admissionSnapshot"].clone();
        assert_eq!(
            snapshot["version"], "v1",
            "the admission snapshot is persisted with the claim"
        );
        let written = applied(&echo, &patch.body);
        patch.reply(StatusCode::OK, &written);

        let create = api
            .next("the Job")
            .await
            .expect(
                "the Job",
                Method::POST,
                &format!("/apis/batch/v1/namespaces/{NS}/jobs"),
            )
            .by_the_manager("the Job");
        assert_eq!(create.body["kind"], "Job");
        assert_eq!(
            create.body["metadata"]["name"],
            json!(job_name),
            "named after the claim"
        );
        let created: k8s_openapi::api::batch::v1::Job =
            serde_json::from_value(create.body.clone()).expect("a Job");
        assert_eq!(
            serde_json::to_value(ptah_workload::admission_snapshot(&created)).expect("json"),
            snapshot,
            "the snapshot is the created Job's"
        );
        let mut job = create.body.clone();
        job["metadata"]["uid"] = json!("job-uid");
        job["metadata"]["namespace"] = json!(NS);
        create.reply(StatusCode::CREATED, &job);
        api
    })
    .await;
    let Ok(Performed::Next(written)) = outcome else {
        panic!("dispatch did not continue: {outcome:?}")
    };
    assert_eq!(written.metadata.resource_version.as_deref(), Some("2"));
    // The status as the decision built it, plus the snapshot of the Job the shell built.
    let mut status = written.status.clone().expect("status");
    let claim_written = status.active_operation.as_mut().expect("claim");
    assert!(claim_written.admission_snapshot.take().is_some());
    assert_eq!(
        Some(&status),
        Some(&dispatched),
        "the status as the decision built it"
    );
    let text = metrics.encode().expect("metrics");
    assert!(
        text.lines()
            .any(|l| l.starts_with("ptah_operations_dispatched_total")
                && l.contains("resolve")
                && l.ends_with(" 1")),
        "the accepted create is counted once:\n{text}"
    );
}

#[tokio::test]
async fn a_refused_job_create_is_told_in_an_event() {
    let g = gathered();
    let (before, action) = resolve_dispatch(&g);
    let res = schema(before);
    let echo = res.clone();
    let (outcome, metrics) = run(&res, &g, action, move |mut api| async move {
        let patch = api
            .next("the claim's status")
            .await
            .expect("the claim's status", Method::PATCH, &status_path());
        let written = applied(&echo, &patch.body);
        patch.reply(StatusCode::OK, &written);
        let create = api
            .next("the Job")
            .await
            .expect("the Job", Method::POST, &format!("/apis/batch/v1/namespaces/{NS}/jobs"));
        let refusal = json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403,
            "message": "jobs.batch is forbidden: User \"system:serviceaccount:ptah-system:manager\" cannot create resource \"jobs\" in the namespace \"shop\"",
        });
        create.reply(StatusCode::FORBIDDEN, &refusal);
        let event = api.next("the Event").await;
        assert_eq!(event.method, Method::POST, "an Event is created");
        assert!(event.path.ends_with("/events"), "{}", event.path);
        assert_eq!(event.body["reason"], "JobCreateRefused");
        assert_eq!(event.body["type"], "Warning");
        let note = event.body["note"].as_str().unwrap_or_default();
        assert!(note.contains("cannot create resource"), "the API server's reason is passed on: {note}");
        let mut echo = event.body.clone();
        echo["metadata"]["name"] = json!("event-1");
        event.reply(StatusCode::CREATED, &echo);
        api
    })
    .await;
    assert!(matches!(outcome, Ok(Performed::Next(_))), "{outcome:?}");
    let text = metrics.encode().expect("metrics");
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("ptah_operations_dispatched_total") && l.ends_with(" 1")),
        "a refused create is not counted as dispatched:\n{text}"
    );
}

#[tokio::test]
async fn a_busy_lease_is_a_requeue_and_no_write() {
    let g = gathered();
    let (before, _) = resolve_dispatch(&g);
    let realm = g.realm.digest().expect("a claimable realm").clone();
    let holder = holder_identity(UID, claim(&before).id.as_str());
    let action = Action::AcquireLease {
        digest: realm.clone(),
        holder,
        duration_seconds: 120,
    };
    let res = schema(before);
    let (outcome, _) = run(&res, &g, action, move |mut api| async move {
        let get = api
            .next("the Lease read")
            .await
            .expect("the Lease read", Method::GET, &lease_path(&realm));
        let now = Timestamp::now().strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string();
        let lease = json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {
                "name": lease_name(&realm), "namespace": COORDINATION_NS, "resourceVersion": "7",
                "labels": {COORDINATION_LABEL: COORDINATION_VALUE},
                "annotations": {EPOCH_ANNOTATION: format!("v1-{}", &HEX[32..])}
            },
            "spec": {
                "holderIdentity": holder_identity("uid-someone-else", "op"),
                "leaseDurationSeconds": 60, "acquireTime": now, "renewTime": now, "leaseTransitions": 3
            }
        });
        get.reply(StatusCode::OK, &lease);
        api
    })
    .await;
    match outcome {
        // The holder has a minute left, but holders release early: look again within seconds.
        Ok(Performed::Requeue(after)) => assert!(
            (Duration::from_secs(1)..=Duration::from_secs(5)).contains(&after),
            "requeued within a short poll, not the holder's whole term: {after:?}"
        ),
        other => panic!("a busy Lease must be a requeue: {other:?}"),
    }
}

#[tokio::test]
async fn an_acquired_lease_epoch_is_recorded_in_the_claim() {
    let g = gathered();
    let (before, _) = resolve_dispatch(&g);
    assert!(claim(&before).lease_epoch.is_none());
    let realm = g.realm.digest().expect("a claimable realm").clone();
    let holder = holder_identity(UID, claim(&before).id.as_str());
    let action = Action::AcquireLease {
        digest: realm.clone(),
        holder: holder.clone(),
        duration_seconds: 120,
    };
    let res = schema(before.clone());
    let echo = res.clone();
    let (outcome, _) = run(&res, &g, action, move |mut api| async move {
        api.next("the Lease read")
            .await
            .expect("the Lease read", Method::GET, &lease_path(&realm))
            .reply(StatusCode::NOT_FOUND, &api_status(404, "NotFound"));

        let create = api
            .next("the Lease create")
            .await
            .expect(
                "the Lease create",
                Method::POST,
                &format!("/apis/coordination.k8s.io/v1/namespaces/{COORDINATION_NS}/leases"),
            )
            .by_the_manager("the Lease create");
        assert_eq!(create.body["metadata"]["name"], json!(lease_name(&realm)));
        assert_eq!(create.body["spec"]["holderIdentity"], json!(holder));
        assert_eq!(create.body["spec"]["leaseDurationSeconds"], json!(120));
        let epoch = create.body["metadata"]["annotations"][EPOCH_ANNOTATION].clone();
        assert!(epoch.is_string(), "the Lease carries its epoch: {}", create.body);
        let mut lease = create.body.clone();
        lease["metadata"]["resourceVersion"] = json!("1");
        create.reply(StatusCode::CREATED, &lease);

        let patch = api
            .next("the epoch's status")
            .await
            .expect("the epoch's status", Method::PATCH, &status_path())
            .by_the_manager("the epoch's status");
        assert_status_apply(&patch, "the epoch's status");
        let claim = &patch.body["status"]["activeOperation"];
        assert_eq!(
            claim["leaseEpoch"], epoch,
            "the epoch the Lease was created under"
        );
        assert_ne!(
            claim["dispatchStarted"],
            json!(true),
            "acquiring dispatches nothing"
        );
        let written = applied(&echo, &patch.body);
        patch.reply(StatusCode::OK, &written);
        api
    })
    .await;
    let Ok(Performed::Next(written)) = outcome else {
        panic!("an acquired Lease did not continue: {outcome:?}")
    };
    let recorded = claim(written.status.as_ref().expect("a status"));
    assert!(recorded.lease_epoch.is_some());
    let mut expected = before;
    if let Some(c) = expected.active_operation.as_mut() {
        c.record_lease_epoch(recorded.lease_epoch.clone().expect("an epoch"));
    }
    assert_eq!(
        written.status.as_ref(),
        Some(&expected),
        "only the epoch is added to the recorded status"
    );
}

#[tokio::test]
async fn a_conflict_is_requeued_at_once() {
    let g = gathered();
    let (before, action) = resolve_dispatch(&g);
    let res = schema(before);
    let (outcome, _) = run(&res, &g, action, |mut api| async move {
        let patch =
            api.next("the claim's status")
                .await
                .expect("the claim's status", Method::PATCH, &status_path());
        assert_status_apply(&patch, "the claim's status");
        patch.reply(StatusCode::CONFLICT, &api_status(409, "Conflict"));
        // Nothing follows a refused commit: no Job is created (checked by `run`).
        api
    })
    .await;
    let Err(e) = outcome else {
        panic!("a refused status write must fail the pass: {outcome:?}")
    };
    assert!(
        matches!(&e, ShellError::Kube(kube::Error::Api(s)) if s.code == 409),
        "{e:?}"
    );
    assert_eq!(e.category(), ErrorCategory::Conflict);
    assert_eq!(ErrorCategory::Conflict.backoff(), Duration::ZERO);
}

/// A manager that delivers results durably commits the enrolment token's digest with the
/// dispatch, creates the Job built for durable delivery, then hands the token over in a
/// ConfigMap named after the Job and owned by it: its token is the one whose digest the claim
/// keeps, and the token appears in no other request.
#[tokio::test]
async fn a_durable_dispatch_commits_the_token_digest_then_hands_the_ticket_to_the_job() {
    let g = gathered();
    let (before, action) = resolve_dispatch(&g);
    let Action::Dispatch { status, .. } = &action else {
        unreachable!()
    };
    let job_name = claim(status).job_name.clone();
    let res = schema(before);
    let echo = res.clone();
    let (outcome, _) = run_delivering(&res, &g, action, true, move |mut api| async move {
        let patch = api
            .next("the claim's status")
            .await
            .expect("the claim's status", Method::PATCH, &status_path())
            .by_the_manager("the claim's status");
        let claim = patch.body["status"]["activeOperation"].clone();
        assert_eq!(claim["dispatchStarted"], json!(true));
        let digest = claim["resultEnrolmentDigest"]
            .as_str()
            .expect("the token's digest is committed with the dispatch")
            .to_owned();
        let written = applied(&echo, &patch.body);
        patch.reply(StatusCode::OK, &written);

        let create = api
            .next("the Job")
            .await
            .expect(
                "the Job",
                Method::POST,
                &format!("/apis/batch/v1/namespaces/{NS}/jobs"),
            )
            .by_the_manager("the Job");
        let job_text = create.body.to_string();
        assert_eq!(
            create.body["metadata"]["annotations"][ptah_workload::RESULT_DELIVERY_ANNOTATION],
            ptah_workload::RESULT_DELIVERY_DURABLE
        );
        assert!(job_text.contains("10.96.0.20:8444"), "the Job names the receiver");
        let mut job = create.body.clone();
        job["metadata"]["uid"] = json!("job-uid");
        job["metadata"]["namespace"] = json!(NS);
        create.reply(StatusCode::CREATED, &job);

        let ticket = api
            .next("the ticket")
            .await
            .expect(
                "the ticket",
                Method::POST,
                &format!("/api/v1/namespaces/{NS}/configmaps"),
            )
            .by_the_manager("the ticket");
        let cm = &ticket.body;
        assert_eq!(cm["metadata"]["name"], json!(job_name), "named after the Job");
        assert_eq!(cm["metadata"]["ownerReferences"][0]["uid"], "job-uid");
        assert_eq!(cm["metadata"]["ownerReferences"][0]["kind"], "Job");
        assert_eq!(cm["immutable"], true);
        assert_eq!(cm["data"]["result-ca.crt"], RESULT_CA);
        let body: ptah_resultdelivery::wire::EnrolmentTicket =
            serde_json::from_str(cm["data"]["result-enrolment"].as_str().expect("the ticket"))
                .expect("a ticket");
        let token = ptah_resultdelivery::EnrolmentToken::parse(&body.token).expect("a token");
        assert_eq!(
            token.digest().to_string(),
            digest,
            "the claim keeps this token's digest"
        );
        assert_eq!((body.namespace.as_str(), body.name.as_str()), (NS, NAME));
        assert!(
            !patch_and_job_hold(&claim, &job_text, &body.token),
            "the token itself is in neither the status nor the Job"
        );
        let mut created = cm.clone();
        created["metadata"]["uid"] = json!("cm-uid");
        ticket.reply(StatusCode::CREATED, &created);
        api
    })
    .await;
    assert!(matches!(outcome, Ok(Performed::Next(_))), "{outcome:?}");
}

fn patch_and_job_hold(claim: &Value, job: &str, token: &str) -> bool {
    claim.to_string().contains(token) || job.contains(token)
}
