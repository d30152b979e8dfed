//! OCI image layouts built without Docker: one uncompressed layer from a root filesystem
//! directory (GNU tar with sorted names, mtime 0 and numeric owners, so the digest depends only
//! on the content), an image config, a manifest, `index.json` and `oci-layout`, tarred for
//! `ctr images import`.

use std::{fs, path::Path, process::Command};

use anyhow::Context;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::step::run;

/// What goes into the image config besides the layer.
pub struct ImageConfig<'a> {
    /// `localhost/ptah/pause:v1`: the name containerd records (`io.containerd.image.name`).
    pub name: &'a str,
    /// The entrypoint.
    pub entrypoint: Vec<String>,
    /// `uid:gid`.
    pub user: &'a str,
    /// `NAME=value` lines.
    pub env: Vec<String>,
}

/// A written layout: the tarball and the manifest digest.
pub struct Built {
    /// The layout as a tar file (`ctr images import` input).
    pub tarball: std::path::PathBuf,
    /// `sha256:…` of the manifest.
    pub manifest_digest: String,
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Writes a blob under `layout/blobs/sha256/` and returns its descriptor.
fn blob(layout: &Path, media_type: &str, bytes: &[u8]) -> anyhow::Result<Value> {
    let hex = sha256_hex(bytes);
    let dir = layout.join("blobs").join("sha256");
    fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    fs::write(dir.join(&hex), bytes).context("cannot write a blob")?;
    Ok(json!({"mediaType": media_type, "digest": format!("sha256:{hex}"), "size": bytes.len()}))
}

/// The image config JSON (amd64/linux, one layer).
pub fn config_json(config: &ImageConfig<'_>, diff_id: &str) -> Value {
    json!({
        "architecture": "amd64",
        "os": "linux",
        "config": {
            "Entrypoint": config.entrypoint,
            "User": config.user,
            "Env": config.env,
            "WorkingDir": "/",
        },
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created_by": "cargo xtask (OCI layout without Docker)"}],
    })
}

/// Builds the layout for `rootfs` in `work` (wiped) and tars it to `work/image.tar`.
pub fn build(rootfs: &Path, work: &Path, config: &ImageConfig<'_>) -> anyhow::Result<Built> {
    if work.exists() {
        fs::remove_dir_all(work).with_context(|| format!("cannot wipe {}", work.display()))?;
    }
    let layout = work.join("layout");
    fs::create_dir_all(&layout).with_context(|| format!("cannot create {}", layout.display()))?;
    let layer_tar = work.join("layer.tar");
    run(Command::new("tar")
        .args([
            "--sort=name",
            "--mtime=@0",
            "--owner=0",
            "--group=0",
            "--numeric-owner",
            "--format=posix",
            "--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime",
            "-C",
        ])
        .arg(rootfs)
        .arg("-cf")
        .arg(&layer_tar)
        .arg("."))?;
    let layer = fs::read(&layer_tar).context("cannot read the layer")?;
    let layer_desc = blob(&layout, "application/vnd.oci.image.layer.v1.tar", &layer)?;
    let diff_id = format!("sha256:{}", sha256_hex(&layer));
    let config_bytes = serde_json::to_vec(&config_json(config, &diff_id))?;
    let config_desc = blob(&layout, "application/vnd.oci.image.config.v1+json", &config_bytes)?;
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": config_desc,
        "layers": [layer_desc],
    });
    let manifest_bytes = serde_json::to_vec(&manifest)?;
    let mut manifest_desc = blob(
        &layout,
        "application/vnd.oci.image.manifest.v1+json",
        &manifest_bytes,
    )?;
    let tag = config.name.rsplit_once(':').map_or("latest", |(_, tag)| tag);
    manifest_desc["annotations"] = json!({
        "io.containerd.image.name": config.name,
        "org.opencontainers.image.ref.name": tag,
    });
    let manifest_digest = manifest_desc["digest"].as_str().unwrap_or_default().to_owned();
    let index = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [manifest_desc],
    });
    fs::write(layout.join("index.json"), serde_json::to_vec(&index)?).context("index.json")?;
    fs::write(layout.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).context("oci-layout")?;
    let tarball = work.join("image.tar");
    run(Command::new("tar")
        .args([
            "--sort=name",
            "--mtime=@0",
            "--owner=0",
            "--group=0",
            "--numeric-owner",
            "-C",
        ])
        .arg(&layout)
        .arg("-cf")
        .arg(&tarball)
        .arg("."))?;
    Ok(Built {
        tarball,
        manifest_digest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_rootfs_gives_the_same_manifest_digest() {
        let base = std::env::temp_dir().join(format!("ptah-oci-test-{}", std::process::id()));
        let rootfs = base.join("rootfs");
        fs::create_dir_all(rootfs.join("bin")).expect("rootfs");
        fs::write(rootfs.join("bin").join("hello"), b"#!/bin/sh\necho hi\n").expect("file");
        let config = ImageConfig {
            name: "localhost/ptah/test:v1",
            entrypoint: vec!["/bin/hello".to_owned()],
            user: "65532:65532",
            env: vec!["PATH=/bin".to_owned()],
        };
        let first = build(&rootfs, &base.join("a"), &config).expect("first");
        let second = build(&rootfs, &base.join("b"), &config).expect("second");
        assert_eq!(first.manifest_digest, second.manifest_digest);
        assert!(first.manifest_digest.starts_with("sha256:"));
        let index: Value =
            serde_json::from_slice(&fs::read(base.join("a/layout/index.json")).expect("index"))
                .expect("json");
        assert_eq!(
            index["manifests"][0]["annotations"]["io.containerd.image.name"],
            "localhost/ptah/test:v1"
        );
        assert!(first.tarball.is_file());
        fs::remove_dir_all(&base).expect("cleanup");
    }

    #[test]
    fn the_config_names_user_entrypoint_and_layer() {
        let config = ImageConfig {
            name: "x:y",
            entrypoint: vec!["/a".to_owned()],
            user: "65532:65532",
            env: vec![],
        };
        let json = config_json(&config, "sha256:00");
        assert_eq!(json["config"]["User"], "65532:65532");
        assert_eq!(json["rootfs"]["diff_ids"][0], "sha256:00");
        assert_eq!(json["config"]["Entrypoint"][0], "/a");
    }
}
