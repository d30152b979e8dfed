//! Which chart and images a release installs: this checkout's (`cargo xtask images`), or the
//! previous release's named in `support/previous-release.json` (`cargo xtask images --rev
//! <commit>`, which checks that commit out under `target/rev/<commit>/src`).

use std::path::PathBuf;

use crate::{e2e::image_reference, workspace_root};

/// A chart directory and the five images it is installed with.
#[derive(Clone, Debug)]
pub struct ChartSource {
    /// What it is, for messages (`HEAD`, `previous release <commit>`).
    pub label: String,
    /// The chart directory.
    pub chart: PathBuf,
    /// The manager image, pinned.
    pub manager: String,
    /// The cert rotator image, pinned.
    pub cert_rotator: String,
    /// The lifecycle-hook image, pinned.
    pub crd_manager: String,
    /// The data-plane image (executor and runner), pinned.
    pub data_plane: String,
}

impl ChartSource {
    /// This checkout's chart with the images `cargo xtask images` pushed, and `data_plane`.
    pub fn head(data_plane: &str) -> ChartSource {
        ChartSource {
            label: "HEAD".to_owned(),
            chart: workspace_root().join("charts/ptah-operator"),
            manager: image_reference("manager"),
            cert_rotator: image_reference("cert-rotator"),
            crd_manager: image_reference("crd-manager"),
            data_plane: data_plane.to_owned(),
        }
    }

    /// The previous release: its chart from its worktree, its images from `--rev`; panics with the
    /// command that builds them when they are missing.
    pub fn previous() -> ChartSource {
        let commit = previous_commit();
        let out = workspace_root().join("target/rev").join(&commit);
        let reference = |name: &str| {
            let path = out.join("target/images").join(name).join("reference");
            std::fs::read_to_string(&path)
                .map(|t| t.trim().to_owned())
                .unwrap_or_else(|e| {
                    panic!(
                        "{}: {e}; build the previous release's images with `cargo xtask images --rev {commit}` \
                         (the e2e driver does for the upgrade phase)",
                        path.display()
                    )
                })
        };
        ChartSource {
            label: format!("previous release {}", &commit[..12]),
            chart: out.join("src/charts/ptah-operator"),
            manager: reference("manager"),
            cert_rotator: reference("cert-rotator"),
            crd_manager: reference("crd-manager"),
            data_plane: reference("data-plane"),
        }
    }

    /// `--set image.<value>=<pinned reference>` for the chart's five images.
    pub fn sets(&self) -> Vec<String> {
        let mut sets = Vec::new();
        for (value, image) in [
            ("image.manager", &self.manager),
            ("image.certRotator", &self.cert_rotator),
            ("image.crdManager", &self.crd_manager),
            ("image.executor", &self.data_plane),
            ("image.runner", &self.data_plane),
        ] {
            sets.push("--set".to_owned());
            sets.push(format!("{value}={image}"));
        }
        sets
    }
}

/// The commit of `support/previous-release.json`.
pub fn previous_commit() -> String {
    let path = workspace_root().join("support/previous-release.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let value: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    value["commit"]
        .as_str()
        .filter(|c| c.len() == 40)
        .unwrap_or_else(|| panic!("{} names no 40-hex commit", path.display()))
        .to_owned()
}
