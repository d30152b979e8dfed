//! libFuzzer's output read back: the final statistics of one run, and the table of all runs.

use std::path::PathBuf;

/// What one target's run did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Stats {
    /// `stat::number_of_executed_units` (or the last status line's `#N` when the stats are missing).
    pub runs: Option<u64>,
    /// `cov:` of the last status line (edges covered).
    pub coverage: Option<u64>,
    /// `ft:` of the last status line (features).
    pub features: Option<u64>,
    /// Files in the scratch corpus after the run.
    pub corpus_files: usize,
    /// Seed files it started from.
    pub seed_files: usize,
    /// Crash, timeout, leak and out-of-memory reproducers libFuzzer wrote.
    pub artifacts: Vec<PathBuf>,
    /// Whether libFuzzer exited 0.
    pub exit_ok: bool,
    /// Wall-clock time of the run.
    pub seconds: f64,
}

/// The verdict on one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Ran, executed inputs, found nothing.
    Passed,
    /// libFuzzer failed or wrote a reproducer.
    Crashed,
    /// Exited cleanly but executed nothing (or printed no statistics): not a pass.
    NoRuns,
}

impl Stats {
    /// Passed only with a clean exit, no reproducer and at least one executed input.
    pub fn outcome(&self) -> Outcome {
        if !self.exit_ok || !self.artifacts.is_empty() {
            Outcome::Crashed
        } else if self.runs.unwrap_or(0) == 0 {
            Outcome::NoRuns
        } else {
            Outcome::Passed
        }
    }
}

/// Reads the final statistics out of libFuzzer's stderr.
pub fn parse(log: &str) -> Stats {
    let mut stats = Stats::default();
    let mut last_status_runs = None;
    for line in log.lines() {
        if let Some(value) = line.strip_prefix("stat::number_of_executed_units:") {
            stats.runs = value.trim().parse().ok();
        }
        // Status lines: `#123456\tDONE   cov: 1234 ft: 2345 corp: 100/20Kb …`.
        if let Some(rest) = line.strip_prefix('#') {
            let count = rest.split_whitespace().next().and_then(|n| n.parse().ok());
            if count.is_some() {
                last_status_runs = count;
            }
            if let Some(cov) = field(line, "cov:") {
                stats.coverage = Some(cov);
            }
            if let Some(ft) = field(line, "ft:") {
                stats.features = Some(ft);
            }
        }
    }
    if stats.runs.is_none() {
        stats.runs = last_status_runs;
    }
    stats
}

/// The number after `name` in a status line.
fn field(line: &str, name: &str) -> Option<u64> {
    let mut words = line.split_whitespace();
    words.find(|w| *w == name)?;
    words.next()?.parse().ok()
}

/// One row per target: runs, coverage, corpus size, crashes and the verdict.
pub fn table(rows: &[(String, Stats)]) -> String {
    let width = rows.iter().map(|(t, _)| t.len()).max().unwrap_or(6).max(6);
    let mut out = format!(
        "{:<width$}  {:>10}  {:>6}  {:>6}  {:>13}  {:>7}  {:>6}  result\n",
        "target", "runs", "cov", "ft", "corpus (seed)", "crashes", "secs"
    );
    let show = |v: Option<u64>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
    for (target, s) in rows {
        let result = match s.outcome() {
            Outcome::Passed => "ok",
            Outcome::Crashed => "CRASH",
            Outcome::NoRuns => "NO RUNS",
        };
        out.push_str(&format!(
            "{target:<width$}  {:>10}  {:>6}  {:>6}  {:>13}  {:>7}  {:>6.1}  {result}\n",
            show(s.runs),
            show(s.coverage),
            show(s.features),
            format!("{} ({})", s.corpus_files, s.seed_files),
            s.artifacts.len(),
            s.seconds,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
INFO: Seed: 1234
#2\tINITED cov: 10 ft: 11 corp: 1/1b exec/s: 0 rss: 30Mb
#4096\tpulse  cov: 120 ft: 200 corp: 12/300b lim: 40 exec/s: 2048 rss: 40Mb
#51234\tDONE   cov: 345 ft: 678 corp: 40/2Kb lim: 100 exec/s: 2561 rss: 55Mb
Done 51234 runs in 21 second(s)
stat::number_of_executed_units: 51234
stat::average_exec_per_sec:     2561
stat::new_units_added:          39
stat::slowest_unit_time_sec:    0
stat::peak_rss_mb:              55
";

    #[test]
    fn reads_runs_and_coverage_from_the_final_lines() {
        let s = parse(LOG);
        assert_eq!(
            (s.runs, s.coverage, s.features),
            (Some(51234), Some(345), Some(678))
        );
    }

    #[test]
    fn falls_back_to_the_last_status_line_for_runs() {
        let log = "#77\tNEW    cov: 5 ft: 6 corp: 2/2b\n==1== ERROR: AddressSanitizer\n";
        let s = parse(log);
        assert_eq!((s.runs, s.coverage), (Some(77), Some(5)));
    }

    #[test]
    fn only_a_clean_run_with_executions_passes() {
        let mut s = parse(LOG);
        s.exit_ok = true;
        assert_eq!(s.outcome(), Outcome::Passed);
        s.artifacts.push("crash-1".into());
        assert_eq!(s.outcome(), Outcome::Crashed);
        let mut empty = parse("");
        empty.exit_ok = true;
        assert_eq!(empty.outcome(), Outcome::NoRuns);
        let mut zero = parse("stat::number_of_executed_units: 0\n");
        zero.exit_ok = true;
        assert_eq!(zero.outcome(), Outcome::NoRuns);
        let mut failed = parse(LOG);
        failed.exit_ok = false;
        assert_eq!(failed.outcome(), Outcome::Crashed);
    }

    #[test]
    fn the_table_has_a_row_per_target() {
        let mut s = parse(LOG);
        s.exit_ok = true;
        s.corpus_files = 40;
        s.seed_files = 3;
        let t = table(&[("frame_parser".into(), s)]);
        assert!(
            t.contains("frame_parser") && t.contains("51234") && t.contains("40 (3)"),
            "{t}"
        );
        assert!(t.lines().nth(1).is_some_and(|l| l.ends_with("ok")), "{t}");
    }
}
