//! The chart's ValidatingAdmissionPolicies on the real API server, and the mutation check that
//! proves each rule carries weight: a test weakens a policy (drops a validation, its binding, or
//! widens its match), requires the case that rule decides to flip, and restores the policy.
//!
//! The policies are rendered by the real helm from `charts/ptah-operator`, never restated here.

use std::{
    future::Future,
    process::Command,
    time::{Duration, Instant},
};

use k8s_openapi::api::admissionregistration::v1::{
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use kube::{
    Api, Client, Config,
    api::{DeleteParams, Patch, PatchParams},
    config::{KubeConfigOptions, Kubeconfig},
};
use serde_json::Value;

use crate::{ClusterFiles, client::FIXTURE_MANAGER, workspace_root};

/// The chart template holding the policies and their bindings.
pub const TEMPLATE: &str = "templates/admissionpolicies.yaml";

/// How long a policy change may take to reach the API server's admission chain.
pub const PROPAGATION: Duration = Duration::from_secs(30);

/// Renders the chart's policies and bindings for release `release` in `namespace`, with `sets`
/// (`key=value`, the five required images among them).
pub fn render(release: &str, namespace: &str, sets: &[String]) -> Vec<Value> {
    try_render(release, namespace, sets).unwrap_or_else(|e| panic!("helm template failed: {e}"))
}

/// [`render`], or helm's refusal.
pub fn try_render(release: &str, namespace: &str, sets: &[String]) -> Result<Vec<Value>, String> {
    render_template(release, namespace, TEMPLATE, sets)
}

/// The objects of one chart `template` (e.g. `templates/rbac.yaml`) rendered by the real helm for
/// release `release` in `namespace` with `sets`, or helm's refusal.
pub fn render_template(
    release: &str,
    namespace: &str,
    template: &str,
    sets: &[String],
) -> Result<Vec<Value>, String> {
    let chart = workspace_root().join("charts/ptah-operator");
    let mut cmd = Command::new(crate::e2e::helm());
    cmd.args(["template", release])
        .arg(&chart)
        .args(["--namespace", namespace, "--show-only", template]);
    for set in sets {
        cmd.args(["--set", set]);
    }
    let out = cmd.output().unwrap_or_else(|e| panic!("run helm: {e}"));
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .split("\n---")
        .filter_map(|doc| {
            let value: Value = serde_saphyr::from_str(doc)
                .unwrap_or_else(|e| panic!("rendered YAML does not parse: {e}\n{doc}"));
            (!value.is_null()).then_some(value)
        })
        .collect())
}

/// `--set` values for the images the chart requires, the executor and runner given.
pub fn image_sets(executor: &str, runner: &str) -> Vec<String> {
    let mut sets = vec![
        format!("image.executor={executor}"),
        format!("image.runner={runner}"),
    ];
    for value in ["manager", "certRotator", "crdManager"] {
        sets.push(format!(
            "image.{value}=registry.example/{value}@sha256:{}",
            "a".repeat(64)
        ));
    }
    sets
}

fn kind_and_name(doc: &Value) -> (&str, &str) {
    (
        doc["kind"].as_str().unwrap_or_default(),
        doc["metadata"]["name"].as_str().unwrap_or_default(),
    )
}

/// The policy (not binding) named `name` of `docs`.
pub fn policy<'a>(docs: &'a [Value], name: &str) -> &'a Value {
    docs.iter()
        .find(|d| kind_and_name(d) == ("ValidatingAdmissionPolicy", name))
        .unwrap_or_else(|| panic!("no policy {name} in the render"))
}

/// One way to weaken a policy.
#[derive(Clone, Debug)]
pub enum Weakening {
    /// Drop the validation whose message contains the text.
    DropValidation(String),
    /// Delete the policy's binding.
    DropBinding,
    /// Widen the match: drop the policy's match conditions.
    DropMatchConditions,
    /// Widen the match: drop the policy's object selector.
    DropObjectSelector,
}

/// `docs` with the policy `name` weakened by `how`.
pub fn weakened(docs: &[Value], name: &str, how: &Weakening) -> Vec<Value> {
    let mut out = Vec::new();
    for doc in docs {
        let (kind, doc_name) = kind_and_name(doc);
        if doc_name != name {
            out.push(doc.clone());
            continue;
        }
        if kind == "ValidatingAdmissionPolicyBinding" && matches!(how, Weakening::DropBinding) {
            continue;
        }
        let mut doc = doc.clone();
        if kind == "ValidatingAdmissionPolicy" {
            let spec = &mut doc["spec"];
            match how {
                Weakening::DropValidation(text) => {
                    let list = spec["validations"].as_array_mut().expect("validations");
                    let before = list.len();
                    list.retain(|v| !v["message"].as_str().unwrap_or_default().contains(text.as_str()));
                    assert_eq!(
                        before - list.len(),
                        1,
                        "exactly one validation of {name} says {text:?}"
                    );
                    if list.is_empty() {
                        // A policy needs a validation: the weakest one admits everything.
                        list.push(serde_json::json!({"expression": "true"}));
                    }
                }
                Weakening::DropMatchConditions => {
                    assert!(
                        spec.as_object_mut()
                            .and_then(|s| s.remove("matchConditions"))
                            .is_some()
                    );
                }
                Weakening::DropObjectSelector => {
                    let c = spec["matchConstraints"]
                        .as_object_mut()
                        .expect("matchConstraints");
                    assert!(c.remove("objectSelector").is_some());
                }
                Weakening::DropBinding => {}
            }
        }
        out.push(doc);
    }
    out
}

/// Makes the live policies equal to `docs`: applies each (server-side), deletes those of `all`
/// that `docs` lacks.
pub async fn set(client: &Client, all: &[Value], docs: &[Value]) {
    let policies: Api<ValidatingAdmissionPolicy> = Api::all(client.clone());
    let bindings: Api<ValidatingAdmissionPolicyBinding> = Api::all(client.clone());
    let params = PatchParams::apply(FIXTURE_MANAGER).force();
    for doc in docs {
        let (kind, name) = kind_and_name(doc);
        let result = match kind {
            "ValidatingAdmissionPolicy" => policies.patch(name, &params, &Patch::Apply(doc)).await.map(drop),
            "ValidatingAdmissionPolicyBinding" => {
                bindings.patch(name, &params, &Patch::Apply(doc)).await.map(drop)
            }
            other => panic!("unexpected {other} in the policies template"),
        };
        result.unwrap_or_else(|e| panic!("apply {kind} {name}: {e}"));
    }
    for doc in all {
        let (kind, name) = kind_and_name(doc);
        if docs.iter().any(|d| kind_and_name(d) == (kind, name)) {
            continue;
        }
        let result = match kind {
            "ValidatingAdmissionPolicy" => policies.delete(name, &DeleteParams::default()).await.map(drop),
            _ => bindings.delete(name, &DeleteParams::default()).await.map(drop),
        };
        match result {
            Ok(()) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => panic!("delete {kind} {name}: {e}"),
        }
    }
}

/// Removes every policy and binding of `all`.
pub async fn remove(client: &Client, all: &[Value]) {
    set(client, all, &[]).await;
}

/// A client of the admin kubeconfig that impersonates `user` in `groups`.
pub async fn impersonating(user: &str, groups: &[&str]) -> Client {
    let path = ClusterFiles::require().admin_kubeconfig;
    let kubeconfig = Kubeconfig::read_from(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    config.auth_info.impersonate = Some(user.to_owned());
    config.auth_info.impersonate_groups = Some(groups.iter().map(|g| (*g).to_owned()).collect());
    Client::try_from(config).unwrap_or_else(|e| panic!("client as {user}: {e}"))
}

/// What admission made of a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Admitted (and, for a dry run, not persisted).
    Admitted,
    /// Refused by admission or validation (400, 403 or 422), with the API server's message.
    Refused(String),
}

impl Verdict {
    /// The verdict of a request's result; any other failure panics.
    pub fn of<T>(result: Result<T, kube::Error>) -> Verdict {
        match result {
            Ok(_) => Verdict::Admitted,
            Err(kube::Error::Api(s)) if [400, 403, 422].contains(&s.code) => Verdict::Refused(s.message),
            Err(e) => panic!("the request failed outside admission: {e}"),
        }
    }

    /// Whether this is a refusal whose message contains `text`.
    pub fn refused_for(&self, text: &str) -> bool {
        matches!(self, Verdict::Refused(m) if m.contains(text))
    }
}

/// Polls `check` until it holds or [`PROPAGATION`] passes; whether it held.
pub async fn eventually<F, Fut>(mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + PROPAGATION;
    loop {
        if check().await {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
