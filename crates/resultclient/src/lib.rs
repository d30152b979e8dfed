//! The runner's side of durable result delivery (docs/security.md, "Durable result delivery").
//!
//! The runner enrols before it starts `ptah`, so an operation that cannot deliver never mutates
//! anything: it draws an ECDSA P-256 key that never leaves memory, sends a CSR with its one-time
//! token, and gets a client certificate bound to its operation ([`enrol`]). After `ptah` exits it
//! delivers the result body over mutual TLS 1.3 ([`deliver`]), retrying what may succeed later
//! until its deadline ([`deliver_until`]).

#![warn(missing_docs)]

mod http;

use std::{fmt, sync::Arc, time::Duration};

use base64::{Engine as _, engine::general_purpose::STANDARD};
use ptah_dataplane::OperationId;
use ptah_resultdelivery::{
    CONTENT_TYPE, DIGEST_HEADER, EncodedBody, ResourceKind,
    wire::{EnrolAnswer, EnrolRequest, ROUTE_ENROL, ROUTE_RESULTS, RefusalBody},
};
use rcgen::{CertificateParams, KeyPair, PKCS_ECDSA_P256_SHA256};
use rustls::{ClientConfig, RootCertStore};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use tokio::time::Instant;

/// Where the receiver is and how to recognise it.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// `host:port` to connect to.
    pub address: String,
    /// The name the receiver's certificate must carry.
    pub server_name: ServerName<'static>,
    /// The result CA bundle (old and new during a rotation).
    pub trusted: Vec<CertificateDer<'static>>,
}

/// The operation's client identity: the certificate and the key that never left memory.
pub struct Identity {
    certificate: CertificateDer<'static>,
    key: PrivatePkcs8KeyDer<'static>,
}

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Identity")
            .field("certificate_bytes", &self.certificate.len())
            .field("key", &"<redacted>")
            .finish()
    }
}

impl Identity {
    /// The client certificate, DER.
    pub fn certificate(&self) -> &CertificateDer<'static> {
        &self.certificate
    }
}

/// Why enrolment or delivery did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The receiver answered with a refusal that a retry will not change.
    #[error("the receiver refused ({status} {reason}): {message}")]
    Refused {
        /// The HTTP status.
        status: u16,
        /// The receiver's stable reason.
        reason: String,
        /// The receiver's sentence.
        message: String,
    },
    /// The receiver could not be reached, or answered that it cannot work now: a retry may
    /// succeed.
    #[error("the receiver is unavailable: {0}")]
    Unavailable(String),
    /// The deadline passed before an attempt succeeded.
    #[error("the deadline passed; the last attempt: {0}")]
    Deadline(Box<ClientError>),
    /// A local failure: the key, the CSR or the TLS configuration.
    #[error("{0}")]
    Local(String),
}

impl ClientError {
    /// Whether a later attempt may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, ClientError::Unavailable(_))
    }
}

/// How a delivery was acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivered {
    /// Stored by this delivery (201).
    Stored,
    /// The same bytes were stored already (200).
    AlreadyStored,
}

/// Who the runner is: its operation, its Pod and its token. `Debug` never shows the token.
#[derive(Clone, PartialEq, Eq)]
pub struct Enrolment {
    /// The resource's namespace.
    pub namespace: String,
    /// The resource's kind.
    pub kind: ResourceKind,
    /// The resource's name.
    pub name: String,
    /// The claim's operation id.
    pub operation_id: OperationId,
    /// The runner's Pod name.
    pub pod_name: String,
    /// The runner's Pod UID.
    pub pod_uid: String,
    /// The enrolment token, as the projection holds it.
    pub token: String,
}

impl fmt::Debug for Enrolment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Enrolment")
            .field("namespace", &self.namespace)
            .field("kind", &self.kind)
            .field("name", &self.name)
            .field("operation_id", &self.operation_id)
            .field("pod_name", &self.pod_name)
            .field("token", &"<redacted>")
            .finish_non_exhaustive()
    }
}

fn tls(endpoint: &Endpoint, identity: Option<&Identity>) -> Result<Arc<ClientConfig>, ClientError> {
    let mut roots = RootCertStore::empty();
    for ca in &endpoint.trusted {
        roots
            .add(ca.clone())
            .map_err(|e| ClientError::Local(format!("the result CA bundle: {e}")))?;
    }
    let builder = ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| ClientError::Local(e.to_string()))?
        .with_root_certificates(roots);
    let mut config = match identity {
        Some(id) => builder
            .with_client_auth_cert(
                vec![id.certificate.clone()],
                PrivateKeyDer::Pkcs8(id.key.clone_key()),
            )
            .map_err(|e| ClientError::Local(e.to_string()))?,
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

fn refused(status: u16, body: &[u8]) -> ClientError {
    let (reason, message) = serde_json::from_slice::<RefusalBody>(body).map_or_else(
        |_| ("Unknown".to_owned(), format!("status {status}")),
        |r| (r.reason, r.message),
    );
    if status >= 500 || status == 408 || status == 429 {
        ClientError::Unavailable(format!("{status} {reason}: {message}"))
    } else {
        ClientError::Refused {
            status,
            reason,
            message,
        }
    }
}

/// Enrols: a fresh P-256 key, a CSR for it, and the token; returns the client identity.
pub async fn enrol(endpoint: &Endpoint, enrolment: &Enrolment) -> Result<Identity, ClientError> {
    let key =
        KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).map_err(|e| ClientError::Local(e.to_string()))?;
    let csr = CertificateParams::default()
        .serialize_request(&key)
        .map_err(|e| ClientError::Local(e.to_string()))?;
    let request = EnrolRequest {
        namespace: enrolment.namespace.clone(),
        kind: enrolment.kind,
        name: enrolment.name.clone(),
        operation_id: enrolment.operation_id.clone(),
        pod_name: enrolment.pod_name.clone(),
        pod_uid: enrolment.pod_uid.clone(),
        token: enrolment.token.clone(),
        csr: STANDARD.encode(csr.der()),
    };
    let body = serde_json::to_vec(&request).map_err(|e| ClientError::Local(e.to_string()))?;
    let (status, answer) = http::post(endpoint, tls(endpoint, None)?, ROUTE_ENROL, &[], body).await?;
    if status != 201 {
        return Err(refused(status, &answer));
    }
    let certificate = serde_json::from_slice::<EnrolAnswer>(&answer)
        .ok()
        .and_then(|a| a.certificate_der())
        .ok_or_else(|| ClientError::Unavailable("the enrolment answer holds no certificate".to_owned()))?;
    Ok(Identity {
        certificate: CertificateDer::from(certificate),
        key: PrivatePkcs8KeyDer::from(key.serialize_der()),
    })
}

/// Delivers one body; the receiver stores it before it answers.
pub async fn deliver(
    endpoint: &Endpoint,
    identity: &Identity,
    body: &EncodedBody,
) -> Result<Delivered, ClientError> {
    let headers = [
        ("content-type", CONTENT_TYPE.to_owned()),
        (DIGEST_HEADER, body.digest.to_string()),
    ];
    let (status, answer) = http::post(
        endpoint,
        tls(endpoint, Some(identity))?,
        ROUTE_RESULTS,
        &headers,
        body.bytes.clone(),
    )
    .await?;
    match status {
        201 => Ok(Delivered::Stored),
        200 => Ok(Delivered::AlreadyStored),
        _ => Err(refused(status, &answer)),
    }
}

/// Runs `attempt` until it succeeds, fails for good, or `deadline` passes; waits 1 s after the
/// first failure, doubling up to 10 s, never past the deadline.
pub async fn until<T, F, Fut>(deadline: Instant, mut attempt: F) -> Result<T, ClientError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, ClientError>>,
{
    let mut wait = Duration::from_secs(1);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let outcome = match tokio::time::timeout(left, attempt()).await {
            Ok(outcome) => outcome,
            Err(_) => Err(ClientError::Unavailable(
                "the attempt ran into the deadline".to_owned(),
            )),
        };
        match outcome {
            Err(e) if e.is_retryable() => {
                if Instant::now() + wait >= deadline {
                    return Err(ClientError::Deadline(Box::new(e)));
                }
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(10));
            }
            other => return other,
        }
    }
}

/// Delivers with [`until`].
pub async fn deliver_until(
    endpoint: &Endpoint,
    identity: &Identity,
    body: &EncodedBody,
    deadline: Instant,
) -> Result<Delivered, ClientError> {
    until(deadline, || deliver(endpoint, identity, body)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_may_change_later_is_retried() {
        assert!(refused(503, b"{}").is_retryable());
        assert!(refused(429, b"").is_retryable());
        let forbidden = br#"{"reason":"WrongToken","message":"the enrolment token is not the claim's"}"#;
        match refused(403, forbidden) {
            ClientError::Refused { status, reason, .. } => {
                assert_eq!((status, reason.as_str()), (403, "WrongToken"))
            }
            other => panic!("{other:?}"),
        }
        assert!(!refused(409, b"not json").is_retryable());
    }

    #[tokio::test(start_paused = true)]
    async fn attempts_back_off_and_stop_at_the_deadline() {
        let started = Instant::now();
        let mut attempts = 0;
        let outcome: Result<(), ClientError> = until(started + Duration::from_secs(20), || {
            attempts += 1;
            async { Err(ClientError::Unavailable("down".to_owned())) }
        })
        .await;
        assert!(matches!(outcome, Err(ClientError::Deadline(_))), "{outcome:?}");
        // Waits of 1, 2, 4 and 8 s fit in 20 s; the next one (10 s) would not.
        assert_eq!(attempts, 5);
        assert!(Instant::now() - started < Duration::from_secs(20));
        let mut attempts = 0;
        let refused: Result<(), ClientError> = until(started + Duration::from_secs(60), || {
            attempts += 1;
            async {
                Err(ClientError::Refused {
                    status: 403,
                    reason: "Stale".to_owned(),
                    message: String::new(),
                })
            }
        })
        .await;
        assert!(matches!(refused, Err(ClientError::Refused { .. })));
        assert_eq!(attempts, 1, "a refusal is not retried");
    }

    #[test]
    fn neither_the_token_nor_the_key_is_ever_shown() {
        let enrolment = Enrolment {
            namespace: "shop".to_owned(),
            kind: ResourceKind::PtahSchema,
            name: "orders".to_owned(),
            operation_id: OperationId::new("op-1").expect("id"),
            pod_name: "p".to_owned(),
            pod_uid: "u".to_owned(),
            token: "f00dfeed".repeat(8),
        };
        assert!(!format!("{enrolment:?}").contains("f00dfeed"));
        let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).expect("key");
        let identity = Identity {
            certificate: CertificateDer::from(vec![1, 2, 3]),
            key: PrivatePkcs8KeyDer::from(key.serialize_der()),
        };
        let debug = format!("{identity:?}");
        assert!(
            debug.contains("<redacted>") && !debug.contains("PRIVATE"),
            "{debug}"
        );
    }
}
