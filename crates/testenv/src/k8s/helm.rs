//! The two helm majors, built side by side: the `-ldflags` that stamp each one's version and the
//! Kubernetes version it assumes, and the check that a built helm reports its pin.
//!
//! Helm's Makefile stamps `internal/version.version`, whose package path carries the module's
//! major (`helm.sh/helm/v3/internal/version`, `helm.sh/helm/v4/internal/version`). Helm 3 also
//! takes the Kubernetes version it assumes when it asks no cluster (`helm template`, `helm lint`:
//! `.Capabilities.KubeVersion` and the chart's `kubeVersion` check) from `-X` flags on
//! `pkg/chartutil` and `pkg/lint/rules`, which the Makefile derives from the k8s.io/client-go
//! version (`v0.36.2` → 1.36); without them it assumes v1.20.0 and refuses any chart whose
//! `kubeVersion` starts later. Helm 4 reads that version at run time from client-go's entry in
//! its own build info (`internal/version/clientgo.go`), so it needs no such flag.

use std::{fs, path::Path, process::Command};

use anyhow::{Context, bail};

use super::go;
use crate::step::output;

/// The Helm 3 module.
pub const HELM3_MODULE: &str = "helm.sh/helm/v3";
/// The Helm 4 module.
pub const HELM4_MODULE: &str = "helm.sh/helm/v4";

/// `v0.36.2` → `(1, 36)`: the Kubernetes version a k8s.io/client-go release goes with (the
/// computation of helm's Makefile: major + 1, same minor).
pub fn kubernetes_of_client_go(client_go: &str) -> anyhow::Result<(u64, u64)> {
    let mut parts = client_go.trim_start_matches('v').split('.');
    let numbers = match (parts.next(), parts.next()) {
        (Some(major), Some(minor)) => major.parse::<u64>().ok().zip(minor.parse::<u64>().ok()),
        _ => None,
    };
    let (major, minor) = numbers.with_context(|| format!("{client_go} is not a k8s.io/client-go version"))?;
    Ok((major + 1, minor))
}

/// The `-ldflags` for helm of `module` at `version`, built against k8s.io/client-go `client_go`.
pub fn ldflags(module: &str, version: &str, client_go: &str) -> anyhow::Result<String> {
    let mut flags = vec![
        "-s".to_owned(),
        "-w".to_owned(),
        format!("-X {module}/internal/version.version={version}"),
        format!("-X {module}/internal/version.gitTreeState=clean"),
    ];
    match module {
        HELM3_MODULE => {
            let (major, minor) = kubernetes_of_client_go(client_go)?;
            for package in ["pkg/chartutil", "pkg/lint/rules"] {
                flags.push(format!("-X {module}/{package}.k8sVersionMajor={major}"));
                flags.push(format!("-X {module}/{package}.k8sVersionMinor={minor}"));
            }
        }
        // Reads client-go's version from its build info at run time (see the module docs).
        HELM4_MODULE => {}
        other => bail!("{other} is not a helm module this task knows the version flags of"),
    }
    Ok(flags.join(" "))
}

/// The k8s.io/client-go version the generated module in `module_dir` resolved.
pub(super) fn client_go_version(module_dir: &Path) -> anyhow::Result<String> {
    let text = output(go(module_dir).args(["list", "-m", "-f", "{{.Version}}", "k8s.io/client-go"]))?;
    Ok(text.trim().to_owned())
}

/// Fails (and removes the program) unless `helm version` reports exactly `version`.
pub(super) fn check_reports(program: &Path, version: &str) -> anyhow::Result<()> {
    let reported = output(Command::new(program).args(["version", "--template", "{{.Version}}"]))
        .with_context(|| format!("{} version", program.display()))?;
    let reported = reported.trim();
    if reported != version {
        let _ = fs::remove_file(program);
        bail!(
            "{} reports {reported:?}, not {version}: the version ldflags did not apply (removed)",
            program.display()
        );
    }
    eprintln!("    helm version {reported}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_go_minor_is_the_kubernetes_minor() {
        assert_eq!(kubernetes_of_client_go("v0.36.2").expect("v0.36.2"), (1, 36));
        assert_eq!(kubernetes_of_client_go("v0.37.0-rc.1").expect("rc"), (1, 37));
        assert_eq!(
            kubernetes_of_client_go("v0").err().map(|e| e.to_string()),
            Some("v0 is not a k8s.io/client-go version".to_owned())
        );
        assert_eq!(
            kubernetes_of_client_go("latest").err().map(|e| e.to_string()),
            Some("latest is not a k8s.io/client-go version".to_owned())
        );
    }

    #[test]
    fn helm3_flags_stamp_the_version_and_the_kubernetes_it_assumes() {
        let flags = ldflags(HELM3_MODULE, "v3.21.4", "v0.36.2").expect("v3");
        assert!(
            flags.contains("-X helm.sh/helm/v3/internal/version.version=v3.21.4"),
            "{flags}"
        );
        for package in ["chartutil", "lint/rules"] {
            assert!(
                flags.contains(&format!("-X helm.sh/helm/v3/pkg/{package}.k8sVersionMajor=1")),
                "{flags}"
            );
            assert!(
                flags.contains(&format!("-X helm.sh/helm/v3/pkg/{package}.k8sVersionMinor=36")),
                "{flags}"
            );
        }
        assert!(!flags.contains("v4"), "{flags}");
    }

    #[test]
    fn helm4_flags_use_the_v4_package_path_and_nothing_else() {
        let flags = ldflags(HELM4_MODULE, "v4.3.2", "v0.37.2").expect("v4");
        assert_eq!(
            flags,
            "-s -w -X helm.sh/helm/v4/internal/version.version=v4.3.2 \
             -X helm.sh/helm/v4/internal/version.gitTreeState=clean"
        );
        assert_eq!(
            ldflags("helm.sh/helm/v5", "v5.0.0", "v0.40.0")
                .err()
                .map(|e| e.to_string()),
            Some("helm.sh/helm/v5 is not a helm module this task knows the version flags of".to_owned())
        );
        assert_eq!(
            ldflags(HELM3_MODULE, "v3.21.4", "nonsense")
                .err()
                .map(|e| e.to_string()),
            Some("nonsense is not a k8s.io/client-go version".to_owned())
        );
    }
}
