//! The manager's metric families and their text exposition.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use prometheus_client::{
    encoding::{EncodeLabelSet, text::encode},
    metrics::{
        counter::Counter,
        family::Family,
        gauge::Gauge,
        histogram::{Histogram, exponential_buckets},
    },
    registry::Registry,
};

use crate::{
    Kind, Operation, OperationResult, Phase, ReconcileOutcome, TelemetryError,
    requests::{self, Verb, VerbLabels},
};

/// Labels of `ptah_reconciliations_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReconcileLabels {
    kind: Kind,
    outcome: ReconcileOutcome,
}

/// Labels of `ptah_operations_dispatched_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DispatchLabels {
    operation: Operation,
}

/// Labels of `ptah_operation_results_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    kind: Kind,
    operation: Operation,
    result: OperationResult,
}

/// Labels of `ptah_reconcile_duration_seconds`, `ptah_stored_plan_bytes` and
/// `ptah_pending_lock_releases`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: Kind,
}

/// Labels of `ptah_resources`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PhaseLabels {
    kind: Kind,
    phase: Phase,
}

/// 5 ms to about 82 s in 15 doublings: a pass is milliseconds, a slow API server seconds.
fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.005, 2.0, 15))
}

/// A count as a gauge value; counts beyond `i64::MAX` saturate.
fn gauge_value(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The manager's metrics, registered under the `ptah_` prefix; clone-free, share it behind an `Arc`.
///
/// The state gauges (`ptah_resources`, `ptah_unresolved_migration_runs`,
/// `ptah_oldest_unresolved_migration_run_timestamp_seconds`, `ptah_pending_lock_releases`) describe
/// what the leader sees; [`Metrics::set_leader`]`(false)` zeroes them, so only the leader reports
/// state and a sum over replicas is the cluster's.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    reconciliations: Family<ReconcileLabels, Counter>,
    dispatched: Family<DispatchLabels, Counter>,
    results: Family<ResultLabels, Counter>,
    reconcile_duration: Family<KindLabels, Histogram>,
    leader: Gauge,
    stored_plan_bytes: Family<KindLabels, Gauge>,
    resources: Family<PhaseLabels, Gauge>,
    unresolved_runs: Gauge,
    oldest_unresolved_run: Gauge,
    pending_lock_releases: Family<KindLabels, Gauge>,
    api_requests: Family<VerbLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A registry holding every family, all series at zero.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("ptah");
        let reconciliations = Family::<ReconcileLabels, Counter>::default();
        let dispatched = Family::<DispatchLabels, Counter>::default();
        let results = Family::<ResultLabels, Counter>::default();
        let reconcile_duration =
            Family::<KindLabels, Histogram>::new_with_constructor(duration_histogram as fn() -> Histogram);
        let leader = Gauge::default();
        let stored_plan_bytes = Family::<KindLabels, Gauge>::default();
        let resources = Family::<PhaseLabels, Gauge>::default();
        let unresolved_runs = Gauge::default();
        let oldest_unresolved_run = Gauge::default();
        let pending_lock_releases = Family::<KindLabels, Gauge>::default();
        let api_requests = requests::family();
        registry.register(
            "reconciliations",
            "Reconciliations finished, by kind and outcome",
            reconciliations.clone(),
        );
        registry.register(
            "operations_dispatched",
            "Operation Jobs created, by operation",
            dispatched.clone(),
        );
        registry.register(
            "operation_results",
            "Operation results recorded, by kind, operation and result",
            results.clone(),
        );
        registry.register(
            "reconcile_duration_seconds",
            "Wall time of one reconciliation, by kind",
            reconcile_duration.clone(),
        );
        registry.register(
            "leader",
            "1 while this replica holds the leader Lease, else 0",
            leader.clone(),
        );
        registry.register(
            "stored_plan_bytes",
            "Bytes of plan content this manager last published or loaded, by kind",
            stored_plan_bytes.clone(),
        );
        registry.register(
            "resources",
            "Resources the leader sees, by kind and status phase",
            resources.clone(),
        );
        registry.register(
            "unresolved_migration_runs",
            "PtahMigrations whose last run is unresolved (partial or unknown), as the leader sees them",
            unresolved_runs.clone(),
        );
        registry.register(
            "oldest_unresolved_migration_run_timestamp_seconds",
            "Unix time the oldest unresolved migration run was recorded; 0 when none is",
            oldest_unresolved_run.clone(),
        );
        registry.register(
            "pending_lock_releases",
            "Lease releases staged in status and not yet performed, by kind",
            pending_lock_releases.clone(),
        );
        registry.register(
            "kube_api_requests",
            "Requests sent to the Kubernetes API server, by verb",
            api_requests.clone(),
        );
        let metrics = Self {
            registry,
            reconciliations,
            dispatched,
            results,
            reconcile_duration,
            leader,
            stored_plan_bytes,
            resources,
            unresolved_runs,
            oldest_unresolved_run,
            pending_lock_releases,
            api_requests,
        };
        // Every series exists from the start at zero: a family that first appears with its first
        // event makes `rate()` miss that event, and the label ranges are small and closed. Only
        // the combinations a kind has are created: a PtahSchema has no `history` operation or
        // `reading` phase.
        for &kind in Kind::ALL {
            for &outcome in ReconcileOutcome::ALL {
                let _ = metrics
                    .reconciliations
                    .get_or_create(&ReconcileLabels { kind, outcome });
            }
            let _ = metrics.reconcile_duration.get_or_create(&KindLabels { kind });
            let _ = metrics.stored_plan_bytes.get_or_create(&KindLabels { kind });
            for &operation in Operation::of(kind) {
                for &result in OperationResult::ALL {
                    let _ = metrics.results.get_or_create(&ResultLabels {
                        kind,
                        operation,
                        result,
                    });
                }
            }
        }
        for &operation in Operation::ALL {
            let _ = metrics.dispatched.get_or_create(&DispatchLabels { operation });
        }
        metrics.zero_state();
        metrics
    }

    /// Creates every state series at zero, dropping any other.
    fn zero_state(&self) {
        self.resources.clear();
        self.pending_lock_releases.clear();
        for &kind in Kind::ALL {
            for &phase in Phase::of(kind) {
                let _ = self.resources.get_or_create(&PhaseLabels { kind, phase });
            }
            let _ = self.pending_lock_releases.get_or_create(&KindLabels { kind });
        }
        self.unresolved_runs.set(0);
        self.oldest_unresolved_run.set(0);
    }

    /// Counts one finished reconciliation of `kind` that ended in `outcome`.
    pub fn reconciled(&self, kind: Kind, outcome: ReconcileOutcome) {
        self.reconciliations
            .get_or_create(&ReconcileLabels { kind, outcome })
            .inc();
    }

    /// Records how long one reconciliation of `kind` took.
    pub fn observe_reconcile_duration(&self, kind: Kind, elapsed: Duration) {
        self.reconcile_duration
            .get_or_create(&KindLabels { kind })
            .observe(elapsed.as_secs_f64());
    }

    /// Counts one created operation Job.
    pub fn dispatched(&self, operation: Operation) {
        self.dispatched.get_or_create(&DispatchLabels { operation }).inc();
    }

    /// Counts one recorded result of a `kind` resource's `operation`, once per operation ID (when
    /// its result is settled into status), whatever the result.
    pub fn operation_result(&self, kind: Kind, operation: Operation, result: OperationResult) {
        self.results
            .get_or_create(&ResultLabels {
                kind,
                operation,
                result,
            })
            .inc();
    }

    /// Sets whether this replica is the leader; losing it zeroes the state gauges.
    pub fn set_leader(&self, leader: bool) {
        self.leader.set(i64::from(leader));
        if !leader {
            self.zero_state();
        }
    }

    /// Sets the size of the plan content of `kind` last published or loaded (plans are ≤ 8 MiB).
    pub fn set_stored_plan_bytes(&self, kind: Kind, bytes: u64) {
        self.stored_plan_bytes
            .get_or_create(&KindLabels { kind })
            .set(gauge_value(bytes));
    }

    /// Sets how many resources of `kind` are in `phase` (one series; see
    /// [`Metrics::set_resource_phases`] for a whole snapshot).
    pub fn set_resources(&self, kind: Kind, phase: Phase, count: u64) {
        self.resources
            .get_or_create(&PhaseLabels { kind, phase })
            .set(gauge_value(count));
    }

    /// Sets a snapshot of every resource of `kind`: one `(phase, count)` per phase seen (repeats
    /// add up); every phase of the kind left out is set to zero.
    pub fn set_resource_phases(&self, kind: Kind, counts: impl IntoIterator<Item = (Phase, u64)>) {
        let mut totals: Vec<(Phase, u64)> = Phase::of(kind).iter().map(|&p| (p, 0)).collect();
        for (phase, count) in counts {
            match totals.iter_mut().find(|(p, _)| *p == phase) {
                Some((_, total)) => *total = total.saturating_add(count),
                None => totals.push((phase, count)),
            }
        }
        for (phase, count) in totals {
            self.set_resources(kind, phase, count);
        }
    }

    /// Sets the unresolved migration runs from the time each was recorded
    /// (`status.unresolvedRun.recordedAt` of every PtahMigration that has one): their number and
    /// the oldest one's Unix time (0 when there is none).
    pub fn set_unresolved_migration_runs(&self, recorded_at: impl IntoIterator<Item = SystemTime>) {
        let mut count: u64 = 0;
        let mut oldest: Option<SystemTime> = None;
        for at in recorded_at {
            count = count.saturating_add(1);
            oldest = Some(oldest.map_or(at, |o| o.min(at)));
        }
        // Never 0 while a run exists (0 means none): a time at or before 1970 reads as 1 s.
        let seconds = oldest.map_or(0, |t| {
            t.duration_since(UNIX_EPOCH)
                .map_or(1, |d| gauge_value(d.as_secs()).max(1))
        });
        self.unresolved_runs.set(gauge_value(count));
        self.oldest_unresolved_run.set(seconds);
    }

    /// Sets how many Lease releases resources of `kind` owe: staged in status, not yet performed.
    pub fn set_pending_lock_releases(&self, kind: Kind, count: u64) {
        self.pending_lock_releases
            .get_or_create(&KindLabels { kind })
            .set(gauge_value(count));
    }

    /// Counts one request sent to the Kubernetes API server.
    pub fn api_request(&self, verb: Verb) {
        requests::count(&self.api_requests, verb);
    }

    /// The OpenMetrics text exposition of every family, as served on `/metrics`.
    pub fn encode(&self) -> Result<String, TelemetryError> {
        let mut out = String::new();
        encode(&mut out, &self.registry)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line<'t>(text: &'t str, prefix: &str) -> Option<&'t str> {
        text.lines().find(|l| l.starts_with(prefix))
    }

    fn value(text: &str, series: &str) -> Option<f64> {
        line(text, &format!("{series} "))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
    }

    fn count(text: &str, prefix: &str) -> usize {
        text.lines().filter(|l| l.starts_with(prefix)).count()
    }

    #[test]
    fn the_exposition_declares_every_family() {
        let text = Metrics::new().encode().expect("encode");
        for family in [
            "# TYPE ptah_reconciliations counter",
            "# TYPE ptah_operations_dispatched counter",
            "# TYPE ptah_operation_results counter",
            "# TYPE ptah_reconcile_duration_seconds histogram",
            "# TYPE ptah_leader gauge",
            "# TYPE ptah_stored_plan_bytes gauge",
            "# TYPE ptah_resources gauge",
            "# TYPE ptah_unresolved_migration_runs gauge",
            "# TYPE ptah_oldest_unresolved_migration_run_timestamp_seconds gauge",
            "# TYPE ptah_pending_lock_releases gauge",
        ] {
            assert!(text.contains(family), "{family} missing from\n{text}");
        }
        assert!(text.ends_with("# EOF\n"), "{text}");
        assert_eq!(value(&text, "ptah_leader"), Some(0.0));
        assert_eq!(value(&text, "ptah_unresolved_migration_runs"), Some(0.0));
        assert_eq!(
            value(&text, "ptah_oldest_unresolved_migration_run_timestamp_seconds"),
            Some(0.0)
        );
        for series in [
            r#"ptah_resources{kind="migration",phase="verifying_history"}"#,
            r#"ptah_resources{kind="schema",phase="verifying_convergence"}"#,
            r#"ptah_pending_lock_releases{kind="schema"}"#,
            r#"ptah_stored_plan_bytes{kind="migration"}"#,
            r#"ptah_operation_results_total{kind="migration",operation="history",result="failed"}"#,
            r#"ptah_operation_results_total{kind="schema",operation="observe",result="refused"}"#,
        ] {
            assert_eq!(value(&text, series), Some(0.0), "{series} in\n{text}");
        }
    }

    #[test]
    fn counters_and_gauges_move() {
        let metrics = Metrics::new();
        metrics.reconciled(Kind::Schema, ReconcileOutcome::Success);
        metrics.reconciled(Kind::Schema, ReconcileOutcome::Success);
        metrics.reconciled(Kind::Migration, ReconcileOutcome::Blocked);
        metrics.dispatched(Operation::Plan);
        metrics.operation_result(Kind::Schema, Operation::Apply, OperationResult::Unknown);
        metrics.operation_result(Kind::Migration, Operation::History, OperationResult::Failed);
        metrics.operation_result(Kind::Migration, Operation::History, OperationResult::Failed);
        metrics.operation_result(Kind::Migration, Operation::Apply, OperationResult::Partial);
        metrics.observe_reconcile_duration(Kind::Schema, Duration::from_millis(12));
        metrics.set_leader(true);
        metrics.set_stored_plan_bytes(Kind::Schema, 8 * 1024 * 1024);
        metrics.set_stored_plan_bytes(Kind::Migration, 4096);
        metrics.set_resources(Kind::Migration, Phase::AwaitingApproval, 3);
        metrics.set_pending_lock_releases(Kind::Migration, 2);
        let text = metrics.encode().expect("encode");
        let expect = [
            (
                r#"ptah_reconciliations_total{kind="schema",outcome="success"}"#,
                2.0,
            ),
            (
                r#"ptah_reconciliations_total{kind="migration",outcome="blocked"}"#,
                1.0,
            ),
            (r#"ptah_operations_dispatched_total{operation="plan"}"#, 1.0),
            (
                r#"ptah_operation_results_total{kind="schema",operation="apply",result="unknown"}"#,
                1.0,
            ),
            (
                r#"ptah_operation_results_total{kind="migration",operation="history",result="failed"}"#,
                2.0,
            ),
            (
                r#"ptah_operation_results_total{kind="migration",operation="apply",result="partial"}"#,
                1.0,
            ),
            (
                r#"ptah_operation_results_total{kind="schema",operation="apply",result="partial"}"#,
                0.0,
            ),
            (r#"ptah_reconcile_duration_seconds_count{kind="schema"}"#, 1.0),
            (
                r#"ptah_reconcile_duration_seconds_bucket{le="0.02",kind="schema"}"#,
                1.0,
            ),
            (
                r#"ptah_reconcile_duration_seconds_bucket{le="0.01",kind="schema"}"#,
                0.0,
            ),
            ("ptah_leader", 1.0),
            (r#"ptah_stored_plan_bytes{kind="schema"}"#, 8_388_608.0),
            (r#"ptah_stored_plan_bytes{kind="migration"}"#, 4096.0),
            (
                r#"ptah_resources{kind="migration",phase="awaiting_approval"}"#,
                3.0,
            ),
            (r#"ptah_resources{kind="schema",phase="awaiting_approval"}"#, 0.0),
            (r#"ptah_pending_lock_releases{kind="migration"}"#, 2.0),
            (r#"ptah_pending_lock_releases{kind="schema"}"#, 0.0),
        ];
        for (series, want) in expect {
            assert_eq!(value(&text, series), Some(want), "{series} in\n{text}");
        }
    }

    #[test]
    fn a_phase_snapshot_sets_every_phase_of_the_kind_and_zeroes_the_rest() {
        let metrics = Metrics::new();
        metrics.set_resource_phases(
            Kind::Schema,
            [(Phase::InSync, 4), (Phase::Failed, 1), (Phase::InSync, 2)],
        );
        metrics.set_resource_phases(Kind::Migration, [(Phase::Applying, 1), (Phase::Blocked, 2)]);
        let text = metrics.encode().expect("encode");
        let series = |kind: &str, phase: &str| format!(r#"ptah_resources{{kind="{kind}",phase="{phase}"}}"#);
        assert_eq!(
            value(&text, &series("schema", "in_sync")),
            Some(6.0),
            "repeats add up"
        );
        assert_eq!(value(&text, &series("schema", "failed")), Some(1.0));
        assert_eq!(value(&text, &series("migration", "applying")), Some(1.0));

        // The next snapshot no longer lists `in_sync` or `applying`: they go to zero.
        metrics.set_resource_phases(Kind::Schema, [(Phase::Failed, 2)]);
        metrics.set_resource_phases(Kind::Migration, [(Phase::Blocked, 2)]);
        let text = metrics.encode().expect("encode");
        assert_eq!(value(&text, &series("schema", "in_sync")), Some(0.0));
        assert_eq!(value(&text, &series("schema", "failed")), Some(2.0));
        assert_eq!(value(&text, &series("migration", "applying")), Some(0.0));
        assert_eq!(value(&text, &series("migration", "blocked")), Some(2.0));
        assert_eq!(count(&text, "ptah_resources{"), 13 + 12);
        let total: f64 = text
            .lines()
            .filter(|l| l.starts_with("ptah_resources{"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum();
        assert_eq!(total, 4.0);
    }

    #[test]
    fn unresolved_runs_export_their_number_and_the_oldest_recording_time() {
        let metrics = Metrics::new();
        let at = |s: u64| UNIX_EPOCH + Duration::from_secs(s);
        metrics.set_unresolved_migration_runs([at(1_700_000_900), at(1_700_000_000), at(1_700_000_500)]);
        let text = metrics.encode().expect("encode");
        assert_eq!(value(&text, "ptah_unresolved_migration_runs"), Some(3.0));
        assert_eq!(
            value(&text, "ptah_oldest_unresolved_migration_run_timestamp_seconds"),
            Some(1_700_000_000.0)
        );
        // The oldest is resolved: the next oldest is reported.
        metrics.set_unresolved_migration_runs([at(1_700_000_900), at(1_700_000_500)]);
        let text = metrics.encode().expect("encode");
        assert_eq!(value(&text, "ptah_unresolved_migration_runs"), Some(2.0));
        assert_eq!(
            value(&text, "ptah_oldest_unresolved_migration_run_timestamp_seconds"),
            Some(1_700_000_500.0)
        );
        // A run recorded at the epoch still reads as present.
        metrics.set_unresolved_migration_runs([UNIX_EPOCH]);
        let text = metrics.encode().expect("encode");
        assert_eq!(
            value(&text, "ptah_oldest_unresolved_migration_run_timestamp_seconds"),
            Some(1.0)
        );
        metrics.set_unresolved_migration_runs(std::iter::empty());
        let text = metrics.encode().expect("encode");
        assert_eq!(value(&text, "ptah_unresolved_migration_runs"), Some(0.0));
        assert_eq!(
            value(&text, "ptah_oldest_unresolved_migration_run_timestamp_seconds"),
            Some(0.0)
        );
    }

    #[test]
    fn losing_the_lease_zeroes_the_state_gauges_only() {
        let metrics = Metrics::new();
        metrics.set_leader(true);
        metrics.set_resources(Kind::Schema, Phase::InSync, 5);
        metrics.set_pending_lock_releases(Kind::Schema, 1);
        metrics.set_unresolved_migration_runs([UNIX_EPOCH + Duration::from_secs(1_700_000_000)]);
        metrics.set_stored_plan_bytes(Kind::Schema, 100);
        metrics.operation_result(Kind::Schema, Operation::Plan, OperationResult::Succeeded);
        metrics.set_leader(false);
        let text = metrics.encode().expect("encode");
        assert_eq!(value(&text, "ptah_leader"), Some(0.0));
        assert_eq!(
            value(&text, r#"ptah_resources{kind="schema",phase="in_sync"}"#),
            Some(0.0)
        );
        assert_eq!(
            count(&text, "ptah_resources{"),
            13 + 12,
            "the series stay, at zero"
        );
        assert_eq!(
            value(&text, r#"ptah_pending_lock_releases{kind="schema"}"#),
            Some(0.0)
        );
        assert_eq!(value(&text, "ptah_unresolved_migration_runs"), Some(0.0));
        assert_eq!(
            value(&text, "ptah_oldest_unresolved_migration_run_timestamp_seconds"),
            Some(0.0)
        );
        // Counters and the last plan size are history, not state: they stay.
        assert_eq!(
            value(
                &text,
                r#"ptah_operation_results_total{kind="schema",operation="plan",result="succeeded"}"#
            ),
            Some(1.0)
        );
        assert_eq!(
            value(&text, r#"ptah_stored_plan_bytes{kind="schema"}"#),
            Some(100.0)
        );
    }

    #[test]
    fn every_label_combination_is_one_series_and_no_more() {
        let metrics = Metrics::new();
        let text = metrics.encode().expect("encode");
        // From the start: only the combinations each kind has.
        assert_eq!(count(&text, "ptah_operation_results_total{"), (5 + 4) * 5);
        assert_eq!(count(&text, "ptah_resources{"), 13 + 12);
        // Drive every value of every label twice: the series count is at most the product.
        for _ in 0..2 {
            for &kind in Kind::ALL {
                for &outcome in ReconcileOutcome::ALL {
                    metrics.reconciled(kind, outcome);
                }
                for &operation in Operation::ALL {
                    for &result in OperationResult::ALL {
                        metrics.operation_result(kind, operation, result);
                    }
                }
                for &phase in Phase::ALL {
                    metrics.set_resources(kind, phase, 1);
                }
                metrics.set_stored_plan_bytes(kind, 1);
                metrics.set_pending_lock_releases(kind, 1);
            }
            for &operation in Operation::ALL {
                metrics.dispatched(operation);
            }
        }
        let text = metrics.encode().expect("encode");
        assert_eq!(count(&text, "ptah_reconciliations_total{"), 2 * 4);
        assert_eq!(count(&text, "ptah_operations_dispatched_total{"), 6);
        // A result is never dropped, even for a combination a kind does not dispatch.
        assert_eq!(count(&text, "ptah_operation_results_total{"), 2 * 6 * 5);
        assert_eq!(count(&text, "ptah_resources{"), 2 * 15);
        assert_eq!(count(&text, "ptah_stored_plan_bytes{"), 2);
        assert_eq!(count(&text, "ptah_pending_lock_releases{"), 2);
        assert_eq!(count(&text, "ptah_unresolved_migration_runs "), 1);
    }
}
