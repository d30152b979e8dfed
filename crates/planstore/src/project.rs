//! Projection: immutable ConfigMaps holding the chunks, mounted into the Apply Job's Pod.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::PostParams;
use ptah_api::PtahSchemaPlan;
use ptah_api::shared::Sha256Digest;
use ptah_fingerprint::Digest;
use ptah_plancontract as contract;

use crate::error::is_already_exists;
use crate::objects::{LABEL_SCHEMA, Owner, Ownership, chunk_labels, has_labels, not_deleting, occupied};
use crate::publish::len_i64;
use crate::{PlanStore, PlanStoreError};

impl PlanStore {
    /// Creates (or verifies existing) immutable ConfigMaps named like the chunks, each holding
    /// one chunk under `binaryData.chunk`, owned by the plan; returns their names in order.
    ///
    /// `bytes` must be the plan's document (as [`PlanStore::load`] returns it); it is checked
    /// against the plan's size and content digest before anything is written.
    pub async fn project(&self, plan: &PtahSchemaPlan, bytes: &[u8]) -> Result<Vec<String>, PlanStoreError> {
        let owner = Owner::of(plan)?;
        let name = owner.name.as_str();
        let spec = &plan.spec;
        if len_i64(bytes.len()) != spec.size || Sha256Digest::from(Digest::of(bytes)) != spec.content_digest {
            return Err(PlanStoreError::Conflict {
                what: format!("the bytes to project are not the document of PtahSchemaPlan {name}"),
            });
        }
        let pieces = contract::split(bytes)?;
        if pieces.len() != spec.chunks.len() {
            return Err(PlanStoreError::Tampered {
                what: format!(
                    "PtahSchemaPlan {name} records {} chunks for {} bytes",
                    spec.chunks.len(),
                    bytes.len()
                ),
            });
        }
        // The schema label comes from the plan, which carries it since publication.
        let schema = plan
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(LABEL_SCHEMA))
            .unwrap_or(&spec.schema_ref.name);
        let labels = chunk_labels(name, schema);
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), &owner.namespace);
        let mut names = Vec::with_capacity(pieces.len());
        for (chunk, piece) in spec.chunks.iter().zip(&pieces) {
            let want = ConfigMap {
                metadata: kube::api::ObjectMeta {
                    name: Some(chunk.name.clone()),
                    namespace: Some(owner.namespace.clone()),
                    labels: Some(labels.clone()),
                    owner_references: Some(vec![owner.reference()]),
                    ..Default::default()
                },
                immutable: Some(true),
                binary_data: Some(BTreeMap::from([(
                    contract::CHUNK_KEY.to_owned(),
                    ByteString(piece.to_vec()),
                )])),
                ..Default::default()
            };
            match api.create(&PostParams::default(), &want).await {
                Ok(_) => {}
                Err(err) if is_already_exists(&err) => {
                    let live = api.get(&chunk.name).await?;
                    check_projection(&live, &want, &owner, &labels)?;
                }
                Err(err) => return Err(err.into()),
            }
            names.push(chunk.name.clone());
        }
        tracing::debug!(plan = name, namespace = %owner.namespace, configmaps = names.len(), "plan projected");
        Ok(names)
    }
}

/// Checks an existing ConfigMap is exactly the projection this plan would create.
fn check_projection(
    live: &ConfigMap,
    want: &ConfigMap,
    owner: &Owner,
    labels: &BTreeMap<String, String>,
) -> Result<(), PlanStoreError> {
    let name = live.metadata.name.clone().unwrap_or_default();
    let what = |how: &str| format!("ConfigMap {name} exists {how}");
    not_deleting(&live.metadata, || format!("ConfigMap {name}"))?;
    match owner.ownership(&live.metadata) {
        Ownership::Ours => {}
        other => return Err(occupied(other, what("with other owners"))),
    }
    if !has_labels(&live.metadata, labels) {
        return Err(PlanStoreError::Conflict {
            what: what("with other labels"),
        });
    }
    // A mutable ConfigMap could change under the running Job; only an immutable one is ours.
    if live.immutable != Some(true) {
        return Err(PlanStoreError::Conflict {
            what: what("and is mutable"),
        });
    }
    let no_text = live.data.as_ref().is_none_or(BTreeMap::is_empty);
    if !no_text || live.binary_data != want.binary_data {
        return Err(PlanStoreError::Conflict {
            what: what("with other contents"),
        });
    }
    Ok(())
}
