//! Container images built without Docker, as OCI image layouts (see [`oci`]).
//!
//! * the pause image of the local node (busybox-static in a shell loop that exits on SIGTERM);
//! * `cargo xtask images`: the data-plane image (`ptah` + `ptah-runner`) from this workspace's
//!   binaries: the binaries, the shared libraries `ldd` names, CA certificates, `/etc/passwd`
//!   with the non-root user 65532, `/tmp`; imported into the local cluster's containerd and
//!   pushed to the TLS registry of `cargo xtask services` through it. The `manager` image waits
//!   for a `manager` binary in the workspace.

pub mod oci;

use std::{
    fs,
    os::unix::fs::{PermissionsExt, symlink},
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{Context, bail};
use ptah_testservices::TestServices;

use crate::step::{cargo, output, run, step, workspace_root};

/// The data-plane image's repository in the services registry.
pub const DATA_PLANE_REPOSITORY: &str = "ptah/data-plane";
/// Its tag.
pub const TAG: &str = "dev";

/// Arguments of `cargo xtask images`.
#[derive(clap::Args)]
pub struct Args {
    /// Build the binaries with `--release` (default: the dev profile, faster to build here).
    #[arg(long)]
    release: bool,
}

/// Runs `cargo xtask images`.
pub fn run_task(args: Args) -> anyhow::Result<()> {
    let root = workspace_root();
    let profile = if args.release { "release" } else { "debug" };
    step("cargo build -p ptah-cli -p ptah-runner", || {
        let mut cmd = cargo();
        cmd.args(["build", "-p", "ptah-cli", "-p", "ptah-runner"])
            .current_dir(&root);
        if args.release {
            cmd.arg("--release");
        }
        run(&mut cmd)
    })?;
    let services = TestServices::load().map_err(|e| anyhow::anyhow!("{e}"))?;
    let registry = &services.registry;
    let reference = format!("{}/{DATA_PLANE_REPOSITORY}:{TAG}", registry.host);
    let work = root.join("target").join("images").join("data-plane");
    let built = step(&format!("OCI layout {reference}"), || {
        let bins = root.join("target").join(profile);
        let rootfs = work.join("rootfs");
        data_plane_rootfs(&rootfs, &[bins.join("ptah"), bins.join("ptah-runner")])?;
        oci::build(
            &rootfs,
            &work.join("oci"),
            &oci::ImageConfig {
                name: &reference,
                entrypoint: vec!["/usr/local/bin/ptah".to_owned()],
                user: "65532:65532",
                env: vec![
                    "PATH=/usr/local/bin".to_owned(),
                    "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt".to_owned(),
                ],
            },
        )
    })?;
    let socket = root
        .join("target")
        .join("cluster")
        .join("containerd")
        .join("containerd.sock");
    if !socket.exists() {
        bail!(
            "{} does not exist: start the full tier with `cargo xtask cluster up` first (its \
             containerd imports and pushes the image)",
            socket.display()
        );
    }
    let hosts_dir = root
        .join("target")
        .join("cluster")
        .join("containerd")
        .join("certs.d");
    step("import into the cluster's containerd (namespace k8s.io)", || {
        run(Command::new("ctr")
            .arg("--address")
            .arg(&socket)
            .args(["-n", "k8s.io", "images", "import"])
            .arg(&built.tarball))
    })?;
    step(&format!("push {reference}"), || {
        // The password goes through ctr's argv: a throw-away test registry credential.
        let user = format!("{}:{}", registry.username, registry.password.expose());
        output(
            Command::new("ctr")
                .arg("--address")
                .arg(&socket)
                .args(["-n", "k8s.io", "images", "push", "--hosts-dir"])
                .arg(&hosts_dir)
                .args(["--user", &user, &reference]),
        )
        .map(|_| ())
        .map_err(|e| anyhow::anyhow!("{}", e.to_string().replace(registry.password.expose(), "***")))
    })?;
    let pinned = format!("{reference}@{}", built.manifest_digest);
    // Tests and the e2e driver read the pinned reference from here (the manager needs digests).
    std::fs::write(work.join("reference"), format!("{pinned}\n"))?;
    println!("{pinned}");
    Ok(())
}

/// The data-plane root filesystem: binaries in /usr/local/bin, their shared libraries at the
/// paths `ldd` names, CA certificates, passwd/group with 65532, /tmp.
fn data_plane_rootfs(rootfs: &Path, binaries: &[PathBuf]) -> anyhow::Result<()> {
    if rootfs.exists() {
        fs::remove_dir_all(rootfs).with_context(|| format!("cannot wipe {}", rootfs.display()))?;
    }
    let bin = rootfs.join("usr/local/bin");
    fs::create_dir_all(&bin)?;
    let mut libs: Vec<PathBuf> = Vec::new();
    for binary in binaries {
        let name = binary.file_name().context("binary without a name")?;
        fs::copy(binary, bin.join(name)).with_context(|| format!("cannot copy {}", binary.display()))?;
        libs.extend(shared_libraries(&output(Command::new("ldd").arg(binary))?));
    }
    libs.sort();
    libs.dedup();
    for lib in libs {
        let target = rootfs.join(lib.strip_prefix("/").unwrap_or(&lib));
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)?;
        }
        // Copy the file the path resolves to (the libraries are symlinks on Debian).
        fs::copy(&lib, &target).with_context(|| format!("cannot copy {}", lib.display()))?;
    }
    let certs = rootfs.join("etc/ssl/certs");
    fs::create_dir_all(&certs)?;
    fs::copy(
        "/etc/ssl/certs/ca-certificates.crt",
        certs.join("ca-certificates.crt"),
    )
    .context("cannot copy the CA certificates (install ca-certificates)")?;
    fs::write(
        rootfs.join("etc/passwd"),
        "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
    )?;
    fs::write(rootfs.join("etc/group"), "root:x:0:\nnonroot:x:65532:\n")?;
    let tmp = rootfs.join("tmp");
    fs::create_dir_all(&tmp)?;
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o1777))?;
    fs::create_dir_all(rootfs.join("home/nonroot"))?;
    Ok(())
}

/// The absolute library paths of `ldd` output (`libc.so.6 => /lib/… (0x…)`, `/lib64/ld-…`).
fn shared_libraries(ldd: &str) -> Vec<PathBuf> {
    ldd.lines()
        .filter_map(|line| {
            let line = line.trim();
            let path = match line.split_once("=>") {
                Some((_, right)) => right.split_whitespace().next()?,
                None => line.split_whitespace().next()?,
            };
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect()
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldd_output_gives_absolute_library_paths_only() {
        let ldd = "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n";
        assert_eq!(
            shared_libraries(ldd),
            [
                PathBuf::from("/lib/x86_64-linux-gnu/libc.so.6"),
                PathBuf::from("/lib64/ld-linux-x86-64.so.2")
            ]
        );
    }
}
