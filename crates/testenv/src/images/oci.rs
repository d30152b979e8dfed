//! OCI image layouts built without Docker: one gzip-compressed layer from a root filesystem
//! directory (GNU tar with sorted names, mtime 0 and numeric owners, so the digest depends only
//! on the content; gzip with no name and mtime 0, so the compressed digest does too), an image
//! config, a manifest, `index.json` and `oci-layout`, tarred for `ctr images import`.
//!
//! The config's `diff_id` is the sha256 of the uncompressed tar (what the runtime unpacks and
//! checks), the manifest's layer digest that of the gzip blob (what the registry stores).

use std::{fs, io::Write, path::Path, process::Command};

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

/// The media type of the one layer.
pub const LAYER_MEDIA_TYPE: &str = "application/vnd.oci.image.layer.v1.tar+gzip";

/// A written layout: the tarball, the manifest digest and the sizes of what a push sends.
pub struct Built {
    /// The layout as a tar file (`ctr images import` input).
    pub tarball: std::path::PathBuf,
    /// `sha256:…` of the manifest.
    pub manifest_digest: String,
    /// Bytes a push sends: the compressed layer, the config and the manifest.
    pub pushed_bytes: u64,
    /// Bytes of the compressed layer.
    pub layer_bytes: u64,
    /// Bytes of the uncompressed layer tar.
    pub layer_tar_bytes: u64,
}

/// `tar` gzip-compressed at the default level (6): level 9 saved under 1% on these binaries and
/// took twice as long.
pub fn gzip(tar: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut encoder =
        flate2::write::GzEncoder::new(Vec::with_capacity(tar.len() / 2), flate2::Compression::default());
    encoder.write_all(tar).context("cannot compress the layer")?;
    encoder.finish().context("cannot compress the layer")
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
    // The blob holds it compressed; the uncompressed copy would only take disk (a previous
    // release's dev-profile layer is hundreds of MB).
    fs::remove_file(&layer_tar).context("cannot remove the uncompressed layer")?;
    let diff_id = format!("sha256:{}", sha256_hex(&layer));
    let compressed = gzip(&layer)?;
    let layer_desc = blob(&layout, LAYER_MEDIA_TYPE, &compressed)?;
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
    let pushed_bytes = [compressed.len(), config_bytes.len(), manifest_bytes.len()]
        .iter()
        .map(|n| *n as u64)
        .sum();
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
        pushed_bytes,
        layer_bytes: compressed.len() as u64,
        layer_tar_bytes: layer.len() as u64,
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
    fn the_layer_is_gzip_its_digest_the_blob_s_and_its_diff_id_the_tar_s() {
        use std::io::Read;
        let base = std::env::temp_dir().join(format!("ptah-oci-gzip-{}", std::process::id()));
        let rootfs = base.join("rootfs");
        fs::create_dir_all(&rootfs).expect("rootfs");
        fs::write(rootfs.join("data"), "compressible ".repeat(10_000)).expect("file");
        let config = ImageConfig {
            name: "localhost/ptah/test:v1",
            entrypoint: vec!["/data".to_owned()],
            user: "65532:65532",
            env: vec![],
        };
        let built = build(&rootfs, &base.join("out"), &config).expect("layout");
        let layout = base.join("out/layout");
        let read_blob = |digest: &str| {
            let hex = digest.strip_prefix("sha256:").expect("sha256 digest");
            fs::read(layout.join("blobs/sha256").join(hex)).expect("blob")
        };
        let manifest_bytes = read_blob(&built.manifest_digest);
        let manifest: Value = serde_json::from_slice(&manifest_bytes).expect("manifest");
        let layer = &manifest["layers"][0];
        assert_eq!(layer["mediaType"], LAYER_MEDIA_TYPE);
        let digest = layer["digest"].as_str().expect("digest");
        let compressed = read_blob(digest);
        assert_eq!(format!("sha256:{}", sha256_hex(&compressed)), digest);
        assert_eq!(layer["size"], compressed.len());
        let mut tar = Vec::new();
        flate2::read::GzDecoder::new(compressed.as_slice())
            .read_to_end(&mut tar)
            .expect("gunzip");
        assert_eq!(tar.len() as u64, built.layer_tar_bytes);
        assert_eq!(compressed.len() as u64, built.layer_bytes);
        assert!(compressed.len() * 10 < tar.len(), "repetitive content compresses");
        let config_json: Value = serde_json::from_slice(&read_blob(
            manifest["config"]["digest"].as_str().expect("config digest"),
        ))
        .expect("config");
        assert_eq!(
            config_json["rootfs"]["diff_ids"][0],
            format!("sha256:{}", sha256_hex(&tar))
        );
        let config_size = manifest["config"]["size"].as_u64().expect("config size");
        assert_eq!(
            built.pushed_bytes,
            compressed.len() as u64 + config_size + manifest_bytes.len() as u64
        );
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
