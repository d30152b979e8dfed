//! Put the CA bundle into every webhook of the named webhook configurations.

use std::fmt::Debug;

use k8s_openapi::{
    ByteString,
    api::admissionregistration::v1::{
        MutatingWebhookConfiguration, ValidatingWebhookConfiguration, WebhookClientConfig,
    },
};
use kube::{Api, Client, Resource, api::PostParams};
use serde::{Serialize, de::DeserializeOwned};

use crate::{CertRotationError, FIELD_MANAGER, RotationConfig};

/// How many times an update is retried after a resourceVersion conflict before the pass fails.
const CONFLICT_RETRIES: usize = 5;

/// What injecting did to one webhook configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Injection {
    /// At least one webhook had another bundle; the configuration was updated.
    Updated,
    /// Every webhook already had the bundle.
    Unchanged,
    /// The configuration does not exist (yet: a Helm hook runs before it is installed).
    Missing,
}

/// A webhook configuration kind whose webhooks each carry a `clientConfig`.
trait WebhookConfiguration:
    Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// Every webhook's client configuration.
    fn client_configs(&mut self) -> Vec<&mut WebhookClientConfig>;
}

impl WebhookConfiguration for MutatingWebhookConfiguration {
    fn client_configs(&mut self) -> Vec<&mut WebhookClientConfig> {
        self.webhooks
            .iter_mut()
            .flatten()
            .map(|w| &mut w.client_config)
            .collect()
    }
}

impl WebhookConfiguration for ValidatingWebhookConfiguration {
    fn client_configs(&mut self) -> Vec<&mut WebhookClientConfig> {
        self.webhooks
            .iter_mut()
            .flatten()
            .map(|w| &mut w.client_config)
            .collect()
    }
}

async fn inject<K: WebhookConfiguration>(
    client: &Client,
    name: &str,
    bundle: &[u8],
) -> Result<Injection, CertRotationError> {
    let api: Api<K> = Api::all(client.clone());
    let what = format!("{} {name}", K::kind(&()));
    let params = PostParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PostParams::default()
    };
    for _ in 0..CONFLICT_RETRIES {
        let Some(mut config) = api
            .get_opt(name)
            .await
            .map_err(|e| CertRotationError::api(format!("get {what}"), e))?
        else {
            return Ok(Injection::Missing);
        };
        let mut changed = false;
        for client_config in config.client_configs() {
            if client_config.ca_bundle.as_ref().map(|b| b.0.as_slice()) != Some(bundle) {
                client_config.ca_bundle = Some(ByteString(bundle.to_vec()));
                changed = true;
            }
        }
        if !changed {
            return Ok(Injection::Unchanged);
        }
        // The object carries the resourceVersion we read: a concurrent writer (Helm) makes this a 409.
        match api.replace(name, &params, &config).await {
            Ok(_) => return Ok(Injection::Updated),
            Err(kube::Error::Api(status)) if status.code == 409 => continue,
            Err(e) => return Err(CertRotationError::api(format!("update {what}"), e)),
        }
    }
    Err(CertRotationError::Conflict { what })
}

/// Injects `bundle` into every configured webhook configuration, returning each one's outcome by name.
pub async fn inject_bundle(
    client: &Client,
    config: &RotationConfig,
    bundle: &[u8],
) -> Result<Vec<(String, Injection)>, CertRotationError> {
    let mut outcomes = Vec::new();
    for name in &config.mutating_webhooks {
        let outcome = inject::<MutatingWebhookConfiguration>(client, name, bundle).await?;
        outcomes.push((format!("MutatingWebhookConfiguration/{name}"), outcome));
    }
    for name in &config.validating_webhooks {
        let outcome = inject::<ValidatingWebhookConfiguration>(client, name, bundle).await?;
        outcomes.push((format!("ValidatingWebhookConfiguration/{name}"), outcome));
    }
    Ok(outcomes)
}
