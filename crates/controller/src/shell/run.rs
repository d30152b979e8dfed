//! The reconcile loop: gather → decide → perform, a bounded number of steps per pass.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use futures_util::StreamExt;
use kube::{
    Api, ResourceExt,
    runtime::{Controller, controller::Action as Requeue, watcher},
};
use ptah_api::{PtahSchema, PtahSchemaApproval, PtahSchemaPlan};
use ptah_telemetry::{Kind, ReconcileOutcome};
use tracing::{info, warn};

use super::{Context, gather, perform};
use crate::schema::{Action, Observed, decide};

/// The one field manager of every write the manager makes.
pub const FIELD_MANAGER: &str = "ptah-operator";
/// The finalizer that keeps a PtahSchema until nothing is in flight and no proof is owed.
pub const FINALIZER: &str = "operator.ptah.run/finalizer";
/// Steps performed in one pass before yielding to other resources.
const MAX_STEPS: usize = 16;

/// Why a pass could not finish; retried with backoff.
#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    /// The API server refused or failed a call.
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    /// The plan store failed.
    #[error("plan store: {0}")]
    Plan(#[from] ptah_planstore::PlanStoreError),
    /// The realm Lease could not be handled.
    #[error("realm lease: {0}")]
    Lease(#[from] ptah_targetlock::LockError),
    /// The claim could not become a Job.
    #[error("building the Job: {0}")]
    Build(String),
    /// An object lacks what the API guarantees.
    #[error("invalid object: {0}")]
    Invalid(&'static str),
}

/// One pass over one PtahSchema.
pub async fn reconcile(schema: Arc<PtahSchema>, ctx: Arc<Context>) -> Result<Requeue, ShellError> {
    let started = Instant::now();
    let result = steps(schema, &ctx).await;
    let outcome = match &result {
        Ok(_) => ReconcileOutcome::Success,
        Err(_) => ReconcileOutcome::Error,
    };
    ctx.metrics.reconciled(Kind::Schema, outcome);
    ctx.metrics
        .observe_reconcile_duration(Kind::Schema, started.elapsed());
    result
}

async fn steps(schema: Arc<PtahSchema>, ctx: &Context) -> Result<Requeue, ShellError> {
    let mut current = (*schema).clone();
    for _ in 0..MAX_STEPS {
        let g = gather::gather(ctx, &current).await?;
        let status = current.status.clone().unwrap_or_default();
        let observed = Observed {
            now: jiff::Timestamp::now(),
            meta: &g.meta,
            spec: &current.spec,
            status: &status,
            binding: &ctx.binding,
            realm: &g.realm,
            policy: &g.policy,
            job: &g.job,
            result: &g.result,
            plan: &g.plan,
            approvals: &g.approvals,
        };
        let action = decide(&observed);
        tracing::debug!(schema = %g.meta.name, namespace = %g.meta.namespace, action = action_name(&action), "decided");
        if let Action::Wait { after, renew } = &action {
            perform::renew(ctx, &current, renew.as_ref()).await?;
            return Ok(Requeue::requeue(*after));
        }
        match perform::perform(ctx, &current, &g, action).await? {
            Some(next) => current = next,
            None => return Ok(Requeue::requeue(Duration::from_secs(1))),
        }
    }
    Ok(Requeue::requeue(Duration::from_millis(200)))
}

fn action_name(a: &Action) -> &'static str {
    match a {
        Action::ReleaseLease { .. } => "release-lease",
        Action::AddFinalizer => "add-finalizer",
        Action::RemoveFinalizer => "remove-finalizer",
        Action::WriteStatus { .. } => "write-status",
        Action::AcquireLease { .. } => "acquire-lease",
        Action::Dispatch { .. } => "dispatch",
        Action::AdoptJob { .. } => "adopt-job",
        Action::ScheduleJobCleanup => "schedule-job-cleanup",
        Action::PublishAndRecord { .. } => "publish-plan",
        Action::MarkApprovals { .. } => "mark-approvals",
        Action::Wait { .. } => "wait",
    }
}

/// Backoff after a failed pass; transient errors are the common case.
pub fn error_policy(schema: Arc<PtahSchema>, error: &ShellError, _ctx: Arc<Context>) -> Requeue {
    warn!(schema = %schema.name_any(), namespace = %schema.namespace().unwrap_or_default(), %error, "reconcile failed");
    Requeue::requeue(Duration::from_secs(5))
}

fn scoped<K>(client: &kube::Client, namespace: Option<&str>) -> Api<K>
where
    K: kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
{
    match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// Runs the PtahSchema controller (over `watch_namespace`, or all) until `shutdown` resolves.
pub async fn run(
    ctx_parts: impl FnOnce(kube::runtime::reflector::Store<PtahSchema>) -> Context,
    client: kube::Client,
    watch_namespace: Option<&str>,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    let schemas: Api<PtahSchema> = scoped(&client, watch_namespace);
    let jobs: Api<k8s_openapi::api::batch::v1::Job> = scoped(&client, watch_namespace);
    let approvals: Api<PtahSchemaApproval> = scoped(&client, watch_namespace);
    let plans: Api<PtahSchemaPlan> = scoped(&client, watch_namespace);
    let controller = Controller::new(schemas, watcher::Config::default().any_semantic());
    let ctx = Arc::new(ctx_parts(controller.store()));
    let job_selector = watcher::Config::default().labels(&format!(
        "{}={}",
        ptah_workload::MANAGED_BY_LABEL,
        ptah_workload::MANAGED_BY_VALUE
    ));
    // A verification-policy ConfigMap changing (recreated: they are immutable) must wake the
    // schemas that name it; the watch carries metadata only, never the policy bytes.
    // `Api<PartialObjectMeta<_>>` lists and watches with `as=PartialObjectMetadata`.
    let configmaps: Api<ptah_managercache::ConfigMapMeta> = scoped(&client, watch_namespace);
    let schema_store = controller.store();
    let policy_users = move |cm: ptah_managercache::ConfigMapMeta| {
        let (ns, name) = (cm.namespace(), cm.name_any());
        schema_store
            .state()
            .into_iter()
            .filter(|s| s.namespace() == ns && s.spec.desired.verification_policy_from.name == name)
            .map(|s| kube::runtime::reflector::ObjectRef::from(&*s))
            .collect::<Vec<_>>()
    };
    controller
        .watches(configmaps, ptah_managercache::watcher_config(None), policy_users)
        .owns(jobs, job_selector)
        .owns(plans, watcher::Config::default())
        .watches(approvals, watcher::Config::default(), |a: PtahSchemaApproval| {
            let ns = a.namespace()?;
            // The approval names its schema by name and UID; the controller maps by name.
            Some(kube::runtime::reflector::ObjectRef::new(&a.spec.schema_ref.name).within(&ns))
        })
        .graceful_shutdown_on(shutdown)
        .run(reconcile, error_policy, ctx)
        .for_each(|r| async move {
            if let Err(e) = r {
                tracing::debug!(error = %e, "controller event");
            }
        })
        .await;
    info!("PtahSchema controller stopped");
}
