//! Resources a narrowed `watchNamespace` strands: a PtahSchema or PtahMigration outside the
//! namespace the manager now reconciles still carries the manager's finalizer, and no manager
//! will remove it, so deleting the resource hangs. The retirement hook names each one with the
//! command that releases it; it releases none itself (a person decides whether to widen
//! `watchNamespace` again, so the manager finishes what the resource has in flight, or to let go).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{
    Api, Client,
    api::{ApiResource, DynamicObject, ListParams},
};
use ptah_api::{FINALIZER, PtahMigration, PtahSchema};

use crate::error::Error;

/// Objects per list page.
const PAGE: u32 = 250;

/// One resource outside the watched namespace that still carries the finalizer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stranded {
    /// `PtahSchema` or `PtahMigration`.
    pub kind: String,
    /// Its resource name for kubectl (`ptahschemas.operator.ptah.run`).
    pub resource: String,
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Where the finalizer sits in `metadata.finalizers` (the patch tests it is still there).
    pub index: usize,
    /// Its deletion was already requested, and hangs now.
    pub deleting: bool,
}

impl Stranded {
    /// The JSON patch that removes exactly the manager's finalizer: it first tests that the
    /// finalizer is still at the position seen, so it never removes another one.
    pub fn release_patch(&self) -> serde_json::Value {
        let path = format!("/metadata/finalizers/{}", self.index);
        serde_json::json!([
            {"op": "test", "path": path, "value": FINALIZER},
            {"op": "remove", "path": path},
        ])
    }

    /// The kubectl command that applies [`Self::release_patch`].
    pub fn release_command(&self) -> String {
        // Names, namespaces and the patch hold no single quote, so one pair of them quotes it.
        format!(
            "kubectl patch {} {} -n {} --type=json -p '{}'",
            self.resource,
            self.name,
            self.namespace,
            self.release_patch()
        )
    }

    /// The report line naming the resource, why it matters and how to release it.
    pub fn warning(&self, watch_namespace: &str) -> String {
        let hang = if self.deleting {
            "its deletion hangs now"
        } else {
            "deleting it will hang"
        };
        format!(
            "warning: {} {}/{} is outside watchNamespace {watch_namespace} and still carries the \
             finalizer {FINALIZER}; no manager removes it, so {hang}. Widen watchNamespace to let \
             the manager finish it, or release it (its Jobs are deleted with it, a realm Lease it \
             holds expires by itself): {}",
            self.kind,
            self.namespace,
            self.name,
            self.release_command()
        )
    }
}

/// Of the objects of `kind` (their metadata), those outside `watch_namespace` that carry the
/// finalizer. Pure.
pub fn stranded(kind: &ApiResource, objects: &[ObjectMeta], watch_namespace: &str) -> Vec<Stranded> {
    objects
        .iter()
        .filter(|m| m.namespace.as_deref() != Some(watch_namespace))
        .filter_map(|m| {
            let finalizers = m.finalizers.as_deref().unwrap_or_default();
            let index = finalizers.iter().position(|f| f == FINALIZER)?;
            Some(Stranded {
                kind: kind.kind.clone(),
                resource: format!("{}.{}", kind.plural, kind.group),
                namespace: m.namespace.clone().unwrap_or_default(),
                name: m.name.clone().unwrap_or_default(),
                index,
                deleting: m.deletion_timestamp.is_some(),
            })
        })
        .collect()
}

/// Every PtahSchema and PtahMigration of the cluster that `watch_namespace` strands.
pub async fn find(client: &Client, watch_namespace: &str) -> Result<Vec<Stranded>, Error> {
    let mut found = Vec::new();
    for kind in [
        ApiResource::erase::<PtahSchema>(&()),
        ApiResource::erase::<PtahMigration>(&()),
    ] {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &kind);
        let mut params = ListParams::default().limit(PAGE);
        loop {
            let page = api
                .list_metadata(&params)
                .await
                .map_err(Error::api("list", kind.plural.clone()))?;
            let metas: Vec<ObjectMeta> = page.items.into_iter().map(|m| m.metadata).collect();
            found.extend(stranded(&kind, &metas, watch_namespace));
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                Some(token) => params = params.continue_token(&token),
                None => break,
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(ns: &str, name: &str, finalizers: &[&str], deleting: bool) -> ObjectMeta {
        let mut meta = json!({"name": name, "namespace": ns, "finalizers": finalizers});
        if deleting {
            meta["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        }
        serde_json::from_value(meta).expect("metadata")
    }

    #[test]
    fn only_finalized_resources_outside_the_watched_namespace_are_stranded() {
        let kind = ApiResource::erase::<PtahSchema>(&());
        let objects = [
            object("shop", "watched", &[FINALIZER], false),
            object("billing", "orders", &["example.com/keep", FINALIZER], true),
            object("billing", "released", &["example.com/keep"], false),
            object("legacy", "idle", &[FINALIZER], false),
        ];
        let found = stranded(&kind, &objects, "shop");
        assert_eq!(
            found
                .iter()
                .map(|s| (s.namespace.as_str(), s.name.as_str(), s.index, s.deleting))
                .collect::<Vec<_>>(),
            [("billing", "orders", 1, true), ("legacy", "idle", 0, false)]
        );
        assert_eq!(
            found[0].release_command(),
            r#"kubectl patch ptahschemas.operator.ptah.run orders -n billing --type=json -p '[{"op":"test","path":"/metadata/finalizers/1","value":"operator.ptah.run/finalizer"},{"op":"remove","path":"/metadata/finalizers/1"}]'"#
        );
        let line = found[0].warning("shop");
        assert!(
            line.starts_with(
                "warning: PtahSchema billing/orders is outside watchNamespace shop and still carries the finalizer operator.ptah.run/finalizer"
            ) && line.contains("its deletion hangs now")
                && line.ends_with(&found[0].release_command()),
            "{line}"
        );
        assert!(found[1].warning("shop").contains("deleting it will hang"));
    }
}
