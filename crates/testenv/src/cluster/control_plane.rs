//! The API tier's processes: etcd and kube-apiserver, and how each is known to be ready.

use std::{process::Command, time::Duration};

use super::{Cluster, Proc, proxy};
use crate::k8s::Component;

impl Cluster {
    pub(super) fn etcd(&self) -> Proc {
        let dir = self.root.join("etcd");
        let data = dir.join("data");
        let client = format!("http://127.0.0.1:{}", self.etcd_port);
        let peer = format!("http://127.0.0.1:{}", self.etcd_port + 1);
        Proc {
            name: "etcd",
            program: self.bins.path(Component::Etcd),
            args: vec![
                "--name=ptah".to_owned(),
                format!("--data-dir={}", data.display()),
                format!("--listen-client-urls={client}"),
                format!("--advertise-client-urls={client}"),
                format!("--listen-peer-urls={peer}"),
                format!("--initial-advertise-peer-urls={peer}"),
                format!("--initial-cluster=ptah={peer}"),
                "--listen-metrics-urls=".to_owned(),
                "--logger=zap".to_owned(),
                "--log-level=warn".to_owned(),
                "--unsafe-no-fsync=true".to_owned(),
                "--quota-backend-bytes=2147483648".to_owned(),
            ],
            env: Vec::new(),
            netns: None,
            marker: data,
            timeout: Duration::from_secs(30),
        }
    }

    pub(super) fn apiserver(&self) -> Proc {
        let dir = self.root.join("kube-apiserver");
        let pki = self.pki();
        let file = |name: &str| pki.join(name).display().to_string();
        Proc {
            name: "kube-apiserver",
            program: self.bins.path(Component::KubeApiserver),
            args: vec![
                format!("--cert-dir={}", dir.display()),
                format!("--etcd-servers=http://127.0.0.1:{}", self.etcd_port),
                "--bind-address=127.0.0.1".to_owned(),
                "--advertise-address=127.0.0.1".to_owned(),
                format!("--secure-port={}", self.apiserver_port),
                // The endpoints of the `kubernetes` Service would be 127.0.0.1, which
                // Endpoints validation refuses; nothing here needs that Service.
                "--endpoint-reconciler-type=none".to_owned(),
                format!("--tls-cert-file={}", file("apiserver.crt")),
                format!("--tls-private-key-file={}", file("apiserver.key")),
                format!("--client-ca-file={}", file("ca.crt")),
                format!("--kubelet-certificate-authority={}", file("ca.crt")),
                format!(
                    "--kubelet-client-certificate={}",
                    file("apiserver-kubelet-client.crt")
                ),
                format!("--kubelet-client-key={}", file("apiserver-kubelet-client.key")),
                "--kubelet-preferred-address-types=Hostname,InternalIP".to_owned(),
                format!("--service-account-key-file={}", file("sa.pub")),
                format!("--service-account-signing-key-file={}", file("sa.key")),
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local".to_owned(),
                "--authorization-mode=Node,RBAC".to_owned(),
                // The default plugins stay on; NodeRestriction is what kubeadm adds.
                "--enable-admission-plugins=NodeRestriction".to_owned(),
                format!("--service-cluster-ip-range={}", proxy::SERVICE_CIDR),
                "--allow-privileged=true".to_owned(),
                "--profiling=false".to_owned(),
                "--enable-priority-and-fairness=true".to_owned(),
                // Webhooks and aggregated APIs behind a Service are called on an endpoint (Pod)
                // IP, which this host reaches over the bridge, instead of the ClusterIP, which
                // only kube-proxy's rules (full tier) make reachable.
                "--enable-aggregator-routing=true".to_owned(),
            ],
            env: Vec::new(),
            netns: None,
            marker: dir,
            timeout: Duration::from_secs(120),
        }
    }

    pub(super) fn etcd_healthy(&self) -> bool {
        Command::new("curl")
            .args(["-sf", "--max-time", "2"])
            .arg(format!("http://127.0.0.1:{}/health", self.etcd_port))
            .output()
            .is_ok_and(|out| out.status.success() && String::from_utf8_lossy(&out.stdout).contains("true"))
    }

    /// `/readyz` answers `ok` over TLS verified with our CA.
    pub(super) fn apiserver_ready(&self) -> bool {
        Command::new("curl")
            .args(["-sf", "--max-time", "3", "--cacert"])
            .arg(self.pki().join("ca.crt"))
            .arg(format!("{}/readyz", self.server()))
            .output()
            .is_ok_and(|out| out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "ok")
    }
}
