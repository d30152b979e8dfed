//! Push schema and migration artifacts with provenance annotations. The manifest is built, then
//! checked with the same rules a pull applies, before anything is uploaded.

use std::{collections::BTreeMap, path::Path};

use ptah_fingerprint::Digest;
use ptah_ocireference::Reference;
use serde::Serialize;

use crate::{Error, Kind, Limits, Registry, limits::shown, manifest, media};

/// Environment variable: `org.opencontainers.image.source`.
pub const ENV_SOURCE: &str = "PTAH_OCI_SOURCE";
/// Environment variable: `org.opencontainers.image.revision`.
pub const ENV_REVISION: &str = "PTAH_OCI_REVISION";
/// Environment variable: `io.stokaro.ptah.build-run`.
pub const ENV_BUILD_RUN: &str = "PTAH_OCI_BUILD_RUN";

/// Where pushed content came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provenance {
    /// Source repository URL.
    pub source: Option<String>,
    /// Source revision.
    pub revision: Option<String>,
    /// CI run identifier.
    pub build_run: Option<String>,
    /// The pushing tool's version.
    pub version: String,
}

impl Provenance {
    /// From `PTAH_OCI_*`, else the GitHub Actions variables, through `lookup`.
    pub fn from_env(lookup: &dyn Fn(&str) -> Option<String>) -> Provenance {
        let get = |name: &str| lookup(name).filter(|v| !v.is_empty());
        let github_source = || match (get("GITHUB_SERVER_URL"), get("GITHUB_REPOSITORY")) {
            (Some(server), Some(repo)) => Some(format!("{}/{repo}", server.trim_end_matches('/'))),
            _ => None,
        };
        Provenance {
            source: get(ENV_SOURCE).or_else(github_source),
            revision: get(ENV_REVISION).or_else(|| get("GITHUB_SHA")),
            build_run: get(ENV_BUILD_RUN).or_else(|| get("GITHUB_RUN_ID")),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }

    /// From the process environment.
    pub fn from_process_env() -> Provenance {
        Provenance::from_env(&|name| std::env::var(name).ok())
    }

    fn annotations(&self, kind: Kind) -> BTreeMap<String, String> {
        let mut out = BTreeMap::from([
            (media::ANNOTATION_KIND.to_owned(), kind.artifact_type().to_owned()),
            (media::ANNOTATION_VERSION.to_owned(), self.version.clone()),
        ]);
        let pairs = [
            (media::ANNOTATION_SOURCE, &self.source),
            (media::ANNOTATION_REVISION, &self.revision),
            (media::ANNOTATION_BUILD_RUN, &self.build_run),
        ];
        for (key, value) in pairs {
            if let Some(value) = value {
                out.insert(key.to_owned(), value.clone());
            }
        }
        match kind {
            Kind::Schema => out.insert(media::ANNOTATION_SCHEMA_FORMAT.to_owned(), "hcl".to_owned()),
            Kind::Migrations => out.insert(media::ANNOTATION_MIGRATION_FORMAT.to_owned(), "ptah".to_owned()),
        };
        out
    }
}

/// The result of a push.
#[derive(Debug, Clone, Serialize)]
pub struct Pushed {
    /// The reference pinned to the pushed digest.
    pub reference: String,
    /// The manifest digest.
    pub digest: Digest,
    /// The kind pushed.
    pub kind: Kind,
    /// The files, sorted by path.
    pub files: Vec<manifest::Entry>,
    /// The manifest annotations.
    pub annotations: BTreeMap<String, String>,
}

impl Registry {
    /// Pushes `files` as an artifact of `kind` to `reference` (which must not carry a digest).
    pub async fn push(
        &self,
        reference: &Reference,
        kind: Kind,
        files: Vec<(String, Vec<u8>)>,
        provenance: &Provenance,
        limits: &Limits,
    ) -> Result<Pushed, Error> {
        let reference = reference.for_push()?;
        check_content(kind, &files)?;
        let described: Vec<(String, Digest, u64)> = files
            .iter()
            .map(|(path, bytes)| (path.clone(), Digest::of(bytes), bytes.len() as u64))
            .collect();
        let annotations = provenance.annotations(kind);
        let bytes = manifest::build(kind, &described, &annotations)?;
        limits.check_manifest_size(bytes.len() as u64)?;
        let checked = manifest::check(&manifest::parse(&bytes)?, Some(kind), limits)?;

        self.push_blob(reference, media::EMPTY_CONFIG_BYTES).await?;
        for (_, content) in &files {
            self.push_blob(reference, content).await?;
        }
        let tag = reference.tag_or_latest();
        let digest = self
            .push_manifest(reference, tag, bytes, media::MANIFEST_MEDIA_TYPE)
            .await?;
        let pinned = reference.pinned(digest);
        tracing::info!(reference = %pinned, files = files.len(), "pushed");
        Ok(Pushed {
            reference: pinned.to_string(),
            digest,
            kind,
            files: checked.entries,
            annotations,
        })
    }
}

/// Refuses content that is not a valid artifact of `kind`: a schema is exactly one UTF-8
/// `schema.hcl`; migrations need `ptah.sum` and only `*.sql`, the sum files and `.ptah-lint.yaml`.
///
/// Whether `ptah.sum` is *current* is checked by `ptah-migrate` (a database crate this pure
/// crate may not depend on); callers holding a directory run that check first.
pub fn check_content(kind: Kind, files: &[(String, Vec<u8>)]) -> Result<(), Error> {
    let refuse = |reason: String| Err(Error::InvalidContent { reason });
    for (path, _) in files {
        if !kind.allows_file(path) {
            return refuse(format!("{} does not belong in a {kind} artifact", shown(path)));
        }
    }
    match kind {
        Kind::Schema => match files {
            [(path, bytes)] if path == media::SCHEMA_FILE => {
                if bytes.is_empty() || std::str::from_utf8(bytes).is_err() {
                    return refuse(format!("{} must be non-empty UTF-8", media::SCHEMA_FILE));
                }
            }
            _ => {
                return refuse(format!(
                    "a schema artifact holds exactly one file, {}",
                    media::SCHEMA_FILE
                ));
            }
        },
        Kind::Migrations => {
            if !files.iter().any(|(path, _)| path == media::PTAH_SUM_FILE) {
                return refuse(format!(
                    "{} is missing; run `ptah migrations hash` first",
                    media::PTAH_SUM_FILE
                ));
            }
            if !files.iter().any(|(path, _)| path.ends_with(".sql")) {
                return refuse("no *.sql migration file".to_owned());
            }
        }
    }
    Ok(())
}

/// Reads a migration directory for pushing: `*.sql` at any depth, `ptah.sum`, `atlas.sum` and
/// `.ptah-lint.yaml` at the root. Symlinks and other non-regular files are refused; other
/// regular files are skipped with a warning.
pub fn read_migration_dir(root: &Path, limits: &Limits) -> Result<Vec<(String, Vec<u8>)>, Error> {
    let mut out = Vec::new();
    walk(root, "", limits, &mut out)?;
    out.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    Ok(out)
}

fn walk(dir: &Path, prefix: &str, limits: &Limits, out: &mut Vec<(String, Vec<u8>)>) -> Result<(), Error> {
    for entry in std::fs::read_dir(dir).map_err(Error::io(dir))? {
        let entry = entry.map_err(Error::io(dir))?;
        let path = entry.path();
        let name = entry.file_name().into_string().map_err(|_| Error::UnsafePath {
            path: path.display().to_string(),
            reason: "file name is not UTF-8",
        })?;
        let relative = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        let kind = entry.file_type().map_err(Error::io(&path))?;
        if kind.is_dir() {
            walk(&path, &relative, limits, out)?;
        } else if !kind.is_file() {
            return Err(Error::InvalidContent {
                reason: format!("{} is a symlink or not a regular file", shown(&relative)),
            });
        } else if Kind::Migrations.allows_file(&relative) {
            limits.check_path(&relative)?;
            let bytes = std::fs::read(&path).map_err(Error::io(&path))?;
            limits.check_file_size(&relative, bytes.len() as u64)?;
            out.push((relative, bytes));
            limits.check_file_count(out.len())?;
        } else {
            tracing::warn!(file = %relative, "skipped: not part of a migration artifact");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
        list.iter()
            .map(|(p, b)| (p.to_string(), b.as_bytes().to_vec()))
            .collect()
    }

    fn refused(r: Result<(), Error>, want: &str) {
        assert!(
            matches!(&r, Err(Error::InvalidContent { reason }) if reason == want),
            "{r:?}"
        );
    }

    #[test]
    fn content_rules_for_both_kinds() {
        assert!(check_content(Kind::Schema, &files(&[("schema.hcl", "table \"t\" {}\n")])).is_ok());
        refused(
            check_content(Kind::Schema, &files(&[("schema.hcl", "")])),
            "schema.hcl must be non-empty UTF-8",
        );
        refused(
            check_content(Kind::Schema, &files(&[("schema.hcl", "a"), ("x.sql", "b")])),
            "x.sql does not belong in a schema artifact",
        );
        refused(
            check_content(Kind::Schema, &files(&[("other.hcl", "a")])),
            "other.hcl does not belong in a schema artifact",
        );
        for count in [0, 2] {
            refused(
                check_content(Kind::Schema, &files(&[("schema.hcl", "a"); 2][..count])),
                "a schema artifact holds exactly one file, schema.hcl",
            );
        }
        assert!(
            check_content(
                Kind::Migrations,
                &files(&[("ptah.sum", "h1:x"), ("1_a.up.sql", "x")])
            )
            .is_ok()
        );
        refused(
            check_content(Kind::Migrations, &files(&[("1_a.up.sql", "x")])),
            "ptah.sum is missing; run `ptah migrations hash` first",
        );
        refused(
            check_content(Kind::Migrations, &files(&[("ptah.sum", "h1:x")])),
            "no *.sql migration file",
        );
        refused(
            check_content(Kind::Migrations, &files(&[("ptah.sum", "s"), ("notes.txt", "x")])),
            "notes.txt does not belong in a migrations artifact",
        );
    }

    #[test]
    fn provenance_prefers_ptah_variables_then_github() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        };
        let p = Provenance::from_env(&env(&[
            ("PTAH_OCI_SOURCE", "https://example/src"),
            ("GITHUB_SERVER_URL", "https://github.com/"),
            ("GITHUB_REPOSITORY", "o/r"),
            ("GITHUB_SHA", "abc"),
            ("GITHUB_RUN_ID", "7"),
        ]));
        assert_eq!(p.source.as_deref(), Some("https://example/src"));
        assert_eq!(p.revision.as_deref(), Some("abc"));
        assert_eq!(p.build_run.as_deref(), Some("7"));
        let g = Provenance::from_env(&env(&[
            ("GITHUB_SERVER_URL", "https://github.com/"),
            ("GITHUB_REPOSITORY", "o/r"),
        ]));
        assert_eq!(g.source.as_deref(), Some("https://github.com/o/r"));
        let a = g.annotations(Kind::Migrations);
        assert_eq!(a[media::ANNOTATION_KIND], media::MIGRATIONS_ARTIFACT_TYPE);
        assert_eq!(a[media::ANNOTATION_VERSION], env!("CARGO_PKG_VERSION"));
        assert!(!a.contains_key(media::ANNOTATION_REVISION));
    }
}
