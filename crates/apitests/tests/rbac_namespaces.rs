//! T3: `rbac.namespaces` on the real kube-apiserver (`cargo xtask cluster up --tier api`): the
//! chart's manager RBAC, applied as rendered, lets the manager's ServiceAccount create Jobs and
//! read Pod logs in the listed namespaces and nowhere else, while it still reads Jobs everywhere.
//! Each answer comes from the API server's own authorizer (SubjectAccessReview).

use k8s_openapi::api::{
    authorization::v1::{ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec},
    core::v1::Namespace,
    rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding},
};
use kube::{
    Api, Client,
    api::{DeleteParams, Patch, PatchParams, PostParams},
};
use ptah_apitests::{
    admissionpolicy::{eventually, image_sets, render_template},
    client::{FIXTURE_MANAGER, admin_client, namespace},
};
use serde_json::Value;

fn render(release: &str, release_ns: &str, listed: &[&str]) -> Vec<Value> {
    let digest = format!("sha256:{}", "5".repeat(64));
    let mut sets = image_sets(
        &format!("registry.example/executor@{digest}"),
        &format!("registry.example/runner@{digest}"),
    );
    sets.push(format!("rbac.namespaces={{{}}}", listed.join(",")));
    render_template(release, release_ns, "templates/rbac.yaml", &sets)
        .unwrap_or_else(|e| panic!("helm template: {e}"))
}

async fn apply(client: &Client, doc: &Value) {
    let name = doc["metadata"]["name"].as_str().expect("name");
    let ns = doc["metadata"]["namespace"].as_str();
    let params = PatchParams::apply(FIXTURE_MANAGER).force();
    let result = match (doc["kind"].as_str().expect("kind"), ns) {
        ("ClusterRole", _) => Api::<ClusterRole>::all(client.clone())
            .patch(name, &params, &Patch::Apply(doc))
            .await
            .map(drop),
        ("ClusterRoleBinding", _) => Api::<ClusterRoleBinding>::all(client.clone())
            .patch(name, &params, &Patch::Apply(doc))
            .await
            .map(drop),
        ("Role", Some(ns)) => Api::<Role>::namespaced(client.clone(), ns)
            .patch(name, &params, &Patch::Apply(doc))
            .await
            .map(drop),
        ("RoleBinding", Some(ns)) => Api::<RoleBinding>::namespaced(client.clone(), ns)
            .patch(name, &params, &Patch::Apply(doc))
            .await
            .map(drop),
        (kind, _) => panic!("unexpected {kind} in rbac.yaml"),
    };
    result.unwrap_or_else(|e| panic!("apply {name}: {e}"));
}

async fn allowed(
    client: &Client,
    user: &str,
    ns: &str,
    verb: &str,
    resource: &str,
    sub: Option<&str>,
) -> bool {
    let group = if resource == "jobs" { "batch" } else { "" };
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(user.to_owned()),
            groups: Some(vec![
                "system:serviceaccounts".to_owned(),
                "system:authenticated".to_owned(),
            ]),
            resource_attributes: Some(ResourceAttributes {
                namespace: Some(ns.to_owned()),
                verb: Some(verb.to_owned()),
                group: Some(group.to_owned()),
                resource: Some(resource.to_owned()),
                subresource: sub.map(str::to_owned),
                ..ResourceAttributes::default()
            }),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    };
    let answer = Api::<SubjectAccessReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await
        .expect("subject access review");
    answer.status.is_some_and(|s| s.allowed)
}

#[tokio::test]
async fn the_manager_creates_jobs_and_reads_logs_only_in_listed_namespaces() {
    let admin = admin_client().await;
    let release_ns = namespace(&admin, "rbacns").await;
    let listed = namespace(&admin, "rbacns-team").await;
    let other = namespace(&admin, "rbacns-other").await;
    let docs = render(&release_ns, &release_ns, &[&listed]);
    for doc in &docs {
        apply(&admin, doc).await;
    }
    let user = format!("system:serviceaccount:{release_ns}:{release_ns}-ptah-operator-manager");

    // The authorizer reads RBAC from an informer: a grant just applied shows up a moment later,
    // so the grants are awaited first and the refusals asked once they are visible.
    assert!(
        eventually(|| allowed(&admin, &user, &listed, "create", "jobs", None)).await,
        "create Jobs where listed"
    );
    assert!(
        eventually(|| allowed(&admin, &user, &listed, "get", "pods", Some("log"))).await,
        "read logs where listed"
    );
    assert!(
        !allowed(&admin, &user, &other, "create", "jobs", None).await,
        "no Jobs elsewhere"
    );
    assert!(
        !allowed(&admin, &user, &other, "get", "pods", Some("log")).await,
        "no logs elsewhere"
    );
    for ns in [&listed, &other] {
        assert!(
            eventually(|| allowed(&admin, &user, ns, "watch", "jobs", None)).await,
            "the Job watch spans {ns}"
        );
        assert!(
            !allowed(&admin, &user, ns, "get", "secrets", None).await,
            "never Secrets"
        );
    }

    for doc in docs
        .iter()
        .filter(|d| d["kind"] == "ClusterRole" || d["kind"] == "ClusterRoleBinding")
    {
        let name = doc["metadata"]["name"].as_str().unwrap_or_default();
        let dp = DeleteParams::default();
        let _ = if doc["kind"] == "ClusterRole" {
            Api::<ClusterRole>::all(admin.clone())
                .delete(name, &dp)
                .await
                .map(drop)
        } else {
            Api::<ClusterRoleBinding>::all(admin.clone())
                .delete(name, &dp)
                .await
                .map(drop)
        };
    }
    for ns in [release_ns, listed, other] {
        let _ = Api::<Namespace>::all(admin.clone())
            .delete(&ns, &DeleteParams::default())
            .await;
    }
}
