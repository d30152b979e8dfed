//! The claim's Job as it is: read back by name, compared with the Job the claim builds now,
//! terminal state (its condition, or its one Pod having ended), the cleanup TTL, a stuck Pod, and
//! the one Pod's result once it may be read.

use k8s_openapi::api::batch::v1::Job;
use kube::{Api, ResourceExt};

use super::{Context, ShellError, delivered, results};
use crate::operation::{Claim, Finished, JobState, ResultRead};

/// Observes the Job of claim `c` of the resource `resource_uid` in `ns`; `expected` is the Job
/// the claim builds now (`None` when it can no longer be built, which never matches).
pub async fn observe(
    ctx: &Context,
    ns: &str,
    resource_uid: &str,
    c: &impl Claim,
    expected: Option<Job>,
) -> Result<(JobState, ResultRead), ShellError> {
    let jobs: Api<Job> = Api::namespaced(ctx.client.clone(), ns);
    let Some(mut live) = jobs.get_opt(c.job_name()).await? else {
        return Ok((JobState::Absent, ResultRead::NotRead));
    };
    let uid = live.uid().unwrap_or_default();
    let ttl_set = live
        .spec
        .as_ref()
        .and_then(|s| s.ttl_seconds_after_finished)
        .is_some();
    // The TTL is the one field the manager adds after the fact; compare without it.
    if let Some(spec) = live.spec.as_mut() {
        spec.ttl_seconds_after_finished = None;
    }
    let matches_intent = expected.is_some_and(|built| ptah_workload::compare(&built, &live).is_ok());
    let job_conditions = live
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let is = |t: &str| {
        job_conditions
            .iter()
            .any(|jc| jc.type_ == t && jc.status == "True")
    };
    let by_condition = if is("Complete") {
        Some(Finished::Succeeded)
    } else if is("Failed") {
        Some(Finished::Failed)
    } else {
        None
    };
    // Without a condition yet, the one Pod having ended is as final (see `results::Progress`).
    let (finished, stuck) = match by_condition {
        Some(f) => (Some(f), None),
        None => {
            let p = results::progress(&ctx.client, ns, &uid).await;
            (p.ended, p.stuck)
        }
    };
    // A Job built for durable delivery is read from its records only, never from its log.
    let durable = live
        .annotations()
        .get(ptah_workload::RESULT_DELIVERY_ANNOTATION)
        .is_some_and(|v| v == ptah_workload::RESULT_DELIVERY_DURABLE);
    let result = if finished.is_some() && ttl_set && c.job_uid() == Some(uid.as_str()) {
        if durable {
            let at = delivered::Reading {
                namespace: ns,
                resource_uid,
                job_uid: &uid,
            };
            delivered::read(&ctx.client, &at, c).await
        } else {
            results::read(&ctx.client, ns, c.job_name(), &uid).await
        }
    } else {
        ResultRead::NotRead
    };
    Ok((
        JobState::Present {
            uid,
            matches_intent,
            finished,
            ttl_set,
            stuck,
        },
        result,
    ))
}
