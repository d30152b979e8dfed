//! Gathering the observed state of one PtahSchema. Every read that authorizes anything (the
//! policy ConfigMap, the plan, approvals, the realm grant, the Job) goes to the API server.

use kube::{Api, ResourceExt, api::ListParams};
use ptah_api::{
    PtahSchema, PtahSchemaApproval, schema::SchemaOperationType, shared::ImmutableObjectReference,
};

use super::{Context, ShellError};
use crate::{
    conditions,
    schema::{ApprovalView, JobState, Meta, PlanState, PolicyRead, Realm, ResultRead, intent},
};

/// Everything [`crate::schema::Observed`] borrows, owned.
pub struct Gathered {
    /// Metadata.
    pub meta: Meta,
    /// Realm and census.
    pub realm: Realm,
    /// Verification policy.
    pub policy: PolicyRead,
    /// The claim's Job.
    pub job: JobState,
    /// The claim's result.
    pub result: ResultRead,
    /// The current plan.
    pub plan: PlanState,
    /// Approvals of this schema.
    pub approvals: Vec<ApprovalView>,
}

/// Reads everything the decision needs.
pub async fn gather(ctx: &Context, schema: &PtahSchema) -> Result<Gathered, ShellError> {
    let ns = schema
        .namespace()
        .ok_or(ShellError::Invalid("a PtahSchema without a namespace"))?;
    let meta = Meta {
        namespace: ns.clone(),
        name: schema.name_any(),
        uid: schema
            .uid()
            .ok_or(ShellError::Invalid("a PtahSchema without a UID"))?,
        generation: schema.metadata.generation.unwrap_or(0),
        deleting: schema.metadata.deletion_timestamp.is_some(),
        has_finalizer: schema.finalizers().iter().any(|f| f == super::FINALIZER),
    };
    let realm = super::census::realm(ctx, &schema.spec.target, &ns, &meta.uid).await?;
    let policy = super::census::policy(ctx, &schema.spec.desired.verification_policy_from, &ns).await?;
    let status = schema.status.clone().unwrap_or_default();
    let (job, result) = match &status.active_operation {
        Some(c) if c.dispatch_started == Some(true) => job(ctx, schema, &meta, &status, c).await?,
        _ => (JobState::Absent, ResultRead::NotRead),
    };
    // Every chunk is re-read and re-hashed only where it authorizes something: just before an
    // Apply is dispatched. An idle pass (a plan awaiting its approval, re-read on every event)
    // checks the plan object alone instead of up to 8 MiB of chunks.
    let plan = match (&status.plan, &status.active_operation) {
        (Some(p), Some(c))
            if c.operation_type == SchemaOperationType::Apply && c.dispatch_started != Some(true) =>
        {
            plan_state(ctx, &ns, p).await?
        }
        (Some(p), None) => plan_manifest_state(ctx, &ns, p).await?,
        (Some(_), Some(_)) => PlanState::Intact,
        (None, _) => PlanState::None,
    };
    let approvals = approvals(ctx, &ns, &meta.uid).await?;
    Ok(Gathered {
        meta,
        realm,
        policy,
        job,
        result,
        plan,
        approvals,
    })
}

async fn job(
    ctx: &Context,
    schema: &PtahSchema,
    meta: &Meta,
    status: &ptah_api::PtahSchemaStatus,
    c: &ptah_api::schema::SchemaOperationStatus,
) -> Result<(JobState, ResultRead), ShellError> {
    let chunks = if c.operation_type == SchemaOperationType::Apply {
        apply_chunks(ctx, &meta.namespace, status).await?
    } else {
        Vec::new()
    };
    let plan = status.plan.as_ref().map(|p| intent::ApplyPlan {
        chunks: &chunks,
        content_digest: &p.content_digest,
    });
    let expected = intent::intent(meta, &schema.spec, &ctx.binding, c, plan)
        .ok()
        .and_then(|i| ptah_workload::build(&i).ok());
    super::jobs::observe(ctx, &meta.namespace, &meta.uid, c, expected).await
}

/// The projection ConfigMap names of the current plan: named like its chunks, in order.
pub async fn apply_chunks(
    ctx: &Context,
    ns: &str,
    status: &ptah_api::PtahSchemaStatus,
) -> Result<Vec<String>, ShellError> {
    let Some(p) = &status.plan else {
        return Ok(Vec::new());
    };
    let plans: Api<ptah_api::PtahSchemaPlan> = Api::namespaced(ctx.client.clone(), ns);
    let Some(plan) = plans.get_opt(&p.name).await? else {
        return Ok(Vec::new());
    };
    let mut chunks = plan.spec.chunks;
    chunks.sort_by_key(|c| c.index);
    Ok(chunks.into_iter().map(|c| c.name).collect())
}

async fn plan_state(
    ctx: &Context,
    ns: &str,
    p: &ptah_api::schema::CurrentPlanStatus,
) -> Result<PlanState, ShellError> {
    let reference = ImmutableObjectReference {
        name: p.name.clone(),
        uid: p.uid.clone(),
    };
    match ctx.plans.load(ns, &reference).await {
        Ok(loaded) if loaded.plan.spec.fingerprint == p.fingerprint => Ok(PlanState::Intact),
        Ok(_) => Ok(PlanState::Broken(
            "the plan object's fingerprint differs from the recorded one".into(),
        )),
        Err(e) if e.is_transient() => Err(ShellError::Plan(e)),
        Err(e) => Ok(PlanState::Broken(e.to_string())),
    }
}

/// The plan object alone: it exists under the recorded UID and fingerprint and is Ready for its
/// generation.
async fn plan_manifest_state(
    ctx: &Context,
    ns: &str,
    p: &ptah_api::schema::CurrentPlanStatus,
) -> Result<PlanState, ShellError> {
    let plans: Api<ptah_api::PtahSchemaPlan> = Api::namespaced(ctx.client.clone(), ns);
    let Some(plan) = plans.get_opt(&p.name).await? else {
        return Ok(PlanState::Broken(format!("plan {} is missing", p.name)));
    };
    if plan.uid().as_deref() != Some(p.uid.as_str()) {
        return Ok(PlanState::Broken(format!(
            "plan {} was replaced (another UID)",
            p.name
        )));
    }
    if plan.spec.fingerprint != p.fingerprint {
        return Ok(PlanState::Broken(
            "the plan object's fingerprint differs from the recorded one".into(),
        ));
    }
    let ready = plan.status.as_ref().is_some_and(|st| {
        st.observed_generation == plan.metadata.generation
            && conditions::is_true(&st.conditions, ptah_api::conditions::ConditionType::Ready)
    });
    Ok(if ready {
        PlanState::Intact
    } else {
        PlanState::Broken(format!("plan {} is not Ready", p.name))
    })
}

async fn approvals(ctx: &Context, ns: &str, uid: &str) -> Result<Vec<ApprovalView>, ShellError> {
    let api: Api<PtahSchemaApproval> = Api::namespaced(ctx.client.clone(), ns);
    let list = api.list(&ListParams::default()).await?;
    Ok(list
        .items
        .into_iter()
        .filter(|a| a.spec.schema_ref.uid == uid)
        .filter_map(|a| {
            let cs = a
                .status
                .as_ref()
                .map(|s| s.conditions.clone())
                .unwrap_or_default();
            Some(ApprovalView {
                object: ImmutableObjectReference {
                    name: a.name_any(),
                    uid: a.uid()?,
                },
                schema_uid: a.spec.schema_ref.uid.clone(),
                plan: a.spec.plan_ref.clone(),
                plan_fingerprint: a.spec.plan_fingerprint.clone(),
                execution_binding_id: a.spec.bindings.execution_binding_id.clone(),
                approver: a.spec.approver.clone(),
                approved_at: a.spec.approved_at.as_ref().map(|t| t.0),
                consumed: conditions::is_true(&cs, ptah_api::conditions::ConditionType::Consumed),
                stale: conditions::is_true(&cs, ptah_api::conditions::ConditionType::Stale),
                created: a.metadata.creation_timestamp.as_ref().map(|t| t.0),
            })
        })
        .collect())
}
