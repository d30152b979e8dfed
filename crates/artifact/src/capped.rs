//! Manifest and referrers-index GETs read with a cap. oci-client reads these bodies whole before
//! anyone can measure them, so a hostile registry streaming an endless manifest would exhaust a
//! fetch Pod's memory; here a declared length over the cap is refused before the body, and a
//! body is refused as soon as it passes the cap.

use oci_client::{RegistryOperation, manifest::ImageIndexEntry, secrets::RegistryAuth};
use ptah_fingerprint::Digest;
use ptah_ocireference::Reference;
use reqwest::{StatusCode, header};

use crate::{Error, Limits, media, registry::Registry};

/// The registry's digest of the content it served.
const DIGEST_HEADER: &str = "Docker-Content-Digest";

/// A body the registry served in full, within the cap.
struct Body {
    bytes: Vec<u8>,
    digest_header: Option<String>,
}

impl Registry {
    /// Fetches raw manifest bytes, refusing more than `cap`. The bytes are checked against the
    /// reference's digest when it has one, else against the registry's `Docker-Content-Digest`.
    pub(crate) async fn manifest_bytes(
        &self,
        target: &oci_client::Reference,
        what: &str,
        accept: &[&str],
        cap: u64,
    ) -> Result<Vec<u8>, Error> {
        let name = target.digest().or(target.tag()).unwrap_or("latest");
        let url = self.url(target, &format!("manifests/{name}"));
        let Some(body) = self.get_capped(target, &url, accept, what, cap).await? else {
            return Err(Error::NotFound {
                what: what.to_owned(),
            });
        };
        let actual = Digest::of(&body.bytes);
        let expected = match target.digest() {
            Some(pinned) => Some(pinned.to_owned()),
            // A header in another algorithm says nothing we can check.
            None => body.digest_header.filter(|d| d.starts_with("sha256:")),
        };
        if let Some(expected) = expected
            && expected != actual.to_string()
        {
            return Err(Error::DigestMismatch {
                what: format!("manifest of {what}"),
                expected,
                actual: actual.to_string(),
            });
        }
        Ok(body.bytes)
    }

    /// The referrers of `digest`: the referrers API, or the `sha256-<hex>` tag when the API
    /// answers 404; no referrers when neither exists.
    pub(crate) async fn referrers(
        &self,
        reference: &Reference,
        digest: &Digest,
        limits: &Limits,
    ) -> Result<Vec<ImageIndexEntry>, Error> {
        let target = self.by_digest(reference, digest);
        let what = format!("the referrers of {digest}");
        let url = self.url(&target, &format!("referrers/{digest}"));
        let accept = [media::INDEX_MEDIA_TYPE];
        let cap = limits.max_manifest_size;
        let bytes = match self.get_capped(&target, &url, &accept, &what, cap).await? {
            Some(body) => body.bytes,
            None => {
                let tag = self.by_tag(reference, &Registry::fallback_tag(digest));
                match self.manifest_bytes(&tag, &what, &accept, cap).await {
                    Ok(bytes) => bytes,
                    Err(Error::NotFound { .. }) => return Ok(Vec::new()),
                    Err(e) => return Err(e),
                }
            }
        };
        let index: oci_client::manifest::OciImageIndex =
            serde_json::from_slice(&bytes).map_err(|e| Error::InvalidManifest {
                reason: format!("{what}: not an image index: {e}"),
            })?;
        if index.manifests.len() > limits.max_referrers {
            return Err(Error::LimitExceeded {
                what: format!("{what} ({})", index.manifests.len()),
                limit: limits.max_referrers as u64,
            });
        }
        Ok(index.manifests)
    }

    /// `<scheme>://<registry>/v2/<repository>/<rest>`.
    fn url(&self, target: &oci_client::Reference, rest: &str) -> String {
        format!(
            "{}://{}/v2/{}/{rest}",
            self.scheme,
            target.resolve_registry(),
            target.repository()
        )
    }

    /// GETs `url` with pull credentials; `None` on 404, the body when it fits in `cap`.
    async fn get_capped(
        &self,
        target: &oci_client::Reference,
        url: &str,
        accept: &[&str],
        what: &str,
        cap: u64,
    ) -> Result<Option<Body>, Error> {
        let request = self.http.get(url).header(header::ACCEPT, accept.join(", "));
        let mut response = self
            .authorize(target, request)
            .await?
            .send()
            .await
            .map_err(|e| Error::from_http(&e, &self.host))?;
        match response.status() {
            StatusCode::NOT_FOUND => return Ok(None),
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                return Err(Error::Unauthorized {
                    registry: self.host.clone(),
                });
            }
            status if !status.is_success() => {
                return Err(Error::Registry {
                    registry: self.host.clone(),
                    reason: format!("HTTP status {} for {what}", status.as_u16()),
                });
            }
            _ => {}
        }
        if let Some(declared) = response.content_length()
            && declared > cap
        {
            return Err(over_cap(what, &format!("declares {declared} bytes"), cap));
        }
        let digest_header = response
            .headers()
            .get(DIGEST_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let mut bytes = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| Error::from_http(&e, &self.host))?
        {
            if (bytes.len() + chunk.len()) as u64 > cap {
                return Err(over_cap(what, "sends more", cap));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(Some(Body { bytes, digest_header }))
    }

    /// Adds the registry's pull credentials: its bearer token, or basic credentials.
    async fn authorize(
        &self,
        target: &oci_client::Reference,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::RequestBuilder, Error> {
        let token = self
            .client
            .auth(target, &self.auth, RegistryOperation::Pull)
            .await
            .map_err(|e| Error::from_oci(e, &self.host, "authentication"))?;
        Ok(match (token, &self.auth) {
            (Some(token), _) => request.bearer_auth(token),
            (None, RegistryAuth::Basic(user, password)) => request.basic_auth(user, Some(password)),
            (None, _) => request,
        })
    }
}

fn over_cap(what: &str, how: &str, cap: u64) -> Error {
    Error::LimitExceeded {
        what: format!("{what} ({how})"),
        limit: cap,
    }
}
