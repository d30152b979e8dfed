//! The PtahSchema family in the shell: its gathering, its Job, its plan, its approvals.

use k8s_openapi::api::batch::v1::Job;
use kube::{
    Api, ResourceExt,
    api::{Patch, PatchParams},
};
use ptah_api::{
    FIELD_MANAGER, PtahSchema, PtahSchemaApproval, PtahSchemaStatus,
    conditions::{ConditionType, Reason},
    schema::{PendingObservationOutcome, SchemaOperationStatus, SchemaOperationType, SchemaPhase},
    shared::ImmutableObjectReference,
};
use ptah_telemetry::OperationResult;
use serde_json::json;

use super::{
    Context, ShellError,
    family::{Decision, Lifecycle, Managed},
    gather::{self, Gathered},
};
use crate::{
    conditions::{self, Status},
    operation::Action,
    schema::{Observed, PlanDraft, decide, intent},
};

impl Managed for PtahSchema {
    type Status = PtahSchemaStatus;
    type Claim = SchemaOperationStatus;
    const KIND: &'static str = "PtahSchema";
    const RESULT_KIND: ptah_resultdelivery::ResourceKind = ptah_resultdelivery::ResourceKind::PtahSchema;
    const TELEMETRY: ptah_telemetry::Kind = ptah_telemetry::Kind::Schema;

    fn status_of(&self) -> Option<&PtahSchemaStatus> {
        self.status.as_ref()
    }

    fn claim_of(status: &PtahSchemaStatus) -> Option<&SchemaOperationStatus> {
        status.active_operation.as_ref()
    }

    fn claim_of_mut(status: &mut PtahSchemaStatus) -> Option<&mut SchemaOperationStatus> {
        status.active_operation.as_mut()
    }

    fn settled(before: &PtahSchemaStatus, after: &PtahSchemaStatus) -> Option<OperationResult> {
        let c = super::family::retired(before.active_operation.as_ref(), after.active_operation.as_ref())?;
        Some(
            match (&after.pending_observation, &after.active_operation, after.phase) {
                (Some(p), _, _) if c.operation_type == SchemaOperationType::Apply => match p.outcome {
                    PendingObservationOutcome::ApplySucceeded => OperationResult::Succeeded,
                    PendingObservationOutcome::OutcomeUnknown => OperationResult::Unknown,
                },
                (_, Some(next), _) if next.operation_type == c.operation_type => OperationResult::Unknown,
                (_, _, Some(SchemaPhase::Failed)) => OperationResult::Failed,
                _ => OperationResult::Succeeded,
            },
        )
    }
}

impl Lifecycle for PtahSchema {
    type Gathered = Gathered;
    type Draft = PlanDraft;

    async fn gather(ctx: &Context, res: &Self) -> Result<Gathered, ShellError> {
        gather::gather(ctx, res).await
    }

    fn decide(
        ctx: &Context,
        res: &Self,
        g: &Gathered,
        now: jiff::Timestamp,
    ) -> Action<PtahSchemaStatus, PlanDraft> {
        let status = res.status.clone().unwrap_or_default();
        decide(&Observed {
            now,
            meta: &g.meta,
            spec: &res.spec,
            status: &status,
            binding: &ctx.binding,
            realm: &g.realm,
            policy: &g.policy,
            job: &g.job,
            result: &g.result,
            plan: &g.plan,
            approvals: &g.approvals,
        })
    }

    async fn build_job(
        ctx: &Context,
        res: &Self,
        g: &Gathered,
        status: &PtahSchemaStatus,
        plan: Option<&ImmutableObjectReference>,
    ) -> Result<Job, ShellError> {
        let c = status
            .active_operation
            .as_ref()
            .ok_or(ShellError::Invalid("dispatch without a claim"))?;
        // An Apply's plan is re-read and re-hashed chunk by chunk, then projected into immutable
        // ConfigMaps, just before its Job exists.
        let mut chunks = Vec::new();
        if let Some(reference) = plan {
            let loaded = ctx.plans.load(&g.meta.namespace, reference).await?;
            chunks = ctx.plans.project(&loaded.plan, &loaded.bytes).await?;
        }
        let apply = status
            .plan
            .as_ref()
            .filter(|_| plan.is_some())
            .map(|p| intent::ApplyPlan {
                chunks: &chunks,
                content_digest: &p.content_digest,
            });
        let i = intent::intent(&g.meta, &res.spec, &ctx.binding, c, apply)
            .map_err(|e| ShellError::Build(e.to_string()))?;
        ptah_workload::build(&i).map_err(|e| ShellError::Build(e.to_string()))
    }

    async fn publish_plan(
        ctx: &Context,
        res: &Self,
        draft: PlanDraft,
        status: &mut PtahSchemaStatus,
    ) -> Result<(), ShellError> {
        let plan = ctx.plans.publish(res, draft.spec, &draft.bytes).await?;
        if let (Some(p), Some(uid)) = (status.plan.as_mut(), plan.uid()) {
            p.name = plan.name_any();
            p.uid = uid;
            p.fingerprint = plan.spec.fingerprint.clone();
        }
        Ok(())
    }

    async fn mark(
        ctx: &Context,
        namespace: &str,
        what: Decision,
        name: &str,
        consumed: bool,
    ) -> Result<(), ShellError> {
        if what != Decision::Approval {
            return Err(ShellError::Invalid("a PtahSchema has no run acknowledgments"));
        }
        let api: Api<PtahSchemaApproval> = Api::namespaced(ctx.client.clone(), namespace);
        let live = api.get_opt(name).await?;
        let cs = live
            .and_then(|a| a.status)
            .map(|s| s.conditions)
            .unwrap_or_default();
        let body = mark_body("PtahSchemaApproval", cs, consumed);
        api.patch_status(
            name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await?;
        Ok(())
    }
}

/// The status of a decision object marked consumed (spent on the dispatch it authorized) or
/// stale (its plan or run is no longer current), keeping its other conditions.
pub fn mark_body(
    kind: &str,
    mut cs: Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition>,
    consumed: bool,
) -> serde_json::Value {
    let (t, reason, message) = if consumed {
        (
            ConditionType::Consumed,
            Reason::DispatchCommitted,
            "spent on the operation it authorized",
        )
    } else {
        (
            ConditionType::Stale,
            Reason::PlanNoLongerCurrent,
            "what it names is no longer current",
        )
    };
    conditions::set(
        &mut cs,
        t,
        Status::True,
        reason,
        message,
        None,
        jiff::Timestamp::now(),
    );
    json!({"apiVersion": format!("{}/{}", ptah_api::GROUP, ptah_api::VERSION), "kind": kind, "status": {"conditions": cs}})
}
