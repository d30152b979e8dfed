//! Retention of result records: every replica looks every ten minutes and deletes what
//! [`ptah_resultreceiver::retention`] says has outlived its use (deletes are idempotent, so
//! replicas that overlap cost a 404).

use std::{collections::BTreeMap, time::Duration};

use kube::{
    Api, ResourceExt,
    api::{DeleteParams, ListParams},
};
use ptah_api::PtahResultRecord;
use ptah_controller::resultrecords;
use ptah_resultreceiver::retention::{RecordMeta, expired};
use tokio::sync::watch;
use tracing::{info, warn};

/// How often records are looked at.
const SWEEP_EVERY: Duration = Duration::from_secs(600);

/// Sweeps until `stop`.
pub async fn run(client: kube::Client, mut stop: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            _ = stop.wait_for(|s| *s) => return,
            _ = tokio::time::sleep(SWEEP_EVERY) => {}
        }
        if let Err(e) = sweep(&client).await {
            warn!(error = %e, "sweeping result records failed; trying again later");
        }
    }
}

/// One pass: deletes the records of every operation whose time is up.
pub async fn sweep(client: &kube::Client) -> Result<usize, kube::Error> {
    let api: Api<PtahResultRecord> = Api::all(client.clone());
    let list = api.list(&ListParams::default()).await?;
    let mut by_namespace: BTreeMap<String, Vec<RecordMeta>> = BTreeMap::new();
    for r in &list.items {
        let Some(created) = r.metadata.creation_timestamp.as_ref() else {
            continue;
        };
        by_namespace
            .entry(r.namespace().unwrap_or_default())
            .or_default()
            .push(RecordMeta {
                name: r.name_any(),
                stem: r.spec.stem.clone(),
                record_type: resultrecords::record_type(r.spec.record_type),
                created: created.0,
            });
    }
    let now = jiff::Timestamp::now();
    let mut deleted = 0;
    for (namespace, records) in by_namespace {
        let api: Api<PtahResultRecord> = Api::namespaced(client.clone(), &namespace);
        for name in expired(&records, now) {
            match api.delete(&name, &DeleteParams::default()).await {
                Ok(_) => deleted += 1,
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => warn!(%namespace, record = %name, error = %e, "deleting a result record failed"),
            }
        }
    }
    if deleted > 0 {
        info!(deleted, "result records past their retention deleted");
    }
    Ok(deleted)
}
