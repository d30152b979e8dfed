//! The wait-for-schema suite's support: the documented manifest with its substitutions, the
//! PtahSchema status the test writes as the manager would, the Pod it watches, diagnostics, and
//! the ServiceAccount's access checks.

use std::time::{Duration, Instant};

use k8s_openapi::api::{
    apps::v1::ReplicaSet,
    authorization::v1::{ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec},
    core::v1::{ContainerStatus, Event, Pod},
};
use kube::{
    Api, Client,
    api::{ListParams, LogParams, Patch, PatchParams, PostParams},
};
use ptah_api::PtahSchema;
use ptah_apitests::workspace_root;
use serde_json::{Value, json};

/// The manifest docs/wait-for-schema.md documents.
pub(crate) const MANIFEST: &str = "docs/examples/workloads/wait-for-schema.yaml";
/// The init container and the app container of its Deployment.
pub(crate) const INIT: &str = "wait-for-schema";
pub(crate) const APP: &str = "app";
/// The schema the test waits for: not the manifest's own name, so the substitution is real.
pub(crate) const SCHEMA: &str = "inventory";
/// How long the app must stay held while the schema is not Ready.
pub(crate) const HOLD: Duration = Duration::from_secs(20);
/// How long a hold on a Ready of an older generation lasts.
pub(crate) const STALE_HOLD: Duration = Duration::from_secs(15);
/// How long the app may take to start once the schema is Ready.
pub(crate) const RELEASE: Duration = Duration::from_secs(60);

/// The manifest's objects, with what the test substitutes: the namespace everywhere, the schema
/// name in the Role and the `kubectl wait` argument, the kubectl image and a pull secret for the
/// init container, the pause image for the app. Returns the objects and the doc's schema name.
pub(crate) fn manifest(ns: &str, kubectl_image: &str) -> (Vec<Value>, String) {
    let path = workspace_root().join(MANIFEST);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut docs: Vec<Value> =
        serde_saphyr::from_multiple(&text).unwrap_or_else(|e| panic!("{} is not YAML: {e}", path.display()));
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap_or("?")).collect();
    assert_eq!(
        kinds,
        ["ServiceAccount", "Role", "RoleBinding", "Deployment"],
        "{MANIFEST} should hold a ServiceAccount, a Role, a RoleBinding and a Deployment, in that order"
    );

    // The Role as documented: one rule, read-only verbs on ptahschemas of one name.
    let rules = docs[1]["rules"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        rules.len(),
        1,
        "the documented Role must have exactly one rule: {rules:?}"
    );
    let rule = &rules[0];
    assert_eq!(
        rule["apiGroups"],
        json!(["operator.ptah.run"]),
        "the Role's API group: {rule}"
    );
    assert_eq!(
        rule["resources"],
        json!(["ptahschemas"]),
        "the Role's resources: {rule}"
    );
    let mut verbs: Vec<&str> = rule["verbs"]
        .as_array()
        .map(|v| v.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    verbs.sort_unstable();
    assert_eq!(
        verbs,
        ["get", "list", "watch"],
        "the documented Role must grant exactly get, list and watch (kubectl wait needs all three): {rule}"
    );
    let doc_schema = rule["resourceNames"][0]
        .as_str()
        .unwrap_or_else(|| panic!("the documented Role names no schema in resourceNames: {rule}"))
        .to_owned();
    assert_ne!(doc_schema, SCHEMA);

    for doc in &mut docs {
        doc["metadata"]["namespace"] = json!(ns);
    }
    docs[1]["rules"][0]["resourceNames"] = json!([SCHEMA]);
    for subject in docs[2]["subjects"].as_array_mut().into_iter().flatten() {
        subject["namespace"] = json!(ns);
    }

    let pod = &mut docs[3]["spec"]["template"]["spec"];
    pod["imagePullSecrets"] = json!([{"name": "registry"}]);
    let init = pod["initContainers"]
        .as_array_mut()
        .and_then(|cs| cs.iter_mut().find(|c| c["name"] == INIT))
        .unwrap_or_else(|| panic!("{MANIFEST}: no init container named {INIT}"));
    let wanted = format!("ptahschema/{doc_schema}");
    let command = init["command"]
        .as_array_mut()
        .unwrap_or_else(|| panic!("{MANIFEST}: the init container has no command"));
    let words: Vec<String> = command
        .iter()
        .filter_map(|w| w.as_str().map(str::to_owned))
        .collect();
    for needed in ["kubectl", "wait", "--for=condition=Ready", wanted.as_str()] {
        assert!(
            words.iter().any(|w| w == needed),
            "the documented init container command lacks {needed:?}: {words:?}"
        );
    }
    assert!(
        words.iter().any(|w| w.starts_with("--timeout=")),
        "the documented `kubectl wait` sets no --timeout (its default is 30s): {words:?}"
    );
    for word in command.iter_mut() {
        if *word == json!(wanted) {
            *word = json!(format!("ptahschema/{SCHEMA}"));
        }
    }
    init["image"] = json!(kubectl_image);
    init["imagePullPolicy"] = json!("IfNotPresent");
    let app = pod["containers"]
        .as_array_mut()
        .and_then(|cs| cs.iter_mut().find(|c| c["name"] == APP))
        .unwrap_or_else(|| panic!("{MANIFEST}: no container named {APP}"));
    app["image"] = json!(ptah_testenv::images::PAUSE_IMAGE);
    app["imagePullPolicy"] = json!("Never");
    (docs, doc_schema)
}

/// A condition as the manager writes it.
pub(crate) fn condition(type_: &str, status: bool, reason: &str, message: &str, generation: i64) -> Value {
    json!({
        "type": type_,
        "status": if status { "True" } else { "False" },
        "reason": reason,
        "message": message,
        "observedGeneration": generation,
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    })
}

/// Writes the PtahSchema's status through the status subresource, as the manager would.
pub(crate) async fn write_status(schemas: &Api<PtahSchema>, status: Value) {
    schemas
        .patch_status(
            SCHEMA,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": status})),
        )
        .await
        .unwrap_or_else(|e| panic!("write the status of PtahSchema {SCHEMA}: {e}"));
}

/// The one Pod of the Deployment, if it exists yet.
pub(crate) async fn the_pod(pods: &Api<Pod>, selector: &str) -> Option<Pod> {
    let listed = pods
        .list(&ListParams::default().labels(selector))
        .await
        .unwrap_or_else(|e| panic!("list the Pods {selector}: {e}"));
    assert!(
        listed.items.len() <= 1,
        "the Deployment has more than one Pod: {:?}",
        listed
            .items
            .iter()
            .map(|p| p.metadata.name.clone())
            .collect::<Vec<_>>()
    );
    listed.items.into_iter().next()
}

pub(crate) fn status_of<'a>(pod: &'a Pod, init: bool, name: &str) -> Option<&'a ContainerStatus> {
    let status = pod.status.as_ref()?;
    let list = if init {
        status.init_container_statuses.as_ref()
    } else {
        status.container_statuses.as_ref()
    };
    list?.iter().find(|c| c.name == name)
}

pub(crate) fn running(status: Option<&ContainerStatus>) -> bool {
    status
        .and_then(|s| s.state.as_ref())
        .is_some_and(|s| s.running.is_some())
}

/// The app container has started (or even run and stopped) at some point.
pub(crate) fn app_started(pod: &Pod) -> bool {
    let app = status_of(pod, false, APP);
    let state = app.and_then(|s| s.state.as_ref());
    state.is_some_and(|s| s.running.is_some() || s.terminated.is_some())
        || app.is_some_and(|s| s.restart_count > 0 || s.started == Some(true))
}

/// Everything that explains a failure: the Pod's status, the init container's log (and the
/// previous one's, after a restart), the ReplicaSets' conditions and the namespace's Events.
pub(crate) async fn diagnose(client: &Client, ns: &str, pod: Option<&str>) -> String {
    let mut out = Vec::new();
    let pods = Api::<Pod>::namespaced(client.clone(), ns);
    if let Some(name) = pod {
        match pods.get(name).await {
            Ok(live) => out.push(format!(
                "Pod {name} status:\n{}",
                serde_json::to_string_pretty(&live.status).unwrap_or_default()
            )),
            Err(e) => out.push(format!("Pod {name}: {e}")),
        }
        for previous in [false, true] {
            let params = LogParams {
                container: Some(INIT.to_owned()),
                previous,
                ..LogParams::default()
            };
            let which = if previous { "previous " } else { "" };
            match pods.logs(name, &params).await {
                Ok(log) => out.push(format!("{which}{INIT} log:\n{log}")),
                Err(e) => out.push(format!("{which}{INIT} log: {e}")),
            }
        }
    }
    if let Ok(sets) = Api::<ReplicaSet>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
    {
        for set in sets.items {
            let conditions = set.status.and_then(|s| s.conditions).unwrap_or_default();
            out.push(format!(
                "ReplicaSet {}: {}",
                set.metadata.name.unwrap_or_default(),
                serde_json::to_string(&conditions).unwrap_or_default()
            ));
        }
    }
    if let Ok(events) = Api::<Event>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
    {
        let lines: Vec<String> = events
            .items
            .iter()
            .map(|e| {
                format!(
                    "  {} {} {}: {}",
                    e.type_.clone().unwrap_or_default(),
                    e.involved_object.name.clone().unwrap_or_default(),
                    e.reason.clone().unwrap_or_default(),
                    e.message.clone().unwrap_or_default()
                )
            })
            .collect();
        out.push(format!("Events of {ns}:\n{}", lines.join("\n")));
    }
    out.join("\n\n")
}

/// Fails the test with `what` and the diagnosis.
pub(crate) async fn fail(client: &Client, ns: &str, pod: Option<&str>, what: &str) -> ! {
    let diagnosis = diagnose(client, ns, pod).await;
    panic!("{what}\n(namespace {ns} is left for inspection)\n\n{diagnosis}")
}

/// The init container's log so far.
pub(crate) async fn init_log(pods: &Api<Pod>, pod: &str) -> String {
    let params = LogParams {
        container: Some(INIT.to_owned()),
        ..LogParams::default()
    };
    pods.logs(pod, &params).await.unwrap_or_default()
}

/// Keeps checking for `hold` that the app has not started while `kubectl wait` still runs in
/// its first attempt and has logged no refusal; `why` says why the schema is not Ready.
pub(crate) async fn held(client: &Client, ns: &str, pod: &str, hold: Duration, why: &str) {
    let pods = Api::<Pod>::namespaced(client.clone(), ns);
    let until = Instant::now() + hold;
    while Instant::now() < until {
        let live = pods
            .get(pod)
            .await
            .unwrap_or_else(|e| panic!("get Pod {pod}: {e}"));
        let init = status_of(&live, true, INIT);
        if app_started(&live) {
            fail(
                client,
                ns,
                Some(pod),
                &format!("the app container started although {why}"),
            )
            .await;
        }
        if !running(init) || init.is_some_and(|s| s.restart_count > 0) {
            fail(
                client,
                ns,
                Some(pod),
                &format!(
                    "the init container should keep waiting in its first run while {why}, but it \
                     stopped or restarted (kubectl wait failed: RBAC, API server reach, or its timeout)"
                ),
            )
            .await;
        }
        let log = init_log(&pods, pod).await;
        if log.to_lowercase().contains("forbidden") {
            fail(
                client,
                ns,
                Some(pod),
                &format!("kubectl wait was refused something while {why}: the Role is missing a verb"),
            )
            .await;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// Asks the API server's authorizer whether the ServiceAccount may do `verb` on `resource`.
pub(crate) async fn may(client: &Client, ns: &str, sa: &str, check: &Check) -> bool {
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(format!("system:serviceaccount:{ns}:{sa}")),
            groups: Some(vec![
                "system:serviceaccounts".to_owned(),
                format!("system:serviceaccounts:{ns}"),
                "system:authenticated".to_owned(),
            ]),
            resource_attributes: Some(ResourceAttributes {
                namespace: Some(check.namespace.unwrap_or(ns).to_owned()),
                verb: Some(check.verb.to_owned()),
                group: Some(check.group.to_owned()),
                resource: Some(check.resource.to_owned()),
                subresource: check.subresource.map(str::to_owned),
                name: check.name.map(str::to_owned),
                ..ResourceAttributes::default()
            }),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    };
    Api::<SubjectAccessReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await
        .unwrap_or_else(|e| panic!("SubjectAccessReview {check:?}: {e}"))
        .status
        .is_some_and(|s| s.allowed)
}

/// One SubjectAccessReview and its expected answer.
#[derive(Debug)]
pub(crate) struct Check {
    pub(crate) verb: &'static str,
    pub(crate) group: &'static str,
    pub(crate) resource: &'static str,
    pub(crate) subresource: Option<&'static str>,
    pub(crate) name: Option<&'static str>,
    /// Another namespace than the test's.
    pub(crate) namespace: Option<&'static str>,
    pub(crate) allowed: bool,
}

pub(crate) const fn check(
    verb: &'static str,
    group: &'static str,
    resource: &'static str,
    allowed: bool,
) -> Check {
    Check {
        verb,
        group,
        resource,
        subresource: None,
        name: None,
        namespace: None,
        allowed,
    }
}

pub(crate) const PTAH: &str = "operator.ptah.run";

/// What the Role must allow, and what it must not.
pub(crate) fn checks() -> Vec<Check> {
    let on_schema = |verb, allowed| Check {
        name: Some(SCHEMA),
        ..check(verb, PTAH, "ptahschemas", allowed)
    };
    vec![
        // kubectl wait: a get by name, then a list and a watch with a metadata.name selector.
        on_schema("get", true),
        on_schema("list", true),
        on_schema("watch", true),
        // Nothing that writes, not even the status.
        on_schema("patch", false),
        on_schema("update", false),
        on_schema("delete", false),
        Check {
            subresource: Some("status"),
            ..on_schema("patch", false)
        },
        check("create", PTAH, "ptahschemas", false),
        // No other schema, no listing of them all, no other namespace.
        Check {
            name: Some("another-schema"),
            ..check("get", PTAH, "ptahschemas", false)
        },
        check("list", PTAH, "ptahschemas", false),
        check("watch", PTAH, "ptahschemas", false),
        Check {
            namespace: Some("default"),
            ..on_schema("get", false)
        },
        // No other kind of the group, and nothing of the namespace.
        check("create", PTAH, "ptahschemaapprovals", false),
        check("get", PTAH, "ptahschemaplans", false),
        check("get", "", "secrets", false),
        check("list", "", "secrets", false),
        check("list", "", "pods", false),
        check("get", "", "configmaps", false),
    ]
}
