//! Container images built without Docker, as OCI image layouts (see [`oci`]).
//!
//! Today: the pause image of the local node (busybox-static in a shell loop that exits on
//! SIGTERM). The data-plane and manager images of `cargo xtask images` are not built yet.

pub mod oci;

use std::{fs, os::unix::fs::symlink, path::Path};

use anyhow::Context;

/// The pause image's name in containerd (registry.k8s.io is unreachable here).
pub const PAUSE_IMAGE: &str = "localhost/ptah/pause:v1";

/// Writes the pause image's root filesystem (`/bin/busybox`, `/bin/sh`) into `rootfs` and
/// builds its layout in `work`.
pub fn pause(rootfs: &Path, work: &Path) -> anyhow::Result<oci::Built> {
    let busybox = Path::new("/bin/busybox");
    if !busybox.is_file() {
        anyhow::bail!("{} is missing: install busybox-static", busybox.display());
    }
    if rootfs.exists() {
        fs::remove_dir_all(rootfs).with_context(|| format!("cannot wipe {}", rootfs.display()))?;
    }
    let bin = rootfs.join("bin");
    fs::create_dir_all(&bin).with_context(|| format!("cannot create {}", bin.display()))?;
    fs::copy(busybox, bin.join("busybox")).context("cannot copy busybox")?;
    for applet in ["sh", "sleep"] {
        symlink("busybox", bin.join(applet)).with_context(|| format!("cannot link {applet}"))?;
    }
    oci::build(
        rootfs,
        work,
        &oci::ImageConfig {
            name: PAUSE_IMAGE,
            entrypoint: vec![
                "/bin/sh".to_owned(),
                "-c".to_owned(),
                "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done".to_owned(),
            ],
            user: "65532:65532",
            env: vec!["PATH=/bin".to_owned()],
        },
    )
}
