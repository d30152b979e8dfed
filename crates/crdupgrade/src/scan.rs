//! The downgrade fence: every stored controller-state version, in the state ConfigMap and in every
//! object of a stateful kind, must be one this release understands.

use kube::{
    Api, Client, ResourceExt,
    api::{ApiResource, DynamicObject, ListParams},
};
use ptah_api::{
    PtahMigration, PtahMigrationApproval, PtahMigrationPlan, PtahSchema, PtahSchemaApproval, PtahSchemaPlan,
};
use ptah_controllerstate::{CONTROLLER_STATE_VERSION, STATE_CONFIGMAP, StateError};
use serde_json::Value;

use crate::error::{Error, Refusal, bounded};

/// The field every stored controller-state version is written under, wherever it sits.
const FIELD: &str = "controllerStateVersion";
/// Objects per list page.
const PAGE: u32 = 250;

/// The kinds whose objects record a controller-state version.
pub fn stateful_kinds() -> Vec<ApiResource> {
    vec![
        ApiResource::erase::<PtahSchema>(&()),
        ApiResource::erase::<PtahSchemaPlan>(&()),
        ApiResource::erase::<PtahSchemaApproval>(&()),
        ApiResource::erase::<PtahMigration>(&()),
        ApiResource::erase::<PtahMigrationPlan>(&()),
        ApiResource::erase::<PtahMigrationApproval>(&()),
    ]
}

/// Where to look: the coordination namespace's state ConfigMap, and objects in every namespace
/// (`None`) or one (tests).
pub struct Scope<'a> {
    /// Namespace of the state ConfigMap.
    pub coordination_namespace: &'a str,
    /// Limit the object scan to one namespace.
    pub objects_in: Option<&'a str>,
}

/// How many objects were scanned, per kind (for the report).
pub type Scanned = Vec<(String, usize)>;

/// Refuses a newer or malformed stored version anywhere in `scope`.
pub async fn stored_state(client: &Client, scope: &Scope<'_>) -> Result<Scanned, Error> {
    match ptah_controllerstate::load(client.clone(), scope.coordination_namespace).await {
        Ok(_) => {}
        Err(StateError::StoredStateNewer { stored, ours, .. }) => {
            return Err(Refusal::StoredStateNewer {
                object: format!("ConfigMap {}/{STATE_CONFIGMAP}", scope.coordination_namespace),
                stored,
                ours,
            }
            .into());
        }
        Err(StateError::Corrupt { reason, .. }) => {
            return Err(Refusal::StoredStateMalformed {
                object: format!("ConfigMap {}/{STATE_CONFIGMAP}", scope.coordination_namespace),
                found: bounded(&reason),
            }
            .into());
        }
        Err(other) => return Err(other.into()),
    }
    let mut scanned = Vec::new();
    for kind in stateful_kinds() {
        let count = scan_kind(client, &kind, scope.objects_in).await?;
        scanned.push((kind.kind.clone(), count));
    }
    Ok(scanned)
}

/// Lists every object of `kind` page by page (a CRD that does not exist yet holds none).
async fn scan_kind(client: &Client, kind: &ApiResource, namespace: Option<&str>) -> Result<usize, Error> {
    let api: Api<DynamicObject> = match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, kind),
        None => Api::all_with(client.clone(), kind),
    };
    let mut params = ListParams::default().limit(PAGE);
    let mut count = 0;
    loop {
        let page = match api.list(&params).await {
            Ok(page) => page,
            Err(kube::Error::Api(status)) if status.code == 404 && count == 0 => return Ok(0),
            Err(e) => return Err(Error::api("list", kind.plural.clone())(e)),
        };
        for object in &page.items {
            let object_name = format!(
                "{} {}/{}",
                kind.kind,
                object.namespace().unwrap_or_default(),
                object.name_any()
            );
            check(&object.data, &object_name)?;
            count += 1;
        }
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(count),
        }
    }
}

/// Refuses any `controllerStateVersion` under `value` that is not an integer in
/// `1..=CONTROLLER_STATE_VERSION`.
pub fn check(value: &Value, object: &str) -> Result<(), Refusal> {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                if key == FIELD {
                    match child.as_i64() {
                        Some(v) if v > CONTROLLER_STATE_VERSION => {
                            return Err(Refusal::StoredStateNewer {
                                object: object.to_owned(),
                                stored: v,
                                ours: CONTROLLER_STATE_VERSION,
                            });
                        }
                        Some(v) if v >= 1 => {}
                        _ => {
                            return Err(Refusal::StoredStateMalformed {
                                object: object.to_owned(),
                                found: bounded(&child.to_string()),
                            });
                        }
                    }
                } else {
                    check(child, object)?;
                }
            }
            Ok(())
        }
        Value::Array(items) => items.iter().try_for_each(|item| check(item, object)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_nested_version_is_checked() {
        let ok = json!({"spec": {"binding": {"controllerStateVersion": 1}}, "status": {"executionBinding": {"controllerStateVersion": 1}}});
        assert_eq!(check(&ok, "x"), Ok(()));
        let newer = json!({"status": {"plan": [{"binding": {"controllerStateVersion": CONTROLLER_STATE_VERSION + 1}}]}});
        assert!(matches!(
            check(&newer, "x"),
            Err(Refusal::StoredStateNewer { .. })
        ));
        for bad in [json!(0), json!(-3), json!("1"), json!(1.5), Value::Null] {
            let doc = json!({"status": {"executionBinding": {"controllerStateVersion": bad}}});
            assert!(
                matches!(check(&doc, "x"), Err(Refusal::StoredStateMalformed { .. })),
                "{doc}"
            );
        }
    }
}
