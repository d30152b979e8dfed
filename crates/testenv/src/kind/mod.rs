//! The kind provider (stub; being completed).

use std::path::{Path, PathBuf};

use anyhow::bail;

use crate::{
    k8s::{Matrix, Minor},
    services::Engine,
};

/// Creates (or keeps) the minor's kind cluster and returns its cluster directory.
pub fn provide(_root: &Path, minor: &Minor, _matrix: &Matrix) -> anyhow::Result<PathBuf> {
    bail!("kind provider for {} is not written yet", minor.minor)
}

/// The database image the kind provider runs for an engine.
pub fn database_image(engine: Engine) -> anyhow::Result<String> {
    bail!("no kind image for {engine:?} yet")
}
