//! T3: the state ConfigMap against the real kube-apiserver (`cargo xtask cluster up --tier api`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::{Api, Client, api::PostParams};
use ptah_apitests::client::{admin_client, namespace};
use ptah_controllerstate::{
    BindingInputs, CONTROLLER_STATE_VERSION, STATE_CONFIGMAP, STATE_KEY, StateError, ensure, is_retired,
};

const IMAGE_A: &str =
    "registry.local/ptah@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const IMAGE_B: &str =
    "registry.local/ptah@sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

fn inputs(image: &str) -> BindingInputs {
    BindingInputs {
        controller_state_version: CONTROLLER_STATE_VERSION,
        ptah_version: "0.9.0".into(),
        executor_image: image.into(),
        runner_protocol_version: 5,
    }
}

async fn stored_text(client: &Client, ns: &str) -> String {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let cm = api.get(STATE_CONFIGMAP).await.expect("state ConfigMap");
    cm.data.and_then(|mut d| d.remove(STATE_KEY)).expect("state.json")
}

async fn put_state(client: &Client, ns: &str, data: BTreeMap<String, String>) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(STATE_CONFIGMAP.into());
    cm.data = Some(data);
    api.create(&PostParams::default(), &cm)
        .await
        .expect("create state");
}

#[tokio::test]
async fn the_epoch_is_kept_for_equal_inputs_and_rotates_on_every_change_including_rollback() {
    let client = admin_client().await;
    let ns = namespace(&client, "ctlstate").await;

    let first = ensure(client.clone(), &ns, inputs(IMAGE_A))
        .await
        .expect("first start creates");
    assert_eq!(first.inputs, inputs(IMAGE_A));
    let text = stored_text(&client, &ns).await;
    assert!(text.contains(first.epoch.as_str()), "{text}");
    assert!(
        text.starts_with(r#"{"controllerStateVersion":1,"epoch":"#),
        "canonical: {text}"
    );

    let again = ensure(client.clone(), &ns, inputs(IMAGE_A))
        .await
        .expect("restart");
    assert_eq!(again, first, "same inputs keep the epoch");
    assert!(!is_retired(&first.epoch, &again));

    let upgraded = ensure(client.clone(), &ns, inputs(IMAGE_B))
        .await
        .expect("new image");
    assert_ne!(upgraded.epoch, first.epoch);
    assert!(is_retired(&first.epoch, &upgraded));
    assert!(stored_text(&client, &ns).await.contains(IMAGE_B));

    let rolled_back = ensure(client.clone(), &ns, inputs(IMAGE_A))
        .await
        .expect("rollback");
    assert_eq!(rolled_back.inputs, first.inputs);
    assert_ne!(
        rolled_back.epoch, first.epoch,
        "a rollback must not revive the first epoch"
    );
    assert_ne!(rolled_back.epoch, upgraded.epoch);
    assert!(is_retired(&first.epoch, &rolled_back));
    assert!(is_retired(&upgraded.epoch, &rolled_back));

    let mut ptah = inputs(IMAGE_A);
    ptah.ptah_version = "0.9.1".into();
    let bumped = ensure(client.clone(), &ns, ptah).await.expect("new ptah version");
    assert_ne!(bumped.epoch, rolled_back.epoch);
    let mut protocol = bumped.inputs.clone();
    protocol.runner_protocol_version = 6;
    let reprotocolled = ensure(client.clone(), &ns, protocol).await.expect("new protocol");
    assert_ne!(reprotocolled.epoch, bumped.epoch);
}

#[tokio::test]
async fn concurrent_starts_with_equal_inputs_agree_on_one_epoch() {
    let client = admin_client().await;
    let ns = namespace(&client, "ctlstate").await;
    let starts: Vec<_> = (0..4)
        .map(|_| {
            let (client, ns) = (client.clone(), ns.clone());
            tokio::spawn(async move { ensure(client, &ns, inputs(IMAGE_A)).await })
        })
        .collect();
    let mut epochs = Vec::new();
    for start in starts {
        epochs.push(start.await.expect("join").expect("ensure").epoch);
    }
    epochs.dedup();
    assert_eq!(epochs.len(), 1, "{epochs:?}");
}

#[tokio::test]
async fn stored_state_of_a_newer_manager_is_refused_and_left_alone() {
    let client = admin_client().await;
    let ns = namespace(&client, "ctlstate").await;
    let newer = r#"{"controllerStateVersion":2,"epoch":"v1-0123456789abcdef0123456789abcdef","future":{}}"#;
    put_state(&client, &ns, BTreeMap::from([(STATE_KEY.into(), newer.into())])).await;

    let err = ensure(client.clone(), &ns, inputs(IMAGE_A))
        .await
        .expect_err("refused");
    assert!(
        matches!(
            err,
            StateError::StoredStateNewer {
                stored: 2,
                ours: 1,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("must not run"), "{err}");
    assert_eq!(stored_text(&client, &ns).await, newer, "never overwritten");
}

#[tokio::test]
async fn corrupt_state_is_refused_and_never_overwritten() {
    let client = admin_client().await;
    for (case, data) in [
        (
            "not json",
            BTreeMap::from([(STATE_KEY.to_owned(), "{not json".to_owned())]),
        ),
        (
            "bad epoch",
            BTreeMap::from([(
                STATE_KEY.to_owned(),
                format!(
                    r#"{{"controllerStateVersion":1,"epoch":"v1-nothex","executorImage":"{IMAGE_A}","ptahVersion":"0.9.0","runnerProtocolVersion":5}}"#
                ),
            )]),
        ),
        (
            "missing key",
            BTreeMap::from([("other".to_owned(), "x".to_owned())]),
        ),
    ] {
        let ns = namespace(&client, "ctlstate").await;
        put_state(&client, &ns, data.clone()).await;
        let err = ensure(client.clone(), &ns, inputs(IMAGE_A))
            .await
            .expect_err(case);
        assert!(matches!(err, StateError::Corrupt { .. }), "{case}: {err:?}");
        assert!(err.to_string().contains("delete the ConfigMap"), "{case}: {err}");
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
        let live = api.get(STATE_CONFIGMAP).await.expect("still there");
        assert_eq!(live.data, Some(data), "{case}: left untouched");
    }
}

#[tokio::test]
async fn invalid_inputs_are_refused_before_any_write() {
    let client = admin_client().await;
    let ns = namespace(&client, "ctlstate").await;
    let err = ensure(client.clone(), &ns, inputs("registry.local/ptah:0.9.0"))
        .await
        .expect_err("tag refused");
    assert!(matches!(err, StateError::InvalidInputs(_)), "{err:?}");
    let api: Api<ConfigMap> = Api::namespaced(client, &ns);
    assert!(api.get_opt(STATE_CONFIGMAP).await.expect("get").is_none());
}
