//! The images of another commit (`cargo xtask images --rev <commit>`): a detached worktree under
//! `target/rev/<commit>/src`, built with the dev profile (a release build of it would be a second
//! cold release build of every dependency in CI) in a target directory of its own,
//! `<cache>/rev/target` beside the Kubernetes cache. Never this workspace's target directory:
//! cargo names a path package's artifacts by its path *relative to the workspace*, so two
//! revisions would share them, and the older sources' mtimes would let cargo take the other
//! revision's artifacts for fresh. The binaries are kept per commit under
//! `<cache>/rev/<commit>/<profile>/`, so a fresh clone on the same machine reuses them and a
//! commit already kept is not built again; the build directory is removed once they are kept.
//! They are placed without debug information, and the layouts and references go under
//! `target/rev/<commit>/target/`.

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{Context, bail};

use super::{IMAGES, Image, Profile, build_command, wanted, workspace_bins};
use crate::step::{output, run, step};

/// A built revision.
pub struct Built {
    /// The full commit hash.
    pub commit: String,
    /// Where its layouts and references go (`target/rev/<commit>`), with the binaries in
    /// `target/<profile>/` below it.
    pub out: PathBuf,
    /// The images it has binaries for.
    pub images: Vec<&'static Image>,
}

/// Checks `rev` out, builds (or reuses) its binaries and places them under `out/target/debug`.
pub fn build(root: &Path, rev: &str) -> anyhow::Result<Built> {
    let profile = Profile::Dev.dir();
    let commit = resolve(root, rev)?;
    let out = root.join("target").join("rev").join(&commit);
    let source = checkout(root, &out, &commit)?;
    let cache = crate::k8s::cache_root()?
        .parent()
        .context("the cache root has no parent")?
        .join("rev");
    let kept = cache.join(&commit).join(profile);
    let images = wanted(IMAGES, &workspace_bins(&source)?)?;
    let bins = out.join("target").join(profile);
    fs::create_dir_all(&bins)?;
    let build_dir = cache.join("target");
    let placed = keep_and_place(&source, &images, &build_dir, &kept, &bins);
    // Every binary is kept per commit, so the build directory (about 3 GB) only served this
    // build, and one left by a failed build would hold the space in `~/.cache` for good: on a CI
    // disk that is the difference between room and none for the suites.
    if build_dir.exists() {
        fs::remove_dir_all(&build_dir).with_context(|| format!("cannot remove {}", build_dir.display()))?;
    }
    placed?;
    Ok(Built { commit, out, images })
}

/// Builds in `build_dir` the binaries of `images` that `kept` lacks, keeps them there, and
/// places every image's binaries in `bins`.
fn keep_and_place(
    source: &Path,
    images: &[&Image],
    build_dir: &Path,
    kept: &Path,
    bins: &Path,
) -> anyhow::Result<()> {
    let profile = Profile::Dev.dir();
    for image in images {
        let missing = image.binaries.iter().any(|(_, bin, _)| !kept.join(bin).is_file());
        if missing {
            let mut build = build_command(source, &[image], Profile::Dev);
            build.env("CARGO_TARGET_DIR", build_dir);
            step(&crate::step::describe(&build), || run(&mut build))?;
            fs::create_dir_all(kept)?;
            for (_, bin, _) in image.binaries {
                let built = build_dir.join(profile).join(bin);
                fs::copy(&built, kept.join(bin))
                    .with_context(|| format!("cannot keep {}", built.display()))?;
            }
        }
        for (_, bin, _) in image.binaries {
            place(&kept.join(bin), &bins.join(bin))?;
        }
    }
    Ok(())
}

/// Copies a kept binary into place without its debug information: the dev profile's line tables
/// and symbols are most of each binary, and the images would carry them four times over (layout,
/// containerd's content and snapshot, the registry).
fn place(kept: &Path, at: &Path) -> anyhow::Result<()> {
    run(Command::new("strip")
        .arg("--strip-debug")
        .arg("-o")
        .arg(at)
        .arg(kept))
    .with_context(|| format!("cannot place {} (binutils' strip)", kept.display()))
}

/// The full hash of `rev`; a commit a shallow clone lacks is fetched from `origin` once.
fn resolve(root: &Path, rev: &str) -> anyhow::Result<String> {
    let parse = || {
        output(
            Command::new("git")
                .args(["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")])
                .current_dir(root),
        )
    };
    let found = match parse() {
        Ok(found) => found,
        Err(_) => {
            let _ = run(Command::new("git")
                .args(["fetch", "--quiet", "origin", rev])
                .current_dir(root));
            parse().with_context(|| {
                format!(
                    "{rev} is not a commit of this repository, and `git fetch origin {rev}` did not bring it"
                )
            })?
        }
    };
    Ok(found.trim().to_owned())
}

/// The worktree of `commit` at `out/src` (its chart is installed from there).
fn checkout(root: &Path, out: &Path, commit: &str) -> anyhow::Result<PathBuf> {
    let source = out.join("src");
    let head = || {
        output(
            Command::new("git")
                .args(["rev-parse", "HEAD"])
                .current_dir(&source),
        )
        .map(|h| h.trim().to_owned())
    };
    if source.join("Cargo.toml").is_file() && head().ok().as_deref() == Some(commit) {
        return Ok(source);
    }
    step(&format!("worktree of {commit} at {}", source.display()), || {
        let _ = run(Command::new("git").args(["worktree", "prune"]).current_dir(root));
        if source.exists() {
            fs::remove_dir_all(&source).with_context(|| format!("cannot wipe {}", source.display()))?;
        }
        fs::create_dir_all(out)?;
        run(Command::new("git")
            .args(["worktree", "add", "--detach", "--force"])
            .arg(&source)
            .arg(commit)
            .current_dir(root))
    })?;
    if head()? != commit {
        bail!("the worktree at {} is not at {commit}", source.display());
    }
    Ok(source)
}
