//! `cargo xtask deps-check`: fails when a dependency closure crosses a boundary of DESIGN.md §4.
//!
//! The rules are in [`rules`], the graph walk in [`evaluate`]; this module only runs cargo and prints.

mod evaluate;
mod rules;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use anyhow::{Context, bail};
use cargo_metadata::{Metadata, MetadataCommand};

use evaluate::Report;
use ptah_testenv::step::{cargo, output, step, workspace_root};

/// Arguments of `cargo xtask deps-check`.
#[derive(clap::Args, Default)]
pub struct Args {
    /// Also resolve every optional feature of the workspace packages, so no feature can smuggle a
    /// forbidden crate in (the default checks what a plain build links).
    #[arg(long)]
    all_features: bool,
    /// Check a saved `cargo metadata --format-version 1` document instead of this workspace.
    #[arg(long, value_name = "FILE")]
    metadata: Option<PathBuf>,
}

/// Runs the check and fails with the number of violations, after printing each one's path.
pub fn run(args: Args) -> anyhow::Result<()> {
    let metadata = step("cargo metadata", || match &args.metadata {
        Some(file) => read_metadata(file),
        None => workspace_metadata(args.all_features),
    })?;
    let report = evaluate::evaluate(&metadata, rules::RULES)?;
    print!("{}", render(&report));
    let violations = report.violations().count();
    if violations > 0 {
        bail!("{violations} dependency boundary violation(s) of DESIGN.md §4");
    }
    Ok(())
}

/// `cargo metadata` for this workspace.
fn workspace_metadata(all_features: bool) -> anyhow::Result<Metadata> {
    let mut cmd = cargo();
    cmd.current_dir(workspace_root())
        .args(["metadata", "--format-version", "1"]);
    if all_features {
        cmd.arg("--all-features");
    }
    let json = output(&mut cmd)?;
    MetadataCommand::parse(json).context("cannot parse the output of cargo metadata")
}

fn read_metadata(file: &std::path::Path) -> anyhow::Result<Metadata> {
    let json = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    MetadataCommand::parse(json).with_context(|| format!("{} is not cargo metadata", file.display()))
}

/// The report as a reviewer reads it: one line per checked package, then each violation's path.
fn render(report: &Report) -> String {
    let label = |c: &evaluate::Checked| {
        let bins: Vec<String> = c.bins.iter().map(|b| format!("bin {b}")).collect();
        if bins.is_empty() {
            c.package.clone()
        } else {
            format!("{} [{}]", c.package, bins.join(", "))
        }
    };
    let width = report.checked.iter().map(|c| label(c).len()).max().unwrap_or(0);
    let mut out = String::new();
    for checked in &report.checked {
        let verdict = match checked.violations.len() {
            0 => "ok".to_owned(),
            n => format!("{n} violation(s)"),
        };
        out.push_str(&format!(
            "{:<width$}  closure {:>4}  {verdict}\n",
            label(checked),
            checked.closure_size
        ));
        for v in &checked.violations {
            out.push_str(&format!(
                "    {} {}: {}\n",
                v.forbidden,
                v.offender(),
                v.path.join(" -> ")
            ));
            out.push_str(&format!("      ({})\n", v.why));
        }
    }
    out.push_str(&format!(
        "{} packages checked, {} violation(s)\n",
        report.checked.len(),
        report.violations().count()
    ));
    if !report.absent.is_empty() {
        out.push_str(&format!("not present yet: {}\n", report.absent.join(", ")));
    }
    out
}
