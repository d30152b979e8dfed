//! Reading a durably delivered result: the `PtahResultRecord`s of the claim's operation, never
//! the Pod log. A Job built for durable delivery has no frame to fall back on; without a complete
//! record its result is missing, which for an Apply is an unknown outcome proved by reading.

use kube::{Api, Client};
use ptah_api::PtahResultRecord;
use ptah_resultdelivery::ResultBody;

use super::results;
use crate::{
    operation::{Claim, ResultRead},
    resultrecords::{self, Found},
};

/// The identity of the operation whose result is read.
pub struct Reading<'a> {
    /// The resource's namespace.
    pub namespace: &'a str,
    /// The resource's UID.
    pub resource_uid: &'a str,
    /// The Job's UID.
    pub job_uid: &'a str,
}

/// Reads the delivered result of claim `c`.
pub async fn read(client: &Client, at: &Reading<'_>, c: &impl Claim) -> ResultRead {
    let stem = ptah_resultdelivery::stem(at.namespace, at.resource_uid, c.id().as_str(), c.job_name());
    let api: Api<PtahResultRecord> = Api::namespaced(client.clone(), at.namespace);
    let list = match api.list(&resultrecords::list_params(&stem)).await {
        Ok(l) => l,
        Err(e) => {
            return ResultRead::Unavailable(format!("listing the result records of {}: {e}", c.job_name()));
        }
    };
    match resultrecords::stored(&list.items, &stem) {
        Ok(Found::Complete(bytes, digest)) => body(&bytes, &digest.to_string(), at, c),
        // Not delivered (or cut short): an init container that stopped the Pod says why;
        // otherwise nothing arrived.
        Ok(Found::Nothing | Found::Partial(_)) => {
            match results::init_failure_of(client, at.namespace, c.job_name(), at.job_uid).await {
                Some(read) => read,
                None => ResultRead::NoFrame(format!(
                    "the Job {} delivered no result (durable delivery; its log is not read)",
                    c.job_name()
                )),
            }
        }
        Err(e) => ResultRead::NoFrame(format!(
            "the delivered result of {} is unreadable: {e}",
            c.job_name()
        )),
    }
}

fn body(bytes: &[u8], digest: &str, at: &Reading<'_>, c: &impl Claim) -> ResultRead {
    let body = match ResultBody::decode(bytes, digest) {
        Ok(b) => b,
        Err(e) => return ResultRead::NoFrame(format!("the delivered result is refused: {e}")),
    };
    let b = &body.binding;
    let ours = b.resource.uid == at.resource_uid
        && b.resource.namespace == at.namespace
        && b.claim.operation_id.as_str() == c.id().as_str()
        && b.job.name == c.job_name()
        && b.job.uid == at.job_uid;
    if !ours {
        return ResultRead::NoFrame("the delivered result is bound to another operation".to_owned());
    }
    ResultRead::Frame(Box::new(body.payload))
}
