//! Shared helpers of the API-tier tests: clients, CRDs, namespaces, examples, refusals.

#![allow(dead_code)]

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{
    Api, Client,
    api::{ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, ValidationDirective},
    core::Status,
};
#[allow(unused_imports)] // each test binary uses a different subset
pub use ptah_apitests::client::{admin_client as admin, namespace, unique, user_client as user};
use ptah_apitests::workspace_root;
use serde_json::{Value, json};

/// The field manager of every apply.
pub const MANAGER: &str = "ptah-apitests";

/// The CRDs under test: `ptah_api::crds()`, or the `*.yaml` manifests in `$PTAH_APITESTS_CRDS`
/// (a directory, to try changed CRDs before the Rust types change).
pub fn crds_under_test() -> Vec<CustomResourceDefinition> {
    match std::env::var_os("PTAH_APITESTS_CRDS").filter(|v| !v.is_empty()) {
        None => ptah_api::crds().expect("generated CRDs"),
        Some(dir) => yaml_files(Path::new(&dir))
            .iter()
            .map(|path| {
                let (_, value) = read_manifest(path);
                serde_json::from_value(value).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            })
            .collect(),
    }
}

/// Applies every CRD under test (server-side apply) and waits until each is Established; fails
/// with every refusal when the API server refuses any of them.
pub async fn ensure_crds(client: &Client) -> Vec<CustomResourceDefinition> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crds = crds_under_test();
    let params = PatchParams::apply(MANAGER)
        .force()
        .validation(ValidationDirective::Strict);
    let mut refused = Vec::new();
    for crd in &crds {
        let name = crd.metadata.name.clone().expect("crd name");
        match api.patch(&name, &params, &Patch::Apply(crd)).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) => {
                let causes: Vec<String> = refusals(&status)
                    .into_iter()
                    .map(|(field, message)| format!("    {field}: {message}"))
                    .collect();
                refused.push(format!("{name} ({}):\n{}", status.code, causes.join("\n")));
            }
            Err(other) => panic!("apply CRD {name}: {other}"),
        }
    }
    assert!(
        refused.is_empty(),
        "the API server refuses {} of {} CRDs:\n{}",
        refused.len(),
        crds.len(),
        refused.join("\n")
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut established = Vec::new();
    for crd in &crds {
        let name = crd.metadata.name.clone().expect("crd name");
        loop {
            let live = api
                .get(&name)
                .await
                .unwrap_or_else(|e| panic!("get CRD {name}: {e}"));
            let ok = live
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Established" && c.status == "True"));
            if ok {
                established.push(live);
                break;
            }
            assert!(Instant::now() < deadline, "CRD {name} not Established after 60s");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    established
}

/// The API resource of a manifest (`operator.ptah.run/v1alpha1`, kind → lower-case plural).
pub fn resource_of(object: &Value) -> ApiResource {
    let api_version = object["apiVersion"].as_str().expect("apiVersion");
    let kind = object["kind"].as_str().expect("kind");
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let gvk = GroupVersionKind::gvk(group, version, kind);
    ApiResource::from_gvk_with_plural(&gvk, &format!("{}s", kind.to_lowercase()))
}

/// Is this kind cluster-scoped?
pub fn cluster_scoped(kind: &str) -> bool {
    kind == "PtahRealm"
}

/// The API for a manifest's kind in `namespace` (or cluster-wide for cluster-scoped kinds).
pub fn api_for(client: &Client, object: &Value, namespace: &str) -> Api<DynamicObject> {
    let resource = resource_of(object);
    if cluster_scoped(object["kind"].as_str().unwrap_or("")) {
        Api::all_with(client.clone(), &resource)
    } else {
        Api::namespaced_with(client.clone(), namespace, &resource)
    }
}

/// Moves a manifest into `namespace`; a cluster-scoped one gets `suffix` appended to its name
/// instead (unless `keep_name`), so tests never collide.
pub fn place(mut object: Value, namespace: &str, suffix: &str) -> Value {
    let kind = object["kind"].as_str().unwrap_or("").to_owned();
    if cluster_scoped(&kind) {
        if let Some(meta) = object["metadata"].as_object_mut() {
            meta.remove("namespace");
        }
        let name = object["metadata"]["name"].as_str().unwrap_or("x").to_owned();
        object["metadata"]["name"] = json!(format!("{name}-{suffix}"));
    } else {
        object["metadata"]["namespace"] = json!(namespace);
    }
    object
}

/// Server-side apply (strict field validation) of a manifest; a 404 right after the CRDs were
/// established (discovery catching up) is retried for a few seconds.
pub async fn apply(api: &Api<DynamicObject>, object: &Value) -> Result<DynamicObject, Box<Status>> {
    let name = object["metadata"]["name"].as_str().expect("name").to_owned();
    let dynamic: DynamicObject = serde_json::from_value(object.clone()).expect("dynamic object");
    let params = PatchParams::apply(MANAGER)
        .force()
        .validation(ValidationDirective::Strict);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match api.patch(&name, &params, &Patch::Apply(&dynamic)).await {
            Ok(applied) => return Ok(applied),
            Err(kube::Error::Api(status)) if status.code == 404 && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(kube::Error::Api(status)) => return Err(status),
            Err(other) => panic!("apply {name}: {other}"),
        }
    }
}

/// Server-side apply of `status` through the status subresource.
pub async fn apply_status(api: &Api<DynamicObject>, object: &Value) -> Result<DynamicObject, Box<Status>> {
    let name = object["metadata"]["name"].as_str().expect("name").to_owned();
    let dynamic: DynamicObject = serde_json::from_value(object.clone()).expect("dynamic object");
    let params = PatchParams::apply(MANAGER)
        .force()
        .validation(ValidationDirective::Strict);
    match api.patch_status(&name, &params, &Patch::Apply(&dynamic)).await {
        Ok(applied) => Ok(applied),
        Err(kube::Error::Api(status)) => Err(status),
        Err(other) => panic!("apply status of {name}: {other}"),
    }
}

/// `docs/examples`.
pub fn examples_dir() -> PathBuf {
    workspace_root().join("docs").join("examples")
}

/// The `*.yaml` files of a directory, sorted.
pub fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

/// A manifest's text and its JSON value.
pub fn read_manifest(path: &Path) -> (String, Value) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let value: Value = serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (text, value)
}

/// Header line `# key: value` of an invalid example.
pub fn header(text: &str, key: &str) -> Option<String> {
    let prefix = format!("# {key}:");
    text.lines()
        .take_while(|l| l.starts_with('#'))
        .find_map(|l| l.strip_prefix(&prefix).map(|v| v.trim().to_owned()))
}

/// API-server field paths (`spec.a[0].b`, `.spec`, `<nil>`) as dotted paths (`spec.a.0.b`).
pub fn normalise(field: &str) -> String {
    let field = if field == "<nil>" { "" } else { field };
    field
        .replace('[', ".")
        .replace(']', "")
        .trim_start_matches('.')
        .to_owned()
}

/// One refusal: (field, message) of each cause, or the whole message when there is no cause.
pub fn refusals(status: &Status) -> Vec<(String, String)> {
    let causes = status
        .details
        .as_ref()
        .map(|d| d.causes.clone())
        .unwrap_or_default();
    if causes.is_empty() {
        return vec![(String::new(), status.message.clone())];
    }
    causes
        .into_iter()
        .map(|c| (normalise(&c.field), c.message))
        .collect()
}

/// Does a refusal name `want` (the field itself, or a required child of it)?
pub fn at_field(field: &str, message: &str, want: &str) -> bool {
    field == want
        || (message.contains("Required value")
            && field
                .strip_prefix(want)
                .is_some_and(|rest| want.is_empty() || rest.starts_with('.')))
}

/// Does `stored` hold everything of `given` (the server may add defaults, never drop or change
/// what was applied)? Returns the first differing path.
pub fn missing_from(stored: &Value, given: &Value, path: &str) -> Option<String> {
    match (stored, given) {
        (Value::Object(stored), Value::Object(given)) => given.iter().find_map(|(key, value)| {
            let at = format!("{path}.{key}");
            match stored.get(key) {
                Some(found) => missing_from(found, value, &at),
                None => Some(at),
            }
        }),
        (Value::Array(stored), Value::Array(given)) if stored.len() == given.len() => stored
            .iter()
            .zip(given)
            .enumerate()
            .find_map(|(i, (s, g))| missing_from(s, g, &format!("{path}.{i}"))),
        (stored, given) => (stored != given).then(|| format!("{path}: {given} stored as {stored}")),
    }
}

/// Does a refusal at the expected field say `message`? A "Required value" refusal names the
/// missing field in its path rather than in its message.
pub fn says(field: &str, message: &str, wanted: &str) -> bool {
    message.contains(wanted) || (message.contains("Required value") && field.contains(wanted))
}
