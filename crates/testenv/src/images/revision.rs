//! The images of another commit (`cargo xtask images --rev <commit>`): a detached worktree under
//! `target/rev/<commit>/src`, built into this workspace's target directory, its binaries copied to
//! `target/rev/<commit>/target/<profile>/` at once (the next build of this workspace uplifts its
//! own again), and its layouts and references under `target/rev/<commit>/target/images/`.

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{Context, bail};

use super::Image;
use crate::step::{output, run, step};

/// Checks out `rev` (a commit, tag or branch) and returns (the worktree, the output root, the full
/// commit hash).
pub fn checkout(root: &Path, rev: &str) -> anyhow::Result<(PathBuf, PathBuf, String)> {
    let commit = output(
        Command::new("git")
            .args(["rev-parse", "--verify", &format!("{rev}^{{commit}}")])
            .current_dir(root),
    )
    .with_context(|| format!("{rev} is not a commit of this repository"))?
    .trim()
    .to_owned();
    let out = root.join("target").join("rev").join(&commit);
    let source = out.join("src");
    let head = || {
        output(
            Command::new("git")
                .args(["rev-parse", "HEAD"])
                .current_dir(&source),
        )
        .map(|h| h.trim().to_owned())
    };
    if source.join("Cargo.toml").is_file() && head().ok().as_deref() == Some(commit.as_str()) {
        return Ok((source, out, commit));
    }
    step(&format!("worktree of {commit} at {}", source.display()), || {
        let _ = run(Command::new("git").args(["worktree", "prune"]).current_dir(root));
        if source.exists() {
            fs::remove_dir_all(&source).with_context(|| format!("cannot wipe {}", source.display()))?;
        }
        fs::create_dir_all(&out)?;
        run(Command::new("git")
            .args(["worktree", "add", "--detach", "--force"])
            .arg(&source)
            .arg(&commit)
            .current_dir(root))
    })?;
    if head()? != commit {
        bail!("the worktree at {} is not at {commit}", source.display());
    }
    Ok((source, out, commit))
}

/// Copies `image`'s binaries out of the shared target directory before anything overwrites them.
pub fn keep_binaries(root: &Path, out: &Path, profile: &str, image: &Image) -> anyhow::Result<()> {
    let from = root.join("target").join(profile);
    let to = out.join("target").join(profile);
    fs::create_dir_all(&to)?;
    for (_, bin, _) in image.binaries {
        fs::copy(from.join(bin), to.join(bin))
            .with_context(|| format!("cannot keep {bin} of the other revision"))?;
    }
    Ok(())
}
