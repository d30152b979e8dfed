//! Durable result delivery (docs/security.md, "Durable result delivery"). With
//! `PTAH_RESULT_DELIVERY=durable` the runner enrols with the manager's receiver before anything
//! runs, so an operation that could not report never starts; after the operation it delivers the
//! result over mutual TLS and writes no frame. Its log keeps the redacted diagnostics and one note
//! with the delivery's outcome; the termination summary names the delivered body's digest.

use std::{path::Path, time::Duration};

use jiff::Timestamp;
use ptah_dataplane::{ErrorCode, ResultPayload, env};
use ptah_fingerprint::Digest;
use ptah_resultclient::{ClientError, Delivered, Endpoint, Enrolment, Identity, deliver_until, enrol, until};
use ptah_resultdelivery::{ResultBody, wire::EnrolmentTicket};
use rustls_pki_types::{CertificateDer, ServerName, pem::PemObject as _};

use crate::{emit, error::RunnerError, inputs, inputs::Env, redact::Redactor, report::failure, run};

/// How long delivery may take when the operation has no execution deadline (a read-only one):
/// the Job's own deadline ends the Pod first.
const UNBOUNDED_WINDOW: Duration = Duration::from_secs(600);

/// Where and as whom the runner delivers.
#[derive(Debug)]
pub struct Delivery {
    endpoint: Endpoint,
    enrolment: Enrolment,
    /// Attempts stop here: the execution deadline plus the grace.
    deadline: Option<Timestamp>,
}

fn required<'a>(env: &'a Env, name: &'static str) -> Result<&'a str, RunnerError> {
    env.get(name)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| RunnerError::input(name, "is required for durable delivery"))
}

impl Delivery {
    /// `None` when the log frame is asked for; an error names the variable that is wrong.
    pub fn from_env(env: &Env, operation: ptah_dataplane::Operation) -> Result<Option<Self>, RunnerError> {
        match env.get(env::RESULT_DELIVERY) {
            None => return Ok(None),
            Some(env::RESULT_DELIVERY_DURABLE) => {}
            Some(_) => {
                return Err(RunnerError::input(
                    env::RESULT_DELIVERY,
                    "must be `durable` or unset",
                ));
            }
        }
        let address = required(env, env::RESULT_ENDPOINT)?.to_owned();
        let server_name = ServerName::try_from(required(env, env::RESULT_SERVER_NAME)?.to_owned())
            .map_err(|_| RunnerError::input(env::RESULT_SERVER_NAME, "is not a DNS name or an IP address"))?;
        let ca_file = required(env, env::RESULT_CA_FILE)?;
        let trusted = CertificateDer::pem_file_iter(ca_file)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|_| RunnerError::input(env::RESULT_CA_FILE, "is not a readable PEM bundle"))?;
        if trusted.is_empty() {
            return Err(RunnerError::input(env::RESULT_CA_FILE, "holds no certificate"));
        }
        let ticket_file = required(env, env::RESULT_TICKET_FILE)?;
        let ticket: EnrolmentTicket = std::fs::read(ticket_file)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .ok_or_else(|| {
                RunnerError::input(env::RESULT_TICKET_FILE, "is not a readable enrolment ticket")
            })?;
        if Some(ticket.operation_id.clone()) != inputs::operation_id(env).ok() {
            return Err(RunnerError::input(
                env::RESULT_TICKET_FILE,
                "names another operation",
            ));
        }
        let enrolment = Enrolment {
            ticket,
            pod_name: required(env, env::POD_NAME)?.to_owned(),
            pod_uid: required(env, env::POD_UID)?.to_owned(),
        };
        let deadlines = inputs::Deadlines::read(env, operation)?;
        let deadline = deadlines.execution_not_after.map(|at| {
            let grace = jiff::SignedDuration::try_from(deadlines.grace).unwrap_or_default();
            at.checked_add(grace).unwrap_or(at)
        });
        Ok(Some(Delivery {
            endpoint: Endpoint {
                address,
                server_name,
                trusted,
            },
            enrolment,
            deadline,
        }))
    }

    fn deadline(&self) -> tokio::time::Instant {
        let left = self.deadline.map_or(UNBOUNDED_WINDOW, |at| {
            Duration::try_from(at.duration_since(Timestamp::now())).unwrap_or(Duration::ZERO)
        });
        tokio::time::Instant::now() + left
    }
}

/// The note the log keeps about the delivery.
fn note(outcome: &Result<Delivered, ClientError>, digest: Digest) -> String {
    match outcome {
        Ok(Delivered::Stored) => format!("result delivered ({digest})"),
        Ok(Delivered::AlreadyStored) => format!("result delivered earlier ({digest})"),
        Err(e) => format!("result not delivered ({digest}): {e}"),
    }
}

/// Enrols, runs the operation, delivers its result, and writes the log's note and the
/// termination summary. Returns the payload and whether it was delivered.
pub async fn run(
    config: &run::Config,
    env: &Env,
    delivery: &Delivery,
    termination_log: &Path,
) -> (ResultPayload, bool) {
    let identity: Identity = match until(delivery.deadline(), || {
        enrol(&delivery.endpoint, &delivery.enrolment)
    })
    .await
    {
        Ok(identity) => identity,
        Err(e) => {
            let redactor = env.redactor();
            let mut payload = ResultPayload::new(
                config.operation,
                Some(delivery.enrolment.ticket.operation_id.clone()),
            );
            let message = format!("the result receiver did not enrol this Pod, so nothing ran: {e}");
            payload.error = Some(failure(ErrorCode::Internal, None, &message, &redactor));
            let (_, digest, written) = emit::frame_for(&payload);
            emit::emit_delivered(&written, None, &redactor, termination_log, digest, &message);
            return (written, false);
        }
    };
    let outcome = run::run(config, env).await;
    // An invalid payload (a runner bug) is replaced as the frame path does.
    let (_, _, written) = emit::frame_for(&outcome.payload);
    let body = ResultBody {
        binding: identity.binding().clone(),
        payload: written.clone(),
    };
    let (delivered, digest) = match body.encode() {
        Ok(encoded) => (
            deliver_until(&delivery.endpoint, &identity, &encoded, delivery.deadline()).await,
            encoded.digest,
        ),
        Err(e) => (Err(ClientError::Local(e.to_string())), Digest::of(b"")),
    };
    let line = note(&delivered, digest);
    emit::emit_delivered(
        &written,
        outcome.diagnostics.as_deref(),
        &outcome.redactor,
        termination_log,
        digest,
        &line,
    );
    (written, delivered.is_ok())
}

/// Refuses to run when durable delivery is asked for but misconfigured: the reason goes to the
/// log and the termination summary, and nothing starts.
pub fn refuse(
    operation: ptah_dataplane::Operation,
    env: &Env,
    err: &RunnerError,
    termination_log: &Path,
) -> ResultPayload {
    let redactor: Redactor = env.redactor();
    let mut payload = ResultPayload::new(operation, inputs::operation_id(env).ok());
    payload.error = Some(failure(err.code(), None, &err.to_string(), &redactor));
    let (_, digest, written) = emit::frame_for(&payload);
    emit::emit_delivered(
        &written,
        None,
        &redactor,
        termination_log,
        digest,
        &format!("durable delivery is misconfigured: {err}"),
    );
    written
}
