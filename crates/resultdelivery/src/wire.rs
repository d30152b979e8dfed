//! The receiver's HTTP contract: routes, the enrolment request and answer, and the refusal body.
//! The body of a delivery is a [`crate::ResultBody`].

use crate::{ResourceKind, ResultBinding};
use base64::{Engine as _, engine::general_purpose::STANDARD};
use ptah_dataplane::OperationId;
use serde::{Deserialize, Serialize};

/// Enrolment: server authentication only.
pub const ROUTE_ENROL: &str = "/v1/enrol";
/// Delivery: the client certificate from enrolment.
pub const ROUTE_RESULTS: &str = "/v1/results";
/// The largest enrolment request.
pub const MAX_ENROL_BYTES: usize = 16 * 1024;

/// What a runner sends to enrol.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EnrolRequest {
    /// The resource's namespace.
    pub namespace: String,
    /// The resource's kind.
    pub kind: ResourceKind,
    /// The resource's name.
    pub name: String,
    /// The claim's operation id.
    pub operation_id: OperationId,
    /// The runner's Pod name (downward API).
    pub pod_name: String,
    /// The runner's Pod UID (downward API).
    pub pod_uid: String,
    /// The enrolment token, 64 lowercase hex digits.
    pub token: String,
    /// The CSR, DER in standard base64.
    pub csr: String,
}

impl std::fmt::Debug for EnrolRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnrolRequest")
            .field("namespace", &self.namespace)
            .field("kind", &self.kind)
            .field("name", &self.name)
            .field("operation_id", &self.operation_id)
            .field("pod_name", &self.pod_name)
            .field("token", &"<redacted>")
            .finish_non_exhaustive()
    }
}

impl EnrolRequest {
    /// The CSR's DER bytes.
    pub fn csr_der(&self) -> Option<Vec<u8>> {
        STANDARD.decode(&self.csr).ok()
    }
}

/// What an admitted enrolment answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EnrolAnswer {
    /// The client certificate, DER in standard base64.
    pub certificate: String,
    /// The binding the certificate names, for the body the runner will send.
    pub binding: ResultBinding,
}

impl EnrolAnswer {
    /// The answer carrying `certificate` for `binding`.
    pub fn new(certificate: &[u8], binding: ResultBinding) -> Self {
        EnrolAnswer {
            certificate: STANDARD.encode(certificate),
            binding,
        }
    }

    /// The certificate's DER bytes.
    pub fn certificate_der(&self) -> Option<Vec<u8>> {
        STANDARD.decode(&self.certificate).ok()
    }
}

/// What every refusal answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RefusalBody {
    /// A stable CamelCase reason.
    pub reason: String,
    /// A sentence for people; never a token or a body.
    pub message: String,
}

/// What the operation's ConfigMap projects for the runner: who it enrols as, and the one-time
/// token. `Debug` never shows the token.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EnrolmentTicket {
    /// The resource's namespace.
    pub namespace: String,
    /// The resource's kind.
    pub kind: ResourceKind,
    /// The resource's name.
    pub name: String,
    /// The claim's operation id.
    pub operation_id: OperationId,
    /// The enrolment token, 64 lowercase hex digits.
    pub token: String,
}

impl std::fmt::Debug for EnrolmentTicket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnrolmentTicket")
            .field("namespace", &self.namespace)
            .field("kind", &self.kind)
            .field("name", &self.name)
            .field("operation_id", &self.operation_id)
            .field("token", &"<redacted>")
            .finish()
    }
}
