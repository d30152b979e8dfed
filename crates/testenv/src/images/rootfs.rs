//! Root filesystems for images of workspace binaries (glibc-linked: `ldd` names what to copy)
//! and of static programs (kubectl: nothing to copy).

use std::{
    fs,
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{Context, bail};

/// A root filesystem for workspace binaries: each binary at its path in the image, their shared
/// libraries at the paths `ldd` names, CA certificates, passwd/group with 65532, /tmp.
pub fn build(rootfs: &Path, binaries: &[(PathBuf, &str)]) -> anyhow::Result<()> {
    if rootfs.exists() {
        fs::remove_dir_all(rootfs).with_context(|| format!("cannot wipe {}", rootfs.display()))?;
    }
    fs::create_dir_all(rootfs).with_context(|| format!("cannot create {}", rootfs.display()))?;
    let mut libs: Vec<PathBuf> = Vec::new();
    for (binary, at) in binaries {
        let target = rootfs.join(at.trim_start_matches('/'));
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::copy(binary, &target).with_context(|| format!("cannot copy {}", binary.display()))?;
        libs.extend(libraries_of(binary)?);
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

/// The shared libraries `binary` loads: none for a static executable (`ldd` says "not a dynamic
/// executable" and fails), else what its `ldd` output names.
fn libraries_of(binary: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let out = Command::new("ldd")
        .arg(binary)
        .output()
        .with_context(|| format!("cannot start ldd {}", binary.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.success() {
        return Ok(shared_libraries(&stdout));
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stdout.contains("not a dynamic executable") || stderr.contains("not a dynamic executable") {
        return Ok(Vec::new());
    }
    bail!(
        "`ldd {}` failed with {}: {}{}",
        binary.display(),
        out.status,
        stdout.trim(),
        stderr.trim()
    )
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
