//! The table `bench executor` prints.

use super::super::samples::Samples;
use super::{measured::Measured, peers};

fn cell(s: &Samples) -> String {
    format!("{:.3} ({:.3}–{:.3})", s.median(), s.min(), s.max())
}

pub(super) fn print_table(results: &[Measured], build: &str) {
    println!();
    println!("executor bench ({build} build): seconds, median (min–max) of the timed rounds, interleaved");
    println!(
        "{:<14} {:>6} {:>22} {:>22} {:>22} {:>22} {:>7} {:>9} {:>9} {:>9} {:>7} {:>8}",
        "engine",
        "tables",
        "floor",
        "inspect",
        "inspect+plan",
        "plan only",
        "probes",
        "insp/fl",
        "i+p/fl",
        "peak MiB",
        "create",
        "empty"
    );
    for m in results {
        println!(
            "{:<14} {:>6} {:>22} {:>22} {:>22} {:>22} {:>6.1}% {:>8.2}× {:>8.2}× {:>9} {:>6.1}s {:>8}",
            m.engine.label(),
            m.tables,
            cell(&m.floor),
            cell(&m.inspect),
            cell(&m.inspect_plan),
            cell(&m.plan_only),
            100.0 * m.probes_share(),
            m.ratio_inspect(),
            m.ratio_inspect_plan(),
            m.peak_rss_kib
                .map_or_else(|| "?".to_owned(), |k| format!("{:.1}", k as f64 / 1024.0)),
            m.create_secs,
            if m.problem.is_none() { "yes" } else { "NO" },
        );
    }
    println!(
        "targets: (inspect+plan)/floor ≤ 1.5× and peak RSS while measuring ≤ 150 MB at 1,000 and 5,000 \
         tables (step 11)"
    );
    if results.iter().any(|m| m.peers.is_some()) {
        println!();
        println!(
            "peers, one process per run: seconds, median of the timed rounds, interleaved; \
             unchanged schema (plan), then one column added (rehearsed)"
        );
        println!("{}", peers::header());
        for m in results {
            if let Some(p) = &m.peers {
                println!("{}", p.line(m.engine.label(), m.tables));
            }
        }
        println!("goal: ptah at or below 0.1× Atlas, with and without the rehearsal (issue 37)");
    }
}
