//! The write-stall section: per change, the longest insert under the plain form and under the
//! plan's lock-safe form, measured in the same rounds.

use std::fmt::Write as _;

use serde_json::Value;

use super::Goal;

/// The most a lock-safe change may stall one write (issue 37).
const GOAL_SECONDS: f64 = 1.0;

fn median(form: &Value) -> Option<f64> {
    form["longest_insert_seconds"]["median"].as_f64()
}

/// `(change, plain, lock-safe)` medians of the longest insert.
fn rows(json: &Value) -> Vec<(String, f64, f64)> {
    json["changes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let forms = c["forms"].as_array();
            let of = |i: usize| forms.and_then(|f| f.get(i)).and_then(median).unwrap_or(f64::NAN);
            (
                c["change"].as_str().unwrap_or("?").replace('_', " "),
                of(0),
                of(1),
            )
        })
        .collect()
}

/// The section for one `stall.json`.
pub(super) fn section(json: &Value) -> String {
    let mut s = format!(
        "The longest single insert of one writer while the executor's Apply adds the change to a \
         PostgreSQL table of {} rows: the plain form (the baseline) against the plan's lock-safe \
         form (`CREATE INDEX CONCURRENTLY`; `ADD CONSTRAINT … NOT VALID` then `VALIDATE \
         CONSTRAINT`), medians of {} rounds.\n\n| change | plain s | lock-safe s | lock-safe / plain |\n| --- | --- | --- | --- |\n",
        json["rows"], json["rounds"]
    );
    for (change, plain, safe) in rows(json) {
        let _ = writeln!(s, "| {change} | {plain:.3} | {safe:.3} | {:.4}× |", safe / plain);
    }
    s
}

/// The goal row: no write stalls more than a second under the lock-safe forms.
pub(super) fn goal(json: Option<&Value>) -> Goal {
    let Some(json) = json else {
        return Goal {
            goal: format!("no write stalls over {GOAL_SECONDS} s while an index and a foreign key are added"),
            measured: "not measured: run `cargo xtask bench stall`".into(),
            baseline: String::new(),
            met: "not measured".into(),
        };
    };
    let rows = rows(json);
    let worst = rows.iter().map(|r| r.2).fold(0.0, f64::max);
    let describe = |pick: fn(&(String, f64, f64)) -> f64| {
        rows.iter()
            .map(|r| format!("{} {:.3} s", r.0, pick(r)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Goal {
        goal: format!(
            "no write stalls over {GOAL_SECONDS} s while an index and a foreign key are added to {} rows",
            json["rows"]
        ),
        measured: describe(|r| r.2),
        baseline: format!("plain forms: {}", describe(|r| r.1)),
        met: if !rows.is_empty() && worst <= GOAL_SECONDS {
            "yes".into()
        } else {
            "**no**".into()
        },
    }
}
