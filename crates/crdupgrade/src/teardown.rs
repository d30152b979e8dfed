//! Before an uninstall: remove the admission configurations first, so an uninstalled operator
//! cannot fail-close the cluster's approval writes, never run SQL, and leave the CRDs and every
//! user object in place unless told otherwise.

use k8s_openapi::{
    api::admissionregistration::v1::{MutatingWebhookConfiguration, ValidatingWebhookConfiguration},
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{
    Api, Client,
    api::{ApiResource, DeleteParams, DynamicObject, ListParams},
};

use crate::{
    error::{Error, Refusal},
    preflight::{Admission, Release},
};

/// What the teardown did and left.
#[derive(Debug, Default)]
pub struct Teardown {
    /// Admission configurations deleted.
    pub removed: Vec<String>,
    /// Per kind: objects that stay.
    pub remaining: Vec<(String, usize)>,
    /// CRDs deleted (only with `keep_crds = false` and no objects left).
    pub deleted_crds: Vec<String>,
}

/// Runs the teardown for `release` over the shipped `crds`.
pub async fn run(
    client: &Client,
    release: &Release,
    crds: &[CustomResourceDefinition],
    keep_crds: bool,
) -> Result<Teardown, Error> {
    let mut report = Teardown::default();
    for crd in crds {
        let count = count(client, crd).await?;
        if !keep_crds && count > 0 {
            return Err(Refusal::ObjectsRemain {
                kind: crd.spec.names.kind.clone(),
                count,
            }
            .into());
        }
        report.remaining.push((crd.spec.names.kind.clone(), count));
    }
    for removed in [
        remove::<MutatingWebhookConfiguration>(client, release).await?,
        remove::<ValidatingWebhookConfiguration>(client, release).await?,
    ]
    .into_iter()
    .flatten()
    {
        report.removed.push(removed);
    }
    if !keep_crds {
        let api: Api<CustomResourceDefinition> = Api::all(client.clone());
        for crd in crds {
            let name = crd.metadata.name.clone().unwrap_or_default();
            match api.delete(&name, &DeleteParams::default()).await {
                Ok(_) => report.deleted_crds.push(name),
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => {
                    return Err(Error::api("delete", format!("CustomResourceDefinition {name}"))(
                        e,
                    ));
                }
            }
        }
    }
    Ok(report)
}

/// Objects of `crd`'s kind in the cluster (0 when the CRD is gone).
async fn count(client: &Client, crd: &CustomResourceDefinition) -> Result<usize, Error> {
    let version = crd
        .spec
        .versions
        .iter()
        .find(|v| v.storage)
        .map(|v| v.name.clone())
        .unwrap_or_default();
    let resource = ApiResource {
        group: crd.spec.group.clone(),
        version: version.clone(),
        api_version: format!("{}/{version}", crd.spec.group),
        kind: crd.spec.names.kind.clone(),
        plural: crd.spec.names.plural.clone(),
    };
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let mut params = ListParams::default().limit(500);
    let mut total = 0;
    loop {
        let page = match api.list_metadata(&params).await {
            Ok(page) => page,
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(0),
            Err(e) => return Err(Error::api("list", resource.plural.clone())(e)),
        };
        total += page.items.len();
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(total),
        }
    }
}

/// Deletes the configuration of kind `K` when this release owns it; `None` when absent or foreign.
async fn remove<K: Admission>(client: &Client, release: &Release) -> Result<Option<String>, Error> {
    let api: Api<K> = Api::all(client.clone());
    let name = &release.webhook_configuration;
    let object = format!("{} {name}", K::kind(&()));
    let Some(live) = release.admission::<K>(client).await? else {
        return Ok(None);
    };
    if !release.owns(live.meta()) {
        tracing::warn!(%object, "left alone: it belongs to another release");
        return Ok(None);
    }
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(Some(object)),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(None),
        Err(e) => Err(Error::api("delete", object)(e)),
    }
}
