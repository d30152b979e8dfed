//! After an upgrade: wait until the new manager runs every replica and has taken over the
//! execution binding, then report how many resources still carry the retired epoch (the manager
//! retires their plans and approvals itself, each with an Event), and which ones a narrowed
//! `watchNamespace` strands with the manager's finalizer ([`crate::stranded`]).

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use kube::{
    Api, Client,
    api::{ApiResource, DynamicObject, ListParams},
};
use ptah_api::{PtahMigration, PtahSchema};

use crate::error::{Error, Refusal};

/// What the retirement check saw.
#[derive(Debug)]
pub struct Retired {
    /// The epoch the new manager runs under.
    pub epoch: String,
    /// Per kind: resources recording another epoch, and all resources.
    pub pending: Vec<(String, usize, usize)>,
    /// Resources outside the watched namespace that still carry the finalizer (none when every
    /// namespace is watched).
    pub stranded: Vec<crate::stranded::Stranded>,
}

/// The manager a retirement waits for.
pub struct Manager<'a> {
    /// Its namespace (the release namespace).
    pub namespace: &'a str,
    /// Its Deployment.
    pub deployment: &'a str,
    /// Where its controller state lives.
    pub coordination_namespace: &'a str,
    /// The namespace it reconciles; `None` for every namespace.
    pub watch_namespace: Option<&'a str>,
}

/// Waits up to `wait` for the manager's Deployment to be rolled out and for its state to name
/// `executor_image`, then counts the resources it reconciles that record another binding.
pub async fn run(
    client: &Client,
    manager: &Manager<'_>,
    executor_image: &str,
    wait: Duration,
) -> Result<Retired, Error> {
    let Manager {
        namespace,
        deployment,
        coordination_namespace,
        watch_namespace,
    } = *manager;
    let deadline = Instant::now() + wait;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    let epoch = loop {
        let live = deployments
            .get(deployment)
            .await
            .map_err(Error::api("get", format!("Deployment {namespace}/{deployment}")))?;
        let state = ptah_controllerstate::load(client.clone(), coordination_namespace).await?;
        let last = match (rolled_out(&live), state) {
            (Err(why), _) => why,
            (Ok(()), None) => "the new manager has not written the controller state yet".into(),
            (Ok(()), Some(state)) if state.executor_image != executor_image => format!(
                "the controller state still binds executor {}, not {executor_image}",
                state.executor_image
            ),
            (Ok(()), Some(state)) => break state.epoch.as_str().to_owned(),
        };
        if Instant::now() >= deadline {
            return Err(Refusal::NotRetired(format!(
                "the new manager did not take over the execution binding within {} s: {last}",
                wait.as_secs()
            ))
            .into());
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    let mut pending = Vec::new();
    for kind in [
        ApiResource::erase::<PtahSchema>(&()),
        ApiResource::erase::<PtahMigration>(&()),
    ] {
        let api: Api<DynamicObject> = match watch_namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, &kind),
            None => Api::all_with(client.clone(), &kind),
        };
        let list = api
            .list(&ListParams::default())
            .await
            .map_err(Error::api("list", kind.plural.clone()))?;
        let stale = list
            .items
            .iter()
            .filter(|o| {
                o.data
                    .pointer("/status/executionBinding/epoch")
                    .and_then(|e| e.as_str())
                    .is_some_and(|e| e != epoch)
            })
            .count();
        pending.push((kind.kind.clone(), stale, list.items.len()));
    }
    let stranded = match watch_namespace {
        Some(ns) => crate::stranded::find(client, ns).await?,
        None => Vec::new(),
    };
    Ok(Retired {
        epoch,
        pending,
        stranded,
    })
}

/// Every replica runs the current template and is ready.
fn rolled_out(deployment: &Deployment) -> Result<(), String> {
    let generation = deployment.metadata.generation.unwrap_or(0);
    let want = deployment.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let status = deployment.status.clone().unwrap_or_default();
    if status.observed_generation.unwrap_or(0) < generation {
        return Err("the Deployment controller has not observed the new template yet".into());
    }
    let updated = status.updated_replicas.unwrap_or(0);
    let ready = status.ready_replicas.unwrap_or(0);
    let total = status.replicas.unwrap_or(0);
    if updated < want || ready < want || total > want {
        return Err(format!(
            "{updated} of {want} replicas updated, {ready} ready, {total} in total"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(replicas: i32, status: serde_json::Value) -> Deployment {
        serde_json::from_value(json!({"metadata": {"name": "m", "generation": 3},
            "spec": {"replicas": replicas, "selector": {}, "template": {}}, "status": status}))
        .expect("deployment")
    }

    #[test]
    fn a_rollout_is_done_when_every_replica_runs_the_observed_template() {
        let done = json!({"observedGeneration": 3, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2});
        assert_eq!(rolled_out(&deployment(2, done)), Ok(()));
        for (status, why) in [
            (
                json!({"observedGeneration": 2, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2}),
                "not observed",
            ),
            (
                json!({"observedGeneration": 3, "replicas": 2, "updatedReplicas": 1, "readyReplicas": 2}),
                "1 of 2 replicas updated",
            ),
            (
                json!({"observedGeneration": 3, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 1}),
                "1 ready",
            ),
            (
                json!({"observedGeneration": 3, "replicas": 3, "updatedReplicas": 2, "readyReplicas": 2}),
                "3 in total",
            ),
        ] {
            let refused = rolled_out(&deployment(2, status)).expect_err(why);
            assert!(refused.contains(why), "{refused}");
        }
    }
}
