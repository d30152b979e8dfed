//! Operation-Pod intent: a Pod labelled `managed-by=ptah-operator` runs exactly what its Job says.
//!
//! The comparison covers the security-relevant fields — per container: image, command, args, env,
//! envFrom, volumeMounts, securityContext; per Pod: volumes, securityContext, serviceAccountName
//! (with the ServiceAccount plugin's `default`), automountServiceAccountToken, host namespaces, no
//! ephemeral containers — and the labels (the Job controller's additions excepted). Fields that
//! do not change what runs or what it can reach (resources, tolerations, scheduling) are not
//! compared yet. A template that lets the ServiceAccount plugin inject a token volume will not
//! match; operation Pods never mount a token, so that case is refused, not modelled.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, Operation};
use kube::{Api, Resource};
use ptah_api::{PtahMigration, PtahSchema};
use ptah_workload::{
    JOB_CONTROLLER_LABELS, MANAGED_BY_LABEL, MANAGED_BY_VALUE, SNAPSHOT_VERSION, template_digest,
};
use serde::Serialize;

use crate::Admission;
use crate::review::{Verdict, object_json, typed};

fn same<T: Serialize>(field: &str, pod: &T, template: &T) -> Result<(), String> {
    // Compared as JSON so that `None` and an empty list are told apart exactly as the API stores them.
    if serde_json::to_value(pod).ok() == serde_json::to_value(template).ok() {
        Ok(())
    } else {
        Err(format!("{field} differs from the Job template"))
    }
}

fn containers(kind: &str, pod: &[Container], template: &[Container]) -> Result<(), String> {
    let names = |cs: &[Container]| cs.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
    if names(pod) != names(template) {
        return Err(format!("{kind} differ from the Job template"));
    }
    for (p, t) in pod.iter().zip(template) {
        let at = |f: &str| format!("{kind}[{}].{f}", p.name);
        same(&at("image"), &p.image, &t.image)?;
        same(&at("command"), &p.command, &t.command)?;
        same(&at("args"), &p.args, &t.args)?;
        same(&at("env"), &p.env, &t.env)?;
        same(&at("envFrom"), &p.env_from, &t.env_from)?;
        same(&at("volumeMounts"), &p.volume_mounts, &t.volume_mounts)?;
        same(&at("securityContext"), &p.security_context, &t.security_context)?;
    }
    Ok(())
}

fn spec_matches(pod: &PodSpec, template: &PodSpec) -> Result<(), String> {
    if pod.ephemeral_containers.as_ref().is_some_and(|e| !e.is_empty()) {
        return Err("operation Pods may not have ephemeral containers".into());
    }
    containers("containers", &pod.containers, &template.containers)?;
    containers(
        "initContainers",
        pod.init_containers.as_deref().unwrap_or_default(),
        template.init_containers.as_deref().unwrap_or_default(),
    )?;
    same("volumes", &pod.volumes, &template.volumes)?;
    same(
        "securityContext",
        &pod.security_context,
        &template.security_context,
    )?;
    // The ServiceAccount admission plugin fills an empty name with `default`.
    let sa = |s: &PodSpec| s.service_account_name.clone().filter(|n| !n.is_empty());
    let template_sa = sa(template).unwrap_or_else(|| "default".into());
    same("serviceAccountName", &sa(pod).unwrap_or_default(), &template_sa)?;
    same(
        "automountServiceAccountToken",
        &pod.automount_service_account_token,
        &template.automount_service_account_token,
    )?;
    same(
        "hostNetwork",
        &pod.host_network.unwrap_or(false),
        &template.host_network.unwrap_or(false),
    )?;
    same(
        "hostPID",
        &pod.host_pid.unwrap_or(false),
        &template.host_pid.unwrap_or(false),
    )?;
    same(
        "hostIPC",
        &pod.host_ipc.unwrap_or(false),
        &template.host_ipc.unwrap_or(false),
    )?;
    same("hostUsers", &pod.host_users, &template.host_users)?;
    Ok(())
}

fn labels_match(pod: &BTreeMap<String, String>, template: &BTreeMap<String, String>) -> Result<(), String> {
    for (k, v) in template {
        if pod.get(k) != Some(v) {
            return Err(format!("label {k} differs from the Job template"));
        }
    }
    if let Some(extra) = pod
        .keys()
        .find(|k| !template.contains_key(*k) && !JOB_CONTROLLER_LABELS.contains(&k.as_str()))
    {
        return Err(format!("label {extra} is not in the Job template"));
    }
    Ok(())
}

/// Whether `pod` is what `job`'s template describes, up to the Job controller's and the API
/// server's own additions; the error names the first field that differs.
pub fn pod_matches_template(pod: &Pod, job: &Job) -> Result<(), String> {
    let template = job
        .spec
        .as_ref()
        .map(|s| &s.template)
        .ok_or("the owner Job has no spec")?;
    let empty = BTreeMap::new();
    let template_labels = template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.as_ref())
        .unwrap_or(&empty);
    labels_match(pod.metadata.labels.as_ref().unwrap_or(&empty), template_labels)?;
    let template_spec = template
        .spec
        .as_ref()
        .ok_or("the owner Job has no pod template spec")?;
    let pod_spec = pod.spec.as_ref().ok_or("the Pod has no spec")?;
    spec_matches(pod_spec, template_spec)
}

impl Admission {
    /// Validating (CREATE/UPDATE of Pods and their ephemeralcontainers/resize subresources).
    pub async fn validate_operation_pod(&self, req: &AdmissionRequest<DynamicObject>) -> Verdict {
        if !matches!(req.operation, Operation::Create | Operation::Update) {
            return Verdict::Allow;
        }
        match self.check_operation_pod(req).await {
            Ok(v) | Err(v) => v,
        }
    }

    async fn check_operation_pod(&self, req: &AdmissionRequest<DynamicObject>) -> Result<Verdict, Verdict> {
        let object = object_json(req.object.as_ref(), "object").map_err(Verdict::Deny)?;
        let pod: Pod = typed(&object, "Pod").map_err(Verdict::Deny)?;
        let managed = pod.metadata.labels.as_ref().and_then(|l| l.get(MANAGED_BY_LABEL));
        if managed.map(String::as_str) != Some(MANAGED_BY_VALUE) {
            return Ok(Verdict::Allow);
        }
        if let Some(sub) = req.sub_resource.as_deref().filter(|s| !s.is_empty()) {
            return Err(Verdict::deny(format!(
                "operation Pods may not be changed through {sub}"
            )));
        }
        let owner = pod
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|o| o.controller == Some(true) && o.kind == "Job" && o.api_version == "batch/v1")
            .ok_or_else(|| {
                Verdict::deny("a Pod labelled managed-by=ptah-operator must be created by an operator Job")
            })?;
        let ns = req.namespace.as_deref().unwrap_or_default();
        let jobs: Api<Job> = Api::namespaced(self.client.clone(), ns);
        let job = match jobs.get_opt(&owner.name).await {
            Ok(Some(job)) => job,
            Ok(None) => return Err(Verdict::deny(format!("owner Job {} does not exist", owner.name))),
            Err(e) => {
                return Err(Verdict::deny(format!(
                    "cannot read owner Job {}: {e}",
                    owner.name
                )));
            }
        };
        if job.metadata.uid.as_deref() != Some(owner.uid.as_str()) {
            return Err(Verdict::deny(format!(
                "owner Job {} was replaced (UID differs)",
                owner.name
            )));
        }
        let job_managed = job.metadata.labels.as_ref().and_then(|l| l.get(MANAGED_BY_LABEL));
        if job_managed.map(String::as_str) != Some(MANAGED_BY_VALUE) {
            return Err(Verdict::deny(format!(
                "owner Job {} is not an operator Job",
                owner.name
            )));
        }
        pod_matches_template(&pod, &job).map_err(|why| {
            Verdict::deny(format!("operation Pod does not match Job {}: {why}", owner.name))
        })?;
        // A new Pod also needs the claim that decided its Job. Later updates (the Job controller
        // removing its finalizer after the claim settled) are judged on the template alone.
        if matches!(req.operation, Operation::Create) {
            self.check_claim_snapshot(ns, &job).await?;
        }
        Ok(Verdict::Allow)
    }

    /// The Job's owner PtahSchema or PtahMigration, read uncached, claims this exact Job and
    /// recorded the snapshot its template digests to before the Job existed.
    async fn check_claim_snapshot(&self, ns: &str, job: &Job) -> Result<(), Verdict> {
        let job_name = job.metadata.name.as_deref().unwrap_or_default();
        let api_version = PtahSchema::api_version(&());
        let owner = job
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|o| o.controller == Some(true) && o.api_version == api_version)
            .ok_or_else(|| {
                Verdict::deny(format!(
                    "Job {job_name} has no PtahSchema or PtahMigration controller"
                ))
            })?;
        let read = |e: kube::Error| Verdict::deny(format!("cannot read {} {}: {e}", owner.kind, owner.name));
        let (uid, snapshot, claimed_job) = match owner.kind.as_str() {
            "PtahSchema" => {
                let s = Api::<PtahSchema>::namespaced(self.client.clone(), ns)
                    .get(&owner.name)
                    .await
                    .map_err(read)?;
                let c = s.status.and_then(|st| st.active_operation);
                (
                    s.metadata.uid,
                    c.as_ref().and_then(|c| c.admission_snapshot.clone()),
                    c.map(|c| c.job_name),
                )
            }
            "PtahMigration" => {
                let m = Api::<PtahMigration>::namespaced(self.client.clone(), ns)
                    .get(&owner.name)
                    .await
                    .map_err(read)?;
                let c = m.status.and_then(|st| st.active_operation);
                (
                    m.metadata.uid,
                    c.as_ref().and_then(|c| c.admission_snapshot.clone()),
                    c.map(|c| c.job_name),
                )
            }
            other => {
                return Err(Verdict::deny(format!(
                    "Job {job_name} is controlled by a {other}, not a PtahSchema or PtahMigration"
                )));
            }
        };
        if uid.as_deref() != Some(owner.uid.as_str()) {
            return Err(Verdict::deny(format!(
                "{} {} was replaced (UID differs)",
                owner.kind, owner.name
            )));
        }
        if claimed_job.as_deref() != Some(job_name) {
            return Err(Verdict::deny(format!(
                "{} {} has no claim for Job {job_name}",
                owner.kind, owner.name
            )));
        }
        let recorded = snapshot
            .filter(|s| s.version == SNAPSHOT_VERSION)
            .and_then(|s| s.template_digest)
            .ok_or_else(|| {
                Verdict::deny(format!(
                    "the claim for Job {job_name} recorded no admission snapshot"
                ))
            })?;
        let template = job.spec.as_ref().map(|s| &s.template);
        if template.and_then(template_digest).as_ref() != Some(&recorded) {
            return Err(Verdict::deny(format!(
                "Job {job_name}'s Pod template is not the one its claim recorded before dispatch"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
