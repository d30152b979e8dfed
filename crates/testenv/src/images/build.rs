//! Which images to build and how their binaries are compiled.
//!
//! The images ship the release profile (stripped; see its comment in the workspace manifest and
//! docs/development.md, "Image sizes"), built in one cargo invocation: features unify once and
//! every dependency is compiled once for all five binaries. The dev profile stays for another
//! commit's images (`--rev`, whose binaries are kept per commit, so a release build of that
//! commit would be a second cold build in CI) and for `--dev`; it builds one invocation per
//! image, with the same packages the tests build on their own, so it reuses their artifacts.

use std::{path::Path, process::Command};

use anyhow::{Context, bail};
use serde_json::Value;

use super::Image;
use crate::step::{cargo, output};

/// The cargo profile of the images' binaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// The release profile: what ships, what the e2e suites and the chart run.
    Release,
    /// The dev profile: unoptimised, with line tables; about five times the size.
    Dev,
}

impl Profile {
    /// The directory of its binaries under the target directory.
    pub fn dir(self) -> &'static str {
        match self {
            Profile::Release => "release",
            Profile::Dev => "debug",
        }
    }
}

/// `cargo build [--release] -p <package> --bin <bin> …` for the binaries of `images`.
pub fn build_command(root: &Path, images: &[&Image], profile: Profile) -> Command {
    let mut cmd = cargo();
    cmd.arg("build").current_dir(root);
    if profile == Profile::Release {
        cmd.arg("--release");
    }
    for image in images {
        for (package, bin, _) in image.binaries {
            cmd.args(["-p", package, "--bin", bin]);
        }
    }
    cmd
}

/// The cargo invocations that build `images`: one for the release profile, one per image for the
/// dev profile (see the module comment).
pub fn build_commands(root: &Path, images: &[&Image], profile: Profile) -> Vec<Command> {
    match profile {
        Profile::Release => vec![build_command(root, images, profile)],
        Profile::Dev => images
            .iter()
            .map(|image| build_command(root, &[image], profile))
            .collect(),
    }
}

/// The images to build given the workspace's binary targets: an optional image whose binary does
/// not exist yet is left out with a message, a required one is an error.
pub fn wanted<'a>(images: &'a [Image], bins: &[String]) -> anyhow::Result<Vec<&'a Image>> {
    let mut wanted = Vec::new();
    for image in images {
        let missing: Vec<&str> = image
            .binaries
            .iter()
            .map(|(_, bin, _)| *bin)
            .filter(|bin| !bins.iter().any(|b| b == bin))
            .collect();
        match (missing.is_empty(), image.optional) {
            (true, _) => wanted.push(image),
            (false, true) => eprintln!(
                "    image {}: skipped, the workspace has no binary {} yet (`cargo build --bin {}` \
                 would fail); it is built once the binary exists",
                image.name,
                missing.join(", "),
                missing[0]
            ),
            (false, false) => bail!(
                "image {}: the workspace has no binary {}",
                image.name,
                missing.join(", ")
            ),
        }
    }
    Ok(wanted)
}

/// The binary targets of the workspace's packages (`cargo metadata --no-deps`).
pub fn workspace_bins(root: &Path) -> anyhow::Result<Vec<String>> {
    let text = output(
        cargo()
            .args(["metadata", "--no-deps", "--format-version", "1"])
            .current_dir(root),
    )?;
    Ok(bin_targets(
        &serde_json::from_str(&text).context("cargo metadata printed no JSON")?,
    ))
}

fn bin_targets(metadata: &Value) -> Vec<String> {
    metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|p| p["targets"].as_array().into_iter().flatten())
        .filter(|t| t["kind"].as_array().is_some_and(|k| k.iter().any(|k| k == "bin")))
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{images::IMAGES, step::describe};

    #[test]
    fn bin_targets_are_read_from_cargo_metadata() {
        let metadata = json!({"packages": [
            {"targets": [{"name": "manager", "kind": ["bin"]}, {"name": "ptah_manager", "kind": ["lib"]}]},
            {"targets": [{"name": "ptah", "kind": ["bin"]}]},
        ]});
        assert_eq!(bin_targets(&metadata), ["manager", "ptah"]);
        assert!(bin_targets(&json!({})).is_empty());
    }

    #[test]
    fn the_release_profile_builds_every_binary_in_one_invocation_the_dev_profile_one_per_image() {
        let all: Vec<&Image> = IMAGES.iter().collect();
        let release = build_commands(Path::new("/w"), &all, Profile::Release);
        assert_eq!(release.len(), 1);
        let line = describe(&release[0]);
        assert!(
            line.contains("build --release -p ptah-cli --bin ptah -p ptah-runner --bin ptah-runner -p ptah-manager --bin manager"),
            "{line}"
        );
        let dev = build_commands(Path::new("/w"), &all, Profile::Dev);
        assert_eq!(dev.len(), IMAGES.len());
        let first = describe(&dev[0]);
        assert!(
            first.ends_with("build -p ptah-cli --bin ptah -p ptah-runner --bin ptah-runner"),
            "{first}"
        );
        assert_eq!((Profile::Release.dir(), Profile::Dev.dir()), ("release", "debug"));
    }
}
