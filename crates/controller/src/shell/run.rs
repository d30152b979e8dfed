//! The reconcile loop: gather → decide → perform, a bounded number of steps per pass, for any
//! family; and the error policy that backs off per error category.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use kube::{ResourceExt, runtime::controller::Action as Requeue};
use ptah_telemetry::ReconcileOutcome;
use tracing::{debug, error, warn};

use super::{
    Context, ShellError,
    error::ErrorCategory,
    family::Lifecycle,
    perform::{Performed, perform},
};

/// The finalizer that keeps a resource until nothing is in flight and nothing is owed.
pub const FINALIZER: &str = ptah_api::FINALIZER;
/// Steps performed in one pass before yielding to other resources.
const MAX_STEPS: usize = 16;

/// One pass over one resource.
#[tracing::instrument(skip_all, fields(kind = K::KIND, namespace = %res.namespace().unwrap_or_default(), name = %res.name_any()))]
pub async fn reconcile<K: Lifecycle>(res: Arc<K>, ctx: Arc<Context>) -> Result<Requeue, ShellError> {
    let started = Instant::now();
    let result = steps(&*res, &ctx).await;
    let outcome = match &result {
        Ok(_) => ReconcileOutcome::Success,
        Err(_) => ReconcileOutcome::Error,
    };
    ctx.metrics.reconciled(K::TELEMETRY, outcome);
    ctx.metrics
        .observe_reconcile_duration(K::TELEMETRY, started.elapsed());
    result
}

async fn steps<K: Lifecycle>(res: &K, ctx: &Context) -> Result<Requeue, ShellError> {
    let mut current = res.clone();
    for _ in 0..MAX_STEPS {
        let g = K::gather(ctx, &current).await?;
        let action = K::decide(ctx, &current, &g, jiff::Timestamp::now());
        debug!(operation = action.name(), "decided");
        match perform(ctx, &current, &g, action).await? {
            Performed::Next(next) => current = next,
            Performed::Requeue(after) => return Ok(Requeue::requeue(after)),
        }
    }
    Ok(Requeue::requeue(Duration::from_millis(200)))
}

/// Backoff after a failed pass, by category: a conflict from a stale read is requeued at once
/// and logged at debug level; the API server's trouble is retried soon; what only a person can
/// fix is retried slowly and logged as an error.
pub fn error_policy<K: Lifecycle>(res: Arc<K>, error: &ShellError, _ctx: Arc<Context>) -> Requeue {
    let category = error.category();
    let (name, ns) = (res.name_any(), res.namespace().unwrap_or_default());
    match category {
        ErrorCategory::Conflict => {
            debug!(kind = K::KIND, name, namespace = ns, %error, "stale read; requeued")
        }
        ErrorCategory::Transient => {
            warn!(kind = K::KIND, name, namespace = ns, %error, "reconcile failed; retrying")
        }
        ErrorCategory::Configuration => {
            error!(kind = K::KIND, name, namespace = ns, %error, "reconcile failed")
        }
    }
    Requeue::requeue(category.backoff())
}
