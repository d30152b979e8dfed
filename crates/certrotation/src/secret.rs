//! Read and write the TLS Secret with optimistic concurrency (every update carries the resourceVersion read).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api,
    api::{ObjectMeta, PostParams},
};

use crate::{CertRotationError, FIELD_MANAGER, RotationConfig, SECRET_TYPE, TlsFiles};

/// Labels the rotator puts on a Secret it creates.
fn labels() -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            "app.kubernetes.io/managed-by".to_owned(),
            FIELD_MANAGER.to_owned(),
        ),
        ("app.kubernetes.io/component".to_owned(), "webhook-tls".to_owned()),
    ])
}

fn what(config: &RotationConfig) -> String {
    format!("Secret {}/{}", config.namespace, config.secret_name)
}

fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

/// The Secret, or `None` when it does not exist; one of another type is an error (its type is immutable).
pub(crate) async fn read(
    api: &Api<Secret>,
    config: &RotationConfig,
) -> Result<Option<Secret>, CertRotationError> {
    let secret = api
        .get_opt(&config.secret_name)
        .await
        .map_err(|e| CertRotationError::api(format!("get {}", what(config)), e))?;
    if let Some(s) = &secret {
        let found = s.type_.clone().unwrap_or_else(|| "Opaque".to_owned());
        if found != SECRET_TYPE {
            return Err(CertRotationError::WrongSecretType {
                namespace: config.namespace.clone(),
                name: config.secret_name.clone(),
                found,
            });
        }
    }
    Ok(secret)
}

/// The files a Secret holds.
pub(crate) fn files_of(secret: &Secret) -> TlsFiles {
    secret.data.as_ref().map(TlsFiles::from_data).unwrap_or_default()
}

/// Creates the Secret (when `existing` is `None`) or replaces the one read, keeping its metadata
/// and unrelated keys; a concurrent change surfaces as [`CertRotationError::Conflict`].
pub(crate) async fn write(
    api: &Api<Secret>,
    config: &RotationConfig,
    existing: Option<Secret>,
    files: &TlsFiles,
) -> Result<Secret, CertRotationError> {
    let params = PostParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PostParams::default()
    };
    let result = match existing {
        None => {
            let secret = Secret {
                metadata: ObjectMeta {
                    name: Some(config.secret_name.clone()),
                    namespace: Some(config.namespace.clone()),
                    labels: Some(labels()),
                    ..ObjectMeta::default()
                },
                type_: Some(SECRET_TYPE.to_owned()),
                data: Some(files.to_data()),
                ..Secret::default()
            };
            api.create(&params, &secret).await
        }
        Some(mut secret) => {
            let mut data = secret.data.take().unwrap_or_default();
            // Only our four keys change; a key we dropped (none today) would be removed by absence in `files`.
            for key in [crate::TLS_CRT, crate::TLS_KEY, crate::CA_CRT, crate::CA_KEY] {
                data.remove(key);
            }
            data.extend(files.to_data());
            secret.data = Some(data);
            // `stringData` would be merged over `data` by the API server; it must not resurrect old files.
            secret.string_data = None;
            api.replace(&config.secret_name, &params, &secret).await
        }
    };
    result.map_err(|e| {
        if is_conflict(&e) {
            CertRotationError::Conflict { what: what(config) }
        } else {
            CertRotationError::api(format!("write {}", what(config)), e)
        }
    })
}
