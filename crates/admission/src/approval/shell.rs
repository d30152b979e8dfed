//! What the shells of every decision kind share: the kinds, the namespace, the uncached GET.

use std::fmt::Debug;

use k8s_openapi::NamespaceResourceScope;
use kube::core::DynamicObject;
use kube::core::admission::AdmissionRequest;
use kube::{Api, Resource};
use serde::de::DeserializeOwned;

use crate::review::Verdict;

/// The kind of a schema approval.
pub(super) const SCHEMA_APPROVAL: &str = "PtahSchemaApproval";
/// The kind of a migration approval.
pub(super) const MIGRATION_APPROVAL: &str = "PtahMigrationApproval";
/// The kind of a run acknowledgment.
pub(super) const RUN_ACKNOWLEDGMENT: &str = "PtahMigrationRunAcknowledgment";

/// The request's namespace; a decision is always namespaced.
pub(super) fn namespace(req: &AdmissionRequest<DynamicObject>) -> Result<&str, Verdict> {
    req.namespace
        .as_deref()
        .filter(|ns| !ns.is_empty())
        .ok_or_else(|| Verdict::deny("the approval has no namespace"))
}

/// One uncached GET of `name` (`noun` in messages).
pub(super) async fn get_live<K>(client: &kube::Client, ns: &str, name: &str, noun: &str) -> Result<K, Verdict>
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()> + Clone + DeserializeOwned + Debug,
{
    let api: Api<K> = Api::namespaced(client.clone(), ns);
    match api.get_opt(name).await {
        Ok(Some(object)) => Ok(object),
        Ok(None) => Err(Verdict::deny(format!("{noun} {name} does not exist"))),
        Err(e) => Err(Verdict::deny(format!("cannot read {noun} {name}: {e}"))),
    }
}
