//! Installs the Debian packages the services need, and only those that are missing.

use std::{fs, os::unix::fs::PermissionsExt, path::Path, process::Command};

use anyhow::Context;

use crate::step::run;

/// The packages `up` needs.
const PACKAGES: &[&str] = &[
    "postgresql-15",
    "mariadb-server",
    "docker-registry",
    "apache2-utils",
    "curl",
];

/// Keeps maintainer scripts from starting daemons on their default ports during installation.
const POLICY_RC_D: &str = "/usr/sbin/policy-rc.d";

/// Installs whichever of [`PACKAGES`] is missing (one `apt-get update`, then one install).
pub fn ensure_installed() -> anyhow::Result<()> {
    ensure_packages(PACKAGES)
}

/// Installs whichever of `packages` is missing (one `apt-get update`, then one install).
pub fn ensure_packages(packages: &[&str]) -> anyhow::Result<()> {
    let missing: Vec<&str> = packages.iter().copied().filter(|p| !installed(p)).collect();
    if missing.is_empty() {
        eprintln!("    already installed: {}", packages.join(" "));
        return Ok(());
    }
    eprintln!("    installing: {}", missing.join(" "));
    ensure_policy_rc_d()?;
    run(Command::new("apt-get")
        .args(["update", "-qq"])
        .env("DEBIAN_FRONTEND", "noninteractive"))?;
    run(Command::new("apt-get")
        .args(["install", "-y", "-qq"])
        .args(&missing)
        .env("DEBIAN_FRONTEND", "noninteractive"))
}

fn installed(package: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", package])
        .output()
        .is_ok_and(|out| out.status.success() && out.stdout == b"install ok installed")
}

/// Creates `/usr/sbin/policy-rc.d` (`exit 101`) when absent; an existing one is kept as is.
fn ensure_policy_rc_d() -> anyhow::Result<()> {
    let path = Path::new(POLICY_RC_D);
    if path.exists() {
        return Ok(());
    }
    fs::write(
        path,
        "#!/bin/sh\n# Written by cargo xtask services: no daemon starts during apt-get install.\nexit 101\n",
    )
    .with_context(|| format!("cannot write {POLICY_RC_D}"))?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot chmod {POLICY_RC_D}"))?;
    eprintln!("    created {POLICY_RC_D} (exit 101)");
    Ok(())
}
