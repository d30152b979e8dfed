//! The parts of a Job intent every claim shares: who builds it and which images it runs.

use ptah_api::shared::Epoch;
use ptah_workload::{Images, ManagerIdentity};

use super::observed::Binding;

/// The manager identity recorded on a claim's Job, under the claim's execution binding.
pub fn identity(binding: &Binding, claim_epoch: &Epoch) -> ManagerIdentity {
    ManagerIdentity {
        controller_image: binding.controller_image.clone(),
        controller_revision: binding.controller_revision.clone(),
        controller_state_version: binding.controller_state_version,
        ptah_version: binding.ptah_version.clone(),
        execution_binding_id: claim_epoch.as_str().to_owned(),
    }
}

/// The data-plane images of the binding.
pub fn images(binding: &Binding) -> Images {
    Images {
        executor: binding.executor_image.as_str().to_owned(),
        runner: binding.runner_image.as_str().to_owned(),
    }
}

/// The controlling owner reference to the resource `meta` of `kind` (blocking its deletion).
pub fn owner(
    meta: &super::observed::Meta,
    kind: &str,
) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
    k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
        api_version: format!("{}/{}", ptah_api::GROUP, ptah_api::VERSION),
        kind: kind.into(),
        name: meta.name.clone(),
        uid: meta.uid.clone(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// The durable delivery of the claim's Job: asked for when the claim keeps an enrolment digest
/// (drawn at dispatch) and the manager runs a receiver. The ConfigMap holding the ticket is named
/// after the Job.
pub fn result_delivery(
    endpoint: Option<&super::observed::ResultEndpoint>,
    enrolment_digest: Option<&ptah_api::shared::Sha256Digest>,
    job_name: &str,
) -> Option<ptah_workload::ResultDelivery> {
    enrolment_digest?;
    endpoint.map(|e| ptah_workload::ResultDelivery {
        config_map: job_name.to_owned(),
        endpoint: e.endpoint.clone(),
        server_name: e.server_name.clone(),
    })
}
