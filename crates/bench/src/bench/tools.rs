//! Where the peers' programs are installed, and the Go toolchain that builds some of them.

use std::path::{Path, PathBuf};

use anyhow::Context;
use ptah_testenv::step::{cargo, run, workspace_root};

/// The cache the peers are installed into once and reused from, outside the clone.
pub(super) fn cache_root() -> anyhow::Result<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = var("XDG_CACHE_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".cache")))
        .context("neither XDG_CACHE_HOME nor HOME is set")?;
    Ok(base.join("ptah-operator").join("tools"))
}

/// `go` from the standard install location, else from PATH.
pub(super) fn go_program() -> PathBuf {
    let local = Path::new("/usr/local/go/bin/go");
    if local.is_file() {
        local.to_owned()
    } else {
        PathBuf::from("go")
    }
}

/// The `ptah` binary of this workspace, in the profile this benchmark was built with.
pub(super) fn build_ptah() -> anyhow::Result<PathBuf> {
    let root = workspace_root();
    let mut cmd = cargo();
    cmd.current_dir(&root)
        .args(["build", "--package", "ptah-cli", "--bin", "ptah"]);
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        cmd.arg("--release");
        "release"
    };
    eprintln!("==> building ptah ({profile})");
    run(&mut cmd)?;
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    Ok(target.join(profile).join("ptah"))
}
