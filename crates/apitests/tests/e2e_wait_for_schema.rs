//! T4 (`e2e_wait_for_schema_…`, phase `wait-for-schema` of `cargo xtask e2e --suite
//! wait-for-schema`): the wait-for-schema pattern of docs/wait-for-schema.md, applied from the
//! very manifest the page shows, `docs/examples/workloads/wait-for-schema.yaml` (namespace,
//! schema name and images substituted after parsing), in a namespace that enforces Pod Security
//! `restricted`.
//!
//! The test plays the manager: it writes the PtahSchema's status itself through the status
//! subresource, so no chart is installed. The init container runs `kubectl` from the image
//! `cargo xtask images` builds from the k8s-bin kubectl (`target/images/kubectl/reference`); the
//! app container is the node's pause image, a stand-in that runs until stopped.

mod wait_for_schema;

use std::time::{Duration, Instant};

use base64::{Engine, engine::general_purpose::STANDARD};
use k8s_openapi::api::{
    apps::v1::Deployment,
    core::v1::{Namespace, Pod, Secret, ServiceAccount},
    rbac::v1::{Role, RoleBinding},
};
use kube::{
    Api,
    api::{DeleteParams, Patch, PatchParams, PostParams},
};
use ptah_api::PtahSchema;
use ptah_apitests::{
    ClusterFiles,
    client::{admin_client, install_crds, unique},
    e2e::{create, image_reference},
    fixtures,
};
use ptah_testservices::TestServices;
use serde_json::json;

/// The manifest docs/wait-for-schema.md documents.
use wait_for_schema::*;

#[tokio::test]
async fn e2e_wait_for_schema_an_init_container_holds_the_app_until_ready() {
    let files = ClusterFiles::require();
    assert_eq!(
        files.tier, "full",
        "the wait-for-schema test runs Pods: run `cargo xtask cluster up` and `cargo xtask images`"
    );
    let services = TestServices::require();
    let registry = &services.registry;
    let kubectl_image = image_reference("kubectl");
    let client = admin_client().await;
    install_crds(&client).await;

    // A namespace that enforces Pod Security `restricted`: a Pod that does not meet it is refused.
    let ns = unique("wait-schema");
    let namespace: Namespace = serde_json::from_value(json!({
        "metadata": {"name": ns, "labels": {
            "pod-security.kubernetes.io/enforce": "restricted",
            "pod-security.kubernetes.io/enforce-version": "latest",
        }},
    }))
    .unwrap_or_else(|e| panic!("namespace: {e}"));
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .unwrap_or_else(|e| panic!("create namespace {ns}: {e}"));
    // The control: the namespace really refuses a Pod that is not `restricted` (dry run).
    let lax: Pod = serde_json::from_value(json!({
        "metadata": {"name": "lax", "namespace": ns},
        "spec": {"containers": [{"name": "app", "image": ptah_testenv::images::PAUSE_IMAGE}]},
    }))
    .unwrap_or_else(|e| panic!("pod: {e}"));
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    match Api::<Pod>::namespaced(client.clone(), &ns)
        .create(&dry_run, &lax)
        .await
    {
        Err(kube::Error::Api(status)) if status.message.contains("violates PodSecurity \"restricted") => {}
        other => panic!(
            "namespace {ns} should refuse a Pod without a restricted securityContext (Pod Security \
             admission), but the dry run answered {other:?}"
        ),
    }
    let auth = STANDARD.encode(format!("{}:{}", registry.username, registry.password.expose()));
    let docker_config = json!({"auths": {registry.host.clone(): {"auth": auth}}}).to_string();
    create(
        &Api::<Secret>::namespaced(client.clone(), &ns),
        json!({
            "metadata": {"name": "registry", "namespace": ns},
            "type": "kubernetes.io/dockerconfigjson",
            "stringData": {".dockerconfigjson": docker_config},
        }),
    )
    .await;

    // The schema exists and waits for an approval: not Ready.
    let schemas = Api::<PtahSchema>::namespaced(client.clone(), &ns);
    let created = create(&schemas, fixtures::schema(&ns, SCHEMA)).await;
    let first = created.metadata.generation.unwrap_or(1);
    let waiting = "create a PtahSchemaApproval for the plan";
    write_status(
        &schemas,
        json!({
            "observedGeneration": first,
            "phase": "AwaitingApproval",
            "conditions": [
                condition("Ready", false, "AwaitingApproval", waiting, first),
                condition("Reconciling", true, "AwaitingApproval", waiting, first),
                condition("Stalled", false, "AwaitingApproval", waiting, first),
            ],
        }),
    )
    .await;

    // The documented objects, applied as an application team would.
    let (docs, doc_schema) = manifest(&ns, &kubectl_image);
    let sa = docs[0]["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    create(
        &Api::<ServiceAccount>::namespaced(client.clone(), &ns),
        docs[0].clone(),
    )
    .await;
    create(&Api::<Role>::namespaced(client.clone(), &ns), docs[1].clone()).await;
    create(
        &Api::<RoleBinding>::namespaced(client.clone(), &ns),
        docs[2].clone(),
    )
    .await;
    let deployments = Api::<Deployment>::namespaced(client.clone(), &ns);
    let deployment = create(&deployments, docs[3].clone()).await;
    let deployment_name = deployment.metadata.name.clone().unwrap_or_default();
    let selector = deployment
        .spec
        .as_ref()
        .and_then(|s| s.selector.match_labels.as_ref())
        .map(|labels| {
            labels
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    eprintln!(
        "wait-for-schema: {MANIFEST} applied in {ns} (schema {doc_schema} → {SCHEMA}, init image {kubectl_image})"
    );

    // The Pod is admitted under `restricted` and its init container starts waiting.
    let pods = Api::<Pod>::namespaced(client.clone(), &ns);
    let deadline = Instant::now() + Duration::from_secs(120);
    let pod = loop {
        if let Some(pod) = the_pod(&pods, &selector).await
            && running(status_of(&pod, true, INIT))
        {
            break pod.metadata.name.unwrap_or_default();
        }
        if Instant::now() > deadline {
            let pod = the_pod(&pods, &selector).await.and_then(|p| p.metadata.name);
            fail(
                &client,
                &ns,
                pod.as_deref(),
                "no Pod of the Deployment ran its init container within 120s (refused by Pod \
                 Security `restricted`? image not pulled?)",
            )
            .await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let started = Instant::now();
    held(
        &client,
        &ns,
        &pod,
        HOLD,
        "the schema is AwaitingApproval (Ready=False)",
    )
    .await;
    eprintln!("wait-for-schema: Pod {pod} held for {HOLD:?} while Ready=False");

    // The spec moves on (a new artifact), and Ready=True names only the generation before: the
    // manager proved the old spec in sync, not this one. `kubectl wait` must keep waiting.
    let bumped = schemas
        .patch(
            SCHEMA,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"desired": {
                "ociRef": format!("oci://registry.example.com/shop/{SCHEMA}-schema:v43"),
            }}})),
        )
        .await
        .unwrap_or_else(|e| panic!("change the spec of PtahSchema {SCHEMA}: {e}"));
    let second = bumped.metadata.generation.unwrap_or_default();
    assert!(
        second > first,
        "a spec change did not raise the generation ({first} → {second})"
    );
    let resolving = "Resolve claimed";
    write_status(
        &schemas,
        json!({
            "observedGeneration": second,
            "phase": "Resolving",
            "conditions": [
                condition("Ready", true, "NoChanges", "a fresh plan reports no changes", first),
                condition("Reconciling", true, "Refreshing", resolving, second),
                condition("Stalled", false, "Refreshing", resolving, second),
            ],
        }),
    )
    .await;
    held(
        &client,
        &ns,
        &pod,
        STALE_HOLD,
        "Ready=True names an older generation than the spec's",
    )
    .await;
    eprintln!(
        "wait-for-schema: Pod {pod} held for {STALE_HOLD:?} while Ready named generation {first} of {second}"
    );

    // The manager proves the new generation in sync: the init container completes, the app starts.
    let insync = "a fresh plan reports no changes";
    write_status(
        &schemas,
        json!({
            "observedGeneration": second,
            "phase": "InSync",
            "conditions": [
                condition("Ready", true, "NoChanges", insync, second),
                condition("Reconciling", false, "NoChanges", insync, second),
                condition("Stalled", false, "NoChanges", insync, second),
            ],
        }),
    )
    .await;
    let ready_at = Instant::now();
    let deadline = ready_at + RELEASE;
    let live = loop {
        let live = pods
            .get(&pod)
            .await
            .unwrap_or_else(|e| panic!("get Pod {pod}: {e}"));
        if running(status_of(&live, false, APP)) {
            break live;
        }
        if Instant::now() > deadline {
            fail(
                &client,
                &ns,
                Some(&pod),
                &format!("the app container did not start within {RELEASE:?} of the schema becoming Ready"),
            )
            .await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    eprintln!(
        "wait-for-schema: app started {:.1}s after Ready=True (held {:.0}s in all)",
        ready_at.elapsed().as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    let init = status_of(&live, true, INIT).cloned();
    let terminated = init
        .as_ref()
        .and_then(|s| s.state.as_ref())
        .and_then(|s| s.terminated.as_ref());
    let log = init_log(&pods, &pod).await;
    if terminated.map(|t| t.exit_code) != Some(0) || init.as_ref().is_some_and(|s| s.restart_count != 0) {
        fail(
            &client,
            &ns,
            Some(&pod),
            &format!("the init container should have completed once, with exit code 0: {init:?}"),
        )
        .await;
    }
    if !log.contains("condition met") {
        fail(
            &client,
            &ns,
            Some(&pod),
            &format!("kubectl wait should report `condition met`; its log:\n{log}"),
        )
        .await;
    }

    // Only the init container holds a Kubernetes credential.
    let spec = live.spec.clone().unwrap_or_default();
    let token_mounts = |containers: &[k8s_openapi::api::core::v1::Container]| -> Vec<String> {
        containers
            .iter()
            .flat_map(|c| c.volume_mounts.iter().flatten().map(move |m| (c, m)))
            .filter(|(_, m)| m.mount_path.starts_with("/var/run/secrets/kubernetes.io"))
            .map(|(c, m)| format!("{} at {}", c.name, m.mount_path))
            .collect()
    };
    let app_tokens = token_mounts(&spec.containers);
    assert!(
        app_tokens.is_empty(),
        "the app container should hold no service-account token, but mounts {app_tokens:?}"
    );
    let init_tokens = token_mounts(spec.init_containers.as_deref().unwrap_or_default());
    assert_eq!(
        init_tokens.len(),
        1,
        "the init container should mount the service-account token once: {init_tokens:?}"
    );

    // The Deployment completes its rollout.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let live = deployments
            .get(&deployment_name)
            .await
            .unwrap_or_else(|e| panic!("get Deployment {deployment_name}: {e}"));
        if live.status.and_then(|s| s.available_replicas) == Some(1) {
            break;
        }
        if Instant::now() > deadline {
            fail(
                &client,
                &ns,
                Some(&pod),
                &format!("Deployment {deployment_name} has no available replica 60s after its Pod started"),
            )
            .await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    // The Role is minimal: the API server's authorizer answers for the ServiceAccount.
    let mut wrong = Vec::new();
    for check in checks() {
        let allowed = may(&client, &ns, &sa, &check).await;
        if allowed != check.allowed {
            wrong.push(format!(
                "  {} {}{}{} in {}: {} (expected {})",
                check.verb,
                check.resource,
                check.subresource.map(|s| format!("/{s}")).unwrap_or_default(),
                check.name.map(|n| format!(" {n}")).unwrap_or_default(),
                check.namespace.unwrap_or("the test namespace"),
                if allowed { "allowed" } else { "denied" },
                if check.allowed { "allowed" } else { "denied" },
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "ServiceAccount {sa} of the documented Role is not minimal or lacks what kubectl wait \
         needs (namespace {ns} is left for inspection):\n{}",
        wrong.join("\n")
    );

    let _ = Api::<Namespace>::all(client)
        .delete(&ns, &DeleteParams::default())
        .await;
}
