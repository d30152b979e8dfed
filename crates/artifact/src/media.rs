//! Media types, annotation keys and file names of Ptah artifacts, exactly as the Go Ptah CLI
//! writes them (reference `ptah.md` §5), and the two artifact kinds built from them.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};

/// Media type of an OCI image manifest.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// Media type of an OCI image index (referrers lists use it).
pub const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";

/// Media type of the OCI empty descriptor, the only config a Ptah artifact may have.
pub const EMPTY_CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";
/// Digest of the empty descriptor's content `{}`.
pub const EMPTY_CONFIG_DIGEST: &str =
    "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
/// Content of the empty descriptor.
pub const EMPTY_CONFIG_BYTES: &[u8] = b"{}";

/// `artifactType` of a migration artifact (plural; the docs' singular spelling is wrong).
pub const MIGRATIONS_ARTIFACT_TYPE: &str = "application/vnd.stokaro.ptah.migrations.v1";
/// Layer media type of every file of a migration artifact.
pub const MIGRATION_FILE_MEDIA_TYPE: &str = "application/vnd.stokaro.ptah.migration.file.v1";
/// `artifactType` of a desired-schema artifact.
pub const SCHEMA_ARTIFACT_TYPE: &str = "application/vnd.stokaro.ptah.schema.v1";
/// Layer media type of the `schema.hcl` layer.
pub const SCHEMA_HCL_MEDIA_TYPE: &str = "application/vnd.stokaro.ptah.schema.hcl.v1";
/// `artifactType` of a lint report referrer.
pub const LINT_ARTIFACT_TYPE: &str = "application/vnd.stokaro.ptah.lint.v1";
/// Layer media type of `lint.json`.
pub const LINT_REPORT_MEDIA_TYPE: &str = "application/vnd.stokaro.ptah.migration.lint.report.v1+json";
/// `artifactType` of a plan report referrer.
pub const PLAN_ARTIFACT_TYPE: &str = "application/vnd.stokaro.ptah.plan.v1";
/// Layer media type of `plan.json`.
pub const PLAN_REPORT_MEDIA_TYPE: &str = "application/vnd.stokaro.ptah.migration.plan.v1+json";
/// `artifactType` of a deployment report referrer.
pub const DEPLOYMENT_ARTIFACT_TYPE: &str = "application/vnd.stokaro.ptah.deployment.v1";
/// Layer media type of `deployment.json`.
pub const DEPLOYMENT_REPORT_MEDIA_TYPE: &str = "application/vnd.stokaro.ptah.deployment.report.v1+json";
/// The generic layer media type used when none is given.
pub const GENERIC_FILE_MEDIA_TYPE: &str = "application/vnd.stokaro.ptah.file.v1";
/// The singular spelling found in the reference docs; no artifact carries it.
pub const MISSPELLED_MIGRATIONS_ARTIFACT_TYPE: &str = "application/vnd.stokaro.ptah.migration.v1";

/// cosign signature artifact type.
pub const COSIGN_SIGNATURE_ARTIFACT_TYPE: &str = "application/vnd.dev.cosign.artifact.sig.v1+json";
/// Notary v2 signature artifact type.
pub const NOTARY_SIGNATURE_ARTIFACT_TYPE: &str = "application/vnd.cncf.notary.signature";
/// The signature types a policy looks for when it names none.
pub const DEFAULT_SIGNATURE_ARTIFACT_TYPES: &[&str] =
    &[COSIGN_SIGNATURE_ARTIFACT_TYPE, NOTARY_SIGNATURE_ARTIFACT_TYPE];

/// Layer annotation holding the file's relative path.
pub const ANNOTATION_TITLE: &str = "org.opencontainers.image.title";
/// Manifest annotation repeating the artifact type; a pull refuses a mismatch.
pub const ANNOTATION_KIND: &str = "io.stokaro.ptah.kind";
/// Provenance: where the content came from (`PTAH_OCI_SOURCE`).
pub const ANNOTATION_SOURCE: &str = "org.opencontainers.image.source";
/// Provenance: the source revision (`PTAH_OCI_REVISION`).
pub const ANNOTATION_REVISION: &str = "org.opencontainers.image.revision";
/// Provenance: the build run (`PTAH_OCI_BUILD_RUN`).
pub const ANNOTATION_BUILD_RUN: &str = "io.stokaro.ptah.build-run";
/// Provenance: the version of the tool that pushed.
pub const ANNOTATION_VERSION: &str = "io.stokaro.ptah.version";
/// Creation time ORAS adds; never relied on.
pub const ANNOTATION_CREATED: &str = "org.opencontainers.image.created";
/// Migration directory format: `auto`, `ptah` or `atlas`.
pub const ANNOTATION_MIGRATION_FORMAT: &str = "io.stokaro.ptah.migration-format";
/// Schema format: always `hcl`.
pub const ANNOTATION_SCHEMA_FORMAT: &str = "io.stokaro.ptah.schema-format";

/// The one file of a schema artifact.
pub const SCHEMA_FILE: &str = "schema.hcl";
/// The Ptah integrity file of a migration directory.
pub const PTAH_SUM_FILE: &str = "ptah.sum";
/// The Atlas integrity file a migration artifact may carry instead.
pub const ATLAS_SUM_FILE: &str = "atlas.sum";
/// The lint configuration a migration artifact may carry.
pub const LINT_CONFIG_FILE: &str = ".ptah-lint.yaml";
/// Values `io.stokaro.ptah.migration-format` may take.
pub const MIGRATION_FORMATS: &[&str] = &["auto", "ptah", "atlas"];

/// The two artifact kinds that carry desired state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// One canonical `schema.hcl`.
    Schema,
    /// A migration directory, file by file.
    Migrations,
}

impl Kind {
    /// The manifest's `artifactType` (and `io.stokaro.ptah.kind`).
    pub fn artifact_type(self) -> &'static str {
        match self {
            Kind::Schema => SCHEMA_ARTIFACT_TYPE,
            Kind::Migrations => MIGRATIONS_ARTIFACT_TYPE,
        }
    }

    /// The media type every layer must have.
    pub fn layer_media_type(self) -> &'static str {
        match self {
            Kind::Schema => SCHEMA_HCL_MEDIA_TYPE,
            Kind::Migrations => MIGRATION_FILE_MEDIA_TYPE,
        }
    }

    /// The kind whose `artifactType` this is.
    pub fn from_artifact_type(artifact_type: &str) -> Option<Kind> {
        match artifact_type {
            SCHEMA_ARTIFACT_TYPE => Some(Kind::Schema),
            MIGRATIONS_ARTIFACT_TYPE => Some(Kind::Migrations),
            _ => None,
        }
    }

    /// Whether `path` may be part of an artifact of this kind.
    pub fn allows_file(self, path: &str) -> bool {
        match self {
            Kind::Schema => path == SCHEMA_FILE,
            Kind::Migrations => {
                path.ends_with(".sql") && path.rsplit('/').next().is_some_and(|base| base.len() > 4)
                    || matches!(path, PTAH_SUM_FILE | ATLAS_SUM_FILE | LINT_CONFIG_FILE)
            }
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Schema => "schema",
            Kind::Migrations => "migrations",
        })
    }
}

impl FromStr for Kind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "schema" => Ok(Kind::Schema),
            "migrations" => Ok(Kind::Migrations),
            other => Err(format!(
                "unknown artifact kind {other:?}: want schema or migrations"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_through_their_artifact_types() {
        for kind in [Kind::Schema, Kind::Migrations] {
            assert_eq!(Kind::from_artifact_type(kind.artifact_type()), Some(kind));
            assert_eq!(kind.to_string().parse::<Kind>(), Ok(kind));
        }
        assert_eq!(
            Kind::from_artifact_type(MISSPELLED_MIGRATIONS_ARTIFACT_TYPE),
            None
        );
    }

    #[test]
    fn file_allowlists_follow_the_reference() {
        assert!(Kind::Schema.allows_file("schema.hcl"));
        assert!(!Kind::Schema.allows_file("other.hcl"));
        for ok in [
            "0001_a.up.sql",
            "nested/deep/0002_b.down.sql",
            "ptah.sum",
            "atlas.sum",
            ".ptah-lint.yaml",
        ] {
            assert!(Kind::Migrations.allows_file(ok), "{ok}");
        }
        for bad in ["README.md", "nested/ptah.sum", ".sql", "dir/.sql", "schema.hcl"] {
            assert!(!Kind::Migrations.allows_file(bad), "{bad}");
        }
    }
}
