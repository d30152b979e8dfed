//! Approval admission: the mutating stamp and the validating re-check, per approval kind.
//!
//! PtahSchemaApproval is handled fully. PtahMigrationApproval and PtahMigrationRunAcknowledgment
//! are refused ("not supported yet") until the migration lifecycle exists: refusing keeps the
//! webhook fail-closed instead of admitting an unchecked decision.

pub mod rules;
#[cfg(test)]
mod rules_tests;

use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, Operation};
use kube::{Api, ResourceExt};
use ptah_api::{PtahSchema, PtahSchemaApproval, PtahSchemaApprovalSpec, PtahSchemaPlan};
use ptah_planstore::PlanStore;

use crate::Admission;
use crate::review::{Verdict, approver_from, object_json, typed};

const SCHEMA_APPROVAL: &str = "PtahSchemaApproval";
const MIGRATION_KINDS: [&str; 2] = ["PtahMigrationApproval", "PtahMigrationRunAcknowledgment"];

fn unsupported(kind: &str) -> Option<Verdict> {
    if MIGRATION_KINDS.contains(&kind) {
        Some(Verdict::deny(format!(
            "{kind} admission is not supported yet by this manager; the migration lifecycle is not implemented"
        )))
    } else if kind != SCHEMA_APPROVAL {
        Some(Verdict::deny(format!(
            "the approval webhook does not handle kind {kind}"
        )))
    } else {
        None
    }
}

fn namespace(req: &AdmissionRequest<DynamicObject>) -> Result<&str, Verdict> {
    req.namespace
        .as_deref()
        .filter(|ns| !ns.is_empty())
        .ok_or_else(|| Verdict::deny("the approval has no namespace"))
}

impl Admission {
    /// Mutating (CREATE): checks the references against the live plan and stamps the identity.
    pub async fn mutate_approval(&self, req: &AdmissionRequest<DynamicObject>) -> Verdict {
        if let Some(v) = unsupported(&req.kind.kind) {
            return v;
        }
        if req.operation != Operation::Create {
            return Verdict::Allow;
        }
        match self.mutate_schema_approval(req).await {
            Ok(v) | Err(v) => v,
        }
    }

    async fn mutate_schema_approval(
        &self,
        req: &AdmissionRequest<DynamicObject>,
    ) -> Result<Verdict, Verdict> {
        let ns = namespace(req)?;
        let object = object_json(req.object.as_ref(), "object").map_err(Verdict::Deny)?;
        let approval: PtahSchemaApproval = typed(&object, SCHEMA_APPROVAL).map_err(Verdict::Deny)?;
        let approver = approver_from(&req.user_info).map_err(Verdict::Deny)?;
        let plan = self.live_plan(ns, &approval.spec).await?;
        rules::check_references(&approval.spec, &plan).map_err(Verdict::Deny)?;
        rules::check_bindings(&approval.spec, &plan).map_err(Verdict::Deny)?;
        let patch =
            rules::stamp(&object, &approver, &rules::now_rfc3339(), &req.uid).map_err(Verdict::Deny)?;
        tracing::info!(
            namespace = ns,
            plan = %approval.spec.plan_ref.name,
            approver = %approver.username,
            request = %req.uid,
            "approval stamped"
        );
        Ok(Verdict::Patch(patch))
    }

    /// One uncached GET of the plan named by the approval (the full load happens at validation).
    async fn live_plan(&self, ns: &str, spec: &PtahSchemaApprovalSpec) -> Result<PtahSchemaPlan, Verdict> {
        let plans: Api<PtahSchemaPlan> = Api::namespaced(self.client.clone(), ns);
        match plans.get_opt(&spec.plan_ref.name).await {
            Ok(Some(plan)) => Ok(plan),
            Ok(None) => Err(Verdict::deny(format!(
                "plan {} does not exist",
                spec.plan_ref.name
            ))),
            Err(e) => Err(Verdict::deny(format!(
                "cannot read plan {}: {e}",
                spec.plan_ref.name
            ))),
        }
    }

    /// Validating (CREATE/UPDATE): spec immutability on UPDATE, the whole binding on CREATE.
    pub async fn validate_approval(&self, req: &AdmissionRequest<DynamicObject>) -> Verdict {
        if let Some(v) = unsupported(&req.kind.kind) {
            return v;
        }
        let result = match req.operation {
            Operation::Create => self.validate_schema_approval(req).await,
            Operation::Update => update_only_metadata(req),
            _ => Ok(Verdict::Allow),
        };
        match result {
            Ok(v) | Err(v) => v,
        }
    }

    async fn validate_schema_approval(
        &self,
        req: &AdmissionRequest<DynamicObject>,
    ) -> Result<Verdict, Verdict> {
        let deny = Verdict::Deny;
        let ns = namespace(req)?;
        let object = object_json(req.object.as_ref(), "object").map_err(deny)?;
        let approval: PtahSchemaApproval = typed(&object, SCHEMA_APPROVAL).map_err(deny)?;
        let spec = &approval.spec;
        let requester = approver_from(&req.user_info).map_err(deny)?;
        rules::check_identity(spec, &requester).map_err(deny)?;

        // The full load: Ready for its generation, every chunk's name, UID, size and digest.
        let loaded = PlanStore::new(self.client.clone())
            .load(ns, &spec.plan_ref)
            .await
            .map_err(|e| Verdict::Deny(rules::plan_refusal(&e)))?;
        let plan = &loaded.plan;
        rules::check_references(spec, plan).map_err(deny)?;
        rules::check_bindings(spec, plan).map_err(deny)?;

        let schemas: Api<PtahSchema> = Api::namespaced(self.client.clone(), ns);
        let schema = match schemas.get_opt(&spec.schema_ref.name).await {
            Ok(Some(schema)) => schema,
            Ok(None) => {
                return Err(Verdict::deny(format!(
                    "schema {} does not exist",
                    spec.schema_ref.name
                )));
            }
            Err(e) => {
                return Err(Verdict::deny(format!(
                    "cannot read schema {}: {e}",
                    spec.schema_ref.name
                )));
            }
        };
        rules::check_schema(spec, &schema, plan).map_err(deny)?;

        let from = &schema.spec.desired.verification_policy_from;
        let read =
            ptah_managercache::read_configmap_key(self.client.clone(), ns, &from.name, &from.key).await;
        rules::check_policy(plan, read.as_ref()).map_err(deny)?;

        if self.config.require_distinct_approver {
            rules::check_four_eyes(&requester, &schema.metadata).map_err(deny)?;
        }
        tracing::info!(
            namespace = ns,
            schema = %schema.name_any(),
            plan = %spec.plan_ref.name,
            approver = %requester.username,
            "approval admitted"
        );
        Ok(Verdict::Allow)
    }
}

fn update_only_metadata(req: &AdmissionRequest<DynamicObject>) -> Result<Verdict, Verdict> {
    let new = object_json(req.object.as_ref(), "object").map_err(Verdict::Deny)?;
    let old = object_json(req.old_object.as_ref(), "old object").map_err(Verdict::Deny)?;
    rules::check_update(&old, &new).map_err(Verdict::Deny)?;
    Ok(Verdict::Allow)
}
