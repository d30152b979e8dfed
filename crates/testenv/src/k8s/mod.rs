//! `cargo xtask k8s-bin`: the pinned Kubernetes programs, etcd, helm 3 and 4, oras, promtool,
//! kind and toxiproxy-server, built from their Go modules and cached outside the clone.
//!
//! Each program group gets a generated Go module under `target/k8s-go/<group>-<version>/` (see
//! [`gomod`]); `go build` runs there under `nice -n 15` with `CGO_ENABLED=0` and `-trimpath`,
//! writing straight into the cache. The cache is `$PTAH_K8S_CACHE`, else
//! `$XDG_CACHE_HOME/ptah-operator/k8s`, else `~/.cache/ptah-operator/k8s`; a program already
//! there is reused, so CI (a fresh clone on the same machine) starts from what a session built.
//! Go's own caches (`GOPATH`, `GOCACHE`) keep their defaults in the home directory.

pub mod component;
pub mod gomod;
pub mod helm;
pub mod matrix;

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
    time::Instant,
};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::step::{output, run, step, workspace_root};
pub use component::Component;
use component::Group;
pub use matrix::{Matrix, Minor};

/// Environment variable naming the binary cache.
pub const CACHE_ENV: &str = "PTAH_K8S_CACHE";
/// Niceness of every Go command: other people compile on the same cores.
const NICE: &str = "15";
/// `github.com/prometheus/prometheus` version promtool is built from (the alerting e2e phase
/// evaluates the chart's alert rules with `promtool test rules`).
pub const PROMETHEUS_VERSION: &str = "v0.316.0";

/// Arguments of `cargo xtask k8s-bin`.
#[derive(clap::Args)]
pub struct Args {
    /// The Kubernetes minor (`1.36`) or exact version from matrix/kubernetes.json; default: the
    /// minor marked default there.
    #[arg(long)]
    kubernetes: Option<String>,
    /// Build only these programs (comma-separated); default: all of them.
    #[arg(long, value_delimiter = ',', value_enum)]
    only: Vec<Component>,
    /// Print the cache path of each program instead of building.
    #[arg(long)]
    print_paths: bool,
}

/// Runs `cargo xtask k8s-bin`.
pub fn run_task(args: Args) -> anyhow::Result<()> {
    let matrix = Matrix::load(&workspace_root())?;
    let minor = matrix.select(args.kubernetes.as_deref())?;
    let wanted: Vec<Component> = if args.only.is_empty() {
        Component::ALL.to_vec()
    } else {
        args.only
    };
    let bins = Binaries::new(minor, &matrix)?;
    if args.print_paths {
        for component in wanted {
            println!("{component}\t{}", bins.path(component).display());
        }
        return Ok(());
    }
    bins.ensure(&wanted)
}

/// Where the programs of one matrix minor live in the cache.
pub struct Binaries {
    cache: PathBuf,
    minor: Minor,
    matrix: Matrix,
}

impl Binaries {
    /// The binaries of `minor`, in the cache named by the environment.
    pub fn new(minor: &Minor, matrix: &Matrix) -> anyhow::Result<Self> {
        Ok(Self {
            cache: cache_root()?,
            minor: minor.clone(),
            matrix: matrix.clone(),
        })
    }

    /// The Kubernetes version these binaries are for.
    pub fn kubernetes_version(&self) -> &str {
        &self.minor.version
    }

    fn group_dir(&self, group: Group) -> PathBuf {
        let version = group.version(&self.minor, &self.matrix);
        match group {
            // `~/.cache/ptah-operator/k8s/v1.35.4/kube-apiserver`
            Group::Kubernetes => self.cache.join(version),
            other => self.cache.join(format!("{}-{version}", other.label())),
        }
    }

    /// The cached program (which may not exist yet).
    pub fn path(&self, component: Component) -> PathBuf {
        self.group_dir(component.group()).join(component.file_name())
    }

    /// Builds whichever of `components` is not cached yet, group by group, timing each step.
    pub fn ensure(&self, components: &[Component]) -> anyhow::Result<()> {
        let started = Instant::now();
        let missing: Vec<Component> = Component::ALL
            .into_iter()
            .filter(|c| components.contains(c))
            .filter(|c| {
                let path = self.path(*c);
                let cached = is_executable(&path);
                if cached {
                    eprintln!("    {c}: cached at {}", path.display());
                }
                !cached
            })
            .collect();
        let mut prepared: Vec<(Group, PathBuf, Option<String>)> = Vec::new();
        for component in missing {
            let group = component.group();
            let version = group.version(&self.minor, &self.matrix).to_owned();
            let known = prepared.iter().find(|(g, _, _)| *g == group).cloned();
            let (module_dir, ldflags) = match known {
                Some((_, dir, ldflags)) => (dir, ldflags),
                None => {
                    let (dir, ldflags) =
                        step(&format!("go module for {} {version}", group.module()), || {
                            self.prepare_module(group, &version)
                        })?;
                    prepared.push((group, dir.clone(), ldflags.clone()));
                    (dir, ldflags)
                }
            };
            let dest = self.path(component);
            step(
                &format!("build {component} {version} (cold builds take minutes, at nice {NICE})"),
                || build(component, &module_dir, ldflags.as_deref(), &dest),
            )?;
            match group {
                Group::Kubernetes => step(&format!("{component} reports {}", self.minor.version), || {
                    check_version(component, &dest, &self.minor.version)
                })?,
                Group::Helm | Group::Helm4 => step(&format!("{component} reports {version}"), || {
                    helm::check_reports(&dest, &version)
                })?,
                Group::Toxiproxy => step(&format!("{component} reports {version}"), || {
                    check_version(component, &dest, &version)
                })?,
                _ => {}
            }
        }
        eprintln!(
            "k8s-bin: {} ready in {:.1}s (cache {})",
            components.iter().map(|c| c.name()).collect::<Vec<_>>().join(", "),
            started.elapsed().as_secs_f64(),
            self.cache.display()
        );
        Ok(())
    }

    /// Writes the generated module for `group` at `version` (running `go mod tidy` when it
    /// changed) and returns its directory and the `-ldflags` for its programs.
    fn prepare_module(&self, group: Group, version: &str) -> anyhow::Result<(PathBuf, Option<String>)> {
        let root = workspace_root().join("target").join("k8s-go");
        let dir = root.join(format!("{}-{version}", group.label()));
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let info = download(group.module(), version, &root)?;
        let upstream_mod = fs::read_to_string(&info.go_mod)
            .with_context(|| format!("cannot read {}", info.go_mod.display()))?;
        let upstream =
            gomod::parse_upstream(&upstream_mod).with_context(|| format!("in {}", info.go_mod.display()))?;
        let tools: Vec<String> = group.members().iter().map(|c| c.package()).collect();
        let (text, ldflags) = match group {
            Group::Kubernetes => (
                gomod::kubernetes_module(&upstream, version, &tools)?,
                Some(gomod::kubernetes_ldflags(version, &info.time)?),
            ),
            // The flags depend on the client-go version `go mod tidy` resolves: set below.
            Group::Helm | Group::Helm4 => (
                gomod::tool_module(
                    &format!("ptah.local/{}-bin", group.label()),
                    &upstream,
                    group.module(),
                    version,
                    &[],
                    &tools,
                ),
                None,
            ),
            Group::Prometheus => (
                gomod::tool_module(
                    "ptah.local/promtool-bin",
                    &upstream,
                    group.module(),
                    version,
                    &[],
                    &tools,
                ),
                Some(format!(
                    "-s -w -X github.com/prometheus/common/version.Version={} \
                     -X github.com/prometheus/common/version.Branch=HEAD",
                    version.trim_start_matches('v')
                )),
            ),
            Group::Toxiproxy => (
                gomod::tool_module(
                    "ptah.local/toxiproxy-bin",
                    &upstream,
                    group.module(),
                    version,
                    &[],
                    &tools,
                ),
                // What upstream's release build sets (.goreleaser.yml), so `-version` reports it.
                Some(format!("-s -w -X {}.Version={version}", group.module())),
            ),
            // kind reports its version from constants of its own source: no -X flags needed.
            Group::Etcd | Group::Oras | Group::Kind => (
                gomod::tool_module(
                    &format!("ptah.local/{}-bin", group.label()),
                    &upstream,
                    group.module(),
                    version,
                    &[],
                    &tools,
                ),
                Some("-s -w".to_owned()),
            ),
        };
        let template = dir.join("go.mod.generated");
        let unchanged = fs::read_to_string(&template).is_ok_and(|old| old == text)
            && dir.join("go.sum").is_file()
            && dir.join("go.mod").is_file();
        if unchanged {
            eprintln!(
                "    {} unchanged: go mod tidy skipped",
                dir.join("go.mod").display()
            );
        } else {
            fs::write(dir.join("go.mod"), &text).context("cannot write go.mod")?;
            let _ = fs::remove_file(dir.join("go.sum"));
            run(go(&dir).args(["mod", "tidy"]))?;
            fs::write(&template, &text).context("cannot write go.mod.generated")?;
        }
        let ldflags = match group {
            Group::Helm | Group::Helm4 => Some(helm::ldflags(
                group.module(),
                version,
                &helm::client_go_version(&dir)?,
            )?),
            _ => ldflags,
        };
        Ok((dir, ldflags))
    }
}

/// `go mod download -json module@version`: the upstream go.mod and the version's commit time.
struct ModuleInfo {
    go_mod: PathBuf,
    time: String,
}

fn download(module: &str, version: &str, cwd: &Path) -> anyhow::Result<ModuleInfo> {
    let text = output(go(cwd).args(["mod", "download", "-json", &format!("{module}@{version}")]))?;
    let json: Value = serde_json::from_str(&text).context("`go mod download -json` printed no JSON")?;
    if let Some(error) = json["Error"].as_str() {
        bail!("cannot download {module}@{version}: {error}");
    }
    Ok(ModuleInfo {
        go_mod: json["GoMod"]
            .as_str()
            .map(PathBuf::from)
            .context("no GoMod in `go mod download -json`")?,
        time: json["Time"].as_str().unwrap_or("1970-01-01T00:00:00Z").to_owned(),
    })
}

/// A `go` command at low priority in `dir`, with cgo off (static programs).
fn go(dir: &Path) -> Command {
    let mut cmd = Command::new("nice");
    cmd.args(["-n", NICE])
        .arg(go_program())
        .current_dir(dir)
        .env("CGO_ENABLED", "0");
    cmd
}

/// `go` from PATH, else the standard install location (CI's environment may lack it in PATH).
fn go_program() -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("go").is_file()));
    if on_path {
        PathBuf::from("go")
    } else {
        PathBuf::from("/usr/local/go/bin/go")
    }
}

/// Builds `component` into a temporary file beside `dest` and moves it into place, so that a
/// cached program is always complete.
fn build(component: Component, module_dir: &Path, ldflags: Option<&str>, dest: &Path) -> anyhow::Result<()> {
    let parent = dest.parent().context("cache path has no parent")?;
    fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    let tmp = parent.join(format!(".{}.{}.tmp", component.name(), std::process::id()));
    let mut cmd = go(module_dir);
    cmd.args(["build", "-trimpath"]);
    if let Some(flags) = ldflags {
        cmd.arg(format!("-ldflags={flags}"));
    }
    cmd.arg("-o").arg(&tmp).arg(component.package());
    let built = run(&mut cmd);
    if let Err(err) = built {
        let _ = fs::remove_file(&tmp);
        return Err(err);
    }
    fs::rename(&tmp, dest).with_context(|| format!("cannot move the build to {}", dest.display()))?;
    let size = fs::metadata(dest).map_or(0, |m| m.len());
    eprintln!("    {} ({:.1} MB)", dest.display(), size as f64 / 1e6);
    Ok(())
}

/// Fails (and removes the program) unless `--version` (`version --client` for kubectl) reports
/// `version`.
fn check_version(component: Component, program: &Path, version: &str) -> anyhow::Result<()> {
    let mut cmd = Command::new(program);
    if component == Component::Kubectl {
        cmd.args(["version", "--client"]);
    } else {
        cmd.arg("--version");
    }
    let text = output(&mut cmd)?;
    let reported = text.trim();
    if !reported.split_whitespace().any(|word| word == version) {
        let _ = fs::remove_file(program);
        bail!(
            "{} reports {reported:?}, not {version}: the version ldflags did not apply (removed)",
            program.display()
        );
    }
    eprintln!("    {reported}");
    Ok(())
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The binary cache directory (see the module docs).
pub fn cache_root() -> anyhow::Result<PathBuf> {
    cache_root_from(|name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    })
}

fn cache_root_from(var: impl Fn(&str) -> Option<PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(dir) = var(CACHE_ENV) {
        return std::path::absolute(&dir).with_context(|| format!("cannot resolve {}", dir.display()));
    }
    let base = match var("XDG_CACHE_HOME") {
        Some(dir) => dir,
        None => var("HOME")
            .context("neither PTAH_K8S_CACHE, XDG_CACHE_HOME nor HOME is set")?
            .join(".cache"),
    };
    Ok(base.join("ptah-operator").join("k8s"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<PathBuf> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| PathBuf::from(v))
        }
    }

    #[test]
    fn the_cache_is_the_override_then_xdg_then_home() {
        let over = cache_root_from(env(&[(CACHE_ENV, "/c"), ("HOME", "/h")])).expect("override");
        assert_eq!(over, PathBuf::from("/c"));
        let xdg = cache_root_from(env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")])).expect("xdg");
        assert_eq!(xdg, PathBuf::from("/x/ptah-operator/k8s"));
        let home = cache_root_from(env(&[("HOME", "/h")])).expect("home");
        assert_eq!(home, PathBuf::from("/h/.cache/ptah-operator/k8s"));
        assert_eq!(
            cache_root_from(env(&[])).err().map(|e| e.to_string()),
            Some("neither PTAH_K8S_CACHE, XDG_CACHE_HOME nor HOME is set".to_owned())
        );
    }

    #[test]
    fn programs_live_per_version_and_kubernetes_ones_share_a_directory() {
        let matrix = Matrix::load(&workspace_root()).expect("matrix");
        let minor = matrix.select(Some("1.36")).expect("1.36");
        let bins = Binaries {
            cache: PathBuf::from("/cache"),
            minor: minor.clone(),
            matrix: matrix.clone(),
        };
        assert_eq!(
            bins.path(Component::KubeApiserver),
            PathBuf::from(format!("/cache/{}/kube-apiserver", minor.version))
        );
        assert_eq!(
            bins.path(Component::Etcd),
            PathBuf::from(format!("/cache/etcd-{}/etcd", minor.etcd))
        );
        assert_eq!(
            bins.path(Component::Helm),
            PathBuf::from(format!("/cache/helm-{}/helm", matrix.helm))
        );
        assert_eq!(
            bins.path(Component::Helm4),
            PathBuf::from(format!("/cache/helm4-{}/helm", matrix.helm4))
        );
        assert_eq!(Component::Kubelet.package(), "k8s.io/kubernetes/cmd/kubelet");
        assert_eq!(Group::Kubernetes.members().len(), 6);
        assert_eq!(
            bins.path(Component::Promtool),
            PathBuf::from(format!("/cache/promtool-{PROMETHEUS_VERSION}/promtool"))
        );
        assert_eq!(
            Component::Promtool.package(),
            "github.com/prometheus/prometheus/cmd/promtool"
        );
        assert_eq!(
            bins.path(Component::Kind),
            PathBuf::from(format!("/cache/kind-{}/kind", matrix.kind))
        );
        assert_eq!(Component::Kind.package(), "sigs.k8s.io/kind");
        assert_eq!(Group::Kind.members(), [Component::Kind]);
        assert_eq!(
            bins.path(Component::ToxiproxyServer),
            PathBuf::from(format!(
                "/cache/toxiproxy-{}/toxiproxy-server",
                matrix.toxiproxy.as_deref().unwrap_or("none")
            ))
        );
        assert_eq!(
            Component::ToxiproxyServer.package(),
            "github.com/Shopify/toxiproxy/v2/cmd/server"
        );
    }
}
