//! Pull an artifact into memory: every descriptor rule is checked before the first blob is
//! fetched, and sizes and digests again while each blob is read.

use std::{collections::BTreeMap, path::Path};

use ptah_fingerprint::Digest;
use ptah_ocireference::Reference;
use serde::Serialize;

use crate::{Error, Kind, Limits, Registry, manifest, media};

/// One file of a pulled artifact.
#[derive(Clone, PartialEq, Eq)]
pub struct File {
    /// Relative slash path.
    pub path: String,
    /// The content (its sha256 matched the layer digest).
    pub bytes: Vec<u8>,
}

impl std::fmt::Debug for File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("File")
            .field("path", &self.path)
            .field("len", &self.bytes.len())
            .finish()
    }
}

/// An artifact held in memory, verified against its pinned digest.
#[derive(Debug, Clone)]
pub struct Artifact {
    /// The reference pinned to the digest that was pulled.
    pub reference: Reference,
    /// The manifest digest.
    pub digest: Digest,
    /// The artifact kind.
    pub kind: Kind,
    /// Manifest annotations.
    pub annotations: BTreeMap<String, String>,
    /// The files in manifest order.
    pub files: Vec<File>,
}

/// A listing of a pulled artifact for reports.
#[derive(Debug, Clone, Serialize)]
pub struct Listing {
    /// Pinned reference.
    pub reference: String,
    /// Manifest digest.
    pub digest: Digest,
    /// Kind.
    pub kind: Kind,
    /// Annotations.
    pub annotations: BTreeMap<String, String>,
    /// Files: path, size, digest.
    pub files: Vec<manifest::Entry>,
}

impl Artifact {
    /// The file at `path`.
    pub fn file(&self, path: &str) -> Option<&File> {
        self.files.iter().find(|f| f.path == path)
    }

    /// The bytes of `schema.hcl` when this is a schema artifact.
    pub fn schema_hcl(&self) -> Option<&[u8]> {
        (self.kind == Kind::Schema)
            .then(|| self.file(media::SCHEMA_FILE))
            .flatten()
            .map(|f| f.bytes.as_slice())
    }

    /// The files as `(path, bytes)`, e.g. for `ptah_migrate::Directory::from_files`.
    pub fn into_files(self) -> Vec<(String, Vec<u8>)> {
        self.files.into_iter().map(|f| (f.path, f.bytes)).collect()
    }

    /// A report of what was pulled.
    pub fn listing(&self) -> Listing {
        Listing {
            reference: self.reference.to_string(),
            digest: self.digest,
            kind: self.kind,
            annotations: self.annotations.clone(),
            files: self
                .files
                .iter()
                .map(|f| manifest::Entry {
                    path: f.path.clone(),
                    digest: Digest::of(&f.bytes),
                    size: f.bytes.len() as u64,
                })
                .collect(),
        }
    }
}

impl Registry {
    /// Pulls `reference` and writes it to the new directory `dest` (see [`crate::write_files`]);
    /// an existing `dest` is refused before anything is fetched, and nothing is written unless
    /// every check passed.
    pub async fn pull_to(
        &self,
        reference: &Reference,
        expected: Option<Kind>,
        dest: &Path,
        limits: &Limits,
    ) -> Result<Artifact, Error> {
        if std::fs::symlink_metadata(dest).is_ok() {
            return Err(Error::Destination {
                path: dest.to_owned(),
                reason: "already exists".to_owned(),
            });
        }
        let artifact = self.pull(reference, expected, limits).await?;
        crate::write_files(&artifact.files, dest, limits)?;
        Ok(artifact)
    }

    /// Pulls `reference` into memory; `expected` refuses any other kind.
    pub async fn pull(
        &self,
        reference: &Reference,
        expected: Option<Kind>,
        limits: &Limits,
    ) -> Result<Artifact, Error> {
        let resolved = self.resolve(reference, limits).await?;
        let checked = manifest::check(&resolved.manifest, expected, limits)?;
        let mut total = 0u64;
        let mut files = Vec::with_capacity(checked.entries.len());
        for (entry, layer) in checked.entries.iter().zip(&checked.layers) {
            let what = format!("layer {} of {}", entry.path, resolved.pinned);
            let bytes = self
                .blob(&resolved.pinned, layer, &what, limits, &mut total)
                .await?;
            files.push(File {
                path: entry.path.clone(),
                bytes,
            });
        }
        if checked.kind == Kind::Schema
            && let Some(file) = files.first()
            && std::str::from_utf8(&file.bytes).is_err()
        {
            return Err(Error::InvalidContent {
                reason: format!("{} is not UTF-8", media::SCHEMA_FILE),
            });
        }
        tracing::info!(reference = %resolved.pinned, files = files.len(), bytes = total, "pulled");
        Ok(Artifact {
            reference: resolved.pinned,
            digest: resolved.digest,
            kind: checked.kind,
            annotations: checked.annotations,
            files,
        })
    }
}
