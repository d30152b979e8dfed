//! Installing and upgrading the CRDs: every change is decided and dry-run before the first write,
//! only `spec` and the two identity annotations are ever replaced, and the hook waits until each
//! CRD is Established with its names accepted.

use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{Api, Client, api::PostParams};
use ptah_api::{CRD_SCHEMA_DIGEST_ANNOTATION, CRD_SCHEMA_VERSION_ANNOTATION};

use crate::{
    error::Error,
    identity::{CrdChange, decide},
};

/// The field manager of the hook's writes.
pub const FIELD_MANAGER: &str = "ptah-crd-manager";

/// What happened to one CRD.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    /// The CRD's name.
    pub name: String,
    /// What was done.
    pub change: CrdChange,
}

/// Decides every CRD, dry-runs every write, then writes and waits up to `wait` for all of them to
/// be Established. A refusal or a failed dry run leaves every CRD as it was.
pub async fn apply(
    client: &Client,
    shipped: &[CustomResourceDefinition],
    wait: Duration,
) -> Result<Vec<Applied>, Error> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut planned = Vec::new();
    for candidate in shipped {
        let name = candidate.metadata.name.clone().unwrap_or_default();
        let live = api
            .get_opt(&name)
            .await
            .map_err(Error::api("get", format!("CustomResourceDefinition {name}")))?;
        let change = decide(live.as_ref(), candidate)?;
        planned.push((candidate, live, change));
    }
    for dry_run in [true, false] {
        for (candidate, live, change) in &planned {
            write(&api, candidate, live.as_ref(), change, dry_run).await?;
        }
    }
    let applied: Vec<Applied> = planned
        .into_iter()
        .map(|(candidate, _, change)| Applied {
            name: candidate.metadata.name.clone().unwrap_or_default(),
            change,
        })
        .collect();
    for crd in &applied {
        established(&api, &crd.name, wait).await?;
    }
    Ok(applied)
}

async fn write(
    api: &Api<CustomResourceDefinition>,
    candidate: &CustomResourceDefinition,
    live: Option<&CustomResourceDefinition>,
    change: &CrdChange,
    dry_run: bool,
) -> Result<(), Error> {
    let name = candidate.metadata.name.clone().unwrap_or_default();
    let params = PostParams {
        dry_run,
        field_manager: Some(FIELD_MANAGER.to_owned()),
    };
    let object = format!("CustomResourceDefinition {name}");
    match (change, live) {
        (CrdChange::Unchanged, _) => Ok(()),
        (CrdChange::Create, _) => {
            let mut fresh = candidate.clone();
            fresh.status = None;
            api.create(&params, &fresh).await.map(drop).map_err(Error::api(
                if dry_run { "dry-run create" } else { "create" },
                object,
            ))
        }
        (CrdChange::Update { .. }, Some(live)) => {
            // Everything but spec and the identity stays as the cluster has it (labels, other
            // annotations, finalizers); resourceVersion makes a concurrent writer a conflict.
            let mut next = live.clone();
            next.spec = candidate.spec.clone();
            let ours = candidate.metadata.annotations.clone().unwrap_or_default();
            let annotations = next.metadata.annotations.get_or_insert_with(Default::default);
            for key in [CRD_SCHEMA_VERSION_ANNOTATION, CRD_SCHEMA_DIGEST_ANNOTATION] {
                if let Some(value) = ours.get(key) {
                    annotations.insert(key.to_owned(), value.clone());
                }
            }
            api.replace(&name, &params, &next)
                .await
                .map(drop)
                .map_err(Error::api(
                    if dry_run { "dry-run update" } else { "update" },
                    object,
                ))
        }
        (CrdChange::Update { .. }, None) => Err(Error::Build(format!("update of {name} without a live CRD"))),
    }
}

/// Waits until `name` reports `Established` and `NamesAccepted`.
async fn established(api: &Api<CustomResourceDefinition>, name: &str, wait: Duration) -> Result<(), Error> {
    let deadline = Instant::now() + wait;
    loop {
        let live = api
            .get(name)
            .await
            .map_err(Error::api("get", format!("CustomResourceDefinition {name}")))?;
        let conditions = live.status.and_then(|s| s.conditions).unwrap_or_default();
        let holds = |kind: &str| conditions.iter().any(|c| c.type_ == kind && c.status == "True");
        if holds("Established") && holds("NamesAccepted") {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(Error::Timeout {
                what: format!("CustomResourceDefinition {name} to be Established"),
                seconds: wait.as_secs(),
            });
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
