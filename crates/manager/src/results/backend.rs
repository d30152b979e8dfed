//! The receiver's view of the cluster: uncached reads of the claim, its Job and the Pod, and the
//! `PtahResultRecord` writes (docs/security.md, "Durable result delivery").

use std::net::IpAddr;

use k8s_openapi::api::{batch::v1::Job, core::v1::Pod};
use kube::{Api, Client, ResourceExt, api::PostParams};
use ptah_api::{
    FIELD_MANAGER, PtahMigration, PtahResultRecord, PtahSchema, migration::MigrationOperationStatus,
    schema::SchemaOperationStatus,
};
use ptah_controller::{
    operation::claim::{migration_operation, schema_operation},
    resultrecords::{self, Content},
};
use ptah_dataplane::{Operation, OperationId};
use ptah_resultdelivery::{
    ClaimRef, EncodedBody, ObjectRef, ResourceKind, ResourceRef, ResultBinding, split,
};
use ptah_resultreceiver::{
    Live, LiveClaim, LiveJob, LivePod, PodPhase, Stored,
    backend::{Backend, EnrolmentTarget, Unavailable},
};

/// The manager's [`Backend`]: every read goes to the API server, never to a cache.
#[derive(Clone)]
pub struct Cluster {
    client: Client,
}

impl Cluster {
    /// A backend over `client`.
    pub fn new(client: Client) -> Self {
        Cluster { client }
    }
}

fn unavailable(what: &str, e: &kube::Error) -> Unavailable {
    Unavailable(format!("{what}: {e}"))
}

/// The fields of a claim the receiver compares, whichever family it belongs to.
struct ClaimView {
    operation: Operation,
    id: String,
    input_fingerprint: String,
    execution_binding_id: String,
    job_name: String,
    dispatched: bool,
    generation: Option<i64>,
    enrolment_digest: Option<String>,
    started_at: jiff::Timestamp,
    execution_not_after: Option<jiff::Timestamp>,
    grace_seconds: i64,
}

fn schema_view(c: &SchemaOperationStatus) -> ClaimView {
    ClaimView {
        operation: schema_operation(c.operation_type),
        id: c.id.as_str().to_owned(),
        input_fingerprint: c.input_fingerprint.as_str().to_owned(),
        execution_binding_id: c.execution_binding_id.as_str().to_owned(),
        job_name: c.job_name.clone(),
        dispatched: c.dispatch_started == Some(true),
        generation: c.generation,
        enrolment_digest: c.result_enrolment_digest.as_ref().map(|d| d.as_str().to_owned()),
        started_at: c.started_at.0,
        execution_not_after: c.execution_not_after.as_ref().map(|t| t.0),
        grace_seconds: c.termination_grace_period_seconds.unwrap_or(30),
    }
}

fn migration_view(c: &MigrationOperationStatus) -> ClaimView {
    ClaimView {
        operation: migration_operation(c.operation_type),
        id: c.id.as_str().to_owned(),
        input_fingerprint: c.input_fingerprint.as_str().to_owned(),
        execution_binding_id: c.execution_binding_id.as_str().to_owned(),
        job_name: c.job_name.clone(),
        dispatched: c.dispatch_started == Some(true),
        generation: c.generation,
        enrolment_digest: c.result_enrolment_digest.as_ref().map(|d| d.as_str().to_owned()),
        started_at: c.started_at.0,
        execution_not_after: c.execution_not_after.as_ref().map(|t| t.0),
        grace_seconds: ptah_controller::operation::claim::TERMINATION_GRACE_SECONDS,
    }
}

/// The resource's active claim, read uncached: `(uid, claim, read-only deadline)`.
async fn claim_of(
    client: &Client,
    namespace: &str,
    kind: ResourceKind,
    name: &str,
) -> Result<Option<(String, ClaimView, i64)>, Unavailable> {
    match kind {
        ResourceKind::PtahSchema => {
            let api: Api<PtahSchema> = Api::namespaced(client.clone(), namespace);
            let found = api
                .get_opt(name)
                .await
                .map_err(|e| unavailable("reading the PtahSchema", &e))?;
            Ok(found.and_then(|r| {
                let c = r.status.as_ref()?.active_operation.as_ref().map(schema_view)?;
                Some((r.uid()?, c, r.spec.execution.active_deadline_seconds))
            }))
        }
        ResourceKind::PtahMigration => {
            let api: Api<PtahMigration> = Api::namespaced(client.clone(), namespace);
            let found = api
                .get_opt(name)
                .await
                .map_err(|e| unavailable("reading the PtahMigration", &e))?;
            Ok(found.and_then(|r| {
                let c = r.status.as_ref()?.active_operation.as_ref().map(migration_view)?;
                Some((r.uid()?, c, r.spec.execution.active_deadline_seconds))
            }))
        }
    }
}

fn live_claim(
    namespace: &str,
    kind: ResourceKind,
    name: &str,
    uid: String,
    c: ClaimView,
    deadline: i64,
) -> Option<LiveClaim> {
    // A claim made before claims recorded their generation cannot have a durable Job.
    let generation = c.generation?;
    let end = c
        .execution_not_after
        .unwrap_or_else(|| c.started_at + jiff::SignedDuration::from_secs(deadline));
    Some(LiveClaim {
        resource: ResourceRef {
            namespace: namespace.to_owned(),
            kind,
            name: name.to_owned(),
            uid,
            generation,
        },
        claim: ClaimRef {
            execution_binding_id: c.execution_binding_id,
            input_fingerprint: c.input_fingerprint.parse().ok()?,
            operation: c.operation,
            operation_id: OperationId::new(c.id).ok()?,
        },
        job_name: c.job_name,
        dispatched: c.dispatched,
        enrolment_digest: c.enrolment_digest.and_then(|d| d.parse().ok()),
        not_after: end + jiff::SignedDuration::from_secs(c.grace_seconds),
    })
}

async fn live(
    client: &Client,
    namespace: &str,
    kind: ResourceKind,
    name: &str,
    pod_name: &str,
) -> Result<Live, Unavailable> {
    let claim = claim_of(client, namespace, kind, name)
        .await?
        .and_then(|(uid, c, deadline)| live_claim(namespace, kind, name, uid, c, deadline));
    let job = match &claim {
        Some(c) => {
            let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
            jobs.get_opt(&c.job_name)
                .await
                .map_err(|e| unavailable("reading the Job", &e))?
                .and_then(|j| {
                    Some(LiveJob {
                        id: ObjectRef {
                            name: j.name_any(),
                            uid: j.uid()?,
                        },
                    })
                })
        }
        None => None,
    };
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let pod = pods
        .get_opt(pod_name)
        .await
        .map_err(|e| unavailable("reading the Pod", &e))?
        .and_then(|p| live_pod(&p));
    Ok(Live { claim, job, pod })
}

fn live_pod(p: &Pod) -> Option<LivePod> {
    let status = p.status.as_ref();
    Some(LivePod {
        id: ObjectRef {
            name: p.name_any(),
            uid: p.uid()?,
        },
        controller_uid: p
            .owner_references()
            .iter()
            .find(|o| o.controller == Some(true) && o.kind == "Job")
            .map(|o| o.uid.clone()),
        phase: PodPhase::of(
            status.and_then(|s| s.phase.as_deref()),
            p.metadata.deletion_timestamp.is_some(),
        ),
        pod_ip: status
            .and_then(|s| s.pod_ip.as_deref())
            .and_then(|ip| ip.parse::<IpAddr>().ok()),
    })
}

fn owner(binding: &ResultBinding) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
    let r = &binding.resource;
    resultrecords::owner(r.kind, &r.name, &r.uid)
}

impl Cluster {
    /// Creates `record`; one that exists already with the same spec counts as written.
    async fn create(&self, namespace: &str, record: &PtahResultRecord) -> Result<bool, Unavailable> {
        let api: Api<PtahResultRecord> = Api::namespaced(self.client.clone(), namespace);
        let params = PostParams {
            field_manager: Some(FIELD_MANAGER.to_owned()),
            ..PostParams::default()
        };
        match api.create(&params, record).await {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.code == 409 => {
                let name = record.name_any();
                let existing = api
                    .get_opt(&name)
                    .await
                    .map_err(|e| unavailable("reading a result record", &e))?;
                match existing {
                    Some(e) if e.spec == record.spec => Ok(false),
                    _ => Err(Unavailable(format!(
                        "the result record {name} exists with other content"
                    ))),
                }
            }
            Err(e) => Err(unavailable("creating a result record", &e)),
        }
    }
}

impl Backend for Cluster {
    async fn live_for_enrolment(&self, target: &EnrolmentTarget) -> Result<Live, Unavailable> {
        live(
            &self.client,
            &target.namespace,
            target.kind,
            &target.name,
            &target.pod_name,
        )
        .await
    }

    async fn live_for_binding(&self, binding: &ResultBinding) -> Result<Live, Unavailable> {
        let r = &binding.resource;
        live(&self.client, &r.namespace, r.kind, &r.name, &binding.pod.name).await
    }

    async fn create_credential(&self, binding: &ResultBinding) -> Result<bool, Unavailable> {
        let stem = binding.record_stem();
        let ns = &binding.resource.namespace;
        let record = resultrecords::record(ns, &stem, owner(binding), Content::Credential);
        let api: Api<PtahResultRecord> = Api::namespaced(self.client.clone(), ns);
        let params = PostParams {
            field_manager: Some(FIELD_MANAGER.to_owned()),
            ..PostParams::default()
        };
        match api.create(&params, &record).await {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
            Err(e) => Err(unavailable("creating the credential record", &e)),
        }
    }

    async fn stored(&self, binding: &ResultBinding) -> Result<Stored, Unavailable> {
        let stem = binding.record_stem();
        let api: Api<PtahResultRecord> = Api::namespaced(self.client.clone(), &binding.resource.namespace);
        let list = api
            .list(&resultrecords::list_params(&stem))
            .await
            .map_err(|e| unavailable("listing the result records", &e))?;
        // What a delivery is compared with is the intent's digest; the body is not reassembled.
        let intent = resultrecords::intent_of(&list.items, &stem).map_err(|e| Unavailable(e.to_string()))?;
        let complete = list.items.iter().any(|r| {
            r.spec.stem == stem && r.spec.record_type == ptah_api::resultrecord::ResultRecordType::Complete
        });
        Ok(match intent {
            None => Stored::Nothing,
            Some(i) if complete => Stored::Complete(i.digest),
            Some(i) => Stored::Partial(i.digest),
        })
    }

    async fn store(&self, binding: &ResultBinding, body: &EncodedBody) -> Result<(), Unavailable> {
        let stem = binding.record_stem();
        let ns = &binding.resource.namespace;
        let (intent, chunks) = split(body);
        let at = |content| resultrecords::record(ns, &stem, owner(binding), content);
        self.create(ns, &at(Content::Intent(&intent))).await?;
        for (i, chunk) in (0u32..).zip(chunks) {
            self.create(ns, &at(Content::Chunk(i, chunk))).await?;
        }
        self.create(ns, &at(Content::Complete)).await?;
        Ok(())
    }
}
