//! The chart's release-lifecycle hooks (ptah-crd-manager), rendered by the real helm: which Helm
//! events run which command, the least RBAC of each, and the CRDs living outside `crds/`.

mod support;

use serde_json::Value;
use support::{chart, component, grants, named, objects, pinned, render, strings};

const PREFIX: &str = "ptah-ptah-operator-crd-manager";

fn rendered(extra: &[&str]) -> Vec<Value> {
    objects(&render(extra).unwrap_or_else(|e| panic!("chart renders: {e}")))
}

fn hook(docs: &[Value], name: &str) -> Vec<Value> {
    component(docs, &format!("{name}-hook"))
}

fn args(job: &Value) -> Vec<&str> {
    strings(&job["spec"]["template"]["spec"]["containers"][0]["args"])
}

#[test]
fn each_hook_runs_its_command_on_its_helm_events_in_the_hook_image() {
    let docs = rendered(&[]);
    for (name, events) in [
        ("reconcile", "pre-install,pre-upgrade,pre-rollback"),
        ("retire", "post-upgrade,post-rollback"),
        ("teardown", "pre-delete"),
    ] {
        let objects = hook(&docs, name);
        assert!(
            objects.len() >= 4,
            "{name}: ServiceAccount, ClusterRole, binding and Job"
        );
        for object in &objects {
            let annotations = &object["metadata"]["annotations"];
            assert_eq!(annotations["helm.sh/hook"], events, "{name}: {}", object["kind"]);
            assert!(
                annotations["helm.sh/hook-delete-policy"]
                    .as_str()
                    .is_some_and(|p| p.contains("before-hook-creation")),
                "{name}: a rerun replaces the previous attempt"
            );
        }
        // RBAC before the Job that needs it.
        let job = named(&docs, "Job", &format!("{PREFIX}-{name}"));
        assert_eq!(job["metadata"]["annotations"]["helm.sh/hook-weight"], "0");
        for object in objects.iter().filter(|o| o["kind"] != "Job") {
            assert_eq!(object["metadata"]["annotations"]["helm.sh/hook-weight"], "-10");
        }
        let pod = &job["spec"]["template"]["spec"];
        assert_eq!(pod["serviceAccountName"], format!("{PREFIX}-{name}"));
        let container = &pod["containers"][0];
        assert_eq!(container["image"], pinned("ptah-crd-manager"));
        assert_eq!(strings(&container["command"]), ["/ptah-crd-manager"]);
        assert_eq!(args(job)[0], name);
        assert_eq!(container["securityContext"]["readOnlyRootFilesystem"], true);
        assert_eq!(container["securityContext"]["allowPrivilegeEscalation"], false);
        assert_eq!(pod["restartPolicy"], "Never");
    }
    let retire = named(&docs, "Job", &format!("{PREFIX}-retire"));
    assert!(args(retire).contains(&"--deployment=ptah-ptah-operator-manager"));
    assert!(args(retire).contains(&format!("--executor-image={}", pinned("ptah")).as_str()));
    assert!(
        args(retire).contains(&"--watch-namespace="),
        "every namespace by default"
    );
    let teardown = named(&docs, "Job", &format!("{PREFIX}-teardown"));
    assert!(
        args(teardown).contains(&"--keep-crds=true"),
        "CRDs stay by default"
    );
}

#[test]
fn the_crds_are_installed_by_the_hook_and_the_chart_has_no_crds_folder() {
    assert!(
        !chart().join("crds").exists(),
        "Helm installs crds/ unchecked and never upgrades it: the reconcile hook is the only writer"
    );
    let docs = rendered(&[]);
    assert!(docs.iter().all(|d| d["kind"] != "CustomResourceDefinition"));
    // The names the reconcile hook may update are exactly the CRDs it ships.
    let role = named(&docs, "ClusterRole", &format!("{PREFIX}-reconcile"));
    let shipped: Vec<String> = ptah_api::crds()
        .expect("crds")
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    let mut updatable: Vec<(String, Vec<String>)> =
        grants(role, "apiextensions.k8s.io", "customresourcedefinitions");
    updatable.sort();
    assert_eq!(
        updatable,
        vec![
            ("create".to_owned(), vec![]),
            ("get".to_owned(), shipped.clone()),
            ("update".to_owned(), shipped.clone()),
        ]
    );
    assert_eq!(
        grants(
            role,
            "admissionregistration.k8s.io",
            "validatingwebhookconfigurations"
        ),
        vec![("get".to_owned(), vec!["ptah-operator".to_owned()])]
    );
    // The only CRD delete is opt-in, by name, in the teardown.
    let teardown = named(&docs, "ClusterRole", &format!("{PREFIX}-teardown"));
    assert!(grants(teardown, "apiextensions.k8s.io", "customresourcedefinitions").is_empty());
    let docs = rendered(&["--set", "crds.keepOnUninstall=false"]);
    let teardown = named(&docs, "ClusterRole", &format!("{PREFIX}-teardown"));
    assert_eq!(
        grants(teardown, "apiextensions.k8s.io", "customresourcedefinitions"),
        vec![("delete".to_owned(), shipped)]
    );
    assert!(args(named(&docs, "Job", &format!("{PREFIX}-teardown"))).contains(&"--keep-crds=false"));
}

#[test]
fn hooks_read_the_state_configmap_by_name_and_hold_no_secret() {
    let docs = rendered(&["--set", "coordinationNamespace=ptah-coordination"]);
    for name in ["reconcile", "retire"] {
        let role = named(&docs, "Role", &format!("{PREFIX}-{name}-coordination"));
        assert_eq!(role["metadata"]["namespace"], "ptah-coordination");
        assert_eq!(
            grants(role, "", "configmaps"),
            vec![("get".to_owned(), vec!["ptah-operator-state".to_owned()])]
        );
    }
    for object in ["reconcile", "retire", "teardown"]
        .iter()
        .flat_map(|h| hook(&docs, h))
    {
        for rule in object["rules"].as_array().into_iter().flatten() {
            assert!(!strings(&rule["resources"]).contains(&"secrets"), "{object}");
            assert!(
                !strings(&rule["resources"]).iter().any(|r| r.contains('*')),
                "{object}"
            );
        }
    }
}

#[test]
fn the_hook_image_is_required_and_pinned() {
    let err = render(&["--set", "image.crdManager="]).expect_err("no hook image");
    assert!(err.contains("image.crdManager is required"), "{err}");
    let err =
        render(&["--set", "image.crdManager=registry.local/ptah-crd-manager:latest"]).expect_err("a tag");
    assert!(err.contains("must be pinned by digest"), "{err}");
}

/// The teardown counts the objects of every kind the API ships before it removes anything: its
/// role may list each of them (a kind added to the API without it failed `helm uninstall`).
#[test]
fn the_teardown_may_list_every_kind_of_the_api() {
    let docs = rendered(&[]);
    let teardown = named(&docs, "ClusterRole", &format!("{PREFIX}-teardown"));
    for crd in ptah_api::crds().expect("the CRDs") {
        let plural = crd.spec.names.plural;
        assert_eq!(
            grants(teardown, "operator.ptah.run", &plural),
            vec![("list".to_owned(), Vec::new())],
            "the teardown role and {plural}"
        );
    }
}
