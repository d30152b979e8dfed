//! The Pod admission snapshot: what an operation Pod runs and can reach, digested from the built
//! Job template and persisted in the claim before the Job exists.
//!
//! The pod-intent webhook admits a new operation Pod only when its Job's template digests to the
//! snapshot its claim recorded, so a Job the reconciler never decided on (made by anyone who may
//! create Jobs in the namespace, labelled and owned to look like ours) never gets a Pod. The
//! projection holds only fields the API server does not default, so the built template and the
//! stored one digest equally; the labels the Job controller adds are left out.

use std::collections::BTreeMap;

use k8s_openapi::api::{
    batch::v1::Job,
    core::v1::{Container, PodSecurityContext, PodTemplateSpec, Volume},
};
use ptah_api::shared::{PodAdmissionSnapshot, Sha256Digest};
use ptah_fingerprint::Fingerprint;
use serde::Serialize;

/// The snapshot format this crate writes.
pub const SNAPSHOT_VERSION: &str = "v1";

/// Labels the Job API and the Job controller add to a template and to its Pods.
pub const JOB_CONTROLLER_LABELS: [&str; 5] = [
    "controller-uid",
    "job-name",
    "batch.kubernetes.io/controller-uid",
    "batch.kubernetes.io/job-name",
    "batch.kubernetes.io/job-completion-index",
];

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ContainerProjection<'a> {
    name: &'a str,
    image: &'a Option<String>,
    command: &'a Option<Vec<String>>,
    args: &'a Option<Vec<String>>,
    env: &'a Option<Vec<k8s_openapi::api::core::v1::EnvVar>>,
    env_from: &'a Option<Vec<k8s_openapi::api::core::v1::EnvFromSource>>,
    volume_mounts: &'a Option<Vec<k8s_openapi::api::core::v1::VolumeMount>>,
    security_context: &'a Option<k8s_openapi::api::core::v1::SecurityContext>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Projection<'a> {
    labels: BTreeMap<&'a str, &'a str>,
    containers: Vec<ContainerProjection<'a>>,
    init_containers: Vec<ContainerProjection<'a>>,
    volumes: &'a Option<Vec<Volume>>,
    security_context: &'a Option<PodSecurityContext>,
    service_account_name: &'a str,
    automount_service_account_token: Option<bool>,
    host_network: bool,
    host_pid: bool,
    host_ipc: bool,
    host_users: Option<bool>,
}

fn containers(list: &[Container]) -> Vec<ContainerProjection<'_>> {
    list.iter()
        .map(|c| ContainerProjection {
            name: &c.name,
            image: &c.image,
            command: &c.command,
            args: &c.args,
            env: &c.env,
            env_from: &c.env_from,
            volume_mounts: &c.volume_mounts,
            security_context: &c.security_context,
        })
        .collect()
}

/// The digest of what a Pod made from `template` runs and can reach; `None` without a Pod spec.
pub fn template_digest(template: &PodTemplateSpec) -> Option<Sha256Digest> {
    let spec = template.spec.as_ref()?;
    let labels = template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.as_ref())
        .into_iter()
        .flatten()
        .filter(|(k, _)| !JOB_CONTROLLER_LABELS.contains(&k.as_str()))
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let projection = Projection {
        labels,
        containers: containers(&spec.containers),
        init_containers: containers(spec.init_containers.as_deref().unwrap_or_default()),
        volumes: &spec.volumes,
        security_context: &spec.security_context,
        // The ServiceAccount admission plugin fills an empty name with `default`.
        service_account_name: spec
            .service_account_name
            .as_deref()
            .filter(|n| !n.is_empty())
            .unwrap_or("default"),
        automount_service_account_token: spec.automount_service_account_token,
        host_network: spec.host_network.unwrap_or(false),
        host_pid: spec.host_pid.unwrap_or(false),
        host_ipc: spec.host_ipc.unwrap_or(false),
        host_users: spec.host_users,
    };
    // Canonical JSON of plain k8s-openapi values cannot fail (no floats, string keys).
    Fingerprint::of(&projection).ok().map(Sha256Digest::from)
}

/// The snapshot to persist in the claim for the built `job`; `None` if it has no Pod template spec.
pub fn admission_snapshot(job: &Job) -> Option<PodAdmissionSnapshot> {
    let template_digest = template_digest(&job.spec.as_ref()?.template)?;
    let mut snapshot = PodAdmissionSnapshot {
        version: SNAPSHOT_VERSION.to_owned(),
        digest: template_digest.clone(),
        template_digest: Some(template_digest),
        service_account: None,
        limit_ranges: Vec::new(),
        runtime_class: None,
        priority_class: None,
        default_tolerations_enabled: None,
        default_not_ready_toleration_seconds: None,
        default_unreachable_toleration_seconds: None,
        extended_resource_toleration_enabled: None,
        always_pull_images_enabled: None,
    };
    // `digest` covers the rest of the snapshot (itself held at the template digest while hashed).
    snapshot.digest = Fingerprint::of(&snapshot).ok().map(Sha256Digest::from)?;
    Some(snapshot)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::PodSpec;

    use super::*;

    fn template() -> PodTemplateSpec {
        serde_json::from_value(serde_json::json!({
            "metadata": {"labels": {"app.kubernetes.io/managed-by": "ptah-operator"}},
            "spec": {"containers": [{"name": "ptah", "image": "e@sha256:aa"}], "automountServiceAccountToken": false},
        }))
        .expect("template")
    }

    #[test]
    fn what_runs_changes_the_digest_and_what_kubernetes_adds_does_not() {
        let base = template_digest(&template()).expect("digest");
        let mut added = template();
        let labels = added
            .metadata
            .as_mut()
            .and_then(|m| m.labels.as_mut())
            .expect("labels");
        labels.insert("batch.kubernetes.io/controller-uid".into(), "u".into());
        labels.insert("job-name".into(), "j".into());
        let spec = added.spec.as_mut().expect("spec");
        spec.dns_policy = Some("ClusterFirst".into());
        spec.scheduler_name = Some("default-scheduler".into());
        assert_eq!(template_digest(&added), Some(base.clone()));

        let edits: [fn(&mut PodSpec); 4] = [
            |s| s.containers[0].image = Some("other@sha256:bb".into()),
            |s| s.automount_service_account_token = Some(true),
            |s| s.host_network = Some(true),
            |s| s.service_account_name = Some("admin".into()),
        ];
        for edit in edits {
            let mut changed = template();
            edit(changed.spec.as_mut().expect("spec"));
            assert_ne!(template_digest(&changed), Some(base.clone()));
        }
    }

    #[test]
    fn the_snapshot_digest_binds_its_template_digest() {
        let job: Job =
            serde_json::from_value(serde_json::json!({"spec": {"template": template()}})).expect("job");
        let snapshot = admission_snapshot(&job).expect("snapshot");
        assert_eq!(snapshot.version, SNAPSHOT_VERSION);
        assert_eq!(snapshot.template_digest, template_digest(&template()));
        assert_ne!(Some(snapshot.digest), snapshot.template_digest);
    }
}
