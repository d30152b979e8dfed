//! The shell around [`decide`]: one pass against the API server, and the loop that repeats it.

use std::{future::Future, sync::Arc, time::Duration};

use futures_util::StreamExt as _;
use jiff::Timestamp;
use k8s_openapi::api::{
    admissionregistration::v1::{MutatingWebhookConfiguration, ValidatingWebhookConfiguration},
    core::v1::Secret,
};
use kube::{
    Api, Client, Resource,
    runtime::{WatchStreamExt as _, watcher},
};
use serde::de::DeserializeOwned;
use tokio::{sync::Notify, task::JoinSet};
use tracing::{debug, info, warn};

use crate::{
    Action, CertRotationError, Injection, RotationConfig, decide, execute, inject_bundle,
    secret::{self, files_of},
};

/// The first retry after a failed pass; doubled per failure up to the interval.
const RETRY_INITIAL: Duration = Duration::from_secs(5);
/// The pause after a write before the pass that confirms it (and takes the next step if one is due).
const AFTER_WRITE: Duration = Duration::from_secs(1);

/// What one pass saw and did.
#[derive(Debug)]
pub struct PassOutcome {
    /// The decision over the Secret as read.
    pub action: Action,
    /// Whether the Secret was created or updated.
    pub wrote: bool,
    /// Each webhook configuration's injection result (the last injection of the pass).
    pub injections: Vec<(String, Injection)>,
}

/// One pass: read the Secret, decide, publish the bundle in force, write the new files, publish their bundle.
///
/// The bundle in force is injected before anything is written so a CA staged by an earlier pass whose
/// injection failed is trusted by the API server before a serving certificate under it is written.
pub async fn reconcile(
    client: &Client,
    config: &RotationConfig,
    now: Timestamp,
) -> Result<PassOutcome, CertRotationError> {
    let api: Api<Secret> = Api::namespaced(client.clone(), &config.namespace);
    let existing = secret::read(&api, config).await?;
    let files = existing.as_ref().map(files_of);
    let action = decide(files.as_ref(), now, config);
    let mut injections = Vec::new();
    if !action.starts_over()
        && let Some(bundle) = files.as_ref().and_then(|f| f.ca_crt.as_deref())
    {
        injections = inject_bundle(client, config, bundle).await?;
    }
    let Some(next) = execute(&action, files.as_ref(), now, config)? else {
        debug!(%action, "nothing to write");
        return Ok(PassOutcome {
            action,
            wrote: false,
            injections,
        });
    };
    secret::write(&api, config, existing, &next).await?;
    info!(
        %action,
        namespace = %config.namespace,
        secret = %config.secret_name,
        "wrote the webhook TLS Secret"
    );
    let bundle = next
        .ca_crt
        .as_deref()
        .ok_or(CertRotationError::Inconsistent("new files without a bundle"))?;
    let injections = inject_bundle(client, config, bundle).await?;
    for (name, outcome) in &injections {
        match outcome {
            Injection::Missing => {
                warn!(configuration = %name, "webhook configuration not found; injected later")
            }
            Injection::Updated => info!(configuration = %name, "CA bundle injected"),
            Injection::Unchanged => {}
        }
    }
    Ok(PassOutcome {
        action,
        wrote: true,
        injections,
    })
}

/// Wakes `notify` on every event of the object `name` (watched by field selector, so RBAC can stay
/// restricted to that name); watch failures only log, the interval still drives passes.
fn watch_one<K>(tasks: &mut JoinSet<()>, api: Api<K>, name: &str, notify: Arc<Notify>)
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug + Send + Sync + 'static,
{
    let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
    let name = name.to_owned();
    tasks.spawn(async move {
        let mut events = watcher(api, config).default_backoff().boxed();
        while let Some(event) = events.next().await {
            match event {
                Ok(_) => notify.notify_one(),
                Err(e) => debug!(object = %name, error = %e, "watch failed; retrying with back-off"),
            }
        }
    });
}

fn watch_all(client: &Client, config: &RotationConfig, notify: &Arc<Notify>) -> JoinSet<()> {
    let mut tasks = JoinSet::new();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &config.namespace);
    watch_one(&mut tasks, secrets, &config.secret_name, notify.clone());
    for name in &config.mutating_webhooks {
        let api: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
        watch_one(&mut tasks, api, name, notify.clone());
    }
    for name in &config.validating_webhooks {
        let api: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
        watch_one(&mut tasks, api, name, notify.clone());
    }
    tasks
}

/// Until `due`, but never longer than the interval nor shorter than a second.
fn pause_until(due: Option<Timestamp>, interval: Duration) -> Duration {
    let Some(due) = due else {
        return AFTER_WRITE;
    };
    let secs = due
        .as_second()
        .saturating_sub(Timestamp::now().as_second())
        .max(1);
    Duration::from_secs(secs.unsigned_abs()).min(interval)
}

/// Passes until `shutdown` completes: every `interval`, when a rotation step falls due, and on any
/// change of the Secret or the webhook configurations; with `once`, a single pass whose error is returned.
pub async fn run(
    client: Client,
    config: RotationConfig,
    once: bool,
    shutdown: impl Future<Output = ()>,
) -> Result<(), CertRotationError> {
    config.validate()?;
    if once {
        let outcome = reconcile(&client, &config, Timestamp::now()).await?;
        info!(action = %outcome.action, wrote = outcome.wrote, "single pass done");
        return Ok(());
    }
    let notify = Arc::new(Notify::new());
    // Dropping the set at return aborts the watch tasks.
    let _watches = watch_all(&client, &config, &notify);
    tokio::pin!(shutdown);
    let mut failures: u32 = 0;
    loop {
        let pause = match reconcile(&client, &config, Timestamp::now()).await {
            Ok(outcome) => {
                failures = 0;
                debug!(action = %outcome.action, "pass done");
                pause_until(outcome.action.due_at(), config.interval)
            }
            Err(e) => {
                failures = failures.saturating_add(1);
                warn!(error = %e, failures, "pass failed; retrying");
                RETRY_INITIAL
                    .saturating_mul(2u32.saturating_pow(failures.saturating_sub(1).min(16)))
                    .min(config.interval)
            }
        };
        tokio::select! {
            () = &mut shutdown => return Ok(()),
            () = tokio::time::sleep(pause) => {}
            () = notify.notified() => {}
        }
    }
}

/// Completes on SIGTERM or Ctrl-C (the two ways a Pod or a terminal stops the rotator).
pub async fn termination() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
