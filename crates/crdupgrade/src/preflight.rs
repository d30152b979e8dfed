//! The checks every install, upgrade and rollback runs before anything is written: one release
//! per cluster, a supported API server, no stored state newer than this release.

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{Api, Client, Resource};

use crate::{
    error::{Error, Refusal},
    scan::{self, Scanned, Scope},
    window::SupportWindow,
};

/// The Helm annotations naming the release that owns an object.
const RELEASE_NAME: &str = "meta.helm.sh/release-name";
const RELEASE_NAMESPACE: &str = "meta.helm.sh/release-namespace";

/// The release a hook runs for.
#[derive(Clone, Debug)]
pub struct Release {
    /// The Helm release name.
    pub name: String,
    /// The release namespace.
    pub namespace: String,
    /// The name of both admission configurations (the cluster singleton).
    pub webhook_configuration: String,
    /// Where the controller state lives.
    pub coordination_namespace: String,
}

impl Release {
    fn id(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// The release's admission configuration of kind `K`, if it exists (whoever owns it).
    pub(crate) async fn admission<K: Admission>(&self, client: &Client) -> Result<Option<K>, Error> {
        let name = &self.webhook_configuration;
        Api::<K>::all(client.clone())
            .get_opt(name)
            .await
            .map_err(Error::api("get", format!("{} {name}", K::kind(&()))))
    }

    /// Whether Helm recorded this release as the owner of the object with `meta`.
    pub fn owns(&self, meta: &ObjectMeta) -> bool {
        owner(meta).is_some_and(|o| o == self.id())
    }
}

/// A cluster-scoped admission configuration kind (mutating or validating).
pub(crate) trait Admission:
    Resource<Scope = k8s_openapi::ClusterResourceScope, DynamicType = ()>
    + Clone
    + serde::de::DeserializeOwned
    + std::fmt::Debug
{
}

impl<K> Admission for K where
    K: Resource<Scope = k8s_openapi::ClusterResourceScope, DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
{
}

/// `<namespace>/<release>` Helm recorded on the object, if any.
fn owner(meta: &ObjectMeta) -> Option<String> {
    let annotations = meta.annotations.as_ref()?;
    Some(format!(
        "{}/{}",
        annotations.get(RELEASE_NAMESPACE)?,
        annotations.get(RELEASE_NAME)?
    ))
}

/// What the preflight saw.
#[derive(Debug)]
pub struct Preflight {
    /// The server's `major.minor`.
    pub server: String,
    /// Objects scanned per kind.
    pub scanned: Scanned,
}

/// Runs every check; `objects_in` limits the object scan to one namespace (tests).
pub async fn run(
    client: &Client,
    release: &Release,
    window: SupportWindow,
    objects_in: Option<&str>,
) -> Result<Preflight, Error> {
    singleton::<MutatingWebhookConfiguration>(client, release).await?;
    singleton::<ValidatingWebhookConfiguration>(client, release).await?;
    let info = client
        .apiserver_version()
        .await
        .map_err(Error::api("get", "/version"))?;
    window.check(&info.major, &info.minor)?;
    let scope = Scope {
        coordination_namespace: &release.coordination_namespace,
        objects_in,
    };
    let scanned = scan::stored_state(client, &scope).await?;
    Ok(Preflight {
        server: format!("{}.{}", info.major, info.minor),
        scanned,
    })
}

/// Refuses when the admission configuration of kind `K` exists and another release owns it.
async fn singleton<K: Admission>(client: &Client, release: &Release) -> Result<(), Error> {
    let kind = K::kind(&()).into_owned();
    let Some(live) = release.admission::<K>(client).await? else {
        return Ok(());
    };
    if release.owns(live.meta()) {
        return Ok(());
    }
    Err(Refusal::SecondRelease {
        kind,
        name: release.webhook_configuration.clone(),
        other: owner(live.meta())
            .unwrap_or_else(|| "(none recorded: it was not installed by Helm)".to_owned()),
        ours: release.id(),
    }
    .into())
}
