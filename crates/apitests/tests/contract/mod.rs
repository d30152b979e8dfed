//! The control-plane contract as the API server enforces it, one check per function: the CRDs
//! served, the documented examples accepted or refused at their field, immutable specs, and the
//! unprivileged user's RBAC refusals. The API tier (`api.rs`) runs them against CRDs it applies;
//! the `assert` phase of the `data-plane` suite (`dataplane.rs`) against a live release.

// Each test target that includes this module calls a different part of it.
#![allow(dead_code)]

use std::collections::BTreeSet;

use k8s_openapi::{
    api::{
        core::v1::Secret,
        rbac::v1::{Role, RoleBinding},
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{
    Api, Client,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use ptah_apitests::ClusterFiles;
use serde_json::{Value, json};

use crate::common::{
    api_for, apply, apply_status, at_field, examples_dir, header, missing_from, namespace, place,
    read_manifest, refusals, says, unique, user, yaml_files,
};

/// Every CRD of `crds` (established) is ours, with its kind accepted: ten kinds.
pub fn the_generated_crds_are_established_with_every_kind_served(crds: &[CustomResourceDefinition]) {
    let files = ClusterFiles::require();
    assert!(files.version.starts_with("v1."), "{}", files.version);
    let kinds: BTreeSet<String> = crds.iter().map(|c| c.spec.names.kind.clone()).collect();
    assert_eq!(kinds.len(), 10, "{kinds:?}");
    for crd in crds {
        let name = crd.metadata.name.clone().unwrap_or_default();
        assert!(name.ends_with(".operator.ptah.run"), "{name}");
        let accepted = crd
            .status
            .as_ref()
            .and_then(|s| s.accepted_names.as_ref())
            .map(|n| n.kind.clone());
        assert_eq!(accepted.as_deref(), Some(crd.spec.names.kind.as_str()), "{name}");
    }
}

pub async fn every_valid_example_is_accepted_and_read_back(client: &Client) {
    let ns = namespace(client, "valid").await;
    let suffix = unique("v");
    let files = yaml_files(&examples_dir());
    assert_eq!(files.len(), 10);
    for path in files {
        let (_, object) = read_manifest(&path);
        let object = place(object, &ns, &suffix);
        let api = api_for(client, &object, &ns);
        let applied = apply(&api, &object)
            .await
            .unwrap_or_else(|status| panic!("{} refused: {:?}", path.display(), refusals(&status)));
        let differs = missing_from(&applied.data["spec"], &object["spec"], "spec");
        assert_eq!(
            differs,
            None,
            "{}: the stored spec lost or changed a field",
            path.display()
        );
        assert!(applied.metadata.uid.is_some(), "{}", path.display());
    }
}

/// Applies one invalid example (after its `old` object, or after the object without status
/// for a status refusal) and returns the refusal.
async fn refusal_of(
    client: &kube::Client,
    ns: &str,
    text: &str,
    object: Value,
) -> Result<(), Vec<(String, String)>> {
    let suffix = unique("i");
    let object = place(object, ns, &suffix);
    let api = api_for(client, &object, ns);
    let want_path = header(text, "expect-path").unwrap_or_default();
    if let Some(old) = header(text, "old") {
        let (_, old) = read_manifest(&examples_dir().join(old));
        let old = place(old, ns, &suffix);
        apply(&api, &old).await.unwrap_or_else(|s| {
            panic!(
                "the old object {} is refused: {:?}",
                old["metadata"]["name"],
                refusals(&s)
            )
        });
    }
    let result = if want_path.starts_with("status") {
        let mut without = object.clone();
        if let Some(map) = without.as_object_mut() {
            map.remove("status");
        }
        apply(&api, &without)
            .await
            .unwrap_or_else(|s| panic!("the object without status is refused: {:?}", refusals(&s)));
        apply_status(&api, &object).await
    } else {
        apply(&api, &object).await
    };
    match result {
        Ok(_) => Ok(()),
        Err(status) => {
            assert_eq!(status.code, 422, "not an Invalid refusal: {status:?}");
            Err(refusals(&status))
        }
    }
}

pub async fn every_invalid_example_is_refused_at_its_field_with_its_message(client: &Client) {
    let ns = namespace(client, "invalid").await;
    let files = yaml_files(&examples_dir().join("invalid"));
    assert!(files.len() >= 40, "only {} invalid examples", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let (text, object) = read_manifest(path);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let want_path = header(&text, "expect-path").unwrap_or_default();
        let want_message = header(&text, "expect-message");
        match refusal_of(client, &ns, &text, object).await {
            Ok(()) => failures.push(format!("{name}: ACCEPTED, but must be refused at {want_path:?}")),
            Err(found) => {
                let at: Vec<&(String, String)> = found
                    .iter()
                    .filter(|(field, message)| at_field(field, message, &want_path))
                    .collect();
                if at.is_empty() {
                    failures.push(format!("{name}: refused, but not at {want_path:?}: {found:?}"));
                } else if let Some(message) = &want_message
                    && !at.iter().any(|(field, m)| says(field, m, message))
                {
                    failures.push(format!(
                        "{name}: refused at {want_path:?} without {message:?}: {at:?}"
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} invalid examples misbehave on the real API server:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

pub async fn plans_chunks_approvals_and_acknowledgments_refuse_spec_updates_by_put_and_merge_patch(
    client: &Client,
) {
    let ns = namespace(client, "immutable").await;
    let changed = [
        "ptahschemaplan-changed.yaml",
        "ptahschemaplanchunk-changed.yaml",
        "ptahschemaapproval-changed.yaml",
        "ptahmigrationplan-changed.yaml",
        "ptahmigrationapproval-changed.yaml",
        "ptahmigrationrunacknowledgment-changed.yaml",
    ];
    for file in changed {
        let (text, new) = read_manifest(&examples_dir().join("invalid").join(file));
        let old_file = header(&text, "old").unwrap_or_else(|| panic!("{file}: no old header"));
        let (_, old) = read_manifest(&examples_dir().join(old_file));
        let suffix = unique("m");
        let old = place(old, &ns, &suffix);
        let new = place(new, &ns, &suffix);
        assert_ne!(old["spec"], new["spec"], "{file}: the spec does not change");
        let api = api_for(client, &old, &ns);
        let name = old["metadata"]["name"].as_str().expect("name").to_owned();
        let created = apply(&api, &old)
            .await
            .unwrap_or_else(|s| panic!("{file}: old refused: {:?}", refusals(&s)));

        // PUT of the whole object with the new spec.
        let mut replaced = created.clone();
        replaced.data["spec"] = new["spec"].clone();
        let err = api
            .replace(&name, &PostParams::default(), &replaced)
            .await
            .expect_err(&format!("{file}: PUT with a new spec accepted"));
        let kube::Error::Api(status) = err else {
            panic!("{file}: {err}")
        };
        assert_eq!(status.code, 422, "{file}: {status:?}");
        assert!(
            refusals(&status)
                .iter()
                .any(|(field, message)| field.starts_with("spec") && message.contains("immutable")),
            "{file}: {:?}",
            refusals(&status)
        );

        // JSON merge patch of the spec.
        let patch = json!({"spec": new["spec"]});
        let err = api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect_err(&format!("{file}: merge patch of the spec accepted"));
        let kube::Error::Api(status) = err else {
            panic!("{file}: {err}")
        };
        assert_eq!(status.code, 422, "{file}: {status:?}");

        // Metadata stays mutable: only the spec is frozen.
        let label = json!({"metadata": {"labels": {"ptah.run/test": "relabelled"}}});
        let relabelled = api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&label))
            .await
            .unwrap_or_else(|e| panic!("{file}: a label change was refused: {e}"));
        assert_eq!(
            missing_from(&relabelled.data["spec"], &old["spec"], "spec"),
            None,
            "{file}"
        );
        assert_eq!(
            relabelled
                .metadata
                .labels
                .unwrap_or_default()
                .get("ptah.run/test")
                .map(String::as_str),
            Some("relabelled")
        );
    }
}

pub async fn the_unprivileged_user_is_refused_where_rbac_says_so(admin: &Client) {
    let files = ClusterFiles::require();
    let granted = namespace(admin, "rbac-granted").await;
    let other = namespace(admin, "rbac-other").await;

    // Read-only access to PtahSchemas in one namespace, nothing else.
    let role: Role = serde_json::from_value(json!({
        "metadata": {"name": "ptah-schema-reader", "namespace": granted},
        "rules": [{"apiGroups": ["operator.ptah.run"], "resources": ["ptahschemas"], "verbs": ["get", "list", "watch"]}]
    }))
    .expect("role");
    Api::<Role>::namespaced(admin.clone(), &granted)
        .create(&PostParams::default(), &role)
        .await
        .expect("create role");
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "ptah-schema-reader", "namespace": granted},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "ptah-schema-reader"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": files.user_name}]
    }))
    .expect("binding");
    Api::<RoleBinding>::namespaced(admin.clone(), &granted)
        .create(&PostParams::default(), &binding)
        .await
        .expect("create binding");

    let (_, schema) = read_manifest(&examples_dir().join("ptahschema.yaml"));
    let schema = place(schema, &granted, "unused");
    apply(&api_for(admin, &schema, &granted), &schema)
        .await
        .unwrap_or_else(|s| panic!("admin apply: {:?}", refusals(&s)));

    let user = user().await;
    let schemas = api_for(&user, &schema, &granted);
    // RBAC is evaluated per request; the binding may take a moment to reach the authorizer cache.
    let mut listed = None;
    for _ in 0..50 {
        match schemas.list(&ListParams::default()).await {
            Ok(list) => {
                listed = Some(list);
                break;
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
        }
    }
    let listed = listed.expect("the bound user can list PtahSchemas in its namespace");
    assert_eq!(listed.items.len(), 1);

    let forbidden = |what: &str, result: Result<(), kube::Error>| match result {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 403, "{what}: {status:?}");
            assert!(
                status.message.contains(&files.user_name),
                "{what}: {}",
                status.message
            );
        }
        Ok(()) => panic!("{what}: allowed to the unprivileged user"),
        Err(other) => panic!("{what}: {other}"),
    };
    let mut changed = schema.clone();
    changed["metadata"]["name"] = json!("created-by-user");
    forbidden(
        "create a PtahSchema",
        apply(&schemas, &changed)
            .await
            .map(|_| ())
            .map_err(kube::Error::Api),
    );
    forbidden(
        "list PtahSchemas in another namespace",
        api_for(&user, &schema, &other)
            .list(&ListParams::default())
            .await
            .map(|_| ()),
    );
    forbidden(
        "list Secrets",
        Api::<Secret>::namespaced(user.clone(), &granted)
            .list(&ListParams::default())
            .await
            .map(|_| ()),
    );
    let (_, plan) = read_manifest(&examples_dir().join("ptahschemaplan.yaml"));
    forbidden(
        "list PtahSchemaPlans",
        api_for(&user, &plan, &granted)
            .list(&ListParams::default())
            .await
            .map(|_| ()),
    );
    forbidden(
        "delete a CRD",
        Api::<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition>::all(
            user.clone(),
        )
        .delete("ptahschemas.operator.ptah.run", &Default::default())
        .await
        .map(|_| ()),
    );
}
