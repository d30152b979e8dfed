//! Ptah OCI artifacts, as the Go Ptah CLI writes and reads them: resolve a reference to a digest
//! once, inspect, verify against a policy, pull into memory with every extraction limit, write to
//! disk, and push schema and migration artifacts with provenance.
//!
//! - [`Registry`]: one registry connection (TLS with optional extra CAs, plain HTTP only when
//!   asked, credentials per [`auth`]); its methods take explicit [`Limits`].
//! - The free functions ([`resolve`], [`inspect`], [`verify`], [`pull`], [`pull_schema`],
//!   [`pull_migrations`], [`push_schema`], [`push_migrations`]) connect with
//!   [`RegistryOptions`] and the default limits, for one-line use by commands.
//!
//! This crate is pure: it never depends on a Kubernetes client or a database driver.

pub mod auth;
mod capped;
mod error;
mod limits;
mod manifest;
pub mod media;
mod policy;
mod pull;
mod push;
mod registry;
mod resolve;
mod write;

pub use auth::{Credential, CredentialSource, DockerConfig, Secret};
pub use error::Error;
pub use limits::Limits;
pub use manifest::{Entry, build as build_manifest, check as check_manifest, parse as parse_manifest};
pub use media::Kind;
pub use policy::{Facts, Finding, Policy, Report, requirement};
pub use ptah_fingerprint::Digest;
pub use ptah_ocireference::Reference;
pub use pull::{Artifact, File, Listing};
pub use push::{
    ENV_BUILD_RUN, ENV_REVISION, ENV_SOURCE, Provenance, Pushed, check_content, read_migration_dir,
};
pub use registry::{ENV_CA_FILE, Registry, RegistryOptions, install_crypto_provider};
pub use resolve::{Inspection, LayerInfo, Resolved};
pub use write::{DIR_MODE, FILE_MODE, write_files};

impl Registry {
    /// Resolves `reference`, lists its referrers and evaluates `policy`; every rule is reported.
    /// `requested` is the reference as its author wrote it, when `reference` is the pinned form
    /// of it: `require_digest_pin` asks whether the author pinned, not whether a resolver did.
    pub async fn verify(
        &self,
        reference: &Reference,
        requested: Option<&Reference>,
        policy: &Policy,
        limits: &Limits,
    ) -> Result<Report, Error> {
        if let Some(requested) = requested
            && (requested.registry() != reference.registry()
                || requested.repository() != reference.repository()
                || requested.digest().is_some_and(|d| Some(d) != reference.digest()))
        {
            return Err(Error::Reference(ptah_ocireference::Error::InvalidRepository(
                format!("the requested reference {requested} is not a form of {reference}"),
            )));
        }
        let resolved = self.resolve(reference, limits).await?;
        let referrer_types = if policy.require_signature {
            self.referrers(reference, &resolved.digest, limits)
                .await?
                .into_iter()
                .filter_map(|entry| entry.artifact_type)
                .collect()
        } else {
            Vec::new()
        };
        let facts = Facts {
            reference: reference.to_string(),
            digest: resolved.digest.to_string(),
            pinned: reference.is_pinned() && requested.is_none_or(Reference::is_pinned),
            artifact_type: resolved.manifest.artifact_type.clone(),
            annotations: resolved.manifest.annotations.clone().unwrap_or_default(),
            referrer_types,
        };
        Ok(policy.evaluate(&facts))
    }
}

/// Resolves `reference` to its digest and manifest.
pub async fn resolve(options: &RegistryOptions, reference: &Reference) -> Result<Resolved, Error> {
    Registry::connect(reference, options)?
        .resolve(reference, &Limits::default())
        .await
}

/// Describes the artifact at `reference` without fetching layers.
pub async fn inspect(options: &RegistryOptions, reference: &Reference) -> Result<Inspection, Error> {
    Registry::connect(reference, options)?
        .inspect(reference, &Limits::default())
        .await
}

/// Verifies the artifact at `reference` against `policy`.
pub async fn verify(
    options: &RegistryOptions,
    reference: &Reference,
    policy: &Policy,
) -> Result<Report, Error> {
    Registry::connect(reference, options)?
        .verify(reference, None, policy, &Limits::default())
        .await
}

/// Pulls the artifact at `reference` into memory; `expected` refuses another kind.
pub async fn pull(
    options: &RegistryOptions,
    reference: &Reference,
    expected: Option<Kind>,
) -> Result<Artifact, Error> {
    Registry::connect(reference, options)?
        .pull(reference, expected, &Limits::default())
        .await
}

/// Pulls a schema artifact; `schema_hcl()` on the result gives the document.
pub async fn pull_schema(options: &RegistryOptions, reference: &Reference) -> Result<Artifact, Error> {
    pull(options, reference, Some(Kind::Schema)).await
}

/// Pulls a migration artifact; `into_files()` feeds `ptah_migrate::Directory::from_files`.
pub async fn pull_migrations(options: &RegistryOptions, reference: &Reference) -> Result<Artifact, Error> {
    pull(options, reference, Some(Kind::Migrations)).await
}

/// Pushes one canonical `schema.hcl` as a schema artifact.
pub async fn push_schema(
    options: &RegistryOptions,
    reference: &Reference,
    schema_hcl: Vec<u8>,
    provenance: &Provenance,
) -> Result<Pushed, Error> {
    Registry::connect(reference, options)?
        .push(
            reference,
            Kind::Schema,
            vec![(media::SCHEMA_FILE.to_owned(), schema_hcl)],
            provenance,
            &Limits::default(),
        )
        .await
}

/// Pushes a migration directory given as `(relative path, bytes)`; `ptah.sum` must be among them.
pub async fn push_migrations(
    options: &RegistryOptions,
    reference: &Reference,
    files: Vec<(String, Vec<u8>)>,
    provenance: &Provenance,
) -> Result<Pushed, Error> {
    Registry::connect(reference, options)?
        .push(reference, Kind::Migrations, files, provenance, &Limits::default())
        .await
}
