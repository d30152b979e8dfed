//! Publication: plan object → chunk objects, each checked as stored → status, each step resumable.

use std::collections::BTreeMap;
use std::time::Instant;

use futures_util::future::try_join_all;
use k8s_openapi::ByteString;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use ptah_api::conditions::{ConditionType, Reason};
use ptah_api::schemaplan::{ChunkData, PlanChunkRef, PublishedChunk};
use ptah_api::shared::{ImmutableObjectReference, Sha256Digest};
use ptah_api::{
    PtahSchema, PtahSchemaPlan, PtahSchemaPlanChunk, PtahSchemaPlanChunkSpec, PtahSchemaPlanSpec,
};
use ptah_fingerprint::Digest;
use ptah_plancontract as contract;
use serde_json::json;

use crate::error::is_already_exists;
use crate::objects::{
    Owner, Ownership, chunk_labels, has_labels, not_deleting, occupied, plan_labels, uid_of,
};
use crate::{PlanStore, PlanStoreError};

impl PlanStore {
    /// Publishes `bytes` for `schema` (namespace, name and UID from its metadata) and returns the
    /// `Ready` plan.
    ///
    /// The caller fills every binding field of `spec`; this overwrites `contractVersion`,
    /// `schemaRef`, `contentDigest`, `size`, `chunks` and `fingerprint`. Republishing the same
    /// plan returns the same object; a different plan under the same name is a typed error.
    pub async fn publish(
        &self,
        schema: &PtahSchema,
        mut spec: PtahSchemaPlanSpec,
        bytes: &[u8],
    ) -> Result<PtahSchemaPlan, PlanStoreError> {
        let started = Instant::now();
        // Refused before any write: an oversized plan leaves nothing behind.
        let pieces = contract::split(bytes)?;
        let schema = Owner::of(schema)?;
        let name = fill_spec(&mut spec, &schema, bytes, &pieces);
        let ns = schema.namespace.as_str();
        let plans: Api<PtahSchemaPlan> = Api::namespaced(self.client.clone(), ns);

        let plan = self.create_plan(&plans, &schema, &name, spec).await?;
        let owner = Owner::of(&plan)?;
        let labels = chunk_labels(&name, &schema.name);
        let chunks: Api<PtahSchemaPlanChunk> = Api::namespaced(self.client.clone(), ns);
        // At most 16 requests; concurrent because each is a round trip of up to 700 KB of base64.
        // Only bytes the API server returns count as published: the answer to a create is the
        // object as stored (decoded from what was written to etcd), so it is checked as a read
        // back would be, without a second round trip of the same bytes.
        let published = try_join_all(plan.spec.chunks.iter().zip(&pieces).map(|(chunk, piece)| {
            let (chunks, owner, labels) = (&chunks, &owner, &labels);
            async move {
                let live = create_chunk(chunks, &chunk.name, piece, owner, labels).await?;
                check_chunk(&live, owner, labels, piece)?;
                Ok::<_, PlanStoreError>(PublishedChunk {
                    name: chunk.name.clone(),
                    uid: uid_of(&live.metadata),
                    index: chunk.index,
                })
            }
        }))
        .await?;

        let ready = self.mark_ready(&plans, plan, published).await?;
        tracing::info!(
            plan = %name,
            namespace = ns,
            size = bytes.len(),
            chunks = pieces.len(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "plan published"
        );
        Ok(ready)
    }

    /// Creates the plan, or accepts an existing one that is the same plan.
    async fn create_plan(
        &self,
        plans: &Api<PtahSchemaPlan>,
        schema: &Owner,
        name: &str,
        spec: PtahSchemaPlanSpec,
    ) -> Result<PtahSchemaPlan, PlanStoreError> {
        let mut obj = PtahSchemaPlan::new(name, spec);
        obj.metadata.namespace = Some(schema.namespace.clone());
        obj.metadata.labels = Some(plan_labels(&schema.name));
        obj.metadata.owner_references = Some(vec![schema.reference()]);
        match plans.create(&PostParams::default(), &obj).await {
            Ok(created) => Ok(created),
            Err(err) if is_already_exists(&err) => {
                let live = plans.get(name).await?;
                not_deleting(&live.metadata, || format!("PtahSchemaPlan {name}"))?;
                let what = |how: &str| format!("PtahSchemaPlan {name} exists {how}");
                match schema.ownership(&live.metadata) {
                    Ownership::Ours => {}
                    other => return Err(occupied(other, what("with other owners"))),
                }
                if !has_labels(&live.metadata, &plan_labels(&schema.name)) {
                    return Err(PlanStoreError::Conflict {
                        what: what("with other labels"),
                    });
                }
                if !same_plan(&live.spec, &obj.spec) {
                    return Err(PlanStoreError::Conflict {
                        what: what("with a different spec"),
                    });
                }
                Ok(live)
            }
            Err(err) => Err(err.into()),
        }
    }

    /// Records the checked chunks and `Ready=True` for the plan's generation, unless already so.
    async fn mark_ready(
        &self,
        plans: &Api<PtahSchemaPlan>,
        plan: PtahSchemaPlan,
        published: Vec<PublishedChunk>,
    ) -> Result<PtahSchemaPlan, PlanStoreError> {
        let name = plan.metadata.name.clone().unwrap_or_default();
        let generation = plan.metadata.generation;
        if let Some(status) = plan
            .status
            .as_ref()
            .filter(|_| crate::ready::ready_for(&plan).is_ok())
        {
            if status.published_chunks == published {
                return Ok(plan);
            }
            // A Ready plan whose chunks changed identity was tampered with; re-stamping it
            // would launder that, so a human decides.
            return Err(PlanStoreError::Tampered {
                what: format!("PtahSchemaPlan {name} is Ready with other chunk UIDs than those stored now"),
            });
        }
        let condition = Condition {
            type_: ConditionType::Ready.as_str().to_owned(),
            status: "True".to_owned(),
            reason: Reason::Published.as_str().to_owned(),
            message: format!("the plan and its {} chunks are published", published.len()),
            last_transition_time: Time(k8s_openapi::jiff::Timestamp::now()),
            observed_generation: generation,
        };
        let patch = json!({
            "apiVersion": "operator.ptah.run/v1alpha1",
            "kind": "PtahSchemaPlan",
            "status": {
                "observedGeneration": generation,
                "publishedChunks": published,
                "conditions": [condition],
            }
        });
        let params = PatchParams::apply(&self.field_manager).force();
        Ok(plans.patch_status(&name, &params, &Patch::Apply(&patch)).await?)
    }
}

/// Creates one chunk, or finds the existing one; returns it as the API server stores it.
async fn create_chunk(
    chunks: &Api<PtahSchemaPlanChunk>,
    name: &str,
    piece: &[u8],
    owner: &Owner,
    labels: &BTreeMap<String, String>,
) -> Result<PtahSchemaPlanChunk, PlanStoreError> {
    let mut obj = PtahSchemaPlanChunk::new(
        name,
        PtahSchemaPlanChunkSpec {
            data: ChunkData(ByteString(piece.to_vec())),
        },
    );
    obj.metadata.namespace = Some(owner.namespace.clone());
    obj.metadata.labels = Some(labels.clone());
    obj.metadata.owner_references = Some(vec![owner.reference()]);
    match chunks.create(&PostParams::default(), &obj).await {
        Ok(created) => Ok(created),
        Err(err) if is_already_exists(&err) => Ok(chunks.get(name).await?),
        Err(err) => Err(err.into()),
    }
}

/// Fills the derived fields of `spec` and returns the plan's name.
pub(crate) fn fill_spec(
    spec: &mut PtahSchemaPlanSpec,
    schema: &Owner,
    bytes: &[u8],
    pieces: &[&[u8]],
) -> String {
    spec.contract_version = contract::CONTRACT_VERSION;
    spec.schema_ref = ImmutableObjectReference {
        name: schema.name.clone(),
        uid: schema.uid.clone(),
    };
    spec.content_digest = Sha256Digest::from(Digest::of(bytes));
    spec.size = len_i64(bytes.len());
    // The chunk names hang off the plan name, which hangs off the fingerprint, which does not
    // cover the chunks: so the fingerprint can come first.
    spec.fingerprint = contract::fingerprint(&schema.uid, spec);
    let name = contract::plan_name(&spec.fingerprint);
    spec.chunks = pieces
        .iter()
        .enumerate()
        .map(|(index, piece)| PlanChunkRef {
            name: contract::chunk_name(&name, index),
            key: contract::CHUNK_KEY.to_owned(),
            index: index as i32,
            digest: Sha256Digest::from(Digest::of(piece)),
            size: len_i64(piece.len()),
        })
        .collect();
    name
}

/// A length that the contract bounds to 8 MiB, as the API's integer type.
pub(crate) fn len_i64(len: usize) -> i64 {
    i64::try_from(len).unwrap_or(i64::MAX)
}

/// Whether `live` is the plan `want` describes, ignoring the publisher record (manager image and
/// revision, runner image): a newer manager republishing the same plan keeps the first record.
pub(crate) fn same_plan(live: &PtahSchemaPlanSpec, want: &PtahSchemaPlanSpec) -> bool {
    let mut live = live.clone();
    live.binding
        .controller_image
        .clone_from(&want.binding.controller_image);
    live.binding
        .controller_revision
        .clone_from(&want.binding.controller_revision);
    live.binding.runner_image.clone_from(&want.binding.runner_image);
    live == *want
}

/// Checks an existing chunk is exactly the one this plan would write.
fn check_chunk(
    live: &PtahSchemaPlanChunk,
    owner: &Owner,
    labels: &BTreeMap<String, String>,
    piece: &[u8],
) -> Result<(), PlanStoreError> {
    let name = live.metadata.name.clone().unwrap_or_default();
    let what = |how: &str| format!("PtahSchemaPlanChunk {name} exists {how}");
    not_deleting(&live.metadata, || format!("PtahSchemaPlanChunk {name}"))?;
    match owner.ownership(&live.metadata) {
        Ownership::Ours => {}
        other => return Err(occupied(other, what("with other owners"))),
    }
    if !has_labels(&live.metadata, labels) {
        return Err(PlanStoreError::Conflict {
            what: what("with other labels"),
        });
    }
    if live.spec.data.0.0 != piece {
        return Err(PlanStoreError::Conflict {
            what: what("with other bytes"),
        });
    }
    Ok(())
}
