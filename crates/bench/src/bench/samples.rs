//! Timing samples of one measured kind and their summaries, shared by the benchmarks.

use serde_json::{Value, json};

/// Samples of one measured kind, in seconds.
#[derive(Default)]
pub(super) struct Samples(pub(super) Vec<f64>);

impl Samples {
    fn sorted(&self) -> Vec<f64> {
        let mut s = self.0.clone();
        s.sort_by(f64::total_cmp);
        s
    }

    pub(super) fn median(&self) -> f64 {
        let s = self.sorted();
        match s.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => s[n / 2],
            n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
        }
    }

    pub(super) fn min(&self) -> f64 {
        self.sorted().first().copied().unwrap_or(f64::NAN)
    }

    pub(super) fn max(&self) -> f64 {
        self.sorted().last().copied().unwrap_or(f64::NAN)
    }

    pub(super) fn to_json(&self) -> Value {
        json!({
            "median": round(self.median()),
            "min": round(self.min()),
            "max": round(self.max()),
            "samples": self.0.iter().map(|s| round(*s)).collect::<Vec<_>>(),
        })
    }
}

/// Rounds to microseconds (or millionths of a ratio) for the JSON reports.
pub(super) fn round(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}
