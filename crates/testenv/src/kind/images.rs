//! The workspace's images for a kind cluster: built as OCI layouts with the helpers of
//! [`crate::images`] (no Docker build), named for the kind registry's host address so that a
//! pinned reference Pods use is already present, archived with `tar` and imported into every
//! node with `kind load image-archive`. The pinned reference goes to
//! `target/images/<name>/reference`, where tests and chart installs read it. The kubectl image
//! ([`crate::images::KUBECTL_IMAGE`]) follows, from the minor's kubectl.

use std::{fs, path::Path};

use anyhow::Context;

use super::config::{archive_command, load_command};
use crate::{
    images::{
        IMAGES, KUBECTL_IMAGE, Profile, TAG, build_commands, image_name, layout, oci::Built, program_layout,
        wanted, workspace_bins, write_reference,
    },
    step::{describe, run, step},
};

/// Builds every image for `registry_host` (the kubectl image from `kubectl`), loads it into
/// `cluster` and returns the pinned references. `archives` receives one `<name>.tar` per image.
pub fn build_and_load(
    root: &Path,
    kind: &Path,
    kubectl: &Path,
    cluster: &str,
    registry_host: &str,
    archives: &Path,
) -> anyhow::Result<Vec<String>> {
    fs::create_dir_all(archives).with_context(|| format!("cannot create {}", archives.display()))?;
    let mut pinned = Vec::new();
    let images = wanted(IMAGES, &workspace_bins(root)?)?;
    for mut build in build_commands(root, &images, Profile::Release) {
        step(&describe(&build), || run(&mut build))?;
    }
    for image in images {
        let name = image_name(registry_host, image);
        let built = layout(root, Profile::Release, image, &name)?;
        pinned.push(load(root, kind, cluster, image.name, &name, &built, archives)?);
    }
    let name = format!("{registry_host}/{}:{TAG}", KUBECTL_IMAGE.repository);
    let built = program_layout(root, &KUBECTL_IMAGE, kubectl, &name)?;
    pinned.push(load(
        root,
        kind,
        cluster,
        KUBECTL_IMAGE.name,
        &name,
        &built,
        archives,
    )?);
    Ok(pinned)
}

/// Archives the layout of image `image` (under `target/images/<image>/`), loads it into every
/// node and writes its pinned reference.
fn load(
    root: &Path,
    kind: &Path,
    cluster: &str,
    image: &str,
    name: &str,
    built: &Built,
    archives: &Path,
) -> anyhow::Result<String> {
    let archive = archives.join(format!("{image}.tar"));
    let oci_layout = root
        .join("target")
        .join("images")
        .join(image)
        .join("oci")
        .join("layout");
    step(&format!("kind load {name}"), || {
        run(&mut archive_command(&oci_layout, &archive))?;
        run(&mut load_command(kind, &archive, cluster))
    })?;
    let reference = format!("{name}@{}", built.manifest_digest);
    write_reference(root, image, &reference)?;
    Ok(reference)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_named_for_the_registry() {
        let data_plane = &IMAGES[0];
        assert_eq!(
            image_name("127.0.0.1:40001", data_plane),
            "127.0.0.1:40001/ptah/data-plane:dev"
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
        assert_eq!(names, ["data-plane", "manager", "crd-manager"]);
        let refused = wanted(IMAGES, &[]).err().map(|e| e.to_string());
        assert!(
            refused
                .as_deref()
                .is_some_and(|e| e.starts_with("image data-plane: the workspace has no binary ")),
            "{refused:?}"
        );
    }
}
