//! Loading: a plan is trusted only after every stored byte is checked against what it records.

use std::time::Instant;

use futures_util::future::try_join_all;
use kube::Api;
use ptah_api::schemaplan::PlanChunkRef;
use ptah_api::shared::{ImmutableObjectReference, Sha256Digest};
use ptah_api::{PtahSchemaPlan, PtahSchemaPlanChunk};
use ptah_fingerprint::Digest;
use ptah_plancontract as contract;

use crate::error::is_not_found;
use crate::objects::{Owner, Ownership, not_deleting, uid_of};
use crate::publish::len_i64;
use crate::ready::ready_for;
use crate::{PlanStore, PlanStoreError};

/// A plan that passed every check, with its document.
#[derive(Clone, PartialEq)]
pub struct LoadedPlan {
    /// The plan object as read.
    pub plan: PtahSchemaPlan,
    /// The whole plan document.
    pub bytes: Vec<u8>,
}

// The document may hold SQL with literals; Debug shows its size and digest only.
impl std::fmt::Debug for LoadedPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedPlan")
            .field("plan", &self.plan.metadata.name)
            .field("size", &self.bytes.len())
            .field("content_digest", &self.plan.spec.content_digest)
            .finish()
    }
}

impl PlanStore {
    /// Loads plan `plan` (name and UID) from `namespace`, checking through uncached reads that it
    /// is the referenced object, `Ready` for its generation, that its fingerprint recomputes, and
    /// that every chunk has the recorded name, UID, position, size and digest; returns the bytes.
    pub async fn load(
        &self,
        namespace: &str,
        plan: &ImmutableObjectReference,
    ) -> Result<LoadedPlan, PlanStoreError> {
        let started = Instant::now();
        let plans: Api<PtahSchemaPlan> = Api::namespaced(self.client.clone(), namespace);
        let live = match plans.get(&plan.name).await {
            Ok(live) => live,
            Err(err) if is_not_found(&err) => {
                return Err(PlanStoreError::NotFound {
                    name: plan.name.clone(),
                });
            }
            Err(err) => return Err(err.into()),
        };
        let actual = uid_of(&live.metadata);
        if actual != plan.uid {
            return Err(PlanStoreError::UidMismatch {
                name: plan.name.clone(),
                expected: plan.uid.clone(),
                actual,
            });
        }
        not_deleting(&live.metadata, || format!("PtahSchemaPlan {}", plan.name))?;
        ready_for(&live)?;
        check_manifest(&live)?;

        let owner = Owner::of(&live)?;
        let chunks: Api<PtahSchemaPlanChunk> = Api::namespaced(self.client.clone(), namespace);
        let status = live
            .status
            .as_ref()
            .map(|s| s.published_chunks.as_slice())
            .unwrap_or_default();
        let pieces = try_join_all(live.spec.chunks.iter().zip(status).map(|(chunk, published)| {
            let chunks = chunks.clone();
            let owner = &owner;
            async move {
                let stored = match chunks.get(&chunk.name).await {
                    Ok(stored) => stored,
                    Err(err) if is_not_found(&err) => {
                        return Err(PlanStoreError::Tampered {
                            what: format!("PtahSchemaPlanChunk {} is missing", chunk.name),
                        });
                    }
                    Err(err) => return Err(err.into()),
                };
                check_chunk(&stored, chunk, &published.uid, owner)?;
                Ok(stored.spec.data.0.0)
            }
        }))
        .await?;

        let bytes = pieces.concat();
        if len_i64(bytes.len()) != live.spec.size {
            return Err(tampered(
                &plan.name,
                format!("the chunks hold {} bytes, not {}", bytes.len(), live.spec.size),
            ));
        }
        if Sha256Digest::from(Digest::of(&bytes)) != live.spec.content_digest {
            return Err(tampered(
                &plan.name,
                "the document does not match its content digest".to_owned(),
            ));
        }
        tracing::debug!(
            plan = %plan.name,
            namespace,
            size = bytes.len(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "plan loaded"
        );
        Ok(LoadedPlan { plan: live, bytes })
    }
}

/// A tampering finding about the plan object itself.
fn tampered(plan: &str, what: String) -> PlanStoreError {
    PlanStoreError::Tampered {
        what: format!("PtahSchemaPlan {plan}: {what}"),
    }
}

/// Checks the plan's own records agree: contract, fingerprint, name and the chunk table.
fn check_manifest(plan: &PtahSchemaPlan) -> Result<(), PlanStoreError> {
    let name = plan.metadata.name.clone().unwrap_or_default();
    let spec = &plan.spec;
    let bad = |what: String| tampered(&name, what);
    if spec.contract_version != contract::CONTRACT_VERSION {
        return Err(bad(format!(
            "contract version {} is not {}",
            spec.contract_version,
            contract::CONTRACT_VERSION
        )));
    }
    if Sha256Digest::from(contract::plan_fingerprint(&spec.schema_ref.uid, spec)) != spec.fingerprint {
        return Err(bad(
            "the fingerprint does not recompute from the bindings".to_owned()
        ));
    }
    if contract::plan_name(&spec.fingerprint) != name {
        return Err(bad("the name does not derive from the fingerprint".to_owned()));
    }
    let size = usize::try_from(spec.size).map_err(|_| bad(format!("negative size {}", spec.size)))?;
    let sizes = contract::chunk_sizes(size).map_err(|e| bad(e.to_string()))?;
    if spec.chunks.len() != sizes.len() {
        return Err(bad(format!(
            "{} chunks recorded, {} expected for {size} bytes",
            spec.chunks.len(),
            sizes.len()
        )));
    }
    for (index, (chunk, size)) in spec.chunks.iter().zip(&sizes).enumerate() {
        let expected = contract::chunk_name(&name, index);
        if chunk.name != expected || usize::try_from(chunk.index).ok() != Some(index) {
            return Err(bad(format!(
                "chunk {index} is recorded as {} at index {}",
                chunk.name, chunk.index
            )));
        }
        if chunk.key != contract::CHUNK_KEY || chunk.size != len_i64(*size) {
            return Err(bad(format!(
                "chunk {} records key {:?} and size {}",
                chunk.name, chunk.key, chunk.size
            )));
        }
    }
    let published = plan
        .status
        .as_ref()
        .map(|s| s.published_chunks.as_slice())
        .unwrap_or_default();
    let in_order = published.len() == spec.chunks.len()
        && published
            .iter()
            .zip(&spec.chunks)
            .all(|(p, c)| p.name == c.name && p.index == c.index && !p.uid.is_empty());
    if !in_order {
        return Err(bad(
            "status.publishedChunks does not list the chunks in order".to_owned()
        ));
    }
    Ok(())
}

/// Checks a stored chunk is the recorded one: same UID as published, owned by the plan, and the
/// recorded size and digest.
fn check_chunk(
    stored: &PtahSchemaPlanChunk,
    chunk: &PlanChunkRef,
    published_uid: &str,
    owner: &Owner,
) -> Result<(), PlanStoreError> {
    let bad = |what: String| PlanStoreError::Tampered {
        what: format!("PtahSchemaPlanChunk {}: {what}", chunk.name),
    };
    let uid = uid_of(&stored.metadata);
    if uid != published_uid {
        return Err(bad(format!("UID {uid} is not the published {published_uid}")));
    }
    if owner.ownership(&stored.metadata) != Ownership::Ours {
        return Err(bad("not owned by the plan".to_owned()));
    }
    let data = &stored.spec.data.0.0;
    if len_i64(data.len()) != chunk.size {
        return Err(bad(format!("holds {} bytes, not {}", data.len(), chunk.size)));
    }
    if Sha256Digest::from(Digest::of(data)) != chunk.digest {
        return Err(bad("bytes do not match the recorded digest".to_owned()));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
