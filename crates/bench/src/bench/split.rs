//! `cargo xtask bench split`: the migration splitter on 16 MiB inputs of long blank runs, each
//! figure a ratio against splitting 16 MiB of ordinary statements (the baseline) in the same
//! rounds, per dialect.
//!
//! The blank inputs are the shapes that once made the MySQL splitter quadratic (issue #16): one
//! line of spaces and tabs, only newlines, and blanks followed by one statement. A linear splitter
//! reads blanks faster than statements, so every ratio sits at or under about 1×; a quadratic one
//! never finishes a round.

use std::{path::PathBuf, time::Instant};

use anyhow::bail;
use ptah_engine::Dialect;
use ptah_migrate::split;
use serde_json::{Value, json};

use super::samples::{Samples, round};

/// Arguments of `cargo xtask bench split`.
#[derive(clap::Args)]
pub struct Args {
    /// Timed rounds (after one untimed warm-up round).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Size of every input, in MiB.
    #[arg(long, default_value_t = 16)]
    mib: usize,
    /// Where to write the JSON report (default: target/bench/split.json).
    #[arg(long)]
    output: Option<PathBuf>,
}

/// One input: its name, its text and how many statements it must split into.
struct Input {
    name: &'static str,
    text: String,
    statements: usize,
}

/// The baseline first, then the figures.
fn inputs(bytes: usize) -> Vec<Input> {
    let row = "INSERT INTO notes (id, body) VALUES (1, 'a; b -- c');\n";
    let rows = bytes / row.len();
    let blanks = " \t".repeat(bytes / 2);
    vec![
        Input {
            name: "statements",
            text: row.repeat(rows),
            statements: rows,
        },
        Input {
            name: "whitespace",
            text: blanks.clone(),
            statements: 0,
        },
        Input {
            name: "newlines",
            text: "\n".repeat(bytes),
            statements: 0,
        },
        Input {
            name: "whitespace then a statement",
            text: format!("{blanks}SELECT 1;"),
            statements: 1,
        },
    ]
}

/// Runs the benchmark, prints the table and writes the JSON report.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.rounds == 0 || args.mib == 0 {
        bail!("--rounds and --mib must be at least 1");
    }
    let build = super::output::build();
    eprintln!(
        "bench split: {build} build, {} MiB inputs, {} rounds",
        args.mib, args.rounds
    );
    let inputs = inputs(args.mib * 1024 * 1024);
    let mut results = Vec::new();
    for dialect in [Dialect::Mysql, Dialect::Postgres] {
        let mut samples: Vec<Samples> = inputs.iter().map(|_| Samples::default()).collect();
        // Round 0 is the warm-up; the order rotates so no input always runs on a cold cache.
        for round_no in 0..=args.rounds {
            for k in 0..inputs.len() {
                let at = (k + round_no) % inputs.len();
                let input = &inputs[at];
                let start = Instant::now();
                let got = split(&input.text, dialect).map_err(|e| {
                    anyhow::anyhow!(
                        "{dialect:?}: {} does not split: line {}: {}",
                        input.name,
                        e.line,
                        e.reason
                    )
                })?;
                let secs = start.elapsed().as_secs_f64();
                if got.len() != input.statements {
                    bail!(
                        "{dialect:?}: {} split into {} statements, not {}",
                        input.name,
                        got.len(),
                        input.statements
                    );
                }
                if round_no > 0 {
                    samples[at].0.push(secs);
                }
            }
        }
        results.push((dialect, samples));
    }
    print_table(&inputs, &results, build, args.mib);
    let report = json!({
        "benchmark": "split",
        "build": build,
        "rounds": args.rounds,
        "bytes": args.mib * 1024 * 1024,
        "baseline": inputs[0].name,
        "results": results.iter().map(|(d, s)| dialect_json(&inputs, *d, s)).collect::<Vec<_>>(),
    });
    let path = super::output::path(args.output, "split");
    super::output::write(&path, &report)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

fn dialect_json(inputs: &[Input], dialect: Dialect, samples: &[Samples]) -> Value {
    let baseline = samples[0].median();
    json!({
        "dialect": format!("{dialect:?}").to_ascii_lowercase(),
        "inputs": inputs.iter().zip(samples).map(|(input, s)| json!({
            "input": input.name,
            "seconds": s.to_json(),
            "over_baseline": round(s.median() / baseline),
        })).collect::<Vec<_>>(),
    })
}

fn print_table(inputs: &[Input], results: &[(Dialect, Vec<Samples>)], build: &str, mib: usize) {
    println!("\nsplit {mib} MiB ({build}; median of the rounds; ratio against \"statements\")\n");
    println!("| dialect | input | median s | min s | max s | over baseline |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for (dialect, samples) in results {
        let baseline = samples[0].median();
        for (input, s) in inputs.iter().zip(samples) {
            println!(
                "| {dialect:?} | {} | {:.4} | {:.4} | {:.4} | {:.2}× |",
                input.name,
                s.median(),
                s.min(),
                s.max(),
                s.median() / baseline
            );
        }
    }
}
