//! `cargo xtask bench images`: the size of every workspace image as a push sends it (the gzip
//! layer, the config and the manifest) from the release binaries, next to the baseline
//! of the same image from the dev profile's binaries with its layer uncompressed, which is what
//! `cargo xtask images` pushed before (its layouts are built here too, so both come from this
//! run's binaries). Nothing is imported or pushed: the layouts go under `target/bench/images/`.

use std::{
    path::{Path, PathBuf},
    time::Instant,
};

use anyhow::{Context, bail};
use ptah_testenv::{
    images::{IMAGES, Image, Profile, build_commands, layout_in, oci::Built, wanted, workspace_bins},
    step::{self, describe, step, workspace_root},
};
use serde_json::{Value, json};

use super::samples::{Samples, round};

/// The goal of `reference/bench-baseline.md` for every image as pushed.
const GOAL_BYTES: u64 = 20 * 1000 * 1000;

/// Arguments of `cargo xtask bench images`.
#[derive(clap::Args)]
pub struct Args {
    /// Timed layout builds per image and profile (tar, gzip and hashes), after one untimed one.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Where to write the JSON report (default: target/bench/images.json).
    #[arg(long)]
    output: Option<PathBuf>,
}

/// Builds the binaries of every image the workspace has with `profile`; returns the images.
pub(super) fn build_binaries(root: &Path, profile: Profile) -> anyhow::Result<Vec<&'static Image>> {
    let images = wanted(IMAGES, &workspace_bins(root)?)?;
    for mut build in build_commands(root, &images, profile) {
        step(&describe(&build), || step::run(&mut build))?;
    }
    Ok(images)
}

/// One image measured in both profiles.
struct Measured {
    name: &'static str,
    shipped: Built,
    dev: Built,
    binaries: Vec<(&'static str, u64)>,
    layout: Samples,
}

/// Runs the benchmark, prints the table and writes the JSON report.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    let root = workspace_root();
    let build = super::output::build();
    eprintln!(
        "bench images: {build} build of the bench; images of release binaries against the dev profile's"
    );
    let images = build_binaries(&root, Profile::Release)?;
    build_binaries(&root, Profile::Dev)?;
    let mut results = Vec::new();
    for image in images {
        let work = root.join("target/bench/images").join(image.name);
        let reference = format!("localhost/ptah-bench/{}:bench", image.name);
        let bins = |p: Profile| root.join("target").join(p.dir());
        let dev = layout_in(&work.join("dev"), &bins(Profile::Dev), image, &reference)?;
        let mut layout = Samples::default();
        let mut shipped = None;
        for round_no in 0..=args.rounds {
            let start = Instant::now();
            let built = layout_in(&work.join("image"), &bins(Profile::Release), image, &reference)?;
            if round_no > 0 {
                layout.0.push(start.elapsed().as_secs_f64());
            }
            shipped = Some(built);
        }
        let shipped = shipped.context("no layout was built")?;
        let binaries = image
            .binaries
            .iter()
            .map(|(_, bin, _)| {
                let path = bins(Profile::Release).join(bin);
                let len = std::fs::metadata(&path).with_context(|| format!("{}", path.display()))?;
                Ok((*bin, len.len()))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        results.push(Measured {
            name: image.name,
            shipped,
            dev,
            binaries,
            layout,
        });
    }
    print_table(&results, build);
    let report = json!({
        "benchmark": "images",
        "build": build,
        "profile": "release (Cargo.toml [profile.release])",
        "pushed": "gzip layer + config + manifest of the release binaries",
        "baseline": "the same image from the dev profile's binaries, layer uncompressed (what cargo xtask images pushed before)",
        "goal_bytes": GOAL_BYTES,
        "rounds": args.rounds,
        "results": results.iter().map(to_json).collect::<Vec<_>>(),
    });
    let path = super::output::path(args.output, "images");
    super::output::write(&path, &report)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// The dev image as pushed before: its layer uncompressed, its config and manifest.
fn dev_pushed_before(dev: &Built) -> u64 {
    dev.pushed_bytes - dev.layer_bytes + dev.layer_tar_bytes
}

fn to_json(m: &Measured) -> Value {
    let before = dev_pushed_before(&m.dev);
    json!({
        "image": m.name,
        "pushed_bytes": m.shipped.pushed_bytes,
        "layer_uncompressed_bytes": m.shipped.layer_tar_bytes,
        "dev_pushed_before_bytes": before,
        "dev_gzip_bytes": m.dev.pushed_bytes,
        "over_baseline": round(m.shipped.pushed_bytes as f64 / before as f64),
        "within_goal": m.shipped.pushed_bytes <= GOAL_BYTES,
        "binaries": m.binaries.iter().map(|(b, n)| json!({"binary": b, "bytes": n})).collect::<Vec<_>>(),
        "layout_seconds": m.layout.to_json(),
    })
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

fn print_table(results: &[Measured], build: &str) {
    println!(
        "\nimages as pushed ({build} bench; release binaries, gzip layer; baseline: the dev image, layer uncompressed)\n"
    );
    println!(
        "| image | pushed MB | layer uncompressed MB | dev image before MB | over baseline | goal | binaries MB | layout s (median) |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for m in results {
        let before = dev_pushed_before(&m.dev);
        let binaries: Vec<String> = m
            .binaries
            .iter()
            .map(|(b, n)| format!("{b} {:.1}", mb(*n)))
            .collect();
        println!(
            "| {} | {:.1} | {:.1} | {:.1} | {:.3}× | ≤ {:.0} MB {} | {} | {:.2} |",
            m.name,
            mb(m.shipped.pushed_bytes),
            mb(m.shipped.layer_tar_bytes),
            mb(before),
            m.shipped.pushed_bytes as f64 / before as f64,
            mb(GOAL_BYTES),
            if m.shipped.pushed_bytes <= GOAL_BYTES {
                "met"
            } else {
                "MISSED"
            },
            binaries.join(", "),
            m.layout.median()
        );
    }
}
