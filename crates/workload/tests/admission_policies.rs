//! T3: the chart's ValidatingAdmissionPolicies hold the manager to operation Pods, on the real
//! kube-apiserver (`cargo xtask cluster up --tier api`), whatever the manager's code does.
//!
//! Every request is made as the identity it names (the manager's ServiceAccount, impersonated, or
//! the admin) and as a dry run. The Jobs are owned by real PtahSchemas and PtahMigrations, whose
//! specs the job-secrets policies compare every Secret reference with. Each rule has a refused
//! case, decided by that rule alone, and the built Job of every operation and registry access is
//! admitted. The test then weakens each policy (drops the validations a case names, a binding,
//! widens a match, admits a missing owner) and requires the case that catches it to flip: a rule
//! no case depends on fails the test.

mod common;
mod policies;

use common::{ALL_OPS, EXECUTOR_IMAGE, RUNNER_IMAGE, access_variants};
use k8s_openapi::api::{
    batch::v1::Job,
    core::v1::{Namespace, Pod, ServiceAccount},
    rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject},
};
use kube::{
    Api, Client,
    api::{DeleteParams, PostParams},
};
use policies::cases::{Case, Context, Policy, container, owner_cases};
use policies::job_cases::job_cases;
use policies::owners::{Auth, Family, Owners, label_namespace};
use ptah_apitests::{
    admissionpolicy::{Verdict, eventually, image_sets, impersonating, policy, remove, render, set},
    client::{admin_client, install_crds, namespace},
};
use ptah_dataplane::Operation;
use ptah_workload::{containers as c, volumes as v};
use serde_json::{Value, json};

/// The label the test namespace carries, so the namespace-scoped bindings select it alone.
const SELECTOR_LABEL: &str = "ptah-policy-test";

struct Fixture {
    admin: Client,
    manager: Client,
    ns: String,
    /// A namespace holding no ptah object: Jobs there are none of the job-secrets policies' business.
    empty_ns: String,
    cx: Context,
    owners: Owners,
    release: String,
}

impl Fixture {
    fn policy_name(&self, p: Policy) -> String {
        let suffix = match p {
            Policy::Jobs => "operation-jobs",
            Policy::SchemaSecrets => "schema-job-secrets",
            Policy::MigrationSecrets => "migration-job-secrets",
        };
        format!("{}-ptah-operator-{suffix}", self.release)
    }

    fn pods_policy(&self) -> String {
        format!("{}-ptah-operator-operation-pods", self.release)
    }

    fn job(&self, family: Family, op: Operation, access: ptah_workload::SourceAccess) -> Job {
        self.owners.job(&self.ns, family, op, access)
    }

    fn bad_job(&self, case: &Case) -> Job {
        let mut job = self.job(case.family, case.op, case.auth.access());
        (case.edit)(&mut job, &self.cx);
        job
    }
}

/// An ordinary Job of someone else, in `ns`.
fn ordinary_job(ns: &str) -> Job {
    serde_json::from_value(json!({
        "metadata": {"name": "ordinary", "namespace": ns},
        "spec": {"template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "app", "image": "registry.example/app:1", "command": ["/bin/true"]}],
        }}},
    }))
    .expect("job")
}

fn dry_run() -> PostParams {
    PostParams {
        dry_run: true,
        ..PostParams::default()
    }
}

async fn create_job(client: &Client, job: &Job) -> Verdict {
    let ns = job.metadata.namespace.clone().unwrap_or_default();
    Verdict::of(
        Api::<Job>::namespaced(client.clone(), &ns)
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

/// Lets the manager's ServiceAccount create Jobs in `ns`.
async fn grant_jobs(admin: &Client, ns: &str, sa_ns: &str, sa: &str) {
    let params = PostParams::default();
    let role: Role = serde_json::from_value(json!({"metadata": {"name": "manager-jobs"}})).expect("role");
    let role = Role {
        rules: Some(vec![PolicyRule {
            api_groups: Some(vec!["batch".to_owned()]),
            resources: Some(vec!["jobs".to_owned()]),
            verbs: vec!["create".to_owned()],
            ..PolicyRule::default()
        }]),
        ..role
    };
    Api::<Role>::namespaced(admin.clone(), ns)
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
            name: sa.to_owned(),
            namespace: Some(sa_ns.to_owned()),
            ..Subject::default()
        }]),
    };
    Api::<RoleBinding>::namespaced(admin.clone(), ns)
        .create(&params, &binding)
        .await
        .expect("create role binding");
}

async fn setup(admin: &Client) -> (Fixture, Vec<Value>) {
    install_crds(admin).await;
    let ns = namespace(admin, "policies").await;
    let empty_ns = namespace(admin, "policies-empty").await;
    // Pod Security `restricted`, enforced, and the label the Pod policy binding selects.
    label_namespace(
        admin,
        &ns,
        json!({"pod-security.kubernetes.io/enforce": "restricted", SELECTOR_LABEL: ns}),
    )
    .await;
    let mut sets = image_sets(EXECUTOR_IMAGE, RUNNER_IMAGE);
    sets.push(format!(
        "webhooks.namespaceSelector.matchLabels.{SELECTOR_LABEL}={ns}"
    ));
    // The test namespace is the release namespace too, so the rule on the release's own
    // ServiceAccounts has something to catch.
    let docs = render(&ns, &ns, &sets);
    let manager_sa = format!("{ns}-ptah-operator-manager");
    let sa = serde_json::from_value::<ServiceAccount>(json!({"metadata": {"name": "ptah-operations"}}))
        .expect("sa");
    Api::<ServiceAccount>::namespaced(admin.clone(), &ns)
        .create(&PostParams::default(), &sa)
        .await
        .expect("create the operations ServiceAccount");
    grant_jobs(admin, &ns, &ns, &manager_sa).await;
    grant_jobs(admin, &empty_ns, &ns, &manager_sa).await;
    let manager = impersonating(
        &format!("system:serviceaccount:{ns}:{manager_sa}"),
        &[
            "system:serviceaccounts",
            &format!("system:serviceaccounts:{ns}"),
            "system:authenticated",
        ],
    )
    .await;
    let owners = Owners::create(admin, &ns).await;
    let fixture = Fixture {
        admin: admin.clone(),
        manager,
        release: ns.clone(),
        ns,
        empty_ns,
        cx: Context { manager_sa },
        owners,
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

fn all_cases() -> Vec<Case> {
    let mut cases = job_cases();
    cases.extend(owner_cases(Family::Schema));
    cases.extend(owner_cases(Family::Migration));
    cases
}

fn refused_by(verdict: &Verdict, case: &Case) -> bool {
    case.rules.iter().any(|(_, rule)| verdict.refused_for(rule))
}

#[tokio::test]
async fn the_api_server_holds_the_manager_to_operation_pods() {
    let admin = admin_client().await;
    let (f, docs) = setup(&admin).await;
    set(&admin, &docs, &docs).await;
    let cases = all_cases();

    // Policies (and the owners they read as params) reach admission a moment after they are
    // written: every verdict below is awaited.
    for case in &cases {
        let bad = f.bad_job(case);
        let refused = eventually(|| async { refused_by(&create_job(&f.manager, &bad).await, case) }).await;
        assert!(refused, "{}: {:?}", case.what, create_job(&f.manager, &bad).await);
        // The policies bind the manager alone: the same Job from the admin is none of their business.
        assert_eq!(
            create_job(&f.admin, &bad).await,
            Verdict::Admitted,
            "{} as admin",
            case.what
        );
    }
    for op in ALL_OPS {
        // A PtahMigration resolves and verifies its artifact too.
        let mut families = vec![Family::of(op)];
        if matches!(op, Operation::Resolve | Operation::Verify) {
            families.push(Family::Migration);
        }
        for family in families {
            for access in access_variants() {
                let built = f.job(family, op, access.clone());
                let admitted =
                    eventually(|| async { create_job(&f.manager, &built).await == Verdict::Admitted }).await;
                assert!(
                    admitted,
                    "the built {op} Job of a {family:?} with {access:?}: {:?}",
                    create_job(&f.manager, &built).await
                );
            }
        }
        // The Pod the Job controller makes of it passes Pod Security `restricted` and the Pod policy.
        let pod = pod_of(&f.job(Family::of(op), op, Auth::Environment.access()));
        assert_eq!(
            create_pod(&f.admin, &f.ns, &pod).await,
            Verdict::Admitted,
            "the {op} Pod"
        );
    }
    // Durable result delivery: the runner learns its own Pod's name and UID from the downward
    // API, and the ticket comes from a ConfigMap; the policies admit exactly that, and refuse a
    // downward-API variable that reads anything else.
    for op in ALL_OPS {
        let delivery = ptah_workload::ResultDelivery {
            config_map: "orders-ticket".to_owned(),
            endpoint: "10.96.0.20:8444".to_owned(),
            server_name: "ptah-operator-webhook.ptah-system.svc".to_owned(),
        };
        let durable = f.owners.job_delivering(
            &f.ns,
            Family::of(op),
            op,
            Auth::Environment.access(),
            Some(delivery),
        );
        let admitted =
            eventually(|| async { create_job(&f.manager, &durable).await == Verdict::Admitted }).await;
        assert!(
            admitted,
            "the durable {op} Job: {:?}",
            create_job(&f.manager, &durable).await
        );
        assert_eq!(
            create_pod(&f.admin, &f.ns, &pod_of(&durable)).await,
            Verdict::Admitted,
            "the durable {op} Pod"
        );
        let mut prying = pod_of(&durable);
        let runner = prying
            .spec
            .as_mut()
            .and_then(|s| s.containers.first_mut())
            .expect("the runner");
        for var in runner.env.iter_mut().flatten() {
            if var.name == ptah_dataplane::env::POD_NAME
                && let Some(field) = var.value_from.as_mut().and_then(|v| v.field_ref.as_mut())
            {
                field.field_path = "spec.serviceAccountName".to_owned();
            }
        }
        let verdict = create_pod(&f.admin, &f.ns, &prying).await;
        assert!(
            verdict.refused_for("only the runner learns its own Pod's name and UID"),
            "{verdict:?}"
        );
    }
    // The job-secrets policies look their params up before their match conditions: a Job of a
    // namespace without ptah objects must still be admitted (the test flips it below).
    assert_eq!(
        create_job(&f.admin, &ordinary_job(&f.empty_ns)).await,
        Verdict::Admitted,
        "an ordinary Job where no ptah object lives"
    );
    let mut rogue = pod_of(&f.job(Family::Schema, Operation::Observe, Auth::Environment.access()));
    if let Some(c) = rogue.spec.as_mut().and_then(|s| s.containers.first_mut()) {
        c.image = Some(format!("evil.example/tool@sha256:{}", "e".repeat(64)));
    }
    let pod_verdict = create_pod(&f.admin, &f.ns, &rogue).await;
    assert!(pod_verdict.refused_for("pins by digest"), "{pod_verdict:?}");
    assert_eq!(
        create_pod(&f.admin, &f.ns, &foreign_pod(&f.ns)).await,
        Verdict::Admitted
    );

    policies::weakening::mutation_check(&f, &docs, &cases, &rogue).await;
    remove(&admin, &docs).await;
    for ns in [&f.ns, &f.empty_ns] {
        let _ = Api::<Namespace>::all(admin.clone())
            .delete(ns, &DeleteParams::default())
            .await;
    }
}

/// The literals the policies fix (commands, arguments, container and volume names) are the
/// workload's constants; the T3 test above proves the built Jobs pass, this names a drift fast.
#[test]
fn the_policy_literals_are_the_workload_constants() {
    let docs = render("literals", "literals", &image_sets(EXECUTOR_IMAGE, RUNNER_IMAGE));
    let jobs = policy(&docs, "literals-ptah-operator-operation-jobs");
    let variable = |name: &str| -> String {
        jobs["spec"]["variables"]
            .as_array()
            .and_then(|vars| vars.iter().find(|v| v["name"] == name))
            .and_then(|v| v["expression"].as_str())
            .unwrap_or_else(|| panic!("no variable {name}"))
            .to_owned()
    };
    let list = |items: &[&str]| {
        let quoted: Vec<String> = items.iter().map(|i| format!("'{i}'")).collect();
        format!("[{}]", quoted.join(", "))
    };
    let bytes = |n: u64| n.to_string();
    assert_eq!(variable("installedRunnerCommand"), list(&[v::RUNNER_PATH]));
    assert_eq!(variable("imageRunnerCommand"), list(&[v::IMAGE_RUNNER_PATH]));
    assert_eq!(variable("ptahCommand"), list(&[v::IMAGE_PTAH_PATH]));
    assert_eq!(
        variable("installRunnerArgs"),
        list(&["--install-to", v::RUNNER_PATH])
    );
    let max_plan = ptah_dataplane::MAX_PLAN_BYTES.to_string();
    assert_eq!(
        variable("runnerArgs"),
        list(&[
            "--operation",
            "OP",
            "--ptah-binary",
            v::IMAGE_PTAH_PATH,
            "--work-dir",
            v::WORK_DIR,
            "--max-plan-bytes",
            &max_plan,
        ])
        .replace("'OP'", "string(variables.operation)")
    );
    let (total, file, manifest) = (
        bytes(v::FETCH_MAX_TOTAL_BYTES),
        bytes(v::FETCH_MAX_FILE_BYTES),
        bytes(v::FETCH_MAX_MANIFEST_BYTES),
    );
    assert_eq!(
        variable("fetchLimits"),
        list(&[
            "--format",
            "json",
            "--max-total-bytes",
            &total,
            "--max-file-bytes",
            &file,
            "--max-manifest-bytes",
            &manifest,
        ])
    );
    assert_eq!(
        variable("fetchSchemaArgs"),
        format!(
            "{} + variables.fetchLimits",
            list(&["oci", "pull", "--kind", "schema", "--out", v::SCHEMA_DIR])
        )
    );
    assert_eq!(
        variable("fetchMigrationsArgs"),
        format!(
            "{} + variables.fetchLimits",
            list(&["migrations", "pull", "--out", v::MIGRATIONS_DIR])
        )
    );
    let text = jobs.to_string();
    for name in [
        c::MAIN_CONTAINER,
        c::INSTALL_RUNNER_CONTAINER,
        c::FETCH_SCHEMA_CONTAINER,
        c::FETCH_MIGRATIONS_CONTAINER,
        v::DOCKER_CONFIG_VOLUME,
    ] {
        assert!(text.contains(&format!("'{name}'")), "the policy names {name}");
    }
    // The built Job holds what the literals describe (a change of the builder alone fails here).
    let job = common::intent(Operation::Plan);
    let mut job = ptah_workload::build(&job).expect("build");
    let fetch = container(&mut job, c::FETCH_SCHEMA_CONTAINER);
    assert_eq!(fetch.command, Some(vec![v::IMAGE_PTAH_PATH.to_owned()]));
    let args = fetch.args.clone().unwrap_or_default();
    assert_eq!(
        &args[..6],
        ["oci", "pull", "--kind", "schema", "--out", v::SCHEMA_DIR]
    );
    assert_eq!(args[args.len() - 2], "--");
}
