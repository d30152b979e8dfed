//! The programs `cargo xtask k8s-bin` builds and the upstream module groups they come from.
//!
//! Each group lives in its own cache directory `<label>-<version>/` (the Kubernetes programs in
//! `<version>/`), so the two helm majors sit side by side: `helm-v3.21.4/helm` and
//! `helm4-v4.3.2/helm`, both at the versions `matrix/kubernetes.json` pins.

use std::fmt;

use super::{
    Matrix, Minor, PROMETHEUS_VERSION,
    helm::{HELM3_MODULE, HELM4_MODULE},
    matrix::TOXIPROXY_MODULE,
};

/// One program this task can build.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Component {
    /// `k8s.io/kubernetes/cmd/kube-apiserver`
    KubeApiserver,
    /// `go.etcd.io/etcd/server/v3`
    Etcd,
    /// `k8s.io/kubernetes/cmd/kube-controller-manager`
    KubeControllerManager,
    /// `k8s.io/kubernetes/cmd/kube-scheduler`
    KubeScheduler,
    /// `k8s.io/kubernetes/cmd/kubelet`
    Kubelet,
    /// `k8s.io/kubernetes/cmd/kubectl`
    Kubectl,
    /// `k8s.io/kubernetes/cmd/kube-proxy`
    KubeProxy,
    /// `helm.sh/helm/v3/cmd/helm` (`components.helm`)
    Helm,
    /// `helm.sh/helm/v4/cmd/helm` (`components.helm4`); the program is still called `helm`
    Helm4,
    /// `oras.land/oras/cmd/oras`
    Oras,
    /// `github.com/prometheus/prometheus/cmd/promtool`
    Promtool,
    /// `sigs.k8s.io/kind` (the kind provider; its main package is the module root)
    Kind,
    /// `github.com/Shopify/toxiproxy/v2/cmd/server` (`components.toxiproxy`): the test services'
    /// fault proxy
    ToxiproxyServer,
}

impl Component {
    /// Every component, in build order (the API tier's two first).
    pub const ALL: [Component; 13] = [
        Component::KubeApiserver,
        Component::Etcd,
        Component::KubeControllerManager,
        Component::KubeScheduler,
        Component::Kubelet,
        Component::Kubectl,
        Component::KubeProxy,
        Component::Helm,
        Component::Helm4,
        Component::Oras,
        Component::Promtool,
        Component::Kind,
        Component::ToxiproxyServer,
    ];

    /// The component's name, as `--only` takes it (`helm4`).
    pub fn name(self) -> &'static str {
        match self {
            Component::KubeApiserver => "kube-apiserver",
            Component::Etcd => "etcd",
            Component::KubeControllerManager => "kube-controller-manager",
            Component::KubeScheduler => "kube-scheduler",
            Component::Kubelet => "kubelet",
            Component::Kubectl => "kubectl",
            Component::KubeProxy => "kube-proxy",
            Component::Helm => "helm",
            Component::Helm4 => "helm4",
            Component::Oras => "oras",
            Component::Promtool => "promtool",
            Component::Kind => "kind",
            Component::ToxiproxyServer => "toxiproxy-server",
        }
    }

    /// The program's file name in its cache directory (`helm` for both helm majors).
    pub fn file_name(self) -> &'static str {
        match self {
            Component::Helm4 => "helm",
            other => other.name(),
        }
    }

    pub(super) fn group(self) -> Group {
        match self {
            Component::Etcd => Group::Etcd,
            Component::Helm => Group::Helm,
            Component::Helm4 => Group::Helm4,
            Component::Oras => Group::Oras,
            Component::Promtool => Group::Prometheus,
            Component::Kind => Group::Kind,
            Component::ToxiproxyServer => Group::Toxiproxy,
            _ => Group::Kubernetes,
        }
    }

    /// The Go package that is the program's `main`.
    pub(super) fn package(self) -> String {
        match self {
            Component::Etcd => "go.etcd.io/etcd/server/v3".to_owned(),
            Component::Helm => "helm.sh/helm/v3/cmd/helm".to_owned(),
            Component::Helm4 => "helm.sh/helm/v4/cmd/helm".to_owned(),
            Component::Oras => "oras.land/oras/cmd/oras".to_owned(),
            Component::Promtool => "github.com/prometheus/prometheus/cmd/promtool".to_owned(),
            Component::Kind => "sigs.k8s.io/kind".to_owned(),
            Component::ToxiproxyServer => format!("{TOXIPROXY_MODULE}/cmd/server"),
            other => format!("k8s.io/kubernetes/cmd/{}", other.name()),
        }
    }
}

impl fmt::Display for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of programs built from one upstream module at one version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Group {
    Kubernetes,
    Etcd,
    Helm,
    Helm4,
    Oras,
    Prometheus,
    Kind,
    Toxiproxy,
}

impl Group {
    pub(super) fn module(self) -> &'static str {
        match self {
            Group::Kubernetes => "k8s.io/kubernetes",
            Group::Etcd => "go.etcd.io/etcd/server/v3",
            Group::Helm => HELM3_MODULE,
            Group::Helm4 => HELM4_MODULE,
            Group::Oras => "oras.land/oras",
            Group::Prometheus => "github.com/prometheus/prometheus",
            Group::Kind => "sigs.k8s.io/kind",
            Group::Toxiproxy => TOXIPROXY_MODULE,
        }
    }

    /// The cache directory's prefix and the generated module's name.
    pub(super) fn label(self) -> &'static str {
        match self {
            Group::Kubernetes => "kubernetes",
            Group::Etcd => "etcd",
            Group::Helm => "helm",
            // `~/.cache/ptah-operator/k8s/helm4-v4.3.2/helm`, beside `helm-v3.21.4/helm`
            Group::Helm4 => "helm4",
            Group::Oras => "oras",
            // `~/.cache/ptah-operator/k8s/promtool-v0.316.0/promtool`
            Group::Prometheus => "promtool",
            Group::Kind => "kind",
            // `~/.cache/ptah-operator/k8s/toxiproxy-v2.12.0/toxiproxy-server`
            Group::Toxiproxy => "toxiproxy",
        }
    }

    pub(super) fn version<'a>(self, minor: &'a Minor, matrix: &'a Matrix) -> &'a str {
        match self {
            Group::Kubernetes => &minor.version,
            Group::Etcd => &minor.etcd,
            Group::Helm => &matrix.helm,
            Group::Helm4 => &matrix.helm4,
            Group::Oras => &matrix.oras,
            Group::Prometheus => PROMETHEUS_VERSION,
            Group::Kind => &matrix.kind,
            // `Matrix::load` refuses a matrix without the pin; a hand-made one gets a version the
            // module proxy refuses by name.
            Group::Toxiproxy => matrix.toxiproxy.as_deref().unwrap_or("unpinned"),
        }
    }

    pub(super) fn members(self) -> Vec<Component> {
        Component::ALL.into_iter().filter(|c| c.group() == self).collect()
    }
}

#[cfg(test)]
mod tests {
    use clap::ValueEnum;

    use super::*;

    #[test]
    fn helm_majors_are_separate_groups_with_one_program_name() {
        assert_eq!(Group::Helm.members(), [Component::Helm]);
        assert_eq!(Group::Helm4.members(), [Component::Helm4]);
        assert_eq!(Component::Helm4.package(), "helm.sh/helm/v4/cmd/helm");
        assert_eq!(Component::Helm4.file_name(), "helm");
        assert_eq!(Component::Helm.file_name(), "helm");
        assert_ne!(Group::Helm.label(), Group::Helm4.label());
        assert!(Component::Helm4.package().starts_with(Group::Helm4.module()));
        assert!(Component::Helm.package().starts_with(Group::Helm.module()));
    }

    #[test]
    fn only_takes_each_component_by_its_name() {
        for component in Component::ALL {
            let parsed =
                Component::from_str(component.name(), false).unwrap_or_else(|e| panic!("{component}: {e}"));
            assert_eq!(parsed, component);
        }
    }
}
