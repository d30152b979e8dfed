//! The Helm chart as a whole, rendered and linted by the real helm (`cargo xtask k8s-bin --only
//! helm`): required values, the golden default render, the admission webhooks, the roles for
//! people, the manager's Deployment and PodDisruptionBudget, the cert rotator, and the values schema.
//! The manager's own RBAC is checked rule by rule in `rbac.rs`.
//!
//! `UPDATE_GOLDEN=1 cargo test -p ptah-controllerstate --test chart` rewrites the golden file; a
//! plain run fails on any difference. A missing helm fails with the command that builds it.

mod support;

use std::path::PathBuf;

use ptah_controllerstate::STATE_CONFIGMAP;
use serde_json::{Value, json};
use support::{
    IMAGE_VALUES, RELEASE_NAMESPACE, chart, component, forbidden_grants, grants, lint_args, named, objects,
    one, render, roles, run_helm, strings, verbs, workspace,
};

const PTAH: &str = "operator.ptah.run";
const MANAGER: &str = "ptah-ptah-operator-manager";
const ROTATOR: &str = "ptah-ptah-operator-cert-rotator";
const APPROVER: &str = "ptah-ptah-operator-approver";
const WEBHOOK_SECRET: &str = "ptah-operator-webhook-tls";
const DIGEST_FORM: &str = "<name>@sha256:<64 hex>";

fn golden() -> PathBuf {
    workspace().join("crates/controllerstate/tests/golden/default-render.yaml")
}

fn rendered(extra: &[&str]) -> Vec<Value> {
    objects(&render(extra).unwrap_or_else(|e| panic!("chart renders: {e}")))
}

fn lint(extra: &[&str]) -> Result<String, String> {
    run_helm(&lint_args(extra))
}

/// Every webhook of both configurations, with the kind it belongs to.
fn webhooks(docs: &[Value]) -> Vec<(&str, &Value)> {
    let mut out = Vec::new();
    for kind in ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"] {
        for hook in one(docs, kind)["webhooks"].as_array().into_iter().flatten() {
            out.push((kind, hook));
        }
    }
    out
}

fn webhook<'d>(docs: &'d [Value], name: &str) -> &'d Value {
    let found: Vec<&Value> = webhooks(docs)
        .into_iter()
        .map(|(_, h)| h)
        .filter(|h| h["name"] == name)
        .collect();
    assert_eq!(found.len(), 1, "one webhook {name}");
    found[0]
}

fn manager_container(docs: &[Value]) -> &Value {
    let deployment = named(docs, "Deployment", MANAGER);
    let containers = deployment["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers");
    assert_eq!(containers.len(), 1, "the manager Pod runs one container");
    &containers[0]
}

fn env(container: &Value, name: &str) -> Value {
    container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("env {name}"))
}

#[test]
fn helm_lint_passes_with_the_required_images_and_fails_without_each() {
    lint(&[]).unwrap_or_else(|e| panic!("lint with the required values: {e}"));
    for value in IMAGE_VALUES {
        let unset = format!("{value}=");
        let err = lint(&["--set", &unset]).expect_err(value);
        assert!(err.contains(&format!("{value} is required")), "{err}");
        assert!(err.contains(DIGEST_FORM), "{err}");
    }
}

#[test]
fn helm_template_refuses_each_missing_or_unpinned_image_naming_the_value_and_the_form() {
    for value in IMAGE_VALUES {
        let unset = format!("{value}=");
        let err = render(&["--set", &unset]).expect_err(value);
        assert!(err.contains(&format!("{value} is required")), "{err}");
        assert!(err.contains(DIGEST_FORM), "{err}");

        let tagged = format!("{value}=registry.local/ptah:0.1.0");
        let err = render(&["--set", &tagged]).expect_err(value);
        assert!(
            err.contains(&format!(
                "{value} \"registry.local/ptah:0.1.0\" must be pinned by digest"
            )),
            "{err}"
        );
        assert!(err.contains(DIGEST_FORM), "{err}");
    }
}

#[test]
fn the_default_render_matches_the_golden_file() {
    let text = render(&[]).unwrap_or_else(|e| panic!("chart renders: {e}"));
    let path = golden();
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| !v.is_empty()) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("golden dir");
        let unchanged = std::fs::read_to_string(&path).is_ok_and(|old| old == text);
        std::fs::write(&path, &text).expect("write golden");
        // An update run is never green, so UPDATE_GOLDEN=1 in CI cannot pass a changed render.
        assert!(
            unchanged,
            "{} rewritten: review the diff, then rerun without UPDATE_GOLDEN",
            path.display()
        );
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; write it with UPDATE_GOLDEN=1 cargo test -p ptah-controllerstate --test chart",
            path.display()
        )
    });
    if text != want {
        let line = text
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| text.lines().count().min(want.lines().count()));
        panic!(
            "the default render differs from {} from line {}:\n  rendered: {:?}\n  golden:   {:?}\n\
             review the change, then UPDATE_GOLDEN=1 cargo test -p ptah-controllerstate --test chart",
            path.display(),
            line + 1,
            text.lines().nth(line),
            want.lines().nth(line),
        );
    }
}

#[test]
fn every_webhook_fails_closed_without_side_effects_and_calls_the_webhook_service() {
    for extra in [&[][..], &["--set", "approvals.requireDistinctApprover=true"][..]] {
        let docs = rendered(extra);
        let hooks = webhooks(&docs);
        assert!(hooks.len() >= 5, "{extra:?}: {}", hooks.len());
        for (kind, hook) in hooks {
            let name = hook["name"].as_str().expect("name");
            assert_eq!(hook["failurePolicy"], "Fail", "{kind} {name}");
            assert_eq!(hook["sideEffects"], "None", "{kind} {name}");
            assert_eq!(hook["admissionReviewVersions"], json!(["v1"]), "{kind} {name}");
            assert_eq!(hook["timeoutSeconds"], 10, "{kind} {name}");
            let service = &hook["clientConfig"]["service"];
            assert_eq!(service["name"], "ptah-operator-webhook", "{kind} {name}");
            assert_eq!(service["namespace"], RELEASE_NAMESPACE, "{kind} {name}");
            assert_eq!(service["port"], 443, "{kind} {name}");
            assert!(
                hook["clientConfig"].get("caBundle").is_none(),
                "{kind} {name}: the rotator injects the caBundle"
            );
        }
        for kind in ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"] {
            assert_eq!(one(&docs, kind)["metadata"]["name"], "ptah-operator");
        }
    }
}

#[test]
fn webhooks_match_exactly_their_paths_rules_and_selectors() {
    let docs = rendered(&[]);
    let approvals = json!([
        "ptahschemaapprovals",
        "ptahmigrationapprovals",
        "ptahmigrationrunacknowledgments"
    ]);
    let managed_by =
        json!({"key": "app.kubernetes.io/managed-by", "operator": "In", "values": ["ptah-operator"]});

    let hook = webhook(&docs, "mutate-approvals.operator.ptah.run");
    assert_eq!(hook["clientConfig"]["service"]["path"], "/mutate/v1/approvals");
    assert_eq!(hook["rules"][0]["resources"], approvals);
    assert_eq!(hook["rules"][0]["operations"], json!(["CREATE"]));

    let hook = webhook(&docs, "validate-approvals.operator.ptah.run");
    assert_eq!(hook["clientConfig"]["service"]["path"], "/validate/v1/approvals");
    assert_eq!(hook["rules"][0]["resources"], approvals);
    assert_eq!(hook["rules"][0]["operations"], json!(["CREATE", "UPDATE"]));

    let hook = webhook(&docs, "validate-operation-pods.operator.ptah.run");
    assert_eq!(
        hook["clientConfig"]["service"]["path"],
        "/validate/v1/operation-pods"
    );
    assert_eq!(
        hook["rules"],
        json!([{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "operations": ["CREATE"], "scope": "Namespaced"}])
    );
    assert_eq!(hook["objectSelector"]["matchExpressions"], json!([managed_by]));

    let hook = webhook(&docs, "validate-manager-owned-plans.operator.ptah.run");
    assert_eq!(
        hook["clientConfig"]["service"]["path"],
        "/validate/v1/manager-owned"
    );
    assert_eq!(hook["rules"][0]["apiGroups"], json!([PTAH]));
    assert_eq!(
        hook["rules"][0]["resources"],
        json!([
            "ptahschemaplans",
            "ptahschemaplanchunks",
            "ptahmigrationplans",
            "ptahresultrecords"
        ])
    );
    assert_eq!(hook["rules"][0]["operations"], json!(["*"]));
    assert!(
        hook.get("objectSelector").is_none(),
        "every plan, labelled or not"
    );
    // A cluster administrator's delete is never sent to the guard, so it works with no replica.
    let admin_delete = json!({"name": "not-a-cluster-admin-delete", "expression":
        r#"!(request.operation == "DELETE" && has(request.userInfo.groups) && "system:masters" in request.userInfo.groups)"#});
    assert_eq!(hook["matchConditions"], json!([admin_delete]));

    let hook = webhook(&docs, "validate-manager-owned-workloads.operator.ptah.run");
    assert_eq!(
        hook["clientConfig"]["service"]["path"],
        "/validate/v1/manager-owned"
    );
    let resources: Vec<&str> = hook["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .flat_map(|r| strings(&r["resources"]))
        .collect();
    assert_eq!(resources, ["jobs", "configmaps"]);
    for rule in hook["rules"].as_array().expect("rules") {
        assert_eq!(rule["operations"], json!(["CREATE", "UPDATE", "DELETE"]));
    }
    assert_eq!(hook["objectSelector"]["matchExpressions"], json!([managed_by]));
    // The state ConfigMap is written before any replica can serve the webhook: exactly it, by
    // namespace and name, is left out (in the coordination namespace, wherever that is).
    let condition = hook["matchConditions"][0]["expression"]
        .as_str()
        .expect("matchCondition");
    assert_eq!(
        condition,
        format!(
            r#"!(request.resource.resource == "configmaps" && request.namespace == "{RELEASE_NAMESPACE}" && request.name == "{STATE_CONFIGMAP}")"#
        )
    );
    assert_eq!(hook["matchConditions"][1], admin_delete);
    assert_eq!(hook["matchConditions"].as_array().map(Vec::len), Some(2));
    let docs_elsewhere = rendered(&["--set", "coordinationNamespace=ptah-coordination"]);
    let moved = webhook(
        &docs_elsewhere,
        "validate-manager-owned-workloads.operator.ptah.run",
    );
    assert!(
        moved["matchConditions"][0]["expression"]
            .as_str()
            .expect("matchCondition")
            .contains(r#"request.namespace == "ptah-coordination""#)
    );

    // Four-eyes adds the spec-writer webhook and the manager flag; off by default.
    assert!(
        webhooks(&docs)
            .iter()
            .all(|(_, h)| h["name"] != "mutate-spec-writer.operator.ptah.run")
    );
    assert!(!strings(&manager_container(&docs)["args"]).contains(&"--require-distinct-approver"));
    let docs = rendered(&["--set", "approvals.requireDistinctApprover=true"]);
    let hook = webhook(&docs, "mutate-spec-writer.operator.ptah.run");
    assert_eq!(hook["clientConfig"]["service"]["path"], "/mutate/v1/spec-writer");
    assert_eq!(
        hook["rules"][0]["resources"],
        json!(["ptahschemas", "ptahmigrations"])
    );
    assert_eq!(hook["rules"][0]["operations"], json!(["CREATE", "UPDATE"]));
    assert!(strings(&manager_container(&docs)["args"]).contains(&"--require-distinct-approver"));
}

#[test]
fn the_approver_role_is_created_bound_nowhere_and_reads_plans_without_configmaps_or_logs() {
    let docs = rendered(&["--set", "userRoles.aggregateToDefaultRoles=true"]);
    let approver = named(&docs, "ClusterRole", APPROVER);
    for binding in docs
        .iter()
        .filter(|d| matches!(d["kind"].as_str(), Some("RoleBinding" | "ClusterRoleBinding")))
    {
        assert_ne!(
            binding["roleRef"]["name"], APPROVER,
            "{}",
            binding["metadata"]["name"]
        );
    }
    let labels = approver["metadata"]["labels"].as_object().expect("labels");
    assert!(
        labels
            .keys()
            .all(|k| !k.starts_with("rbac.authorization.k8s.io/aggregate-to")),
        "the approver is never aggregated into another role: {labels:?}"
    );
    for read in [
        "ptahschemas",
        "ptahmigrations",
        "ptahschemaplans",
        "ptahmigrationplans",
        "ptahschemaapprovals",
    ] {
        assert!(verbs(approver, PTAH, read).contains(&"get".to_owned()), "{read}");
    }
    assert_eq!(verbs(approver, PTAH, "ptahschemaplanchunks"), ["get"]);
    for create in [
        "ptahschemaapprovals",
        "ptahmigrationapprovals",
        "ptahmigrationrunacknowledgments",
    ] {
        assert_eq!(
            verbs(approver, PTAH, create),
            ["create", "get", "list", "watch"],
            "{create}"
        );
    }
    assert!(verbs(approver, "", "configmaps").is_empty());
    assert!(verbs(approver, "", "pods/log").is_empty());
    assert!(verbs(approver, "", "pods").is_empty());
    for write in ["ptahschemas", "ptahmigrations", "ptahschemaplans"] {
        assert_eq!(verbs(approver, PTAH, write), ["get", "list", "watch"], "{write}");
    }
    assert_eq!(forbidden_grants(approver), Vec::<String>::new());

    let docs = rendered(&["--set", "userRoles.approver.create=false"]);
    assert!(docs.iter().all(|d| d["metadata"]["name"] != APPROVER));
}

#[test]
fn authors_cannot_approve_and_readers_cannot_read_plan_chunks() {
    let docs = rendered(&[]);
    let author = named(&docs, "ClusterRole", "ptah-ptah-operator-author");
    for kind in ["ptahschemas", "ptahmigrations"] {
        assert_eq!(
            verbs(author, PTAH, kind),
            ["create", "delete", "get", "list", "patch", "update", "watch"],
            "{kind}"
        );
    }
    for approval in [
        "ptahschemaapprovals",
        "ptahmigrationapprovals",
        "ptahmigrationrunacknowledgments",
        "ptahschemaplanchunks",
        "ptahresultrecords",
    ] {
        assert!(verbs(author, PTAH, approval).is_empty(), "{approval}");
    }

    let reader = named(&docs, "ClusterRole", "ptah-ptah-operator-reader");
    for kind in [
        "ptahschemas",
        "ptahschemaplans",
        "ptahschemaapprovals",
        "ptahmigrations",
        "ptahmigrationplans",
        "ptahmigrationapprovals",
        "ptahmigrationrunacknowledgments",
        "ptahrealms",
    ] {
        assert_eq!(verbs(reader, PTAH, kind), ["get", "list", "watch"], "{kind}");
    }
    assert!(verbs(reader, PTAH, "ptahschemaplanchunks").is_empty());
    assert!(verbs(reader, PTAH, "ptahresultrecords").is_empty());
    for rule in reader["rules"].as_array().expect("rules") {
        assert_eq!(
            rule["apiGroups"],
            json!([PTAH]),
            "the reader reads ptah kinds only"
        );
    }
    for role in [author, reader] {
        assert_eq!(forbidden_grants(role), Vec::<String>::new());
    }
}

#[test]
fn only_the_cert_rotator_touches_a_secret_and_only_its_two_tls_ones() {
    let docs = rendered(&[]);
    for role in roles(&docs) {
        let name = role["metadata"]["name"].as_str().expect("name");
        let found = forbidden_grants(role);
        if role["kind"] == "Role" && name == ROTATOR {
            assert!(found.iter().all(|f| f.contains("Secret access")), "{found:?}");
        } else {
            assert_eq!(found, Vec::<String>::new(), "{name}");
        }
    }
    let rotator = named(&docs, "Role", ROTATOR);
    assert_eq!(rotator["metadata"]["namespace"], RELEASE_NAMESPACE);
    // The webhook's and, with durable result delivery (the default), the result CA's.
    let named_secret = vec![WEBHOOK_SECRET.to_owned(), "ptah-operator-result-tls".to_owned()];
    let mut expected = vec![("create".to_owned(), vec![])];
    for verb in ["get", "list", "patch", "update", "watch"] {
        expected.push((verb.to_owned(), named_secret.clone()));
    }
    assert_eq!(
        grants(rotator, "", "secrets"),
        expected,
        "create cannot be limited by name; everything else is"
    );
    let cluster = named(&docs, "ClusterRole", ROTATOR);
    let only_ours = vec!["ptah-operator".to_owned()];
    for resource in ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"] {
        assert_eq!(
            grants(cluster, "admissionregistration.k8s.io", resource),
            ["get", "list", "patch", "update", "watch"].map(|verb| (verb.to_owned(), only_ours.clone()))
        );
    }
    assert_eq!(cluster["rules"].as_array().expect("rules").len(), 1);

    // The rotator's bindings name its own ServiceAccount; the manager's never get these roles.
    for kind in ["RoleBinding", "ClusterRoleBinding"] {
        let binding = named(&docs, kind, ROTATOR);
        assert_eq!(
            binding["subjects"],
            json!([{"kind": "ServiceAccount", "name": ROTATOR, "namespace": RELEASE_NAMESPACE}])
        );
    }
}

#[test]
fn the_cert_rotator_runs_once_with_the_fixed_names() {
    let docs = rendered(&[]);
    let deployment = named(&docs, "Deployment", ROTATOR);
    assert_eq!(deployment["spec"]["replicas"], 1);
    assert_eq!(deployment["spec"]["strategy"]["type"], "Recreate");
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], ROTATOR);
    let container = &pod["containers"][0];
    assert_eq!(container["image"], support::pinned("ptah-cert-rotator"));
    assert_eq!(container["command"], json!(["/ptah-cert-rotator"]));
    assert_eq!(
        container["args"],
        json!([
            "--namespace",
            RELEASE_NAMESPACE,
            "--secret-name",
            WEBHOOK_SECRET,
            "--service-name",
            "ptah-operator-webhook",
            "--mutating-webhook",
            "ptah-operator",
            "--validating-webhook",
            "ptah-operator",
            "--log-format",
            "json",
        ])
    );
    assert_eq!(container["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(
        container["securityContext"]["capabilities"]["drop"],
        json!(["ALL"])
    );
}

#[test]
fn the_manager_runs_two_hardened_replicas_behind_a_disruption_budget() {
    let docs = rendered(&[]);
    let deployment = named(&docs, "Deployment", MANAGER);
    assert!(deployment["spec"]["replicas"].as_i64().expect("replicas") >= 2);
    let selector = &deployment["spec"]["selector"]["matchLabels"];
    let pdb = one(&docs, "PodDisruptionBudget");
    assert_eq!(pdb["spec"]["minAvailable"], 1);
    assert_eq!(&pdb["spec"]["selector"]["matchLabels"], selector);

    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], MANAGER);
    assert_eq!(pod["automountServiceAccountToken"], true);
    assert_eq!(pod["terminationGracePeriodSeconds"], 30);
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(pod["securityContext"]["runAsUser"], 65532);
    assert_eq!(pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
    let soft = &pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0];
    assert_eq!(soft["podAffinityTerm"]["topologyKey"], "kubernetes.io/hostname");
    assert!(
        pod["affinity"]["podAntiAffinity"]
            .get("requiredDuringSchedulingIgnoredDuringExecution")
            .is_none()
    );
    assert_eq!(
        pod["topologySpreadConstraints"][0]["whenUnsatisfiable"],
        "ScheduleAnyway"
    );

    let container = manager_container(&docs);
    assert_eq!(container["image"], support::pinned("ptah-manager"));
    assert_eq!(container["command"], json!(["/manager"]));
    assert_eq!(
        container["args"],
        json!([
            "--webhook-addr=0.0.0.0:9443",
            "--webhook-cert-dir=/etc/ptah/webhook-tls",
            format!("--manager-username=system:serviceaccount:{RELEASE_NAMESPACE}:{MANAGER}"),
            format!("--result-service={RELEASE_NAMESPACE}/ptah-operator-webhook"),
            "--result-tls-dir=/etc/ptah/result-tls",
            "--result-addr=0.0.0.0:8444",
        ])
    );
    let security = &container["securityContext"];
    assert_eq!(security["runAsNonRoot"], true);
    assert_eq!(security["runAsUser"], 65532);
    assert_eq!(security["readOnlyRootFilesystem"], true);
    assert_eq!(security["allowPrivilegeEscalation"], false);
    assert_eq!(security["capabilities"]["drop"], json!(["ALL"]));
    assert_eq!(security["seccompProfile"]["type"], "RuntimeDefault");

    assert_eq!(
        env(container, "PTAH_COORDINATION_NAMESPACE")["value"],
        RELEASE_NAMESPACE
    );
    assert_eq!(
        env(container, "PTAH_EXECUTOR_IMAGE")["value"],
        support::pinned("ptah")
    );
    assert_eq!(
        env(container, "PTAH_RUNNER_IMAGE")["value"],
        support::pinned("ptah-runner")
    );
    assert_eq!(
        env(container, "PTAH_CONTROLLER_IMAGE")["value"],
        support::pinned("ptah-manager")
    );
    assert_eq!(
        env(container, "POD_NAME")["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.name"
    );
    assert_eq!(env(container, "PTAH_LOG_FORMAT")["value"], "json");

    let ports: Vec<(String, i64)> = container["ports"]
        .as_array()
        .expect("ports")
        .iter()
        .map(|p| {
            (
                p["name"].as_str().expect("name").to_owned(),
                p["containerPort"].as_i64().expect("port"),
            )
        })
        .collect();
    assert_eq!(
        ports,
        [
            ("http".to_owned(), 8080),
            ("webhook".to_owned(), 9443),
            ("results".to_owned(), 8444)
        ]
    );
    assert_eq!(
        container["livenessProbe"]["httpGet"],
        json!({"path": "/healthz", "port": "http"})
    );
    assert_eq!(
        container["readinessProbe"]["httpGet"],
        json!({"path": "/readyz", "port": "http"})
    );
    assert_eq!(
        container["resources"]["requests"],
        json!({"cpu": "50m", "memory": "96Mi"})
    );

    let mount = container["volumeMounts"]
        .as_array()
        .expect("mounts")
        .iter()
        .find(|m| m["mountPath"] == "/etc/ptah/webhook-tls")
        .expect("webhook TLS mount");
    assert_eq!(mount["readOnly"], true);
    let volume = pod["volumes"]
        .as_array()
        .expect("volumes")
        .iter()
        .find(|v| v["name"] == mount["name"])
        .expect("webhook TLS volume");
    assert_eq!(volume["secret"]["secretName"], WEBHOOK_SECRET);
    assert_eq!(
        volume["secret"]["optional"], true,
        "starts before the rotator writes it"
    );

    // One replica: no budget that would block every drain.
    let docs = rendered(&["--set", "replicas=1"]);
    assert!(docs.iter().all(|d| d["kind"] != "PodDisruptionBudget"));
}

#[test]
fn services_route_the_webhook_and_metrics_to_the_manager_pods() {
    let docs = rendered(&[]);
    let selector = &named(&docs, "Deployment", MANAGER)["spec"]["selector"]["matchLabels"];
    let webhook = named(&docs, "Service", "ptah-operator-webhook");
    assert_eq!(&webhook["spec"]["selector"], selector);
    assert_eq!(
        webhook["spec"]["ports"],
        json!([
            {"name": "https", "port": 443, "targetPort": "webhook", "protocol": "TCP"},
            {"name": "results", "port": 8444, "targetPort": "results", "protocol": "TCP"}
        ])
    );
    let metrics = named(&docs, "Service", "ptah-ptah-operator-metrics");
    assert_eq!(&metrics["spec"]["selector"], selector);
    assert_eq!(metrics["spec"]["ports"][0]["port"], 8080);
    assert_eq!(metrics["spec"]["ports"][0]["targetPort"], "http");
}

#[test]
fn the_service_monitor_is_off_by_default_and_scrapes_only_the_metrics_service() {
    assert!(rendered(&[]).iter().all(|d| d["kind"] != "ServiceMonitor"));
    let docs = rendered(&[
        "--set",
        "metrics.serviceMonitor.enabled=true",
        "--set",
        "metrics.serviceMonitor.labels.release=kube-prometheus",
        "--set",
        "metrics.serviceMonitor.interval=15s",
    ]);
    let monitor = one(&docs, "ServiceMonitor");
    assert_eq!(monitor["metadata"]["namespace"], RELEASE_NAMESPACE);
    assert_eq!(monitor["metadata"]["labels"]["release"], "kube-prometheus");
    assert_eq!(
        monitor["spec"]["namespaceSelector"],
        json!({"matchNames": [RELEASE_NAMESPACE]})
    );
    let endpoints = monitor["spec"]["endpoints"].as_array().expect("endpoints");
    assert_eq!(endpoints.len(), 1);
    let endpoint = &endpoints[0];
    assert_eq!(endpoint["path"], "/metrics");
    assert_eq!(endpoint["interval"], "15s");
    assert_eq!(endpoint["scrapeTimeout"], "10s");

    // prometheus-operator scrapes the named port of each Service the selector matches.
    let selector = monitor["spec"]["selector"]["matchLabels"]
        .as_object()
        .expect("matchLabels");
    let services: Vec<&Value> = docs
        .iter()
        .filter(|d| d["kind"] == "Service")
        .filter(|d| selector.iter().all(|(k, v)| &d["metadata"]["labels"][k] == v))
        .collect();
    let scraped: Vec<&str> = services
        .iter()
        .filter(|svc| {
            svc["spec"]["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| p["name"] == endpoint["port"])
        })
        .filter_map(|svc| svc["metadata"]["name"].as_str())
        .collect();
    assert_eq!(
        scraped,
        ["ptah-ptah-operator-metrics"],
        "matched: {}",
        services.len()
    );
    let container = manager_container(&docs);
    let target = &named(&docs, "Service", "ptah-ptah-operator-metrics")["spec"]["ports"][0]["targetPort"];
    assert!(
        container["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| &p["name"] == target && p["containerPort"] == 8080),
        "the metrics Service reaches the manager's /metrics port"
    );

    let err = render(&[
        "--set",
        "metrics.serviceMonitor.enabled=true",
        "--set",
        "metrics.service.enabled=false",
    ])
    .expect_err("a ServiceMonitor without the Service it scrapes");
    assert!(err.contains("needs metrics.service.enabled"), "{err}");
    let err = render(&["--set", "metrics.serviceMonitor.interval=often"]).expect_err("not a duration");
    assert!(err.contains("/metrics/serviceMonitor/interval"), "{err}");
}

#[test]
fn pod_labels_cannot_make_the_manager_an_operation_pod() {
    let docs = rendered(&[
        "--set",
        "podLabels.app\\.kubernetes\\.io/managed-by=ptah-operator",
        "--set",
        "podLabels.team=dba",
    ]);
    let labels = &named(&docs, "Deployment", MANAGER)["spec"]["template"]["metadata"]["labels"];
    assert_eq!(labels["app.kubernetes.io/managed-by"], "Helm");
    assert_eq!(labels["team"], "dba");
}

#[test]
fn the_prometheus_rule_is_off_by_default_and_alerts_on_the_manager_metrics() {
    assert!(rendered(&[]).iter().all(|d| d["kind"] != "PrometheusRule"));
    let docs = rendered(&["--set", "metrics.prometheusRule.enabled=true"]);
    let rule = one(&docs, "PrometheusRule");
    let rules = rule["spec"]["groups"][0]["rules"].as_array().expect("rules");
    let expr = |alert: &str| -> String {
        rules
            .iter()
            .find(|r| r["alert"] == alert)
            .unwrap_or_else(|| panic!("alert {alert}"))["expr"]
            .as_str()
            .expect("expr")
            .to_owned()
    };
    assert!(
        expr("PtahOperatorReconcileErrors")
            .contains(r#"ptah_reconciliations_total{namespace="ptah-system", outcome="error"}"#)
    );
    assert!(expr("PtahOperatorNoLeader").contains("max by (namespace) (ptah_leader{"));
    assert!(expr("PtahOperatorNoLeader").ends_with("== 0"));
    assert!(
        expr("PtahOperatorOperationsFailing")
            .contains(r#"ptah_operation_results_total{namespace="ptah-system", result="failed"}"#)
    );
    assert!(expr("PtahOperatorOperationOutcomeUncertain").contains(r#"result=~"partial|unknown|refused""#));
    assert!(expr("PtahOperatorOperationsFailing").starts_with("sum by (namespace, kind, operation) ("));
    assert_eq!(
        expr("PtahMigrationRunUnresolved"),
        r#"(time() - min by (namespace) (ptah_oldest_unresolved_migration_run_timestamp_seconds{namespace="ptah-system"} > 0)) > 900"#,
        "the default is 15 minutes"
    );
}

#[test]
fn the_unresolved_run_alert_fires_after_the_configured_minutes() {
    let docs = rendered(&[
        "--set",
        "metrics.prometheusRule.enabled=true",
        "--set",
        "metrics.prometheusRule.alerts.unresolvedRunMinutes=42",
        "--set",
        "metrics.prometheusRule.runbookBaseURL=https://runbooks.example/ptah",
    ]);
    let rule = one(&docs, "PrometheusRule");
    let rules = rule["spec"]["groups"][0]["rules"].as_array().expect("rules");
    let alert = rules
        .iter()
        .find(|r| r["alert"] == "PtahMigrationRunUnresolved")
        .expect("PtahMigrationRunUnresolved");
    let expr = alert["expr"].as_str().expect("expr");
    assert!(expr.ends_with(") > 2520"), "42 minutes in seconds: {expr}");
    assert!(
        expr.contains(
            "(ptah_oldest_unresolved_migration_run_timestamp_seconds{namespace=\"ptah-system\"} > 0)"
        ),
        "0 (no unresolved run, or not the leader) never fires: {expr}"
    );
    assert_eq!(alert["labels"]["severity"], "warning");
    let summary = alert["annotations"]["summary"].as_str().expect("summary");
    assert!(summary.contains("more than 42 minutes"), "{summary}");
    assert!(
        alert["annotations"]["description"]
            .as_str()
            .expect("description")
            .contains("{{ $value | humanizeDuration }}"),
        "the age is left to Prometheus to fill in"
    );
    assert_eq!(
        alert["annotations"]["runbook_url"],
        "https://runbooks.example/ptah#PtahMigrationRunUnresolved"
    );
    for bad in ["0", "-5", "soon"] {
        let err = render(&[
            "--set",
            "metrics.prometheusRule.enabled=true",
            "--set",
            &format!("metrics.prometheusRule.alerts.unresolvedRunMinutes={bad}"),
        ])
        .expect_err(bad);
        assert!(err.contains("unresolvedRunMinutes"), "{bad}: {err}");
    }
}

#[test]
fn the_values_schema_refuses_wrong_types_and_unknown_values() {
    let err = render(&["--set", "replicas=two"]).expect_err("replicas: \"two\"");
    assert!(err.contains("/replicas"), "{err}");
    let err = render(&["--set", "replica=3"]).expect_err("a misspelt value");
    assert!(err.contains("replica"), "{err}");
    let err = render(&["--set", "approvals.requireDistinctApprover=maybe"]).expect_err("not a bool");
    assert!(err.contains("requireDistinctApprover"), "{err}");
    let err = render(&["--set", "replicas=0"]).expect_err("no replica");
    assert!(err.contains("/replicas"), "{err}");
}

#[test]
fn the_network_policy_example_is_not_rendered_and_confines_operation_pods() {
    let docs = rendered(&[]);
    assert!(docs.iter().all(|d| d["kind"] != "NetworkPolicy"));
    let text = std::fs::read_to_string(chart().join("examples/networkpolicy-egress.yaml")).expect("example");
    let policy = &objects(&text)[0];
    assert_eq!(policy["kind"], "NetworkPolicy");
    assert_eq!(
        policy["spec"]["podSelector"]["matchLabels"],
        json!({"app.kubernetes.io/managed-by": "ptah-operator"})
    );
    assert_eq!(policy["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    let ports: Vec<i64> = policy["spec"]["egress"]
        .as_array()
        .expect("egress")
        .iter()
        .flat_map(|rule| rule["ports"].as_array().cloned().unwrap_or_default())
        .map(|p| p["port"].as_i64().expect("port"))
        .collect();
    assert_eq!(
        ports,
        [53, 53, 443, 5432, 3306, 8444],
        "DNS, the registry, the databases, the result receiver"
    );
}

#[test]
fn every_manager_object_is_labelled_and_in_the_release_namespace() {
    let docs = rendered(&[]);
    for doc in component(&docs, "manager") {
        let kind = doc["kind"].as_str().expect("kind");
        if kind != "ClusterRole" && kind != "ClusterRoleBinding" {
            assert_eq!(doc["metadata"]["namespace"], RELEASE_NAMESPACE, "{kind}");
        }
        assert_eq!(
            doc["metadata"]["labels"]["app.kubernetes.io/name"],
            "ptah-operator"
        );
    }
}

#[test]
fn a_webhook_namespace_selector_and_a_watch_namespace_scope_a_release() {
    let docs = rendered(&[
        "--set",
        "webhooks.namespaceSelector.matchLabels.ptah-e2e=yes",
        "--set",
        "watchNamespace=apps",
        "--set",
        "approvals.requireDistinctApprover=true",
    ]);
    for (kind, hook) in webhooks(&docs) {
        assert_eq!(
            hook["namespaceSelector"],
            json!({"matchLabels": {"ptah-e2e": "yes"}}),
            "{kind} {}",
            hook["name"]
        );
    }
    let args = strings(&manager_container(&docs)["args"]);
    assert!(args.contains(&"--watch-namespace=apps"), "{args:?}");
    let default = rendered(&[]);
    assert!(
        webhooks(&default)
            .iter()
            .all(|(_, h)| h.get("namespaceSelector").is_none())
    );
    assert!(
        !strings(&manager_container(&default)["args"])
            .iter()
            .any(|a| a.starts_with("--watch-namespace"))
    );
}

/// `resultDelivery.enabled`: the manager serves the receiver behind the webhook Service's `results`
/// port with the result CA mounted from its own Secret, which a second rotator container writes
/// (and which the rotator, and only it, may touch). It is the default; off, none of it is rendered.
#[test]
fn durable_result_delivery_wires_the_manager_the_service_and_a_second_rotator() {
    const RESULT_SECRET: &str = "ptah-operator-result-tls";
    let off = rendered(&["--set", "resultDelivery.enabled=false"]);
    let text = serde_json::to_string(&off).expect("json");
    assert!(!text.contains(RESULT_SECRET) && !text.contains("--result-"));

    let docs = rendered(&[]);
    let manager = manager_container(&docs);
    let args: Vec<&str> = manager["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for arg in [
        "--result-service=ptah-system/ptah-operator-webhook",
        "--result-tls-dir=/etc/ptah/result-tls",
        "--result-addr=0.0.0.0:8444",
    ] {
        assert!(args.contains(&arg), "{arg} in {args:?}");
    }
    assert!(
        manager["ports"]
            .as_array()
            .expect("ports")
            .iter()
            .any(|p| p["name"] == "results" && p["containerPort"] == 8444)
    );
    let pod = &named(&docs, "Deployment", MANAGER)["spec"]["template"]["spec"];
    let volume = pod["volumes"]
        .as_array()
        .expect("volumes")
        .iter()
        .find(|v| v["name"] == "result-tls")
        .expect("volume");
    assert_eq!(volume["secret"]["secretName"], RESULT_SECRET);
    let webhook_tls = pod["volumes"]
        .as_array()
        .expect("volumes")
        .iter()
        .find(|v| v["name"] == "webhook-tls")
        .expect("webhook-tls");
    assert_eq!(
        volume["secret"]["defaultMode"], webhook_tls["secret"]["defaultMode"],
        "read-only to the owner and group, as the webhook's"
    );
    let service = named(&docs, "Service", "ptah-operator-webhook");
    assert!(
        service["spec"]["ports"]
            .as_array()
            .expect("ports")
            .iter()
            .any(|p| p["name"] == "results" && p["port"] == 8444 && p["targetPort"] == "results")
    );

    let rotator = named(&docs, "Deployment", ROTATOR);
    let containers = rotator["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers");
    let second = containers
        .iter()
        .find(|c| c["name"] == "result-ca-rotator")
        .expect("the result CA rotator");
    let args: Vec<&str> = second["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let after = |flag: &str| {
        args.iter()
            .position(|a| *a == flag)
            .and_then(|i| args.get(i + 1))
            .copied()
    };
    assert_eq!(after("--secret-name"), Some(RESULT_SECRET));
    assert_eq!(after("--mutating-webhook"), Some(""));
    assert_eq!(after("--validating-webhook"), Some(""));
    assert_eq!(after("--ca-switch-delay"), Some("3h"));
    let role = named(&docs, "Role", ROTATOR);
    let named_secrets = vec![WEBHOOK_SECRET.to_owned(), RESULT_SECRET.to_owned()];
    assert!(
        grants(role, "", "secrets")
            .iter()
            .any(|(verb, names)| verb == "get" && *names == named_secrets)
    );
    // Still, nobody but the rotator holds a Secret permission.
    for role in roles(&docs) {
        let name = role["metadata"]["name"].as_str().expect("name");
        if !(role["kind"] == "Role" && name == ROTATOR) {
            assert_eq!(forbidden_grants(role), Vec::<String>::new(), "{name}");
        }
    }
    let cluster = named(&docs, "ClusterRole", MANAGER);
    assert_eq!(
        verbs(cluster, PTAH, "ptahresultrecords"),
        ["create", "delete", "get", "list"]
    );
}
