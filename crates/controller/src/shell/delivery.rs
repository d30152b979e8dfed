//! Durable result delivery at dispatch (docs/security.md, "Durable result delivery"): the
//! one-time enrolment token drawn for a claim, and the ConfigMap that carries it to the runner.
//!
//! The claim keeps only the token's sha256, written with `dispatchStarted` before the Job exists;
//! the token itself lives in memory until the ConfigMap, named after the Job and owned by it, is
//! created. Its Pod cannot start without that ConfigMap, so a ticket that was never handed over
//! ends the Job at its deadline with no result: for an Apply an unknown outcome, proved by reading.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::{batch::v1::Job, core::v1::ConfigMap},
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference},
};
use kube::{Api, ResourceExt, api::PostParams};
use ptah_api::{FIELD_MANAGER, PtahResultRecord};
use ptah_dataplane::OperationId;
use ptah_resultdelivery::{EnrolmentToken, wire::EnrolmentTicket};
use ptah_workload::volumes::{RESULT_CA_KEY, RESULT_TICKET_KEY};
use tracing::{info, warn};

use super::{Context, ShellError, family::Managed};
use crate::{
    operation::{Claim, Event},
    resultrecords::{self, Content},
};

/// The Event reason when the API server refused the ticket's ConfigMap.
pub const RESULT_TICKET_REFUSED: &str = "ResultTicketRefused";

/// A token for a claim about to be dispatched, when this manager delivers results durably.
pub fn draw(ctx: &Context) -> Result<Option<EnrolmentToken>, ShellError> {
    if ctx.binding.result_endpoint.is_none() {
        return Ok(None);
    }
    EnrolmentToken::generate()
        .map(Some)
        .map_err(|e| ShellError::ResultDelivery(format!("drawing an enrolment token: {e}")))
}

/// Creates the ticket ConfigMap of `job` (as created, with its UID) for the claim `c` of `res`.
/// A failure is logged, and a refusal returned as the Event that tells the resource's owner; the
/// Job then ends without a result.
pub async fn hand_over<K: Managed>(
    ctx: &Context,
    res: &K,
    c: &K::Claim,
    job: &Job,
    token: &EnrolmentToken,
) -> Option<Event> {
    let ns = res.namespace().unwrap_or_default();
    let config_map = match ticket(ctx, res, c, job, token) {
        Ok(cm) => cm,
        Err(why) => {
            warn!(job = %c.job_name(), why, "the result ticket cannot be built; the Job ends without a result");
            return None;
        }
    };
    let api: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ns);
    let params = PostParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PostParams::default()
    };
    match api.create(&params, &config_map).await {
        Ok(_) => {
            info!(job = %c.job_name(), "result ticket handed over");
            None
        }
        Err(e) => {
            warn!(job = %c.job_name(), error = %e, "creating the result ticket failed; the Job ends without a result");
            match &e {
                kube::Error::Api(status) if [400, 403, 422].contains(&status.code) => {
                    let note = format!(
                        "the API server refused the result ticket ConfigMap {}: {}",
                        c.job_name(),
                        status.message
                    );
                    Some(Event::warning(RESULT_TICKET_REFUSED, note))
                }
                _ => None,
            }
        }
    }
}

fn ticket<K: Managed>(
    ctx: &Context,
    res: &K,
    c: &K::Claim,
    job: &Job,
    token: &EnrolmentToken,
) -> Result<ConfigMap, &'static str> {
    let ca = ctx
        .result_ca
        .as_ref()
        .ok_or("the manager holds no result CA")?
        .borrow()
        .clone();
    let operation_id =
        OperationId::new(c.id().as_str()).map_err(|_| "the claim's operation id is not an operation id")?;
    let body = EnrolmentTicket {
        namespace: res.namespace().unwrap_or_default(),
        kind: K::RESULT_KIND,
        name: res.name_any(),
        operation_id,
        token: token.reveal(),
    };
    let body = serde_json::to_string(&body).map_err(|_| "the ticket does not serialize")?;
    let owner = OwnerReference {
        api_version: "batch/v1".into(),
        kind: "Job".into(),
        name: job.name_any(),
        uid: job.uid().ok_or("the created Job has no UID")?,
        controller: Some(false),
        block_owner_deletion: None,
    };
    Ok(ConfigMap {
        metadata: ObjectMeta {
            name: Some(c.job_name().to_owned()),
            namespace: res.namespace(),
            labels: Some(BTreeMap::from([(
                ptah_workload::MANAGED_BY_LABEL.to_owned(),
                ptah_workload::MANAGED_BY_VALUE.to_owned(),
            )])),
            owner_references: Some(vec![owner]),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([
            (RESULT_TICKET_KEY.to_owned(), body),
            (RESULT_CA_KEY.to_owned(), ca),
        ])),
        immutable: Some(true),
        ..ConfigMap::default()
    })
}

/// Marks the delivered result of the claim `written` retires as consumed. A failure is logged:
/// retention then keeps the result a day instead of an hour.
pub async fn retire<K: Managed>(ctx: &Context, res: &K, written: &K::Status) {
    let Some(before) = res.status_of() else { return };
    let Some(c) = super::family::retired(K::claim_of(before), K::claim_of(written)) else {
        return;
    };
    if c.result_enrolment_digest().is_none() {
        return;
    }
    let (ns, name) = (res.namespace().unwrap_or_default(), res.name_any());
    let Some(uid) = res.uid() else { return };
    let stem = ptah_resultdelivery::stem(&ns, &uid, c.id().as_str(), c.job_name());
    let owner = resultrecords::owner(K::RESULT_KIND, &name, &uid);
    let record = resultrecords::record(&ns, &stem, owner, Content::Retired);
    let api: Api<PtahResultRecord> = Api::namespaced(ctx.client.clone(), &ns);
    let params = PostParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PostParams::default()
    };
    match api.create(&params, &record).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 => {}
        Err(e) => {
            warn!(job = %c.job_name(), error = %e, "marking the delivered result retired failed; it is kept a day")
        }
    }
}
