//! The registry connection: transport options (TLS, custom CA, plain HTTP), credentials, and the
//! few protocol calls the artifact operations need, each mapped to this crate's [`Error`].

use std::{path::PathBuf, time::Duration};

use futures_util::StreamExt as _;
use oci_client::{
    Client, RegistryOperation,
    client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol},
    manifest::OciDescriptor,
};
use ptah_fingerprint::Digest;
use ptah_ocireference::Reference;
use rustls_pki_types::{CertificateDer, pem::PemObject as _};

use ptah_registrygrant::{Grant, Request};

use crate::{Credential, CredentialSource, Error, Limits, media};

/// Environment variable: path of a PEM bundle of extra CAs to trust.
pub const ENV_CA_FILE: &str = "PTAH_OCI_CA_FILE";

/// How to reach registries.
#[derive(Debug, Clone, Default)]
pub struct RegistryOptions {
    /// Speak plain HTTP instead of HTTPS (only when explicitly asked for).
    pub plain_http: bool,
    /// A PEM bundle of CAs to trust in addition to the system roots: (file, bytes).
    pub ca_bundle: Option<(PathBuf, Vec<u8>)>,
    /// Where credentials come from.
    pub credentials: CredentialSource,
    /// What the registry Secret grants them to, in an operation Pod; `None` enforces nothing
    /// (the standalone CLI, whose user owns both the environment and the reference).
    pub grant: Option<Grant>,
    /// Timeout for connecting (default 30 s).
    pub connect_timeout: Option<Duration>,
    /// Timeout for each read (default 2 min).
    pub read_timeout: Option<Duration>,
}

impl RegistryOptions {
    /// Options from the environment: `PTAH_OCI_CA_FILE` and the credentials of [`crate::auth`].
    pub fn from_env(lookup: &dyn Fn(&str) -> Option<String>) -> Result<RegistryOptions, Error> {
        let ca_bundle = match lookup(ENV_CA_FILE).filter(|v| !v.is_empty()) {
            Some(path) => {
                let path = PathBuf::from(path);
                let bytes = std::fs::read(&path).map_err(|e| Error::CaBundle {
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
                Some((path, bytes))
            }
            None => None,
        };
        Ok(RegistryOptions {
            plain_http: false,
            ca_bundle,
            credentials: CredentialSource::from_env(lookup)?,
            grant: Grant::from_env(lookup)?,
            connect_timeout: None,
            read_timeout: None,
        })
    }

    /// Options from the process environment.
    pub fn from_process_env() -> Result<RegistryOptions, Error> {
        RegistryOptions::from_env(&|name| std::env::var(name).ok())
    }
}

/// Installs ring as the process's rustls provider (idempotent; the graph has no other).
pub fn install_crypto_provider() {
    // An error only means a provider is installed already.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A connection to one registry with its credentials.
#[derive(Clone)]
pub struct Registry {
    pub(crate) client: Client,
    /// The client for capped reads ([`crate::capped`]), with the same trust and timeouts.
    pub(crate) http: reqwest::Client,
    /// `https`, or `http` when plain HTTP was asked for.
    pub(crate) scheme: &'static str,
    pub(crate) host: String,
    pub(crate) auth: oci_client::secrets::RegistryAuth,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// A client for the registry of `reference`. Credentials the grant does not cover for this
    /// registry, transport and CA are refused here, before any connection exists.
    pub fn connect(reference: &Reference, options: &RegistryOptions) -> Result<Registry, Error> {
        install_crypto_provider();
        let host = reference.registry().to_owned();
        let credential = options.credentials.for_registry(&host);
        if let Some(grant) = &options.grant
            && credential != Credential::Anonymous
        {
            grant.check(&Request {
                authority: &host,
                plain_http: options.plain_http,
                ca_bundle: options.ca_bundle.as_ref().map(|(_, bytes)| bytes.as_slice()),
            })?;
        }
        let mut extra = Vec::new();
        if let Some((path, pem)) = &options.ca_bundle {
            extra = parse_bundle(path, pem)?;
        }
        let (protocol, scheme) = if options.plain_http {
            (ClientProtocol::HttpsExcept(vec![host.clone()]), "http")
        } else {
            (ClientProtocol::Https, "https")
        };
        let connect_timeout = options.connect_timeout.unwrap_or(Duration::from_secs(30));
        let read_timeout = options.read_timeout.unwrap_or(Duration::from_secs(120));
        let roots = extra
            .iter()
            .map(|c| reqwest::Certificate::from_der(&c.data))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Error::from_http(&e, &host))?;
        let http = reqwest::Client::builder()
            .tls_certs_merge(roots)
            .connect_timeout(connect_timeout)
            .read_timeout(read_timeout)
            .build()
            .map_err(|e| Error::from_http(&e, &host))?;
        let client = Client::try_from(ClientConfig {
            protocol,
            extra_root_certificates: extra,
            platform_resolver: None,
            connect_timeout: Some(connect_timeout),
            read_timeout: Some(read_timeout),
            ..ClientConfig::default()
        })
        .map_err(|e| Error::from_oci(e, &host, "client setup"))?;
        let auth = credential.to_registry_auth();
        Ok(Registry {
            client,
            http,
            scheme,
            host,
            auth,
        })
    }

    /// `host[:port]`.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The oci-client reference by tag.
    pub(crate) fn by_tag(&self, reference: &Reference, tag: &str) -> oci_client::Reference {
        oci_client::Reference::with_tag(
            self.host.clone(),
            reference.repository().to_owned(),
            tag.to_owned(),
        )
    }

    /// The oci-client reference by digest (never carrying a tag).
    pub(crate) fn by_digest(&self, reference: &Reference, digest: &Digest) -> oci_client::Reference {
        oci_client::Reference::with_digest(
            self.host.clone(),
            reference.repository().to_owned(),
            digest.to_string(),
        )
    }

    async fn authenticate(&self, target: &oci_client::Reference, op: RegistryOperation) -> Result<(), Error> {
        self.client.store_auth_if_needed(&self.host, &self.auth).await;
        if !matches!(self.auth, oci_client::secrets::RegistryAuth::Anonymous) {
            self.client
                .auth(target, &self.auth, op)
                .await
                .map_err(|e| Error::from_oci(e, &self.host, "authentication"))?;
        }
        Ok(())
    }

    /// Streams one blob into memory, refusing more than `descriptor.size` bytes or any limit.
    pub(crate) async fn blob(
        &self,
        reference: &Reference,
        descriptor: &OciDescriptor,
        what: &str,
        limits: &Limits,
        total: &mut u64,
    ) -> Result<Vec<u8>, Error> {
        let declared = u64::try_from(descriptor.size).unwrap_or(0);
        let digest: Digest = descriptor.digest.parse().map_err(|_| Error::InvalidManifest {
            reason: format!("{what}: digest {:?} is not sha256", descriptor.digest),
        })?;
        let target = self.by_digest(reference, &digest);
        // Only media type, digest and size: never the descriptor's `urls` (foreign hosts).
        let clean = OciDescriptor {
            media_type: descriptor.media_type.clone(),
            digest: digest.to_string(),
            size: descriptor.size,
            ..OciDescriptor::default()
        };
        let mut stream = self
            .client
            .pull_blob_stream(&target, &clean)
            .await
            .map_err(|e| Error::from_oci(e, &self.host, what))?;
        if let Some(length) = stream.content_length
            && length > declared
        {
            return Err(Error::SizeMismatch {
                what: what.to_owned(),
                declared,
                actual: length,
            });
        }
        let mut out = Vec::with_capacity(usize::try_from(declared.min(1 << 20)).unwrap_or(0));
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| Error::from_oci(e.into(), &self.host, what))?;
            let received = out.len() as u64 + chunk.len() as u64;
            if received > declared {
                return Err(Error::SizeMismatch {
                    what: what.to_owned(),
                    declared,
                    actual: received,
                });
            }
            limits.check_file_size(what, received)?;
            limits.check_total_size(*total + chunk.len() as u64)?;
            *total += chunk.len() as u64;
            out.extend_from_slice(&chunk);
        }
        if out.len() as u64 != declared {
            return Err(Error::SizeMismatch {
                what: what.to_owned(),
                declared,
                actual: out.len() as u64,
            });
        }
        let actual = Digest::of(&out);
        if actual != digest {
            return Err(Error::DigestMismatch {
                what: what.to_owned(),
                expected: digest.to_string(),
                actual: actual.to_string(),
            });
        }
        Ok(out)
    }

    /// Uploads a blob unless the registry has it already.
    pub(crate) async fn push_blob(&self, reference: &Reference, bytes: &[u8]) -> Result<Digest, Error> {
        let digest = Digest::of(bytes);
        let target = self.by_tag(reference, reference.tag_or_latest());
        self.authenticate(&target, RegistryOperation::Push).await?;
        let what = format!("blob {digest}");
        let exists = self
            .client
            .blob_exists(&target, &digest.to_string())
            .await
            .map_err(|e| Error::from_oci(e, &self.host, &what))?;
        if !exists {
            self.client
                .push_blob(&target, bytes.to_vec(), &digest.to_string())
                .await
                .map_err(|e| Error::from_oci(e, &self.host, &what))?;
        }
        Ok(digest)
    }

    /// Uploads manifest bytes under `tag` with `media_type`.
    pub(crate) async fn push_manifest(
        &self,
        reference: &Reference,
        tag: &str,
        bytes: Vec<u8>,
        media_type: &str,
    ) -> Result<Digest, Error> {
        let digest = Digest::of(&bytes);
        let target = self.by_tag(reference, tag);
        self.authenticate(&target, RegistryOperation::Push).await?;
        let content_type = media_type.parse().map_err(|_| Error::InvalidManifest {
            reason: format!("media type {media_type:?} is not a header value"),
        })?;
        self.client
            .push_manifest_raw(&target, bytes, content_type)
            .await
            .map_err(|e| Error::from_oci(e, &self.host, &format!("manifest {tag}")))?;
        Ok(digest)
    }

    /// The tag of the referrers tag schema for `digest`.
    pub fn fallback_tag(digest: &Digest) -> String {
        format!("sha256-{}", digest.hex())
    }

    /// Media types accepted for Ptah manifests.
    pub(crate) const MANIFEST_ACCEPT: &'static [&'static str] =
        &[media::MANIFEST_MEDIA_TYPE, media::INDEX_MEDIA_TYPE];
}

/// Splits a PEM bundle into certificates; refuses a file without any.
fn parse_bundle(path: &std::path::Path, pem: &[u8]) -> Result<Vec<Certificate>, Error> {
    let mut out = Vec::new();
    for cert in CertificateDer::pem_slice_iter(pem) {
        let cert = cert.map_err(|e| Error::CaBundle {
            path: path.to_owned(),
            reason: format!("not a PEM certificate bundle: {e}"),
        })?;
        out.push(Certificate {
            encoding: CertificateEncoding::Der,
            data: cert.to_vec(),
        });
    }
    if out.is_empty() {
        return Err(Error::CaBundle {
            path: path.to_owned(),
            reason: "no certificate in the file".to_owned(),
        });
    }
    Ok(out)
}
