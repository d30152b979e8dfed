//! The real Kubernetes API server started by `cargo xtask cluster up --tier api`, as tests see it.
//!
//! [`ClusterFiles::load`] reads `target/cluster/cluster.json` of the workspace (or of
//! `$PTAH_CLUSTER_DIR`), which names the admin and unprivileged-user kubeconfigs. When the cluster
//! is not up the error says which command starts it; [`ClusterFiles::require`] turns that into a
//! panic for tests. The tests themselves live in `tests/`.

use std::path::{Path, PathBuf};

/// The command that starts the API tier; every error message names it.
pub const UP_COMMAND: &str = "cargo xtask cluster up --tier api";

/// Environment variable that overrides the cluster directory (default `<workspace>/target/cluster`).
pub const DIR_ENV: &str = "PTAH_CLUSTER_DIR";

/// Why the cluster cannot be used. Every message contains [`UP_COMMAND`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `cluster.json` does not exist.
    #[error("the test cluster is not up: {path} does not exist; run `{UP_COMMAND}`")]
    NotUp {
        /// The state file looked for.
        path: PathBuf,
    },
    /// `cluster.json` cannot be read or lacks a field.
    #[error("{path} is unusable ({reason}); run `{UP_COMMAND}` to rewrite it")]
    Broken {
        /// The state file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A kubeconfig it names is missing.
    #[error("{path} is missing although {state} names it; run `{UP_COMMAND}`")]
    MissingKubeconfig {
        /// The kubeconfig.
        path: PathBuf,
        /// The state file.
        state: PathBuf,
    },
}

/// What `cargo xtask cluster up` wrote.
#[derive(Clone, Debug)]
pub struct ClusterFiles {
    /// `api` or `full`.
    pub tier: String,
    /// The exact Kubernetes version (`v1.35.4`).
    pub version: String,
    /// `https://127.0.0.1:PORT`.
    pub server: String,
    /// Kubeconfig of a `system:masters` identity.
    pub admin_kubeconfig: PathBuf,
    /// Kubeconfig of an unprivileged person (no group but `system:authenticated`).
    pub user_kubeconfig: PathBuf,
    /// The unprivileged user's name, for RBAC subjects.
    pub user_name: String,
}

impl ClusterFiles {
    /// Reads the state of the cluster in `$PTAH_CLUSTER_DIR` or `<workspace>/target/cluster`.
    pub fn load() -> Result<Self, Error> {
        let dir = match std::env::var_os(DIR_ENV).filter(|v| !v.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => default_dir(),
        };
        Self::load_from(&dir)
    }

    /// Like [`ClusterFiles::load`], but panics with the error (for tests).
    pub fn require() -> Self {
        match Self::load() {
            Ok(files) => files,
            Err(err) => panic!("{err}"),
        }
    }

    /// Reads `dir/cluster.json`.
    pub fn load_from(dir: &Path) -> Result<Self, Error> {
        let path = dir.join("cluster.json");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Err(Error::NotUp { path }),
            Err(err) => {
                return Err(Error::Broken {
                    path,
                    reason: err.to_string(),
                });
            }
        };
        let json: serde_json::Value = serde_json::from_str(&text).map_err(|err| Error::Broken {
            path: path.clone(),
            reason: err.to_string(),
        })?;
        let field = |name: &str| {
            json[name]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| Error::Broken {
                    path: path.clone(),
                    reason: format!("no string `{name}`"),
                })
        };
        let files = Self {
            tier: field("tier")?,
            version: field("version")?,
            server: field("server")?,
            admin_kubeconfig: PathBuf::from(field("adminKubeconfig")?),
            user_kubeconfig: PathBuf::from(field("userKubeconfig")?),
            user_name: field("userName")?,
        };
        for kubeconfig in [&files.admin_kubeconfig, &files.user_kubeconfig] {
            if !kubeconfig.is_file() {
                return Err(Error::MissingKubeconfig {
                    path: kubeconfig.clone(),
                    state: path,
                });
            }
        }
        Ok(files)
    }
}

/// `<workspace>/target/cluster`: the workspace is two levels above this crate.
fn default_dir() -> PathBuf {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let workspace = crate_dir
        .parent()
        .and_then(Path::parent)
        .map_or_else(|| crate_dir.clone(), Path::to_path_buf);
    workspace.join("target").join("cluster")
}

/// The workspace root (for test data such as `docs/examples`).
pub fn workspace_root() -> PathBuf {
    default_dir()
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// `target/e2e/logs/<name>` for a file an e2e test leaves behind (manifests, logs), with its
/// directory created: a suite run alone on a fresh clone has no earlier suite that made it.
pub fn e2e_log_file(name: &str) -> PathBuf {
    let dir = workspace_root().join("target/e2e/logs");
    if let Err(e) = std::fs::create_dir_all(&dir) {
        panic!("cannot create {}: {e}", dir.display());
    }
    dir.join(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ptah-apitests-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    #[test]
    fn a_missing_cluster_names_the_command_that_starts_it() {
        let dir = scratch("missing");
        let err = ClusterFiles::load_from(&dir).expect_err("not up").to_string();
        assert!(err.contains(UP_COMMAND), "{err}");
        assert!(err.contains("cluster.json"), "{err}");
    }

    #[test]
    fn reads_the_state_and_checks_the_kubeconfigs_exist() {
        let dir = scratch("state");
        let admin = dir.join("admin.kubeconfig");
        let user = dir.join("user.kubeconfig");
        let state = serde_json::json!({
            "tier": "api", "version": "v1.35.4", "server": "https://127.0.0.1:1",
            "adminKubeconfig": admin, "userKubeconfig": user, "userName": "u",
        });
        std::fs::write(dir.join("cluster.json"), state.to_string()).expect("write");
        let err = ClusterFiles::load_from(&dir)
            .expect_err("kubeconfigs missing")
            .to_string();
        assert!(
            err.contains("admin.kubeconfig") && err.contains(UP_COMMAND),
            "{err}"
        );
        std::fs::write(&admin, "a").expect("admin");
        std::fs::write(&user, "u").expect("user");
        let files = ClusterFiles::load_from(&dir).expect("load");
        assert_eq!(files.version, "v1.35.4");
        assert_eq!(files.user_kubeconfig, user);
        std::fs::write(dir.join("cluster.json"), "{}").expect("write");
        let err = ClusterFiles::load_from(&dir).expect_err("broken").to_string();
        assert!(err.contains("no string `tier`"), "{err}");
    }

    #[test]
    fn the_default_dir_is_target_cluster_of_this_workspace() {
        assert!(default_dir().ends_with("target/cluster"));
        assert!(workspace_root().join("Cargo.toml").is_file());
        assert!(workspace_root().join("docs").join("examples").is_dir());
    }
}

pub mod admissionpolicy;
pub mod cast;
pub mod chartsource;
pub mod client;
pub mod e2e;
pub mod exposition;
pub mod fixtures;
pub mod release;
pub mod resultdelivery;
pub mod scenario;
