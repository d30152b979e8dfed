//! T3: the chart's ValidatingAdmissionPolicies hold the manager to operation Pods, on the real
//! kube-apiserver (`cargo xtask cluster up --tier api`), whatever the manager's code does.
//!
//! Every request is made as the identity it names (the manager's ServiceAccount, impersonated, or
//! the admin) and as a dry run. Each rule has a refused case, decided by that rule alone, and the
//! built Job of every operation and registry access is admitted. The test then weakens each policy
//! (drops a validation, its binding, widens its match) and requires the case that catches it to
//! flip: a rule no case depends on fails the test.

mod common;

use common::{ALL_OPS, EXECUTOR_IMAGE, RUNNER_IMAGE, access_variants, intent, intent_with};
use k8s_openapi::api::{
    batch::v1::Job,
    core::v1::{
        Capabilities, EnvFromSource, EnvVar, EnvVarSource, HostPathVolumeSource, Namespace,
        ObjectFieldSelector, Pod, PodSpec, SecretEnvSource, SecretKeySelector, SecretVolumeSource,
        ServiceAccount, Volume, VolumeMount,
    },
    rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject},
};
use kube::{
    Api, Client,
    api::{DeleteParams, Patch, PatchParams, PostParams},
};
use ptah_apitests::{
    admissionpolicy::{
        Verdict, Weakening, eventually, image_sets, impersonating, policy, remove, render, set, weakened,
    },
    client::{admin_client, namespace},
};
use ptah_dataplane::Operation;
use serde_json::{Value, json};

/// The label the test namespace carries, so the Pod policy's binding selects it alone.
const SELECTOR_LABEL: &str = "ptah-policy-test";

struct Fixture {
    admin: Client,
    manager: Client,
    ns: String,
    manager_sa: String,
    jobs_policy: String,
    pods_policy: String,
}

fn dry_run() -> PostParams {
    PostParams {
        dry_run: true,
        ..PostParams::default()
    }
}

/// The built Job of `op`, placed in `ns` without an owner (the owner's kind is not the policy's
/// concern, and a blocking owner reference would need RBAC on it).
fn job(op: Operation, ns: &str) -> Job {
    let mut intent = intent(op);
    intent.namespace = ns.to_owned();
    let mut job = ptah_workload::build(&intent).expect("build");
    job.metadata.owner_references = None;
    job
}

fn spec(job: &mut Job) -> &mut PodSpec {
    job.spec
        .as_mut()
        .and_then(|s| s.template.spec.as_mut())
        .expect("pod spec")
}

fn container<'a>(job: &'a mut Job, name: &str) -> &'a mut k8s_openapi::api::core::v1::Container {
    let spec = spec(job);
    spec.containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten())
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no container {name}"))
}

fn secret_env(name: &str, secret: &str) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value: None,
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: secret.to_owned(),
                key: "url".to_owned(),
                optional: None,
            }),
            ..EnvVarSource::default()
        }),
    }
}

/// A refused case: what it breaks, the operation whose Job it starts from, and the text of the
/// one validation that must refuse it.
struct Case {
    what: &'static str,
    op: Operation,
    rule: &'static str,
    edit: fn(&mut Job, &Fixture),
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            what: "a Pod template without its operation-id label",
            op: Operation::Plan,
            rule: "carries the operation labels",
            edit: |j, _| {
                let labels = j
                    .spec
                    .as_mut()
                    .and_then(|s| s.template.metadata.as_mut())
                    .and_then(|m| m.labels.as_mut());
                labels.expect("labels").remove("operator.ptah.run/operation-id");
            },
        },
        Case {
            what: "a suspended Job",
            op: Operation::Observe,
            rule: "not suspended",
            edit: |j, _| j.spec.as_mut().expect("spec").suspend = Some(true),
        },
        Case {
            what: "another image in the main container",
            op: Operation::Apply,
            rule: "pins by digest",
            edit: |j, _| {
                container(j, "ptah").image = Some(format!("evil.example/tool@sha256:{}", "e".repeat(64)))
            },
        },
        Case {
            what: "a mounted ServiceAccount token",
            op: Operation::Plan,
            rule: "mounts no ServiceAccount token",
            edit: |j, _| spec(j).automount_service_account_token = Some(true),
        },
        Case {
            what: "the manager's own ServiceAccount",
            op: Operation::Observe,
            rule: "mounts no ServiceAccount token",
            edit: |j, f| spec(j).service_account_name = Some(f.manager_sa.clone()),
        },
        Case {
            what: "envFrom a whole Secret",
            op: Operation::Observe,
            rule: "takes no envFrom",
            edit: |j, _| {
                container(j, "ptah").env_from = Some(vec![EnvFromSource {
                    secret_ref: Some(SecretEnvSource {
                        name: "kube-secrets".to_owned(),
                        optional: None,
                    }),
                    ..EnvFromSource::default()
                }])
            },
        },
        Case {
            what: "another Secret as a volume",
            op: Operation::Observe,
            rule: "volumes are emptyDirs",
            edit: |j, _| {
                spec(j).volumes.get_or_insert_with(Vec::new).push(Volume {
                    name: "stolen".to_owned(),
                    secret: Some(SecretVolumeSource {
                        secret_name: Some("other-team-db".to_owned()),
                        ..SecretVolumeSource::default()
                    }),
                    ..Volume::default()
                })
            },
        },
        Case {
            what: "a hostPath volume",
            op: Operation::Verify,
            rule: "volumes are emptyDirs",
            edit: |j, _| {
                spec(j).volumes.get_or_insert_with(Vec::new).push(Volume {
                    name: "host".to_owned(),
                    host_path: Some(HostPathVolumeSource {
                        path: "/etc".to_owned(),
                        type_: None,
                    }),
                    ..Volume::default()
                })
            },
        },
        Case {
            what: "a variable from the downward API",
            op: Operation::Observe,
            rule: "from values or from secretKeyRef",
            edit: |j, _| {
                container(j, "ptah")
                    .env
                    .get_or_insert_with(Vec::new)
                    .push(EnvVar {
                        name: "NODE".to_owned(),
                        value: None,
                        value_from: Some(EnvVarSource {
                            field_ref: Some(ObjectFieldSelector {
                                field_path: "spec.nodeName".to_owned(),
                                api_version: None,
                            }),
                            ..EnvVarSource::default()
                        }),
                    })
            },
        },
        Case {
            what: "the database URL in a fetch container",
            op: Operation::Plan,
            rule: "Secrets reach only the containers",
            edit: |j, _| {
                container(j, "fetch-schema")
                    .env
                    .get_or_insert_with(Vec::new)
                    .push(secret_env("PTAH_DB_URL", "orders-db"))
            },
        },
        Case {
            what: "another Secret key in the main container",
            op: Operation::Apply,
            rule: "Secrets reach only the containers",
            edit: |j, _| {
                container(j, "ptah")
                    .env
                    .get_or_insert_with(Vec::new)
                    .push(secret_env("STOLEN", "other-team-db"))
            },
        },
        Case {
            what: "the registry Docker config mounted beside the database URL",
            op: Operation::Plan,
            rule: "Docker config Secret is mounted only",
            edit: |j, _| {
                container(j, "ptah")
                    .volume_mounts
                    .get_or_insert_with(Vec::new)
                    .push(VolumeMount {
                        name: "registry-docker-config".to_owned(),
                        mount_path: "/registry".to_owned(),
                        read_only: Some(true),
                        ..VolumeMount::default()
                    })
            },
        },
        Case {
            what: "the host network",
            op: Operation::Resolve,
            rule: "shares no host namespace",
            edit: |j, _| spec(j).host_network = Some(true),
        },
        Case {
            what: "an added capability",
            op: Operation::MigrationApply,
            rule: "Pod Security restricted",
            edit: |j, _| {
                let sc = container(j, "ptah")
                    .security_context
                    .get_or_insert_with(Default::default);
                sc.capabilities = Some(Capabilities {
                    add: Some(vec!["NET_ADMIN".to_owned()]),
                    drop: Some(vec!["ALL".to_owned()]),
                });
            },
        },
    ]
}

fn bad_job(case: &Case, f: &Fixture) -> Job {
    let mut job = job(case.op, &f.ns);
    (case.edit)(&mut job, f);
    job
}

async fn create_job(client: &Client, ns: &str, job: &Job) -> Verdict {
    Verdict::of(
        Api::<Job>::namespaced(client.clone(), ns)
            .create(&dry_run(), job)
            .await,
    )
}

/// The Pod the Job controller would create from `job`'s template.
fn pod_of(job: &Job) -> Pod {
    let template = job.spec.as_ref().map(|s| s.template.clone()).expect("template");
    let mut metadata = template.metadata.unwrap_or_default();
    metadata.name = Some(format!("{}-abcde", job.metadata.name.as_deref().unwrap_or("job")));
    metadata.namespace = job.metadata.namespace.clone();
    let mut spec = template.spec.expect("pod spec");
    // The priority class is the cluster's business, not the policy's; the test does not create one.
    spec.priority_class_name = None;
    Pod {
        metadata,
        spec: Some(spec),
        status: None,
    }
}

async fn create_pod(client: &Client, ns: &str, pod: &Pod) -> Verdict {
    Verdict::of(
        Api::<Pod>::namespaced(client.clone(), ns)
            .create(&dry_run(), pod)
            .await,
    )
}

async fn setup(admin: &Client) -> (Fixture, Vec<Value>) {
    let ns = namespace(admin, "policies").await;
    // Pod Security `restricted`, enforced, and the label the Pod policy binding selects.
    let label = json!({"metadata": {"labels": {
        "pod-security.kubernetes.io/enforce": "restricted",
        SELECTOR_LABEL: ns,
    }}});
    Api::<Namespace>::all(admin.clone())
        .patch(&ns, &PatchParams::default(), &Patch::Merge(&label))
        .await
        .expect("label the namespace");
    let mut sets = image_sets(EXECUTOR_IMAGE, RUNNER_IMAGE);
    sets.push(format!(
        "webhooks.namespaceSelector.matchLabels.{SELECTOR_LABEL}={ns}"
    ));
    // The test namespace is the release namespace too, so the rule on the release's own
    // ServiceAccounts has something to catch.
    let docs = render(&ns, &ns, &sets);
    let fullname = format!("{ns}-ptah-operator");
    let manager_sa = format!("{fullname}-manager");
    let params = PostParams::default();
    let sa = serde_json::from_value::<ServiceAccount>(json!({"metadata": {"name": "ptah-operations"}}))
        .expect("sa");
    Api::<ServiceAccount>::namespaced(admin.clone(), &ns)
        .create(&params, &sa)
        .await
        .expect("create the operations ServiceAccount");
    let role = Role {
        metadata: kube::api::ObjectMeta {
            name: Some("manager-jobs".to_owned()),
            ..Default::default()
        },
        rules: Some(vec![PolicyRule {
            api_groups: Some(vec!["batch".to_owned()]),
            resources: Some(vec!["jobs".to_owned()]),
            verbs: vec!["create".to_owned()],
            ..PolicyRule::default()
        }]),
    };
    Api::<Role>::namespaced(admin.clone(), &ns)
        .create(&params, &role)
        .await
        .expect("create role");
    let binding = RoleBinding {
        metadata: kube::api::ObjectMeta {
            name: Some("manager-jobs".to_owned()),
            ..Default::default()
        },
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".to_owned(),
            kind: "Role".to_owned(),
            name: "manager-jobs".to_owned(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".to_owned(),
            name: manager_sa.clone(),
            namespace: Some(ns.clone()),
            ..Subject::default()
        }]),
    };
    Api::<RoleBinding>::namespaced(admin.clone(), &ns)
        .create(&params, &binding)
        .await
        .expect("create role binding");
    let manager = impersonating(
        &format!("system:serviceaccount:{ns}:{manager_sa}"),
        &[
            "system:serviceaccounts",
            &format!("system:serviceaccounts:{ns}"),
            "system:authenticated",
        ],
    )
    .await;
    let fixture = Fixture {
        admin: admin.clone(),
        manager,
        manager_sa,
        jobs_policy: format!("{fullname}-operation-jobs"),
        pods_policy: format!("{fullname}-operation-pods"),
        ns,
    };
    (fixture, docs)
}

/// A Pod that is not an operation Pod: the Pod policy must leave it alone.
fn foreign_pod(ns: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": "unrelated", "namespace": ns},
        "spec": {
            "automountServiceAccountToken": false,
            "serviceAccountName": "ptah-operations",
            "securityContext": {"runAsNonRoot": true, "runAsUser": 1000, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{
                "name": "app",
                "image": "registry.example/app:1",
                "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}},
            }],
        },
    }))
    .expect("pod")
}

#[tokio::test]
async fn the_api_server_holds_the_manager_to_operation_pods() {
    let admin = admin_client().await;
    let (f, docs) = setup(&admin).await;
    set(&admin, &docs, &docs).await;
    let cases = cases();

    // Policies reach admission a moment after they are written.
    let first = bad_job(&cases[2], &f);
    assert!(
        eventually(|| async { create_job(&f.manager, &f.ns, &first).await != Verdict::Admitted }).await,
        "the Job policy never took effect"
    );

    for case in &cases {
        let bad = bad_job(case, &f);
        let verdict = create_job(&f.manager, &f.ns, &bad).await;
        assert!(verdict.refused_for(case.rule), "{}: {verdict:?}", case.what);
        // The policy binds the manager alone: the same Job from the admin is none of its business.
        assert_eq!(
            create_job(&f.admin, &f.ns, &bad).await,
            Verdict::Admitted,
            "{} as admin",
            case.what
        );
    }
    for op in ALL_OPS {
        for access in access_variants() {
            let mut intent = intent_with(op, access);
            intent.namespace = f.ns.clone();
            let mut built = ptah_workload::build(&intent).expect("build");
            built.metadata.owner_references = None;
            let verdict = create_job(&f.manager, &f.ns, &built).await;
            assert_eq!(verdict, Verdict::Admitted, "the built {op} Job");
        }
        // The Pod the Job controller makes of it passes Pod Security `restricted` and the Pod policy.
        let pod = pod_of(&job(op, &f.ns));
        assert_eq!(
            create_pod(&f.admin, &f.ns, &pod).await,
            Verdict::Admitted,
            "the {op} Pod"
        );
    }
    let mut rogue = pod_of(&job(Operation::Observe, &f.ns));
    if let Some(c) = rogue.spec.as_mut().and_then(|s| s.containers.first_mut()) {
        c.image = Some(format!("evil.example/tool@sha256:{}", "e".repeat(64)));
    }
    let pod_verdict = create_pod(&f.admin, &f.ns, &rogue).await;
    assert!(pod_verdict.refused_for("pins by digest"), "{pod_verdict:?}");
    assert_eq!(
        create_pod(&f.admin, &f.ns, &foreign_pod(&f.ns)).await,
        Verdict::Admitted
    );

    mutation_check(&f, &docs, &cases, &rogue).await;
    remove(&admin, &docs).await;
    let _ = Api::<Namespace>::all(admin.clone())
        .delete(&f.ns, &DeleteParams::default())
        .await;
}

/// Weakens each policy in turn and requires the case it decides to flip.
async fn mutation_check(f: &Fixture, docs: &[Value], cases: &[Case], rogue: &Pod) {
    let jobs = policy(docs, &f.jobs_policy);
    let messages: Vec<String> = jobs["spec"]["validations"]
        .as_array()
        .expect("validations")
        .iter()
        .map(|v| v["message"].as_str().unwrap_or_default().to_owned())
        .collect();
    let mut survivors = Vec::new();
    for message in &messages {
        let case = cases
            .iter()
            .find(|c| message.contains(c.rule))
            .unwrap_or_else(|| panic!("no case for the rule {message:?}"));
        let bad = bad_job(case, f);
        let weak = weakened(
            docs,
            &f.jobs_policy,
            &Weakening::DropValidation(case.rule.to_owned()),
        );
        set(&f.admin, docs, &weak).await;
        let flipped =
            eventually(|| async { create_job(&f.manager, &f.ns, &bad).await == Verdict::Admitted }).await;
        if !flipped {
            survivors.push(format!("dropping {message:?}"));
        }
        restore(f, docs, &bad).await;
    }

    let image = bad_job(&cases[2], f);
    set(
        &f.admin,
        docs,
        &weakened(docs, &f.jobs_policy, &Weakening::DropBinding),
    )
    .await;
    if !eventually(|| async { create_job(&f.manager, &f.ns, &image).await == Verdict::Admitted }).await {
        survivors.push("the Job policy without its binding".to_owned());
    }
    restore(f, docs, &image).await;

    set(
        &f.admin,
        docs,
        &weakened(docs, &f.jobs_policy, &Weakening::DropMatchConditions),
    )
    .await;
    if !eventually(|| async { create_job(&f.admin, &f.ns, &image).await != Verdict::Admitted }).await {
        survivors.push("the Job policy matching every requester".to_owned());
    }
    restore(f, docs, &image).await;

    set(
        &f.admin,
        docs,
        &weakened(docs, &f.pods_policy, &Weakening::DropBinding),
    )
    .await;
    if !eventually(|| async { create_pod(&f.admin, &f.ns, rogue).await == Verdict::Admitted }).await {
        survivors.push("the Pod policy without its binding".to_owned());
    }
    set(&f.admin, docs, docs).await;
    assert!(eventually(|| async { create_pod(&f.admin, &f.ns, rogue).await != Verdict::Admitted }).await);

    let foreign = foreign_pod(&f.ns);
    set(
        &f.admin,
        docs,
        &weakened(docs, &f.pods_policy, &Weakening::DropObjectSelector),
    )
    .await;
    if !eventually(|| async { create_pod(&f.admin, &f.ns, &foreign).await != Verdict::Admitted }).await {
        survivors.push("the Pod policy matching every Pod".to_owned());
    }
    set(&f.admin, docs, docs).await;
    assert!(eventually(|| async { create_pod(&f.admin, &f.ns, &foreign).await == Verdict::Admitted }).await);

    assert!(
        survivors.is_empty(),
        "weakened policies no test noticed: {survivors:#?}"
    );
}

/// Puts the policies back and waits until `bad` is refused again.
async fn restore(f: &Fixture, docs: &[Value], bad: &Job) {
    set(&f.admin, docs, docs).await;
    assert!(
        eventually(|| async { create_job(&f.manager, &f.ns, bad).await != Verdict::Admitted }).await,
        "the restored policies never took effect"
    );
}
