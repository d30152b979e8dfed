//! The shell of PtahSchemaApproval admission: the uncached reads, then [`super::rules`].

use kube::ResourceExt;
use kube::core::DynamicObject;
use kube::core::admission::AdmissionRequest;
use ptah_api::{PtahSchema, PtahSchemaApproval, PtahSchemaPlan};
use ptah_planstore::PlanStore;

use super::shell::{SCHEMA_APPROVAL, get_live, namespace};
use super::{common, rules};
use crate::Admission;
use crate::review::{Verdict, approver_from, object_json, typed};

impl Admission {
    /// CREATE: one GET of the plan (the full load happens at validation), the references and
    /// copies checked, the omitted copies filled, the identity stamped.
    pub(super) async fn mutate_schema_approval(
        &self,
        req: &AdmissionRequest<DynamicObject>,
    ) -> Result<Verdict, Verdict> {
        let deny = Verdict::Deny;
        let ns = namespace(req)?;
        let object = object_json(req.object.as_ref(), "object").map_err(deny)?;
        let approval: PtahSchemaApproval = typed(&object, SCHEMA_APPROVAL).map_err(deny)?;
        let approver = approver_from(&req.user_info).map_err(deny)?;
        let plan: PtahSchemaPlan = get_live(&self.client, ns, &approval.spec.plan_ref.name, "plan").await?;
        rules::check_references(&approval.spec, &plan).map_err(deny)?;
        rules::check_bindings(&approval.spec, &plan).map_err(deny)?;
        let derived = rules::derived(&plan).map_err(deny)?;
        let patch = common::stamp(
            &object,
            &common::APPROVAL_STAMP,
            &approver,
            &common::now_rfc3339(),
            &req.uid,
            &derived,
        )
        .map_err(deny)?;
        tracing::info!(
            namespace = ns,
            plan = %approval.spec.plan_ref.name,
            approver = %approver.username,
            request = %req.uid,
            "schema approval stamped"
        );
        Ok(Verdict::Patch(patch))
    }

    /// CREATE: the stamp, the fully loaded plan, the schema waiting for it, the live policy and
    /// (when on) four-eyes.
    pub(super) async fn validate_schema_approval(
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

        let schema: PtahSchema = get_live(&self.client, ns, &spec.schema_ref.name, "schema").await?;
        rules::check_schema(spec, &schema, plan).map_err(deny)?;

        let from = &schema.spec.desired.verification_policy_from;
        let read =
            ptah_managercache::read_configmap_key(self.client.clone(), ns, &from.name, &from.key).await;
        common::check_policy(&plan.spec.binding, read.as_ref()).map_err(deny)?;

        if self.config.require_distinct_approver {
            common::check_four_eyes(&requester, &schema.metadata, "schema").map_err(deny)?;
        }
        tracing::info!(
            namespace = ns,
            schema = %schema.name_any(),
            plan = %spec.plan_ref.name,
            approver = %requester.username,
            "schema approval admitted"
        );
        Ok(Verdict::Allow)
    }
}
