//! The four files of the TLS Secret, and PEM encoding.
//!
//! The Secret holds, besides the serving pair the manager mounts, the CA bundle (`ca.crt`) and the
//! CA's private key (`ca.key`). The CA key lives here, rather than only in the rotator's memory,
//! because re-issuing a serving certificate months later needs it and the rotator keeps no other
//! state: a restarted rotator must sign with the same CA the webhooks already trust, or every
//! restart would be a CA rotation. The exposure is bounded: only the rotator's ServiceAccount has
//! a Role on this one Secret; the manager has no Secret permission at all and receives the files
//! through a kubelet volume that projects only `tls.crt` and `tls.key` (the chart's `items`), so
//! the CA key never reaches the manager Pod. Anyone else able to read Secrets in the release
//! namespace (cluster admins) can read it, which the release-namespace contract already assumes
//! (that namespace is trusted infrastructure).

use std::{collections::BTreeMap, fmt};

use base64::Engine as _;
use k8s_openapi::ByteString;

/// Secret key of the serving certificate (PEM, leaf first).
pub const TLS_CRT: &str = "tls.crt";
/// Secret key of the serving certificate's private key (PKCS#8 PEM).
pub const TLS_KEY: &str = "tls.key";
/// Secret key of the CA bundle the webhooks trust (PEM, signing CA first; two during a CA rotation).
pub const CA_CRT: &str = "ca.crt";
/// Secret key of the signing CA's private key (PKCS#8 PEM); see the module documentation.
pub const CA_KEY: &str = "ca.key";
/// The Secret type the API server validates `tls.crt`/`tls.key` for.
pub const SECRET_TYPE: &str = "kubernetes.io/tls";

/// The Secret's four files as bytes; `None` where a key is absent.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TlsFiles {
    /// `tls.crt`.
    pub tls_crt: Option<Vec<u8>>,
    /// `tls.key`.
    pub tls_key: Option<Vec<u8>>,
    /// `ca.crt`.
    pub ca_crt: Option<Vec<u8>>,
    /// `ca.key`.
    pub ca_key: Option<Vec<u8>>,
}

// Key material must never reach a log line, so Debug prints only which files exist and their sizes.
impl fmt::Debug for TlsFiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let size = |v: &Option<Vec<u8>>| v.as_ref().map(Vec::len);
        f.debug_struct("TlsFiles")
            .field("tls_crt_bytes", &size(&self.tls_crt))
            .field("tls_key_bytes", &size(&self.tls_key))
            .field("ca_crt_bytes", &size(&self.ca_crt))
            .field("ca_key_bytes", &size(&self.ca_key))
            .finish()
    }
}

impl TlsFiles {
    /// Reads the four keys of a Secret's `data`; other keys are ignored.
    pub fn from_data(data: &BTreeMap<String, ByteString>) -> Self {
        let get = |k: &str| data.get(k).map(|v| v.0.clone());
        TlsFiles {
            tls_crt: get(TLS_CRT),
            tls_key: get(TLS_KEY),
            ca_crt: get(CA_CRT),
            ca_key: get(CA_KEY),
        }
    }

    /// The Secret `data` holding these files (absent files are left out).
    pub fn to_data(&self) -> BTreeMap<String, ByteString> {
        [
            (TLS_CRT, &self.tls_crt),
            (TLS_KEY, &self.tls_key),
            (CA_CRT, &self.ca_crt),
            (CA_KEY, &self.ca_key),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| (k.to_owned(), ByteString(v.clone()))))
        .collect()
    }
}

/// Encodes DER certificates as concatenated `CERTIFICATE` PEM blocks.
pub fn certificates_pem<'a>(ders: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = String::new();
    for der in ders {
        let b64 = base64::engine::general_purpose::STANDARD.encode(der);
        out.push_str("-----BEGIN CERTIFICATE-----\n");
        // RFC 7468 lines are 64 characters; base64 output is ASCII, so byte chunks are characters.
        for line in b64.as_bytes().chunks(64) {
            out.push_str(&String::from_utf8_lossy(line));
            out.push('\n');
        }
        out.push_str("-----END CERTIFICATE-----\n");
    }
    out.into_bytes()
}
