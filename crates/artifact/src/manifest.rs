//! Ptah artifact manifests: parse, check every rule from the descriptors alone (before any
//! blob is fetched), and build the manifest a push uploads.

use std::collections::{BTreeMap, BTreeSet};

use oci_client::manifest::{OciDescriptor, OciImageManifest};
use ptah_fingerprint::Digest;
use serde::Serialize;

use crate::{Error, Kind, Limits, limits::shown, media};

/// One file of an artifact as its manifest describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// Relative slash path (`org.opencontainers.image.title`).
    pub path: String,
    /// Layer digest.
    pub digest: Digest,
    /// Declared size in bytes.
    pub size: u64,
}

/// A manifest that passed every descriptor check.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The artifact kind.
    pub kind: Kind,
    /// The files in manifest order.
    pub entries: Vec<Entry>,
    /// The raw layer descriptors, in the same order.
    pub layers: Vec<OciDescriptor>,
    /// Manifest annotations.
    pub annotations: BTreeMap<String, String>,
}

/// Parses manifest bytes as an OCI image manifest (size already checked by the caller).
pub fn parse(bytes: &[u8]) -> Result<OciImageManifest, Error> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| Error::InvalidManifest {
        reason: format!("not JSON: {e}"),
    })?;
    let media_type = value
        .get("mediaType")
        .and_then(|m| m.as_str())
        .unwrap_or_default();
    if media_type != media::MANIFEST_MEDIA_TYPE {
        return Err(Error::WrongMediaType {
            what: "manifest".to_owned(),
            expected: media::MANIFEST_MEDIA_TYPE.to_owned(),
            actual: media_type.to_owned(),
        });
    }
    let manifest: OciImageManifest = serde_json::from_value(value).map_err(|e| Error::InvalidManifest {
        reason: format!("not an OCI image manifest: {e}"),
    })?;
    if manifest.schema_version != 2 {
        return Err(Error::InvalidManifest {
            reason: format!("schemaVersion {} (want 2)", manifest.schema_version),
        });
    }
    Ok(manifest)
}

/// Checks every rule a pull enforces before fetching: artifact type and kind annotation, the
/// empty config, layer media types, sha256 digests, sizes, counts and path rules.
pub fn check(manifest: &OciImageManifest, expected: Option<Kind>, limits: &Limits) -> Result<Checked, Error> {
    let artifact_type = manifest.artifact_type.clone().unwrap_or_default();
    let kind = match (Kind::from_artifact_type(&artifact_type), expected) {
        (Some(kind), None) => kind,
        (Some(kind), Some(want)) if kind == want => kind,
        (found, want) => {
            return Err(Error::WrongArtifactType {
                field: "artifactType",
                expected: want
                    .or(found)
                    .map(|k| k.artifact_type().to_owned())
                    .unwrap_or_else(|| {
                        format!(
                            "{} or {}",
                            media::SCHEMA_ARTIFACT_TYPE,
                            media::MIGRATIONS_ARTIFACT_TYPE
                        )
                    }),
                actual: artifact_type,
            });
        }
    };
    let annotations = manifest.annotations.clone().unwrap_or_default();
    let declared_kind = annotations
        .get(media::ANNOTATION_KIND)
        .cloned()
        .unwrap_or_default();
    if declared_kind != kind.artifact_type() {
        return Err(Error::WrongArtifactType {
            field: media::ANNOTATION_KIND,
            expected: kind.artifact_type().to_owned(),
            actual: declared_kind,
        });
    }
    check_format_annotation(kind, &annotations)?;
    check_config(&manifest.config)?;

    limits.check_file_count(manifest.layers.len())?;
    let mut seen = BTreeSet::new();
    let mut entries = Vec::with_capacity(manifest.layers.len());
    let mut total = 0u64;
    for (index, layer) in manifest.layers.iter().enumerate() {
        let path = layer
            .annotations
            .as_ref()
            .and_then(|a| a.get(media::ANNOTATION_TITLE))
            .ok_or_else(|| Error::InvalidManifest {
                reason: format!("layer {index} has no {} annotation", media::ANNOTATION_TITLE),
            })?;
        limits.check_path(path)?;
        if layer.media_type != kind.layer_media_type() {
            return Err(Error::WrongMediaType {
                what: format!("layer {}", shown(path)),
                expected: kind.layer_media_type().to_owned(),
                actual: layer.media_type.clone(),
            });
        }
        let digest: Digest = layer.digest.parse().map_err(|_| Error::InvalidManifest {
            reason: format!(
                "layer {}: digest {:?} is not sha256:<64 hex>",
                shown(path),
                shown(&layer.digest)
            ),
        })?;
        let size = u64::try_from(layer.size).map_err(|_| Error::InvalidManifest {
            reason: format!("layer {}: negative size", shown(path)),
        })?;
        limits.check_file_size(path, size)?;
        total = total.saturating_add(size);
        limits.check_total_size(total)?;
        if !seen.insert(path.clone()) {
            return Err(Error::UnsafePath {
                path: shown(path),
                reason: "duplicate path",
            });
        }
        if !kind.allows_file(path) {
            return Err(Error::InvalidContent {
                reason: format!("{} does not belong in a {kind} artifact", shown(path)),
            });
        }
        entries.push(Entry {
            path: path.clone(),
            digest,
            size,
        });
    }
    check_required_files(kind, &seen)?;
    Ok(Checked {
        kind,
        entries,
        layers: manifest.layers.clone(),
        annotations,
    })
}

fn check_config(config: &OciDescriptor) -> Result<(), Error> {
    if config.media_type != media::EMPTY_CONFIG_MEDIA_TYPE {
        return Err(Error::WrongMediaType {
            what: "config".to_owned(),
            expected: media::EMPTY_CONFIG_MEDIA_TYPE.to_owned(),
            actual: config.media_type.clone(),
        });
    }
    if config.digest != media::EMPTY_CONFIG_DIGEST || config.size != 2 {
        return Err(Error::InvalidManifest {
            reason: "the config is not the OCI empty descriptor".to_owned(),
        });
    }
    Ok(())
}

fn check_format_annotation(kind: Kind, annotations: &BTreeMap<String, String>) -> Result<(), Error> {
    let (key, allowed): (&str, &[&str]) = match kind {
        Kind::Schema => (media::ANNOTATION_SCHEMA_FORMAT, &["hcl"]),
        Kind::Migrations => (media::ANNOTATION_MIGRATION_FORMAT, media::MIGRATION_FORMATS),
    };
    match annotations.get(key) {
        Some(value) if !allowed.contains(&value.as_str()) => Err(Error::InvalidManifest {
            reason: format!("{key} = {:?} (want one of {})", shown(value), allowed.join(", ")),
        }),
        _ => Ok(()),
    }
}

fn check_required_files(kind: Kind, paths: &BTreeSet<String>) -> Result<(), Error> {
    match kind {
        Kind::Schema if paths.len() != 1 || !paths.contains(media::SCHEMA_FILE) => {
            Err(Error::InvalidContent {
                reason: format!("a schema artifact holds exactly one file, {}", media::SCHEMA_FILE),
            })
        }
        _ => Ok(()),
    }
}

/// The manifest JSON a push uploads, fields in a fixed order so equal content gives one digest.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Outgoing<'a> {
    schema_version: u8,
    media_type: &'static str,
    artifact_type: &'static str,
    config: Descriptor<'a>,
    layers: Vec<Descriptor<'a>>,
    annotations: &'a BTreeMap<String, String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Descriptor<'a> {
    media_type: &'a str,
    digest: String,
    size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    annotations: Option<BTreeMap<&'static str, &'a str>>,
}

/// Builds manifest bytes for `files` (path, digest, size), sorted by path.
pub fn build(
    kind: Kind,
    files: &[(String, Digest, u64)],
    annotations: &BTreeMap<String, String>,
) -> Result<Vec<u8>, Error> {
    let mut sorted: Vec<&(String, Digest, u64)> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let manifest = Outgoing {
        schema_version: 2,
        media_type: media::MANIFEST_MEDIA_TYPE,
        artifact_type: kind.artifact_type(),
        config: Descriptor {
            media_type: media::EMPTY_CONFIG_MEDIA_TYPE,
            digest: media::EMPTY_CONFIG_DIGEST.to_owned(),
            size: 2,
            annotations: None,
        },
        layers: sorted
            .into_iter()
            .map(|(path, digest, size)| Descriptor {
                media_type: kind.layer_media_type(),
                digest: digest.to_string(),
                size: *size,
                annotations: Some(BTreeMap::from([(media::ANNOTATION_TITLE, path.as_str())])),
            })
            .collect(),
        annotations,
    };
    serde_json::to_vec(&manifest).map_err(|e| Error::InvalidManifest {
        reason: format!("cannot serialize the manifest: {e}"),
    })
}

#[cfg(test)]
mod tests;
