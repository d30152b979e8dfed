//! The shells of PtahMigrationApproval and PtahMigrationRunAcknowledgment admission: the uncached
//! reads, then [`super::migration_rules`].

use kube::ResourceExt;
use kube::core::DynamicObject;
use kube::core::admission::AdmissionRequest;
use ptah_api::{PtahMigration, PtahMigrationApproval, PtahMigrationPlan, PtahMigrationRunAcknowledgment};
use serde_json::Map;

use super::common;
use super::migration_rules as rules;
use super::shell::{MIGRATION_APPROVAL, RUN_ACKNOWLEDGMENT, get_live, namespace};
use crate::Admission;
use crate::review::{Verdict, approver_from, object_json, typed};

impl Admission {
    /// CREATE: the plan and the migration read, references, copies and history fingerprint
    /// checked, omitted copies (and the history fingerprint) filled, the identity stamped.
    pub(super) async fn mutate_migration_approval(
        &self,
        req: &AdmissionRequest<DynamicObject>,
    ) -> Result<Verdict, Verdict> {
        let deny = Verdict::Deny;
        let ns = namespace(req)?;
        let object = object_json(req.object.as_ref(), "object").map_err(deny)?;
        let approval: PtahMigrationApproval = typed(&object, MIGRATION_APPROVAL).map_err(deny)?;
        let spec = &approval.spec;
        let approver = approver_from(&req.user_info).map_err(deny)?;
        let plan: PtahMigrationPlan = get_live(&self.client, ns, &spec.plan_ref.name, "plan").await?;
        rules::check_references(spec, &plan).map_err(deny)?;
        rules::check_bindings(spec, &plan).map_err(deny)?;
        let migration: PtahMigration =
            get_live(&self.client, ns, &spec.migration_ref.name, "migration").await?;
        rules::check_history(spec, &plan, &migration).map_err(deny)?;
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
            migration = %spec.migration_ref.name,
            plan = %spec.plan_ref.name,
            approver = %approver.username,
            request = %req.uid,
            "migration approval stamped"
        );
        Ok(Verdict::Patch(patch))
    }

    /// CREATE: the stamp, the plan, the migration waiting for a decision on it, the live policy
    /// and (when on) four-eyes.
    pub(super) async fn validate_migration_approval(
        &self,
        req: &AdmissionRequest<DynamicObject>,
    ) -> Result<Verdict, Verdict> {
        let deny = Verdict::Deny;
        let ns = namespace(req)?;
        let object = object_json(req.object.as_ref(), "object").map_err(deny)?;
        let approval: PtahMigrationApproval = typed(&object, MIGRATION_APPROVAL).map_err(deny)?;
        let spec = &approval.spec;
        let requester = approver_from(&req.user_info).map_err(deny)?;
        rules::check_identity(spec, &requester).map_err(deny)?;

        let plan: PtahMigrationPlan = get_live(&self.client, ns, &spec.plan_ref.name, "plan").await?;
        rules::check_references(spec, &plan).map_err(deny)?;
        rules::check_bindings(spec, &plan).map_err(deny)?;

        let migration: PtahMigration =
            get_live(&self.client, ns, &spec.migration_ref.name, "migration").await?;
        rules::check_migration(spec, &migration, &plan).map_err(deny)?;

        let from = &migration.spec.artifact.verification_policy_from;
        let read =
            ptah_managercache::read_configmap_key(self.client.clone(), ns, &from.name, &from.key).await;
        common::check_policy(&plan.spec.binding, read.as_ref()).map_err(deny)?;

        if self.config.require_distinct_approver {
            common::check_four_eyes(&requester, &migration.metadata, "migration").map_err(deny)?;
        }
        tracing::info!(
            namespace = ns,
            migration = %migration.name_any(),
            plan = %spec.plan_ref.name,
            approver = %requester.username,
            "migration approval admitted"
        );
        Ok(Verdict::Allow)
    }

    /// CREATE: stamps who acknowledged, when, and the request UID (the migration is checked at
    /// validation; an acknowledgment copies nothing from it).
    pub(super) fn mutate_run_acknowledgment(
        &self,
        req: &AdmissionRequest<DynamicObject>,
    ) -> Result<Verdict, Verdict> {
        let deny = Verdict::Deny;
        let ns = namespace(req)?;
        let object = object_json(req.object.as_ref(), "object").map_err(deny)?;
        let ack: PtahMigrationRunAcknowledgment = typed(&object, RUN_ACKNOWLEDGMENT).map_err(deny)?;
        let who = approver_from(&req.user_info).map_err(deny)?;
        let patch = common::stamp(
            &object,
            &common::ACKNOWLEDGMENT_STAMP,
            &who,
            &common::now_rfc3339(),
            &req.uid,
            &Map::new(),
        )
        .map_err(deny)?;
        tracing::info!(
            namespace = ns,
            migration = %ack.spec.migration_ref.name,
            operation = %ack.spec.operation_id,
            acknowledged_by = %who.username,
            request = %req.uid,
            "run acknowledgment stamped"
        );
        Ok(Verdict::Patch(patch))
    }

    /// CREATE: the stamp, and the live migration's unresolved run is the named operation.
    /// Acknowledgments are not subject to four-eyes: they approve no change.
    pub(super) async fn validate_run_acknowledgment(
        &self,
        req: &AdmissionRequest<DynamicObject>,
    ) -> Result<Verdict, Verdict> {
        let deny = Verdict::Deny;
        let ns = namespace(req)?;
        let object = object_json(req.object.as_ref(), "object").map_err(deny)?;
        let ack: PtahMigrationRunAcknowledgment = typed(&object, RUN_ACKNOWLEDGMENT).map_err(deny)?;
        let spec = &ack.spec;
        let requester = approver_from(&req.user_info).map_err(deny)?;
        rules::check_acknowledger(spec, &requester).map_err(deny)?;
        let migration: PtahMigration =
            get_live(&self.client, ns, &spec.migration_ref.name, "migration").await?;
        rules::check_acknowledgment(spec, &migration).map_err(deny)?;
        tracing::info!(
            namespace = ns,
            migration = %migration.name_any(),
            operation = %spec.operation_id,
            acknowledged_by = %requester.username,
            "run acknowledgment admitted"
        );
        Ok(Verdict::Allow)
    }
}
