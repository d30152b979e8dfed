//! Binding a result frame to the claim that asked for it, before anything in it is believed.

use ptah_api::conditions::Reason;
use ptah_dataplane::ResultPayload;

use super::{claim::Claim, observed::Binding};

/// Checks operation, operation id, protocol version, realm and target identity. On refusal
/// returns the condition reason and a message.
pub fn bind(binding: &Binding, c: &impl Claim, p: &ResultPayload) -> Result<(), (Reason, String)> {
    if i64::from(p.protocol_version) != binding.runner_protocol_version {
        return Err((
            Reason::RunnerProtocolMismatch,
            format!(
                "the runner speaks protocol {}, the manager {}",
                p.protocol_version, binding.runner_protocol_version
            ),
        ));
    }
    if p.operation != c.operation() {
        return Err((
            Reason::OperationFailed,
            format!("the result is for {}, not {}", p.operation, c.operation()),
        ));
    }
    if p.operation_id.as_ref().map(|i| i.as_str()) != Some(c.id().as_str()) {
        return Err((
            Reason::OperationFailed,
            "the result names another operation id".into(),
        ));
    }
    if !p.operation.uses_database() {
        return Ok(());
    }
    if p.is_success() || p.target_identity_digest.is_some() {
        let reported = p.target_identity_digest.map(|d| d.to_string());
        if let Some(expected) = c.target_identity_digest()
            && reported.as_deref() != Some(expected.as_str())
        {
            return Err((
                Reason::OperationFailed,
                "the result reports another database than the claim expected".into(),
            ));
        }
        if p.is_success() && reported.is_none() {
            return Err((
                Reason::OperationFailed,
                "a successful database result must report its target identity".into(),
            ));
        }
    }
    let echoed = p.coordination_digest.map(|d| d.to_string());
    if p.is_success() && echoed.as_deref() != c.coordination_digest().map(|d| d.as_str()) {
        return Err((
            Reason::OperationFailed,
            "the result names another realm than the claim".into(),
        ));
    }
    Ok(())
}
