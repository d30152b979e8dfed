//! Performing one decided action. Each write is conditional on the resourceVersion the decision
//! saw, so a decision made on stale state fails instead of overwriting newer state.

use k8s_openapi::api::{batch::v1::Job, core::v1::ObjectReference};
use kube::{
    Api, Resource, ResourceExt,
    api::{Patch, PatchParams, PostParams},
    runtime::events::{Event as KubeEvent, EventType},
};
use ptah_api::{PtahSchema, PtahSchemaApproval, PtahSchemaStatus, conditions::ConditionType};
use ptah_targetlock::{Acquired, Released};
use serde_json::json;
use tracing::{info, warn};

use super::{Context, FIELD_MANAGER, FINALIZER, ShellError, gather::Gathered};
use crate::{
    conditions::{self, Status},
    schema::{Action, Event, Renewal, intent},
};

/// Performs `action`; returns the updated PtahSchema when the next step may follow at once.
pub async fn perform(
    ctx: &Context,
    schema: &PtahSchema,
    g: &Gathered,
    action: Action,
) -> Result<Option<PtahSchema>, ShellError> {
    let api: Api<PtahSchema> = Api::namespaced(ctx.client.clone(), &g.meta.namespace);
    let status = schema.status.clone().unwrap_or_default();
    match action {
        Action::ReleaseLease { release, holder } => {
            match ctx
                .leases
                .release(&release.coordination_digest, &holder, &release.lease_epoch)
                .await?
            {
                Released::Released => info!(schema = %g.meta.name, "realm lease released"),
                Released::AlreadyReleased => info!(schema = %g.meta.name, "realm lease was already released"),
            }
            let mut s = status;
            s.pending_lock_release = None;
            write_status(&api, schema, &s).await.map(Some)
        }
        Action::AddFinalizer => {
            let mut finalizers = schema.finalizers().to_vec();
            finalizers.push(FINALIZER.to_owned());
            set_finalizers(&api, schema, finalizers).await.map(Some)
        }
        Action::RemoveFinalizer => {
            let finalizers: Vec<String> = schema
                .finalizers()
                .iter()
                .filter(|f| *f != FINALIZER)
                .cloned()
                .collect();
            set_finalizers(&api, schema, finalizers).await?;
            Ok(None)
        }
        Action::WriteStatus { status, event } => {
            let next = write_status(&api, schema, &status).await?;
            publish(ctx, schema, event).await;
            Ok(Some(next))
        }
        Action::AdoptJob { status } => {
            let next = write_status(&api, schema, &status).await?;
            publish(
                ctx,
                schema,
                Some(Event::normal(
                    "OperationStarted",
                    "the operation Job was created and matches its claim",
                )),
            )
            .await;
            Ok(Some(next))
        }
        Action::AcquireLease {
            digest,
            holder,
            duration_seconds,
            expected,
            dispatched,
        } => {
            let mut s = status;
            match ctx
                .leases
                .acquire(&digest, &holder, duration_seconds, expected.as_ref())
                .await?
            {
                Acquired::Held { epoch, .. } => {
                    if let Some(c) = s.active_operation.as_mut() {
                        c.lease_epoch = Some(epoch);
                    }
                }
                Acquired::Busy {
                    holder: other,
                    retry_after,
                } => {
                    info!(schema = %g.meta.name, holder = %other, "realm lease busy");
                    conditions::set(
                        &mut s.conditions,
                        ConditionType::Progressing,
                        Status::False,
                        ptah_api::conditions::Reason::Waiting,
                        "another operation holds the database's realm Lease",
                        schema.metadata.generation,
                        jiff::Timestamp::now(),
                    );
                    let _ = write_status(&api, schema, &s).await;
                    tokio::time::sleep(retry_after.min(std::time::Duration::from_secs(5))).await;
                    return Ok(None);
                }
                Acquired::ContinuityLost { .. } => {
                    let c = s
                        .active_operation
                        .as_mut()
                        .ok_or(ShellError::Invalid("no claim to hold a lease"))?;
                    if dispatched {
                        c.lease_continuity_lost = Some(true);
                        publish(ctx, schema, Some(Event::warning("LeaseContinuityLost", "the realm Lease changed hands while the operation ran; its result will be discarded"))).await;
                    } else {
                        // Nothing is dispatched yet: adopt a fresh holding silently.
                        c.lease_epoch = None;
                    }
                }
            }
            write_status(&api, schema, &s).await.map(Some)
        }
        Action::Dispatch {
            status: next_status,
            plan,
        } => dispatch(ctx, &api, schema, g, *next_status, plan).await,
        Action::ScheduleJobCleanup => {
            let c = status
                .active_operation
                .as_ref()
                .ok_or(ShellError::Invalid("no claim"))?;
            let jobs: Api<Job> = Api::namespaced(ctx.client.clone(), &g.meta.namespace);
            let patch = json!({"spec": {"ttlSecondsAfterFinished": ptah_workload::RESULT_TTL_SECONDS}});
            jobs.patch(&c.job_name, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
            Ok(Some(schema.clone()))
        }
        Action::PublishAndRecord {
            draft,
            status: mut next,
            event,
        } => {
            let plan = ctx.plans.publish(schema, draft.spec, &draft.bytes).await?;
            if let (Some(p), Some(uid)) = (next.plan.as_mut(), plan.uid()) {
                p.name = plan.name_any();
                p.uid = uid;
                p.fingerprint = plan.spec.fingerprint.clone();
            }
            let written = write_status(&api, schema, &next).await?;
            publish(ctx, schema, event).await;
            Ok(Some(written))
        }
        Action::MarkApprovals { consumed, stale } => {
            let approvals: Api<PtahSchemaApproval> = Api::namespaced(ctx.client.clone(), &g.meta.namespace);
            for (refs, t, reason, message) in [
                (
                    consumed,
                    ConditionType::Consumed,
                    ptah_api::conditions::Reason::DispatchCommitted,
                    "spent on the Apply it authorized",
                ),
                (
                    stale,
                    ConditionType::Stale,
                    ptah_api::conditions::Reason::PlanNoLongerCurrent,
                    "the plan it names is no longer current",
                ),
            ] {
                for r in refs {
                    mark(&approvals, &r.name, t, reason, message).await?;
                }
            }
            Ok(Some(schema.clone()))
        }
        Action::Wait { .. } => Ok(None),
    }
}

async fn mark(
    api: &Api<PtahSchemaApproval>,
    name: &str,
    t: ConditionType,
    reason: ptah_api::conditions::Reason,
    message: &str,
) -> Result<(), ShellError> {
    let mut cs = Vec::new();
    if let Some(live) = api.get_opt(name).await? {
        cs = live.status.map(|s| s.conditions).unwrap_or_default();
    }
    conditions::set(
        &mut cs,
        t,
        Status::True,
        reason,
        message,
        None,
        jiff::Timestamp::now(),
    );
    let body = json!({"apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchemaApproval", "status": {"conditions": cs}});
    api.patch_status(
        name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&body),
    )
    .await?;
    Ok(())
}

async fn dispatch(
    ctx: &Context,
    api: &Api<PtahSchema>,
    schema: &PtahSchema,
    g: &Gathered,
    next: PtahSchemaStatus,
    plan: Option<ptah_api::shared::ImmutableObjectReference>,
) -> Result<Option<PtahSchema>, ShellError> {
    let c = next
        .active_operation
        .clone()
        .ok_or(ShellError::Invalid("dispatch without a claim"))?;
    // Everything the Job needs is prepared before the commit, so a failure here commits nothing.
    let mut chunks = Vec::new();
    if let Some(reference) = &plan {
        let loaded = ctx.plans.load(&g.meta.namespace, reference).await?;
        chunks = ctx.plans.project(&loaded.plan, &loaded.bytes).await?;
    }
    let apply = next
        .plan
        .as_ref()
        .filter(|_| plan.is_some())
        .map(|p| intent::ApplyPlan {
            chunks: &chunks,
            content_digest: &p.content_digest,
        });
    let built = intent::intent(&g.meta, &schema.spec, &ctx.binding, &c, apply)
        .map_err(|e| ShellError::Build(e.to_string()))
        .and_then(|i| ptah_workload::build(&i).map_err(|e| ShellError::Build(e.to_string())))?;
    let committed = write_status(api, schema, &next).await?;
    let jobs: Api<Job> = Api::namespaced(ctx.client.clone(), &g.meta.namespace);
    match jobs
        .create(
            &PostParams {
                field_manager: Some(FIELD_MANAGER.into()),
                ..PostParams::default()
            },
            &built,
        )
        .await
    {
        Ok(_) => {
            ctx.metrics.dispatched(metric_op(c.operation_type));
            info!(schema = %g.meta.name, job = %c.job_name, operation = ?c.operation_type, "operation dispatched");
        }
        // Any create error leaves the outcome uncertain; the next pass decides from what exists.
        Err(e) => {
            warn!(schema = %g.meta.name, job = %c.job_name, error = %e, "creating the operation Job failed")
        }
    }
    Ok(Some(committed))
}

fn metric_op(op: ptah_api::schema::SchemaOperationType) -> ptah_telemetry::Operation {
    use ptah_api::schema::SchemaOperationType as Op;
    match op {
        Op::Resolve => ptah_telemetry::Operation::Resolve,
        Op::Verify => ptah_telemetry::Operation::Verify,
        Op::Observe => ptah_telemetry::Operation::Observe,
        Op::Plan => ptah_telemetry::Operation::Plan,
        Op::Apply => ptah_telemetry::Operation::Apply,
    }
}

/// Renews the claim's Lease while its Job runs; a lost holding is latched in the claim.
pub async fn renew(ctx: &Context, schema: &PtahSchema, renewal: Option<&Renewal>) -> Result<(), ShellError> {
    let Some(r) = renewal else { return Ok(()) };
    match ctx
        .leases
        .acquire(&r.digest, &r.holder, r.duration_seconds, Some(&r.epoch))
        .await?
    {
        Acquired::Held { .. } => Ok(()),
        Acquired::Busy { .. } | Acquired::ContinuityLost { .. } => {
            let ns = schema.namespace().unwrap_or_default();
            let api: Api<PtahSchema> = Api::namespaced(ctx.client.clone(), &ns);
            let mut s = schema.status.clone().unwrap_or_default();
            if let Some(c) = s.active_operation.as_mut() {
                c.lease_continuity_lost = Some(true);
            }
            write_status(&api, schema, &s).await?;
            publish(
                ctx,
                schema,
                Some(Event::warning(
                    "LeaseContinuityLost",
                    "the realm Lease changed hands while the operation ran; its result will be discarded",
                )),
            )
            .await;
            Ok(())
        }
    }
}

/// Writes the whole status by server-side apply, conditional on the resourceVersion read.
pub async fn write_status(
    api: &Api<PtahSchema>,
    schema: &PtahSchema,
    status: &PtahSchemaStatus,
) -> Result<PtahSchema, ShellError> {
    let body = json!({
        "apiVersion": "operator.ptah.run/v1alpha1",
        "kind": "PtahSchema",
        "metadata": {"name": schema.name_any(), "resourceVersion": schema.resource_version()},
        "status": status,
    });
    Ok(api
        .patch_status(
            &schema.name_any(),
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await?)
}

async fn set_finalizers(
    api: &Api<PtahSchema>,
    schema: &PtahSchema,
    finalizers: Vec<String>,
) -> Result<PtahSchema, ShellError> {
    let patch = json!({"metadata": {"resourceVersion": schema.resource_version(), "finalizers": finalizers}});
    Ok(api
        .patch(&schema.name_any(), &PatchParams::default(), &Patch::Merge(&patch))
        .await?)
}

/// Records an Event on the PtahSchema; a failure to record is logged, never fatal.
pub async fn publish(ctx: &Context, schema: &PtahSchema, event: Option<Event>) {
    let Some(e) = event else { return };
    let reference: ObjectReference = schema.object_ref(&());
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
