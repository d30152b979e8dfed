//! Reading, creating and rotating the state ConfigMap against the API server.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::{Api, Client, api::PostParams};

use crate::{
    BindingInputs, ExecutionBinding, StateError,
    epoch::fresh_epoch,
    state::{Refusal, STATE_KEY, StoredState, validate},
};

/// Name of the state ConfigMap in the coordination namespace.
pub const STATE_CONFIGMAP: &str = "ptah-operator-state";

/// The field manager recorded on the state ConfigMap's writes.
use ptah_api::FIELD_MANAGER;

/// Rounds of read-then-write before giving up: each lost round means another replica wrote in
/// between, and a replica with the same inputs settles it in one round.
const MAX_ATTEMPTS: u32 = 5;

/// Reads the stored state; when absent creates it with a fresh epoch; when any input differs
/// (including a rollback to earlier values) rotates to a fresh random epoch (`v1-` + 32 hex) with an
/// optimistic-concurrency replace; refuses (typed error StoredStateNewer) when the stored
/// controllerStateVersion is greater than ours — the manager must not start then.
pub async fn ensure(
    client: Client,
    namespace: &str,
    inputs: BindingInputs,
) -> Result<ExecutionBinding, StateError> {
    validate(&inputs).map_err(StateError::InvalidInputs)?;
    let api: Api<ConfigMap> = Api::namespaced(client, namespace);
    let params = PostParams {
        dry_run: false,
        field_manager: Some(FIELD_MANAGER.to_owned()),
    };
    let api_error = |action: &'static str| {
        move |source: kube::Error| StateError::Api {
            namespace: namespace.to_owned(),
            name: STATE_CONFIGMAP.to_owned(),
            action,
            source: Box::new(source),
        }
    };

    for _ in 0..MAX_ATTEMPTS {
        let live = api.get_opt(STATE_CONFIGMAP).await.map_err(api_error("get"))?;
        let Some(mut live) = live else {
            let state = StoredState::new(&inputs, fresh_epoch()?);
            match api.create(&params, &new_configmap(namespace, &state)?).await {
                Ok(_) => {
                    tracing::info!(namespace, epoch = %state.epoch, "created the controller state");
                    return Ok(binding(state));
                }
                // Another replica created it first: read what it wrote.
                Err(e) if is_status(&e, 409) => continue,
                Err(e) => return Err(api_error("create")(e)),
            }
        };
        let stored = read(namespace, &live)?;
        if stored.inputs() == inputs {
            return Ok(binding(stored));
        }
        let state = StoredState::new(&inputs, fresh_epoch()?);
        // `live` keeps its resourceVersion, so the replace fails with 409 if anyone wrote after our read.
        live.data = Some(BTreeMap::from([(STATE_KEY.to_owned(), state.encode()?)]));
        match api.replace(STATE_CONFIGMAP, &params, &live).await {
            Ok(_) => {
                tracing::warn!(
                    namespace,
                    retired_epoch = %stored.epoch,
                    epoch = %state.epoch,
                    from_ptah_version = %stored.ptah_version,
                    ptah_version = %state.ptah_version,
                    from_executor_image = %stored.executor_image,
                    executor_image = %state.executor_image,
                    from_controller_state_version = stored.controller_state_version,
                    controller_state_version = state.controller_state_version,
                    from_runner_protocol_version = stored.runner_protocol_version,
                    runner_protocol_version = state.runner_protocol_version,
                    "execution binding changed: rotated the epoch, retiring every plan, approval and claim of the old one"
                );
                return Ok(binding(state));
            }
            Err(e) if is_status(&e, 409) => continue,
            Err(e) => return Err(api_error("replace")(e)),
        }
    }
    Err(StateError::Contended {
        namespace: namespace.to_owned(),
        name: STATE_CONFIGMAP.to_owned(),
        attempts: MAX_ATTEMPTS,
    })
}

/// Reads the stored state without writing: `None` when there is none yet; refuses state written by
/// a newer manager ([`StateError::StoredStateNewer`]) or not written by any.
pub async fn load(client: Client, namespace: &str) -> Result<Option<StoredState>, StateError> {
    let api: Api<ConfigMap> = Api::namespaced(client, namespace);
    let live = api
        .get_opt(STATE_CONFIGMAP)
        .await
        .map_err(|source| StateError::Api {
            namespace: namespace.to_owned(),
            name: STATE_CONFIGMAP.to_owned(),
            action: "get",
            source: Box::new(source),
        })?;
    live.map(|live| read(namespace, &live)).transpose()
}

fn binding(state: StoredState) -> ExecutionBinding {
    ExecutionBinding {
        inputs: state.inputs(),
        epoch: state.epoch,
    }
}

fn is_status(error: &kube::Error, code: u16) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == code)
}

/// The state ConfigMap to create: only `state.json`, labelled so label-limited caches find it.
fn new_configmap(namespace: &str, state: &StoredState) -> Result<ConfigMap, StateError> {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(STATE_CONFIGMAP.to_owned());
    cm.metadata.namespace = Some(namespace.to_owned());
    cm.metadata.labels = Some(BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), "ptah-operator".to_owned()),
        (
            "app.kubernetes.io/component".to_owned(),
            "controller-state".to_owned(),
        ),
        (
            "app.kubernetes.io/managed-by".to_owned(),
            "ptah-operator".to_owned(),
        ),
    ]));
    cm.data = Some(BTreeMap::from([(STATE_KEY.to_owned(), state.encode()?)]));
    Ok(cm)
}

/// The stored state of `live`, refusing anything but exactly one readable `state.json`.
fn read(namespace: &str, live: &ConfigMap) -> Result<StoredState, StateError> {
    let corrupt = |reason: String| StateError::Corrupt {
        namespace: namespace.to_owned(),
        name: STATE_CONFIGMAP.to_owned(),
        reason,
    };
    let data = live.data.as_ref();
    let Some(text) = data.and_then(|d| d.get(STATE_KEY)) else {
        return Err(corrupt(format!("no data key {STATE_KEY}")));
    };
    let state = StoredState::decode(text).map_err(|refusal| match refusal {
        Refusal::Newer(stored) => StateError::StoredStateNewer {
            namespace: namespace.to_owned(),
            name: STATE_CONFIGMAP.to_owned(),
            stored,
            ours: crate::CONTROLLER_STATE_VERSION,
        },
        Refusal::Corrupt(reason) => corrupt(reason),
    })?;
    // Checked after the version: a newer manager may keep more keys, and that is "newer", not corrupt.
    let extra = data.map_or(0, BTreeMap::len) - 1 + live.binary_data.as_ref().map_or(0, BTreeMap::len);
    if extra > 0 {
        return Err(corrupt(format!("{extra} key(s) besides {STATE_KEY}")));
    }
    Ok(state)
}
