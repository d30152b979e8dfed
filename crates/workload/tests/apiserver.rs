//! T3: every operation's Job created on the real kube-apiserver (`cargo xtask cluster up --tier
//! api`) reads back equal to its intent under `compare`, and a read-back edited after creation
//! does not; its admission snapshot digest survives the API server's defaults.

mod common;

use common::{ALL_OPS, intent};
use k8s_openapi::api::{batch::v1::Job, core::v1::ConfigMap};
use kube::{
    Api,
    api::{DeleteParams, PostParams},
};
use ptah_apitests::client::{admin_client, namespace};

#[tokio::test]
async fn created_jobs_read_back_equal_to_their_intent() {
    let client = admin_client().await;
    let ns = namespace(&client, "workload").await;
    // A real owner in the namespace, so the garbage collector keeps the Jobs while we read them.
    let owners: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let mut owner = ConfigMap::default();
    owner.metadata.name = Some("orders-owner".to_owned());
    let owner = owners
        .create(&PostParams::default(), &owner)
        .await
        .expect("create owner");
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns);
    for op in ALL_OPS {
        let mut intent = intent(op);
        intent.namespace = ns.clone();
        intent.owner.api_version = "v1".to_owned();
        intent.owner.kind = "ConfigMap".to_owned();
        intent.owner.name = "orders-owner".to_owned();
        intent.owner.uid = owner.metadata.uid.clone().expect("owner uid");
        let built = ptah_workload::build(&intent).expect("build");
        let created = jobs
            .create(&PostParams::default(), &built)
            .await
            .unwrap_or_else(|e| panic!("create the {op} Job: {e}"));
        if let Err(e) = ptah_workload::compare(&built, &created) {
            panic!(
                "{op}: {e}\n{}",
                serde_json::to_string_pretty(&created).unwrap_or_default()
            );
        }
        let read = jobs
            .get(&intent.job_name)
            .await
            .unwrap_or_else(|e| panic!("get the {op} Job: {e}"));
        ptah_workload::compare(&built, &read).unwrap_or_else(|e| panic!("{op} read back: {e}"));
        // The admission snapshot is taken from the built Job before it exists; the pod-intent
        // webhook digests the stored one. The API server's defaults must not change it.
        let template = |j: &Job| j.spec.as_ref().map(|s| s.template.clone()).expect("template");
        let digest = ptah_workload::template_digest(&template(&built)).expect("built digest");
        assert_eq!(
            ptah_workload::template_digest(&template(&read)),
            Some(digest),
            "{op}"
        );

        let mut tampered = read.clone();
        let pod = tampered
            .spec
            .as_mut()
            .and_then(|s| s.template.spec.as_mut())
            .expect("pod spec");
        pod.containers[0].image = Some("registry.example/other:latest".to_owned());
        let err = ptah_workload::compare(&built, &tampered).expect_err("a changed image is refused");
        assert_eq!(err.differences.len(), 1, "{err}");
    }
    let _ = api_delete_namespace(&client, &ns).await;
}

async fn api_delete_namespace(client: &kube::Client, ns: &str) -> Result<(), kube::Error> {
    let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    api.delete(ns, &DeleteParams::default()).await.map(drop)
}
