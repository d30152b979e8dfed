//! Support of the `lifecycle` suite (`e2e_release.rs`): waiting on the schemas, the previous
//! release's CRDs, the second schema and the migration of the upgrade phase, the webhook probe
//! and the leader crash of the HA phase.

mod ha;
mod upgrade;

pub(crate) use ha::*;
pub(crate) use upgrade::*;

use std::time::Duration;

use ptah_api::{PtahSchema, schema::SchemaPhase};

use crate::lifecycle::{
    InCluster,
    app::{App, approve, phase},
    wait_for,
};

pub(crate) const STEP: Duration = Duration::from_secs(300);
/// The chart's leader Lease and its duration (the manager's `--leader-lease-seconds` default).
pub(crate) const LEADER_LEASE: &str = "ptah-operator-leader";
pub(crate) const LEADER_LEASE_SECONDS: u64 = 15;
pub(crate) const WEBHOOKS: &str = "ptah-operator";

/// Prints a measured figure and appends it to `target/e2e/logs/lifecycle-<phase>.txt`, where it
/// outlives the test's captured output.
pub(crate) fn report(phase: &str, line: &str) {
    use std::io::Write;
    eprintln!("{phase}: {line}");
    let path = ptah_apitests::e2e_log_file(&format!("lifecycle-{phase}.txt"));
    let _ = std::fs::create_dir_all(path.parent().expect("log dir"));
    if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(&path) {
        let _ = writeln!(file, "{line}");
    }
}

pub(crate) fn in_sync(s: &PtahSchema) -> bool {
    phase(s) == Some(SchemaPhase::InSync) && s.status.as_ref().is_some_and(|st| st.applied.is_some())
}

pub(crate) fn awaiting(s: &PtahSchema) -> bool {
    phase(s) == Some(SchemaPhase::AwaitingApproval) && s.status.as_ref().is_some_and(|st| st.plan.is_some())
}

pub(crate) fn epoch(s: &PtahSchema) -> Option<String> {
    s.status
        .as_ref()?
        .execution_binding
        .as_ref()?
        .epoch
        .as_ref()
        .map(|e| e.as_str().to_owned())
}

/// `orders` from plan to InSync through an approval.
pub(crate) async fn converge(app: &App, manager: &InCluster) -> PtahSchema {
    let s = wait_for(
        &app.schemas,
        "orders",
        "a plan awaiting approval",
        STEP,
        manager,
        awaiting,
    )
    .await;
    approve(&app.client, &app.ns, &s).await;
    wait_for(
        &app.schemas,
        "orders",
        "InSync after the approved Apply",
        STEP,
        manager,
        in_sync,
    )
    .await
}
