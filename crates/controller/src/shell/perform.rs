//! Performing one decided action. Each write is conditional on the resourceVersion the decision
//! saw, so a decision made on stale state fails instead of overwriting newer state. Every status
//! written here was built by the decision; the shell only records what an action produced (an
//! acquired Lease epoch, a published plan's name and UID).

use std::time::Duration;

use k8s_openapi::api::{batch::v1::Job, core::v1::ObjectReference};
use kube::{
    Api, ResourceExt,
    api::{DeleteParams, Patch, PatchParams, PostParams, Preconditions, PropagationPolicy},
    runtime::events::{Event as KubeEvent, EventType},
};
use ptah_api::FIELD_MANAGER;
use ptah_targetlock::{Acquired, Released};
use serde_json::json;
use tracing::{debug, info, warn};

use super::{
    Context, FINALIZER, ShellError,
    family::{Decision, Lifecycle, Managed},
};
use crate::operation::{
    Action, Claim, Event, Renewal,
    action::{JOB_CREATE_REFUSED, continuity_lost_event},
};

/// How soon a resource waiting for a busy realm Lease looks again, at most. Holders release
/// early (a plan takes seconds, its Lease lasts a minute), and a waiter that slept out the whole
/// term woke in lock-step with a holder re-acquiring on a fixed cadence: the matrix saw a
/// migration Apply wait five minutes behind a schema that re-planned every 30 s.
const BUSY_LEASE_POLL: Duration = Duration::from_secs(5);

/// What a performed step leaves the loop with.
#[derive(Debug)]
pub enum Performed<K> {
    /// The resource as written; the next step may follow at once.
    Next(K),
    /// Look again after this long (a busy Lease, a wait, a removed finalizer).
    Requeue(Duration),
}

fn api<K: Managed>(ctx: &Context, res: &K) -> Result<Api<K>, ShellError> {
    let ns = res
        .namespace()
        .ok_or(ShellError::Invalid("a namespaced resource without a namespace"))?;
    Ok(Api::namespaced(ctx.client.clone(), &ns))
}

/// Performs `action` on `res`.
pub async fn perform<K: Lifecycle>(
    ctx: &Context,
    res: &K,
    g: &K::Gathered,
    action: Action<K::Status, K::Draft>,
) -> Result<Performed<K>, ShellError> {
    let api = api(ctx, res)?;
    let name = res.name_any();
    match action {
        Action::ReleaseLease {
            release,
            holder,
            status,
        } => {
            match ctx
                .leases
                .release(&release.coordination_digest, &holder, &release.lease_epoch)
                .await?
            {
                Released::Released => info!(resource = %name, "realm lease released"),
                Released::AlreadyReleased => info!(resource = %name, "realm lease was already released"),
            }
            write_status(&api, res, &status).await.map(Performed::Next)
        }
        Action::AddFinalizer => {
            let mut finalizers = res.finalizers().to_vec();
            finalizers.push(FINALIZER.to_owned());
            set_finalizers(&api, res, finalizers).await.map(Performed::Next)
        }
        Action::RemoveFinalizer => {
            let finalizers: Vec<String> = res
                .finalizers()
                .iter()
                .filter(|f| *f != FINALIZER)
                .cloned()
                .collect();
            set_finalizers(&api, res, finalizers).await?;
            Ok(Performed::Requeue(Duration::from_secs(1)))
        }
        Action::WriteStatus { status, event } => {
            let next = write_status(&api, res, &status).await?;
            settled(ctx, res, &status).await;
            publish(ctx, res, event).await;
            Ok(Performed::Next(next))
        }
        Action::AdoptJob { status } => {
            let next = write_status(&api, res, &status).await?;
            let started = Event::normal(
                "OperationStarted",
                "the operation Job was created and matches its claim",
            );
            publish(ctx, res, Some(started)).await;
            Ok(Performed::Next(next))
        }
        Action::AcquireLease {
            digest,
            holder,
            duration_seconds,
        } => match ctx
            .leases
            .acquire(&digest, &holder, duration_seconds, None)
            .await?
        {
            Acquired::Held { epoch, .. } => {
                let mut s = res.status_of().cloned().unwrap_or_default();
                K::claim_of_mut(&mut s)
                    .ok_or(ShellError::Invalid("no claim to hold a lease"))?
                    .record_lease_epoch(epoch);
                write_status(&api, res, &s).await.map(Performed::Next)
            }
            Acquired::Busy {
                holder: other,
                retry_after,
            } => {
                debug!(resource = %name, holder = %other, "realm lease busy");
                Ok(Performed::Requeue(
                    retry_after.clamp(Duration::from_secs(1), BUSY_LEASE_POLL),
                ))
            }
            // Without an expected epoch continuity cannot be lost; treat it as contention.
            Acquired::ContinuityLost { .. } => Ok(Performed::Requeue(Duration::from_secs(1))),
        },
        Action::ScheduleJobCleanup => {
            let claim = res
                .status_of()
                .and_then(K::claim_of)
                .ok_or(ShellError::Invalid("no claim"))?;
            let jobs: Api<Job> = Api::namespaced(ctx.client.clone(), &res.namespace().unwrap_or_default());
            let patch = json!({"spec": {"ttlSecondsAfterFinished": ptah_workload::RESULT_TTL_SECONDS}});
            jobs.patch(claim.job_name(), &merge_params(), &Patch::Merge(&patch))
                .await?;
            Ok(Performed::Next(res.clone()))
        }
        Action::SettleAndDeleteJob {
            status,
            event,
            job,
            uid,
        } => {
            let next = write_status(&api, res, &status).await?;
            settled(ctx, res, &status).await;
            publish(ctx, res, event).await;
            delete_job(ctx, res, &job, &uid).await;
            Ok(Performed::Next(next))
        }
        Action::Dispatch { mut status, plan } => {
            // Everything the Job needs is prepared before the commit, so a failure here commits
            // nothing. The enrolment token's digest is committed with the dispatch; the token
            // itself reaches only the Job's ticket.
            let token = super::delivery::draw(ctx)?;
            if let Some(t) = &token {
                K::claim_of_mut(&mut status)
                    .ok_or(ShellError::Invalid("dispatch without a claim"))?
                    .record_result_enrolment(t.digest().into());
            }
            let job = K::build_job(ctx, res, g, &status, plan.as_ref()).await?;
            // The pod-intent webhook admits the Job's Pod only against this snapshot, which is
            // committed with the dispatch, before the Job exists.
            let snapshot = ptah_workload::admission_snapshot(&job)
                .ok_or(ShellError::Invalid("the built Job has no Pod template"))?;
            K::claim_of_mut(&mut status)
                .ok_or(ShellError::Invalid("dispatch without a claim"))?
                .record_admission_snapshot(snapshot);
            let committed = write_status(&api, res, &status).await?;
            let created = create_job::<K>(ctx, &committed, &status, &job).await;
            if let (Some(token), Some(created), Some(c)) = (&token, &created, K::claim_of(&status)) {
                let refused = super::delivery::hand_over(ctx, &committed, c, created, token).await;
                publish(ctx, &committed, refused).await;
            }
            Ok(Performed::Next(committed))
        }
        Action::PublishAndRecord {
            draft,
            mut status,
            event,
        } => {
            K::publish_plan(ctx, res, *draft, &mut status).await?;
            let written = write_status(&api, res, &status).await?;
            settled(ctx, res, &status).await;
            publish(ctx, res, event).await;
            Ok(Performed::Next(written))
        }
        Action::MarkApprovals { consumed, stale } => {
            mark_all::<K>(ctx, res, Decision::Approval, &consumed, &stale).await?;
            Ok(Performed::Next(res.clone()))
        }
        Action::MarkAcknowledgments { consumed, stale } => {
            mark_all::<K>(ctx, res, Decision::Acknowledgment, &consumed, &stale).await?;
            Ok(Performed::Next(res.clone()))
        }
        Action::Wait { after, renew } => {
            renew_lease(ctx, res, renew.as_ref()).await?;
            Ok(Performed::Requeue(after))
        }
    }
}

/// What a write that may retire a claim leaves behind: the results metric, and the retired mark
/// of a durably delivered result (retention deletes it an hour later).
async fn settled<K: Managed>(ctx: &Context, res: &K, written: &K::Status) {
    record_result(ctx, res, written);
    super::delivery::retire(ctx, res, written).await;
}

/// Counts the result of a claim this write retired (once: the write that retires it succeeds once).
fn record_result<K: Managed>(ctx: &Context, res: &K, written: &K::Status) {
    let Some(before) = res.status_of() else { return };
    let Some(claim) = K::claim_of(before) else { return };
    if let Some(result) = K::settled(before, written) {
        ctx.metrics
            .operation_result(K::TELEMETRY, metric_op(claim.operation()), result);
    }
}

async fn mark_all<K: Lifecycle>(
    ctx: &Context,
    res: &K,
    what: Decision,
    consumed: &[ptah_api::shared::ImmutableObjectReference],
    stale: &[ptah_api::shared::ImmutableObjectReference],
) -> Result<(), ShellError> {
    let ns = res.namespace().unwrap_or_default();
    for (refs, is_consumed) in [(consumed, true), (stale, false)] {
        for r in refs {
            K::mark(ctx, &ns, what, &r.name, is_consumed).await?;
        }
    }
    Ok(())
}

/// Creates the claim's Job; returns it as created (with its UID), or `None` when it was not.
async fn create_job<K: Managed>(ctx: &Context, res: &K, status: &K::Status, job: &Job) -> Option<Job> {
    let c = K::claim_of(status)?;
    let jobs: Api<Job> = Api::namespaced(ctx.client.clone(), &res.namespace().unwrap_or_default());
    let params = PostParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PostParams::default()
    };
    match jobs.create(&params, job).await {
        Ok(created) => {
            ctx.metrics.dispatched(metric_op(c.operation()));
            info!(resource = %res.name_any(), kind = K::KIND, job = %c.job_name(), operation = %c.operation(), "operation dispatched");
            Some(created)
        }
        // Any create error leaves the outcome uncertain; the next pass decides from what exists.
        // A refusal (RBAC outside rbac.namespaces, an admission policy) is also told to the
        // resource's owner, who can act on it.
        Err(e) => {
            warn!(resource = %res.name_any(), job = %c.job_name(), error = %e, "creating the operation Job failed");
            if let kube::Error::Api(status) = &e
                && [400, 403, 422].contains(&status.code)
            {
                let note = format!(
                    "the API server refused the {} Job {}: {}",
                    c.operation(),
                    c.job_name(),
                    status.message
                );
                publish(ctx, res, Some(Event::warning(JOB_CREATE_REFUSED, note))).await;
            }
            None
        }
    }
}

/// Deletes the Job `name` while it is still the one with `uid`, its Pods in the background. The
/// decision only asks this of a Job it may leave to its deadline, so a failure is logged, not
/// retried.
async fn delete_job<K: Managed>(ctx: &Context, res: &K, name: &str, uid: &str) {
    let jobs: Api<Job> = Api::namespaced(ctx.client.clone(), &res.namespace().unwrap_or_default());
    let params = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Background),
        preconditions: Some(Preconditions {
            uid: Some(uid.to_owned()),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    match jobs.delete(name, &params).await {
        Ok(_) => {
            info!(resource = %res.name_any(), job = %name, "operation Job deleted before its Pod started")
        }
        Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => {
            debug!(resource = %res.name_any(), job = %name, "operation Job already gone or replaced");
        }
        Err(e) => {
            warn!(resource = %res.name_any(), job = %name, error = %e, "deleting the operation Job failed; it ends at its deadline");
        }
    }
}

/// The metrics label of a data-plane operation.
pub fn metric_op(op: ptah_dataplane::Operation) -> ptah_telemetry::Operation {
    use ptah_dataplane::Operation as O;
    use ptah_telemetry::Operation as T;
    match op {
        O::Resolve => T::Resolve,
        O::Verify => T::Verify,
        O::Observe => T::Observe,
        O::Plan => T::Plan,
        O::Apply | O::MigrationApply => T::Apply,
        O::MigrationHistory => T::History,
    }
}

/// Renews the claim's Lease while its Job runs; a lost holding writes the decision's latch.
async fn renew_lease<K: Managed>(
    ctx: &Context,
    res: &K,
    renewal: Option<&Renewal<K::Status>>,
) -> Result<(), ShellError> {
    let Some(r) = renewal else { return Ok(()) };
    match ctx
        .leases
        .acquire(&r.digest, &r.holder, r.duration_seconds, Some(&r.epoch))
        .await?
    {
        Acquired::Held { .. } => Ok(()),
        Acquired::Busy { .. } | Acquired::ContinuityLost { .. } => {
            write_status(&api(ctx, res)?, res, &r.lost).await?;
            publish(ctx, res, Some(continuity_lost_event())).await;
            Ok(())
        }
    }
}

/// Writes the whole status by server-side apply, conditional on the resourceVersion read.
pub async fn write_status<K: Managed>(api: &Api<K>, res: &K, status: &K::Status) -> Result<K, ShellError> {
    let body = json!({
        "apiVersion": K::api_version(&()),
        "kind": K::KIND,
        "metadata": {"name": res.name_any(), "resourceVersion": res.resource_version()},
        "status": status,
    });
    Ok(api
        .patch_status(
            &res.name_any(),
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await?)
}

async fn set_finalizers<K: Managed>(api: &Api<K>, res: &K, finalizers: Vec<String>) -> Result<K, ShellError> {
    let patch = json!({"metadata": {"resourceVersion": res.resource_version(), "finalizers": finalizers}});
    Ok(api
        .patch(&res.name_any(), &merge_params(), &Patch::Merge(&patch))
        .await?)
}

/// Records an Event on the resource; a failure to record is logged, never fatal.
pub async fn publish<K: Managed>(ctx: &Context, res: &K, event: Option<Event>) {
    let Some(e) = event else { return };
    let reference: ObjectReference = res.object_ref(&());
    let ev = KubeEvent {
        type_: if e.warning {
            EventType::Warning
        } else {
            EventType::Normal
        },
        reason: e.reason.into(),
        note: Some(e.note),
        action: "Reconcile".into(),
        secondary: None,
    };
    if let Err(err) = ctx.recorder.publish(&ev, &reference).await {
        warn!(error = %err, "recording an Event failed");
    }
}

fn merge_params() -> PatchParams {
    PatchParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PatchParams::default()
    }
}
