//! The PtahMigration family in the shell: its gathering, its Job, its plan, its decisions.

use k8s_openapi::api::batch::v1::Job;
use kube::{
    Api, ResourceExt,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use ptah_api::{
    FIELD_MANAGER, PtahMigration, PtahMigrationApproval, PtahMigrationPlan, PtahMigrationRunAcknowledgment,
    PtahMigrationStatus,
    migration::{MigrationOperationStatus, MigrationOperationType, MigrationPhase, UnresolvedRunOutcome},
    shared::ImmutableObjectReference,
};

use ptah_telemetry::OperationResult;

use super::{
    Context, ShellError,
    family::{Decision, Lifecycle, Managed},
    schema::mark_body,
};
use crate::{
    conditions,
    migration::{AcknowledgmentView, ApprovalView, MigrationPlanDraft, Observed, PlanState, decide, intent},
    operation::{Action, JobState, Meta, PolicyRead, Realm, ResultRead},
};

/// Everything [`crate::migration::Observed`] borrows, owned.
pub struct Gathered {
    meta: Meta,
    realm: Realm,
    policy: PolicyRead,
    job: JobState,
    result: ResultRead,
    plan: PlanState,
    approvals: Vec<ApprovalView>,
    acknowledgments: Vec<AcknowledgmentView>,
}

impl Managed for PtahMigration {
    type Status = PtahMigrationStatus;
    type Claim = MigrationOperationStatus;
    const KIND: &'static str = "PtahMigration";
    const RESULT_KIND: ptah_resultdelivery::ResourceKind = ptah_resultdelivery::ResourceKind::PtahMigration;
    const TELEMETRY: ptah_telemetry::Kind = ptah_telemetry::Kind::Migration;

    fn status_of(&self) -> Option<&PtahMigrationStatus> {
        self.status.as_ref()
    }

    fn claim_of(status: &PtahMigrationStatus) -> Option<&MigrationOperationStatus> {
        status.active_operation.as_ref()
    }

    fn claim_of_mut(status: &mut PtahMigrationStatus) -> Option<&mut MigrationOperationStatus> {
        status.active_operation.as_mut()
    }

    fn settled(before: &PtahMigrationStatus, after: &PtahMigrationStatus) -> Option<OperationResult> {
        let c = super::family::retired(before.active_operation.as_ref(), after.active_operation.as_ref())?;
        Some(
            match (&after.unresolved_run, &after.active_operation, after.phase) {
                (Some(r), _, _) if r.operation_id == c.id => match r.outcome {
                    UnresolvedRunOutcome::Partial => OperationResult::Partial,
                    UnresolvedRunOutcome::Unknown => OperationResult::Unknown,
                },
                (_, Some(next), _) if next.operation_type == c.operation_type => OperationResult::Unknown,
                (_, _, Some(MigrationPhase::Failed)) => OperationResult::Failed,
                _ => OperationResult::Succeeded,
            },
        )
    }
}

fn meta(m: &PtahMigration) -> Result<Meta, ShellError> {
    Ok(Meta {
        namespace: m
            .namespace()
            .ok_or(ShellError::Invalid("a PtahMigration without a namespace"))?,
        name: m.name_any(),
        uid: m
            .uid()
            .ok_or(ShellError::Invalid("a PtahMigration without a UID"))?,
        generation: m.metadata.generation.unwrap_or(0),
        deleting: m.metadata.deletion_timestamp.is_some(),
        has_finalizer: m.finalizers().iter().any(|f| f == super::FINALIZER),
    })
}

/// The plan `reference` names, read uncached: it exists under that UID.
async fn plan_state(
    ctx: &Context,
    ns: &str,
    reference: Option<&ImmutableObjectReference>,
) -> Result<PlanState, ShellError> {
    let Some(r) = reference else {
        return Ok(PlanState::None);
    };
    let plans: Api<PtahMigrationPlan> = Api::namespaced(ctx.client.clone(), ns);
    Ok(match plans.get_opt(&r.name).await? {
        None => PlanState::Broken(format!("plan {} is missing", r.name)),
        Some(p) if p.uid().as_deref() != Some(r.uid.as_str()) => {
            PlanState::Broken(format!("plan {} was replaced (another UID)", r.name))
        }
        Some(p) if p.metadata.deletion_timestamp.is_some() => {
            PlanState::Broken(format!("plan {} is being deleted", r.name))
        }
        Some(p) => PlanState::Present(Box::new(p.spec)),
    })
}

fn decision_flags(cs: &[k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition]) -> (bool, bool) {
    (
        conditions::is_true(cs, ptah_api::conditions::ConditionType::Consumed),
        conditions::is_true(cs, ptah_api::conditions::ConditionType::Stale),
    )
}

async fn approvals(ctx: &Context, ns: &str, uid: &str) -> Result<Vec<ApprovalView>, ShellError> {
    let api: Api<PtahMigrationApproval> = Api::namespaced(ctx.client.clone(), ns);
    let list = api.list(&ListParams::default()).await?;
    Ok(list
        .items
        .into_iter()
        .filter(|a| a.spec.migration_ref.uid == uid)
        .filter_map(|a| {
            let (consumed, stale) = decision_flags(
                a.status
                    .as_ref()
                    .map(|s| s.conditions.as_slice())
                    .unwrap_or_default(),
            );
            Some(ApprovalView {
                object: ImmutableObjectReference {
                    name: a.name_any(),
                    uid: a.uid()?,
                },
                migration_uid: a.spec.migration_ref.uid.clone(),
                plan: a.spec.plan_ref.clone(),
                plan_fingerprint: a.spec.plan_fingerprint.clone(),
                history_fingerprint: a.spec.history_fingerprint.clone(),
                approver: a.spec.approver.clone(),
                consumed,
                stale,
                created: a.metadata.creation_timestamp.as_ref().map(|t| t.0),
            })
        })
        .collect())
}

async fn acknowledgments(ctx: &Context, ns: &str, uid: &str) -> Result<Vec<AcknowledgmentView>, ShellError> {
    let api: Api<PtahMigrationRunAcknowledgment> = Api::namespaced(ctx.client.clone(), ns);
    let list = api.list(&ListParams::default()).await?;
    Ok(list
        .items
        .into_iter()
        .filter(|a| a.spec.migration_ref.uid == uid)
        .filter_map(|a| {
            let (consumed, stale) = decision_flags(
                a.status
                    .as_ref()
                    .map(|s| s.conditions.as_slice())
                    .unwrap_or_default(),
            );
            Some(AcknowledgmentView {
                object: ImmutableObjectReference {
                    name: a.name_any(),
                    uid: a.uid()?,
                },
                migration_uid: a.spec.migration_ref.uid.clone(),
                operation_id: a.spec.operation_id.clone(),
                acknowledged_by: a.spec.acknowledged_by.clone(),
                consumed,
                stale,
                created: a.metadata.creation_timestamp.as_ref().map(|t| t.0),
            })
        })
        .collect())
}

impl Lifecycle for PtahMigration {
    type Gathered = Gathered;
    type Draft = MigrationPlanDraft;

    async fn gather(ctx: &Context, res: &Self) -> Result<Gathered, ShellError> {
        let meta = meta(res)?;
        let ns = meta.namespace.clone();
        let realm = super::census::realm(ctx, &res.spec.target, &ns, &meta.uid).await?;
        let policy = super::census::policy(ctx, &res.spec.artifact.verification_policy_from, &ns).await?;
        let status = res.status.clone().unwrap_or_default();
        let claim_plan = status.active_operation.as_ref().and_then(|c| c.plan_ref.clone());
        let plan = plan_state(ctx, &ns, status.plan.as_ref().or(claim_plan.as_ref())).await?;
        let (job, result) = match &status.active_operation {
            Some(c) if c.dispatch_started == Some(true) => {
                let plan_spec = match &plan {
                    PlanState::Present(p) => Some(&**p),
                    _ => None,
                };
                let expected = intent::intent(&meta, &res.spec, &ctx.binding, c, plan_spec)
                    .ok()
                    .and_then(|i| ptah_workload::build(&i).ok());
                super::jobs::observe(ctx, &ns, &meta.uid, c, expected).await?
            }
            _ => (JobState::Absent, ResultRead::NotRead),
        };
        Ok(Gathered {
            approvals: approvals(ctx, &ns, &meta.uid).await?,
            acknowledgments: acknowledgments(ctx, &ns, &meta.uid).await?,
            meta,
            realm,
            policy,
            job,
            result,
            plan,
        })
    }

    fn decide(
        ctx: &Context,
        res: &Self,
        g: &Gathered,
        now: jiff::Timestamp,
    ) -> Action<PtahMigrationStatus, MigrationPlanDraft> {
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
            acknowledgments: &g.acknowledgments,
        })
    }

    async fn build_job(
        ctx: &Context,
        res: &Self,
        g: &Gathered,
        status: &PtahMigrationStatus,
        plan: Option<&ImmutableObjectReference>,
    ) -> Result<Job, ShellError> {
        let c = status
            .active_operation
            .as_ref()
            .ok_or(ShellError::Invalid("dispatch without a claim"))?;
        // The Apply's sequence comes from the plan object re-read now, never from memory.
        let fresh = match (c.operation_type, plan) {
            (MigrationOperationType::Apply, Some(r)) => {
                match plan_state(ctx, &g.meta.namespace, Some(r)).await? {
                    PlanState::Present(p) => Some(p),
                    _ => return Err(ShellError::Build(format!("plan {} cannot be read back", r.name))),
                }
            }
            _ => None,
        };
        let i = intent::intent(&g.meta, &res.spec, &ctx.binding, c, fresh.as_deref())
            .map_err(|e| ShellError::Build(e.to_string()))?;
        ptah_workload::build(&i).map_err(|e| ShellError::Build(e.to_string()))
    }

    async fn publish_plan(
        ctx: &Context,
        res: &Self,
        draft: MigrationPlanDraft,
        status: &mut PtahMigrationStatus,
    ) -> Result<(), ShellError> {
        let ns = res.namespace().unwrap_or_default();
        let plans: Api<PtahMigrationPlan> = Api::namespaced(ctx.client.clone(), &ns);
        let mut object = PtahMigrationPlan::new(&draft.name, draft.spec.clone());
        object.metadata.owner_references = Some(vec![crate::migration::intent::owner(&meta(res)?)]);
        object.metadata.labels = Some(
            [(
                ptah_workload::MANAGED_BY_LABEL.to_owned(),
                ptah_workload::MANAGED_BY_VALUE.to_owned(),
            )]
            .into(),
        );
        let params = PostParams {
            field_manager: Some(FIELD_MANAGER.into()),
            ..PostParams::default()
        };
        let published = match plans.create(&params, &object).await {
            Ok(p) => p,
            // The name is the fingerprint: an existing plan must be this one, whenever it was made.
            Err(kube::Error::Api(e)) if e.code == 409 => {
                let live = plans.get(&draft.name).await?;
                let same = PtahMigrationPlanSpec {
                    created_at: None,
                    ..live.spec.clone()
                } == PtahMigrationPlanSpec {
                    created_at: None,
                    ..draft.spec.clone()
                };
                let owned = live
                    .owner_references()
                    .iter()
                    .any(|o| Some(&o.uid) == res.uid().as_ref());
                if !same || !owned {
                    return Err(ShellError::Build(format!(
                        "plan {} exists with other content or another owner",
                        draft.name
                    )));
                }
                live
            }
            Err(e) => return Err(e.into()),
        };
        status.plan = Some(ImmutableObjectReference {
            name: published.name_any(),
            uid: published
                .uid()
                .ok_or(ShellError::Invalid("a published plan without a UID"))?,
        });
        Ok(())
    }

    async fn mark(
        ctx: &Context,
        namespace: &str,
        what: Decision,
        name: &str,
        consumed: bool,
    ) -> Result<(), ShellError> {
        let params = PatchParams::apply(FIELD_MANAGER).force();
        match what {
            Decision::Approval => {
                let api: Api<PtahMigrationApproval> = Api::namespaced(ctx.client.clone(), namespace);
                let cs = api
                    .get_opt(name)
                    .await?
                    .and_then(|a| a.status)
                    .map(|s| s.conditions)
                    .unwrap_or_default();
                api.patch_status(
                    name,
                    &params,
                    &Patch::Apply(&mark_body("PtahMigrationApproval", cs, consumed)),
                )
                .await?;
            }
            Decision::Acknowledgment => {
                let api: Api<PtahMigrationRunAcknowledgment> = Api::namespaced(ctx.client.clone(), namespace);
                let cs = api
                    .get_opt(name)
                    .await?
                    .and_then(|a| a.status)
                    .map(|s| s.conditions)
                    .unwrap_or_default();
                let body = mark_body("PtahMigrationRunAcknowledgment", cs, consumed);
                api.patch_status(name, &params, &Patch::Apply(&body)).await?;
            }
        }
        Ok(())
    }
}

use ptah_api::PtahMigrationPlanSpec;
