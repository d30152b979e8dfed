//! The two handlers. Each reads, asks [`crate::decide`], and performs what it says.

use std::{net::SocketAddr, sync::Arc};

use axum::{
    Extension, Json,
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
};
use jiff::Timestamp;
use ptah_fingerprint::Digest;
use ptah_resultdelivery::{
    BodyError, CONTENT_TYPE, DIGEST_HEADER, EncodedBody, ObjectRef, ResultBody,
    wire::{EnrolAnswer, EnrolRequest, RefusalBody},
};
use rustls_pki_types::CertificateDer;

use crate::{
    Backend, DeliveryDecision, EnrolmentRequest, EnrolmentToken, Live, Refusal, ResultCa, Stored,
    admit_delivery, admit_enrolment,
    backend::{EnrolmentTarget, Unavailable},
    binding_of, issue_client,
};

/// Who is on the other end of a connection.
#[derive(Debug, Clone)]
pub struct Peer {
    /// The connection's source address.
    pub addr: SocketAddr,
    /// The client certificate rustls verified against the result CA, when one was presented.
    pub certificate: Option<CertificateDer<'static>>,
}

/// The receiver's state: the cluster behind it and the CA it signs with.
pub struct Receiver<B> {
    /// Reads and writes.
    pub backend: Arc<B>,
    /// The result CA.
    pub ca: Arc<ResultCa>,
}

impl<B> Clone for Receiver<B> {
    fn clone(&self) -> Self {
        Receiver {
            backend: self.backend.clone(),
            ca: self.ca.clone(),
        }
    }
}

fn refuse(status: StatusCode, reason: &str, message: impl Into<String>) -> Response {
    let body = RefusalBody {
        reason: reason.to_owned(),
        message: message.into(),
    };
    (status, Json(body)).into_response()
}

fn refusal(r: &Refusal) -> Response {
    let status = StatusCode::from_u16(r.status()).unwrap_or(StatusCode::FORBIDDEN);
    refuse(status, r.reason(), r.to_string())
}

fn unavailable(e: &Unavailable) -> Response {
    refuse(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", e.to_string())
}

/// `POST /v1/enrol`: a runner with its token and a CSR gets its client certificate, once.
pub async fn enrol<B: Backend>(
    State(receiver): State<Receiver<B>>,
    Extension(peer): Extension<Peer>,
    body: Bytes,
) -> Response {
    let Ok(request) = serde_json::from_slice::<EnrolRequest>(&body) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "Malformed",
            "the enrolment request is not of its shape",
        );
    };
    let (Ok(token), Some(csr)) = (EnrolmentToken::parse(&request.token), request.csr_der()) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "Malformed",
            "the token or the CSR is malformed",
        );
    };
    let target = EnrolmentTarget {
        namespace: request.namespace.clone(),
        kind: request.kind,
        name: request.name.clone(),
        operation_id: request.operation_id.clone(),
        pod_name: request.pod_name.clone(),
    };
    let live = match receiver.backend.live_for_enrolment(&target).await {
        Ok(live) => live,
        Err(e) => return unavailable(&e),
    };
    let asked = EnrolmentRequest {
        operation_id: request.operation_id.clone(),
        pod: ObjectRef {
            name: request.pod_name.clone(),
            uid: request.pod_uid.clone(),
        },
        token,
        source: peer.addr.ip(),
    };
    let binding = match admit_enrolment(&asked, &live) {
        Ok(binding) => binding,
        Err(r) => {
            tracing::info!(namespace = %target.namespace, name = %target.name, operation_id = %target.operation_id, reason = r.reason(), "result enrolment refused");
            return refusal(&r);
        }
    };
    let not_after = live.claim.as_ref().map_or_else(Timestamp::now, |c| c.not_after);
    // The CSR is checked before the one-time record is spent on it.
    let certificate = match issue_client(&receiver.ca, &csr, &binding, Timestamp::now(), not_after) {
        Ok(certificate) => certificate,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, "Certificate", e.to_string()),
    };
    match receiver.backend.create_credential(&binding).await {
        Ok(true) => {}
        Ok(false) => return refusal(&Refusal::AlreadyEnrolled),
        Err(e) => return unavailable(&e),
    }
    tracing::info!(namespace = %target.namespace, name = %target.name, operation_id = %target.operation_id, pod = %target.pod_name, "result client enrolled");
    (StatusCode::CREATED, Json(EnrolAnswer::new(&certificate, binding))).into_response()
}

/// `POST /v1/results`: an enrolled runner's result, stored before it is acknowledged.
pub async fn deliver<B: Backend>(
    State(receiver): State<Receiver<B>>,
    Extension(peer): Extension<Peer>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(certificate) = peer.certificate else {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "NoClientCertificate",
            "delivery needs the enrolled client certificate",
        );
    };
    let binding = match binding_of(&certificate) {
        Ok(binding) => binding,
        Err(e) => return refuse(StatusCode::FORBIDDEN, "Identity", e.to_string()),
    };
    if headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) != Some(CONTENT_TYPE) {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "ContentType",
            format!("the content type must be {CONTENT_TYPE}"),
        );
    }
    let declared = headers
        .get(DIGEST_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let decoded = match ResultBody::decode(&body, declared) {
        Ok(decoded) => decoded,
        Err(e @ BodyError::TooLarge(_)) => {
            return refuse(StatusCode::PAYLOAD_TOO_LARGE, "TooLarge", e.to_string());
        }
        Err(e) => return refuse(StatusCode::BAD_REQUEST, "Body", e.to_string()),
    };
    let digest = Digest::of(&body);
    let stored = match receiver.backend.stored(&binding).await {
        Ok(stored) => stored,
        Err(e) => return unavailable(&e),
    };
    // A complete record decides alone; otherwise the live objects must still match.
    let live = match stored {
        Stored::Complete(_) => Live::default(),
        _ => match receiver.backend.live_for_binding(&binding).await {
            Ok(live) => live,
            Err(e) => return unavailable(&e),
        },
    };
    let resource = &binding.resource;
    match admit_delivery(&binding, &decoded, digest, stored, &live) {
        Ok(DeliveryDecision::AlreadyStored) => StatusCode::OK.into_response(),
        Ok(DeliveryDecision::Store) => {
            let encoded = EncodedBody {
                bytes: body.to_vec(),
                digest,
            };
            match receiver.backend.store(&binding, &encoded).await {
                Ok(()) => {
                    tracing::info!(namespace = %resource.namespace, name = %resource.name, operation_id = %binding.claim.operation_id, bytes = encoded.bytes.len(), "result stored");
                    StatusCode::CREATED.into_response()
                }
                Err(e) => unavailable(&e),
            }
        }
        Err(r) => {
            tracing::info!(namespace = %resource.namespace, name = %resource.name, operation_id = %binding.claim.operation_id, reason = r.reason(), "result delivery refused");
            refusal(&r)
        }
    }
}
