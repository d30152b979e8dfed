//! The manager's metric families and their text exposition.

use std::time::Duration;

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

use crate::{Kind, Operation, OperationResult, ReconcileOutcome, TelemetryError};

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
    operation: Operation,
    result: OperationResult,
}

/// Labels of `ptah_reconcile_duration_seconds`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: Kind,
}

/// 5 ms to about 82 s in 15 doublings: a pass is milliseconds, a slow API server seconds.
fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.005, 2.0, 15))
}

/// The manager's metrics, registered under the `ptah_` prefix; clone-free, share it behind an `Arc`.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    reconciliations: Family<ReconcileLabels, Counter>,
    dispatched: Family<DispatchLabels, Counter>,
    results: Family<ResultLabels, Counter>,
    reconcile_duration: Family<KindLabels, Histogram>,
    leader: Gauge,
    stored_plan_bytes: Gauge,
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
        let stored_plan_bytes = Gauge::default();
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
            "Operation results recorded, by operation and result",
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
            "Bytes of plan content this manager last published or loaded",
            stored_plan_bytes.clone(),
        );
        // Every series exists from the start at zero: a family that first appears with its first
        // event makes `rate()` miss that event, and the label ranges are small and closed.
        for &kind in Kind::ALL {
            for &outcome in ReconcileOutcome::ALL {
                let _ = reconciliations.get_or_create(&ReconcileLabels { kind, outcome });
            }
            let _ = reconcile_duration.get_or_create(&KindLabels { kind });
        }
        for &operation in Operation::ALL {
            let _ = dispatched.get_or_create(&DispatchLabels { operation });
            for &result in OperationResult::ALL {
                let _ = results.get_or_create(&ResultLabels { operation, result });
            }
        }
        Self {
            registry,
            reconciliations,
            dispatched,
            results,
            reconcile_duration,
            leader,
            stored_plan_bytes,
        }
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

    /// Counts one recorded operation result.
    pub fn operation_result(&self, operation: Operation, result: OperationResult) {
        self.results
            .get_or_create(&ResultLabels { operation, result })
            .inc();
    }

    /// Sets whether this replica is the leader.
    pub fn set_leader(&self, leader: bool) {
        self.leader.set(i64::from(leader));
    }

    /// Sets the stored plan size gauge; sizes beyond `i64::MAX` saturate (plans are ≤ 8 MiB).
    pub fn set_stored_plan_bytes(&self, bytes: u64) {
        self.stored_plan_bytes
            .set(i64::try_from(bytes).unwrap_or(i64::MAX));
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
        ] {
            assert!(text.contains(family), "{family} missing from\n{text}");
        }
        assert!(text.ends_with("# EOF\n"), "{text}");
        assert_eq!(value(&text, "ptah_leader"), Some(0.0));
    }

    #[test]
    fn counters_and_gauges_move() {
        let metrics = Metrics::new();
        metrics.reconciled(Kind::Schema, ReconcileOutcome::Success);
        metrics.reconciled(Kind::Schema, ReconcileOutcome::Success);
        metrics.reconciled(Kind::Migration, ReconcileOutcome::Blocked);
        metrics.dispatched(Operation::Plan);
        metrics.operation_result(Operation::Apply, OperationResult::Unknown);
        metrics.observe_reconcile_duration(Kind::Schema, Duration::from_millis(12));
        metrics.set_leader(true);
        metrics.set_stored_plan_bytes(8 * 1024 * 1024);
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
                r#"ptah_operation_results_total{operation="apply",result="unknown"}"#,
                1.0,
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
            ("ptah_stored_plan_bytes", 8_388_608.0),
        ];
        for (series, want) in expect {
            assert_eq!(value(&text, series), Some(want), "{series} in\n{text}");
        }
    }

    #[test]
    fn every_label_combination_is_one_series_and_no_more() {
        let metrics = Metrics::new();
        // Drive every value of every label twice: the series count is the product of the enums.
        for _ in 0..2 {
            for &kind in Kind::ALL {
                for &outcome in ReconcileOutcome::ALL {
                    metrics.reconciled(kind, outcome);
                }
            }
            for &operation in Operation::ALL {
                metrics.dispatched(operation);
                for &result in OperationResult::ALL {
                    metrics.operation_result(operation, result);
                }
            }
        }
        let text = metrics.encode().expect("encode");
        let count = |prefix: &str| text.lines().filter(|l| l.starts_with(prefix)).count();
        assert_eq!(count("ptah_reconciliations_total{"), 2 * 4);
        assert_eq!(count("ptah_operations_dispatched_total{"), 6);
        assert_eq!(count("ptah_operation_results_total{"), 6 * 5);
    }
}
