//! Decision admission: the mutating stamp and the validating re-check, per decision kind.
//!
//! - PtahSchemaApproval ([`schema`]): bound to a Ready schema plan and a schema waiting for it.
//! - PtahMigrationApproval ([`migration`]): bound to a migration plan, the history reading it was
//!   derived from, and a migration waiting for a decision.
//! - PtahMigrationRunAcknowledgment ([`migration`]): names the operation of the migration's
//!   unresolved run.
//!
//! The pure rules live in [`common`] (what all three share), [`rules`] (schema) and
//! [`migration_rules`]; the shells here only read — always uncached — and apply them. Any other
//! kind is refused, so a misrouted webhook fails closed.

pub mod common;
mod migration;
pub mod migration_rules;
pub mod rules;
mod schema;
mod shell;

#[cfg(test)]
mod common_tests;
#[cfg(test)]
mod dispatch_tests;
#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod migration_rules_tests;
#[cfg(test)]
mod rules_tests;

use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, Operation};

use crate::Admission;
use crate::review::{Verdict, object_json};
use shell::{MIGRATION_APPROVAL, RUN_ACKNOWLEDGMENT, SCHEMA_APPROVAL};

fn unhandled(kind: &str) -> Verdict {
    Verdict::deny(format!("the approval webhook does not handle kind {kind}"))
}

impl Admission {
    /// Mutating (CREATE): checks the references against the live objects, fills the derived
    /// copies and stamps the requester's identity, time and request UID.
    pub async fn mutate_approval(&self, req: &AdmissionRequest<DynamicObject>) -> Verdict {
        let kind = req.kind.kind.as_str();
        if ![SCHEMA_APPROVAL, MIGRATION_APPROVAL, RUN_ACKNOWLEDGMENT].contains(&kind) {
            return unhandled(kind);
        }
        if req.operation != Operation::Create {
            return Verdict::Allow;
        }
        let result = match kind {
            SCHEMA_APPROVAL => self.mutate_schema_approval(req).await,
            MIGRATION_APPROVAL => self.mutate_migration_approval(req).await,
            _ => self.mutate_run_acknowledgment(req),
        };
        match result {
            Ok(v) | Err(v) => v,
        }
    }

    /// Validating (CREATE/UPDATE): spec immutability on UPDATE, the whole binding on CREATE.
    pub async fn validate_approval(&self, req: &AdmissionRequest<DynamicObject>) -> Verdict {
        let kind = req.kind.kind.as_str();
        let noun = match kind {
            SCHEMA_APPROVAL | MIGRATION_APPROVAL => common::APPROVAL_STAMP.noun,
            RUN_ACKNOWLEDGMENT => common::ACKNOWLEDGMENT_STAMP.noun,
            _ => return unhandled(kind),
        };
        let result = match (&req.operation, kind) {
            (Operation::Create, SCHEMA_APPROVAL) => self.validate_schema_approval(req).await,
            (Operation::Create, MIGRATION_APPROVAL) => self.validate_migration_approval(req).await,
            (Operation::Create, _) => self.validate_run_acknowledgment(req).await,
            (Operation::Update, _) => update_only_metadata(req, noun),
            _ => Ok(Verdict::Allow),
        };
        match result {
            Ok(v) | Err(v) => v,
        }
    }
}

fn update_only_metadata(req: &AdmissionRequest<DynamicObject>, noun: &str) -> Result<Verdict, Verdict> {
    let new = object_json(req.object.as_ref(), "object").map_err(Verdict::Deny)?;
    let old = object_json(req.old_object.as_ref(), "old object").map_err(Verdict::Deny)?;
    common::check_update(&old, &new, noun).map_err(Verdict::Deny)?;
    Ok(Verdict::Allow)
}
