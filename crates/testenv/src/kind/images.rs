//! The workspace's images for a kind cluster: built as OCI layouts with the helpers of
//! [`crate::images`] (no Docker build), named for the kind registry's host address so that a
//! pinned reference Pods use is already present, archived with `tar` and imported into every
//! node with `kind load image-archive`. The pinned reference goes to
//! `target/images/<name>/reference`, where tests and chart installs read it.

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{Context, bail};
use serde_json::Value;

use super::config::{archive_command, load_command};
use crate::{
    images::{IMAGES, Image, TAG, oci, rootfs},
    step::{cargo, describe, output, run, step},
};

/// `<registry host>/<repository>:dev`.
pub fn image_name(registry_host: &str, image: &Image) -> String {
    format!("{registry_host}/{}:{TAG}", image.repository)
}

/// The images to build given the workspace's binary targets: an optional image whose binary does
/// not exist yet is left out, a required one is an error.
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
                "    image {}: skipped, the workspace has no binary {} yet",
                image.name,
                missing.join(", ")
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

/// `cargo build -p <package> --bin <bin> …` for one image (the dev profile).
pub fn build_command(root: &Path, image: &Image) -> Command {
    let mut cmd = cargo();
    cmd.arg("build").current_dir(root);
    for (package, bin, _) in image.binaries {
        cmd.args(["-p", package, "--bin", bin]);
    }
    cmd
}

fn bin_targets(root: &Path) -> anyhow::Result<Vec<String>> {
    let text = output(
        cargo()
            .args(["metadata", "--no-deps", "--format-version", "1"])
            .current_dir(root),
    )?;
    let json: Value = serde_json::from_str(&text).context("cargo metadata printed no JSON")?;
    Ok(json["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|p| p["targets"].as_array().into_iter().flatten())
        .filter(|t| t["kind"].as_array().is_some_and(|k| k.iter().any(|k| k == "bin")))
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect())
}

/// Builds every image for `registry_host`, loads it into `cluster` and returns the pinned
/// references. `archives` receives one `<name>.tar` per image.
pub fn build_and_load(
    root: &Path,
    kind: &Path,
    cluster: &str,
    registry_host: &str,
    archives: &Path,
) -> anyhow::Result<Vec<String>> {
    fs::create_dir_all(archives).with_context(|| format!("cannot create {}", archives.display()))?;
    let bins = bin_targets(root)?;
    let mut pinned = Vec::new();
    for image in wanted(IMAGES, &bins)? {
        let mut build = build_command(root, image);
        step(&describe(&build), || run(&mut build))?;
        let name = image_name(registry_host, image);
        let work = root.join("target").join("images").join(image.name);
        let built = step(&format!("OCI layout {name}"), || {
            let target = root.join("target").join("debug");
            let files: Vec<(PathBuf, &str)> = image
                .binaries
                .iter()
                .map(|(_, bin, at)| (target.join(bin), *at))
                .collect();
            rootfs::build(&work.join("rootfs"), &files)?;
            let entrypoint = image.binaries.first().map_or("/", |(_, _, at)| *at);
            oci::build(
                &work.join("rootfs"),
                &work.join("oci"),
                &oci::ImageConfig {
                    name: &name,
                    entrypoint: vec![entrypoint.to_owned()],
                    user: "65532:65532",
                    env: vec![
                        "PATH=/usr/local/bin:/".to_owned(),
                        "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt".to_owned(),
                    ],
                },
            )
        })?;
        let archive = archives.join(format!("{}.tar", image.name));
        step(&format!("kind load {name}"), || {
            run(&mut archive_command(&work.join("oci").join("layout"), &archive))?;
            run(&mut load_command(kind, &archive, cluster))
        })?;
        let reference = format!("{name}@{}", built.manifest_digest);
        fs::write(work.join("reference"), format!("{reference}\n"))
            .with_context(|| format!("cannot write {}", work.join("reference").display()))?;
        pinned.push(reference);
    }
    Ok(pinned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_named_for_the_registry_and_built_with_their_binaries() {
        let data_plane = &IMAGES[0];
        assert_eq!(
            image_name("127.0.0.1:40001", data_plane),
            "127.0.0.1:40001/ptah/data-plane:dev"
        );
        let line = describe(&build_command(Path::new("/w"), data_plane));
        assert!(
            line.ends_with("build -p ptah-cli --bin ptah -p ptah-runner --bin ptah-runner"),
            "{line}"
        );
    }

    #[test]
    fn an_optional_image_without_its_binary_is_skipped_a_required_one_fails() {
        let all: Vec<String> = IMAGES
            .iter()
            .flat_map(|i| i.binaries.iter().map(|(_, bin, _)| (*bin).to_owned()))
            .collect();
        assert_eq!(wanted(IMAGES, &all).expect("all").len(), IMAGES.len());
        let without_rotator: Vec<String> = all
            .iter()
            .filter(|b| *b != "ptah-cert-rotator")
            .cloned()
            .collect();
        let names: Vec<&str> = wanted(IMAGES, &without_rotator)
            .expect("some")
            .iter()
            .map(|i| i.name)
            .collect();
        assert_eq!(names, ["data-plane", "manager"]);
        assert!(wanted(IMAGES, &[]).is_err());
    }
}
