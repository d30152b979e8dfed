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
use ptah_resultdelivery::{
    CONTENT_TYPE, DIGEST_HEADER, EncodedBody, ResultBinding,
    wire::{EnrolAnswer, EnrolRequest, EnrolmentTicket, ROUTE_ENROL, ROUTE_RESULTS, RefusalBody},
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
    binding: ResultBinding,
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

    /// The binding the certificate names, as the receiver said; the body must carry it.
    pub fn binding(&self) -> &ResultBinding {
        &self.binding
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

/// Who the runner is: its ticket (resource, operation id, token) and its Pod. `Debug` never
/// shows the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enrolment {
    /// The projected ticket.
    pub ticket: EnrolmentTicket,
    /// The runner's Pod name.
    pub pod_name: String,
    /// The runner's Pod UID.
    pub pod_uid: String,
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
    let ticket = &enrolment.ticket;
    let request = EnrolRequest {
        namespace: ticket.namespace.clone(),
        kind: ticket.kind,
        name: ticket.name.clone(),
        operation_id: ticket.operation_id.clone(),
        pod_name: enrolment.pod_name.clone(),
        pod_uid: enrolment.pod_uid.clone(),
        token: ticket.token.clone(),
        csr: STANDARD.encode(csr.der()),
    };
    let body = serde_json::to_vec(&request).map_err(|e| ClientError::Local(e.to_string()))?;
    let (status, answer) = http::post(endpoint, tls(endpoint, None)?, ROUTE_ENROL, &[], body).await?;
    if status != 201 {
        return Err(refused(status, &answer));
    }
    let (certificate, binding) = serde_json::from_slice::<EnrolAnswer>(&answer)
        .ok()
        .and_then(|a| Some((a.certificate_der()?, a.binding)))
        .ok_or_else(|| ClientError::Unavailable("the enrolment answer holds no certificate".to_owned()))?;
    Ok(Identity {
        certificate: CertificateDer::from(certificate),
        key: PrivatePkcs8KeyDer::from(key.serialize_der()),
        binding,
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

    const BINDING: &str = r#"{"resource":{"namespace":"shop","kind":"PtahSchema","name":"orders","uid":"u","generation":1},"claim":{"executionBindingId":"e","inputFingerprint":"sha256:0000000000000000000000000000000000000000000000000000000000000000","operation":"plan","operationId":"op-1"},"job":{"name":"j","uid":"ju"},"pod":{"name":"p","uid":"pu"}}"#;

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
        let ticket = EnrolmentTicket {
            namespace: "shop".to_owned(),
            kind: ptah_resultdelivery::ResourceKind::PtahSchema,
            name: "orders".to_owned(),
            operation_id: ptah_dataplane::OperationId::new("op-1").expect("id"),
            token: "f00dfeed".repeat(8),
        };
        let enrolment = Enrolment {
            ticket,
            pod_name: "p".to_owned(),
            pod_uid: "u".to_owned(),
        };
        assert!(!format!("{enrolment:?}").contains("f00dfeed"));
        let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).expect("key");
        let binding: ResultBinding = serde_json::from_str(BINDING).expect("binding");
        let identity = Identity {
            certificate: CertificateDer::from(vec![1, 2, 3]),
            key: PrivatePkcs8KeyDer::from(key.serialize_der()),
            binding,
        };
        let debug = format!("{identity:?}");
        assert!(
            debug.contains("<redacted>") && !debug.contains("PRIVATE"),
            "{debug}"
        );
    }
}
