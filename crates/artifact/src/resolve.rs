//! Resolve a reference to a digest exactly once, fetch the manifest by digest with its bytes
//! checked, and describe it as an inspection document.

use std::collections::BTreeMap;

use oci_client::manifest::OciImageManifest;
use ptah_fingerprint::Digest;
use ptah_ocireference::Reference;
use serde::Serialize;

use crate::{Error, Kind, Limits, Registry, manifest, media};

/// A reference resolved to the manifest bytes its digest names.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The reference as given.
    pub reference: Reference,
    /// The same reference pinned to the resolved digest.
    pub pinned: Reference,
    /// The manifest digest.
    pub digest: Digest,
    /// The manifest bytes (they hash to `digest`).
    pub manifest_bytes: Vec<u8>,
    /// The parsed manifest.
    pub manifest: OciImageManifest,
}

impl Registry {
    /// Resolves `reference`: by digest when pinned (the tag is then only a label, and there is
    /// never a fallback to it), else its tag once. The bytes are checked against the digest.
    pub async fn resolve(&self, reference: &Reference, limits: &Limits) -> Result<Resolved, Error> {
        let (target, what) = match reference.digest() {
            Some(digest) => (
                self.by_digest(reference, &digest),
                reference.pinned(digest).to_string(),
            ),
            None => (
                self.by_tag(reference, reference.tag_or_latest()),
                reference.to_string(),
            ),
        };
        let bytes = self
            .manifest_bytes(
                &target,
                &what,
                Registry::MANIFEST_ACCEPT,
                limits.max_manifest_size,
            )
            .await?;
        let digest = Digest::of(&bytes);
        let manifest = manifest::parse(&bytes)?;
        tracing::debug!(reference = %reference, %digest, "resolved");
        Ok(Resolved {
            reference: reference.clone(),
            pinned: reference.pinned(digest),
            digest,
            manifest_bytes: bytes,
            manifest,
        })
    }

    /// Resolves and describes `reference` without fetching any layer.
    pub async fn inspect(&self, reference: &Reference, limits: &Limits) -> Result<Inspection, Error> {
        let resolved = self.resolve(reference, limits).await?;
        Ok(Inspection::of(&resolved, limits))
    }
}

/// What `ptah oci inspect` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Inspection {
    /// The reference as given.
    pub reference: String,
    /// The reference pinned to the digest.
    pub pinned_reference: String,
    /// The manifest digest.
    pub digest: Digest,
    /// The manifest media type.
    pub media_type: String,
    /// The manifest's `artifactType`.
    pub artifact_type: Option<String>,
    /// The Ptah kind, when the artifact type is one.
    pub kind: Option<Kind>,
    /// Manifest size in bytes.
    pub manifest_size: u64,
    /// Sum of the declared layer sizes.
    pub total_size: u64,
    /// The config descriptor.
    pub config: LayerInfo,
    /// Manifest annotations.
    pub annotations: BTreeMap<String, String>,
    /// The layers in manifest order.
    pub layers: Vec<LayerInfo>,
    /// The subject digest, when the manifest is a referrer.
    pub subject: Option<String>,
    /// Whether a pull would accept the manifest.
    pub conforms: bool,
    /// Why not, when it would not.
    pub problem: Option<String>,
}

/// One descriptor as inspection shows it.
#[derive(Debug, Clone, Serialize)]
pub struct LayerInfo {
    /// `org.opencontainers.image.title`, if any.
    pub path: Option<String>,
    /// Media type.
    pub media_type: String,
    /// Digest as written.
    pub digest: String,
    /// Declared size.
    pub size: i64,
}

impl Inspection {
    /// Describes a resolved manifest, checking it as a pull would.
    pub fn of(resolved: &Resolved, limits: &Limits) -> Inspection {
        let manifest = &resolved.manifest;
        let info = |d: &oci_client::manifest::OciDescriptor| LayerInfo {
            path: d
                .annotations
                .as_ref()
                .and_then(|a| a.get(media::ANNOTATION_TITLE))
                .cloned(),
            media_type: d.media_type.clone(),
            digest: d.digest.clone(),
            size: d.size,
        };
        let problem = manifest::check(manifest, None, limits)
            .err()
            .map(|e| e.to_string());
        Inspection {
            reference: resolved.reference.to_string(),
            pinned_reference: resolved.pinned.to_string(),
            digest: resolved.digest,
            media_type: manifest.media_type.clone().unwrap_or_default(),
            artifact_type: manifest.artifact_type.clone(),
            kind: manifest
                .artifact_type
                .as_deref()
                .and_then(Kind::from_artifact_type),
            manifest_size: resolved.manifest_bytes.len() as u64,
            total_size: manifest
                .layers
                .iter()
                .map(|l| u64::try_from(l.size).unwrap_or(0))
                .sum(),
            config: info(&manifest.config),
            annotations: manifest.annotations.clone().unwrap_or_default(),
            layers: manifest.layers.iter().map(info).collect(),
            subject: manifest.subject.as_ref().map(|s| s.digest.clone()),
            conforms: problem.is_none(),
            problem,
        }
    }
}
