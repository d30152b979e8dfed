//! What the namespace's runners delivered durably: on the durable path a result never reaches a
//! Pod log, so what a scenario reads from a frame there it reads from the `PtahResultRecord`s,
//! put back together as the reconcilers do.

use std::collections::BTreeSet;

use kube::{Api, Client, api::ListParams};
use ptah_api::PtahResultRecord;
use ptah_controller::resultrecords::{Found, stored};

/// Every complete result body of namespace `ns` (canonical JSON, one per line); empty on the log
/// path.
pub async fn delivered_results(client: &Client, ns: &str) -> String {
    let api: Api<PtahResultRecord> = Api::namespaced(client.clone(), ns);
    let records = api
        .list(&ListParams::default())
        .await
        .expect("list the result records")
        .items;
    let stems: BTreeSet<&str> = records.iter().map(|r| r.spec.stem.as_str()).collect();
    let mut out = String::new();
    for stem in stems {
        if let Ok(Found::Complete(bytes, _)) = stored(&records, stem) {
            out.push_str(&String::from_utf8_lossy(&bytes));
            out.push('\n');
        }
    }
    out
}
