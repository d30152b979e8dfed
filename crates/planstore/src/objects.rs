//! The objects the store writes: their names, labels and owner references, built and compared
//! in one place so publish, load and project agree on what "ours" means.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::Resource;

use crate::PlanStoreError;

/// Label naming the PtahSchema a plan, chunk or projection belongs to.
pub const LABEL_SCHEMA: &str = "operator.ptah.run/schema";
/// Label naming the PtahSchemaPlan a chunk or projection belongs to.
pub const LABEL_PLAN: &str = "operator.ptah.run/plan";

/// Namespace, name and UID of an object that owns what the store writes.
#[derive(Clone, Debug)]
pub(crate) struct Owner {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    reference: OwnerReference,
}

impl Owner {
    /// The identity of `obj`, refusing one that lacks namespace, name or UID.
    pub fn of<K: Resource<DynamicType = ()>>(obj: &K) -> Result<Self, PlanStoreError> {
        let meta = obj.meta();
        let field = |v: &Option<String>, field| v.clone().ok_or(PlanStoreError::InvalidOwner { field });
        let namespace = field(&meta.namespace, "namespace")?;
        let name = field(&meta.name, "name")?;
        let uid = field(&meta.uid, "uid")?;
        // Controller and blocking: foreground deletion of the owner waits for what it owns.
        let reference = OwnerReference {
            api_version: K::api_version(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
            name: name.clone(),
            uid: uid.clone(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        };
        Ok(Owner {
            namespace,
            name,
            uid,
            reference,
        })
    }

    /// The controller owner reference to this object.
    pub fn reference(&self) -> OwnerReference {
        self.reference.clone()
    }

    /// How `meta`'s owner references relate to this owner.
    pub fn ownership(&self, meta: &ObjectMeta) -> Ownership {
        let refs = meta.owner_references.as_deref().unwrap_or_default();
        if refs.contains(&self.reference) {
            return Ownership::Ours;
        }
        let other_incarnation = refs.iter().any(|r| {
            r.kind == self.reference.kind && r.name == self.reference.name && r.uid != self.reference.uid
        });
        if other_incarnation {
            Ownership::Predecessor
        } else {
            Ownership::Foreign
        }
    }
}

/// Who owns an existing object with a name the store wanted to create.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ownership {
    /// Exactly our controller reference.
    Ours,
    /// An earlier object of the same kind and name (deleted and recreated since): GC removes it.
    Predecessor,
    /// Anything else.
    Foreign,
}

/// The labels of a plan.
pub(crate) fn plan_labels(schema: &str) -> BTreeMap<String, String> {
    BTreeMap::from([(LABEL_SCHEMA.to_owned(), schema.to_owned())])
}

/// The labels of a chunk or projection of `plan`.
pub(crate) fn chunk_labels(plan: &str, schema: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (LABEL_PLAN.to_owned(), plan.to_owned()),
        (LABEL_SCHEMA.to_owned(), schema.to_owned()),
    ])
}

/// Whether `meta` carries each of `want` with exactly that value.
pub(crate) fn has_labels(meta: &ObjectMeta, want: &BTreeMap<String, String>) -> bool {
    let labels = meta.labels.as_ref();
    want.iter().all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
}

/// Refuses an object being deleted: whatever it holds is about to vanish.
pub(crate) fn not_deleting(meta: &ObjectMeta, what: impl FnOnce() -> String) -> Result<(), PlanStoreError> {
    match meta.deletion_timestamp {
        Some(_) => Err(PlanStoreError::Deleting { what: what() }),
        None => Ok(()),
    }
}

/// The error for an existing object with our name: stale when a predecessor owns it, else a conflict.
pub(crate) fn occupied(ownership: Ownership, what: String) -> PlanStoreError {
    match ownership {
        Ownership::Predecessor => PlanStoreError::Stale {
            what: format!("{what} belongs to an earlier owner of the same name"),
        },
        Ownership::Ours | Ownership::Foreign => PlanStoreError::Conflict { what },
    }
}

/// The UID of a live object (the API server always sets one).
pub(crate) fn uid_of(meta: &ObjectMeta) -> String {
    meta.uid.clone().unwrap_or_default()
}
