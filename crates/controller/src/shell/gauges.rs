//! The state gauges an on-call person reads: resources by kind and phase, unresolved migration
//! runs and their age, owed Lease releases, stored plan bytes. Refreshed on a cadence from the
//! watch stores (and one list of plan manifests), never from the reconcile hot path.

use std::time::{Duration, SystemTime};

use kube::{Api, api::ListParams};
use ptah_api::{PtahMigrationPlan, PtahSchemaPlan};
use ptah_telemetry::{Kind, Phase};

use super::Context;

/// How often the gauges are refreshed.
pub const REFRESH: Duration = Duration::from_secs(15);

/// The metrics phase of an API phase (the same names, in snake case).
fn phase(debug_name: &str) -> Phase {
    let snake: String = debug_name
        .chars()
        .enumerate()
        .flat_map(|(i, c)| {
            let lower = c.to_ascii_lowercase();
            if c.is_ascii_uppercase() && i > 0 {
                vec!['_', lower]
            } else {
                vec![lower]
            }
        })
        .collect();
    Phase::ALL
        .iter()
        .copied()
        .find(|p| p.as_str() == snake)
        .unwrap_or(Phase::Pending)
}

/// Refreshes every state gauge once.
pub async fn refresh(ctx: &Context) {
    let schemas = ctx.schemas.state();
    let migrations = ctx.migrations.state();
    let schema_phase = |s: &ptah_api::PtahSchema| {
        s.status
            .as_ref()
            .and_then(|st| st.phase)
            .map(|p| format!("{p:?}"))
    };
    let migration_phase = |m: &ptah_api::PtahMigration| {
        m.status
            .as_ref()
            .and_then(|st| st.phase)
            .map(|p| format!("{p:?}"))
    };
    ctx.metrics.set_resource_phases(
        Kind::Schema,
        schemas
            .iter()
            .map(|s| (schema_phase(s).map_or(Phase::Pending, |p| phase(&p)), 1)),
    );
    ctx.metrics.set_resource_phases(
        Kind::Migration,
        migrations
            .iter()
            .map(|m| (migration_phase(m).map_or(Phase::Pending, |p| phase(&p)), 1)),
    );
    ctx.metrics.set_unresolved_migration_runs(
        migrations
            .iter()
            .filter_map(|m| m.status.as_ref()?.unresolved_run.as_ref())
            .map(|r| SystemTime::from(r.recorded_at.0)),
    );
    let owed_schema = schemas
        .iter()
        .filter(|s| {
            s.status
                .as_ref()
                .is_some_and(|st| st.pending_lock_release.is_some())
        })
        .count();
    let owed_migration = migrations
        .iter()
        .filter(|m| {
            m.status
                .as_ref()
                .is_some_and(|st| st.pending_lock_release.is_some())
        })
        .count();
    ctx.metrics
        .set_pending_lock_releases(Kind::Schema, owed_schema as u64);
    ctx.metrics
        .set_pending_lock_releases(Kind::Migration, owed_migration as u64);
    let scope = ctx.config.watch_namespace.as_deref();
    let schema_plans: Api<PtahSchemaPlan> = match scope {
        Some(ns) => Api::namespaced(ctx.client.clone(), ns),
        None => Api::all(ctx.client.clone()),
    };
    if let Ok(list) = schema_plans.list(&ListParams::default()).await {
        let bytes: i64 = list.items.iter().map(|p| p.spec.size.max(0)).sum();
        ctx.metrics.set_stored_plan_bytes(Kind::Schema, bytes as u64);
    }
    let migration_plans: Api<PtahMigrationPlan> = match scope {
        Some(ns) => Api::namespaced(ctx.client.clone(), ns),
        None => Api::all(ctx.client.clone()),
    };
    if let Ok(list) = migration_plans.list(&ListParams::default()).await {
        let bytes: usize = list
            .items
            .iter()
            .filter_map(|p| serde_json::to_vec(&p.spec).ok())
            .map(|b| b.len())
            .sum();
        ctx.metrics.set_stored_plan_bytes(Kind::Migration, bytes as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_api_phase_has_its_metrics_phase() {
        assert_eq!(phase("AwaitingApproval"), Phase::AwaitingApproval);
        assert_eq!(phase("VerifyingHistory"), Phase::VerifyingHistory);
        assert_eq!(phase("InSync"), Phase::InSync);
        assert_eq!(phase("ReadyToApply"), Phase::ReadyToApply);
    }
}
